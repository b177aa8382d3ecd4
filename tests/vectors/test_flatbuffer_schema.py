"""The flatbuffer schema and the attribute mapping: complete against tosa.xml, appended to
the seed schema only, and matched by the generated code (vectors/attributes.py,
vectors/layout.py, vectors/tosa_fb)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from vectors_helpers import EXTENDED_FBS, ROOT, SEED_FBS, xml_enum, xml_operator_attributes

from conformance import dtypes as D
from vectors import encoding
from vectors import layout as L
from vectors.attributes import (
    ACC_TYPES,
    OPERATOR_ATTRIBUTES,
    RESIZE_MODES,
    VAR_TYPES,
    ArgMap,
    Kind,
    mapping,
)
from vectors.errors import EncodeError

# ----------------------------------------------------------------- mapping completeness


def test_every_xml_attribute_is_mapped() -> None:
    xml = xml_operator_attributes()
    assert len(xml) > 60  # sanity: the spec really was read
    for op, names in xml.items():
        mapped = [a.arg for a in mapping(op).args]
        assert sorted(mapped) == sorted(names), op
    assert set(OPERATOR_ATTRIBUTES) <= set(xml), "mapping names an operator tosa.xml lacks"


def test_every_xml_operator_has_an_op_value() -> None:
    missing = [op for op in xml_operator_attributes() if op not in L.OP_VALUES]
    assert missing == []


def test_mapped_fields_exist_in_their_tables() -> None:
    for op, spec in OPERATOR_ATTRIBUTES.items():
        for arg in spec.args:
            table = L.TENSOR if arg.kind is Kind.OUTPUT_DATA else spec.table
            assert table is not None, op
            for field in (arg.field, arg.fp_field, arg.flag_field):
                if field:
                    table.slot(field)  # raises KeyError when the field does not exist
        if spec.table is not None:
            assert spec.table.name in L.ATTRIBUTE_VALUES, op


def _doc_row(op: str) -> str:
    def field(arg: ArgMap) -> str:
        if arg.kind is Kind.OUTPUT_DATA:
            return f"{arg.arg} → output tensor `data`"
        if arg.kind is Kind.ELEMENT:
            return f"{arg.arg} → {arg.field} / {arg.fp_field}"
        if arg.kind is Kind.INITIAL_VALUE:
            return f"{arg.arg} → {arg.field} + {arg.flag_field}"
        return arg.arg if arg.arg == arg.field else f"{arg.arg} → {arg.field}"

    spec = OPERATOR_ATTRIBUTES[op]
    table = spec.table.name if spec.table else "NONE"
    return f"| {op} | {table} | {', '.join(field(a) for a in spec.args)} |"


def test_docs_mapping_table_matches_the_code() -> None:
    docs = (ROOT / "docs" / "flatbuffer.md").read_text()
    rows = [line for line in docs.splitlines() if re.match(r"\| [A-Z0-9_]+ \| \w+ \| ", line)]
    assert sorted(rows) == sorted(_doc_row(op) for op in OPERATOR_ATTRIBUTES)


def test_enum_attribute_names_match_xml() -> None:
    assert sorted(ACC_TYPES) == sorted(xml_enum("acc_type_t"))
    assert sorted(RESIZE_MODES) == sorted(xml_enum("resize_mode_t"))
    assert sorted(VAR_TYPES) == sorted(xml_enum("var_t"))
    for schema_name in [*ACC_TYPES.values(), *VAR_TYPES.values()]:
        assert schema_name in L.DTYPE_VALUES
    for schema_name in RESIZE_MODES.values():
        assert schema_name in L.RESIZE_MODE_VALUES


def test_every_ir_dtype_has_a_schema_dtype() -> None:
    for dtype in D.ALL:
        if dtype.name in D.TOSA_1_1_TYPES:  # no DType of the draft's schema names them
            with pytest.raises(EncodeError, match=rf"^{dtype.name} is a block-scaled|^element"):
                encoding.schema_dtype(dtype)
            continue
        assert encoding.ir_dtype(encoding.schema_dtype(dtype)) is dtype


# ------------------------------------------------------------------------ schema checks


def _strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*", "", text)


def parse_fbs(path: Path) -> dict[str, dict[str, list]]:
    """enums: name -> [(value name, number)], unions: name -> [member], tables: name ->
    [(field, type)].  Just enough of the grammar for tosa.fbs."""
    text = _strip_comments(path.read_text())
    enums: dict[str, list] = {}
    for name, body in re.findall(r"\benum\s+(\w+)\s*:\s*\w+\s*\{(.*?)\}", text, re.S):
        values, number = [], -1
        for item in filter(None, (x.strip() for x in body.split(","))):
            value_name, _, explicit = (p.strip() for p in item.partition("="))
            number = int(explicit) if explicit else number + 1
            values.append((value_name, number))
        enums[name] = values
    unions = {
        name: [m.strip() for m in body.split(",") if m.strip()]
        for name, body in re.findall(r"\bunion\s+(\w+)\s*\{(.*?)\}", text, re.S)
    }
    tables: dict[str, list] = {}
    for name, body in re.findall(r"\btable\s+(\w+)\s*\{(.*?)\}", text, re.S):
        fields = re.findall(r"(\w+)\s*:\s*([\w\[\]]+)[^;]*;", body)
        tables[name] = fields
    return {"enums": enums, "unions": unions, "tables": tables}


def test_extended_schema_only_appends_to_the_seed() -> None:
    seed, ext = parse_fbs(SEED_FBS), parse_fbs(EXTENDED_FBS)
    for kind in ("enums", "unions", "tables"):
        for name, seed_items in seed[kind].items():
            assert name in ext[kind], f"{kind[:-1]} {name} vanished"
            ext_items = ext[kind][name]
            # Same values / members / fields, same positions: a prefix of the extension.
            assert ext_items[: len(seed_items)] == seed_items, f"{kind[:-1]} {name}"
    for directive in ("namespace", "file_identifier", "file_extension", "root_type"):
        pattern = rf"^\s*{directive}\s+[^;]*;"
        seed_text, ext_text = SEED_FBS.read_text(), EXTENDED_FBS.read_text()
        assert re.findall(pattern, seed_text, re.M) == re.findall(pattern, ext_text, re.M)


def test_extended_schema_has_the_documented_additions() -> None:
    seed, ext = parse_fbs(SEED_FBS), parse_fbs(EXTENDED_FBS)
    added_ops = [v for v, _ in ext["enums"]["Op"][len(seed["enums"]["Op"]) :]]
    assert added_ops == ["COS", "SIN", "VARIABLE", "VARIABLE_WRITE", "VARIABLE_READ"]
    assert ext["tables"]["ConvAttribute"][-1] == ("acc_type", "DType")
    assert ext["tables"]["TransposeConvAttribute"][-1] == ("acc_type", "DType")
    assert ext["unions"]["Attribute"][len(seed["unions"]["Attribute"]) :] == ["VariableAttribute"]
    assert set(ext["tables"]) - set(seed["tables"]) == {"VariableAttribute"}
    docs = (ROOT / "docs" / "flatbuffer.md").read_text()
    for addition in [*added_ops, "acc_type", "VariableAttribute"]:
        assert addition in docs


def test_layout_matches_the_extended_schema() -> None:
    ext = parse_fbs(EXTENDED_FBS)
    for table in L.ALL_TABLES:
        slots: list[str] = []
        for field, type_name in ext["tables"][table.name]:
            # A union field takes two slots: its type tag, then its value.
            slots += [f"{field}_type", field] if type_name in ext["unions"] else [field]
        assert list(table.fields) == slots, table.name


def test_generated_code_matches_the_schema_enums() -> None:
    ext = parse_fbs(EXTENDED_FBS)
    assert dict(ext["enums"]["Op"]) == L.OP_VALUES
    assert dict(ext["enums"]["DType"]) == L.DTYPE_VALUES
    members = ["NONE", *ext["unions"]["Attribute"]]
    assert {m: i for i, m in enumerate(members)} == L.ATTRIBUTE_VALUES


def test_generated_code_imports_only_inside_the_package() -> None:
    for path in (ROOT / "vectors" / "tosa_fb").rglob("*.py"):
        text = path.read_text()
        assert not re.search(r"^\s*(from|import) tosa\b", text, re.M), path


@pytest.mark.skipif(not Path("/usr/bin/flatc").exists(), reason="flatc 2.0.8 not installed")
def test_generated_code_is_up_to_date() -> None:
    version = subprocess.run(
        ["/usr/bin/flatc", "--version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    if version != "flatc version 2.0.8" or shutil.which("bash") is None:
        pytest.skip(f"regeneration is pinned to flatc 2.0.8, found {version!r}")
    script = ROOT / "scripts" / "regen_flatbuffers.sh"
    result = subprocess.run(
        ["bash", str(script), "--check"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr

"""Tests of the .fbs parser (vectors/fbs_schema.py) and the TOSA 1.0 layout derived with it
(vectors/layout_1_0.py): facts read from the schema text independently of the parser, the
flatc-generated code of the draft schema, Arm's generated Python (when installed), and
tosa.xml's attribute lists."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest
from vectors_helpers import EXTENDED_FBS, SEED_FBS

from conformance import revisions
from conformance.spec import load_revision
from vectors import fbs_schema
from vectors import layout as draft_layout
from vectors import layout_1_0 as L
from vectors.fbs_schema import SchemaError

FBS_1_0 = revisions.revision("1.0").fbs_path
TEXT_1_0 = FBS_1_0.read_text()


def _without_comments(text: str) -> str:
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)


def _blocks(text: str, keyword: str) -> dict[str, str]:
    """``keyword Name ... { body }`` -> {Name: body}, read with a regex, not the parser."""
    pattern = rf"\b{keyword}\s+(\w+)[^{{]*\{{([^}}]*)\}}"
    return {m.group(1): m.group(2) for m in re.finditer(pattern, _without_comments(text))}


# ------------------------------------------------------------------------- the 1.0 text


def test_header_declarations_of_the_1_0_schema() -> None:
    schema = fbs_schema.load(FBS_1_0)
    assert schema.namespace == "tosa"
    assert schema.file_identifier == "TOSA"
    assert schema.file_extension == "tosa"
    assert schema.root_type == "TosaGraph"
    assert L.FILE_IDENTIFIER == b"TOSA"


def test_the_licence_header_is_untouched() -> None:
    assert TEXT_1_0.startswith("\n// Copyright (c) 2020-2026 ARM Limited.")
    assert "Licensed under the Apache License, Version 2.0" in TEXT_1_0.split("namespace")[0]


def test_enums_match_the_text() -> None:
    schema = fbs_schema.load(FBS_1_0)
    blocks = _blocks(TEXT_1_0, "enum")
    assert set(blocks) == set(schema.enums)
    for name, body in blocks.items():
        expected: dict[str, int] = {}
        nxt = 0
        for item in (i.strip() for i in body.split(",")):
            if not item:
                continue
            key, _, value = (s.strip() for s in item.partition("="))
            nxt = int(value) if value else nxt
            expected[key] = nxt
            nxt += 1
        assert dict(schema.enum(name).values) == expected, name
    assert schema.enum("Op").values["UNKNOWN"] == 0
    assert schema.enum("BlockSize").values == {"UNKNOWN": 0, "BLOCK_SIZE_1": 1, "BLOCK_SIZE_32": 32}
    assert schema.enum("DType").storage == "uint32"


def test_the_attribute_union_matches_the_text_and_the_op_enum() -> None:
    schema = fbs_schema.load(FBS_1_0)
    members = [m.strip() for m in _blocks(TEXT_1_0, "union")["Attribute"].split(",") if m.strip()]
    assert list(L.ATTRIBUTE.members) == members
    assert list(L.ATTRIBUTE.members.values()) == list(range(1, len(members) + 1))
    # The schema's rule: the member with an Op's value is that Op's attribute table.
    for op, value in L.OP.values.items():
        if op == "UNKNOWN":
            continue
        table = L.attribute_table(op)
        assert table is not None and L.ATTRIBUTE.members[table.name] == value
        squashed = table.name.removesuffix("Attribute").lower()
        assert squashed == op.replace("_", "").lower(), (op, table.name)
    assert len(members) == len(schema.enum("Op").values) - 1


def test_tables_match_the_text_in_slot_order() -> None:
    schema = fbs_schema.load(FBS_1_0)
    blocks = _blocks(TEXT_1_0, "table")
    assert set(blocks) == set(schema.tables)
    unions = set(schema.unions)
    for name, body in blocks.items():
        expected = []
        for decl in (d.strip() for d in body.split(";")):
            if not decl:
                continue
            field, ftype = (s.strip() for s in decl.split(":", 1))
            if ftype.split()[0] in unions:
                expected += [f"{field}_type", field]
            else:
                expected.append(field)
        assert schema.table(name).layout.fields == tuple(expected), name


def test_container_tables_of_the_1_0_schema() -> None:
    assert L.OPERATOR.layout.fields == (
        "op",
        "attribute_type",
        "attribute",
        "inputs",
        "outputs",
        "location",
    )
    assert L.BLOCK.layout.fields == ("name", "operators", "tensors", "inputs", "outputs", "shapes")
    assert L.SHAPE.layout.fields == ("name", "rank", "data")
    assert L.GRAPH.field("version").metadata == {"required": None}
    assert L.TENSOR.field("data").metadata == {"force_align": "8"}
    assert [(f.name, f.default) for f in L.VERSION.fields] == [
        ("_major", "-1"),
        ("_minor", "-1"),
        ("_patch", "-1"),
        ("_draft", "true"),
    ]
    kinds = {f.name: f.kind for f in L.OPERATOR.fields}
    assert kinds["attribute_type"] == "union_type" and kinds["attribute"] == "union"
    assert L.OPERATOR.field("attribute_type").storage == "ubyte"
    assert L.TENSOR.field("type").kind == "enum" and L.TENSOR.field("type").storage == "uint32"
    assert L.TENSOR.field("offset").storage == "ulong"


# ------------------------------------------------- against flatc's and Arm's generated code


@pytest.mark.parametrize("path", [SEED_FBS, EXTENDED_FBS], ids=["seed", "extended"])
def test_parser_agrees_with_the_hand_layout_of_the_draft(path: Path) -> None:
    schema = fbs_schema.load(path)
    for table in draft_layout.ALL_TABLES:
        if path == SEED_FBS and table.name not in schema.tables:
            continue  # VariableAttribute is one of the extension's additions
        parsed = schema.table(table.name).layout.fields
        if path == EXTENDED_FBS:
            assert parsed[: len(table.fields)] == table.fields, table.name
        else:  # the extension appends fields (ConvAttribute.acc_type)
            assert table.fields[: len(parsed)] == parsed, table.name


def test_parser_agrees_with_flatc_on_the_extended_schema() -> None:
    schema = fbs_schema.load(EXTENDED_FBS)
    assert dict(schema.enum("Op").values) == draft_layout.OP_VALUES
    assert dict(schema.enum("DType").values) == draft_layout.DTYPE_VALUES
    assert dict(schema.enum("ResizeMode").values) == draft_layout.RESIZE_MODE_VALUES
    members = {"NONE": 0, **schema.union("Attribute").members}
    assert members == draft_layout.ATTRIBUTE_VALUES


def _arm_module(name: str) -> object:
    pytest.importorskip("tosa_serializer", reason="tosa-tools is not installed (no Arm code)")
    try:
        return importlib.import_module(f"tosa.{name}")
    except ImportError:
        pytest.skip(f"tosa-tools' generated Python has no tosa.{name}")


ENUMS = ["Op", "DType", "ResizeMode", "NanPropagationMode", "RoundingMode"]


@pytest.mark.parametrize("enum", ENUMS)
def test_enums_agree_with_arms_generated_python(enum: str) -> None:
    module = _arm_module(enum)
    cls = getattr(module, enum)
    generated = {k: v for k, v in vars(cls).items() if not k.startswith("_") and isinstance(v, int)}
    assert dict(L.SCHEMA.enum(enum).values) == generated


def test_slots_agree_with_arms_generated_python() -> None:
    """Every accessor of Arm's generated tables reads the vtable entry of the slot the
    parser gives its field (``Offset(4 + 2 * slot)``)."""
    checked = 0
    for table in L.SCHEMA.tables.values():
        module = _arm_module(table.name)
        source = inspect.getsource(getattr(module, table.name))
        offsets = {
            m.group(1): int(m.group(2))
            for m in re.finditer(r"def (\w+)\(self(?:, j)?\):\n\s+o = .*?Offset\((\d+)\)", source)
        }
        for f in table.fields:
            if f.kind == "union_type":
                continue  # flatc names it FieldType(); checked through the union field below
            camel = "".join(p[:1].upper() + p[1:] for p in f.name.split("_"))
            if f.name.startswith("_"):
                camel = "_" + camel
            assert offsets.get(camel) == 4 + 2 * f.slot, (table.name, f.name)
            if f.kind == "union":
                assert offsets.get(camel + "Type") == 4 + 2 * (f.slot - 1)
            checked += 1
    assert checked > 100


# ------------------------------------------------------------ the derived attribute codec


def test_every_1_0_xml_attribute_is_a_field_of_its_table() -> None:
    """tosa.xml's attributes are the schema fields of the operator's table, one to one,
    except the ones the graph writer keeps elsewhere (CONST values, variables)."""
    spec = load_revision("1.0")
    elsewhere = {"CONST", "CONST_SHAPE", "VARIABLE", "VARIABLE_READ", "VARIABLE_WRITE"}
    for name, op in spec.operators.items():
        table = L.attribute_table(name)
        assert table is not None, name
        fields = [f.name for f in L.attribute_fields(name)]
        if name in elsewhere:
            assert fields == [], name
            continue
        assert sorted(a.name for a in op.attributes) == sorted(fields), name


def test_field_kinds_follow_tosa_xml_types() -> None:
    spec = load_revision("1.0")
    for name, op in spec.operators.items():
        by_name = {af.name: af for af in L.attribute_fields(name)}
        for arg in op.attributes:
            if arg.name not in by_name:
                continue
            kind = by_name[arg.name].kind
            if arg.type == "String":
                assert kind in (L.Kind.STRING, L.Kind.TEXT_BYTES), (name, arg.name)
            elif arg.type == "tosa_graph_t":
                assert kind is L.Kind.STRING, (name, arg.name)
            elif arg.element_type == "bool_t":
                assert kind is L.Kind.BOOL, (name, arg.name)
            elif arg.element_type == "i32_t":
                expect = L.Kind.INT if arg.shape.kind == "scalar" else L.Kind.INT_LIST
                assert kind is expect, (name, arg.name)
            elif arg.element_type in spec.enums:
                assert kind is L.Kind.ENUM, (name, arg.name)
            else:  # a value in the operator's element type
                assert kind is L.Kind.ELEMENT, (name, arg.name)


def test_every_xml_enum_value_has_a_schema_value() -> None:
    spec = load_revision("1.0")
    fields = {
        "acc_type_t": L.attribute_table("CONV2D"),
        "nan_propagation_mode_t": L.attribute_table("MAX_POOL2D"),
        "rounding_mode_t": L.attribute_table("RESCALE"),
        "resize_mode_t": L.attribute_table("RESIZE"),
    }
    field_names = {
        "acc_type_t": "acc_type",
        "nan_propagation_mode_t": "nan_mode",
        "rounding_mode_t": "rounding_mode",
        "resize_mode_t": "mode",
    }
    for enum_name, table in fields.items():
        assert table is not None
        enum = L.enum_of(table.field(field_names[enum_name]))
        for value in spec.enums[enum_name].values:
            number = L.enum_value(enum, value.name)
            assert number is not None, (enum_name, value.name)
            assert L.enum_name(enum, number) == value.name
    for value in spec.enums["var_t"].values:
        number = L.var_type_value(value.name)
        assert number is not None and L.var_type_name(number) == value.name


# -------------------------------------------------------------------------- parse errors


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("table T { a: Nope; }", "line 1: T.a: unknown type 'Nope'"),
        ("namespace x;\nstruct S { a: int; }", "line 2: struct declarations are not supported"),
        ("table T { a: int (id: 0); }", "explicit field ids are not supported"),
        ("enum E: float { A }", "underlying type 'float' is not an integer type"),
        ("enum E: ubyte { A = 2, B = 1 }", "B = 1 does not increase"),
        ("enum E: ubyte { A = 256 }", "A = 256 does not fit ubyte"),
        ('file_identifier "TOOLONG";', "is not 4 bytes"),
        ("union U { T }", "member 'T' is not a declared table"),
        ("table T { a: int; a: int; }", "declares field 'a' twice"),
        ("table T {}\ntable T {}", "line 2: 'T' is declared twice"),
        ("table T { a: int = 1", "expected"),
        ("root_type Missing;", "root_type 'Missing' is not a declared table"),
        ("table T { a: int; } ^", "unexpected character '^'"),
    ],
)
def test_parse_errors_name_the_problem(text: str, message: str) -> None:
    with pytest.raises(SchemaError, match=re.escape(message)):
        fbs_schema.parse(text)


def test_small_schema() -> None:
    schema = fbs_schema.parse(
        """
        namespace a.b;  // comment
        /* block
           comment */
        enum Color : byte { Red = -1, Green, Blue = 5, }
        table Leaf { x: int = 3; c: Color = Green; }
        union Any { Leaf, Other: Leaf2 }
        table Leaf2 {}
        table Root { name: string (required); any: Any; leaves: [Leaf]; flags: [ubyte]; }
        root_type Root;
        """
    )
    assert schema.namespace == "a.b"
    assert dict(schema.enum("Color").values) == {"Red": -1, "Green": 0, "Blue": 5}
    assert dict(schema.union("Any").members) == {"Leaf": 1, "Leaf2": 2}
    root = schema.table("Root")
    assert root.layout.fields == ("name", "any_type", "any", "leaves", "flags")
    assert [f.kind for f in root.fields] == ["string", "union_type", "union", "vector", "vector"]
    assert schema.table("Leaf").field("c").default == "Green"
    with pytest.raises(KeyError, match="no field 'zz'"):
        root.field("zz")


def test_load_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.fbs"
    bad.write_text("table T { a: Nope; }")
    with pytest.raises(SchemaError, match=rf"^{re.escape(str(bad))}: line 1: "):
        fbs_schema.load(bad)
    with pytest.raises(SchemaError, match="cannot read the schema"):
        fbs_schema.load(tmp_path / "missing.fbs")

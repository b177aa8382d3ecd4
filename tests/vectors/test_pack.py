"""Tests for the pack format: write, read back, zip, verify, schemas, writing errors
(every corruption: test_pack_corruption.py)."""

from __future__ import annotations

import importlib.util
import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from jsonschema import Draft202012Validator
from pack_cases import (
    E4M3,
    E5M2,
    MAKERS,
    SPEC,
    add_bf16,
    add_i32,
    assert_reported,
    exp_fp32,
    meta,
    problems_of,
    rehash,
    same_bits,
    write_pack,
)

from conformance import dtypes as D
from conformance.claims import full_claim
from conformance.compliance_descriptor import Mode
from conformance.graph import Graph
from conformance.spec import TypeSupport
from reference.compliance import rules
from vectors import npy, pack_json
from vectors.flatbuffer import serialize
from vectors.pack import (
    Check,
    PackError,
    PackMeta,
    Requirements,
    Vector,
    open_pack,
    verify_pack,
    write_pack_index,
    write_vector,
)
from vectors.pack_write import NAME_RE

# ----------------------------------------------------------------------------- round trip


def test_read_back_equals_what_was_written(pack: Path) -> None:
    with open_pack(pack) as p:
        assert p.names == sorted(m().name for m in MAKERS)
        for make in MAKERS:
            want = make()
            got = p.load(want.name)
            assert serialize(got.graph) == serialize(want.graph)
            assert list(got.inputs) == want.graph.main.inputs
            for name, arr in want.inputs.items():
                assert same_bits(got.inputs[name], arr), name
            assert set(got.expected) == set(want.expected)
            for name, arr in want.expected.items():
                assert same_bits(got.expected[name], arr.astype(got.expected[name].dtype))
            assert set(got.checks) == set(want.checks)
            for name, check in want.checks.items():
                assert got.checks[name].descriptor == check.descriptor
                if check.bound is None:
                    assert got.checks[name].bound is None
                else:
                    assert same_bits(got.checks[name].bound, check.bound.astype(np.float64))
            assert (got.operator, got.mode, got.kind) == (want.operator, want.mode, want.kind)
            assert got.requirements == want.requirements
            assert got.provenance == want.provenance
            assert got.rule == want.rule
            assert got.data_set == want.data_set
            assert got.result_files == {
                o: f"result-{k}.npy" for k, o in enumerate(want.graph.main.outputs)
            }
            assert got.expected_failure == (want.kind == "error")


def test_special_float_values_survive(pack: Path) -> None:
    with open_pack(pack) as p:
        bf = p.load("ADD_bf16_0").inputs["a"].astype(np.float32)
        assert np.isnan(bf[0, 0]) and bf[0, 1] == 0 and np.signbit(bf[0, 1])
        assert np.isposinf(bf[0, 2]) and np.isneginf(bf[1, 0])
        e5 = p.load("CONCAT_fp8e5m2_0").inputs["a"]
        assert e5.dtype == E5M2 and np.isnan(float(e5[0])) and np.signbit(float(e5[1]))
        e4 = p.load("MATMUL_fp8e4m3_0").inputs["a"]
        assert e4.dtype == E4M3 and np.isnan(float(e4[0, 1, 2])) and np.signbit(float(e4[0, 1, 0]))


def test_pack_meta_and_index(pack: Path) -> None:
    with open_pack(pack) as p:
        assert p.meta == meta()
        doc = json.loads((pack / "pack.json").read_text())
        assert p.pack_sha256 == doc["pack_sha256"]
        assert [e.to_json() for e in p.entries] == doc["vectors"]
        assert doc["spec"] == {
            "version": SPEC.version_string,
            "sha256": SPEC.sha256,
            "revision": SPEC.revision,
        }
        entry = p.entry("EXP_fp32_0")
        assert sorted(entry.files) == [
            "bound-0.npy",
            "desc.json",
            "expected-0.npy",
            "graph.tosa",
            "input-0.npy",
        ]


def test_written_json_form(pack: Path) -> None:
    for path in [pack / "pack.json", *pack.glob("*/desc.json")]:
        text = path.read_text("utf-8")
        doc = json.loads(text)
        expected = json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
        assert text == expected, path
        assert str(pack) not in text  # no absolute paths


def test_same_content_gives_identical_bytes(tmp_path: Path) -> None:
    a = write_pack(tmp_path / "a")
    # Another order of writing, into a folder at another path: same bytes.
    b = write_pack(tmp_path / "deep" / "b", [m() for m in reversed(MAKERS)])
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert files_a == files_b
    for rel in files_a:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def test_rewriting_a_vector_leaves_nothing_of_the_old_one(pack: Path) -> None:
    v = exp_fp32()
    v.checks = {"y": Check(rules.ulp(D.FP32, 1, "EXP as if ulp"))}  # no bound file now
    entry = write_vector(pack, v)
    assert not (pack / v.name / "bound-0.npy").exists()
    with open_pack(pack) as p:
        others = [e for e in p.entries if e.name != v.name]
    write_pack_index(pack, meta(), [*others, entry])
    assert verify_pack(pack) == []


def test_write_refuses_to_replace_a_folder_it_did_not_write(tmp_path: Path) -> None:
    (tmp_path / "ADD_i32_0").mkdir()
    (tmp_path / "ADD_i32_0" / "notes.txt").write_text("mine")
    with pytest.raises(PackError, match="exists and is not a vector folder"):
        write_vector(tmp_path, add_i32())
    assert (tmp_path / "ADD_i32_0" / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("layout", ["top", "folder"])
def test_zipped_pack_reads_the_same(pack: Path, tmp_path: Path, layout: str) -> None:
    archive = tmp_path / "pack.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for path in sorted(pack.rglob("*")):
            rel = path.relative_to(pack if layout == "top" else pack.parent)
            z.write(path, rel.as_posix())
    assert verify_pack(archive) == []
    with open_pack(pack) as folder, open_pack(archive) as zipped:
        assert zipped.pack_sha256 == folder.pack_sha256
        assert zipped.entries == folder.entries
        for name in folder.names:
            a, b = folder.load(name), zipped.load(name)
            assert serialize(a.graph) == serialize(b.graph)
            assert all(same_bits(a.inputs[k], b.inputs[k]) for k in a.inputs)
            assert all(same_bits(a.expected[k], b.expected[k]) for k in a.expected)


def test_verify_passes_on_a_fresh_pack(pack: Path) -> None:
    assert verify_pack(pack) == []


def test_desc_fields_follow_arm_where_they_mean_the_same(pack: Path) -> None:
    desc = json.loads((pack / "ADD_i32_error_0" / "desc.json").read_text())
    assert desc["tosa_file"] == "graph.tosa"
    assert desc["ifm_name"] == ["a", "b"] and desc["ifm_file"] == ["input-0.npy", "input-1.npy"]
    assert desc["ofm_name"] == ["c"] and desc["ofm_file"] == ["result-0.npy"]
    assert desc["expected_failure"] is True
    assert desc["expected_failure_desc"] == (
        "ADD: ERROR_IF(shape != broadcast_shape(shape1, shape2)): c is [3, 2]"
    )
    level = json.loads((pack / "ABS_i32_level_0" / "desc.json").read_text())
    assert level["expected_failure"] is False and "expected_failure_desc" not in level


def test_desc_validates_against_arms_schema(pack: Path) -> None:
    found = importlib.util.find_spec("schemavalidation")
    if found is None or not found.submodule_search_locations:
        pytest.skip("Arm's tosa-tools (schemavalidation) is not installed")
    arm_path = Path(next(iter(found.submodule_search_locations))) / "desc_v1.2.schema.json"
    if not arm_path.exists():
        pytest.skip(f"{arm_path} not found")
    arm = json.loads(arm_path.read_text())
    for path in pack.glob("*/desc.json"):
        desc = json.loads(path.read_text())
        shared = {k: v for k, v in desc.items() if k in arm["properties"]}
        assert set(shared) >= set(arm["required"])
        Draft202012Validator(arm).validate(shared)


# ----------------------------------------------------------------------------- schemas


def test_inlined_validator_agrees_with_the_published_schema(pack: Path) -> None:
    published = Draft202012Validator(pack_json.schema("desc"))
    docs = [json.loads(p.read_text()) for p in sorted(pack.glob("*/desc.json"))]
    broken = []
    for doc in docs:
        for key in ("rule", "expected", "requirements", "provenance"):
            bad = json.loads(json.dumps(doc))
            bad[key] = {"x": 1} if key != "expected" else [{"compliance": {"mode": "ULP"}}]
            broken.append(bad)
    for doc in docs + broken:
        want = sorted(list(e.absolute_path) for e in published.iter_errors(doc))
        got = sorted(list(e.absolute_path) for e in pack_json._validator("desc").iter_errors(doc))
        assert got == want


@pytest.mark.parametrize("which", ["pack", "desc"])
def test_schemas_are_valid_draft_2020_12(which: str) -> None:
    Draft202012Validator.check_schema(pack_json.schema(which))


def test_schema_enums_match_the_code() -> None:
    defs = pack_json.schema("desc")["$defs"]
    assert defs["dtype"]["enum"] == [d.name for d in D.ALL]
    assert defs["float_dtype"]["enum"] == [d.name for d in D.ALL if d.is_float]
    assert defs["compliance"]["properties"]["mode"]["enum"] == [m.value for m in Mode]
    pack_name = pack_json.schema("pack")["$defs"]["vector"]["properties"]["name"]
    assert pack_name == defs["vector_name"]
    assert pack_name["pattern"] == f"^{NAME_RE.pattern}$"


# ----------------------------------------------------------------------------- requirements


def mode_with(*alternatives: set[str]) -> TypeSupport:
    return TypeSupport("X", "m", {}, tuple(frozenset(a) for a in alternatives), "1.0")


@pytest.mark.parametrize(
    ("alternatives", "profiles", "extensions"),
    [
        ([{"BI"}, {"MI"}], ("BI", "MI"), ()),
        ([{"MI"}], ("MI",), ()),
        ([{"EXT-INT16"}], (), ("EXT-INT16",)),
        ([{"MI", "EXT-VARIABLE"}], ("MI",), ("EXT-VARIABLE",)),
        ([{"EXT-BF16", "EXT-FP8E4M3"}], (), ("EXT-BF16", "EXT-FP8E4M3")),
    ],
)
def test_requirements_flatten_the_modes_alternatives(
    alternatives: list[set[str]], profiles: tuple[str, ...], extensions: tuple[str, ...]
) -> None:
    got = Requirements.for_mode(SPEC, mode_with(*alternatives), "8K")
    assert got == Requirements(profiles, extensions, "8K")


@pytest.mark.parametrize("alternatives", [[{"BI"}, {"EXT-INT16"}], [{"BI", "MI"}]])
def test_requirements_that_do_not_flatten_are_refused(alternatives: list[set[str]]) -> None:
    with pytest.raises(ValueError, match="cannot be written"):
        Requirements.for_mode(SPEC, mode_with(*alternatives), "8K")


def test_every_mode_of_the_spec_flattens() -> None:
    for mode in SPEC.modes():
        Requirements.for_mode(SPEC, mode, "8K")


# ----------------------------------------------------------------------------- writing errors


def test_write_errors(tmp_path: Path) -> None:
    cases: list[tuple[Callable[[Vector], None], str]] = [
        (lambda v: setattr(v, "name", "../evil"), "not a usable vector name"),
        (lambda v: setattr(v, "name", "pack.json"), "not a usable vector name"),
        (lambda v: v.inputs.pop("b"), r"inputs \['a'\] do not match the graph's \['a', 'b'\]"),
        (lambda v: v.inputs.update(a=v.inputs["a"].astype(np.int64)), "held in int32"),
        (lambda v: v.inputs.update(a=np.zeros(3, np.int32)), "input-0.npy: wrong shape"),
        (lambda v: v.expected.update(c=v.expected["c"].astype(np.float64)), "expected-0.npy"),
        (lambda v: v.checks.update(z=Check(None)), "not graph outputs"),
        (lambda v: setattr(v, "kind", "error"), "has no expected outputs"),
        (lambda v: setattr(v, "data_set", 6), r"\$\.data_set"),
        (
            lambda v: v.checks.update(c=Check(rules.abs_error_for("EXP", D.FP32))),
            "compliance is for fp32, the output is i32",
        ),
    ]
    for change, match in cases:
        v = add_i32()
        change(v)
        with pytest.raises(PackError, match=match):
            write_vector(tmp_path, v)
    assert not any(tmp_path.iterdir()), "a rejected vector left files behind"


def test_write_refuses_a_bound_the_mode_does_not_take(tmp_path: Path) -> None:
    v = add_bf16()
    v.checks = {"c": Check(rules.ulp(D.BF16, 0.5, "r"), np.ones((2, 3)))}
    with pytest.raises(PackError, match="ULP takes no bound_file"):
        write_vector(tmp_path, v)


def test_write_refuses_a_file_the_reader_would_refuse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A 1 MiB limit, and an input of 2**18 + 1 int32 elements: 4 bytes past it, plus the
    # .npy header.  Written, the pack could not be read back without raising the limit.
    monkeypatch.setenv("TOSA_CONFORMANCE_MAX_FILE_MIB", "1")
    v = add_i32()
    big = np.zeros((1, (1 << 18) + 1), np.int32)
    v.inputs = {name: big for name in v.inputs}
    with pytest.raises(PackError, match=r"more than the 1 MiB a pack file may have"):
        write_vector(tmp_path, v)
    assert not any(tmp_path.iterdir()), "a refused vector left files behind"


@pytest.mark.parametrize("bad", [float("nan"), np.int64(3)], ids=["nan", "numpy-int"])
def test_index_refuses_options_that_are_not_json(tmp_path: Path, bad: object) -> None:
    entry = write_vector(tmp_path, add_i32())
    m = PackMeta.create(SPEC, full_claim(SPEC).to_json(), 7, {"x": bad})
    with pytest.raises(PackError, match=r"^pack\.json: cannot be written as JSON"):
        write_pack_index(tmp_path, m, [entry])


def test_index_refuses_names_equal_but_for_case(tmp_path: Path) -> None:
    a = write_vector(tmp_path, add_i32())
    b = type(a)("add_i32_0", a.operator, a.mode, a.kind, a.files)
    with pytest.raises(PackError, match="listed twice"):
        write_pack_index(tmp_path, meta(), [a, b])
    assert not (tmp_path / "pack.json").exists()


def test_npy_layer_agrees_with_the_pack(pack: Path) -> None:
    # The documented encodings are what the pack holds: plain numpy reads every file.
    desc = json.loads((pack / "MATMUL_fp8e4m3_0" / "desc.json").read_text())
    folder = pack / "MATMUL_fp8e4m3_0"
    assert np.load(folder / "input-0.npy").dtype.str == "<f4"
    assert np.load(folder / "expected-0.npy").dtype.str == "<f8"
    assert np.load(folder / "bound-0.npy").dtype.str == "<f8"
    got = npy.load_array(folder / "input-1.npy", D.FP8E4M3, desc["inputs"][1]["shape"])
    assert got.dtype == E4M3


def test_graph_without_blocks(pack: Path) -> None:
    (pack / "ADD_i32_0" / "graph.tosa").write_bytes(serialize(Graph()))
    rehash(pack)
    assert_reported(problems_of(pack), "ADD_i32_0/graph.tosa: ", "the graph has no blocks")

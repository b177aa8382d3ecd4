"""Tests for the pack format: write, read back, zip, verify, and every corruption."""

from __future__ import annotations

import importlib.util
import json
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from jsonschema import Draft202012Validator

from conformance import dtypes as D
from conformance.builder import single_operator_graph
from conformance.claims import full_claim
from conformance.graph import Graph
from conformance.spec import TypeSupport, load_spec
from reference.compliance import rules
from reference.compliance.descriptor import Mode
from reference.outcome import Rule
from vectors import npy, pack_json
from vectors.flatbuffer import serialize
from vectors.pack import (
    Check,
    NotAPackError,
    PackError,
    PackMeta,
    Provenance,
    Requirements,
    Vector,
    open_pack,
    verify_pack,
    write_pack_index,
    write_vector,
)
from vectors.pack_write import NAME_RE

SPEC = load_spec()
BF16 = ml_dtypes.bfloat16
E4M3 = ml_dtypes.float8_e4m3fn
E5M2 = ml_dtypes.float8_e5m2


# ----------------------------------------------------------------------------- vectors


def requirements(op: str, mode: str) -> Requirements:
    return Requirements.for_mode(SPEC, SPEC.operator(op).mode(mode), "8K")


def provenance(name: str, index: int = 0, rule_broken: str | None = None) -> Provenance:
    return Provenance(
        "hand", 7, index, f"tosa-conformance generate --seed 7 --only {name}", rule_broken
    )


def add_i32() -> Vector:
    g = single_operator_graph(
        "ADD", [("a", [2, 3], "i32"), ("b", [2, 3], "i32")], [("c", [2, 3], "i32")]
    )
    a = np.array([[0, 1, -(2**31)], [2**31 - 1, 5, -6]], dtype=np.int32)
    b = np.array([[1, 1, 0], [0, -5, 6]], dtype=np.int32)
    return Vector(
        name="ADD_i32_0",
        operator="ADD",
        mode="signed 32",
        kind="valid",
        graph=g,
        inputs={"a": a, "b": b},
        expected={"c": a + b},
        checks={"c": Check(rules.exact(D.I32, "ADD: integer results are exact"))},
        requirements=requirements("ADD", "signed 32"),
        provenance=provenance("ADD_i32_0"),
    )


def add_bf16() -> Vector:
    g = single_operator_graph(
        "ADD", [("a", [2, 3], "bf16"), ("b", [2, 3], "bf16")], [("c", [2, 3], "bf16")]
    )
    tiny = float(np.array(1, np.uint16).view(BF16))  # smallest bf16 subnormal
    a = np.array([[np.nan, -0.0, np.inf], [-np.inf, tiny, 1.5]], np.float32).astype(BF16)
    b = np.array([[1.0, -0.0, 1.0], [2.0, tiny, -np.nan]], np.float32).astype(BF16)
    exp = a.astype(np.float64) + b.astype(np.float64)
    return Vector(
        name="ADD_bf16_0",
        operator="ADD",
        mode="bf16",
        kind="valid",
        graph=g,
        inputs={"a": a, "b": b},
        expected={"c": exp},
        checks={"c": Check(rules.ulp(D.BF16, 0.5, "ADD bf16: 0.5 ulp"))},
        requirements=requirements("ADD", "bf16"),
        provenance=provenance("ADD_bf16_0", 1),
    )


def concat_fp8e5m2() -> Vector:
    g = single_operator_graph(
        "CONCAT",
        [("a", [2], "fp8e5m2"), ("b", [2], "fp8e5m2")],
        [("c", [4], "fp8e5m2")],
        {"axis": 0},
    )
    a = np.array([np.nan, -0.0], np.float32).astype(E5M2)
    b = np.array([-np.inf, 57344.0], np.float32).astype(E5M2)
    return Vector(
        name="CONCAT_fp8e5m2_0",
        operator="CONCAT",
        mode="fp8e5m2",
        kind="valid",
        graph=g,
        inputs={"a": a, "b": b},
        expected={"c": np.concatenate([a, b]).astype(np.float64)},
        checks={"c": Check(rules.exact(D.FP8E5M2, "CONCAT: exact"))},
        requirements=requirements("CONCAT", "fp8e5m2"),
        provenance=provenance("CONCAT_fp8e5m2_0", 2),
    )


def matmul_fp8e4m3() -> Vector:
    g = single_operator_graph(
        "MATMUL",
        [("a", [1, 2, 3], "fp8e4m3"), ("b", [1, 3, 2], "fp8e4m3")],
        [("c", [1, 2, 2], "fp16")],
        {"A_zp": 0, "B_zp": 0},
    )
    a = np.array([1.0, -2.0, 448.0, -0.0, 0.5, np.nan], np.float32).reshape(1, 2, 3)
    b = np.array([0.25, 1.0, -1.0, 2.0, 0.0, -448.0], np.float32).reshape(1, 3, 2)
    a8, b8 = a.astype(E4M3), b.astype(E4M3)
    exp = np.matmul(a8.astype(np.float64), b8.astype(np.float64))
    bound = np.matmul(np.abs(a8.astype(np.float64)), np.abs(b8.astype(np.float64)))
    desc = rules.dot_product("MATMUL", D.FP16, D.FP16, ks=3, data_set=-1)
    return Vector(
        name="MATMUL_fp8e4m3_0",
        operator="MATMUL",
        mode="fp8e4m3 with fp16 accumulate",
        kind="valid",
        graph=g,
        inputs={"a": a8, "b": b8},
        expected={"c": exp},
        checks={"c": Check(desc, bound)},
        requirements=requirements("MATMUL", "fp8e4m3 with fp16 accumulate"),
        provenance=provenance("MATMUL_fp8e4m3_0", 3),
    )


def exp_fp32() -> Vector:
    g = single_operator_graph("EXP", [("x", [4], "fp32")], [("y", [4], "fp32")])
    x = np.array([0.0, 1.0, -1.0, 88.0], np.float32)
    return Vector(
        name="EXP_fp32_0",
        operator="EXP",
        mode="fp32",
        kind="valid",
        graph=g,
        inputs={"x": x},
        expected={"y": np.exp(x.astype(np.float64))},
        checks={"y": Check(rules.abs_error_for("EXP", D.FP32), 1.0 + np.abs(x.astype(np.float64)))},
        requirements=requirements("EXP", "fp32"),
        provenance=provenance("EXP_fp32_0", 4),
        data_set=-1,
    )


def add_error() -> Vector:
    g = single_operator_graph(
        "ADD",
        [("a", [2, 3], "i32"), ("b", [2, 3], "i32")],
        [("c", [3, 2], "i32")],
        strict=False,
    )
    rule = Rule("ERROR_IF", "ADD", "shape != broadcast_shape(shape1, shape2)", "c is [3, 2]", 0)
    return Vector(
        name="ADD_i32_error_0",
        operator="ADD",
        mode="signed 32",
        kind="error",
        graph=g,
        inputs={"a": np.ones((2, 3), np.int32), "b": np.ones((2, 3), np.int32)},
        expected={},
        checks={},
        requirements=requirements("ADD", "signed 32"),
        provenance=provenance("ADD_i32_error_0", 5, rule_broken="output shape"),
        rule=rule.to_json(),
    )


def level_vector() -> Vector:
    g = single_operator_graph("ABS", [("a", [1] * 7, "i32")], [("b", [1] * 7, "i32")], strict=False)
    rule = Rule("LEVEL_CHECK", "ABS", "rank(shape) <= MAX_RANK", "rank 7 > 6", 0)
    return Vector(
        name="ABS_i32_level_0",
        operator="ABS",
        mode="signed 32",
        kind="level",
        graph=g,
        inputs={"a": np.ones([1] * 7, np.int32)},
        expected={},
        checks={},
        requirements=requirements("ABS", "signed 32"),
        provenance=provenance("ABS_i32_level_0", 6, rule_broken="MAX_RANK"),
        rule=rule.to_json(),
    )


MAKERS: list[Callable[[], Vector]] = [
    add_i32,
    add_bf16,
    concat_fp8e5m2,
    matmul_fp8e4m3,
    exp_fp32,
    add_error,
    level_vector,
]


def meta() -> PackMeta:
    return PackMeta.create(SPEC, full_claim(SPEC).to_json(), 7, {"max_elements": 64})


def write_pack(root: Path, vectors: list[Vector] | None = None) -> Path:
    vectors = vectors if vectors is not None else [m() for m in MAKERS]
    root.mkdir(parents=True, exist_ok=True)
    entries = [write_vector(root, v) for v in vectors]
    write_pack_index(root, meta(), entries)
    return root


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_pack(tmp_path_factory.mktemp("pristine") / "pack")


@pytest.fixture
def pack(pristine: Path, tmp_path: Path) -> Path:
    """A fresh copy of the written pack, for a test to damage."""
    return Path(shutil.copytree(pristine, tmp_path / "pack"))


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def rehash(root: Path) -> None:
    """Make pack.json agree with the files again, so a test sees only the fault it made."""
    doc = json.loads((root / "pack.json").read_text())
    for v in doc["vectors"]:
        folder = root / v["name"]
        v["files"] = {
            f: pack_json.sha256((folder / f).read_bytes())
            for f in v["files"]
            if (folder / f).exists()
        }
    del doc["pack_sha256"]
    doc["pack_sha256"] = pack_json.sha256(pack_json.canonical(doc))
    (root / "pack.json").write_bytes(pack_json.dumps(doc))


def edit_desc(root: Path, name: str, change: Callable[[dict], None]) -> None:
    path = root / name / "desc.json"
    desc = json.loads(path.read_text())
    change(desc)
    path.write_bytes(pack_json.dumps(desc))
    rehash(root)


def flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


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
        assert doc["spec"] == {"version": SPEC.version_string, "sha256": SPEC.sha256}
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


# ----------------------------------------------------------------------------- corruption


def problems_of(root: Path) -> list[str]:
    problems = verify_pack(root)
    assert problems, "the corruption went unnoticed"
    return problems


def assert_reported(problems: list[str], prefix: str, words: str) -> None:
    hits = [p for p in problems if p.startswith(prefix) and words in p]
    assert hits, f"no problem starting {prefix!r} mentioning {words!r} in {problems}"


def test_flipped_byte_in_an_npy(pack: Path) -> None:
    path = pack / "ADD_i32_0" / "input-1.npy"
    flip(path, path.stat().st_size - 1)
    assert_reported(problems_of(pack), "ADD_i32_0/input-1.npy: ", "sha256 mismatch")


def test_flipped_byte_in_the_graph(pack: Path) -> None:
    flip(pack / "EXP_fp32_0" / "graph.tosa", 5)  # inside the file identifier
    problems = problems_of(pack)
    assert_reported(problems, "EXP_fp32_0/graph.tosa: ", "sha256 mismatch")
    assert_reported(problems, "EXP_fp32_0/graph.tosa: ", "not a TOSA flatbuffer")


def test_flipped_byte_in_desc(pack: Path) -> None:
    flip(pack / "ADD_bf16_0" / "desc.json", 0)  # "{" -> "z"
    problems = problems_of(pack)
    assert_reported(problems, "ADD_bf16_0/desc.json: ", "sha256 mismatch")
    assert_reported(problems, "ADD_bf16_0/desc.json: ", "not valid JSON")


@pytest.mark.parametrize("offset", [0, 300, -20])
def test_flipped_byte_in_pack_json(pack: Path, offset: int) -> None:
    path = pack / "pack.json"
    flip(path, offset % path.stat().st_size)
    assert_reported(problems_of(pack), "pack.json: ", "")


def test_deleted_file(pack: Path) -> None:
    (pack / "MATMUL_fp8e4m3_0" / "bound-0.npy").unlink()
    assert_reported(problems_of(pack), "MATMUL_fp8e4m3_0/bound-0.npy: ", "missing")


def test_deleted_vector_folder(pack: Path) -> None:
    shutil.rmtree(pack / "ABS_i32_level_0")
    problems = problems_of(pack)
    assert_reported(problems, "ABS_i32_level_0/desc.json: ", "missing")
    assert_reported(problems, "ABS_i32_level_0/graph.tosa: ", "missing")


@pytest.mark.parametrize("rel", ["ADD_i32_0/result-0.npy", "notes.txt", "OTHER/desc.json"])
def test_stray_file(pack: Path, rel: str) -> None:
    (pack / rel).parent.mkdir(exist_ok=True)
    (pack / rel).write_bytes(b"x")
    assert problems_of(pack) == [f"{rel}: stray file (pack.json does not list it)"]


def test_truncated_npy(pack: Path) -> None:
    path = pack / "ADD_bf16_0" / "expected-0.npy"
    path.write_bytes(path.read_bytes()[:-7])
    problems = problems_of(pack)
    assert_reported(problems, "ADD_bf16_0/expected-0.npy: ", "sha256 mismatch")
    assert_reported(problems, "ADD_bf16_0/expected-0.npy: ", "truncated")
    rehash(pack)
    # The header's declared size is checked before the data is read.
    assert problems_of(pack) == [
        "ADD_bf16_0/expected-0.npy: truncated: the header declares shape [2, 3] "
        "(48 bytes of data), the file holds 41"
    ]


def test_input_saved_with_another_dtype(pack: Path) -> None:
    path = pack / "ADD_i32_0" / "input-0.npy"
    np.save(path, np.zeros((2, 3), np.int64))
    rehash(pack)
    assert problems_of(pack) == [
        "ADD_i32_0/input-0.npy: wrong dtype: file holds int64 (<i8), expected int32 (<i4) for i32"
    ]


def test_input_dtype_changed_in_desc(pack: Path) -> None:
    edit_desc(pack, "ADD_i32_0", lambda d: d["inputs"][0].update(dtype="i16"))
    problems = problems_of(pack)
    words = "dtype i16, but the graph's tensor 'a' is i32"
    assert_reported(problems, "ADD_i32_0/desc.json: ", words)
    assert_reported(problems, "ADD_i32_0/input-0.npy: ", "wrong dtype")


def test_input_shape_changed_in_desc(pack: Path) -> None:
    edit_desc(pack, "ADD_i32_0", lambda d: d["inputs"][1].update(shape=[3, 2]))
    problems = problems_of(pack)
    assert_reported(problems, "ADD_i32_0/desc.json: ", "shape [3, 2], but the graph's tensor 'b'")
    assert_reported(problems, "ADD_i32_0/input-1.npy: ", "wrong shape")


def test_value_not_of_the_narrow_type(pack: Path) -> None:
    path = pack / "ADD_bf16_0" / "input-1.npy"
    wide = np.load(path)
    wide[0, 0] = 0.1
    np.save(path, wide)
    rehash(pack)
    problems = problems_of(pack)
    assert_reported(problems, "ADD_bf16_0/input-1.npy: ", "not a bf16 value")


def test_garbage_graph(pack: Path) -> None:
    (pack / "ADD_i32_0" / "graph.tosa").write_bytes(b"\0" * 64)
    rehash(pack)
    assert_reported(problems_of(pack), "ADD_i32_0/graph.tosa: ", "not a TOSA flatbuffer")


def test_graph_of_another_vector(pack: Path) -> None:
    shutil.copy(pack / "EXP_fp32_0" / "graph.tosa", pack / "ADD_i32_0" / "graph.tosa")
    rehash(pack)
    problems = problems_of(pack)
    words = "ifm_name is ['a', 'b'], expected the graph's"
    assert_reported(problems, "ADD_i32_0/desc.json: ", words)
    assert_reported(problems, "ADD_i32_0/desc.json: ", "operator ADD does not occur in the graph")


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda d: d.update(colour="red"), "Additional properties are not allowed"),
        (lambda d: d.update(kind="valid", expected=[]), "expected"),
        (lambda d: d.update(data_set=9), "$.data_set"),
        (lambda d: d["requirements"].pop("level"), "'level' is a required property"),
        (lambda d: d.update(expected_failure=False), "$.expected_failure"),
        (lambda d: d["rule"].update(kind="LEVEL_CHECK"), "$.rule.kind"),
        (lambda d: d["provenance"].update(regenerate="a\nb"), "$.provenance.regenerate"),
    ],
    ids=["unknown-key", "valid-without-expected", "data-set", "level", "failure", "rule", "cmd"],
)
def test_desc_schema_violations(pack: Path, change: Callable[[dict], None], words: str) -> None:
    edit_desc(pack, "ADD_i32_error_0", change)
    problems = problems_of(pack)
    assert_reported(problems, "ADD_i32_error_0/desc.json: does not match desc.schema.json", words)


def test_compliance_params_are_checked(pack: Path) -> None:
    def drop_ulp(d: dict) -> None:
        d["expected"][0]["compliance"]["params"].pop("ulp")

    edit_desc(pack, "ADD_bf16_0", drop_ulp)
    assert_reported(problems_of(pack), "ADD_bf16_0/desc.json: ", "'ulp' is a required property")


def test_bound_file_must_match_the_compliance_mode(pack: Path) -> None:
    def drop_bound(d: dict) -> None:
        d["expected"][0]["bound_file"] = None

    edit_desc(pack, "EXP_fp32_0", drop_bound)
    problems = problems_of(pack)
    assert_reported(problems, "EXP_fp32_0/desc.json: ", "ABS_ERROR needs a bound_file")
    assert_reported(problems, "EXP_fp32_0/bound-0.npy: ", "desc.json does not refer to it")


def test_desc_disagreeing_with_pack_json(pack: Path) -> None:
    edit_desc(pack, "ADD_i32_0", lambda d: d.update(mode="signed 16"))
    assert_reported(
        problems_of(pack), "ADD_i32_0/desc.json: ", "mode is 'signed 16', but pack.json says"
    )


def test_pack_json_schema_and_order(pack: Path) -> None:
    doc = json.loads((pack / "pack.json").read_text())
    doc["vectors"].reverse()
    del doc["pack_sha256"]
    doc["pack_sha256"] = pack_json.sha256(pack_json.canonical(doc))
    (pack / "pack.json").write_bytes(pack_json.dumps(doc))
    assert problems_of(pack) == ["pack.json: vectors are not sorted by name"]
    doc["format_version"] = 2
    (pack / "pack.json").write_bytes(pack_json.dumps(doc))
    prefix = "pack.json: does not match pack.schema.json"
    assert_reported(problems_of(pack), prefix, "format_version")


def test_pack_json_edited_without_rehash(pack: Path) -> None:
    doc = json.loads((pack / "pack.json").read_text())
    doc["seed"] = 8
    (pack / "pack.json").write_bytes(pack_json.dumps(doc))
    content = {k: v for k, v in doc.items() if k != "pack_sha256"}
    computed = pack_json.sha256(pack_json.canonical(content))
    assert problems_of(pack) == [
        f"pack.json: pack_sha256 is {doc['pack_sha256'][:16]}..., but the content hashes to "
        f"{computed[:16]}... (pack.json was changed after it was written)"
    ]


def test_all_problems_are_listed_not_just_the_first(pack: Path) -> None:
    (pack / "ADD_i32_0" / "input-0.npy").unlink()
    flip(pack / "EXP_fp32_0" / "expected-0.npy", -1)
    (pack / "stray.bin").write_bytes(b"")
    problems = problems_of(pack)
    assert_reported(problems, "ADD_i32_0/input-0.npy: ", "missing")
    assert_reported(problems, "EXP_fp32_0/expected-0.npy: ", "sha256 mismatch")
    assert_reported(problems, "stray.bin: ", "stray file")
    assert all("\n" not in p for p in problems)


def test_load_names_vector_and_file_and_others_still_load(pack: Path) -> None:
    flip(pack / "CONCAT_fp8e5m2_0" / "input-0.npy", 130)
    with open_pack(pack) as p:
        with pytest.raises(PackError, match=r"^CONCAT_fp8e5m2_0/input-0\.npy: sha256 mismatch"):
            p.load("CONCAT_fp8e5m2_0")
        assert p.load("ADD_i32_0").name == "ADD_i32_0"
        with pytest.raises(PackError, match="no vector named 'nope'"):
            p.load("nope")


def test_open_pack_refuses_a_damaged_index(pack: Path) -> None:
    (pack / "pack.json").write_text("{")
    with pytest.raises(PackError, match=r"^pack\.json: not valid JSON"):
        open_pack(pack)


@pytest.mark.parametrize("what", ["missing", "empty-dir", "plain-file", "bad-zip", "zip-no-index"])
def test_not_a_pack(tmp_path: Path, what: str) -> None:
    path = tmp_path / "x"
    if what == "empty-dir":
        path.mkdir()
    elif what == "plain-file":
        path.write_text("hello")
    elif what == "bad-zip":
        path.write_bytes(b"PK\x05\x06" + b"\0" * 10)
    elif what == "zip-no-index":
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("a/b/pack.json", "{}")
    with pytest.raises(NotAPackError, match=f"^{path}: "):
        verify_pack(path)
    with pytest.raises(NotAPackError):
        open_pack(path)


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

"""The vectors and pack helpers the pack-format tests share (tests/vectors/)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import ml_dtypes
import numpy as np

from conformance import dtypes as D
from conformance.builder import single_operator_graph
from conformance.claims import full_claim
from conformance.spec import load_spec
from reference.compliance import rules
from reference.outcome import Rule
from vectors import pack_json
from vectors.pack import (
    Check,
    PackMeta,
    Provenance,
    Requirements,
    Vector,
    verify_pack,
    write_pack_index,
    write_vector,
)

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


def problems_of(root: Path) -> list[str]:
    problems = verify_pack(root)
    assert problems, "the corruption went unnoticed"
    return problems


def assert_reported(problems: list[str], prefix: str, words: str) -> None:
    hits = [p for p in problems if p.startswith(prefix) and words in p]
    assert hits, f"no problem starting {prefix!r} mentioning {words!r} in {problems}"

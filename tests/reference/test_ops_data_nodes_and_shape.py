"""Reference evaluator: CONST, IDENTITY and the shape operators (ADD_SHAPE,
CONCAT_SHAPE, CONST_SHAPE, DIM, DIV_SHAPE, MUL_SHAPE, SUB_SHAPE)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reference_helpers import assert_rule

from conformance.builder import single_operator_graph
from conformance.dtypes import DType
from conformance.graph import Graph
from conformance.spec import load_spec
from reference.arguments import ATTRIBUTES_CLAUSE, OUTPUTS_CLAUSE
from reference.engine import Evaluator, evaluate
from reference.outcome import Outcome
from strategies.values import sample_storage

SPEC = load_spec()
I64_MAX = (1 << 63) - 1
I64_MIN = -(1 << 63)
ARITHMETIC = ("ADD_SHAPE", "SUB_SHAPE", "MUL_SHAPE", "DIV_SHAPE")


def const_graph(values: np.ndarray, dt: Any, shape: Sequence[int] | None = None) -> Graph:
    out = tuple(values.shape if shape is None else shape)
    return single_operator_graph("CONST", [], [("y", out, dt)], {"values": values})


def identity_graph(shape: Sequence[int], dt: Any, out: Sequence[int] | None = None) -> Graph:
    return single_operator_graph(
        "IDENTITY", [("x", tuple(shape), dt)], [("y", tuple(out or shape), dt)]
    )


def binary_shape(op: str, a: Sequence[int], b: Sequence[int], out_len: int | None = None):
    n = len(a) if out_len is None else out_len
    return single_operator_graph(
        op,
        [("a", (len(a),), "shape"), ("b", (len(b),), "shape")],
        [("y", (n,), "shape")],
        constants={"a": np.array(a, dtype=np.int64), "b": np.array(b, dtype=np.int64)},
    )


def concat_shape(parts: Sequence[Sequence[int]], out_len: int) -> Graph:
    names = [f"s{k}" for k in range(len(parts))]
    return single_operator_graph(
        "CONCAT_SHAPE",
        [(n, (len(p),), "shape") for n, p in zip(names, parts, strict=True)],
        [("y", (out_len,), "shape")],
        constants={n: np.array(p, dtype=np.int64) for n, p in zip(names, parts, strict=True)},
    )


def const_shape(values: Sequence[int], out_len: int | None = None) -> Graph:
    n = len(values) if out_len is None else out_len
    return single_operator_graph(
        "CONST_SHAPE", [], [("y", (n,), "shape")], {"values": tuple(values)}
    )


def dim_graph(shape: Sequence[int], dt: Any, axis: int, out_len: int = 1) -> Graph:
    return single_operator_graph(
        "DIM", [("x", tuple(shape), dt)], [("y", (out_len,), "shape")], {"axis": axis}
    )


def run(graph: Graph, values: dict[str, np.ndarray] | None = None) -> Outcome:
    return evaluate(graph, values or {})


def output(outcome: Outcome) -> np.ndarray:
    assert outcome.kind == "valid", str(outcome)
    return outcome.outputs["y"]


def run_storage(graph: Graph, values: dict[str, np.ndarray]) -> np.ndarray:
    main = graph.main
    outs, _ = Evaluator(graph, SPEC, SPEC.level("8K")).run_block(
        main, [values[n] for n in main.inputs], depth=0
    )
    return outs[0]


def bits(a: np.ndarray) -> np.ndarray:
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind in "fV" else a


# -- hand-checked values ----------------------------------------------------------


def test_const_rounds_to_its_type_and_keeps_bits() -> None:
    # 0.1 as fp16: 0x2E66 = 0.0999755859375 (11 significant bits).
    out = output(run(const_graph(np.array([0.1, -2.5]), "fp16")))
    assert out.tolist() == [float(np.float16(0.1)), -2.5]
    # Values already in the storage type keep their bits (NaN payload, -0.0).
    stored = np.array([0x7F81, 0x8000], dtype=np.uint16).view(ml_dtypes.bfloat16)
    got = run_storage(const_graph(stored, "bf16"), {})
    assert bits(got).tolist() == [0x7F81, 0x8000]


def test_identity_is_a_copy() -> None:
    x = np.array([[1, -7], [7, 0]], dtype=np.int8)
    assert output(run(identity_graph((2, 2), "i4"), {"x": x})).tolist() == x.tolist()
    big = np.array([(1 << 47) - 1, -(1 << 47)], dtype=np.int64)
    assert output(run(identity_graph((2,), "i48"), {"x": big})).tolist() == big.tolist()


def test_shape_arithmetic_by_hand() -> None:
    assert output(run(binary_shape("ADD_SHAPE", [1, 2, 3], [10, 20, 30]))).tolist() == [11, 22, 33]
    # SUB_SHAPE may go negative: shape values are held as signed 64-bit.
    assert output(run(binary_shape("SUB_SHAPE", [2, 9], [5, 4]))).tolist() == [-3, 5]
    assert output(run(binary_shape("MUL_SHAPE", [3, -4], [5, 6]))).tolist() == [15, -24]


def test_div_shape_truncates_toward_zero() -> None:
    # 7/2 = 3.5 -> 3; -7/2 = -3.5 -> -3 (floor would give -4); 7/-2 -> -3; -7/-2 -> 3;
    # 6/3 = 2 exactly; 1/4 -> 0; -1/4 -> 0.
    out = output(run(binary_shape("DIV_SHAPE", [7, -7, 7, -7, 6, 1, -1], [2, 2, -2, -2, 3, 4, 4])))
    assert out.tolist() == [3, -3, -3, 3, 2, 0, 0]


def test_concat_and_const_shape_by_hand() -> None:
    assert output(run(concat_shape([[1, 2], [3], [4, 5]], 5))).tolist() == [1, 2, 3, 4, 5]
    assert output(run(concat_shape([], 0))).tolist() == []
    assert output(run(const_shape([2, 3, 4]))).tolist() == [2, 3, 4]


def test_dim_by_hand() -> None:
    x = np.zeros((2, 5, 3), dtype=np.float32)
    # shape_dim([2, 5, 3], axis) for each axis.
    for axis, size in enumerate([2, 5, 3]):
        assert output(run(dim_graph(x.shape, "fp32", axis), {"x": x})).tolist() == [size]


# -- ERROR_IF / REQUIRE ------------------------------------------------------------

X2 = np.zeros((2, 3), dtype=np.float32)

ERROR_CASES: list[tuple[str, Callable[[], Outcome], str]] = [
    *[
        (
            f"{op.lower()}-length",
            (lambda op=op: run(binary_shape(op, [1, 2], [1, 2, 3]))),
            "length(input1) != length(input2)",
        )
        for op in ARITHMETIC
    ],
    (
        "concat_shape-length",
        lambda: run(concat_shape([[1, 2], [3]], 4)),
        "length(output) != sum(length(input1[k]) for all k)",
    ),
    ("dim-axis", lambda: run(dim_graph((2, 3), "fp32", 2), {"x": X2}), "axis >= rank(shape)"),
    ("dim-axis-negative", lambda: run(dim_graph((2, 3), "fp32", -1), {"x": X2}), ATTRIBUTES_CLAUSE),
    ("dim-output", lambda: run(dim_graph((2, 3), "fp32", 0, 2), {"x": X2}), OUTPUTS_CLAUSE),
    ("const-shape", lambda: run(const_graph(np.zeros((2, 3)), "fp32", (3, 2))), OUTPUTS_CLAUSE),
    ("const-i4-range", lambda: run(const_graph(np.array([7, 8]), "i4")), ATTRIBUTES_CLAUSE),
    ("const-i8-range", lambda: run(const_graph(np.array([-129]), "i8")), ATTRIBUTES_CLAUSE),
    ("const-i8-fraction", lambda: run(const_graph(np.array([1.5]), "i8")), ATTRIBUTES_CLAUSE),
    (
        "identity-shape",
        lambda: run(identity_graph((2, 3), "fp32", (3, 2)), {"x": X2}),
        OUTPUTS_CLAUSE,
    ),
]


@pytest.mark.parametrize(("make", "clause"), [pytest.param(m, c, id=i) for i, m, c in ERROR_CASES])
def test_error_if(make: Callable[[], Outcome], clause: str) -> None:
    assert_rule(make(), "error", clause)


def _range(helper: str) -> str:
    return f"c >= minimum_s<size_t>() && c <= maximum_s<size_t>() ({helper})"


REQUIRE_CASES: list[tuple[str, Callable[[], Outcome], str]] = [
    (
        "add-overflow",
        lambda: run(binary_shape("ADD_SHAPE", [1, I64_MAX], [0, 1])),
        _range("apply_add_s"),
    ),
    ("sub-overflow", lambda: run(binary_shape("SUB_SHAPE", [I64_MIN], [1])), _range("apply_sub_s")),
    (
        "mul-overflow",
        lambda: run(binary_shape("MUL_SHAPE", [1 << 62], [2])),
        "int64_t c = a * b does not overflow (apply_mul_s)",
    ),
    (
        "div-by-zero",
        lambda: run(binary_shape("DIV_SHAPE", [4, 1], [2, 0])),
        "input2[index] != 0 (apply_intdiv_s divides by it)",
    ),
    (
        "div-overflow",
        lambda: run(binary_shape("DIV_SHAPE", [I64_MIN], [-1])),
        _range("apply_intdiv_s"),
    ),
    (
        "add-output-length",
        lambda: run(binary_shape("ADD_SHAPE", [1, 2], [3, 4], out_len=3)),
        "length(output) == length(input1) (assumed by the pseudocode)",
    ),
    (
        "const_shape-output-length",
        lambda: run(const_shape([1, 2], out_len=3)),
        "length(output) == length(values) (assumed by the pseudocode)",
    ),
]


@pytest.mark.parametrize(
    ("make", "clause"), [pytest.param(m, c, id=i) for i, m, c in REQUIRE_CASES]
)
def test_require(make: Callable[[], Outcome], clause: str) -> None:
    outcome = make()
    assert_rule(outcome, "unpredictable", clause)
    assert outcome.rule is not None and outcome.rule.kind == "REQUIRE"


# -- every mode -------------------------------------------------------------------------


def _mode_graph(op: str, dt: DType, rng: np.random.Generator):
    """(graph, inputs, expected storage output) for one mode of ``op``."""
    if op == "CONST":
        values = sample_storage(rng, dt, (2, 3))
        return const_graph(values, dt), {}, values
    if op == "IDENTITY":
        x = sample_storage(rng, dt, (2, 3))
        return identity_graph(x.shape, dt), {"x": x}, x
    if op == "DIM":
        x = sample_storage(rng, dt, (2, 5, 3))
        return dim_graph(x.shape, dt, 1), {"x": x}, np.array([5])
    if op == "CONCAT_SHAPE":
        return concat_shape([[1, 2], [3]], 3), {}, np.array([1, 2, 3])
    if op == "CONST_SHAPE":
        return const_shape([4, 5]), {}, np.array([4, 5])
    expected = {"ADD_SHAPE": [9, 6], "SUB_SHAPE": [3, 2], "MUL_SHAPE": [18, 8], "DIV_SHAPE": [2, 2]}
    return binary_shape(op, [6, 4], [3, 2]), {}, np.array(expected[op])


OPS = ("CONST", "IDENTITY", *ARITHMETIC, "CONCAT_SHAPE", "CONST_SHAPE", "DIM")
MODES = [
    pytest.param(op, mode.mode, id=f"{op}-{mode.mode}")
    for op in OPS
    for mode in SPEC.operator(op).modes
]


@pytest.mark.parametrize(("op", "mode"), MODES)
def test_every_mode_evaluates(op: str, mode: str) -> None:
    support = SPEC.operator(op).mode(mode)
    var = next(iter(support.bindings))  # out_t, in_out_t, in_t or shape_t
    dt = support.dtype(var)
    graph, feed, expected = _mode_graph(op, dt, np.random.default_rng(13))
    assert run(graph, feed).kind == "valid"
    got = run_storage(graph, feed)
    assert got.dtype == (expected.dtype if op in ("CONST", "IDENTITY") else np.int64)
    assert np.array_equal(bits(got), bits(expected))


# -- properties --------------------------------------------------------------------------

SIZES = st.integers(-(1 << 40), 1 << 40) | st.integers(I64_MIN, I64_MAX)


def _c_div(x: int, y: int) -> int:
    """C division: the quotient's magnitude is |x| // |y|, its sign that of x * y."""
    return (abs(x) // abs(y)) * (1 if (x < 0) == (y < 0) else -1)


EXACT: dict[str, Callable[[int, int], int]] = {
    "ADD_SHAPE": lambda x, y: x + y,
    "SUB_SHAPE": lambda x, y: x - y,
    "MUL_SHAPE": lambda x, y: x * y,
    "DIV_SHAPE": _c_div,
}


@given(data=st.data())
def test_shape_arithmetic_matches_integers(data: st.DataObject) -> None:
    op = data.draw(st.sampled_from(ARITHMETIC), label="op")
    n = data.draw(st.integers(1, 6), label="length")
    a = data.draw(st.lists(SIZES, min_size=n, max_size=n), label="input1")
    b = data.draw(st.lists(SIZES.filter(lambda v: v != 0), min_size=n, max_size=n), label="input2")
    want = [EXACT[op](x, y) for x, y in zip(a, b, strict=True)]
    outcome = run(binary_shape(op, a, b))
    if all(I64_MIN <= v <= I64_MAX for v in want):
        assert output(outcome).tolist() == want
    else:
        assert outcome.kind == "unpredictable", str(outcome)

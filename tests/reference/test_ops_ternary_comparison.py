"""SELECT, SIN and the comparison operators of the reference evaluator."""

from __future__ import annotations

import math
from collections.abc import Sequence

import ml_dtypes
import numpy as np
import pytest
from reference_helpers import assert_rule

from conformance.builder import single_operator_graph
from reference.arguments import OUTPUTS_CLAUSE
from reference.engine import evaluate
from reference.outcome import Outcome

NAN, INF = np.nan, np.inf
Input = tuple[str, object, str]


def run(
    op: str, inputs: Sequence[Input], out_dtype: str, out_shape: tuple | None = None
) -> Outcome:
    arrays = [(n, np.asarray(v), dt) for n, v, dt in inputs]
    if out_shape is None:
        out_shape = np.broadcast_shapes(*(a.shape for _, a, _ in arrays))
    graph = single_operator_graph(
        op, [(n, a.shape, dt) for n, a, dt in arrays], [("output", out_shape, out_dtype)]
    )
    return evaluate(graph, {n: a for n, a, _ in arrays})


def out(outcome: Outcome) -> np.ndarray:
    assert outcome.kind == "valid", str(outcome)
    return outcome.outputs["output"]


def select(cond: object, a: object, b: object, dt: str, out_shape: tuple | None = None) -> Outcome:
    inputs = [("input1", cond, "bool"), ("input2", a, dt), ("input3", b, dt)]
    return run("SELECT", inputs, dt, out_shape)


def compare(op: str, a: object, b: object, dt: str, out_shape: tuple | None = None) -> Outcome:
    return run(op, [("input1", a, dt), ("input2", b, dt)], "bool", out_shape)


# -- SELECT -------------------------------------------------------------------------------


def test_select_broadcasts_all_three_inputs() -> None:
    cond = [[True], [False]]  # [2, 1]
    got = select(cond, [[1, 2, 3]], [[7, 8, 9], [10, 11, 12]], "i16")
    assert out(got).tolist() == [[1, 2, 3], [10, 11, 12]]


def test_select_passes_float_values_through_exactly() -> None:
    a = np.array([-0.0, NAN, 1.5], ml_dtypes.bfloat16)
    got = out(select([True, True, False], a, np.array([1.0, 2.0, 3.0]), "bf16"))
    assert got[0] == 0.0 and np.signbit(got[0]) and np.isnan(got[1]) and got[2] == 3.0
    assert out(select([False, True], [True, True], [False, False], "bool")).tolist() == [
        False,
        True,
    ]


@pytest.mark.parametrize(
    ("s1", "s2", "s3", "out_shape", "clause"),
    [
        ((2,), (2, 2), (2, 2), (2, 2), "rank(shape1) != rank(shape2)"),
        ((2, 2), (2, 2), (2,), (2, 2), "rank(shape1) != rank(shape2)"),
        ((2, 2), (3, 2), (2, 2), (3, 2), "shape2[i] != 1 && shape2[i] != shape[i]"),
        (
            (2, 1),
            (2, 1),
            (1, 3),
            (2, 1),
            "shape != broadcast_shape(broadcast_shape(shape1, shape2), shape3)",
        ),
    ],
)
def test_select_broadcast_error_ifs(
    s1: tuple, s2: tuple, s3: tuple, out_shape: tuple, clause: str
) -> None:
    got = select(np.ones(s1, bool), np.ones(s2), np.ones(s3), "fp32", out_shape)
    assert_rule(got, "error", clause)


# -- SIN ----------------------------------------------------------------------------------


def test_sin_behaviour_table_and_values() -> None:
    graph = single_operator_graph("SIN", [("input", (6,), "fp32")], [("output", (6,), "fp32")])
    got = out(evaluate(graph, {"input": np.array([-INF, INF, -0.0, 0.0, NAN, 1.0])}))
    assert np.isnan(got[[0, 1, 4]]).all()
    assert got[2] == 0.0 and np.signbit(got[2]) and not np.signbit(got[3])
    assert got[5] == math.sin(1.0)


def test_sin_output_shape_must_match_the_input() -> None:
    graph = single_operator_graph("SIN", [("input", (2,), "fp16")], [("output", (3,), "fp16")])
    got = evaluate(graph, {"input": np.zeros(2)})
    # the engine checks declared argument shapes before the operator runs
    assert_rule(got, "error", OUTPUTS_CLAUSE)


# -- comparisons --------------------------------------------------------------------------


def test_equal_nan_signed_zero_and_infinities() -> None:
    a = [NAN, NAN, 1.0, -0.0, INF, -INF, 1.0]
    b = [NAN, 1.0, NAN, 0.0, INF, INF, 1.0]
    got = compare("EQUAL", a, b, "fp32")
    assert out(got).tolist() == [False, False, False, True, True, False, True]


def test_greater_with_signed_zero_and_nan() -> None:
    a = [-0.0, 0.0, NAN, 1.0, INF, 2.0]
    b = [0.0, -0.0, 0.0, NAN, 1e30, 1.0]
    assert out(compare("GREATER", a, b, "fp32")).tolist() == [
        False,
        False,
        False,
        False,
        True,
        True,
    ]
    assert out(compare("GREATER_EQUAL", a, b, "fp32")).tolist() == [
        True,
        True,
        False,
        False,
        True,
        True,
    ]


def test_comparisons_i32_and_bf16() -> None:
    a, b = [-(2**31), 5, 2**31 - 1], [2**31 - 1, 5, -(2**31)]
    assert out(compare("EQUAL", a, b, "i32")).tolist() == [False, True, False]
    assert out(compare("GREATER", a, b, "i32")).tolist() == [False, False, True]
    assert out(compare("GREATER_EQUAL", a, b, "i32")).tolist() == [False, True, True]
    x = np.array([1.0078125, 1.0], ml_dtypes.bfloat16)  # 1 + 2**-7: adjacent bf16 values
    assert out(compare("GREATER", x, np.array([1.0, 1.0]), "bf16")).tolist() == [True, False]


@pytest.mark.parametrize("op", ["EQUAL", "GREATER", "GREATER_EQUAL"])
@pytest.mark.parametrize(
    ("s1", "s2", "out_shape", "clause"),
    [
        ((2, 3), (3,), (2, 3), "rank(shape1) != rank(shape2)"),
        ((2, 3), (4, 3), (4, 3), "shape2[i] != 1 && shape2[i] != shape[i]"),
        ((2, 3), (2, 1), (2, 1), "shape != broadcast_shape(shape1, shape2)"),
    ],
)
def test_comparison_broadcast_error_ifs(
    op: str, s1: tuple, s2: tuple, out_shape: tuple, clause: str
) -> None:
    got = compare(op, np.zeros(s1), np.zeros(s2), "fp16", out_shape)
    assert_rule(got, "error", clause)

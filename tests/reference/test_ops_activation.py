"""CLAMP, ERF, SIGMOID, TANH of the reference evaluator."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reference_helpers import assert_rule

from conformance.builder import single_operator_graph
from reference import arithmetic
from reference.arguments import OUTPUTS_CLAUSE
from reference.engine import evaluate
from reference.outcome import Outcome

NAN, INF = np.nan, np.inf


def activation(
    op: str, x: object, dt: str, *, out_shape: tuple | None = None, **attrs: object
) -> Outcome:
    arr = np.asarray(x)
    graph = single_operator_graph(
        op,
        [("input", arr.shape, dt)],
        [("output", arr.shape if out_shape is None else out_shape, dt)],
        attrs,
    )
    return evaluate(graph, {"input": arr})


def out(outcome: Outcome) -> np.ndarray:
    assert outcome.kind == "valid", str(outcome)
    return outcome.outputs["output"]


# -- CLAMP ----------------------------------------------------------------------------


def test_clamp_integers() -> None:
    got = activation("CLAMP", [-128, -11, -10, 0, 10, 127], "i8", min_val=-10, max_val=10)
    assert out(got).tolist() == [-10, -10, -10, 0, 10, 10]
    got = activation("CLAMP", [-32768, 300], "i16", min_val=-5, max_val=-5)
    assert out(got).tolist() == [-5, -5]  # min == max is allowed


def test_clamp_float_nan_and_signed_zero() -> None:
    got = out(activation("CLAMP", [NAN, -INF, INF, -0.0, 0.5], "fp32", min_val=0.0, max_val=1.0))
    # NaN stays NaN (apply_max_s/apply_min_s return NaN).  -0.0 >= +0.0, so
    # apply_max_s(-0.0, 0.0) keeps -0.0, and the pseudocode passes it through.
    assert np.isnan(got[0]) and got[1:3].tolist() == [0.0, 1.0]
    assert got[3] == 0.0 and np.signbit(got[3]) and got[4] == 0.5


def test_clamp_bounds_are_values_of_the_tensor_type() -> None:
    # 0.1 is not an fp16 value; the bound is fp16(0.1) = 0.0999755859375.
    got = out(activation("CLAMP", [0.0], "fp16", min_val=0.1, max_val=1.0))
    assert got[0] == float(np.float16(0.1)) == 0.0999755859375
    x = np.array([-3.0, 3.0], ml_dtypes.bfloat16)
    assert out(activation("CLAMP", x, "bf16", min_val=-1.5, max_val=2.0)).tolist() == [-1.5, 2.0]


@pytest.mark.parametrize("dt", ["i8", "i16", "fp16", "bf16", "fp32"])
def test_clamp_max_below_min_is_an_error(dt: str) -> None:
    got = activation("CLAMP", [0], dt, min_val=5, max_val=4)
    assert_rule(got, "error", "max_val < min_val")


def test_clamp_nan_bound_is_unpredictable() -> None:
    # max_val < NaN is false, so no ERROR_IF; apply_clip_s's REQUIRE(min_val <= max_val)
    # is false as well.
    got = activation("CLAMP", [0.0], "fp32", min_val=NAN, max_val=1.0)
    assert_rule(got, "unpredictable", "min_val <= max_val")


# -- ERF / SIGMOID / TANH ------------------------------------------------------------------


def test_erf_matches_the_c_library() -> None:
    xs = np.concatenate(
        [np.linspace(-7.0, 7.0, 20001), np.geomspace(1e-300, 6.0, 2000), [2.4999, 2.5, 2.5001]]
    )
    want = np.array([math.erf(v) for v in xs])
    got = arithmetic.erf(xs)
    ulps = np.abs(got - want) / np.spacing(np.abs(want))
    assert ulps.max() <= 16


def test_erf_special_values() -> None:
    got = out(activation("ERF", [-INF, INF, -0.0, 0.0, NAN, 0.5], "fp32"))
    assert got[:2].tolist() == [-1.0, 1.0]
    assert got[2] == 0.0 and np.signbit(got[2]) and not np.signbit(got[3])
    assert np.isnan(got[4])
    assert abs(got[5] - math.erf(0.5)) <= 2 * np.spacing(math.erf(0.5))


@given(st.data())
def test_erf_is_odd_and_bounded(data: st.DataObject) -> None:
    x = data.draw(st.floats(-50, 50, allow_nan=False), label="x")
    got = arithmetic.erf(np.array([x, -x]))
    assert got[0] == -got[1] and -1.0 <= got[0] <= 1.0
    assert abs(got[0] - math.erf(x)) <= 16 * np.spacing(abs(math.erf(x)) or 1e-300)


def test_sigmoid_values() -> None:
    got = out(activation("SIGMOID", [0.0, 2.0, -1000.0, 1000.0, INF, -INF, NAN], "fp32"))
    assert got[0] == 0.5 and got[1] == 1.0 / (1.0 + math.exp(-2.0))
    assert got[2:6].tolist() == [0.0, 1.0, 1.0, 0.0]
    assert np.isnan(got[6])


def test_tanh_values() -> None:
    got = out(activation("TANH", [0.5, -0.0, INF, -INF, NAN], "bf16"))
    assert got[0] == math.tanh(0.5) and got[1] == 0.0 and np.signbit(got[1])
    assert got[2:4].tolist() == [1.0, -1.0] and np.isnan(got[4])


@pytest.mark.parametrize("op", ["CLAMP", "ERF", "SIGMOID", "TANH"])
def test_output_shape_must_match_the_input(op: str) -> None:
    attrs = {"min_val": 0.0, "max_val": 1.0} if op == "CLAMP" else {}
    got = activation(op, np.zeros((2, 3)), "fp32", out_shape=(2, 2), **attrs)
    # the engine checks declared argument shapes before the operator runs
    assert_rule(got, "error", OUTPUTS_CLAUSE)

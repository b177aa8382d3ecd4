"""Element-wise unary operators of the reference evaluator."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from reference_helpers import assert_rule

from conformance.builder import single_operator_graph
from reference.arguments import OUTPUTS_CLAUSE
from reference.engine import evaluate
from reference.outcome import Outcome

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
NAN, INF = np.nan, np.inf


def unary(
    op: str, x: object, dt: str, *, out_shape: tuple | None = None, **attrs: object
) -> Outcome:
    arr = np.asarray(x)
    name = "input" if op == "COS" else "input1"
    graph = single_operator_graph(
        op,
        [(name, arr.shape, dt)],
        [("output", arr.shape if out_shape is None else out_shape, dt)],
        attrs,
    )
    return evaluate(graph, {name: arr})


def out(outcome: Outcome) -> np.ndarray:
    assert outcome.kind == "valid", str(outcome)
    return outcome.outputs["output"]


def same(got: np.ndarray, want: list[float]) -> bool:
    """Equal as IEEE values including the sign of zero, NaN matching NaN."""
    w = np.asarray(want, np.float64)
    return bool(
        np.array_equal(got, w, equal_nan=True) and (np.signbit(got) == np.signbit(w))[w == 0].all()
    )


# The spec's floating-point behaviour tables: input -inf, +inf, -0, +0, NaN.
SPECIALS = [-INF, INF, -0.0, 0.0, NAN]
BEHAVIOUR = {
    "ABS": [INF, INF, 0.0, 0.0, NAN],
    "CEIL": [-INF, INF, -0.0, 0.0, NAN],
    "COS": [NAN, NAN, 1.0, 1.0, NAN],
    "EXP": [0.0, INF, 1.0, 1.0, NAN],
    "FLOOR": [-INF, INF, -0.0, 0.0, NAN],
    "LOG": [NAN, INF, -INF, -INF, NAN],
    "NEGATE": [INF, -INF, 0.0, -0.0, NAN],
    "RECIPROCAL": [-0.0, 0.0, -INF, INF, NAN],
    "RSQRT": [NAN, 0.0, -INF, INF, NAN],
}


@pytest.mark.parametrize("dt", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("op", sorted(BEHAVIOUR))
def test_floating_point_behaviour_tables(op: str, dt: str) -> None:
    attrs = {"input1_zp": 0, "output_zp": 0} if op == "NEGATE" else {}
    assert same(out(unary(op, SPECIALS, dt, **attrs)), BEHAVIOUR[op])


def test_ceil_floor_values_and_signed_zero() -> None:
    # ceil(-0.5) is -0.0 (the sign survives rounding up to zero); floor(0.5) is +0.0.
    x = [-0.5, 0.5, 2.5, -2.5, -0.0]
    assert same(out(unary("CEIL", x, "fp32")), [-0.0, 1.0, 3.0, -2.0, -0.0])
    assert same(out(unary("FLOOR", x, "fp32")), [-1.0, 0.0, 2.0, -3.0, -0.0])


def test_bf16_inputs() -> None:
    # 2.5 and 0.25 are bf16 values; the results are computed from them in fp64.
    x = np.array([2.5, 0.25], ml_dtypes.bfloat16)
    assert out(unary("CEIL", x, "bf16")).tolist() == [3.0, 1.0]
    assert out(unary("RECIPROCAL", x, "bf16")).tolist() == [0.4, 4.0]
    assert out(unary("RSQRT", x, "bf16")).tolist() == [1 / np.sqrt(2.5), 2.0]


def test_log_exp_values() -> None:
    assert same(out(unary("LOG", [0.0, -0.0, -1.0, 1.0], "fp32")), [-INF, -INF, NAN, 0.0])
    assert out(unary("EXP", [1.0], "fp32"))[0] == np.exp(1.0)
    assert out(unary("EXP", [100.0], "fp16"))[0] == np.exp(100.0)  # fp64, not yet inf


def test_reciprocal_of_signed_zero_and_values() -> None:
    assert same(out(unary("RECIPROCAL", [0.0, -0.0, 4.0, -0.5], "fp16")), [INF, -INF, 0.25, -2.0])


def test_rsqrt_values() -> None:
    assert same(out(unary("RSQRT", [4.0, 0.25, -1.0, -INF], "fp32")), [0.5, 2.0, NAN, NAN])


def test_cos_values() -> None:
    assert out(unary("COS", [np.pi], "fp32"))[0] == np.cos(np.float64(np.float32(np.pi)))


# -- integer operators ----------------------------------------------------------------


def test_abs_i32() -> None:
    assert out(unary("ABS", [-5, 0, 7, INT32_MIN + 1], "i32")).tolist() == [5, 0, 7, INT32_MAX]
    # 0 - INT_MIN = 2**31 leaves i32: apply_sub_s REQUIRE.
    clause = "apply_sub_s: c >= minimum_s<in_t>() && c <= maximum_s<in_t>()"
    assert_rule(unary("ABS", [1, INT32_MIN], "i32"), "unpredictable", clause)


def test_bitwise_not() -> None:
    assert out(unary("BITWISE_NOT", [0, 127, -128], "i8")).tolist() == [-1, -128, 127]
    assert out(unary("BITWISE_NOT", [INT32_MAX], "i32")).tolist() == [INT32_MIN]


def test_clz() -> None:
    # 0 has 32 leading zeros; 1 -> 31; 0x10000 (bit 16) -> 15; INT_MAX -> 1; any
    # negative value has its top bit set -> 0.
    x = [0, 1, 65536, INT32_MAX, -1, INT32_MIN]
    assert out(unary("CLZ", x, "i32")).tolist() == [32, 31, 15, 1, 0, 0]


def test_logical_not() -> None:
    assert out(unary("LOGICAL_NOT", [True, False], "bool")).tolist() == [False, True]


# -- NEGATE ---------------------------------------------------------------------------


def test_negate_i8_with_zero_points() -> None:
    # input1_zp = 3, output_zp = -5, in i32 (acc_t):
    # 10: 10 - 3 = 7; 0 - 7 = -7; -7 + (-5) = -12.
    # -128: -128 - 3 = -131; 131; 131 - 5 = 126.
    # 100: 100 - 3 = 97; -97; -97 - 5 = -102.
    got = unary("NEGATE", [10, -128, 100], "i8", input1_zp=3, output_zp=-5)
    assert out(got).tolist() == [-12, 126, -102]
    # Clipping to i8: -128 -> 128 -> 127; with input1_zp = -100: 100 + 100 = 200,
    # -200 + (-5) = -205 -> -128; with output_zp = 120: -(-20) + 120 = 140 -> 127.
    assert out(unary("NEGATE", [-128], "i8", input1_zp=0, output_zp=0)).tolist() == [127]
    assert out(unary("NEGATE", [100], "i8", input1_zp=-100, output_zp=-5)).tolist() == [-128]
    assert out(unary("NEGATE", [-20], "i8", input1_zp=0, output_zp=120)).tolist() == [127]


def test_negate_i16_i32() -> None:
    got = unary("NEGATE", [-32768, 5], "i16", input1_zp=0, output_zp=0)
    assert out(got).tolist() == [32767, -5]  # 32768 is clipped to the i16 range
    got = unary("NEGATE", [INT32_MAX, -3], "i32", input1_zp=0, output_zp=0)
    assert out(got).tolist() == [-INT32_MAX, 3]


@pytest.mark.parametrize("dt", ["i16", "i32", "fp16", "fp32"])
def test_negate_zero_point_error_ifs(dt: str) -> None:
    got = unary("NEGATE", [1], dt, input1_zp=1, output_zp=0)
    assert_rule(got, "error", "in_out_t != i8_t && input1_zp != 0")
    got = unary("NEGATE", [1], dt, input1_zp=0, output_zp=1)
    assert_rule(got, "error", "in_out_t != i8_t && output_zp != 0")


def test_negate_i32_min_is_unpredictable() -> None:
    # value = INT_MIN - 0; 0 - INT_MIN = 2**31 leaves acc_t (i32).
    got = unary("NEGATE", [0, INT32_MIN], "i32", input1_zp=0, output_zp=0)
    clause = "apply_sub_s (0 - value): c >= minimum_s<in_t>() && c <= maximum_s<in_t>()"
    assert_rule(got, "unpredictable", clause)


# -- shape ---------------------------------------------------------------------------

UNARY = [
    ("ABS", "i32", {}),
    ("BITWISE_NOT", "i8", {}),
    ("CEIL", "fp32", {}),
    ("CLZ", "i32", {}),
    ("COS", "fp32", {}),
    ("EXP", "fp16", {}),
    ("FLOOR", "bf16", {}),
    ("LOG", "fp32", {}),
    ("LOGICAL_NOT", "bool", {}),
    ("NEGATE", "i8", {"input1_zp": 0, "output_zp": 0}),
    ("RECIPROCAL", "fp32", {}),
    ("RSQRT", "fp32", {}),
]


@pytest.mark.parametrize(("op", "dt", "attrs"), UNARY, ids=[u[0] for u in UNARY])
def test_output_shape_must_match_the_input(op: str, dt: str, attrs: dict) -> None:
    got = unary(op, np.zeros((2, 3)), dt, out_shape=(3, 2), **attrs)
    # the engine checks declared argument shapes before the operator runs
    assert_rule(got, "error", OUTPUTS_CLAUSE)

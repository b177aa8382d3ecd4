"""Reference evaluator, TOSA 1.0 rules of the element-wise, activation and reduction
operators: nan_mode (MAXIMUM, MINIMUM, CLAMP, REDUCE_MAX, REDUCE_MIN), CLAMP's NaN-bound
ERROR_IF, MUL's [1] shift, NEGATE's zero-point inputs and their ERROR_IFs, the inputs
1.0 calls input1 (TABLE, COS, SIN), the logical shifts' per-type range, INTDIV's
quotient REQUIRE left to apply_intdiv_s, and POW's domain REQUIREs.

Every expected value is worked out by hand from the 1.0 pseudocode in the comment beside
it; where a rule is new in 1.0, the draft's behaviour is checked beside it."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_helpers import assert_rule, run_with_constants, valid

from conformance.spec import Spec, load_revision
from reference.ops.activation import CLAMP_NAN_BOUND_CLAUSE
from reference.ops.elementwise_binary import (
    POW_BASE_CLAUSE,
    POW_FINITE_CLAUSE,
    POW_NAN_CLAUSE,
    POW_ZERO_CLAUSE,
)
from reference.outcome import Outcome

SPEC = load_revision("1.0")
DRAFT = load_revision("2024-04-draft")
NAN = float("nan")
INF = float("inf")


# One operator of 1.0 (or of the draft, spec=DRAFT), parameters as constant inputs.
run = functools.partial(run_with_constants, spec=SPEC)


def same(got: np.ndarray, want: Sequence[float]) -> bool:
    """Equal as floats, NaN equal to NaN."""
    return bool(np.array_equal(np.asarray(got, np.float64), np.asarray(want), equal_nan=True))


# -- MAXIMUM / MINIMUM ------------------------------------------------------------------

A = [NAN, 1.0, NAN, -2.0]
B = [3.0, NAN, NAN, 5.0]


def binary(op: str, a: Any, b: Any, dt: str, **attrs: Any) -> np.ndarray:
    shape = np.broadcast_shapes(np.shape(a), np.shape(b))
    return valid(run(op, [("a", a, dt), ("b", b, dt)], shape, dt, **attrs))


@pytest.mark.parametrize("dt", ["fp32", "fp16", "bf16"])
def test_maximum_minimum_nan_modes(dt: str) -> None:
    # compare_nan: PROPAGATE -> NaN whenever either is NaN; IGNORE -> isNaN(a) ? b : a,
    # so (NaN, 3) -> 3, (1, NaN) -> 1, (NaN, NaN) -> NaN; no NaN: max(-2, 5) = 5,
    # min(-2, 5) = -2.
    assert same(binary("MAXIMUM", A, B, dt, nan_mode="PROPAGATE"), [NAN, NAN, NAN, 5.0])
    assert same(binary("MAXIMUM", A, B, dt, nan_mode="IGNORE"), [3.0, 1.0, NAN, 5.0])
    assert same(binary("MINIMUM", A, B, dt, nan_mode="PROPAGATE"), [NAN, NAN, NAN, -2.0])
    assert same(binary("MINIMUM", A, B, dt, nan_mode="IGNORE"), [3.0, 1.0, NAN, -2.0])


def test_maximum_ignore_broadcasts_and_keeps_the_zero_tie() -> None:
    # b = [NaN] broadcast against a = [-0, 2]: IGNORE keeps each a (isNaN(b)), -0 included.
    got = binary("MAXIMUM", [-0.0, 2.0], [NAN], "fp32", nan_mode="IGNORE")
    assert got.tolist() == [0.0, 2.0] and np.signbit(got[0])
    # No NaN: a >= b keeps a on a tie, so MAXIMUM(-0, +0) = -0 in either mode.
    got = binary("MAXIMUM", [-0.0], [0.0], "fp32", nan_mode="IGNORE")
    assert np.signbit(got[0])


def test_maximum_integers_ignore_nan_mode() -> None:
    # "ignored by non floating-point types": the same result in both modes.
    for mode in ("PROPAGATE", "IGNORE"):
        assert binary("MAXIMUM", [-5, 7], [3, 3], "i32", nan_mode=mode).tolist() == [3, 7]
        assert binary("MINIMUM", [-5, 7], [3, 3], "i32", nan_mode=mode).tolist() == [-5, 3]


VALUES = st.sampled_from([NAN, -1.0, 0.0, 2.5])


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_ignore_gives_nan_only_where_both_are(data: st.DataObject) -> None:
    pairs = data.draw(st.lists(st.tuples(VALUES, VALUES), min_size=1, max_size=6), label="pairs")
    op = data.draw(st.sampled_from(["MAXIMUM", "MINIMUM"]), label="operator")
    a, b = (np.array(v, np.float32) for v in zip(*pairs, strict=True))
    got = binary(op, a, b, "fp32", nan_mode="IGNORE")
    assert np.array_equal(np.isnan(got), np.isnan(a) & np.isnan(b))
    fn = np.fmax if op == "MAXIMUM" else np.fmin  # IEEE maxNum/minNum: the same numbers
    assert same(got, fn(a, b).tolist())


# -- CLAMP -------------------------------------------------------------------------------


def clamp(x: Any, dt: str, spec: Spec = SPEC, **attrs: Any) -> Outcome:
    return run("CLAMP", [("input", x, dt)], np.shape(x), dt, spec=spec, **attrs)


def test_clamp_nan_modes() -> None:
    # apply_clip_s: max(value, min_val) then min(., max_val).  NaN input, PROPAGATE:
    # NaN; IGNORE: max(NaN, -1) = -1 (the non-NaN), then min(-1, 4) = -1 = min_val.
    x = [NAN, -3.0, 2.0, 9.0]
    got = valid(clamp(x, "fp32", min_val=-1.0, max_val=4.0, nan_mode="PROPAGATE"))
    assert same(got, [NAN, -1.0, 2.0, 4.0])
    got = valid(clamp(x, "fp32", min_val=-1.0, max_val=4.0, nan_mode="IGNORE"))
    assert same(got, [-1.0, -1.0, 2.0, 4.0])


@pytest.mark.parametrize("bounds", [(NAN, 1.0), (0.0, NAN), (NAN, NAN)])
def test_clamp_nan_bound_is_an_error_in_1_0(bounds: tuple[float, float]) -> None:
    lo, hi = bounds
    # max_val < min_val is false with a NaN, so the new ERROR_IF is the one that fires.
    got = clamp([0.0], "fp16", min_val=lo, max_val=hi, nan_mode="PROPAGATE")
    assert_rule(got, "ERROR_IF", CLAMP_NAN_BOUND_CLAUSE)
    # Before any element is read: an empty tensor is an error too.
    empty = np.zeros((0,), np.float32)
    got = clamp(empty, "fp32", min_val=lo, max_val=hi, nan_mode="IGNORE")
    assert_rule(got, "ERROR_IF", CLAMP_NAN_BOUND_CLAUSE)
    # The draft has no such ERROR_IF: apply_clip_s's REQUIRE(min_val <= max_val) fails.
    assert_rule(
        clamp([0.0], "fp32", DRAFT, min_val=lo, max_val=hi), "REQUIRE", "min_val <= max_val"
    )


def test_clamp_reversed_bounds_still_come_first() -> None:
    got = clamp([0.0], "fp32", min_val=2.0, max_val=1.0, nan_mode="IGNORE")
    assert_rule(got, "ERROR_IF", "max_val < min_val")


# -- REDUCE_MAX / REDUCE_MIN -------------------------------------------------------------


def reduce(op: str, x: Any, axis: int, dt: str = "fp32", **attrs: Any) -> np.ndarray:
    x = np.asarray(x)
    out = tuple(1 if i == axis else d for i, d in enumerate(x.shape))
    return valid(run(op, [("input", x, dt)], out, dt, axis=axis, **attrs))


ROWS = [[1.0, NAN, 3.0], [NAN, NAN, NAN], [-2.0, -5.0, NAN], [NAN, -INF, NAN]]


def test_reduce_max_min_nan_modes() -> None:
    # PROPAGATE: acc = minimum_s, apply_max_s gives NaN at the first NaN and keeps it.
    # IGNORE: acc starts NaN; the first number replaces it (compare_nan returns b) and
    # later NaNs keep it (returns a): the extreme of the numbers; a row of NaNs stays NaN.
    assert same(reduce("REDUCE_MAX", ROWS, 1, nan_mode="PROPAGATE").ravel(), [NAN] * 4)
    assert same(reduce("REDUCE_MAX", ROWS, 1, nan_mode="IGNORE").ravel(), [3, NAN, -2, -INF])
    assert same(reduce("REDUCE_MIN", ROWS, 1, nan_mode="PROPAGATE").ravel(), [NAN] * 4)
    assert same(reduce("REDUCE_MIN", ROWS, 1, nan_mode="IGNORE").ravel(), [1, NAN, -5, -INF])


def test_reduce_ignore_along_the_first_axis_and_zero_ties() -> None:
    # Columns of [[NaN, -0], [+0, NaN], [NaN, +0]]: max IGNORE of column 0 is +0 (the only
    # number); column 1 holds -0 then +0, a >= b keeps the first: -0.  MIN keeps the
    # last zero on a tie (a < b false takes b): column 1 -> +0.
    x = [[NAN, -0.0], [0.0, NAN], [NAN, 0.0]]
    got = reduce("REDUCE_MAX", x, 0, nan_mode="IGNORE").ravel()
    assert got.tolist() == [0.0, 0.0] and not np.signbit(got[0]) and np.signbit(got[1])
    got = reduce("REDUCE_MIN", x, 0, nan_mode="IGNORE").ravel()
    assert got.tolist() == [0.0, 0.0] and not np.signbit(got[1])


def test_reduce_integers_ignore_nan_mode() -> None:
    for mode in ("PROPAGATE", "IGNORE"):
        assert reduce("REDUCE_MAX", [[3, -7, 5]], 1, "i8", nan_mode=mode).ravel().tolist() == [5]
        assert reduce("REDUCE_MIN", [[3, -7, 5]], 1, "i16", nan_mode=mode).ravel().tolist() == [-7]


# -- MUL -------------------------------------------------------------------------------


def mul(a: Any, b: Any, dt: str, shift: Any, out_dt: str = "i32") -> Outcome:
    shape = np.broadcast_shapes(np.shape(a), np.shape(b))
    return run(
        "MUL", [("a", a, dt), ("b", b, dt)], shape, out_dt, constants=[("shift", shift, "i8")]
    )


def test_mul_shift_is_a_one_element_input() -> None:
    # i32, shift 2: (7 * 3 + 2) >> 2 = 23 >> 2 = 5; (-7 * 3 + 2) >> 2 = -19 >> 2 = -5.
    got = valid(mul(np.array([7, -7], np.int32), np.array([3, 3], np.int32), "i32", [2]))
    assert got.tolist() == [5, -5]
    # i8 (out_t i32): 100 * 100 = 10000, computed in out_t; shift 0.
    got = valid(mul(np.array([100], np.int8), np.array([100], np.int8), "i8", [0]))
    assert got.tolist() == [10000]


def test_mul_shift_of_rank_0_breaks_the_argument_declaration() -> None:
    got = mul(np.array([1], np.int32), np.array([1], np.int32), "i32", np.int8(1))
    assert got.kind == "error" and got.rule is not None and "shift" in got.rule.detail


def test_mul_nonzero_shift_outside_i32_is_unpredictable() -> None:
    got = mul(np.array([1], np.int16), np.array([1], np.int16), "i16", [1])
    assert_rule(got, "REQUIRE", "is_same<in_t,int32_t>() || shift == 0")


# -- NEGATE ----------------------------------------------------------------------------


def negate(x: Any, dt: str, in_zp: Any, out_zp: Any) -> Outcome:
    return run(
        "NEGATE",
        [("input1", x, dt)],
        np.shape(x),
        dt,
        constants=[("input1_zp", [in_zp], dt), ("output_zp", [out_zp], dt)],
    )


def test_negate_zero_points_are_inputs() -> None:
    # i8: -(x - in_zp) + out_zp in i32, clipped to i8: x = 10, in 3, out -5: -7 - 5 = -12;
    # x = -128: 131 - 5 = 126; x = 127, in -128: -255 - 5 = -260 -> -128.
    got = valid(negate(np.array([10, -128], np.int8), "i8", 3, -5))
    assert got.tolist() == [-12, 126]
    assert valid(negate(np.array([127], np.int8), "i8", -128, -5)).tolist() == [-128]


@pytest.mark.parametrize("dt", ["i16", "i32", "fp32"])
def test_negate_zero_points_only_for_i8(dt: str) -> None:
    x = np.array([1], dtype=np.float32 if dt == "fp32" else None)
    got = negate(x, dt, 1, 0)
    assert_rule(got, "ERROR_IF", "!is_same<in_out_t,i8_t>() && input1_zp != 0")
    got = negate(x, dt, 0, 1)
    assert_rule(got, "ERROR_IF", "!is_same<in_out_t,i8_t>() && output_zp != 0")


# -- TABLE, COS, SIN: input1 -------------------------------------------------------------


def test_table_reads_input1() -> None:
    # i8: table[x + 128]; table[i] = i - 128 + 1 gives x + 1.
    table = (np.arange(256) - 127).astype(np.int8)
    x = np.array([-128, 0, 126], np.int8)
    got = run("TABLE", [("input1", x, "i8")], x.shape, "i8", constants=[("table", table, "i8")])
    assert valid(got).tolist() == [-127, 1, 127]


@pytest.mark.parametrize(("op", "want"), [("COS", [1.0, -1.0]), ("SIN", [0.0, 1.0])])
def test_cos_sin_read_input1(op: str, want: list[float]) -> None:
    # cos(0) = 1, cos(pi) = -1; sin(0) = 0, sin(pi / 2) = 1 (within fp64 rounding).
    x = np.array([0.0, np.pi if op == "COS" else np.pi / 2], np.float32)
    got = valid(run(op, [("input1", x, "fp32")], x.shape, "fp32"))
    assert np.allclose(got, want, atol=1e-6)


# -- shifts --------------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["LOGICAL_LEFT_SHIFT", "LOGICAL_RIGHT_SHIFT"])
@pytest.mark.parametrize(("dt", "np_dt", "bits"), [("i8", np.int8, 8), ("i16", np.int16, 16)])
def test_logical_shift_range_is_the_types(op: str, dt: str, np_dt: Any, bits: int) -> None:
    a = np.array([1], np_dt)
    # The top shift of the type is fine: i8 1 << 7 = 0x80 = -128; 1 >> 7 = 0.
    top = valid(run(op, [("a", a, dt), ("b", np.array([bits - 1], np_dt), dt)], (1,), dt))
    assert top.tolist() == ([-(2 ** (bits - 1))] if op == "LOGICAL_LEFT_SHIFT" else [0])
    # One more is outside 1.0's per-type REQUIRE (the draft allows up to 31).
    b = np.array([bits], np_dt)
    clause = f"is_same<in_out_t,{dt}_t>() && 0 <= value2 && value2 <= {bits - 1}"
    assert_rule(run(op, [("a", a, dt), ("b", b, dt)], (1,), dt), "REQUIRE", clause)
    draft = run(op, [("a", a, dt), ("b", b, dt)], (1,), dt, spec=DRAFT)
    assert draft.kind == "valid"


def test_arithmetic_right_shift_clause_spelled_as_1_0() -> None:
    a, b = np.array([5], np.int8), np.array([8], np.int8)
    got = run("ARITHMETIC_RIGHT_SHIFT", [("a", a, "i8"), ("b", b, "i8")], (1,), "i8", round=True)
    assert_rule(got, "REQUIRE", "is_same<in_out_t,i8_t>() && 0 <= value2 && value2 <= 7")
    # round: 5 >> 1 = 2, the bit shifted out is 1: 3; -5 >> 1 = -3, bit 1: -2.
    a, b = np.array([5, -5], np.int8), np.array([1, 1], np.int8)
    got = run("ARITHMETIC_RIGHT_SHIFT", [("a", a, "i8"), ("b", b, "i8")], (2,), "i8", round=True)
    assert valid(got).tolist() == [3, -2]


# -- INTDIV ------------------------------------------------------------------------------


def test_intdiv_overflow_is_apply_intdiv_s_require() -> None:
    a, b = np.array([-(2**31)], np.int32), np.array([-1], np.int32)
    got = run("INTDIV", [("a", a, "i32"), ("b", b, "i32")], (1,), "i32")
    assert_rule(got, "REQUIRE", "apply_intdiv_s: c >= minimum_s<in_t>() && c <= maximum_s<in_t>()")
    # -7 / 2 truncates toward zero: -3.
    a, b = np.array([-7], np.int32), np.array([2], np.int32)
    assert valid(run("INTDIV", [("a", a, "i32"), ("b", b, "i32")], (1,), "i32")).tolist() == [-3]


# -- POW ---------------------------------------------------------------------------------


def pow_(x: Any, y: Any, spec: Spec = SPEC) -> Outcome:
    x, y = np.asarray(x, np.float32), np.asarray(y, np.float32)
    return run("POW", [("a", x, "fp32"), ("b", y, "fp32")], x.shape, "fp32", spec=spec)


@pytest.mark.parametrize(
    ("x", "y", "clause"),
    [
        (-2.0, 2.0, POW_BASE_CLAUSE),  # a negative base, even with an integral exponent
        (0.0, 0.0, POW_ZERO_CLAUSE),  # 0 ** 0
        (0.0, -1.0, POW_ZERO_CLAUSE),  # 0 ** -1
        (NAN, 1.0, POW_BASE_CLAUSE),  # NaN >= 0 is false: the first REQUIRE fires
        (2.0, NAN, POW_NAN_CLAUSE),
        (INF, 1.0, POW_FINITE_CLAUSE),
        (2.0, -INF, POW_FINITE_CLAUSE),
    ],
)
def test_pow_domain_requires(x: float, y: float, clause: str) -> None:
    assert_rule(pow_([1.0, x], [1.0, y]), "REQUIRE", clause, "at index [1]")
    # The draft has no REQUIRE: the result is defined (NaN, 1, inf ...) and valid.
    assert pow_([1.0, x], [1.0, y], DRAFT).kind == "valid"


def test_pow_values_in_the_domain() -> None:
    # 2 ** 3 = 8, 0 ** 2 = 0 (x == 0, y > 0), 4 ** 0.5 = 2, 5 ** 0 = 1 (x > 0, y == 0).
    got = valid(pow_([2.0, 0.0, 4.0, 5.0], [3.0, 2.0, 0.5, 0.0]))
    assert got.tolist() == [8.0, 0.0, 2.0, 1.0]

"""Reference evaluator, TOSA 1.1's 64-bit integer modes (EXT-INT64) and the other 1.1
rules of the element-wise, comparison, reduction and data operators: apply_add_s /
apply_sub_s's sign-test REQUIREs (exact for i64, where int64 has no room for the sum),
MUL's low 64 bits, INTDIV's INT64_MIN / -1 REQUIRE, the shifts' 0..63 range, CLZ's
64-bit count, ABS and NEGATE of INT64_MIN, REDUCE_SUM's running sums, ARITHMETIC_RIGHT_
SHIFT's round (valid in the reference, which implements PRO-INT), the is_a_NaN spelling,
and the data operators' "64-bit" modes.

Every expected value is worked out by hand from the 1.1 pseudocode in the comment beside
it; where a clause changed from 1.0, 1.0's is checked beside it."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
from reference_helpers import assert_rule, run_with_constants, valid

from conformance.spec import load_revision
from reference import arithmetic as ar
from reference.ops.activation import CLAMP_NAN_BOUND_CLAUSE, CLAMP_NAN_BOUND_CLAUSE_1_1
from reference.ops.elementwise_binary import INTDIV_INT64_MIN_CLAUSE, POW_NAN_CLAUSE_1_1
from reference.ops.reduction import SUM_ABOVE_CLAUSE, SUM_BELOW_CLAUSE, SUM_RANGE_CLAUSE
from reference.outcome import Outcome
from reference.pseudocode_revisions import profiles_needed

SPEC = load_revision("1.1-draft")
SPEC_1_0 = load_revision("1.0")
MAX = (1 << 63) - 1
MIN = -(1 << 63)

run = functools.partial(run_with_constants, spec=SPEC)


def binary(op: str, a: Any, b: Any, dt: str = "i64", spec: Any = SPEC, **attrs: Any) -> Outcome:
    a, b = np.asarray(a), np.asarray(b)
    shape = np.broadcast_shapes(a.shape, b.shape)
    out = "bool" if op in ("EQUAL", "GREATER", "GREATER_EQUAL") else dt
    return run_with_constants(op, [("a", a, dt), ("b", b, dt)], shape, out, spec=spec, **attrs)


def i64(values: Any) -> np.ndarray:
    return np.asarray(values, np.int64)


def same(got: np.ndarray, want: Any) -> None:
    assert np.array_equal(np.asarray(got).astype(np.int64), i64(want)), (got, want)


# -- ADD / SUB: the sign tests -----------------------------------------------------------


def test_add_i64_is_exact_to_the_ends() -> None:
    # MAX + MIN = -1; MAX + 0 = MAX; MIN + 0 = MIN; (2**62) + (2**62 - 1) = MAX
    got = valid(binary("ADD", [MAX, MAX, MIN, 1 << 62], [MIN, 0, 0, (1 << 62) - 1]))
    same(got, [-1, MAX, MIN, MAX])


@pytest.mark.parametrize(
    ("a", "b", "clause"),
    [
        # b > 0 and a > MAX - b: MAX + 1 (int64 would wrap to MIN)
        (MAX, 1, "apply_add_s: " + ar.ADD_ABOVE_CLAUSE),
        # b < 0 and a < MIN - b: MIN + -1
        (MIN, -1, "apply_add_s: " + ar.ADD_BELOW_CLAUSE),
        # 2**62 + 2**62 = 2**63, one past MAX
        (1 << 62, 1 << 62, "apply_add_s: " + ar.ADD_ABOVE_CLAUSE),
    ],
)
def test_add_i64_overflow_is_unpredictable(a: int, b: int, clause: str) -> None:
    assert_rule(binary("ADD", [0, a], [0, b]), "REQUIRE", clause, "index [1]")


@pytest.mark.parametrize(
    ("a", "b", "clause"),
    [
        # b > 0 and a < MIN + b: MIN - 1
        (MIN, 1, "apply_sub_s: " + ar.SUB_BELOW_CLAUSE),
        # b < 0 and a > MAX + b: 0 - MIN = 2**63
        (0, MIN, "apply_sub_s: " + ar.SUB_ABOVE_CLAUSE),
        # -2 - MAX = MIN - 1
        (-2, MAX, "apply_sub_s: " + ar.SUB_BELOW_CLAUSE),
    ],
)
def test_sub_i64_overflow_is_unpredictable(a: int, b: int, clause: str) -> None:
    assert_rule(binary("SUB", [a], [b]), "REQUIRE", clause)


def test_sub_i64_exact_at_the_ends() -> None:
    # -1 - MAX = MIN; MAX - MAX = 0; MIN - (-1) = MIN + 1; 0 - (MIN + 1) = MAX
    got = valid(binary("SUB", [-1, MAX, MIN, 0], [MAX, MAX, -1, MIN + 1]))
    same(got, [MIN, 0, MIN + 1, MAX])


def test_i32_add_keeps_its_1_0_clause_and_gets_1_1_s() -> None:
    # i32: 2**31 - 1 + 1 leaves the type in both; 1.0 names the range test, 1.1 the sign
    # test that fails (b > 0 and a > MAX_I32 - b).
    big = [(1 << 31) - 1]
    assert_rule(
        binary("ADD", big, [1], "i32", SPEC_1_0), "REQUIRE", "apply_add_s: " + ar.RANGE_CLAUSE
    )
    assert_rule(binary("ADD", big, [1], "i32"), "REQUIRE", "apply_add_s: " + ar.ADD_ABOVE_CLAUSE)


# -- MUL, INTDIV, the shifts -------------------------------------------------------------


def mul(a: Any, b: Any) -> np.ndarray:
    a = np.asarray(a)
    return valid(
        run(
            "MUL",
            [("a", a, "i64"), ("b", np.asarray(b), "i64")],
            a.shape,
            "i64",
            constants=[("shift", [0], "i8")],
        )
    )


def test_mul_i64_keeps_the_low_64_bits() -> None:
    # 2**40 * 2**40 = 2**80: low 64 bits 0; MAX * 2 = 2**64 - 2: -2; 3 * 2**31 = 6442450944
    # (past i32, inside i64); MIN * -1 = 2**63: MIN; -5 * 7 = -35
    got = mul([1 << 40, MAX, 3, MIN, -5], [1 << 40, 2, 1 << 31, -1, 7])
    same(got, [0, -2, 6442450944, MIN, -35])


def test_intdiv_i64_min_by_minus_one_is_unpredictable() -> None:
    # apply_intdiv_s (1.1): REQUIRE(!(a == INT64_MIN && b == -1)), before the range test
    assert_rule(binary("INTDIV", [7, MIN], [2, -1]), "REQUIRE", INTDIV_INT64_MIN_CLAUSE, "[1]")
    # truncation toward zero at the ends: MIN / 2 = -2**62, MAX / -1 = -MAX, -7 / 2 = -3
    got = valid(binary("INTDIV", [MIN, MAX, -7], [2, -1, 2]))
    same(got, [-(1 << 62), -MAX, -3])


def test_intdiv_i32_broadcast_operand() -> None:
    # A broadcast i32 operand (a zero-stride view) compared with INT64_MIN as a Python
    # int crashed numpy 2.1 (a segfault in generate); 7 / 2 = 3, -7 / 2 = -3 (toward 0).
    a = np.array([[7, -7]], np.int32)
    b = np.full((3, 2), 2, np.int32)
    got = valid(binary("INTDIV", a, b, "i32"))
    np.testing.assert_array_equal(got, [[3, -3]] * 3)


def test_intdiv_i32_min_by_minus_one_fails_the_range_test_in_1_1_too() -> None:
    # INT32_MIN / -1 = 2**31: a_i64 is not INT64_MIN, so the range REQUIRE fails
    got = binary("INTDIV", [-(1 << 31)], [-1], "i32")
    assert_rule(got, "REQUIRE", "apply_intdiv_s: c >= minimum_s<in_t>() && c <= maximum_s<in_t>()")


def test_shifts_i64_use_the_whole_word() -> None:
    # LLS: 1 << 63 = MIN; -1 << 1 = -2; 3 << 62 = 2**63 + 2**62 -> low 64 bits -2**62
    same(valid(binary("LOGICAL_LEFT_SHIFT", [1, -1, 3], [63, 1, 62])), [MIN, -2, -(1 << 62)])
    # LRS: zeros come in: -1 >> 1 = MAX; MIN >> 63 = 1; -1 >> 0 = -1
    same(valid(binary("LOGICAL_RIGHT_SHIFT", [-1, MIN, -1], [1, 63, 0])), [MAX, 1, -1])
    # ARS: MIN >> 63 = -1; MAX >> 62 = 1
    same(valid(binary("ARITHMETIC_RIGHT_SHIFT", [MIN, MAX], [63, 62], round=False)), [-1, 1])


@pytest.mark.parametrize(
    "op", ["LOGICAL_LEFT_SHIFT", "LOGICAL_RIGHT_SHIFT", "ARITHMETIC_RIGHT_SHIFT"]
)
def test_shift_i64_of_64_is_unpredictable(op: str) -> None:
    clause = "is_same<in_out_t,i64_t>() && 0 <= value2 && value2 <= 63"
    attrs = {"round": False} if op == "ARITHMETIC_RIGHT_SHIFT" else {}
    assert_rule(binary(op, [1, 1], [63, 64], **attrs), "REQUIRE", clause, "index [1]")


def test_ars_i64_round_is_valid_in_the_reference_and_needs_pro_int() -> None:
    # round: (value1 >> value2) + bit value2 - 1 of value1: MAX >> 1 = 2**62 - 1, the bit
    # shifted out is 1: 2**62; -3 >> 1 = -2, bit 0 of -3 is 1: -1; 5 >> 0 = 5 (no round)
    same(
        valid(binary("ARITHMETIC_RIGHT_SHIFT", [MAX, -3, 5], [1, 1, 0], round=True)),
        [1 << 62, -1, 5],
    )
    # ERROR_IF(round && !PRO-INT): the vector needs PRO-INT on top of EXT-INT64 (1.1 only)
    assert profiles_needed("1.1-draft", "ARITHMETIC_RIGHT_SHIFT", {"round": True}) == {"PRO-INT"}
    assert not profiles_needed("1.1-draft", "ARITHMETIC_RIGHT_SHIFT", {"round": False})
    assert not profiles_needed("1.0", "ARITHMETIC_RIGHT_SHIFT", {"round": True})


def test_bitwise_min_max_compare_select_i64() -> None:
    # MAX & MIN = 0; MAX | MIN = -1; MAX ^ -1 = MIN
    same(valid(binary("BITWISE_AND", [MAX], [MIN])), [0])
    same(valid(binary("BITWISE_OR", [MAX], [MIN])), [-1])
    same(valid(binary("BITWISE_XOR", [MAX], [-1])), [MIN])
    # MAXIMUM / MINIMUM of the ends; MAX and MAX - 1 differ although float64 holds both
    # as 2**63
    same(valid(binary("MAXIMUM", [MIN, MAX - 1], [MAX, MAX], nan_mode="PROPAGATE")), [MAX, MAX])
    same(valid(binary("MINIMUM", [MIN, MAX - 1], [MAX, MAX], nan_mode="PROPAGATE")), [MIN, MAX - 1])
    # EQUAL / GREATER: MAX - 1 vs MAX are apart (not so in float64)
    assert valid(binary("EQUAL", [MAX - 1, MIN], [MAX, MIN])).tolist() == [False, True]
    assert valid(binary("GREATER", [MAX, MIN + 1], [MAX - 1, MIN])).tolist() == [True, True]
    assert valid(binary("GREATER_EQUAL", [MAX - 1], [MAX])).tolist() == [False]


# -- unary: ABS, NEGATE, CLZ, BITWISE_NOT ------------------------------------------------


def unary(op: str, x: Any, **attrs: Any) -> Outcome:
    x = np.asarray(x)
    return run(op, [("x", x, "i64")], x.shape, "i64", **attrs)


def test_abs_i64() -> None:
    # value1 < 0: 0 - value1; MIN + 1 -> MAX
    same(valid(unary("ABS", [MIN + 1, -5, 0, MAX])), [MAX, 5, 0, MAX])
    # 0 - MIN leaves i64: apply_sub_s's second sign test (b < 0 and a > MAX + b)
    assert_rule(unary("ABS", [1, MIN]), "REQUIRE", "apply_sub_s: " + ar.SUB_ABOVE_CLAUSE, "[1]")


def negate(x: Any) -> Outcome:
    x = np.asarray(x)
    return run(
        "NEGATE",
        [("x", x, "i64")],
        x.shape,
        "i64",
        constants=[("input1_zp", [0], "i64"), ("output_zp", [0], "i64")],
    )


def test_negate_i64() -> None:
    # acc_t = i64: 0 - (x - 0) + 0
    same(valid(negate([MAX, MIN + 1, 7])), [MIN + 1, MAX, -7])
    clause = "apply_sub_s (0 - value): " + ar.SUB_ABOVE_CLAUSE
    assert_rule(negate([MIN]), "REQUIRE", clause)


def test_clz_i64_counts_64_bits() -> None:
    # 0 -> 64; 1 -> 63; 2**40 -> 23; MAX -> 1; negative -> 0; 2**53 + 1 -> 10 (float64
    # would round it to 2**53, same count) and 2**63 - 2**10 -> 1 (float64 rounds it up to
    # 2**63, whose count would be 0)
    got = valid(unary("CLZ", [0, 1, 1 << 40, MAX, -1, (1 << 53) + 1, (1 << 63) - (1 << 10)]))
    same(got, [64, 63, 23, 1, 0, 10, 1])


def test_bitwise_not_i64() -> None:
    same(valid(unary("BITWISE_NOT", [0, MAX, MIN])), [-1, MIN, MAX])


# -- REDUCE_SUM --------------------------------------------------------------------------


def reduce(op: str, x: Any, axis: int, dt: str = "i64", spec: Any = SPEC) -> Outcome:
    x = np.asarray(x)
    out = tuple(1 if i == axis else d for i, d in enumerate(x.shape))
    attrs: dict[str, Any] = {"nan_mode": "PROPAGATE"} if op != "REDUCE_SUM" else {}
    return run_with_constants(op, [("x", x, dt)], out, dt, spec=spec, axis=axis, **attrs)


def test_reduce_sum_i64_running_sums() -> None:
    # MAX + MIN + 5 = 4 (each running sum fits); 2**53 + 1 = 9007199254740993 exactly
    same(valid(reduce("REDUCE_SUM", [[MAX, 1 << 53], [MIN, 1], [5, 0]], 0)), [[4, (1 << 53) + 1]])


def test_reduce_sum_i64_overflow_names_the_first_step() -> None:
    # [MAX, 1, MIN]: the total MAX + 1 + MIN = 0 fits, the running sum MAX + 1 does not:
    # the first sign test (a positive term) at term 1
    assert_rule(reduce("REDUCE_SUM", [MAX, 1, MIN], 0), "REQUIRE", SUM_ABOVE_CLAUSE, "term 1")
    # rows in loop order: row 0 [1, 2] is fine, row 1 [MIN, -1] fails at term 1 (negative)
    got = reduce("REDUCE_SUM", [[1, 2], [MIN, -1]], 1)
    assert_rule(got, "REQUIRE", SUM_BELOW_CLAUSE, "term 1")


def test_reduce_sum_i32_clause_by_revision() -> None:
    x = [(1 << 31) - 1, 1]
    assert_rule(reduce("REDUCE_SUM", x, 0, "i32", SPEC_1_0), "REQUIRE", SUM_RANGE_CLAUSE)
    assert_rule(reduce("REDUCE_SUM", x, 0, "i32"), "REQUIRE", SUM_ABOVE_CLAUSE, "term 1")


def test_reduce_max_min_i64() -> None:
    # MAX - 1 and MAX are one apart (both 2**63 in float64)
    same(valid(reduce("REDUCE_MAX", [MAX - 1, MAX, MIN], 0)), [MAX])
    same(valid(reduce("REDUCE_MIN", [MIN + 1, MIN, MAX], 0)), [MIN])


# -- data layout and data nodes ----------------------------------------------------------


def test_data_operators_move_i64_bits() -> None:
    x = i64([[MAX, MIN, 1], [-1, MAX - 1, MIN + 1]])
    # TRANSPOSE perms [1, 0]
    same(valid(run("TRANSPOSE", [("x", x, "i64")], (3, 2), "i64", perms=[1, 0])), x.T)
    # REVERSE axis 1
    same(valid(run("REVERSE", [("x", x, "i64")], (2, 3), "i64", axis=1)), x[:, ::-1])
    # IDENTITY
    same(valid(run("IDENTITY", [("x", x, "i64")], (2, 3), "i64")), x)
    # CONST holds the ends exactly
    got = valid(run("CONST", [], (2, 3), "i64", values=x))
    same(got, x)


# -- the is_a_NaN spelling ---------------------------------------------------------------


def test_clamp_nan_bound_clause_is_spelt_is_a_nan_in_1_1() -> None:
    x = [("x", np.asarray([1.0], np.float32), "fp32")]
    attrs = {"min_val": float("nan"), "max_val": 1.0, "nan_mode": "PROPAGATE"}
    got = run("CLAMP", x, (1,), "fp32", **attrs)
    assert_rule(got, "ERROR_IF", CLAMP_NAN_BOUND_CLAUSE_1_1)
    got = run_with_constants("CLAMP", x, (1,), "fp32", spec=SPEC_1_0, **attrs)
    assert_rule(got, "ERROR_IF", CLAMP_NAN_BOUND_CLAUSE)


def test_pow_nan_clause_is_spelt_is_a_nan_in_1_1() -> None:
    # 2 ** NaN: the base and zero tests pass (2 > 0), the NaN test fails
    got = binary("POW", [2.0], [float("nan")], "fp32")
    assert_rule(got, "REQUIRE", POW_NAN_CLAUSE_1_1)

"""Element-wise binary operators of the reference evaluator, plus the test that every
mode of every element-wise operator (all four groups) evaluates."""

from __future__ import annotations

from collections.abc import Sequence

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reference_helpers import assert_rule

from conformance import dtypes
from conformance.builder import single_operator_graph
from conformance.spec import Argument, OperatorSpec, TypeSupport, load_spec
from reference.engine import evaluate
from reference.outcome import Outcome

SPEC = load_spec()
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
# INTDIV.tosac: the quotient of int32 operands must fit (only -2**31 / -1 overflows).
INTDIV_OVERFLOW = (
    "static_cast<int64_t>(value1) / static_cast<int64_t>(value2) <= maximum_s<in_out_t>()"
)
Input = tuple[str, object, str]  # tensor name, values, element type


def run(
    op: str,
    inputs: Sequence[Input],
    out_dtype: str,
    *,
    attrs: dict[str, object] | None = None,
    out_shape: Sequence[int] | None = None,
    constants: Sequence[str] = (),
) -> Outcome:
    """Evaluate one operator; the output shape defaults to numpy's broadcast of the
    non-constant inputs (the same as TOSA's when the ranks agree)."""
    arrays = [(n, np.asarray(v), dt) for n, v, dt in inputs]
    if out_shape is None:
        out_shape = np.broadcast_shapes(*(a.shape for n, a, _ in arrays if n not in constants))
    graph = single_operator_graph(
        op,
        [(n, a.shape, dt) for n, a, dt in arrays],
        [("output", tuple(out_shape), out_dtype)],
        attrs,
        constants={n: a for n, a, _ in arrays if n in constants},
    )
    return evaluate(graph, {n: a for n, a, _ in arrays if n not in constants})


def out(outcome: Outcome) -> np.ndarray:
    assert outcome.kind == "valid", str(outcome)
    return outcome.outputs["output"]


def binary(
    op: str, a: object, b: object, dt: str, out_dt: str | None = None, **attrs: object
) -> Outcome:
    return run(op, [("input1", a, dt), ("input2", b, dt)], out_dt or dt, attrs=attrs)


# -- ADD / SUB --------------------------------------------------------------------------


def test_add_i32_broadcasts_a_size_one_axis() -> None:
    # [[0,1,2],[3,4,5]] + [[10,20,30]] row by row.
    got = binary("ADD", np.arange(6).reshape(2, 3), [[10, 20, 30]], "i32")
    assert out(got).tolist() == [[10, 21, 32], [13, 24, 35]]


def test_add_and_sub_i32_overflow_are_unpredictable() -> None:
    # INT32_MAX + 1 and INT32_MIN - 1 leave the i32 range: apply_add_s / apply_sub_s REQUIRE.
    in_range = "c >= minimum_s<in_t>() && c <= maximum_s<in_t>()"
    add = binary("ADD", [INT32_MAX, 0], [1, 1], "i32")
    assert_rule(add, "REQUIRE", f"apply_add_s: {in_range}", "value1=2147483647, value2=1")
    assert_rule(binary("SUB", [INT32_MIN], [1], "i32"), "REQUIRE", f"apply_sub_s: {in_range}")
    assert out(binary("SUB", [INT32_MIN + 1], [1], "i32")).tolist() == [INT32_MIN]


def test_float_add_sub_keep_ieee_special_values_in_fp64() -> None:
    inf = np.inf
    got = out(binary("ADD", [inf, 1e30, 1.0], [-inf, 1e30, 2.0**-30], "fp32"))
    # inf + -inf is NaN; the fp64 result is kept exact (1 + 2**-30 is not an fp32 value).
    assert np.isnan(got[0]) and got[1] == np.float64(np.float32(1e30)) * 2
    assert got[2] == 1.0 + 2.0**-30
    assert np.isnan(out(binary("SUB", [inf], [inf], "fp16")))[0]


def test_add_bf16_inputs() -> None:
    # 1 + 2**-8: both bf16 values; the exact sum 1.00390625 needs 8 fraction bits, so it is
    # only the fp64 result (bf16 would round it), as the engine keeps fp64 outputs.
    got = out(binary("ADD", np.array([1.0, 3.0], ml_dtypes.bfloat16), [2.0**-8, 0.5], "bf16"))
    assert got.tolist() == [1.00390625, 3.5]


# -- broadcast ERROR_IFs, for every binary operator ----------------------------------------

BINARY_OPS = (
    "ADD",
    "ARITHMETIC_RIGHT_SHIFT",
    "BITWISE_AND",
    "BITWISE_OR",
    "BITWISE_XOR",
    "INTDIV",
    "LOGICAL_AND",
    "LOGICAL_LEFT_SHIFT",
    "LOGICAL_OR",
    "LOGICAL_RIGHT_SHIFT",
    "LOGICAL_XOR",
    "MAXIMUM",
    "MINIMUM",
    "MUL",
    "POW",
    "SUB",
)


def _first_mode_inputs(op: str, s1: tuple, s2: tuple) -> tuple[list[Input], str, dict]:
    mode = SPEC.operator(op).modes[0]
    in_var = "in_t" if "in_t" in mode.bindings else "in_out_t"
    dt = dtypes.dtype(mode.bindings[in_var])
    out_dt = dtypes.dtype(mode.bindings.get("out_t", mode.bindings[in_var]))
    ones = np.ones(s1, dt.storage), np.ones(s2, dt.storage)
    inputs: list[Input] = [("input1", ones[0], dt.name), ("input2", ones[1], dt.name)]
    if op == "MUL":
        inputs.append(("shift", np.int8(0), "i8"))
    attrs = {"round": False} if op == "ARITHMETIC_RIGHT_SHIFT" else {}
    return inputs, out_dt.name, attrs


@pytest.mark.parametrize("op", BINARY_OPS)
@pytest.mark.parametrize(
    ("s1", "s2", "out_shape", "clause"),
    [
        ((2, 3), (3,), (2, 3), "rank(shape1) != rank(shape2)"),
        ((2, 3), (3, 3), (3, 3), "shape2[i] != 1 && shape2[i] != shape[i]"),
        ((2, 3), (1, 3), (1, 3), "shape != broadcast_shape(shape1, shape2)"),
        ((1, 3), (2, 1), (2, 1), "shape != broadcast_shape(shape1, shape2)"),
    ],
)
def test_broadcast_error_ifs(op: str, s1: tuple, s2: tuple, out_shape: tuple, clause: str) -> None:
    inputs, out_dt, attrs = _first_mode_inputs(op, s1, s2)
    got = run(op, inputs, out_dt, attrs=attrs, out_shape=out_shape)
    assert_rule(got, "error", clause)
    assert got.rule is not None and got.rule.clause == clause


def test_rank_zero_operands_broadcast() -> None:
    assert out(binary("ADD", np.int32(2), np.int32(3), "i32")).tolist() == 5


# -- shifts -------------------------------------------------------------------------------


def test_arithmetic_right_shift_rounds_half_up() -> None:
    # -5 = 0b...11111011: -5 >> 1 = -3 (floor of -2.5); the bit shifted out (bit 0) is 1,
    # so round adds 1: -2.  5 >> 1 = 2, bit 0 is 1 -> 3.  7 >> 2 = 1, bit 1 of 7 is 1 -> 2.
    # -128 >> 7 = -1, bit 6 of -128 is 0 -> -1.  A shift of 0 never rounds.
    a, b = [-5, 5, 7, -128, -7], [1, 1, 2, 7, 0]
    assert out(binary("ARITHMETIC_RIGHT_SHIFT", a, b, "i8", round=True)).tolist() == [
        -2,
        3,
        2,
        -1,
        -7,
    ]
    assert out(binary("ARITHMETIC_RIGHT_SHIFT", a, b, "i8", round=False)).tolist() == [
        -3,
        2,
        1,
        -1,
        -7,
    ]


@pytest.mark.parametrize(
    ("dt", "bad", "clause"),
    [
        ("i8", 8, "in_out_t == i8_t && 0 <= value2 && value2 <= 7"),
        ("i16", 16, "in_out_t == i16_t && 0 <= value2 && value2 <= 15"),
        ("i32", 32, "in_out_t == i32_t && 0 <= value2 && value2 <= 31"),
        ("i32", -1, "in_out_t == i32_t && 0 <= value2 && value2 <= 31"),
    ],
)
def test_arithmetic_right_shift_amount_require(dt: str, bad: int, clause: str) -> None:
    top = dtypes.dtype(dt).bits - 1
    assert binary("ARITHMETIC_RIGHT_SHIFT", [1], [top], dt, round=True).valid
    got = binary("ARITHMETIC_RIGHT_SHIFT", [1, 1], [0, bad], dt, round=True)
    assert_rule(got, "unpredictable", clause)


def test_logical_left_shift_keeps_the_low_bits_of_the_type() -> None:
    # i8: 65 << 1 = 130 = 0x82 -> -126; 1 << 7 = 0x80 -> -128; 1 << 31 leaves no bits -> 0.
    assert out(binary("LOGICAL_LEFT_SHIFT", [65, 1, 1, -1], [1, 7, 31, 4], "i8")).tolist() == [
        -126,
        -128,
        0,
        -16,
    ]
    assert out(binary("LOGICAL_LEFT_SHIFT", [1, 3], [31, 30], "i32")).tolist() == [
        INT32_MIN,  # 1 << 31 = 0x80000000
        INT32_MIN + 2**30,  # 3 << 30 = 0xC0000000
    ]


def test_logical_right_shift_shifts_zeros_into_the_operand_width() -> None:
    # i8 -1 = 0xFF -> 0x7F = 127; -128 = 0x80: >> 0 stays -128, >> 7 = 1.
    # i32 -1 >> 28 = 0xF = 15; i16 -32768 = 0x8000 >> 15 = 1.
    got = binary("LOGICAL_RIGHT_SHIFT", [-1, -128, -128, 64], [1, 0, 7, 20], "i8")
    assert out(got).tolist() == [127, -128, 1, 0]
    assert out(binary("LOGICAL_RIGHT_SHIFT", [-1], [28], "i32")).tolist() == [15]
    assert out(binary("LOGICAL_RIGHT_SHIFT", [-32768], [15], "i16")).tolist() == [1]


@pytest.mark.parametrize("op", ["LOGICAL_LEFT_SHIFT", "LOGICAL_RIGHT_SHIFT"])
@pytest.mark.parametrize("bad", [32, -1])
def test_logical_shift_amount_require(op: str, bad: int) -> None:
    got = binary(op, [1, 1], [31, bad], "i32")
    shift = "static_cast<int32_t>(value2)" if "RIGHT" in op else "value2"
    assert_rule(got, "REQUIRE", f"0 <= {shift} && {shift} <= 31")


# -- bitwise / logical ---------------------------------------------------------------------


def test_bitwise_ops() -> None:
    a, b = [0x0F0F, -1, -32768], [0x00FF, 0x1234, 1]
    assert out(binary("BITWISE_AND", a, b, "i16")).tolist() == [0x000F, 0x1234, 0]
    assert out(binary("BITWISE_OR", a, b, "i16")).tolist() == [0x0FFF, -1, -32767]
    assert out(binary("BITWISE_XOR", a, b, "i16")).tolist() == [0x0FF0, ~0x1234, -32767]


def test_logical_truth_tables() -> None:
    a, b = [False, False, True, True], [False, True, False, True]
    assert out(binary("LOGICAL_AND", a, b, "bool")).tolist() == [False, False, False, True]
    assert out(binary("LOGICAL_OR", a, b, "bool")).tolist() == [False, True, True, True]
    assert out(binary("LOGICAL_XOR", a, b, "bool")).tolist() == [False, True, True, False]


# -- INTDIV ---------------------------------------------------------------------------------


def test_intdiv_truncates_toward_zero() -> None:
    # -7/2 = -3.5 -> -3; 7/-2 -> -3; -7/-2 = 3.5 -> 3; INT_MIN / 1 and / 2 are exact.
    a, b = [-7, 7, -7, 7, 0, INT32_MIN, INT32_MIN, 1], [2, -2, -2, 2, 5, 1, 2, -3]
    got = out(binary("INTDIV", a, b, "i32"))
    assert got.tolist() == [-3, -3, 3, 3, 0, INT32_MIN, -(2**30), 0]


def test_intdiv_requires() -> None:
    # Divide by zero is a REQUIRE (not an ERROR_IF) in the pseudocode.
    assert_rule(binary("INTDIV", [1, 2], [1, 0], "i32"), "unpredictable", "value2 != 0")
    # INT_MIN / -1 = 2**31 does not fit i32.
    got = binary("INTDIV", [INT32_MIN], [-1], "i32")
    assert_rule(got, "REQUIRE", INTDIV_OVERFLOW)
    # The first failing element decides the clause: element 0 overflows, element 1 is /0.
    got = binary("INTDIV", [INT32_MIN, 5], [-1, 0], "i32")
    assert_rule(got, "REQUIRE", INTDIV_OVERFLOW)


@given(st.data())
def test_intdiv_matches_scalar_pseudocode(data: st.DataObject) -> None:
    i32 = st.integers(INT32_MIN, INT32_MAX)
    a = data.draw(st.lists(i32, min_size=1, max_size=8), label="value1")
    b = data.draw(
        st.lists(i32.filter(lambda v: v != 0), min_size=len(a), max_size=len(a)), label="value2"
    )
    expected = [_trunc_div(x, y) for x, y in zip(a, b, strict=True)]
    got = binary("INTDIV", a, b, "i32")
    if any(e > INT32_MAX for e in expected):  # only INT_MIN / -1
        assert got.kind == "unpredictable"
    else:
        assert out(got).tolist() == expected


def _trunc_div(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


# -- MAXIMUM / MINIMUM ----------------------------------------------------------------------


def test_maximum_minimum_nan_and_signed_zero() -> None:
    nan = np.nan
    a, b = [nan, 1.0, -0.0, 0.0, -np.inf], [1.0, nan, 0.0, -0.0, 3.0]
    mx = out(binary("MAXIMUM", a, b, "fp32"))
    mn = out(binary("MINIMUM", a, b, "fp32"))
    assert np.isnan(mx[:2]).all() and np.isnan(mn[:2]).all()
    # apply_max_s returns a when a >= b: max(-0, +0) = -0, max(+0, -0) = +0.
    assert np.signbit(mx[2]) and not np.signbit(mx[3])
    # apply_min_s returns a only when a < b: min(-0, +0) = +0 (b), min(+0, -0) = -0 (b).
    assert not np.signbit(mn[2]) and np.signbit(mn[3])
    assert mx[4] == 3.0 and mn[4] == -np.inf


def test_maximum_minimum_i32() -> None:
    a, b = [INT32_MIN, 5, -3], [INT32_MAX, 5, -4]
    assert out(binary("MAXIMUM", a, b, "i32")).tolist() == [INT32_MAX, 5, -3]
    assert out(binary("MINIMUM", a, b, "i32")).tolist() == [INT32_MIN, 5, -4]


# -- MUL ---------------------------------------------------------------------------------


def mul(a: object, b: object, dt: str, shift: int, out_dt: str | None = None) -> Outcome:
    inputs = [("input1", a, dt), ("input2", b, dt), ("shift", np.int8(shift), "i8")]
    return run("MUL", inputs, out_dt or dt, constants=("shift",))


def test_mul_i32_shift_rounds_half_up() -> None:
    # shift 1: 3*5 = 15, (15 + 1) >> 1 = 8 (7.5 -> 8); -3*5 = -15, (-15 + 1) >> 1 = -7
    # (-7.5 -> -7); 7*1 = 7, (7 + 1) >> 1 = 4.  shift 2: 10, (10 + 2) >> 2 = 3 (2.5 -> 3).
    assert out(mul([3, -3, 7], [5, 5, 1], "i32", 1)).tolist() == [8, -7, 4]
    assert out(mul([10, -10], [1, 1], "i32", 2)).tolist() == [3, -2]
    # INT_MIN * INT_MIN = 2**62; (2**62 + 2**62) >> 63 = 1 (exact, although 2**63 does
    # not fit int64).
    assert out(mul([INT32_MIN], [INT32_MIN], "i32", 63)).tolist() == [1]


def test_mul_i32_without_shift_keeps_the_low_32_bits() -> None:
    # 65536 * 65536 = 2**32 -> 0; 65536 * 32768 = 2**31 -> INT_MIN; -1 * INT_MIN = 2**31.
    got = out(mul([65536, 65536, -1, 46341], [65536, 32768, INT32_MIN, 46341], "i32", 0))
    assert got.tolist() == [0, INT32_MIN, INT32_MIN, 46341 * 46341 - 2**32]


def test_mul_narrow_integers_widen_to_i32() -> None:
    assert out(mul([-128, 127], [-128, -128], "i8", 0, "i32")).tolist() == [16384, -16256]
    assert out(mul([-32768], [-32768], "i16", 0, "i32")).tolist() == [2**30]


def test_mul_requires() -> None:
    # 2**20 * 2**20 >> 1 = 2**39: outside i32 after the shift.
    clause = "product >= minimum_s<i32_t>() && product <= maximum_s<i32_t>()"
    assert_rule(mul([1, 2**20], [1, 2**20], "i32", 1), "unpredictable", clause)
    assert_rule(mul([1], [1], "i32", 64), "unpredictable", "0 <= shift && shift <= 63")
    assert_rule(mul([1], [1], "i32", -1), "unpredictable", "0 <= shift && shift <= 63")
    assert_rule(mul([1], [1], "i16", 1, "i32"), "unpredictable", "in_t == int32_t || shift == 0")
    assert_rule(mul([1.0], [1.0], "fp32", 1), "unpredictable", "in_t == int32_t || shift == 0")


def test_mul_float_is_exact_in_fp64() -> None:
    got = out(mul([1e30, np.inf, 3.0], [1e30, 0.0, -0.5], "fp32", 0))
    assert got[0] == np.float64(np.float32(1e30)) ** 2  # not yet rounded to fp32's inf
    assert np.isnan(got[1]) and got[2] == -1.5


@given(st.data())
def test_mul_i32_shift_matches_scalar_pseudocode(data: st.DataObject) -> None:
    i32 = st.integers(INT32_MIN, INT32_MAX)
    shift = data.draw(st.integers(1, 63), label="shift")
    a = data.draw(st.lists(i32, min_size=1, max_size=6), label="value1")
    b = data.draw(st.lists(i32, min_size=len(a), max_size=len(a)), label="value2")
    expected = [(x * y + (1 << (shift - 1))) >> shift for x, y in zip(a, b, strict=True)]
    got = mul(a, b, "i32", shift)
    if all(INT32_MIN <= e <= INT32_MAX for e in expected):
        assert out(got).tolist() == expected
    else:
        assert got.kind == "unpredictable"


# -- POW ---------------------------------------------------------------------------------


def test_pow_special_values() -> None:
    nan = np.nan
    a = [2.0, -8.0, -2.0, 1.0, nan, -np.inf, 0.0]
    b = [10.0, 1.0 / 3.0, 3.0, nan, 0.0, 0.5, -1.0]
    got = out(binary("POW", a, b, "fp32"))
    assert got[0] == 1024.0 and got[2] == -8.0 and got[6] == np.inf
    # Negative base, non-integral exponent: NaN; any NaN input: NaN (C's pow gives 1).
    assert np.isnan(got[[1, 3, 4, 5]]).all()


def test_pow_bf16() -> None:
    got = out(binary("POW", np.array([1.5], ml_dtypes.bfloat16), [2.0], "bf16"))
    assert got.tolist() == [2.25]


# -- TABLE ---------------------------------------------------------------------------------


def table(x: object, tab: np.ndarray, in_dt: str, out_dt: str) -> Outcome:
    inputs = [("input", x, in_dt), ("table", tab, in_dt)]
    return run("TABLE", inputs, out_dt, constants=("table",), out_shape=np.shape(x))


def test_table_i8_indexes_from_minus_128() -> None:
    tab = (np.arange(256) - 128)[::-1].astype(np.int8)  # table[i] = 127 - i
    # -128 -> table[0] = 127; 0 -> table[128] = -1; 127 -> table[255] = -128.
    assert out(table([-128, 0, 127], tab, "i8", "i8")).tolist() == [127, -1, -128]


def test_table_i16_interpolates_a_worked_example() -> None:
    tab = np.zeros(513, np.int16)
    tab[258], tab[259] = 1000, 1256
    tab[255], tab[256] = -50, 70
    tab[0], tab[1] = -32768, -32000
    tab[511], tab[512] = 32000, 32767
    # 300: index = (300 + 32768) >> 7 = 33068 >> 7 = 258 (258 * 128 = 33024), fraction =
    # 300 & 127 = 44; slope = 1256 - 1000 = 256; (1000 << 7) + 256 * 44 = 128000 + 11264.
    # -1: index = 32767 >> 7 = 255, fraction = 127; (-50 << 7) + 120 * 127 = -6400 + 15240.
    # -32768: index 0, fraction 0 -> -32768 << 7.  32767: index 511, fraction 127 ->
    # (32000 << 7) + 767 * 127.
    got = out(table([300, -1, -32768, 32767], tab, "i16", "i32"))
    assert got.tolist() == [139264, 8840, -32768 * 128, 32000 * 128 + 767 * 127]


def test_table_i16_slope_require_only_for_entries_used() -> None:
    tab = np.zeros(513, np.int16)
    tab[0], tab[1] = -20000, 20000  # slope 40000 does not fit int16
    assert table([0, 1000], tab, "i16", "i32").valid  # never reads entry 0
    got = table([0, -32700], tab, "i16", "i32")
    assert_rule(got, "unpredictable", "slope >= minimum<int16_t> && slope <= maximum<int16_t>")


def test_table_length_require() -> None:
    got = table([0], np.zeros(255, np.int8), "i8", "i8")
    assert_rule(got, "unpredictable", "length(table) == TABLE_SIZE")


@given(st.data())
def test_table_i16_matches_scalar_pseudocode(data: st.DataObject) -> None:
    tab = np.cumsum(
        data.draw(st.lists(st.integers(-60, 60), min_size=513, max_size=513), label="steps")
    ).astype(np.int16)
    xs = data.draw(st.lists(st.integers(-32768, 32767), min_size=1, max_size=16), label="input")
    expected = []
    for v in xs:
        index, fraction = (v + 32768) >> 7, v & 0x7F
        base, nxt = int(tab[index]), int(tab[index + 1])
        expected.append((base << 7) + (nxt - base) * fraction)
    assert out(table(xs, tab, "i16", "i32")).tolist() == expected


# -- every mode of every operator of the element-wise groups --------------------------------

ELEMENTWISE_OPS = (
    *("CLAMP", "ERF", "SIGMOID", "TANH"),
    *BINARY_OPS,
    "TABLE",
    *("ABS", "BITWISE_NOT", "CEIL", "CLZ", "COS", "EXP", "FLOOR", "LOG", "LOGICAL_NOT"),
    *("NEGATE", "RECIPROCAL", "RSQRT"),
    *("SELECT", "SIN", "EQUAL", "GREATER", "GREATER_EQUAL"),
)
MODES = [(op, m) for op in ELEMENTWISE_OPS for m in SPEC.operator(op).modes]
SHIFT_OPS = ("ARITHMETIC_RIGHT_SHIFT", "LOGICAL_LEFT_SHIFT", "LOGICAL_RIGHT_SHIFT")


def _arg_dtype(arg: Argument, mode: TypeSupport) -> dtypes.DType:
    et = arg.element_type
    return dtypes.dtype(mode.bindings.get(et, et))


def _arg_shape(arg: Argument, mode: TypeSupport) -> tuple[int, ...]:
    kind = arg.shape.kind
    if kind == "scalar":
        return ()
    if kind == "dims":  # TABLE's [TABLE_SIZE]
        return (int(mode.bindings["TABLE_SIZE"]),)
    return (2, 3)


def _values(
    op: str, arg: Argument, dt: dtypes.DType, shape: tuple, rng: np.random.Generator
) -> np.ndarray:
    """Small random values that keep clear of every REQUIRE."""
    if dt.kind == "bool":
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dt.is_float:
        return rng.normal(0.0, 4.0, shape)
    if op in SHIFT_OPS and arg.name == "input2":
        return rng.integers(0, 8, shape)
    if op == "INTDIV" and arg.name == "input2":
        return rng.integers(1, 50, shape) * rng.choice([-1, 1], shape)
    if op == "MUL" and arg.name == "shift":
        return np.int64(0)
    if op == "TABLE" and arg.name == "table" and dt.bits == 16:
        return rng.integers(-1000, 1000, shape)  # slopes well inside int16
    lo, hi = (int(dt.min), int(dt.max)) if op == "TABLE" else (-50, 50)
    return rng.integers(lo, hi + 1, shape)


def _attributes(op_spec: OperatorSpec, dt: dtypes.DType) -> dict[str, object]:
    values = {
        "min_val": -1.5 if dt.is_float else -10,
        "max_val": 2.0 if dt.is_float else 10,
        "round": True,
        "input1_zp": 3 if dt.name == "i8" else 0,
        "output_zp": -2 if dt.name == "i8" else 0,
    }
    return {a.name: values[a.name] for a in op_spec.attributes}


@pytest.mark.parametrize(("op", "mode"), MODES, ids=[f"{o}-{m.mode}" for o, m in MODES])
def test_every_mode_evaluates(op: str, mode: TypeSupport) -> None:
    op_spec = SPEC.operator(op)
    rng = np.random.default_rng(len(op) * 31 + len(mode.mode))
    inputs = []
    for arg in op_spec.inputs:
        dt, shape = _arg_dtype(arg, mode), _arg_shape(arg, mode)
        inputs.append((arg.name, _values(op, arg, dt, shape, rng), dt.name))
    (out_arg,) = op_spec.outputs
    out_dt = _arg_dtype(out_arg, mode)
    attr_dt = _arg_dtype(op_spec.inputs[0], mode)
    got = run(
        op,
        inputs,
        out_dt.name,
        attrs=_attributes(op_spec, attr_dt),
        out_shape=(2, 3),
        constants=("table", "shift"),
    )
    assert got.kind == "valid", str(got)
    assert got.outputs["output"].shape == (2, 3)

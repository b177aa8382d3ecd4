"""ULP and exact modes: hand-checked values just inside and just outside each bound."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from conformance.dtypes import BF16, BOOL, FP8E4M3, FP16, FP32, I8, I48
from reference.compliance import Mode, check, comparison, exact, for_operator, ulp


def f32(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float32)


def f16(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float16)


def passes(ref: float, actual: np.ndarray, desc) -> list[bool]:
    """One verdict per actual value against the same reference."""
    expected = np.full(actual.shape, ref, dtype=np.float64)
    return [bool(check(expected[i : i + 1], desc, actual[i : i + 1])) for i in range(actual.size)]


HALF = ulp(FP32, 0.5, "test 0.5 ulp")


def test_half_ulp_at_one_in_fp32() -> None:
    one_up = np.nextafter(np.float32(1), np.float32(2))  # 1 + 2**-23: a full ulp away
    one_down = np.nextafter(np.float32(1), np.float32(0))  # 1 - 2**-24: half the ulp of 1.0
    two_down = np.nextafter(one_down, np.float32(0))
    assert passes(1.0, f32(1.0, one_up, one_down, two_down), HALF) == [True, False, True, False]


def test_half_ulp_midpoint_allows_either_neighbour() -> None:
    mid = 1.0 + 2.0**-24  # exactly between 1.0 and 1 + 2**-23
    v = check(np.array([mid, mid]), HALF, f32(1.0, 1.0 + 2.0**-23))
    assert v.passed
    assert v.max_margin == 1.0


def test_reference_exactly_a_power_of_two() -> None:
    # The ulp is taken from the binade of the reference (2.0 -> 2**-22), so the value
    # just below 2.0 (2**-23 away) is at exactly 0.5 ulp and passes; two below fails.
    below = np.nextafter(np.float32(2), np.float32(0))
    assert passes(2.0, f32(below, below - 2.0**-23, 2.0 + 2.0**-22), HALF) == [True, False, False]
    v = check(np.array([2.0]), HALF, f32(below))
    assert v.max_margin == 1.0


def test_reference_just_below_a_power_of_two() -> None:
    ref = 1.0 - 2.0**-30  # binade [0.5, 1): ulp 2**-24, 0.5 ulp = 2**-25
    assert passes(ref, f32(1.0, 1.0 - 2.0**-24), HALF) == [True, False]


@pytest.mark.parametrize(
    ("op", "n"), [("RECIPROCAL", 1.0), ("RSQRT", 2.0), ("LOG", 5.0), ("ERF", 5.0)]
)
def test_n_ulp_operators_at_three(op: str, n: float) -> None:
    # 3.0 lies in [2, 4): one fp32 ulp is 2**-22 and the fp32 spacing is the same.
    desc = for_operator(op, FP32)
    inside = 3.0 + n * 2.0**-22 if n >= 1 else 3.0
    outside = 3.0 + (math.floor(n) + 1) * 2.0**-22
    assert passes(3.0, f32(inside, outside, -inside), desc) == [True, False, False]
    assert passes(-3.0, f32(-inside, -outside), desc) == [True, False]
    assert check(np.array([3.0]), desc, f32(inside)).max_margin == 1.0


def test_margin_message_names_ulps_used_and_position() -> None:
    desc = ulp(FP32, 3, "test 3 ulp")
    expected = np.ones((2, 6))
    actual = np.ones((2, 6), dtype=np.float32)
    actual[0, 5] = 1.0 + 2 * 2.0**-23
    v = check(expected, desc, actual)
    assert v.passed
    assert v.worst_index == (0, 5)
    assert v.max_margin == pytest.approx(2 / 3)
    assert "2 of 3 ulp used at [0, 5]: expected 1, got 1.00000024" in v.message


def test_failing_indices_and_count() -> None:
    expected = np.ones((3, 4))
    actual = np.ones((3, 4), dtype=np.float32)
    actual[1, 2] = 1.5
    actual[2, 0] = np.nan
    v = check(expected, HALF, actual)
    assert not v.passed
    assert v.failing_count == 2
    assert v.failing_indices.tolist() == [[1, 2], [2, 0]]
    assert v.max_margin == math.inf  # the NaN mismatch
    assert v.worst_index == (2, 0)
    assert v.message.startswith("FAIL (2 of 12 elements)")


class TestSubnormals:
    """Results below normal_min: the lower end drops to zero (flush allowed) and the
    upper end rises to normal_min."""

    def test_fp32_subnormal_reference(self) -> None:
        tiny = np.float32(2.0**-126)
        ref = 2.0**-140
        values = f32(0.0, -0.0, 2.0**-140, tiny, np.nextafter(tiny, np.float32(1)), -(2.0**-149))
        assert passes(ref, values, HALF) == [True, True, True, True, False, False]

    def test_fp16_flush_to_zero_and_normal_min(self) -> None:
        desc = for_operator("MUL", FP16)
        normal_min = 2.0**-14
        values = f16(0.0, 1e-6, normal_min, np.nextafter(np.float16(normal_min), np.float16(1)))
        assert passes(1e-6, values, desc) == [True, True, True, False]

    def test_zero_reference(self) -> None:
        # The pseudocode's comparisons do not see the sign of zero.
        values = f32(0.0, -0.0, 2.0**-149, -(2.0**-149), 2.0**-126)
        assert passes(0.0, values, HALF) == [True, True, True, False, True]

    def test_negative_zero_reference_follows_the_pseudocode(self) -> None:
        # The pseudocode flips signs only for ref < 0, and -0.0 < 0 is false, so a
        # -0.0 reference keeps the interval [0, normal_min]: a positive subnormal
        # passes and a negative one does not.
        assert passes(-0.0, f32(-0.0, 0.0, 2.0**-149, -(2.0**-149)), HALF) == [
            True,
            True,
            True,
            False,
        ]

    def test_bf16_subnormal(self) -> None:
        desc = ulp(BF16, 0.5, "test bf16")
        actual = np.array([0.0, 2.0**-130, 2.0**-126, 2.0**-125], dtype=ml_dtypes.bfloat16)
        assert passes(2.0**-130, actual, desc) == [True, True, True, False]


class TestZeroSign:
    """ADD, SUB, MUL, CEIL, FLOOR, CAST, RECIPROCAL, LOG, ERF and REDUCE_PRODUCT:
    underflows must give a zero of the correct sign."""

    def test_underflow_keeps_the_sign(self) -> None:
        desc = for_operator("MUL", FP32)
        assert passes(-1e-50, f32(-0.0, 0.0, -(2.0**-149)), desc) == [True, False, True]
        assert passes(1e-50, f32(0.0, -0.0, 2.0**-149), desc) == [True, False, True]
        v = check(np.array([1e-50]), desc, f32(-0.0))
        assert v.max_margin == math.inf

    def test_exact_zero_reference_accepts_either_zero(self) -> None:
        desc = for_operator("ADD", FP32)
        assert passes(-0.0, f32(0.0, -0.0), desc) == [True, True]
        assert passes(0.0, f32(0.0, -0.0), desc) == [True, True]

    def test_only_where_the_table_says_so(self) -> None:
        assert passes(-1e-50, f32(0.0), for_operator("RSQRT", FP32)) == [True]
        assert passes(-1e-50, f32(0.0), HALF) == [True]


class TestOverflow:
    def test_reference_beyond_normal_max_must_be_infinity(self) -> None:
        desc = for_operator("ADD", FP16)
        assert passes(70000.0, f16(np.inf, 65504.0, -np.inf, np.nan), desc) == [
            True,
            False,
            False,
            False,
        ]
        assert passes(-70000.0, f16(-np.inf, np.inf, -65504.0), desc) == [True, False, False]

    def test_reference_near_normal_max_may_overflow(self) -> None:
        # 65519 rounds to 65504, but 65519 + 0.5 ulp (16) exceeds normal_max, so the
        # upper end of the interval is infinity: both results pass.
        desc = for_operator("ADD", FP16)
        assert passes(65519.0, f16(65504.0, np.inf, 65472.0), desc) == [True, True, False]
        v = check(np.array([65519.0]), desc, f16(np.inf))
        assert v.max_margin == 0.0  # inside an unbounded side

    def test_fp8e4m3_overflow_is_nan(self) -> None:
        # fp8e4m3 has no infinity; its non-saturating overflow gives NaN.
        desc = for_operator("CAST", FP8E4M3)
        nan = np.array([np.nan], dtype=ml_dtypes.float8_e4m3fn)
        big = np.array([448.0], dtype=ml_dtypes.float8_e4m3fn)
        assert check(np.array([1000.0]), desc, nan).passed
        assert not check(np.array([1000.0]), desc, big).passed
        assert check(np.array([460.0]), desc, big).passed
        assert not check(np.array([400.0]), desc, nan).passed


class TestSpecialValues:
    def test_infinite_reference(self) -> None:
        desc = for_operator("RECIPROCAL", FP32)
        assert passes(np.inf, f32(np.inf, -np.inf, 3.4e38, np.nan), desc) == [
            True,
            False,
            False,
            False,
        ]
        assert passes(-np.inf, f32(-np.inf, np.inf), desc) == [True, False]

    def test_nan_reference_needs_nan(self) -> None:
        desc = for_operator("LOG", FP32)
        assert passes(np.nan, f32(np.nan, 0.0, np.inf), desc) == [True, False, False]

    def test_nan_result_for_finite_reference_fails(self) -> None:
        v = check(np.array([1.0]), HALF, f32(np.nan))
        assert not v.passed
        assert v.max_margin == math.inf
        assert "outside the allowed range" in v.message


class TestExact:
    def test_exact_nan_float(self) -> None:
        desc = for_operator("MAXIMUM", FP32)
        assert desc.mode is Mode.EXACT_NAN
        expected = np.array([1.5, np.nan, 0.0, -0.0, np.inf])
        assert check(expected, desc, f32(1.5, np.nan, 0.0, -0.0, np.inf)).passed
        for i, wrong in enumerate([np.nextafter(np.float32(1.5), np.float32(2)), 0.0, -0.0, 0.0]):
            actual = f32(1.5, np.nan, 0.0, -0.0, np.inf)
            actual[i] = wrong
            v = check(expected, desc, actual)
            assert not v.passed
            assert v.failing_indices.tolist() == [[i]]
            assert v.max_margin == math.inf

    def test_exact_integer(self) -> None:
        desc = for_operator("ADD", I8)
        assert desc.mode is Mode.EXACT
        expected = np.array([[1, -128], [127, 0]], dtype=np.int64)
        actual = expected.astype(np.int8)
        assert check(expected, desc, actual).passed
        actual[1, 0] = 126
        v = check(expected, desc, actual)
        assert not v.passed
        assert v.worst_index == (1, 0)
        assert "mismatch at [1, 0]: expected 127, got 126" in v.message

    def test_exact_i48_large_values(self) -> None:
        desc = exact(I48, "test")
        big = (1 << 47) - 1
        expected = np.array([big, -big], dtype=np.int64)
        assert check(expected, desc, expected.copy()).passed
        assert not check(expected, desc, expected - 1).passed

    def test_comparison_bool(self) -> None:
        desc = comparison("greater_equal")
        assert desc.dtype is BOOL
        expected = np.array([True, False, True])
        assert check(expected, desc, expected.copy()).passed
        v = check(expected, desc, np.array([True, True, True]))
        assert not v.passed
        assert "expected false, got true" in v.message

    def test_scalar_output(self) -> None:
        v = check(np.array(2.0), HALF, np.array(2.0, dtype=np.float32))
        assert v.passed
        assert v.worst_index == ()
        assert v.failing_indices.shape == (0, 0)

    def test_empty_output(self) -> None:
        v = check(np.zeros((0, 3)), HALF, np.zeros((0, 3), dtype=np.float32))
        assert v.passed
        assert v.count == 0
        assert v.worst_index is None

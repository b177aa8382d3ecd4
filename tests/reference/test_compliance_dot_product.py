"""DOT_PRODUCT: ksb, the per-element test, and the error-sum and variance tests."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conformance.dtypes import FP16, FP32
from reference.compliance import (
    MIN_DOT_PRODUCTS,
    check,
    dot_product,
    dot_product_bound_inputs,
    effective_local_bound,
    ksb,
)


def fp32_desc(ks: int, data_set: int = -1, bias_abs_max: float = 0.0):
    return dot_product("MATMUL", FP32, FP32, ks=ks, data_set=data_set, bias_abs_max=bias_abs_max)


def fp16_desc(data_set: int, ks: int = 64):
    # fp16 output with fp32 accumulation: ksb = ceil(64 / 2**13) = 1.
    return dot_product("MATMUL", FP16, FP32, ks=ks, data_set=data_set)


@pytest.mark.parametrize(
    ("out", "acc", "ks", "bias", "want"),
    [
        (FP32, FP32, 10, 0.0, 10),
        (FP32, FP32, 10, 0.5, 11),
        (FP16, FP32, 8192, 0.0, 1),
        (FP16, FP32, 8193, 0.0, 2),
        (FP16, FP32, 100, 1.0, 2),
        (FP16, FP16, 7, 0.0, 7),
    ],
)
def test_ksb(out, acc, ks: int, bias: float, want: int) -> None:
    desc = dot_product("CONV2D", out, acc, ks=ks, data_set=0, bias_abs_max=bias)
    assert ksb(desc.params, out) == want


class TestPerElement:
    def test_fp32_error_limit(self) -> None:
        # out_bnd 1.0: the error unit is 2**-24, ksb = KS = 10; fp32 spacing at 0.5 is
        # 2**-24, so 10 steps is exactly at the limit and 11 is past it.
        desc = fp32_desc(10)
        unit = 2.0**-24
        for steps, ok in [(10, True), (-10, True), (11, False), (-11, False)]:
            actual = np.array([0.5 + steps * unit], dtype=np.float32)
            v = check(np.array([0.5]), desc, actual, np.array([1.0]))
            assert v.passed is ok, steps
        v = check(np.array([0.5]), desc, np.array([0.5 + 10 * unit], np.float32), np.array([1.0]))
        assert v.max_margin == 1.0
        assert "10 of ksb 10 error units used" in v.message
        assert v.dot_product is not None
        assert v.dot_product.error_sumsq_limit is None  # one output: statistics not applied

    def test_zero_bound_needs_zero(self) -> None:
        desc = fp32_desc(4)
        expected = np.zeros(3)
        bound = np.zeros(3)
        assert check(expected, desc, np.array([0.0, -0.0, 0.0], np.float32), bound).passed
        v = check(expected, desc, np.array([0.0, 2.0**-149, 0.0], np.float32), bound)
        assert not v.passed
        assert v.failing_indices.tolist() == [[1]]
        assert v.max_margin == math.inf

    def test_bound_overflowing_accumulator_is_unconstrained(self) -> None:
        desc = fp32_desc(4)
        bound = np.array([1e39, 1e39, 3e38])
        expected = np.array([1.0, 1.0, 1.0])
        loose = check(expected, desc, np.array([-5.0, np.nan, 1.0], np.float32), bound)
        assert loose.passed
        assert loose.max_margin == 0.0
        # 3e38 still fits in fp32, so that element stays bounded.
        assert not check(expected, desc, np.array([1.0, 1.0, 1e38], np.float32), bound).passed

    def test_fp16_accumulator_overflow(self) -> None:
        desc = dot_product("CONV2D", FP16, FP16, ks=4, data_set=-1)
        expected = np.array([1.0, 1.0])
        actual = np.array([1000.0, 1000.0], dtype=np.float16)
        # 70000 rounds to inf in fp16; 65519 rounds to 65504 and stays a bound, whose
        # error unit is 65519 * 2**-11 = 32: an error of 999 is 31 units, over ksb 4.
        v = check(expected, desc, actual, np.array([70000.0, 65519.0]))
        assert v.failing_indices.tolist() == [[1]]

    def test_error_unit_never_below_normal_min(self) -> None:
        desc = fp32_desc(1)
        bound = np.array([1e-40])
        tiny = 2.0**-126
        assert check(np.array([0.0]), desc, np.array([tiny], np.float32), bound).passed
        assert not check(np.array([0.0]), desc, np.array([2 * tiny], np.float32), bound).passed

    def test_nan_reference(self) -> None:
        desc = fp32_desc(4)
        nan = np.array([np.nan])
        assert check(nan, desc, np.array([np.nan], np.float32), nan).passed
        assert not check(nan, desc, np.array([0.0], np.float32), nan).passed


def _shifted(steps: np.ndarray, error_units_per_step: float):
    """fp16 references in [0.5, 1) moved by whole fp16 steps (2**-11), with the bound
    chosen so that one step is ``error_units_per_step`` error units."""
    rng = np.random.default_rng(7)
    ref = 0.5 + rng.integers(0, 1000, size=steps.shape) * 2.0**-11
    actual = (ref + steps * 2.0**-11).astype(np.float16)
    # unit = out_bnd * 2**-11 and one step = 2**-11, so out_bnd = 1 / units_per_step.
    bound = np.full(steps.shape, 1.0 / error_units_per_step)
    return ref, actual, bound


class TestStatistics:
    T = (40, 50)  # 2000 outputs, at least MIN_DOT_PRODUCTS

    def test_systematic_bias_fails_both_tests(self) -> None:
        ref, actual, bound = _shifted(np.ones(self.T), 0.9)
        v = check(ref, fp16_desc(3), actual, bound)
        assert v.failing_count == 0  # every element is within its own bound
        assert v.max_margin == pytest.approx(0.9)
        assert not v.passed
        stats = v.dot_product
        assert stats is not None
        assert stats.error_sum == pytest.approx(0.9 * 2000)
        assert stats.error_sum_limit == pytest.approx(2 * math.sqrt(2000))
        assert stats.error_sumsq == pytest.approx(0.81 * 2000)
        assert stats.error_sumsq_limit == pytest.approx(0.4 * 2000)
        assert not stats.error_sum_passed
        assert not stats.error_sumsq_passed
        assert v.message.startswith("FAIL (dot product statistics")

    def test_small_bias_fails_only_the_error_sum(self) -> None:
        ref, actual, bound = _shifted(np.ones(self.T), 0.5)
        v = check(ref, fp16_desc(4), actual, bound)
        assert v.dot_product is not None
        assert not v.dot_product.error_sum_passed
        assert v.dot_product.error_sumsq_passed
        assert not v.passed

    @pytest.mark.parametrize("data_set", [-1, 0, 1, 2])
    def test_error_sum_only_for_sets_3_to_5(self, data_set: int) -> None:
        ref, actual, bound = _shifted(np.ones(self.T), 0.5)
        v = check(ref, fp16_desc(data_set), actual, bound)
        assert v.dot_product is not None
        assert v.dot_product.error_sum_limit is None
        assert v.passed

    def test_alternating_large_errors_fail_only_the_variance(self) -> None:
        steps = np.where(np.arange(2000).reshape(self.T) % 2 == 0, 1.0, -1.0)
        ref, actual, bound = _shifted(steps, 0.9)
        v = check(ref, fp16_desc(5), actual, bound)
        assert v.dot_product is not None
        assert v.dot_product.error_sum == pytest.approx(0.0, abs=1e-9)
        assert v.dot_product.error_sum_passed
        assert not v.dot_product.error_sumsq_passed
        assert not v.passed

    def test_unbiased_errors_within_bounds_pass(self) -> None:
        steps = np.random.default_rng(3).integers(-1, 2, size=self.T).astype(np.float64)
        ref, actual, bound = _shifted(steps, 0.5)
        v = check(ref, fp16_desc(3), actual, bound)
        assert v.passed, v.message

    def test_too_few_outputs_skip_statistics(self) -> None:
        n = MIN_DOT_PRODUCTS - 1
        ref, actual, bound = _shifted(np.ones(n), 0.9)
        v = check(ref, fp16_desc(3), actual, bound)
        assert v.passed
        assert v.dot_product is not None
        assert v.dot_product.error_sum_limit is None
        assert v.dot_product.error_sumsq_limit is None


class TestBoundInputs:
    def test_local_bound_keeps_each_input(self) -> None:
        a = np.array([[1.0, -2.0], [0.5, 3.0]])
        b = np.array([[-1.0], [4.0]])
        got = dot_product_bound_inputs(a, b, np.array([-0.25]), local_bound=True)
        assert got.inputs[0].tolist() == [[1.0, 2.0], [0.5, 3.0]]
        assert got.weight is not None and got.weight.tolist() == [[1.0], [4.0]]
        assert got.bias_abs_max == 0.25

    def test_global_bound_uses_the_largest_input(self) -> None:
        re = np.array([1.0, -2.0])
        im = np.array([0.5, -5.0])
        got = dot_product_bound_inputs((re, im), None, local_bound=False)
        assert [x.tolist() for x in got.inputs] == [[5.0, 5.0], [5.0, 5.0]]
        assert got.weight is None
        assert got.bias_abs_max == 0.0

    def test_effective_local_bound(self) -> None:
        assert effective_local_bound("CONV2D", None) is False
        assert effective_local_bound("CONV2D", True) is True
        assert effective_local_bound("MATMUL", None) is True
        with pytest.raises(ValueError, match="no local_bound attribute"):
            effective_local_bound("MATMUL", False)


@pytest.mark.parametrize(("out", "local_bound"), [(FP32, True), (FP16, True), (FP16, False)])
def test_end_to_end_matmul(out, local_bound: bool) -> None:
    """A real fp32-accumulated matmul, rounded to the output type, passes."""
    rng = np.random.default_rng(11)
    a = rng.uniform(-1, 1, size=(100, 16)).astype(out.storage)
    b = rng.uniform(-1, 1, size=(16, 20)).astype(out.storage)
    expected = a.astype(np.float64) @ b.astype(np.float64)
    parts = dot_product_bound_inputs(a, b, local_bound=local_bound)
    assert parts.weight is not None
    bound = parts.inputs[0] @ parts.weight
    actual = (a.astype(np.float32) @ b.astype(np.float32)).astype(out.storage)
    op = "CONV2D" if not local_bound else "MATMUL"
    desc = dot_product(op, out, FP32, ks=16, data_set=-1)
    v = check(expected, desc, actual, bound)
    assert v.passed, v.message
    assert v.count == 2000


def test_overflow_of_the_output_type_allows_the_signed_infinity() -> None:
    # fp16 output with fp32 accumulation: 70000 is beyond fp16's 65504, so a correctly
    # rounded result is +inf, although the accumulator (fp32) did not overflow.
    from conformance import dtypes
    from reference.compliance import check, dot_product

    desc = dot_product("CONV2D", dtypes.FP16, dtypes.FP32, ks=4, data_set=0)
    ref = np.array([70000.0, -70000.0, 100.0])
    bound = np.array([70000.0, 70000.0, 100.0])
    good = np.array([np.inf, -np.inf, 100.0], np.float16)
    assert check(ref, desc, good, bound).passed
    wrong_sign = np.array([-np.inf, -np.inf, 100.0], np.float16)
    assert not check(ref, desc, wrong_sign, bound).passed
    # an infinity where the exact result is far inside the range is still wrong
    inside = np.array([np.inf, -np.inf, np.inf], np.float16)
    assert not check(ref, desc, inside, bound).passed


def test_nan_input_does_not_spoil_the_other_bounds() -> None:
    from reference.compliance import dot_product_bound_inputs

    x = np.array([1.0, np.nan, -3.0])
    prepared = dot_product_bound_inputs(x, None, local_bound=False)
    assert prepared.inputs[0].tolist() == [3.0, 3.0, 3.0]  # the largest non-NaN magnitude


def test_an_infinite_reference_is_met_by_the_same_infinity_only() -> None:
    # A finite bound beside an infinite reference (FFT2D's exact zero twiddles): -inf
    # must be answered by -inf, and +inf or a finite value still fail.
    import numpy as np

    from conformance.compliance_descriptor import DotProductParams
    from conformance.dtypes import dtype
    from reference.compliance.dot_product import check_dot_product

    fp32 = dtype("fp32")
    params = DotProductParams(ks=4, data_set=-1, acc_dtype=fp32)
    ref = np.array([-np.inf, 1.0])
    bound = np.array([4.0, 4.0])
    good = check_dot_product(ref, np.array([-np.inf, 1.0]), bound, params, fp32)
    assert good.ok.all()
    for wrong in (np.inf, -3.0e38):
        bad = check_dot_product(ref, np.array([wrong, 1.0]), bound, params, fp32)
        assert not bad.ok[0] and bad.ok[1]

"""ABS_ERROR, REDUCE_PRODUCT and RESIZE: bounds computed by hand from the spec's
formulas, with results on either side of them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conformance.dtypes import FP16, FP32
from reference.compliance import (
    abs_error_bound_tensor,
    abs_error_for,
    check,
    reduce_product,
    resize,
)
from reference.compliance.bounds import abs_error_scale, calc_abs_error_bound


def verdicts(ref: float, values: list[float], desc, bound: float | None, storage) -> list[bool]:
    out = []
    for v in values:
        b = None if bound is None else np.array([bound])
        out.append(check(np.array([ref]), desc, np.array([v], dtype=storage), b).passed)
    return out


class TestExpFp16:
    # x = 2: out_ref = e**2 = 7.38905609893065, bound value 1 + |x| = 3,
    # err_bnd = 2**-10 * 7.38905609893065 * 3 = 0.0216476252898...
    # allowed [7.36740847, 7.41070372]; fp16 spacing in [4, 8) is 2**-8.
    REF = math.exp(2.0)

    def test_bound_tensor_and_error_bound(self) -> None:
        bound = abs_error_bound_tensor("EXP", np.array([2.0]))
        assert bound.tolist() == [3.0]
        err = calc_abs_error_bound(np.array([self.REF]), bound, 0.0, 1.0, FP16)
        assert err[0] == pytest.approx(0.021647625289835888, rel=1e-15)

    def test_inside_and_outside(self) -> None:
        desc = abs_error_for("EXP", FP16)
        values = [1886 / 256, 1887 / 256, 1897 / 256, 1898 / 256]  # 7.3672 .. 7.4141
        assert verdicts(self.REF, values, desc, 3.0, np.float16) == [False, True, True, False]

    def test_exp_of_infinities(self) -> None:
        desc = abs_error_for("EXP", FP16)
        x = np.array([-np.inf, np.inf])
        bound = abs_error_bound_tensor("EXP", x)
        expected = np.exp(x)
        # exp(-inf) = 0 exactly (the inf * 0 bound is taken as zero); exp(inf) = inf.
        assert check(expected, desc, np.array([0.0, np.inf], dtype=np.float16), bound).passed
        assert not check(expected, desc, np.array([0.0, 65504], dtype=np.float16), bound).passed


def test_tanh_lower_bound_near_zero() -> None:
    # tanh(0) = 0: |out_ref| * 4 * (1 + 0) = 0 is raised to the lower bound 0.5, so
    # err_bnd = 2**-10 * 0.5 = 2**-11 for fp16.
    desc = abs_error_for("TANH", FP16)
    limit = 2.0**-11
    above = float(np.nextafter(np.float16(limit), np.float16(1)))
    assert verdicts(0.0, [limit, -limit, above, -above], desc, 4.0, np.float16) == [
        True,
        True,
        False,
        False,
    ]


def test_sin_uses_input_magnitude_and_truncated_exponent() -> None:
    # SIN: err_bnd = exp2(-23 / 2) * |x| * |x|; exp2 takes an int, so 2**-11 is used.
    assert abs_error_scale(FP32, 2.0) == 2.0**-11
    desc = abs_error_for("SIN", FP32)
    x = 0.5
    ref = math.sin(x)
    limit = 2.0**-11 * 0.25  # 1.2207e-4
    values = [ref + 0.99 * limit, ref - 0.99 * limit, ref + 1.01 * limit]
    assert verdicts(ref, values, desc, x, np.float32) == [True, True, False]
    # The same bound tensor is the input itself.
    assert abs_error_bound_tensor("SIN", np.array([x])).tolist() == [x]


def test_cos_fp16() -> None:
    # COS: err_bnd = 2**-5 * |x| * (1 + |x|) = 0.0625 at x = 1 for fp16.
    desc = abs_error_for("COS", FP16)
    ref = math.cos(1.0)  # 0.5403; allowed [0.4778, 0.6028], fp16 spacing 2**-11
    low_in = math.ceil((ref - 0.0625) * 2048) / 2048
    high_in = math.floor((ref + 0.0625) * 2048) / 2048
    values = [low_in, low_in - 2**-11, high_in, high_in + 2**-11]
    assert verdicts(ref, values, desc, 1.0, np.float16) == [True, False, True, False]


def test_pow_bound_tensor() -> None:
    x = np.array([2.0, 0.0, -8.0])
    y = np.array([3.0, 2.0, 1.0 / 3.0])
    bound = abs_error_bound_tensor("POW", x, y)
    assert bound[0] == pytest.approx(2 * (1 + math.log(2) * 3))
    assert bound[1] == math.inf  # log(0) * 2; with pow(0, 2) = 0 the bound is zero
    desc = abs_error_for("POW", FP32)
    expected = np.array([8.0, 0.0, np.nan])
    assert check(expected, desc, np.array([8.0, 0.0, np.nan], dtype=np.float32), bound).passed
    # A zero reference allows [0, normal_min] (room to flush), nothing beyond.
    assert check(expected, desc, np.array([8.0, 2.0**-149, np.nan], np.float32), bound).passed
    assert not check(expected, desc, np.array([8.0, 1e-30, np.nan], np.float32), bound).passed


def test_reduce_product_fp32() -> None:
    # n = 4: err_bnd = |ref| * ((1 + 2**-24)**4 - 1), a little over 4 * 2**-24 * |ref|.
    # At 1.5 that is just over 3 fp32 steps of 2**-23.
    desc = reduce_product(FP32, 4)
    step = 2.0**-23
    values = [1.5 + 3 * step, 1.5 - 3 * step, 1.5 + 4 * step, 1.5 - 4 * step]
    assert verdicts(1.5, values, desc, None, np.float32) == [True, True, False, False]
    v = check(np.array([1.5]), desc, np.array([1.5 + 3 * step], dtype=np.float32))
    assert v.max_margin == pytest.approx(3 * step / (1.5 * ((1 + 2**-24) ** 4 - 1)), rel=1e-12)
    assert v.max_margin < 1


def test_resize_fp16() -> None:
    # err_bnd = 0.006 * max|input| = 0.06 for an input maximum of 10.
    desc = resize(FP16, 10.0)
    values = [1 + 61 / 1024, 1 + 62 / 1024, 1 - 122 / 2048, 1 - 123 / 2048]
    assert verdicts(1.0, values, desc, None, np.float16) == [True, False, True, False]
    v = check(np.array([1.0]), desc, np.array([1 + 61 / 1024], dtype=np.float16))
    assert "allowed [0.94, 1.06]" in v.message


def test_reduce_product_underflow_sign() -> None:
    desc = reduce_product(FP16, 3)
    assert verdicts(-1e-9, [-0.0, 0.0], desc, None, np.float16) == [True, False]


def test_pow_bound_where_log_times_y_is_zero_times_infinity() -> None:
    from reference.compliance import abs_error_bound_tensor

    x = np.array([0.0, np.inf, 1.0, 2.0])
    y = np.array([0.0, 0.0, np.inf, 3.0])
    # 2 * (1 + |log|x| * y|): the first three are 0 * inf, taken as 0; the last by hand
    expected = [2.0, 2.0, 2.0, 2.0 * (1.0 + 3.0 * np.log(2.0))]
    assert np.allclose(abs_error_bound_tensor("POW", x, y), expected)

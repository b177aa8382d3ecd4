"""The compliance rules that TOSA 1.0 states differently from the 2024 draft
(reference/compliance/revision_rules.py; docs/compliance.md, "TOSA 1.0"): each rule with
a value worked by hand under each revision.  The revision is the process's spec,
selected with ``spec_in_use``."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest

from conformance.dtypes import BF16, FP16, FP32
from conformance.revisions import DEFAULT_REVISION
from conformance.spec import load_revision, spec_in_use
from reference import compliance as c
from reference.compliance import revision_rules
from reference.compliance.bounds import calc_abs_error_bound
from reference.datasets import bound_b, set_data, tosa_mi_data, tosa_pro_fp_data

DRAFT = "2024-04-draft"
V1 = "1.0"
NMIN32 = 2.0**-126
TINY32 = 2.0**-149  # smallest fp32 subnormal


@contextmanager
def revision(name: str) -> Iterator[None]:
    with spec_in_use(load_revision(name)):
        yield


def _f32(*v: float) -> np.ndarray:
    return np.array(v, dtype=np.float32)


def _passes(rev: str, desc_fn, ref: float, result: np.ndarray, bound=None) -> bool:
    with revision(rev):
        desc = desc_fn()
        b = None if bound is None else np.asarray(bound(), dtype=np.float64)
        return c.check(np.array([ref]), desc, result, b).passed


# -- the table -------------------------------------------------------------------------------


def test_every_revision_has_every_rule_with_its_spec_reference() -> None:
    for rev in (DRAFT, V1):
        rules = revision_rules.rules_for(rev)
        for name in rules.__dataclass_fields__:
            entry = getattr(rules, name)
            assert isinstance(entry, revision_rules.Entry) and entry.spec.strip(), (rev, name)
    # A spec that is no vendored revision follows the default revision.
    assert revision_rules.rules_for("custom-9.9.9") is revision_rules.RULES[DEFAULT_REVISION]
    with revision(V1):
        assert revision_rules.current() is revision_rules.RULES[V1]
    with revision(DRAFT):
        assert revision_rules.current() is revision_rules.RULES[DRAFT]


# -- tosa_reference_check_fp_bnd ---------------------------------------------------------------


def test_zero_reference_accepts_a_subnormal_only_in_the_draft() -> None:
    # ADD fp32 with reference 0: the ulp of 0 is 0, err_bnd 0.  Draft: the upper end is
    # raised to normal_min, so 2**-149 passes.  1.0: the interval is [0, 0]; only a zero
    # (of either sign: lower end 0 < normal_min) passes.
    def add() -> c.ComplianceDescriptor:
        return c.for_operator("ADD", FP32)

    assert _passes(DRAFT, add, 0.0, _f32(TINY32))
    assert not _passes(V1, add, 0.0, _f32(TINY32))
    assert _passes(V1, add, 0.0, _f32(0.0)) and _passes(V1, add, 0.0, _f32(-0.0))


def test_subnormal_reference_accepts_smaller_subnormals_only_in_the_draft() -> None:
    # Reference 3 * 2**-149, 0.5 ulp with the ulp held at 2**-149: [2.5, 3.5] * 2**-149.
    # Draft: the lower end is below normal_min and drops to 0, so 2**-149 passes.  1.0:
    # 2**-149 is outside; the zero passes (flush: lower end < normal_min).
    def add() -> c.ComplianceDescriptor:
        return c.for_operator("ADD", FP32)

    ref = 3 * TINY32
    assert _passes(DRAFT, add, ref, _f32(TINY32))
    assert not _passes(V1, add, ref, _f32(TINY32))
    assert _passes(V1, add, ref, _f32(0.0)) and _passes(DRAFT, add, ref, _f32(0.0))


def test_negative_zero_reference() -> None:
    # -0.0 is not < 0, so it is not negated: the draft's interval is [0, normal_min]
    # (+2**-149 passes), 1.0's is [0, 0] (it fails).
    def add() -> c.ComplianceDescriptor:
        return c.for_operator("ADD", FP32)

    assert _passes(DRAFT, add, -0.0, _f32(TINY32))
    assert not _passes(V1, add, -0.0, _f32(TINY32))


def test_infinite_error_bound_accepts_any_result_in_1_0() -> None:
    # A bound tensor holding err_bnd itself (Magnitude.BOUND): reference 1.0, err_bnd inf.
    # Draft: the interval is [-inf, inf], a NaN result fails.  1.0: !is_finite(err_bnd)
    # returns true, so NaN passes; a NaN reference still needs NaN.
    def desc() -> c.ComplianceDescriptor:
        return c.abs_error(FP32, "test", magnitude=c.Magnitude.BOUND)

    assert not _passes(DRAFT, desc, 1.0, _f32(np.nan), lambda: [np.inf])
    assert _passes(V1, desc, 1.0, _f32(np.nan), lambda: [np.inf])
    with revision(V1):
        assert not c.check(np.array([np.nan]), desc(), _f32(1.0), np.array([np.inf])).passed


def test_lower_end_past_minus_normal_max_is_minus_infinity_in_1_0() -> None:
    # Reference 1, err_bnd 1e39: the lower end 1 - 1e39 is below -normal_max<fp32>
    # (3.4e38).  Draft: it stays finite and -inf fails; 1.0: it becomes -inf.
    def desc() -> c.ComplianceDescriptor:
        return c.abs_error(FP32, "test", magnitude=c.Magnitude.BOUND)

    assert not _passes(DRAFT, desc, 1.0, _f32(-np.inf), lambda: [1e39])
    assert _passes(V1, desc, 1.0, _f32(-np.inf), lambda: [1e39])


# -- calcAbsErrorBound -----------------------------------------------------------------------


def test_calc_abs_error_bound_floors_the_magnitude_in_1_0() -> None:
    # Magnitude 0, bounds_value 402 (SIGMOID at x = -200), fp32:
    # draft 2**-23 * 0 * 402 = 0; 1.0 2**-23 * normal_min * 402 = 402 * 2**-149.
    mag, bv = np.array([0.0]), np.array([402.0])
    assert calc_abs_error_bound(mag, bv, 0.0, 1.0, FP32, "product")[0] == 0.0
    assert calc_abs_error_bound(mag, bv, 0.0, 1.0, FP32, "floored")[0] == 402 * TINY32
    # Lower bound 0.5 with bounds_value 12: draft max(0.5, 0 * 12) = 0.5; 1.0
    # max(0, normal_min, 0.5 / 12) * 12 = 0.5: both 0.5 * 2**-23.
    bv = np.array([12.0])
    helpers: tuple[revision_rules.AbsHelper, ...] = ("product", "floored")
    for helper in helpers:
        got = calc_abs_error_bound(mag, bv, 0.5, 1.0, FP32, helper)[0]
        assert got == pytest.approx(0.5 * 2.0**-23, rel=1e-15)


def test_exp_bound() -> None:
    # EXP fp16 at x = 2, ref e**2 = 7.389056: draft bound 1 + 2 = 3, err_bnd
    # 2**-10 * 7.389056 * 3 = 0.021648; 1.0 bound err_base + 2|x| = 1 + 4 = 5, err_bnd
    # 0.036079.  7.4140625 is 0.025006 off: fails the draft, passes 1.0.
    x, ref = np.array([2.0]), np.array([math.exp(2.0)])
    result = np.array([7.4140625], dtype=np.float16)
    for rev, bound, ok in ((DRAFT, 3.0, False), (V1, 5.0, True)):
        with revision(rev):
            b = c.abs_error_bound_tensor("EXP", x, out=FP16, ref=ref)
            assert b.tolist() == [bound]
            assert c.check(ref, c.abs_error_for("EXP", FP16), result, b).passed is ok
    # fp32 takes err_base 3 in 1.0: bound 3 + 2 * 0 at x = 0.
    with revision(V1):
        assert c.abs_error_bound_tensor("EXP", np.array([0.0]), out=FP32).tolist() == [3.0]


def test_tanh_bound() -> None:
    # TANH fp16 at x = 1, ref 0.7615942: draft err_bnd = 2**-10 * max(0.5, 0.7615942 *
    # 4 * 2) = 0.0059499; 1.0 = 2**-10 * max(0.7615942, 0.5 / 12) * 4 * (1 + 2) =
    # 0.0089249.  0.7685546875 (fp16) is 0.0069605 off: fails the draft, passes 1.0.
    x, ref = np.array([1.0]), np.array([math.tanh(1.0)])
    result = np.array([0.7685546875], dtype=np.float16)
    for rev, ok in ((DRAFT, False), (V1, True)):
        with revision(rev):
            b = c.abs_error_bound_tensor("TANH", x, out=FP16, ref=ref)
            assert c.check(ref, c.abs_error_for("TANH", FP16), result, b).passed is ok


def test_log_is_an_absolute_error_bound_in_1_0() -> None:
    # LOG fp32 of 1 (ref 0).  Draft: 5 ulp of 0 = 0, so a result must lie in
    # [0, normal_min]: 2**-25 fails.  1.0: calcAbsErrorBound(0, 5, 0.5, 1) =
    # 2**-23 * max(0, normal_min, 0.5 / 5) * 5 = 2**-24: 2**-25 passes, 2**-23 fails.
    with revision(DRAFT):
        assert c.for_operator("LOG", FP32).mode is c.Mode.ULP
        assert not c.check(np.array([0.0]), c.for_operator("LOG", FP32), _f32(2.0**-25)).passed
    with revision(V1):
        desc = c.for_operator("LOG", FP32)
        assert desc.mode is c.Mode.ABS_ERROR
        b = c.abs_error_bound_tensor("LOG", np.array([1.0]), out=FP32, ref=np.array([0.0]))
        assert c.check(np.array([0.0]), desc, _f32(2.0**-25), b).passed
        assert not c.check(np.array([0.0]), desc, _f32(2.0**-23), b).passed


def test_cos_bound() -> None:
    # COS fp32 at x = 0 (ref 1).  Draft: calcAbsErrorBound(x, 1 + |x|, 0, 2) = 0, only
    # exactly 1 passes.  1.0: calcAbsErrorBound(1 + |x|, 1, 0, 2) = 2**-11 * 1:
    # 1 - 2**-12 passes.  At x = 3: draft 2**-11 * 3 * 4 = 12 * 2**-11, 1.0 4 * 2**-11.
    ref, result = np.array([1.0]), _f32(1.0 - 2.0**-12)
    with revision(DRAFT):
        b = c.abs_error_bound_tensor("COS", np.array([0.0]))
        assert not c.check(ref, c.abs_error_for("COS", FP32), result, b).passed
    with revision(V1):
        b = c.abs_error_bound_tensor("COS", np.array([0.0]), out=FP32)
        assert b.tolist() == [2.0**-11]
        assert c.check(ref, c.abs_error_for("COS", FP32), result, b).passed
        assert c.abs_error_bound_tensor("COS", np.array([3.0]), out=FP32).tolist() == [2.0**-9]


def test_sin_bound() -> None:
    # SIN fp32 at x = 0 (ref 0).  Draft: err_bnd 0, so the interval is [0, normal_min]
    # and 3 * normal_min fails.  1.0: max(2**-11 * normal_min * 2, pi * normal_min) =
    # pi * normal_min: 3 * normal_min passes, 4 * normal_min fails.
    ref = np.array([0.0])
    with revision(DRAFT):
        b = c.abs_error_bound_tensor("SIN", np.array([0.0]))
        assert not c.check(ref, c.abs_error_for("SIN", FP32), _f32(3 * NMIN32), b).passed
    with revision(V1):
        b = c.abs_error_bound_tensor("SIN", np.array([0.0]), out=FP32)
        assert b.tolist() == [math.pi * NMIN32]
        assert c.check(ref, c.abs_error_for("SIN", FP32), _f32(3 * NMIN32), b).passed
        assert not c.check(ref, c.abs_error_for("SIN", FP32), _f32(4 * NMIN32), b).passed
        # x = 1: 2**-11 * 1 * 2 = 2**-10 (the draft: 2**-11 * 1 * 1).
        assert c.abs_error_bound_tensor("SIN", np.array([1.0]), out=FP32).tolist() == [2.0**-10]


def test_pow_bound() -> None:
    # POW fp16, x = 2, y = 3 (ref 8).  Draft: bound 2 * (1 + 3 ln 2) = 6.158883, err_bnd
    # 2**-10 * 8 * 6.158883 = 0.048116.  1.0: y log x = 2.079442; mul_err = 2**-10 * 5.5
    # * max(2.079442, 0.1 * 3) = 0.011169; exp_err = 2**-10 * 8 * (1 + 2 * (2.079442 +
    # 0.011169)) = 0.040478; err_bnd = 8 * expm1(0.011169) + 0.040478 = 0.130330.
    # 8.0625 is 0.0625 off: fails the draft, passes 1.0.
    x, y, ref = np.array([2.0]), np.array([3.0]), np.array([8.0])
    result = np.array([8.0625], dtype=np.float16)
    with revision(DRAFT):
        b = c.abs_error_bound_tensor("POW", x, y)
        assert b[0] == pytest.approx(6.158883, abs=1e-6)
        assert not c.check(ref, c.abs_error_for("POW", FP16), result, b).passed
    with revision(V1):
        b = c.abs_error_bound_tensor("POW", x, y, out=FP16, ref=ref)
        assert b[0] == pytest.approx(0.130330, abs=1e-6)
        assert c.check(ref, c.abs_error_for("POW", FP16), result, b).passed
        # x > 0 and y == 0: the result is 1, exactly; x == 0, y > 0: 0, exactly.
        b = c.abs_error_bound_tensor(
            "POW", np.array([2.0, 0.0]), np.array([0.0, 2.0]), out=FP16, ref=np.array([1, 0.0])
        )
        assert b.tolist() == [0.0, 0.0]
        one_up = np.array([1.0009765625, 0.0], dtype=np.float16)
        assert not c.check(np.array([1.0, 0.0]), c.abs_error_for("POW", FP16), one_up, b).passed
    with revision(DRAFT):
        # The draft's bound at x = 2, y = 0 is 2: 2**-10 * 1 * 2 allows 1 + 2**-10.
        b = c.abs_error_bound_tensor("POW", np.array([2.0]), np.array([0.0]))
        assert c.check(np.array([1.0]), c.abs_error_for("POW", FP16), one_up[:1], b).passed


# -- REDUCE_PRODUCT, RESIZE, CAST ------------------------------------------------------------


def test_reduce_product_floor_and_zero_sign() -> None:
    # n = 4, fp32, ref 0: draft err_bnd 0 (interval [0, normal_min]: 2**-140 passes);
    # 1.0 err_bnd = normal_min * ((1 + 2**-24)**4 - 1) ~ 2**-148: 2**-140 fails.
    def rp() -> c.ComplianceDescriptor:
        return c.reduce_product(FP32, 4)

    assert _passes(DRAFT, rp, 0.0, _f32(2.0**-140))
    assert not _passes(V1, rp, 0.0, _f32(2.0**-140))
    # An underflow to the wrong zero: ref -1e-50, result +0.0.  The draft's row demands
    # the sign; 1.0's REDUCE_PRODUCT text does not.
    assert not _passes(DRAFT, rp, -1e-50, _f32(0.0))
    assert _passes(V1, rp, -1e-50, _f32(0.0))


def test_resize_bound_has_a_20_ulp_floor_in_1_0() -> None:
    # bf16, max(abs(input)) = 1: draft err_bnd 0.006; 1.0 max(2**-7 * 1 * 20, 0.006) =
    # 0.15625.  The next bf16 above 1, 1.0078125, fails the draft and passes 1.0.
    def rs() -> c.ComplianceDescriptor:
        return c.resize(BF16, 1.0)

    result = np.array([1.0078125], dtype=BF16.storage)
    assert not _passes(DRAFT, rs, 1.0, result)
    assert _passes(V1, rs, 1.0, result)
    assert not _passes(V1, rs, 1.0, np.array([1.1640625], dtype=BF16.storage))  # 0.164 off


def test_cast_between_floats_may_round_toward_zero_in_1_0() -> None:
    # fp32 -> fp16 of 1 + 3 * 2**-12 (ulp 2**-10): round to nearest gives 1 + 2**-10
    # (0.25 ulp), toward zero 1.0 (0.75 ulp).  Draft: 0.5 ulp either way, so 1.0 fails;
    # 1.0: [|ref| - 1 ulp, |ref| + 0.5 ulp] with the correct sign, so 1.0 passes.
    ref = 1.0 + 3 * 2.0**-12

    def cast() -> c.ComplianceDescriptor:
        return c.cast(FP32, FP16)

    assert not _passes(DRAFT, cast, ref, np.array([1.0], np.float16))
    assert _passes(V1, cast, ref, np.array([1.0], np.float16))
    assert _passes(V1, cast, -ref, np.array([-1.0], np.float16))
    # Away from zero only half an ulp: 1 + 2 * 2**-10 is 1.25 ulp above.
    assert not _passes(V1, cast, ref, np.array([1.001953125], np.float16))
    # Integer to float stays 0.5 ulp.
    with revision(V1):
        from conformance.dtypes import I32

        assert c.cast(I32, FP16) == c.for_operator("CAST", FP16)


def test_zero_sign_operators() -> None:
    # RECIPROCAL fp32 underflow, ref -1e-40, result +0.0: the draft's row demands a zero
    # of the correct sign; 1.0's RECIPROCAL text does not (tosa_reference_check_fp_bnd
    # accepts either zero).  ADD keeps it in 1.0 ("flushed to zero of the appropriate
    # sign").
    def recip() -> c.ComplianceDescriptor:
        return c.for_operator("RECIPROCAL", FP32)

    def add() -> c.ComplianceDescriptor:
        return c.for_operator("ADD", FP32)

    assert not _passes(DRAFT, recip, -1e-40, _f32(0.0))
    assert _passes(V1, recip, -1e-40, _f32(0.0))
    assert not _passes(V1, add, -1e-40, _f32(0.0)) and _passes(V1, add, -1e-40, _f32(-0.0))


# -- dot products ----------------------------------------------------------------------------


def _dot(rev: str, ks: int, **kw) -> c.ComplianceDescriptor:
    with revision(rev):
        return c.dot_product("MATMUL", FP16, FP32, ks=ks, data_set=kw.pop("s", -1), **kw)


def test_dot_product_ksb_and_abs_bound() -> None:
    # fp16 output, fp32 accumulator, KS = 65.  Draft: ksb = ceil(65 / 2**13) = 1, limit
    # 1 unit.  1.0: ksb = ceil(65 / 2**(13 // 2)) = ceil(65 / 64) = 2, limit ABS_BOUND =
    # 2 * ksb = 4 units.  One unit is bound * 2**-11; bound 2048: 1 unit = 1.
    for rev, k, limit in ((DRAFT, 1, 1.0), (V1, 2, 4.0)):
        desc = _dot(rev, 65)
        with revision(rev):
            assert c.ksb(desc.params, FP16) == k  # type: ignore[arg-type]
            result = np.array([103.0], dtype=np.float16)  # 3 units above 100
            ok = c.check(np.array([100.0]), desc, result, np.array([2048.0])).passed
        assert ok is (limit >= 3)


def test_dot_product_statistics_limits() -> None:
    # T = 2000 outputs of 100.0625 for 100 (fp16 spacing at 100 is 2**-4), bound 2048 so
    # one unit is 1: error +0.0625 units each (KS = 64, ksb 1 in both), sum 125, sumsq
    # 7.8.  Draft: |sum| <= 2 * sqrt(2000) = 89.44 fails.  1.0: sqrt(10 * 1.6 * 2000) =
    # 178.9 passes; sumsq limits 0.4 * 2000 = 800 and 1.6 * 2000 = 3200.
    n = 2000
    ref = np.full(n, 100.0)
    result = np.full(n, 100.0625, dtype=np.float16)
    err_units = 0.0625
    for rev, sum_limit, sq_limit, ok in (
        (DRAFT, 2 * math.sqrt(n), 0.4 * n, False),
        (V1, 4 * math.sqrt(n), 1.6 * n, True),
    ):
        desc = _dot(rev, 64, s=3)
        with revision(rev):
            v = c.check(ref, desc, result, np.full(n, 2048.0))
        assert v.dot_product is not None
        assert v.dot_product.error_sum == pytest.approx(n * err_units)  # 125
        assert v.dot_product.error_sum_limit == pytest.approx(sum_limit)
        assert v.dot_product.error_sumsq_limit == pytest.approx(sq_limit)
        assert v.passed is ok


def test_dot_product_overflow_is_judged_in_the_output_type_in_1_0() -> None:
    # fp16 output, fp32 accumulator, KS = 64 (ksb 1), bound 65500, ref 60000, result 0.
    # Draft: (fp32)65500 is finite, so the element is checked and fails.  1.0: 65500 *
    # (1 + 2 * 2**-11) = 65563.96 rounds to inf in fp16: no accuracy limit, it passes.
    for rev, ok in ((DRAFT, False), (V1, True)):
        desc = _dot(rev, 64)
        with revision(rev):
            v = c.check(np.array([60000.0]), desc, np.array([0.0], np.float16), np.array([65500.0]))
        assert v.passed is ok


def test_dot_product_abs_inputs_are_floored_in_1_0() -> None:
    # fp16 input [0, -3]: draft |x| = [0, 3]; 1.0 max(|x|, 2**-14) = [2**-14, 3], also
    # for the weights and the bias.
    x = np.array([0.0, -3.0], dtype=np.float16)
    w = np.array([0.0, 1.0], dtype=np.float16)
    with revision(DRAFT):
        got = c.dot_product_bound_inputs(x, w, w, local_bound=True)
        assert got.weight is not None and got.bias is not None
        assert got.inputs[0].tolist() == [0.0, 3.0] and got.weight.tolist() == [0.0, 1.0]
    with revision(V1):
        got = c.dot_product_bound_inputs(x, w, w, local_bound=True)
        assert got.weight is not None and got.bias is not None
        assert got.inputs[0].tolist() == [2.0**-14, 3.0]
        assert got.weight.tolist() == [2.0**-14, 1.0]
        assert got.bias.tolist() == [2.0**-14, 1.0]


def test_a_declared_bias_always_counts_in_ksb_in_1_0() -> None:
    # CONV2D fp32, KS = 4, a zero bias: draft ksb = 4 + 0; 1.0: the bias reads as
    # normal_min > 0, so ksb = 4 + 1.  MATMUL declares no bias: 4 in both.
    for rev, conv_ksb in ((DRAFT, 4), (V1, 5)):
        with revision(rev):
            conv = c.dot_product("CONV2D", FP32, FP32, ks=4, data_set=0, bias_abs_max=0.0)
            mm = c.dot_product("MATMUL", FP32, FP32, ks=4, data_set=0)
            assert c.ksb(conv.params, FP32) == conv_ksb  # type: ignore[arg-type]
            assert c.ksb(mm.params, FP32) == 4  # type: ignore[arg-type]


# -- Appendix A ------------------------------------------------------------------------------


def test_data_sets_read_the_1_0_set_data_sequences() -> None:
    # S = 2, p = 0, k = 1, KS = 4: set_data(2*S+0, i) / 2 in the draft, set_data(3*S+0, i)
    # / 2 in 1.0.  S = 0 is the same in both (0 * S).
    i = np.arange(5)
    with revision(DRAFT):
        assert np.array_equal(tosa_mi_data(2, 4, 0, 1, i), set_data(4, i).astype(float) / 2)
        s0_draft = tosa_mi_data(0, 4, 0, 1, i)
    with revision(V1):
        assert np.array_equal(tosa_pro_fp_data(2, 4, 0, 1, i), set_data(6, i).astype(float) / 2)
        assert np.array_equal(tosa_pro_fp_data(0, 4, 0, 1, i), s0_draft)


def test_data_set_1_is_signed_in_1_0() -> None:
    # S = 1, p = 0, KS = 3, B = 2: draft (B/2) * (0.75 + 0.25 * set_data(3, i)) > 0;
    # 1.0 (B/2) * (+-0.75 + 0.25 * set_data(3, 2i+1)) with the sign of set_data(3, 2i).
    i = np.arange(64)
    with revision(DRAFT):
        draft = tosa_mi_data(1, 3, 0, 0, i, b=2.0)
        assert np.array_equal(draft, 0.75 + 0.25 * set_data(3, i).astype(float))
    with revision(V1):
        v1 = tosa_pro_fp_data(1, 3, 0, 0, i, b=2.0)
        sign = np.where(set_data(3, 2 * i) < 0, -0.75, 0.75)
        assert np.array_equal(v1, sign + 0.25 * set_data(3, 2 * i + 1).astype(float))
    assert (draft > 0).all() and (v1 < 0).any() and (v1 > 0).any()


def test_b_is_keyed_by_the_output_type_in_1_0() -> None:
    # fp16 inputs, fp16 accumulator, fp32 output: draft B by the accumulator (the narrower
    # of the two) = 255.875; 1.0 by the output, (fp16, fp32) = 65504.  The 1.0 table's
    # fp8 rows: (fp8e4m3, fp8e4m3) = 20, (fp8e5m2, fp16) = 224.
    from conformance.dtypes import FP8E4M3, FP8E5M2

    with revision(DRAFT):
        assert bound_b(FP16, FP16, FP32) == 255.875
    with revision(V1):
        assert bound_b(FP16, FP16, FP32) == 65504.0
        assert bound_b(FP8E4M3, FP8E4M3, FP8E4M3) == 20.0
        assert bound_b(FP8E5M2, FP16, FP16) == 224.0


# -- readings of the 1.0 text (reference/compliance/readings.py) -------------------------------


def test_infinite_reference_keeps_its_infinity_in_1_0() -> None:
    # EXP fp32 of +inf: 1.0's calcAbsErrorBound(inf, 3 + 2 * inf, 0, 1) is inf, and
    # tosa_reference_check_fp_bnd returns true for any result with a non-finite bound;
    # EXP's behavior table says +inf.  Read: only +inf passes (as in the draft).
    x, ref = np.array([np.inf]), np.array([np.inf])
    for rev in (DRAFT, V1):
        with revision(rev):
            b = c.abs_error_bound_tensor("EXP", x, out=FP32, ref=ref)
            assert b.tolist() == [np.inf]
            desc = c.abs_error_for("EXP", FP32)
            assert c.check(ref, desc, _f32(np.inf), b).passed
            assert not c.check(ref, desc, _f32(5.0), b).passed


def test_pow_err_base_is_that_of_in_out_t() -> None:
    # POW's 'is_same<T, fp32_t> ? 3 : 1' read with T = in_out_t.  fp32, x = 2, y = 0.5,
    # ref sqrt(2) = 1.4142136: y log x = 0.3465736; mul_err = 2**-23 * 5.5 *
    # max(0.3465736, 0.05) = 2.2723e-7; exp_err = 2**-23 * 1.4142136 * (3 + 2 *
    # 0.3465738) = 6.2265e-7; err_bnd = 1.4142136 * 2.2723e-7 + 6.2265e-7 = 9.4400e-7.
    # With err_base 1 it would be 6.0679e-7: 1.4142136 + 8e-7 passes only with 3.
    x, y, ref = np.array([2.0]), np.array([0.5]), np.array([math.sqrt(2.0)])
    with revision(V1):
        b = c.abs_error_bound_tensor("POW", x, y, out=FP32, ref=ref)
        assert b[0] == pytest.approx(9.4400e-7, rel=1e-4)
        result = _f32(math.sqrt(2.0) + 8e-7)
        assert c.check(ref, c.abs_error_for("POW", FP32), result, b).passed


def test_flushed_zero_is_judged_against_normal_min_of_the_output_type() -> None:
    # tosa_reference_check_fp_bnd's 'ref_min < normal_min()' names no type; read as
    # normal_min<in_t>.  fp16 ADD with reference 2**-20 (subnormal in fp16; 0.5 ulp =
    # 2**-25): the lower end 2**-20 - 2**-25 is below 2**-14, so a zero passes.  (With
    # fp64's normal_min, 2**-1022, it would fail.)
    with revision(V1):
        desc = c.for_operator("ADD", FP16)
        assert c.check(np.array([2.0**-20]), desc, np.array([0.0], np.float16)).passed
        # A normal reference: 2**-13, lower end 2**-13 - 2**-24 >= 2**-14: zero fails.
        assert not c.check(np.array([2.0**-13]), desc, np.array([0.0], np.float16)).passed


# -- end to end: expect() on 1.0 graphs, and the stored descriptors ----------------------------


def _expect_1_0(op: str, inputs: dict[str, np.ndarray], in_dt: str, out_dt: str, **attrs):
    from conformance.builder import single_operator_graph
    from reference.expectations import expect

    spec = load_revision(V1)
    graph = single_operator_graph(
        op,
        [(n, v.shape, in_dt) for n, v in inputs.items()],
        [("y", next(iter(inputs.values())).shape, out_dt)],
        attrs,
        spec=spec,
    )
    with spec_in_use(spec):
        return expect(graph, inputs, spec=spec)


def test_expect_gives_1_0_descriptors_on_1_0_graphs() -> None:
    # LOG fp32 of [1, e]: ABS_ERROR with the constant bound tensor 5; CAST fp32 -> fp16:
    # one ulp toward zero; COS fp16 of [0]: err_bnd 2**-5 * max(1, 2**-14) * 1 = 2**-5.
    exp = _expect_1_0("LOG", {"x": np.array([1.0, math.e], np.float32)}, "fp32", "fp32")
    chk = exp.checks["y"]
    assert chk.descriptor.mode is c.Mode.ABS_ERROR and chk.bound is not None
    assert chk.bound.tolist() == [5.0, 5.0]
    exp = _expect_1_0("CAST", {"x": np.array([1.0], np.float32)}, "fp32", "fp16")
    params = exp.checks["y"].descriptor.params
    assert isinstance(params, c.UlpParams) and params.toward_zero == 1.0
    exp = _expect_1_0("COS", {"x": np.array([0.0], np.float16)}, "fp16", "fp16")
    chk = exp.checks["y"]
    assert chk.descriptor.params == c.AbsErrorParams(0.0, 2.0, c.Magnitude.BOUND, 0.0)
    assert chk.bound is not None and chk.bound.tolist() == [2.0**-5]


def test_descriptors_round_trip_and_the_draft_json_is_unchanged() -> None:
    with revision(V1):
        for desc in (c.cast(FP32, FP16), c.abs_error_for("SIN", FP32)):
            assert c.ComplianceDescriptor.from_json(desc.to_json()) == desc
        assert c.cast(FP32, FP16).to_json()["params"]["toward_zero"] == 1.0
    with revision(DRAFT):
        assert c.for_operator("CAST", FP16).to_json()["params"] == {"ulp": 0.5, "zero_sign": True}


def test_other_data_is_checked_as_the_draft_said() -> None:
    # 1.0 names only Appendix A's data sets; data of no set (S = -1: edge values, random
    # draws) is checked with the same rule.  MATMUL fp16/fp32, KS = 1: ksb 1, ABS_BOUND
    # 2; bound 2048 (one unit = 1): 102 for 100 passes, 103 fails.
    desc = _dot(V1, 1)
    assert isinstance(desc.params, c.DotProductParams) and desc.params.data_set == -1
    with revision(V1):
        for got, ok in ((102.0, True), (103.0, False)):
            result = np.array([got], dtype=np.float16)
            assert c.check(np.array([100.0]), desc, result, np.array([2048.0])).passed is ok

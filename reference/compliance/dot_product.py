"""The dot product accuracy rule: a per-element error limit scaled by the abs-input
pass, and two statistical tests over the whole output (error sum and error variance).

The caller supplies ``out_bnd``, the fp64 result of running the operator on the
absolute values of its inputs (see ``bound_inputs.dot_product_bound_inputs``).  Errors
are measured in units of ``out_bnd * 2**(-1 - normal_frac(out))`` (half an ulp of the
bound, never less than ``normal_min(out)``), so a correctly rounded result of a
single product has an error of at most 1.

The per-element limit ABS_BOUND and the variance limit VARIANCE_ERROR_BOUND are
multiples of ksb (the revision's constants, revision_rules.DotProductRule); TOSA 1.1
makes them depend on the input types and the accumulator (``typed_bounds``):
:func:`abs_bound_units` and :func:`variance_units`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from conformance import dtypes
from conformance.compliance_descriptor import DotProductParams
from conformance.dtypes import FP32, DType
from conformance.rounding import round_to

from .revision_rules import DotProductRule, current

# The statistical tests are only meaningful, and only required by the spec, when the
# operator computes at least this many dot products (Appendix A, MIN_DOT_PRODUCTS).
MIN_DOT_PRODUCTS = 1000

# Data sets whose errors should not be biased one way, so the error-sum test applies.
# The other sets have mostly positive products, where a consistent rounding direction
# is legitimate.
UNBIASED_DATA_SETS = frozenset({3, 4, 5})

_JUST_OVER_ONE = float(np.nextafter(1.0, 2.0))

# TOSA 1.1's relaxed row of both tables: in_t one of these (a block-scaled composite by
# its value type) with an fp32 accumulator (out_t for operators without acc_t).
LOW_PRECISION_INPUTS = frozenset(
    t.name
    for t in (
        dtypes.FP8E5M2,
        dtypes.FP8E4M3,
        dtypes.FP6E3M2,
        dtypes.FP6E2M3,
        dtypes.FP4E2M1,
        dtypes.MXINT8,
    )
)
# The relaxed row: 2 * max(ksb, min(ksb, 64) * (1 << 10)) per element and
# 4 * 0.4 * max(ksb, min(ksb, 64) * (1 << 20)) for the variance.
RELAXED_TERMS = 64
RELAXED_ABS_SCALE = 1 << 10
RELAXED_VARIANCE_SCALE = 1 << 20
# fp32 inputs (the fp32 row of the ABS_BOUND table): 3 * 2 * ksb, for fp32 computed as
# several bf16 products.
FP32_INPUT_FACTOR = 3


def _value_type(t: DType) -> str:
    return t.block_value or t.name


def low_precision(params: DotProductParams) -> bool:
    """TOSA 1.1's relaxed row applies: an fp8 / fp6 / fp4 / mxint8 operand with an fp32
    accumulator.  Reading "dp-mixed-either" (mixed in_t / weight_t): the row is met when
    either operand's type is one of them, not in_t's alone."""
    return params.acc_dtype is FP32 and any(
        _value_type(t) in LOW_PRECISION_INPUTS for t in params.input_dtypes
    )


def abs_bound_units(params: DotProductParams, out: DType, rule: DotProductRule) -> float:
    """ABS_BOUND, the per-element limit in error units.  Where the rule is typed (1.1)
    the first row that applies: the relaxed one, then fp32 inputs (either operand, the
    same reading), else ``rule.abs_bound * ksb``."""
    k = ksb(params, out, rule)
    if rule.typed_bounds:
        if low_precision(params):
            return rule.abs_bound * max(k, min(k, RELAXED_TERMS) * RELAXED_ABS_SCALE)
        if any(t is FP32 for t in params.input_dtypes):
            return FP32_INPUT_FACTOR * rule.abs_bound * k
    return rule.abs_bound * k


def variance_units(params: DotProductParams, out: DType, rule: DotProductRule) -> int:
    """VARIANCE_ERROR_BOUND divided by ``rule.variance``: ksb, or in TOSA 1.1's relaxed
    row max(ksb, min(ksb, 64) * (1 << 20)) (the table has no fp32 row for it)."""
    k = ksb(params, out, rule)
    if rule.typed_bounds and low_precision(params):
        return max(k, min(k, RELAXED_TERMS) * RELAXED_VARIANCE_SCALE)
    return k


def ksb(params: DotProductParams, out: DType, rule: DotProductRule | None = None) -> int:
    """The per-element error limit, in units of the per-element error bound.

    An accumulator wider than the output absorbs ``2**(frac(acc) - frac(out))``
    additions per output ulp (TOSA 1.0: ``2**((frac(acc) - frac(out)) / 2)``, the
    quotient of two ints, so truncated: reading ``v1-ksb-exponent``); a
    non-zero bias is one more addition.
    """
    rule = rule or current().dot_product.value
    shift = params.acc_dtype.fp.normal_frac - out.fp.normal_frac
    if rule.halve_exponent:
        shift = int(shift / 2)  # C's int division truncates toward zero
    terms = math.ceil(params.ks / math.ldexp(1.0, shift))
    return terms + (1 if params.bias_abs_max > 0 else 0)


@dataclass(frozen=True)
class DotProductStats:
    """The statistical half of the rule.  A limit of None means that test does not
    apply (error sum outside data sets 3..5, or fewer than MIN_DOT_PRODUCTS outputs).
    """

    ksb: int
    count: int  # T, the number of dot products
    error_sum: float
    error_sum_limit: float | None
    error_sumsq: float
    error_sumsq_limit: float | None
    abs_bound: float = 1.0  # the per-element limit is abs_bound * ksb (1.0: ABS_BOUND)

    @property
    def error_sum_passed(self) -> bool:
        return self.error_sum_limit is None or abs(self.error_sum) <= self.error_sum_limit

    @property
    def error_sumsq_passed(self) -> bool:
        return self.error_sumsq_limit is None or self.error_sumsq <= self.error_sumsq_limit

    @property
    def passed(self) -> bool:
        return self.error_sum_passed and self.error_sumsq_passed

    def describe(self) -> str:
        def one(name: str, value: float, limit: float | None) -> str:
            if limit is None:
                return f"{name} {value:.4g} (not applicable)"
            return f"{name} {value:.4g} {'<=' if value <= limit else '>'} {limit:.4g}"

        total = one("|error sum|", abs(self.error_sum), self.error_sum_limit)
        sumsq = one("error sumsq", self.error_sumsq, self.error_sumsq_limit)
        return f"ksb {self.ksb}, T {self.count}: {total}, {sumsq}"


@dataclass(frozen=True)
class DotProductResult:
    ok: np.ndarray  # per-element test
    margin: np.ndarray  # |error| / ksb; 0 where the element is unconstrained
    error: np.ndarray  # signed error in units of the per-element bound
    stats: DotProductStats


def check_dot_product(
    ref: np.ndarray,
    actual: np.ndarray,
    out_bnd: np.ndarray,
    params: DotProductParams,
    out: DType,
    rule: DotProductRule | None = None,
) -> DotProductResult:
    """Apply the rule to fp64 copies of the reference, result and abs-input pass.

    ``rule`` holds the revision's constants (revision_rules.DotProductRule; the
    process's spec when None): the per-element limit is ``rule.abs_bound * ksb`` error
    units, the variance limit ``rule.variance * ksb * T``, the error-sum limit
    ``rule.error_sum * sqrt(ksb * T)``.
    """
    rule = rule or current().dot_product.value
    k = ksb(params, out, rule)
    limit = abs_bound_units(params, out, rule)
    half_ulp = math.ldexp(1.0, -1 - out.fp.normal_frac)
    with np.errstate(over="ignore", invalid="ignore"):
        if rule.overflow_in == "acc":
            # The draft asks whether the bound overflows the accumulator type.
            unbounded = np.isinf(out_bnd.astype(params.acc_dtype.storage).astype(np.float64))
        else:
            # 1.0: whether the bound, widened by ABS_BOUND error units, overflows out_t
            # (the result may then overflow within its error); a NaN bound has no
            # accuracy requirement either.
            widened = out_bnd * (1.0 + limit * half_ulp)
            unbounded = np.isnan(out_bnd) | np.isinf(
                round_to(out, np.where(np.isnan(widened), 0.0, widened)).astype(np.float64)
            )
    zero = ~unbounded & (out_bnd == 0.0)
    scaled = ~unbounded & ~zero
    unit = np.maximum(out_bnd * half_ulp, out.fp.normal_min)
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.where(scaled, (actual - ref) / unit, 0.0)
    ok = np.where(scaled, np.abs(err) <= limit, True)
    # Results beyond the output type's range: where the allowed interval reaches past
    # normal_max, the correctly signed infinity is the rounded result (as in
    # tosa_reference_check_fp), even when the accumulator itself did not overflow.
    # (1.0 states this itself: such bounds are unbounded above.)
    with np.errstate(invalid="ignore", over="ignore"):
        reach = limit * unit
        inf_ok = ((actual == np.inf) & (ref + reach > out.fp.normal_max)) | (
            (actual == -np.inf) & (ref - reach < -out.fp.normal_max)
        )
    inf_ok &= scaled & np.isfinite(ref) & (rule.overflow_in == "acc")
    # An infinite reference (an infinite input whose every term keeps its sign) is
    # met by the same infinity, whatever the bound: (inf - inf) / unit is no error
    # measure.  FFT2D's bound takes its exact zero twiddles as zero, while the terms
    # computed with them carry the infinity.
    inf_ok |= np.isinf(ref) & (actual == ref)
    ok = ok | inf_ok
    err = np.where(inf_ok, 0.0, err)
    # A zero bound means every product was zero: the result must be zero too.
    ok = np.where(zero, (ref == 0.0) & (actual == 0.0), ok)
    # The general rule that NaN inputs give NaN results still holds; a NaN reference
    # has a NaN bound, for which the rule's own arithmetic could never pass.
    ref_nan = np.isnan(ref)
    ok = np.where(ref_nan, np.isnan(actual), ok)
    err = np.where(ref_nan, 0.0, err)

    with np.errstate(invalid="ignore"):
        margin = np.where(scaled & ~ref_nan, np.abs(err) / limit, 0.0)
    # Failures keep margin > 1: a zero-bound or NaN mismatch has no finite ratio, and
    # an error just past ksb can round to a ratio of exactly 1.
    rounded_edge = scaled & np.isfinite(margin) & (margin <= 1)
    failed_margin = np.where(
        np.isfinite(margin) & (margin > 1),
        margin,
        np.where(rounded_edge & ~ref_nan, _JUST_OVER_ONE, np.inf),
    )
    margin = np.where(ok, margin, failed_margin)

    stats = _stats(err, k, limit, variance_units(params, out, rule), params, rule)
    return DotProductResult(ok=ok, margin=margin, error=err, stats=stats)


def _stats(
    err: np.ndarray,
    k: int,
    limit: float,
    var_units: int,
    params: DotProductParams,
    rule: DotProductRule,
) -> DotProductStats:
    """``limit`` is ABS_BOUND; ``var_units`` the variance limit over rule.variance (ksb,
    or 1.1's relaxed one), which the error-sum limit, sqrt(10 * VARIANCE_ERROR_BOUND *
    T), also scales with."""
    count = int(err.size)
    # Non-finite errors already fail the per-element test; leaving them out keeps the
    # reported sums meaningful for the rest.
    finite = np.where(np.isfinite(err), err, 0.0)
    applies = count >= MIN_DOT_PRODUCTS
    sum_applies = applies and params.data_set in UNBIASED_DATA_SETS
    return DotProductStats(
        ksb=k,
        count=count,
        error_sum=float(np.sum(finite)),
        error_sum_limit=rule.error_sum * math.sqrt(var_units * count) if sum_applies else None,
        error_sumsq=float(np.sum(finite * finite)),
        error_sumsq_limit=rule.variance * var_units * count if applies else None,
        abs_bound=rule.abs_bound if limit == rule.abs_bound * k else limit / k,
    )

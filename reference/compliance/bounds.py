"""Absolute error bounds, element-wise, as the spec's numeric accuracy helpers define
them.  Every function here turns a rule's parameters into ``err_bnd`` (an fp64 array of
allowed absolute errors) for ``fp_check.within_bound``; none of them decides pass or
fail.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from conformance.compliance_descriptor import AbsErrorParams, Magnitude
from conformance.dtypes import DType

if TYPE_CHECKING:
    from .revision_rules import AbsHelper

# Smallest positive normal fp64: below it (and at zero, inf, NaN) is_normal_fp64 is false.
_FP64_NORMAL_MIN = float(np.finfo(np.float64).tiny)

# RESIZE allows this fraction of the largest input magnitude as absolute error.
RESIZE_ERROR_FRACTION = 0.006


def ulp_size(ref: np.ndarray, out: DType) -> np.ndarray:
    """One ulp of ``out`` at each reference value, as tosa_reference_check_fp sizes it.

    The ulp follows the binade of the *reference* (not of the rounded result), and
    never drops below one ulp of ``normal_min`` so that subnormal results get the
    spacing of the smallest normal binade.  References that are not normal fp64 values
    (zero, fp64 subnormals, inf, NaN) get a zero ulp, as the pseudocode leaves them.
    """
    mag = np.abs(ref)
    normal = np.isfinite(mag) & (mag >= _FP64_NORMAL_MIN)
    # frexp gives mag = m * 2**e with m in [0.5, 1), so ilog2(mag) = e - 1.
    _, e = np.frexp(np.where(normal, mag, 1.0))
    pow2 = np.maximum(np.ldexp(1.0, e - 1), out.fp.normal_min)
    return np.where(normal, np.ldexp(pow2, -out.fp.normal_frac), 0.0)


def ulp_error_bound(ref: np.ndarray, num_ulp: float, out: DType) -> np.ndarray:
    """err_bnd for a rule stated as a number of ulp."""
    return ulp_size(ref, out) * num_ulp


def abs_error_scale(out: DType, normal_divisor: float) -> float:
    """calcAbsErrorBound's ``exp2(-normal_frac / normal_divisor)`` factor.

    The pseudocode's exp2 takes an int, so the quotient is truncated toward zero before
    the power is taken: fp32 with divisor 2 uses 2**-11, not 2**-11.5.
    """
    return math.ldexp(1.0, int(-out.fp.normal_frac / normal_divisor))


def calc_abs_error_bound(
    magnitude: np.ndarray,
    bounds_value: np.ndarray,
    lower_bound: float,
    normal_divisor: float,
    out: DType,
    helper: AbsHelper = "product",
) -> np.ndarray:
    """Element-wise calcAbsErrorBound, in the revision's form (revision_rules.AbsHelper):
    the draft's ``max(lower_bound, |magnitude| * bounds_value)``, or 1.0's
    ``max(|magnitude|, normal_min, lower_bound / bounds_value) * bounds_value``.

    An infinite ``bounds_value`` with a zero magnitude gives a zero bound rather than
    the NaN of ``inf * 0`` (for example EXP of -inf, whose result is exactly zero).
    """
    mag = np.abs(magnitude)
    scale = abs_error_scale(out, normal_divisor)
    defined = np.isfinite(bounds_value) | (mag != 0.0)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        if helper == "floored":
            value_bound = np.maximum(mag, out.fp.normal_min)
            if lower_bound > 0:
                value_bound = np.maximum(lower_bound / bounds_value, value_bound)
            return np.where(defined, scale * value_bound * bounds_value, 0.0)
        value_bound = mag * bounds_value
    if lower_bound > 0:
        value_bound = np.maximum(lower_bound, value_bound)
    return np.where(defined, scale * value_bound, 0.0)


def abs_error_bound(
    ref: np.ndarray, bound: np.ndarray, p: AbsErrorParams, out: DType, helper: AbsHelper = "product"
) -> np.ndarray:
    """err_bnd of an ABS_ERROR descriptor from its bound tensor (see AbsErrorParams)."""
    if p.magnitude is Magnitude.BOUND:
        return np.asarray(bound, dtype=np.float64)
    if p.magnitude is Magnitude.REFERENCE:
        return calc_abs_error_bound(ref, bound, p.lower_bound, p.normal_divisor, out, helper)
    return calc_abs_error_bound(
        bound, np.abs(bound) + p.input_offset, p.lower_bound, p.normal_divisor, out, helper
    )


def reduce_product_error_bound(
    ref: np.ndarray, n: int, out: DType, *, floor: bool = False
) -> np.ndarray:
    """err_bnd for REDUCE_PRODUCT: each of the n roundings may add half an ulp of
    relative error, compounded.  With ``floor`` (TOSA 1.0) the reference's magnitude
    counts as at least normal_min."""
    growth = math.pow(1.0 + math.ldexp(1.0, -out.fp.normal_frac - 1), n) - 1.0
    with np.errstate(invalid="ignore"):
        mag = np.abs(ref)
        if floor:
            mag = np.maximum(mag, out.fp.normal_min)
        return mag * growth


def resize_error_bound(
    ref: np.ndarray, input_abs_max: float, out: DType | None = None, ulp: float | None = None
) -> np.ndarray:
    """err_bnd for RESIZE: one constant for the whole tensor.  With ``ulp`` (TOSA 1.0)
    it is at least ``calcAbsErrorBound(max(abs(input)), ulp, 0, 1)``."""
    bnd = input_abs_max * RESIZE_ERROR_FRACTION
    if ulp is not None:
        assert out is not None
        floor = calc_abs_error_bound(
            np.array(input_abs_max), np.array(ulp), 0.0, 1.0, out, "floored"
        )
        bnd = max(bnd, float(floor))
    return np.full(np.shape(ref), bnd)

"""Mutants of the activation operators (reference/ops/activation.py): CLAMP."""

from __future__ import annotations

import numpy as np

from conformance.backends.mutants import (
    Result,
    mutant,
)
from conformance.backends.mutants.tools import attr_in_type as _attr_in_type
from conformance.backends.mutants.tools import output_of as _out
from conformance.dtypes import DType
from reference import arithmetic as ar
from reference.context import OpContext
from reference.engine import to_storage
from reference.ops.activation import CLAMP_BOUNDS_CLAUSE
from reference.registry import OpFunction


@mutant(
    "clamp-nan-to-min",
    ["CLAMP"],
    "floating point",
    "CLAMP built from fmax/fmin: a NaN input gives min_val instead of NaN",
    "CLAMP float vectors with NaN inputs",
)
def _clamp_nan_to_min(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    dt = ctx.dtype("in_out_t")
    if not dt.is_float:
        return result
    lo = _attr_in_type(ctx, "min_val", dt)
    x = ctx.arg("input").astype(np.float64)
    return {"output": np.where(np.isnan(x), lo, _out(result))}


@mutant(
    "clamp-accepts-inverted-bounds",
    ["CLAMP"],
    CLAMP_BOUNDS_CLAUSE,
    "missing ERROR_IF(max_val < min_val): the graph runs and every element becomes max_val",
    "CLAMP error vectors breaking 'max_val < min_val'",
    effect="accepts invalid graph",
)
def _clamp_accepts_inverted(original: OpFunction, ctx: OpContext) -> Result:
    dt = ctx.dtype("in_out_t")
    lo, hi = _attr_in_type(ctx, "min_val", dt), _attr_in_type(ctx, "max_val", dt)
    if not hi < lo:
        return original(ctx)
    x = ctx.arg("input")
    value = ar.as_float(x) if dt.is_float else ar.as_int(x)
    return {"output": np.minimum(np.maximum(value, lo), hi)}


# -- added by the second red-team pass --------------------------------------------------


@mutant(
    "clamp-zero-min-as-relu",
    ["CLAMP"],
    "min_val = 0 with max_val below the type's maximum, inputs above max_val",
    "a lowering pattern-matches CLAMP(x, 0, max) to RELU for any max (only RELU6 and "
    "RELU_N1_TO_1 are kept apart), so max_val is ignored when min_val is 0",
    "CLAMP vectors with min_val = 0, a max_val other than 6 or the type's maximum, and "
    "inputs above max_val (e.g. min 0, max 100, input 120)",
    breaks="CLAMP.tosac: result = apply_clip_s<in_out_t>(value, min_val, max_val): both "
    "bounds apply",
)
def _clamp_zero_min_relu(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # the ERROR_IF max_val < min_val
    dt = ctx.dtype("in_out_t")
    lo, hi = _attr_in_type(ctx, "min_val", dt), _attr_in_type(ctx, "max_val", dt)
    if lo != 0 or hi == 6 or hi == 1:
        return result
    x = ctx.arg("input")
    value = ar.as_float(x) if dt.is_float else ar.as_int(x)
    with np.errstate(invalid="ignore"):
        return {"output": np.where(value > hi, value, _out(result))}


def _rounded(dt: DType, v: np.ndarray) -> np.ndarray:
    return to_storage(np.asarray(v, dtype=np.float64), dt).astype(np.float64)


@mutant(
    "sigmoid-negative-by-symmetry",
    ["SIGMOID"],
    "floating point, x < 0 (below about -2 the error passes the bound)",
    "SIGMOID evaluates only the positive half and gets x < 0 as 1 - sigmoid(-x) in the "
    "tensor type: the subtraction cancels, so sigmoid(-20) is 0 instead of 2.06e-9",
    "SIGMOID vectors with negative inputs (x <= -3; fp32 -20 gives 0)",
    breaks="introduction, SIGMOID accuracy: err_bnd = calcAbsErrorBound<in_out_t>(out_ref, "
    "2 * (1+abs(x)), 0, 1), relative to the (tiny) result for x < 0",
)
def _sigmoid_symmetry(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    dt = ctx.dtype("in_out_t")
    x = ar.as_float(ctx.arg("input"))
    with np.errstate(all="ignore"):
        positive_half = _rounded(dt, ar.sigmoid(-x))
        folded = 1.0 - positive_half
    return {"output": np.where(x < 0, folded, _out(result))}


@mutant(
    "tanh-exp-ratio-overflows",
    ["TANH"],
    "floating point, x > log(type max) / 2 (fp32 / bf16 44.4, fp16 5.55) and +inf",
    "TANH as (exp(2x) - 1) / (exp(2x) + 1) in the tensor type: exp(2x) overflows to "
    "infinity and inf / inf is NaN, so tanh of a large positive input is NaN, not 1",
    "TANH vectors with large positive inputs (fp16 x = 6, fp32 x = 50, +inf)",
    breaks="introduction, TANH accuracy: within calcAbsErrorBound<in_out_t>(out_ref, "
    "4 * (1+abs(x)), 0.5, 1) of the fp64 tanh(x) (1 for large x); NaN only from a NaN input",
)
def _tanh_overflow(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    dt = ctx.dtype("in_out_t")
    x = ar.as_float(ctx.arg("input"))
    threshold = np.log(dt.finite_range[1]) / 2
    return {"output": np.where(x > threshold, np.nan, _out(result))}


@mutant(
    "sigmoid-saturates-at-8",
    ["SIGMOID"],
    "floating point, 8 <= x where the result is not yet 1 in the type",
    "a fast SIGMOID returns 1 for x >= 8 (a table or polynomial fitted to [-8, 8] with "
    "the top clamped): 1 - sigmoid(8) is 3.4e-4, far outside the bound up to about "
    "x = 13 in fp32",
    "SIGMOID vectors whose inputs sweep the binades up to saturation (x in [8, 16))",
    breaks="introduction, SIGMOID accuracy: err_bnd = calcAbsErrorBound<in_out_t>(out_ref, "
    "2 * (1+abs(x)), 0, 1) of the fp64 sigmoid(x), for every x",
)
def _sigmoid_saturates(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    x = ar.as_float(ctx.arg("input"))
    with np.errstate(invalid="ignore"):
        return {"output": np.where(x >= 8.0, 1.0, _out(result))}


# Abramowitz & Stegun 7.1.26: |error| <= 1.5e-7 absolute
_AS_P = 0.3275911
_AS_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


@mutant(
    "erf-abramowitz-stegun",
    ["ERF"],
    "floating point, |x| below about 4 (where erf is not 1 in the type)",
    "ERF from the Abramowitz-Stegun 7.1.26 formula (absolute error 1.5e-7, common in GPU "
    "kernels): its error is absolute, so small results are far outside 5 ulp "
    "(erf(0) is 1e-9, not 0)",
    "ERF vectors with |x| < 1, the nearer 0 the surer (and 0 itself)",
    breaks="introduction, ERF accuracy: 'the result must be within 5 ulp of the "
    "mathematical result'",
)
def _erf_as(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)  # its shape check
    x = ar.as_float(ctx.arg("input"))
    with np.errstate(all="ignore"):
        ax = np.abs(x)
        t = 1.0 / (1.0 + _AS_P * ax)
        poly = t * (_AS_A[0] + t * (_AS_A[1] + t * (_AS_A[2] + t * (_AS_A[3] + t * _AS_A[4]))))
        y = 1.0 - poly * np.exp(-ax * ax)
    return {"output": np.where(np.isnan(x), np.nan, np.copysign(y, x))}


@mutant(
    "clamp-rejects-equal-bounds",
    ["CLAMP"],
    "min_val == max_val",
    "the bounds check is max_val <= min_val (off by one): a CLAMP with equal bounds, "
    "which sets every value to that constant, is refused",
    "valid CLAMP vectors with min_val == max_val (e.g. both 0, or both 6)",
    effect="rejects valid graph",
    breaks="CLAMP.tosac: ERROR_IF(max_val < min_val): equal bounds are valid",
)
def _clamp_rejects_equal(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # the real ERROR_IF(max_val < min_val)
    dt = ctx.dtype("in_out_t")
    lo, hi = _attr_in_type(ctx, "min_val", dt), _attr_in_type(ctx, "max_val", dt)
    ctx.error_if(
        bool(hi == lo), "backend support: min_val < max_val", f"min_val={lo}, max_val={hi}"
    )
    return result

"""The mutants: one realistic implementation bug each (docs/mutants.md is the table).

Each bug is one that real backends have shipped or that their authors are known to
get wrong: rounding modes, ignored attributes, reduced-precision arithmetic, NaN and
signed-zero handling, index arithmetic, and ERROR_IF checks left out or too strict.
Wrappers call the reference implementation first wherever they can, so that the
operator's ERROR_IFs and REQUIREs still hold and only the injected bug differs.

This module holds the type-conversion and element-wise mutants and gathers the
others (``mutant_catalog_tensor``, ``mutant_catalog_values``, ``mutant_catalog_shapes``)
into :data:`CATALOGUE`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from conformance.backends.mutant_tools import (
    CATALOGUE,
    CONV_OPS,
    DOT_OPS,
    FP8,
    FP8_OPS,
    WEIGHTED_OPS,
    add_ulps,
    round_mantissa,
    wraps,
)
from conformance.backends.mutant_tools import attr_in_type as _attr_in_type
from conformance.backends.mutant_tools import broadcast_pair as _pair
from conformance.backends.mutant_tools import output_of as _out
from conformance.backends.mutant_tools import register as _add
from conformance.backends.mutants import (
    HelperPatch,
    Mutant,
    Result,
    Wrapper,
    skipping_error_if,
    with_attrs,
    with_inputs,
    with_values,
)
from conformance.dtypes import BF16, I32
from reference import arithmetic as ar
from reference.context import OpContext
from reference.ops import type_conversion as tc
from reference.registry import OpFunction

__all__ = [
    "CATALOGUE",
    "CONV_OPS",
    "DOT_OPS",
    "FP8",
    "FP8_OPS",
    "WEIGHTED_OPS",
    "add_ulps",
    "round_mantissa",
    "wraps",
]

# == type conversion =======================================================================


@wraps(
    "cast-round-half-away",
    ["CAST"],
    "float -> integer",
    "round_to_nearest_int rounds ties away from zero (C lround) instead of to even",
    "CAST float->int vectors holding x.5 values (2.5 -> 2 not 3, -0.5 -> 0 not -1)",
)
def _cast_round_half_away(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    in_t, out_t = ctx.dtype("in_t"), ctx.dtype("out_t")
    if not (in_t.is_float and out_t.is_int):
        return result
    f = ctx.arg("input").astype(np.float64)
    t = np.trunc(f)
    away = np.clip(t + np.sign(f), out_t.min, out_t.max)
    with np.errstate(invalid="ignore"):  # inf - inf: not a tie
        tie = np.abs(f - t) == 0.5
    return {"output": np.where(tie, away, _out(result)).astype(np.int64)}


@wraps(
    "cast-int-narrow-saturates",
    ["CAST"],
    "i16/i32 -> narrower integer",
    "integer narrowing saturates to the output range instead of keeping the low bits",
    "CAST i32->i8 / i32->i16 / i16->i8 vectors with values outside the output range",
)
def _cast_int_saturates(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    in_t, out_t = ctx.dtype("in_t"), ctx.dtype("out_t")
    if not (in_t.is_int and out_t.is_int and out_t.bits < in_t.bits):
        return result
    return {"output": np.clip(ar.as_int(ctx.arg("input")), out_t.min, out_t.max)}


@wraps(
    "cast-bf16-truncates",
    ["CAST"],
    "any -> bf16",
    "conversion to bf16 drops the low 16 bits of the fp32 value (round toward zero)",
    "CAST fp32->bf16 (and int->bf16) vectors with values not exact in bf16",
)
def _cast_bf16_truncates(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if ctx.dtype("out_t") is not BF16:
        return result
    assert BF16.normal_frac is not None
    return {"output": round_mantissa(_out(result), BF16.normal_frac, np.trunc)}


@wraps(
    "cast-fp8-saturates",
    ["CAST"],
    "any -> fp8e4m3 / fp8e5m2",
    "fp8 conversion uses OCP saturating mode: overflow gives +-max instead of NaN (e4m3) "
    "or infinity (e5m2)",
    "CAST to fp8 vectors with values (or infinities) beyond the fp8 range",
)
def _cast_fp8_saturates(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    out_t = ctx.dtype("out_t")
    if out_t not in FP8:
        return result
    x = ctx.arg("input").astype(np.float64)
    return {"output": np.where(np.isnan(x), np.nan, np.clip(x, out_t.min, out_t.max))}


@wraps(
    "fp8-denormals-flushed",
    FP8_OPS,
    "fp8e4m3 / fp8e5m2 inputs",
    "fp8 subnormal inputs are read as zero (denormals-are-zero), which the spec does not "
    "allow for fp8",
    "any fp8 vector with subnormal inputs: CAST from fp8, fp8 convolutions, data movement",
)
def _fp8_denormals_flushed(original: OpFunction, ctx: OpContext) -> Result:
    changes = {}
    for names in ctx.operands.inputs.values():
        for n in names:
            dt = ctx.block.tensors[n].dtype
            if dt not in FP8:
                continue
            assert dt.normal_min is not None
            v = np.asarray(ctx.values[n])
            f = v.astype(np.float64)
            sub = (f != 0) & (np.abs(f) < dt.normal_min)
            if sub.any():
                changes[n] = np.where(sub, np.copysign(0.0, f), f).astype(v.dtype)
    return original(with_values(ctx, changes) if changes else ctx)


def _negative_ties(product: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """Where ``product / 2**shift`` is exactly halfway and negative: round-half-up
    goes toward zero there, round-half-away does not."""
    s = np.where((shift >= 2) & (shift <= 62), shift, 2)
    half = np.left_shift(np.int64(1), s - 1)
    return (product < 0) & ((product & (2 * half - 1)) == half)


def _scale_32_away(original: Callable[..., Any]) -> Callable[..., Any]:
    def scale_32(value: Any, multiplier: Any, shift: Any, double_round: bool) -> Any:
        result, checks = original(value, multiplier, shift, double_round)
        s = np.where((shift >= 2) & (shift <= 62), shift, 2)
        half = np.left_shift(np.int64(1), s - 1)
        safe = np.where((value >= -half) & (value < half), value, 0)
        tie = _negative_ties(safe * multiplier, shift)
        if double_round:  # the two-stage rounding of shifts above 31 is left alone
            tie = tie & (s <= 31)
        return ar.wrap(result - tie, 32), checks

    return scale_32


def _scale_16_away(original: Callable[..., Any]) -> Callable[..., Any]:
    def scale_16(value: Any, multiplier: Any, shift: Any) -> Any:
        result, checks = original(value, multiplier, shift)
        return result - _negative_ties(value * multiplier, shift), checks

    return scale_16


_add(
    Mutant(
        "rescale-round-half-away",
        ("RESCALE",),
        "all (scale32 and scale16)",
        "apply_scale rounds ties away from zero (gemmlowp/TFLite style) instead of half up",
        "RESCALE vectors whose scaled value is a negative exact tie (-1.5 -> -1, not -2)",
        helpers=(
            HelperPatch(tc, "_scale_32", _scale_32_away),
            HelperPatch(tc, "_scale_16", _scale_16_away),
        ),
    )
)


@wraps(
    "rescale-double-round-ignored",
    ["RESCALE"],
    "scale32 with double_round, shift > 31",
    "double_round is ignored: one rounding step instead of two",
    "RESCALE double_round vectors with shift > 31 and values near a rounding boundary",
)
def _rescale_double_round_ignored(original: OpFunction, ctx: OpContext) -> Result:
    if bool(ctx.attr("scale32", False)) and bool(ctx.attr("double_round", False)):
        return original(with_attrs(ctx, double_round=False))
    return original(ctx)


@wraps(
    "rescale-per-channel-ignored",
    ["RESCALE"],
    "per_channel",
    "per_channel is ignored: channel 0's multiplier and shift scale every channel",
    "per-channel RESCALE vectors whose channels have different multipliers or shifts",
)
def _rescale_per_channel_ignored(original: OpFunction, ctx: OpContext) -> Result:
    m, s = np.asarray(ctx.arg("multiplier")), np.asarray(ctx.arg("shift"))
    if not bool(ctx.attr("per_channel", False)) or m.size < 2 or s.size < 2:
        return original(ctx)
    first_m = np.full_like(m, m.reshape(-1)[0])
    return original(with_inputs(ctx, multiplier=first_m, shift=np.full_like(s, s.reshape(-1)[0])))


@wraps(
    "rescale-accepts-double-round-scale16",
    ["RESCALE"],
    "scale32 false, double_round true",
    "missing ERROR_IF(!scale32 && double_round): the invalid graph runs with one rounding",
    "RESCALE error vectors breaking '!scale32 && double_round'",
    effect="accepts invalid graph",
)
def _rescale_accepts_double_round(original: OpFunction, ctx: OpContext) -> Result:
    return original(skipping_error_if(ctx, tc.DOUBLE_ROUND_CLAUSE))


# == integer element-wise =====================================================================


@wraps(
    "ars-round-ignored",
    ["ARITHMETIC_RIGHT_SHIFT"],
    "round = true",
    "the round attribute is ignored: the shift always truncates (floor)",
    "ARITHMETIC_RIGHT_SHIFT round=true vectors where the last bit shifted out is 1",
)
def _ars_round_ignored(original: OpFunction, ctx: OpContext) -> Result:
    if bool(ctx.attr("round", False)):
        return original(with_attrs(ctx, round=False))
    return original(ctx)


@wraps(
    "logical-right-shift-sign-extends",
    ["LOGICAL_RIGHT_SHIFT"],
    "all",
    "the shift is done on the signed type, so negative values shift in ones",
    "LOGICAL_RIGHT_SHIFT vectors with negative inputs and a non-zero shift",
)
def _lrs_sign_extends(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)  # its REQUIREs
    a, b = _pair(ctx, ar.as_int)
    return {"output": np.right_shift(a, b)}


@wraps(
    "intdiv-floors",
    ["INTDIV"],
    "all",
    "division floors (Python //, numpy floor_divide) instead of truncating toward zero",
    "INTDIV vectors with inexact quotients of mixed sign (-7 / 2 = -3, not -4)",
)
def _intdiv_floors(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)  # its REQUIREs (no division by zero, no INT_MIN / -1)
    a, b = _pair(ctx, ar.as_int)
    return {"output": a // b}


@wraps(
    "mul-shift-truncates",
    ["MUL"],
    "i32 with shift > 0",
    "the shifted product is truncated (floor) instead of rounded half up",
    "MUL i32 vectors with shift > 0 whose product has bit shift-1 set",
)
def _mul_shift_truncates(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    shift = int(np.asarray(ctx.arg("shift")).reshape(-1)[0])
    if ctx.dtype("in_t") is not I32 or shift == 0:
        return result
    a, b = _pair(ctx, ar.as_int)
    return {"output": np.right_shift(a * b, shift)}


@wraps(
    "table-i16-interpolation-rounded",
    ["TABLE"],
    "i16 (513-entry table)",
    "the interpolated i16 lookup is rounded to whole table steps (its 7 fraction bits lost)",
    "TABLE i16 vectors whose inputs fall between table entries with a non-zero slope",
)
def _table_rounded(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if ctx.dtype("in_t").bits != 16:
        return result
    out = ar.as_int(_out(result))
    return {"output": ((out + 64) >> 7) << 7}


@wraps(
    "table-i8-unsigned-index",
    ["TABLE"],
    "i8 (256-entry table)",
    "the i8 value indexes the table as an unsigned byte (x & 0xFF) instead of x + 128",
    "any TABLE i8 vector whose table halves differ (table[i] != table[i ^ 128])",
)
def _table_unsigned_index(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if ctx.dtype("in_t").bits != 8:
        return result
    table = ar.as_int(ctx.arg("table")).reshape(-1)
    return {"output": table[ar.as_int(ctx.arg("input")) & 0xFF]}


# == float element-wise, comparison, selection ===================================================


@wraps(
    "argmax-last-max",
    ["ARGMAX"],
    "all",
    "the scan keeps the last of equal maxima (>= instead of >)",
    "ARGMAX vectors with repeated maxima along the axis",
)
def _argmax_last(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)  # its ERROR_IFs (axis range) before the axis is used
    axis = int(ctx.attr("axis"))
    x = ctx.arg("input")
    flipped = _out(original(with_inputs(ctx, input=np.flip(x, axis))))
    return {"output": (x.shape[axis] - 1 - flipped).astype(np.int32)}


@wraps(
    "minmax-nan-dropped",
    ["MAXIMUM", "MINIMUM"],
    "floating point",
    "NaN is not propagated: the other operand is returned (IEEE maxNum / C fmax)",
    "MAXIMUM/MINIMUM vectors with a NaN in one operand only",
)
def _minmax_nan_dropped(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if not ctx.dtype("in_out_t").is_float:
        return result
    a, b = _pair(ctx, ar.as_float)
    out = np.where(np.isnan(a) & ~np.isnan(b), b, _out(result))
    return {"output": np.where(np.isnan(b) & ~np.isnan(a), a, out)}


@wraps(
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


@wraps(
    "clamp-accepts-inverted-bounds",
    ["CLAMP"],
    "max_val < min_val",
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


@wraps(
    "greater-equal-nan-true",
    ["GREATER_EQUAL"],
    "floating point",
    "GREATER_EQUAL computed as !(a < b), which is true when either operand is NaN",
    "GREATER_EQUAL float vectors with NaN operands",
)
def _greater_equal_nan(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if not ctx.dtype("in_t").is_float:
        return result
    a, b = _pair(ctx, ar.as_float)
    return {"output": _out(result) | np.isnan(a) | np.isnan(b)}


@wraps(
    "negate-loses-negative-zero",
    ["NEGATE"],
    "floating point",
    "NEGATE computed as 0 - x, so NEGATE(+0) is +0 instead of -0",
    "NEGATE float vectors with zero inputs (EXACT_NAN checks the sign of zero)",
)
def _negate_zero(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if not ctx.dtype("in_out_t").is_float:
        return result
    return {"output": 0.0 - ctx.arg("input1").astype(np.float64)}


_NEGATE_ZP_CLAUSES = (
    "in_out_t != i8_t && input1_zp != 0",
    "in_out_t != i8_t && output_zp != 0",
)


@wraps(
    "negate-accepts-zero-point",
    ["NEGATE"],
    "i16 / i32 with a zero point",
    "missing ERROR_IF on zero points of non-i8 NEGATE: they are applied instead of refused",
    "NEGATE error vectors breaking 'in_out_t != i8_t && input1_zp != 0' (or output_zp)",
    effect="accepts invalid graph",
)
def _negate_accepts_zp(original: OpFunction, ctx: OpContext) -> Result:
    return original(skipping_error_if(ctx, *_NEGATE_ZP_CLAUSES))


def _ulp_error(n: float) -> Wrapper:
    def wrapper(original: OpFunction, ctx: OpContext) -> Result:
        return {"output": add_ulps(_out(original(ctx)), ctx.dtype("in_out_t"), n)}

    return wrapper


wraps(
    "exp-5-ulp",
    ["EXP"],
    "floating point",
    "EXP from a fast approximation 5 ulp off (passes only where the bound is wide, |x| > 1.25)",
    "EXP vectors with |x| < 1.25 (the ABS_ERROR bound is (1 + |x|) ulp there)",
)(_ulp_error(5))

wraps(
    "log-7-ulp",
    ["LOG"],
    "floating point",
    "LOG from a fast approximation 7 ulp off (the spec allows 5)",
    "any LOG vector with finite non-zero results",
)(_ulp_error(7))


@wraps(
    "reciprocal-fast-approx",
    ["RECIPROCAL"],
    "fp32 (fp16 and bf16 results stay within 1 ulp)",
    "RECIPROCAL from a 12-bit hardware estimate (x86 rcpps style) without a Newton step",
    "RECIPROCAL fp32 vectors",
)
def _reciprocal_approx(original: OpFunction, ctx: OpContext) -> Result:
    return {"output": round_mantissa(_out(original(ctx)), 11)}


# The other catalogue modules register as they are imported; importing this module
# therefore yields the whole catalogue.
from conformance.backends import (  # noqa: E402 - after this module's own mutants
    mutant_catalog_shapes,
    mutant_catalog_tensor,
    mutant_catalog_values,
    mutant_denormals,
)

del mutant_catalog_shapes, mutant_catalog_tensor, mutant_catalog_values, mutant_denormals

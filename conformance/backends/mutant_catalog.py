"""The mutants: one realistic implementation bug each (docs/mutants.md is the table).

Each bug is one that real backends have shipped or that their authors are known to
get wrong: rounding modes, ignored attributes, reduced-precision arithmetic, NaN and
signed-zero handling, index arithmetic, and ERROR_IF checks left out or too strict.
Wrappers call the reference implementation first wherever they can, so that the
operator's ERROR_IFs and REQUIREs still hold and only the injected bug differs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from conformance.backends.mutants import (
    Effect,
    HelperPatch,
    Mutant,
    Result,
    Wrapper,
    skipping_error_if,
    with_attrs,
    with_inputs,
    with_values,
)
from conformance.dtypes import BF16, FP8E4M3, FP8E5M2, FP32, I32, I48, DType
from conformance.spec import load_spec
from reference import arithmetic as ar
from reference.broadcast import apply_broadcast
from reference.context import OpContext
from reference.engine import to_storage
from reference.ops import image, tensor_conv, tensor_pool_fft
from reference.ops import type_conversion as tc
from reference.registry import OpFunction

CATALOGUE: dict[str, Mutant] = {}

CONV_OPS = ("CONV2D", "CONV3D", "DEPTHWISE_CONV2D", "TRANSPOSE_CONV2D")
WEIGHTED_OPS = (*CONV_OPS, "FULLY_CONNECTED")
DOT_OPS = (*WEIGHTED_OPS, "MATMUL")
FP8 = (FP8E4M3, FP8E5M2)
# Operators with a mode that binds an fp8 type.
FP8_OPS = tuple(
    sorted(
        op.name
        for op in load_spec().operators.values()
        if any(dt.startswith("fp8") for m in op.modes for dt in m.bindings.values())
    )
)


def _add(mutant: Mutant) -> None:
    if mutant.name in CATALOGUE:
        raise RuntimeError(f"mutant {mutant.name} is defined twice")
    CATALOGUE[mutant.name] = mutant


def wraps(
    name: str,
    operators: Iterable[str],
    modes: str,
    bug: str,
    catches: str,
    effect: Effect = "wrong result",
) -> Callable[[Wrapper], Wrapper]:
    """Register the decorated ``(original, ctx) -> outputs`` as mutant ``name``."""

    def register(fn: Wrapper) -> Wrapper:
        _add(Mutant(name, tuple(operators), modes, bug, catches, effect, wrap=fn))
        return fn

    return register


# -- small tools -------------------------------------------------------------------------


def _out(result: Result, name: str = "output") -> np.ndarray:
    value = result[name]
    assert not isinstance(value, list)
    return np.asarray(value)


def _pair(ctx: OpContext, as_type: Callable[[np.ndarray], np.ndarray]) -> tuple[Any, Any]:
    """input1 and input2 broadcast to the output (the original has checked the shapes)."""
    shape = ctx.out_shape()
    a = as_type(apply_broadcast(ctx.arg("input1"), shape))
    b = as_type(apply_broadcast(ctx.arg("input2"), shape))
    return a, b


def _ulp(y: np.ndarray, dt: DType) -> np.ndarray:
    """One ulp of ``dt`` in the binade of ``y`` (never below that of normal_min)."""
    assert dt.normal_min is not None and dt.normal_frac is not None
    _, e = np.frexp(y)  # |y| = m * 2**e with 0.5 <= m < 1
    e_min = int(np.log2(dt.normal_min))
    return np.ldexp(1.0, np.maximum(e.astype(np.int64) - 1, e_min) - dt.normal_frac)


def add_ulps(y: np.ndarray, dt: DType, n: float) -> np.ndarray:
    """``y`` moved ``n`` ulp of ``dt`` away from zero (zeros and non-finite kept)."""
    y = np.asarray(y, dtype=np.float64)
    moved = y + np.sign(y) * n * _ulp(y, dt)
    return np.where(np.isfinite(y) & (y != 0), moved, y)


def round_mantissa(
    x: np.ndarray, frac_bits: int, rounding: Callable[[np.ndarray], np.ndarray] = np.rint
) -> np.ndarray:
    """``x`` (fp64) with ``frac_bits`` stored mantissa bits, the exponent range left
    as it is; ``rounding`` np.rint (nearest even) or np.trunc (toward zero)."""
    m, e = np.frexp(np.asarray(x, dtype=np.float64))
    return np.ldexp(rounding(np.ldexp(m, frac_bits + 1)), e - frac_bits - 1)


def _attr_in_type(ctx: OpContext, name: str, dt: DType) -> Any:
    """An in_out_t attribute as the operator sees it (floats rounded to the type)."""
    raw = np.asarray(ctx.attr(name))
    if dt.is_float:
        return to_storage(raw.astype(np.float64), dt).astype(np.float64)
    return raw.astype(np.int64)


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


# == dot products ================================================================================


def _no_dilation(original: Callable[..., Any]) -> Callable[..., Any]:
    def conv_axes(*args: Any, **kwargs: Any) -> Any:
        return [dataclasses.replace(a, dilation=1) for a in original(*args, **kwargs)]

    return conv_axes


_add(
    Mutant(
        "conv-dilation-ignored",
        ("CONV2D", "CONV3D", "DEPTHWISE_CONV2D"),
        "dilation > 1",
        "dilation is ignored in the input address (the output size still follows it)",
        "convolution vectors with dilation > 1",
        helpers=(HelperPatch(tensor_conv, "_conv_axes", _no_dilation),),
    )
)


def _negated_out_pad(original: Callable[..., Any]) -> Callable[..., Any]:
    def transpose_span(self: Any, k: int) -> Any:
        return original(dataclasses.replace(self, pad=-self.pad), k)

    return transpose_span


_add(
    Mutant(
        "transpose-conv-out-pad-negated",
        ("TRANSPOSE_CONV2D",),
        "out_pad_top or out_pad_left != 0",
        "out_pad is applied with the wrong sign, as a crop like a convolution's padding",
        "TRANSPOSE_CONV2D vectors with non-zero out_pad_top / out_pad_left",
        helpers=(HelperPatch(tensor_conv._Axis, "transpose_span", _negated_out_pad),),
    )
)


@wraps(
    "conv-bias-first-channel",
    WEIGHTED_OPS,
    "per-channel bias (BC > 1)",
    "the bias is always broadcast from element 0, as if BC were 1",
    "convolution / FULLY_CONNECTED vectors with a per-channel bias",
)
def _bias_first_channel(original: OpFunction, ctx: OpContext) -> Result:
    b = np.asarray(ctx.arg("bias"))
    if b.size < 2:
        return original(ctx)
    return original(with_inputs(ctx, bias=np.full_like(b, b.reshape(-1)[0])))


@wraps(
    "dot-input-zp-ignored",
    DOT_OPS,
    "i8 with input_zp / A_zp != 0",
    "the input zero point is not subtracted (the weight zero point still is)",
    "i8 convolution / FULLY_CONNECTED / MATMUL vectors with a non-zero input zero point",
)
def _input_zp_ignored(original: OpFunction, ctx: OpContext) -> Result:
    key = "A_zp" if ctx.name == "MATMUL" else "input_zp"
    if not ctx.attr(key, 0):
        return original(ctx)
    return original(with_attrs(ctx, **{key: 0}))


@wraps(
    "depthwise-channel-order",
    ["DEPTHWISE_CONV2D"],
    "channel multiplier M > 1 and C > 1",
    "output channels are laid out m * C + c instead of c * M + m",
    "DEPTHWISE_CONV2D vectors with C > 1 and M > 1",
)
def _depthwise_channel_order(original: OpFunction, ctx: OpContext) -> Result:
    out = _out(original(ctx))
    c = ctx.input_tensor("input").shape[-1]
    m = ctx.input_tensor("weight").shape[-1]
    lead = out.shape[:-1]
    return {"output": out.reshape(*lead, c, m).swapaxes(-1, -2).reshape(out.shape)}


def _dot_inputs(ctx: OpContext) -> tuple[str, str]:
    return ("A", "B") if ctx.name == "MATMUL" else ("input", "weight")


@wraps(
    "dot-fp32-inputs-tf32",
    DOT_OPS,
    "fp32 inputs",
    "fp32 products formed from TF32 inputs (10-bit mantissa), as tensor cores do by default",
    "fp32 MATMUL / FULLY_CONNECTED / convolution vectors",
)
def _tf32(original: OpFunction, ctx: OpContext) -> Result:
    if ctx.dtype("in_t") is not FP32:
        return original(ctx)
    changes = {}
    with np.errstate(over="ignore"):
        for name in _dot_inputs(ctx):
            changes[name] = round_mantissa(ctx.arg(name), 10).astype(np.float32)
    return original(with_inputs(ctx, **changes))


def _fp16_sum(terms: Iterable[np.ndarray], shape: tuple[int, ...]) -> np.ndarray:
    """Sequential accumulation in fp16: every partial sum is rounded to fp16."""
    acc = np.zeros(shape, np.float16)
    with np.errstate(all="ignore"):
        for t in terms:
            acc = (acc.astype(np.float64) + t).astype(np.float16)
    return acc.astype(np.float64)


@wraps(
    "dot-fp32-accumulated-in-fp16",
    ["MATMUL", "FULLY_CONNECTED"],
    "fp32 output (fp16/bf16/fp32 inputs with fp32 accumulate)",
    "the dot product is accumulated in fp16 (half-precision unit), then widened to fp32",
    "MATMUL / FULLY_CONNECTED vectors with fp32 outputs, the longer the dot product the surer",
)
def _fp16_accumulate(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its ERROR_IFs
    if ctx.dtype("out_t") is not FP32:
        return result
    with np.errstate(all="ignore"):
        if ctx.name == "MATMUL":
            a, b = ar.as_float(ctx.arg("A")), ar.as_float(ctx.arg("B"))
            n, h, c = a.shape
            products = (a[:, :, k, None] * b[:, None, k, :] for k in range(c))
            return {"output": _fp16_sum(products, (n, h, b.shape[2]))}
        x, w = ar.as_float(ctx.arg("input")), ar.as_float(ctx.arg("weight"))
        terms = (x[:, None, k] * w[None, :, k] for k in range(x.shape[1]))
        acc = _fp16_sum(terms, (x.shape[0], w.shape[0]))
        bias = ar.as_float(ctx.arg("bias")).reshape(-1)
        return {"output": (acc + bias).astype(np.float16).astype(np.float64)}


@wraps(
    "local-bound-ignored",
    CONV_OPS,
    "floating point with local_bound = true",
    "a fast (Winograd/FFT) convolution is used even when local_bound asks for the direct "
    "one: input rounding scales with the largest input (modelled as the input on a grid of "
    "max|input| * 2**-(frac+3))",
    "float convolution vectors with local_bound = true and inputs of widely varying "
    "magnitude; with local_bound = false this mutant must pass",
)
def _local_bound_ignored(original: OpFunction, ctx: OpContext) -> Result:
    out_t = ctx.dtype("out_t")
    if not out_t.is_float:
        return original(ctx)
    assert out_t.normal_frac is not None
    x = ctx.arg("input").astype(np.float64)
    finite = np.isfinite(x)
    top = float(np.max(np.abs(x[finite]), initial=0.0))
    if top == 0.0:
        return original(ctx)
    step = top * 2.0 ** -(out_t.normal_frac + 3)
    # fp64 values in the context: the operator reads its inputs through as_float.
    return original(with_inputs(ctx, input=np.where(finite, np.rint(x / step) * step, x)))


@wraps(
    "i48-accumulator-truncated",
    DOT_OPS,
    "i16 inputs with i48 output",
    "the 48-bit accumulator is kept in 32 bits, so large sums wrap",
    "i16 dot-product vectors whose results leave the int32 range",
)
def _acc_truncated(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if ctx.dtype("out_t") is not I48:
        return result
    return {"output": ar.wrap(_out(result), 32)}


# == pooling, reduction, FFT ======================================================================


def _count_padding(original: Callable[..., Any]) -> Callable[..., Any]:
    def valid_count(size: int, out: int, kernel: int, stride: int, pad: int) -> np.ndarray:
        return np.full(out, kernel, dtype=np.int64)

    return valid_count


_add(
    Mutant(
        "avg-pool-counts-padding",
        ("AVG_POOL2D",),
        "pad > 0",
        "the divisor is kernel_y * kernel_x, counting padded positions (count_include_pad)",
        "AVG_POOL2D vectors with padding (border outputs)",
        helpers=(HelperPatch(tensor_pool_fft, "_valid_count", _count_padding),),
    )
)


def _floor_scale(original: Callable[..., Any]) -> Callable[..., Any]:
    def apply_scale_32(ctx: OpContext, value: Any, multiplier: Any, shift: Any) -> Any:
        original(ctx, value, multiplier, shift)  # its REQUIREs
        return (value * multiplier) >> shift

    return apply_scale_32


_add(
    Mutant(
        "avg-pool-int-floors",
        ("AVG_POOL2D",),
        "i8 / i16",
        "the integer average drops apply_scale_32's rounding term (floors the quotient)",
        "integer AVG_POOL2D vectors whose window sums are not multiples of the count",
        helpers=(HelperPatch(tensor_pool_fft, "_apply_scale_32", _floor_scale),),
    )
)


def _zero_fill(original: Callable[..., Any]) -> Callable[..., Any]:
    def padded(x: np.ndarray, w: Any, fill: Any) -> np.ndarray:
        return original(x, w, 0)  # type: ignore[no-any-return]

    return padded


_add(
    Mutant(
        "max-pool-pads-zero",
        ("MAX_POOL2D",),
        "pad > 0",
        "padding takes part in the maximum as 0 instead of being skipped",
        "MAX_POOL2D vectors with padding and all-negative border windows",
        helpers=(HelperPatch(tensor_pool_fft, "_padded", _zero_fill),),
    )
)


@wraps(
    "reduce-sum-accumulated-in-bf16",
    ["REDUCE_SUM"],
    "fp32 and bf16 (acc_t fp32)",
    "the sum is accumulated in bf16 (an NPU's reduction unit) instead of fp32",
    "REDUCE_SUM fp32 / bf16 vectors with more than a few elements along the axis",
)
def _reduce_sum_bf16(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if ctx.dtype("acc_t") is not FP32:
        return result
    axis = int(ctx.attr("axis"))
    x = np.moveaxis(ctx.arg("input").astype(np.float64), axis, 0)
    acc = np.zeros(x.shape[1:], BF16.storage)
    with np.errstate(all="ignore"):
        for row in x:
            acc = (acc.astype(np.float64) + row).astype(BF16.storage)
    return {"output": np.expand_dims(acc.astype(np.float64), axis)}


@wraps(
    "fft-inverse-ignored",
    ["FFT2D"],
    "inverse = true",
    "the inverse attribute is ignored: always the forward transform",
    "FFT2D vectors with inverse = true and a non-zero imaginary result",
)
def _fft_inverse_ignored(original: OpFunction, ctx: OpContext) -> Result:
    if bool(ctx.attr("inverse", False)):
        return original(with_attrs(ctx, inverse=False))
    return original(ctx)


@wraps(
    "rfft-imag-negated",
    ["RFFT2D"],
    "all",
    "the imaginary part has the opposite sign (exp(+i a) convention)",
    "any RFFT2D vector whose input is not symmetric",
)
def _rfft_imag_negated(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    return {**result, "output_imag": -_out(result, "output_imag")}


# == image ========================================================================================


def _half_pixel(original: Callable[..., Any]) -> Callable[..., Any]:
    def axis(out_size: int, in_size: int, n: int, d: int, offset: int) -> Any:
        # half-pixel centres: n * in = o * d + (d - n) / 2, on top of the graph's offset
        pos = np.arange(out_size, dtype=np.int64) * d + offset + (d - n) // 2
        i = pos // n
        r = pos - i * n
        return np.clip(i, 0, in_size - 1), np.clip(i + 1, 0, in_size - 1), r

    return axis


_add(
    Mutant(
        "resize-half-pixel-added",
        ("RESIZE",),
        "scale_n != scale_d (both modes)",
        "a half-pixel centre offset is applied on top of the offset input (counted twice)",
        "RESIZE vectors that change the size",
        helpers=(HelperPatch(image, "_axis", _half_pixel),),
    )
)


@wraps(
    "resize-nearest-ties-down",
    ["RESIZE"],
    "NEAREST_NEIGHBOR",
    "nearest neighbour rounds an exact half-way position down instead of up",
    "NEAREST_NEIGHBOR vectors with positions exactly half-way (e.g. 2x upscale, offset 0)",
)
def _resize_nearest_ties_down(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if ctx.attr("mode") != "NEAREST_NEIGHBOR":
        return result
    x = np.asarray(ctx.arg("input"))
    _, ih, iw, _ = x.shape
    _, oh, ow, _ = ctx.out_shape()
    y_n, y_d, x_n, x_d = (int(v) for v in np.asarray(ctx.arg("scale")).reshape(-1))
    off_y, off_x = (int(v) for v in np.asarray(ctx.arg("offset")).reshape(-1))
    iy0, iy1, ry = image._axis(oh, ih, y_n, y_d, off_y)
    ix0, ix1, rx = image._axis(ow, iw, x_n, x_d, off_x)
    rows = np.where(2 * ry > y_n, iy1, iy0)
    cols = np.where(2 * rx > x_n, ix1, ix0)
    return {"output": x[:, rows][:, :, cols]}


# == data layout ==================================================================================


@wraps(
    "pad-const-ignored",
    ["PAD"],
    "pad_const != 0",
    "pad_const is ignored: the padding is always zero",
    "PAD vectors with a non-zero pad_const",
)
def _pad_const_ignored(original: OpFunction, ctx: OpContext) -> Result:
    if ctx.attr("pad_const", 0) == 0:
        return original(ctx)
    return original(with_attrs(ctx, pad_const=0))


@wraps(
    "slice-end-off-by-one",
    ["SLICE"],
    "slices reaching the last element",
    "the bounds check is start + size >= shape1 (off by one): a slice ending at the last "
    "element is refused",
    "valid SLICE vectors whose slice reaches the end of a dimension",
    effect="rejects valid graph",
)
def _slice_off_by_one(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    start = np.asarray(ctx.arg("start"), dtype=np.int64).reshape(-1)
    size = np.asarray(ctx.arg("size"), dtype=np.int64).reshape(-1)
    shape1 = np.asarray(ctx.input_tensor("input1").shape, dtype=np.int64)
    ctx.error_if(
        bool(np.any(start + size >= shape1)),
        "start[index] + size[index] >= shape1[index]",
        f"start {start.tolist()}, size {size.tolist()}, input {shape1.tolist()}",
    )
    return result


@wraps(
    "transpose-inverse-perm",
    ["TRANSPOSE"],
    "rank >= 3, perms not its own inverse",
    "the inverse permutation is applied (output axis perms[i] taken from input axis i)",
    "TRANSPOSE vectors with a 3-cycle such as perms [1, 2, 0]",
)
def _transpose_inverse(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)  # its ERROR_IFs (perms valid) before perms is used
    perms = np.asarray(ctx.attr("perms"), dtype=np.int64).reshape(-1)
    moved = np.transpose(ctx.arg("input1"), np.argsort(perms))
    return {"output": np.ascontiguousarray(moved).reshape(ctx.out_shape())}


@wraps(
    "gather-batch-ignored",
    ["GATHER"],
    "N > 1",
    "the batch offset is left out of the address: every batch gathers from batch 0",
    "GATHER vectors with more than one batch",
)
def _gather_batch_ignored(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)  # its REQUIREs (indices in range)
    k = np.asarray(ctx.arg("indices")).astype(np.int64)
    return {"output": np.asarray(ctx.arg("values"))[0][k]}


@wraps(
    "scatter-no-copy",
    ["SCATTER"],
    "W < K",
    "values_out starts as zeros instead of a copy of values_in (in-place assumption)",
    "SCATTER vectors that leave some positions unwritten",
)
def _scatter_no_copy(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)  # its REQUIREs (in range, each position once)
    values_in = np.asarray(ctx.arg("values_in"))
    k = np.asarray(ctx.arg("indices")).astype(np.int64)
    out = np.zeros_like(values_in)
    out[np.arange(values_in.shape[0])[:, None], k] = ctx.arg("input")
    return {"values_out": out}

"""Mutants of the type-conversion operators (reference/ops/type_conversion.py): CAST
and RESCALE."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from conformance.backends.mutants import (
    HelperPatch,
    Result,
    mutant,
    skipping_error_if,
    with_attrs,
    with_inputs,
)
from conformance.backends.mutants.tools import (
    FP8,
    I32_MIN,
    output_of,
    round_mantissa,
)
from conformance.backends.mutants.tools import output_of as _out
from conformance.dtypes import BF16, I32
from reference import arithmetic as ar
from reference.context import OpContext
from reference.ops import type_conversion as tc
from reference.registry import OpFunction


@mutant(
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


@mutant(
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


@mutant(
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
    return {"output": round_mantissa(_out(result), BF16.fp.normal_frac, np.trunc)}


@mutant(
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


def _negative_ties(product: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """Where ``product / 2**shift`` is exactly halfway and negative: round-half-up
    goes toward zero there, round-half-away does not."""
    s = np.where((shift >= 2) & (shift <= 62), shift, 2)
    half = np.left_shift(np.int64(1), s - 1)
    return (product < 0) & ((product & (2 * half - 1)) == half)


def _scale_16_away(original: Callable[..., Any]) -> Callable[..., Any]:
    def scale_16(value: Any, multiplier: Any, shift: Any) -> Any:
        result, checks = original(value, multiplier, shift)
        return result - _negative_ties(value * multiplier, shift), checks

    return scale_16


@mutant(
    "rescale-round-half-away",
    ("RESCALE",),
    "all (scale32 and scale16)",
    "apply_scale rounds ties away from zero (gemmlowp/TFLite style) instead of half up",
    "RESCALE vectors whose scaled value is a negative exact tie (-1.5 -> -1, not -2)",
    patch=(tc, "apply_scale_32"),
    helpers=(HelperPatch(tc, "apply_scale_16", _scale_16_away),),
)
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


@mutant(
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


@mutant(
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


@mutant(
    "rescale-accepts-double-round-scale16",
    ["RESCALE"],
    "scale32 false, double_round true",
    "missing ERROR_IF(!scale32 && double_round): the invalid graph runs with one rounding",
    "RESCALE error vectors breaking '!scale32 && double_round'",
    effect="accepts invalid graph",
)
def _rescale_accepts_double_round(original: OpFunction, ctx: OpContext) -> Result:
    return original(skipping_error_if(ctx, tc.DOUBLE_ROUND_CLAUSE))


@mutant(
    "rescale-output-zp-after-clamp",
    ["RESCALE"],
    "output_zp != 0 with scaled values outside the output range",
    "the scaled value is clamped to the output type first and output_zp added afterwards "
    "(then saturated again)",
    "RESCALE vectors with a non-zero output_zp whose scaled values leave the output range "
    "before the zero point brings them back (i8: 150 - 100 = 50, not 127 - 100 = 27)",
    breaks="RESCALE.tosac: result = apply_add_s<int32_t>(result, output_zp), then "
    "apply_clip_s / apply_clip_u to the output type",
)
def _rescale_zp_after_clamp(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # every ERROR_IF and REQUIRE of the real graph
    if not ctx.attr("output_zp", 0):
        return result
    out_t = ctx.dtype("out_t")
    unsigned = bool(ctx.attr("output_unsigned", False))
    clamped = ar.as_int(output_of(original(with_attrs(ctx, output_zp=0))))
    out_zp = tc.rescale_zero_point(ctx, "output_zp", out_t, unsigned)
    if unsigned:
        top = (1 << out_t.bits) - 1
        return {"output": ar.wrap(np.clip((clamped & top) + out_zp, 0, top), out_t.bits)}
    return {"output": np.clip(clamped + out_zp, out_t.min, out_t.max)}


@mutant(
    "rescale-input-unsigned-ignored",
    ["RESCALE"],
    "input_unsigned = true with stored values whose top bit is set",
    "the input is sign-extended although input_unsigned is set (the zero point is still "
    "read as unsigned): uint8 200 is taken as -56",
    "RESCALE input_unsigned vectors with inputs of 128..255 (i8) or 32768..65535 (i16)",
    breaks="RESCALE.tosac: if (input_unsigned) value = zero_extend<int48_t>(in_value)",
)
def _rescale_input_unsigned_ignored(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # every ERROR_IF and REQUIRE of the real graph
    if not bool(ctx.attr("input_unsigned", False)):
        return result
    in_t, out_t = ctx.dtype("in_t"), ctx.dtype("out_t")
    x = np.asarray(ctx.arg("input"))
    in_zp = tc.rescale_zero_point(ctx, "input_zp", in_t, True)
    # input_unsigned rules out output_unsigned and an i32 output (ERROR_IFs above)
    out_zp = tc.rescale_zero_point(ctx, "output_zp", out_t, False)
    multiplier, shift = tc.rescale_channel_params(
        ctx, x.shape, bool(ctx.attr("per_channel", False))
    )
    value = ar.as_int(x) - in_zp  # sign_extend: the bug
    if bool(ctx.attr("scale32", False)):
        scaled, _ = tc.apply_scale_32(
            value, multiplier, shift, bool(ctx.attr("double_round", False))
        )
    else:
        scaled, _ = tc.apply_scale_16(value, multiplier, shift)
    return {"output": np.clip(scaled + out_zp, out_t.min, out_t.max)}


@mutant(
    "cast-i32-to-bf16-double-rounded",
    ["CAST"],
    "i32 -> bf16, |value| > 2**24 just off a half-way point",
    "the integer is converted to fp32 first and the fp32 value rounded to bf16: two "
    "roundings, so a value just below a bf16 tie can round up",
    "CAST i32 -> bf16 vectors with large values just off a bf16 half-way point "
    "(2**30 + 3 * 2**22 - 1 gives 2**30 + 2**24, not 2**30 + 2**23)",
    breaks="introduction, precision table: CAST to a floating-point type is "
    "round_to_nearest_float of the exact value, one rounding (0.5 ulp)",
)
def _cast_i32_bf16_double_rounded(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if ctx.dtype("in_t") is not I32 or ctx.dtype("out_t") is not BF16:
        return result
    through_fp32 = np.asarray(ctx.arg("input")).astype(np.float32)
    return {"output": through_fp32.astype(BF16.storage).astype(np.float64)}


@mutant(
    "cast-float-to-int-min-wraps",
    ["CAST"],
    "float -> i8 / i16 below the type's minimum",
    "float -> integer saturates only at the maximum (min(x, max)) and narrows through "
    "int32, so values below the minimum wrap (-200.0 -> 56 in i8; -inf -> 0)",
    "CAST float -> i8/i16 vectors with values below -128 / -32768 (and -inf)",
    breaks="introduction, precision table: float -> integer conversion rounds to nearest "
    "and saturates to the output range at both ends",
)
def _cast_min_wraps(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its REQUIRE: no NaN input
    in_t, out_t = ctx.dtype("in_t"), ctx.dtype("out_t")
    if not (in_t.is_float and out_t.is_int and out_t.bits < 32):
        return result
    r = np.rint(ar.as_float(ctx.arg("input")))
    # float -> int32 gives INT32_MIN for anything below it (x86's "integer indefinite")
    via_i32 = np.where(np.isfinite(r) & (r >= I32_MIN), r, I32_MIN).astype(np.int64)
    return {"output": np.where(r < out_t.min, ar.wrap(via_i32, out_t.bits), output_of(result))}


# -- added by the second red-team pass --------------------------------------------------


@mutant(
    "cast-bool-true-minus-one",
    ["CAST"],
    "bool -> i8 / i16 / i32, true inputs",
    "the bool is widened as a SIMD compare mask (all ones) and sign-extended: true casts "
    "to -1 instead of 1",
    "CAST bool -> integer vectors with true inputs",
    breaks="CAST.tosac: if (in_t == bool_t) out = (in) ? 1 : 0",
)
def _cast_bool_minus_one(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if ctx.dtype("in_t").name != "bool" or not ctx.dtype("out_t").is_int:
        return result
    return {"output": -ar.as_int(output_of(result))}


@mutant(
    "cast-to-bool-low-byte",
    ["CAST"],
    "i16 / i32 -> bool, non-zero values whose low byte is 0",
    "the integer is narrowed to a byte before the test against 0 (the bool lane is 8 "
    "bits): 256 or -65536 casts to false",
    "CAST i16 / i32 -> bool vectors with multiples of 256 (256, -512, 2**31 - 2**8 ...)",
    breaks="CAST.tosac: if (out_t == bool_t) out = (in != 0) ? true : false, on the whole value",
)
def _cast_bool_low_byte(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    in_t = ctx.dtype("in_t")
    if ctx.dtype("out_t").name != "bool" or not in_t.is_int or in_t.bits <= 8:
        return result
    return {"output": (ar.as_int(ctx.arg("input")) & 0xFF) != 0}


@mutant(
    "rescale-output-unsigned-clamped-signed",
    ["RESCALE"],
    "output_unsigned = true with results in the top half of the unsigned range",
    "output_unsigned is honoured by the zero point but the final clamp uses the signed "
    "range: uint8 results of 128..255 saturate to 127 (uint16: 32768..65535 to 32767)",
    "RESCALE output_unsigned vectors with results of 128..255 (i8) or 32768..65535 (i16)",
    breaks="RESCALE.tosac: if (output_unsigned) out = apply_clip_u<i32_t>(result, "
    "minimum_u<out_t>(), maximum_u<out_t>())",
)
def _rescale_out_unsigned_signed_clamp(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # every ERROR_IF and REQUIRE of the real graph
    if not bool(ctx.attr("output_unsigned", False)):
        return result
    bits = ctx.dtype("out_t").bits
    unsigned = ar.as_int(output_of(result)) & ((1 << bits) - 1)
    return {"output": ar.wrap(np.minimum(unsigned, (1 << (bits - 1)) - 1), bits)}


def _rescaled(ctx: OpContext, value: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """apply_scale_32 / apply_scale_16 of ``value`` with the graph's parameters (their
    REQUIREs are the real graph's, checked by the reference run)."""
    multiplier, shift = tc.rescale_channel_params(ctx, shape, bool(ctx.attr("per_channel", False)))
    if bool(ctx.attr("scale32", False)):
        scaled, _ = tc.apply_scale_32(
            value, multiplier, shift, bool(ctx.attr("double_round", False))
        )
    else:
        scaled, _ = tc.apply_scale_16(value, multiplier, shift)
    return np.asarray(scaled)


@mutant(
    "rescale-unsigned-zero-point-sign-extended",
    ["RESCALE"],
    "input_unsigned / output_unsigned with a zero point of 128..255 (uint8) or 32768 (uint16)",
    "the zero point of an unsigned side is sign-extended like a signed one (the value "
    "itself is zero-extended): uint8 zp 200 is taken as -56, uint16 zp 32768 as -32768",
    "RESCALE vectors with input_unsigned or output_unsigned and a zero point in the top "
    "half of the unsigned range (uint16 zp 32768)",
    breaks="RESCALE.tosac: if (input_unsigned) ... zero_extend<int32_t>(input_zp); if "
    "(output_unsigned) extended_out_zp = zero_extend<int32_t>(output_zp)",
)
def _rescale_zp_sign_extended(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # every ERROR_IF and REQUIRE of the real graph
    in_uns = bool(ctx.attr("input_unsigned", False))
    out_uns = bool(ctx.attr("output_unsigned", False))
    if not (in_uns or out_uns):
        return result
    in_t, out_t = ctx.dtype("in_t"), ctx.dtype("out_t")
    in_zp = tc.rescale_zero_point(ctx, "input_zp", in_t, in_uns)
    out_zp = tc.rescale_zero_point(ctx, "output_zp", out_t, out_uns)
    bug_in = int(ar.wrap(np.int64(in_zp), in_t.bits)) if in_uns else in_zp
    bug_out = int(ar.wrap(np.int64(out_zp), out_t.bits)) if out_uns else out_zp
    if (bug_in, bug_out) == (in_zp, out_zp):
        return result
    x = np.asarray(ctx.arg("input"))
    value = ar.as_int(x) & ((1 << in_t.bits) - 1) if in_uns else ar.as_int(x)
    scaled = _rescaled(ctx, value - bug_in, x.shape) + bug_out
    if out_uns:
        top = (1 << out_t.bits) - 1
        return {"output": ar.wrap(np.clip(scaled, 0, top), out_t.bits)}
    return {"output": np.clip(scaled, out_t.min, out_t.max)}


@mutant(
    "cast-to-bf16-nan-payload-lost",
    ["CAST"],
    "fp32 -> bf16, NaNs whose payload is only in the low 16 bits",
    "fp32 -> bf16 rounds the bit pattern (bits + 0x7FFF + lsb) >> 16 with no NaN test: a "
    "NaN whose top 7 mantissa bits are 0 (0x7F800001) becomes infinity",
    "CAST fp32 -> bf16 vectors with non-canonical NaNs (0x7F800001, 0xFF80FFFF: signalling "
    "NaNs with a small payload)",
    breaks="introduction, precision: 'If any input is a NaN and the result is "
    "floating-point then the result must be a NaN'",
)
def _cast_bf16_nan_payload(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if ctx.dtype("in_t").name != "fp32" or ctx.dtype("out_t") is not BF16:
        return result
    x = np.ascontiguousarray(ctx.arg("input"), dtype=np.float32)
    bits = x.view(np.uint32).astype(np.int64)
    top = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF
    to_inf = np.isnan(x) & ((top & 0x7FFF) == 0x7F80)
    if not np.any(to_inf):
        return result  # the other NaNs keep the reference's bits
    out = np.array(output_of(result), copy=True)
    out[to_inf] = np.where(top & 0x8000, -np.inf, np.inf)[to_inf].astype(out.dtype)
    return {"output": out}


def _double_round_at_31(original: Callable[..., Any]) -> Callable[..., Any]:
    def scale_32(value: Any, multiplier: Any, shift: Any, double_round: bool) -> Any:
        result, checks = original(value, multiplier, shift, double_round)
        at_31 = np.asarray(shift) == 31
        if not double_round or not np.any(at_31):
            return result, checks
        half = 1 << 30
        safe = np.where((value >= -half) & (value < half), value, 0)
        bias = np.where(safe >= 0, half, -half)
        early = np.right_shift(safe * multiplier + half + bias, 31)
        return np.where(at_31, ar.wrap(early, 32), result), checks

    return scale_32


@mutant(
    "rescale-double-round-at-shift-31",
    ["RESCALE"],
    "scale32 with double_round and a shift of exactly 31",
    "the double-rounding bias is applied from shift >= 31 instead of shift > 31 (an "
    "off-by-one in the test): at shift 31 non-negative values round with 2**31 instead of "
    "2**30, negative ones are floored",
    "RESCALE double_round vectors with shift = 31 (per-tensor and per-channel)",
    breaks="introduction, apply_scale_32: if (shift > 31 && value >= 0) round += 1<<30; "
    "if (shift > 31 && value < 0) round -= 1<<30",
    patch=(tc, "apply_scale_32"),
)
def _rescale_double_round_31(original: Callable[..., Any]) -> Callable[..., Any]:
    return _double_round_at_31(original)


CHANNEL_TABLE = 256  # entries of the modelled per-channel parameter table


def _channel_index_u8(original: Callable[..., Any]) -> Callable[..., Any]:
    def channel_params(ctx: OpContext, shape: tuple[int, ...], per_channel: bool) -> Any:
        multiplier, shift = original(ctx, shape, per_channel)  # its ERROR_IF on NC
        nc = np.asarray(multiplier).shape[-1] if per_channel else 1
        if nc <= CHANNEL_TABLE:
            return multiplier, shift
        entry = np.arange(nc) % CHANNEL_TABLE
        return multiplier[..., entry], shift[..., entry]

    return channel_params


@mutant(
    "rescale-channel-index-u8-wraps",
    ["RESCALE"],
    f"per_channel with more than {CHANNEL_TABLE} channels",
    f"the per-channel multiplier and shift live in a {CHANNEL_TABLE}-entry table indexed by "
    f"the low 8 bits of the channel: channel c is scaled with the parameters of channel "
    f"c mod {CHANNEL_TABLE}",
    f"per-channel RESCALE vectors with more than {CHANNEL_TABLE} channels (e.g. 300) whose "
    f"channels {CHANNEL_TABLE} and above have parameters unlike those {CHANNEL_TABLE} "
    "lower",
    breaks="RESCALE.tosac: int32_t c = (per_channel) ? index[rank(shape) - 1] : 0; "
    "multiplier[c], shift[c] for every channel c < NC",
    patch=(tc, "rescale_channel_params"),
)
def _rescale_channel_u8(original: Callable[..., Any]) -> Callable[..., Any]:
    return _channel_index_u8(original)


@mutant(
    "cast-input-unsigned-ignored",
    ["CAST"],
    "input_unsigned = true (TOSA 1.1) with an input whose top bit is set",
    "CAST's input_unsigned is dropped (a lowering that predates it): the input is "
    "sign-extended as a signed value, so an i32 0xFFFFFFFF cast to i64 is -1, not "
    "4294967295, and an i8 200 cast to fp32 is -56.0",
    "CAST vectors with input_unsigned true and inputs with the sign bit set (i32 -1 to "
    "i64 gives 4294967295)",
    breaks="CAST.tosac (1.1): if (input_unsigned) the input is zero_extend<uint64_t>(in) "
    "before the conversion",
)
def _cast_input_unsigned_ignored(original: OpFunction, ctx: OpContext) -> Result:
    if tc.declares_input_unsigned(ctx.op_spec) and bool(ctx.attr("input_unsigned", False)):
        return original(with_attrs(ctx, input_unsigned=False))
    return original(ctx)

"""Mutants whose bug shows only on particular values: integer extremes, NaN in a given
position, signed zeros, zero points, exact and near rounding ties, subnormal results,
values below a type's minimum.  A pack kills them only if its data sets place those
values by construction; each names the spec rule it breaks (``breaks``).
"""

from __future__ import annotations

import numpy as np

from conformance.backends.mutant_tools import (
    broadcast_pair,
    lowest,
    output_of,
    wraps,
)
from conformance.backends.mutants import Result, Wrapper, with_attrs, with_inputs
from conformance.dtypes import BF16, I8, I32
from reference import arithmetic as ar
from reference.context import OpContext
from reference.ops import type_conversion as tc
from reference.registry import OpFunction

I32_MIN, I32_MAX = tc.I32_MIN, tc.I32_MAX

# == ADD / SUB i32 ===========================================================================


@wraps(
    "sub-negation-saturates",
    ["SUB"],
    "i32, input2 = -2**31 with input1 < 0",
    "SUB computed as input1 + saturating_negate(input2) (vqneg + vadd): -(-2**31) "
    "saturates to 2**31 - 1, so an in-range difference with input2 = -2**31 is one short",
    "SUB i32 vectors pairing input2 = -2**31 with a negative input1 "
    "(-1 - (-2**31) = 2**31 - 1, not 2**31 - 2)",
    breaks="SUB.tosac: apply_sub_s<i32_t>(value1, value2) is the exact difference; only "
    "the result must fit i32_t (REQUIRE), no intermediate saturates",
)
def _sub_negation_saturates(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # the REQUIRE: only in-range differences get this far
    if ctx.dtype("in_out_t") is not I32:
        return result
    _, b = broadcast_pair(ctx, ar.as_int)
    return {"output": ar.as_int(output_of(result)) - (b == I32_MIN)}


@wraps(
    "add-sub-i32-through-fp32",
    ["ADD", "SUB"],
    "i32 with operands or results beyond 2**24",
    "i32 ADD/SUB done in fp32 (a GPU path without integer ALUs): operands and result keep "
    "24 significant bits, so in-range sums of large values lose their low bits",
    "ADD/SUB i32 vectors with values beyond +-2**24 that are not multiples of a power of "
    "two (e.g. 2**30 + 1 + 1)",
    breaks="ADD.tosac / SUB.tosac: apply_add_s / apply_sub_s on i32_t are exact integer arithmetic",
)
def _add_sub_through_fp32(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if ctx.dtype("in_out_t") is not I32:
        return result
    a, b = broadcast_pair(ctx, lambda v: np.asarray(v).astype(np.float32))
    with np.errstate(over="ignore"):
        r = a + b if ctx.name == "ADD" else a - b  # rounded to fp32
    # float -> int conversion saturates (2**31 itself is out of range)
    return {"output": np.clip(r.astype(np.float64), I32_MIN, I32_MAX).astype(np.int64)}


# == NaN and signed zero ======================================================================


@wraps(
    "minmax-nan-from-input2-only",
    ["MAXIMUM", "MINIMUM"],
    "floating point, NaN in input1 only",
    "MAXIMUM as a > b ? a : b (MINIMUM a < b ? a : b): a NaN in input2 propagates, one "
    "in input1 fails the comparison and input2 is returned",
    "MAXIMUM/MINIMUM vectors with a NaN in input1 where input2 is not NaN",
    breaks="library apply_max_s / apply_min_s: isNaN(a) || isNaN(b) returns NaN",
)
def _minmax_nan_input2_only(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if not ctx.dtype("in_out_t").is_float:
        return result
    a, b = broadcast_pair(ctx, ar.as_float)
    return {"output": np.where(np.isnan(a) & ~np.isnan(b), b, output_of(result))}


@wraps(
    "minmax-zero-tie-swapped",
    ["MAXIMUM", "MINIMUM"],
    "floating point, -0 against +0",
    "equal operands take the other side: MAXIMUM(-0, +0) gives +0 and MINIMUM(+0, -0) "
    "gives +0 (b >= a ? b : a and a <= b ? a : b)",
    "MAXIMUM(-0.0, +0.0) and MINIMUM(+0.0, -0.0) vectors (EXACT_NAN checks the zero's sign)",
    breaks="library apply_max_s: a >= b returns a (-0 for (-0, +0)); apply_min_s: a < b "
    "else b (-0 for (+0, -0))",
)
def _minmax_zero_tie(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if not ctx.dtype("in_out_t").is_float:
        return result
    a, b = broadcast_pair(ctx, ar.as_float)
    other = b if ctx.name == "MAXIMUM" else a
    # equal non-zero values are the same either way; only opposite zeros differ
    return {"output": np.where(a == b, other, output_of(result))}


@wraps(
    "abs-keeps-negative-zero",
    ["ABS"],
    "floating point, -0",
    "ABS as x < 0 ? -x : x: -0 is not below 0, so ABS(-0) stays -0",
    "ABS float vectors holding -0.0",
    breaks="ABS.tosac: value1 == -0.0 is replaced by 0.0 before the sign test",
)
def _abs_keeps_negative_zero(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if not ctx.dtype("in_out_t").is_float:
        return result
    x = ar.as_float(ctx.arg("input1"))
    return {"output": np.where(x == 0, x, output_of(result))}


def _nan_replaced(x: np.ndarray, where: np.ndarray, value: float) -> np.ndarray:
    """``x`` (in its storage type) with the NaNs at ``where`` replaced by ``value``."""
    return np.where(np.isnan(x.astype(np.float64)) & where, value, x).astype(x.dtype)


@wraps(
    "reduce-minmax-nan-first-only",
    ["REDUCE_MAX", "REDUCE_MIN"],
    "floating point, NaN after the first element along the axis",
    "the reduction starts from the first element and compare-selects (v > acc ? v : acc): "
    "a NaN there stays, a NaN anywhere later is skipped",
    "REDUCE_MAX/REDUCE_MIN vectors with a NaN in the middle or last position of the axis",
    breaks="REDUCE_MAX.tosac / REDUCE_MIN.tosac: acc = apply_max_s / apply_min_s over every "
    "element, NaN from any position",
)
def _reduce_nan_first_only(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its ERROR_IFs (axis in range) before axis is used
    dt = ctx.dtype("in_out_t")
    x = np.asarray(ctx.arg("input"))
    if not dt.is_float or x.size == 0:
        return result
    axis = int(ctx.attr("axis"))
    position = np.arange(x.shape[axis]).reshape([-1 if i == axis else 1 for i in range(x.ndim)])
    later = position > 0
    # a skipped NaN is as if absent: the identity of the comparison takes its place
    fill = lowest(dt) if ctx.name == "REDUCE_MAX" else -lowest(dt)
    return original(with_inputs(ctx, input=_nan_replaced(x, later, fill)))


@wraps(
    "argmax-nan-ignored",
    ["ARGMAX"],
    "floating point, NaN along the axis",
    "the scan replaces its maximum only when value > max, which a NaN never is: NaNs are "
    "skipped (the index of the largest number, 0 for an all-NaN axis)",
    "ARGMAX vectors with a NaN along the axis (in any position; an all-NaN axis too)",
    breaks="ARGMAX (tensor operators): NaN values always compare as greater than non-NaN "
    "values; an all-NaN axis returns the last location",
)
def _argmax_nan_ignored(original: OpFunction, ctx: OpContext) -> Result:
    dt = ctx.dtype("in_t")
    x = np.asarray(ctx.arg("input"))
    if not dt.is_float:
        return original(ctx)
    return original(with_inputs(ctx, input=_nan_replaced(x, np.True_, lowest(dt))))


@wraps(
    "max-pool-nan-ignored",
    ["MAX_POOL2D"],
    "floating point, NaN in a window",
    "the window maximum uses fmax (IEEE maxNum): NaN inputs are skipped (a window of only "
    "NaN gives the lowest value)",
    "MAX_POOL2D vectors with a NaN in a window that holds other values",
    breaks="MAX_POOL2D.tosac: acc = apply_max_s(acc, value) returns NaN once any value is NaN",
)
def _max_pool_nan_ignored(original: OpFunction, ctx: OpContext) -> Result:
    dt = ctx.dtype("in_out_t")
    x = np.asarray(ctx.arg("input"))
    if not dt.is_float:
        return original(ctx)
    return original(with_inputs(ctx, input=_nan_replaced(x, np.True_, lowest(dt))))


# == zero points ============================================================================


def _negate_zp_ignored(attribute: str) -> Wrapper:
    def wrapper(original: OpFunction, ctx: OpContext) -> Result:
        # Only i8 may have zero points; for other types a zero point is an ERROR_IF,
        # which the bug keeps.
        if ctx.dtype("in_out_t") is not I8 or not ctx.attr(attribute, 0):
            return original(ctx)
        return original(with_attrs(ctx, **{attribute: 0}))

    return wrapper


wraps(
    "negate-input-zp-ignored",
    ["NEGATE"],
    "i8 with input1_zp != 0",
    "input1_zp is not subtracted before the negation (output_zp still added)",
    "NEGATE i8 vectors with a non-zero input1_zp",
    breaks="NEGATE.tosac: value = apply_sub_s<acc_t>(value1, input1_zp) before 0 - value",
)(_negate_zp_ignored("input1_zp"))

wraps(
    "negate-output-zp-ignored",
    ["NEGATE"],
    "i8 with output_zp != 0",
    "output_zp is not added after the negation (input1_zp still subtracted)",
    "NEGATE i8 vectors with a non-zero output_zp",
    breaks="NEGATE.tosac: value = apply_add_s<acc_t>(value, output_zp) before the clip",
)(_negate_zp_ignored("output_zp"))


@wraps(
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
    out_zp = tc._zero_point(ctx, "output_zp", out_t, unsigned)
    if unsigned:
        top = (1 << out_t.bits) - 1
        return {"output": ar.wrap(np.clip((clamped & top) + out_zp, 0, top), out_t.bits)}
    return {"output": np.clip(clamped + out_zp, out_t.min, out_t.max)}


@wraps(
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
    in_zp = tc._zero_point(ctx, "input_zp", in_t, True)
    # input_unsigned rules out output_unsigned and an i32 output (ERROR_IFs above)
    out_zp = tc._zero_point(ctx, "output_zp", out_t, False)
    multiplier, shift = tc._channel_params(ctx, x.shape, bool(ctx.attr("per_channel", False)))
    value = ar.as_int(x) - in_zp  # sign_extend: the bug
    if bool(ctx.attr("scale32", False)):
        scaled, _ = tc._scale_32(value, multiplier, shift, bool(ctx.attr("double_round", False)))
    else:
        scaled, _ = tc._scale_16(value, multiplier, shift)
    return {"output": np.clip(scaled + out_zp, out_t.min, out_t.max)}


# == rounding ===============================================================================


@wraps(
    "mul-shift-ties-down",
    ["MUL"],
    "i32 with shift > 0, products exactly half-way",
    "the rounding constant is (1 << (shift - 1)) - 1: exact ties round down instead of up",
    "MUL i32 shift > 0 vectors whose product is exactly half-way (3 * 1 >> 1 = 2, not 1; "
    "-3 * 1 >> 1 = -1, not -2)",
    breaks="MUL.tosac: product = (value1 * value2 + (1 << (shift - 1))) >> shift (round half up)",
)
def _mul_shift_ties_down(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    shift = int(np.asarray(ctx.arg("shift")).reshape(-1)[0])
    if ctx.dtype("in_t") is not I32 or shift == 0:
        return result
    a, b = broadcast_pair(ctx, ar.as_int)
    tie = ((a * b) & ((1 << shift) - 1)) == (1 << (shift - 1))
    return {"output": ar.as_int(output_of(result)) - tie}


@wraps(
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


@wraps(
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

"""CAST and RESCALE (tosa.xml group type-conversion).

CAST to a floating-point type returns the exact value of the input in fp64: the
precision table asks for a result within 0.5 ulp of the mathematical result, which is
the compliance check's job, and the engine rounds the fp64 value to nearest even for
later consumers.  The one exception is fp8e4m3, which has no infinity: OCP's
non-saturating conversion turns values that round past its largest finite value into
NaN, and the reference says so.  CAST to an integer type is exact (round to nearest,
ties to even, then saturate).

TOSA 1.1's block-scaled modes (``in_t`` or ``out_t`` a ``bs32_fp8ue8m0_*_t`` composite):
a cast to one blocks the innermost axis as CAST_TO_BLOCK_SCALED does (calc_block_scale
of each block's largest magnitude, in fp64 as the precision text computes it, and each
value over its block's scale rounded to the value type), returning the one composite
tensor with its values and scales held in their types; a cast from one reads each
element as tensor_read<in_t, acc_t> does (value times scale in fp32, access_elem_type's
acc_t) and converts that fp32 value as any float input.  The ERROR_IFs on the
composite's shape come first, for in_t then out_t, as CAST.tosac orders them.

RESCALE is bit-exact integer arithmetic: apply_scale_32 / apply_scale_16 (introduction,
"Precision scaling") on int64 whole tensors, with their REQUIREs checked per element in
pseudocode order.  TOSA 1.0 selects the rounding by ``rounding_mode`` (the draft by
``double_round``), takes the zero points as [1] input tensors of the input's and
output's types (an unsigned one stored as its bits), and states its rules with the
clauses of RESCALE_RULES.  INEXACT_ROUND may return any integer of a range
(inexact_round_range); the reference gives the SINGLE_ROUND value, which is in it, and
the RESCALE describer has the compliance check accept the whole range.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance import dtypes
from conformance.block_tensor import BlockScaled, is_block_scaled, scale_type, value_type
from conformance.compliance_descriptor import IntRangeParams
from conformance.dtypes import I32_MAX, I32_MIN, DType
from conformance.rounding import round_to
from conformance.spec import OperatorSpec
from reference import arithmetic as ar
from reference import mx
from reference.arguments import ATTRIBUTES_CLAUSE, INPUTS_CLAUSE
from reference.compliance.checker import inexact_round_bounds, int_range
from reference.context import OpContext
from reference.ops.block_scaled import block_scales
from reference.ops.tensor_conv import read_block_scaled
from reference.registry import implements, seam

Result = dict[str, np.ndarray | list[np.ndarray]]
# CAST's output may be a block-scaled composite, which the registry's type does not name.
CastResult = dict[str, Any]

# Introduction, "Main Inference precision requirements": a NaN input converted to an
# integer (or bool) gives an unpredictable result.  There is no REQUIRE in CAST.tosac;
# the criterion is reported as one so that the outcome is 'unpredictable'.
NAN_TO_INT_CLAUSE = "!isNaN(in): a NaN converted to an integer is unpredictable"


def _to_float(x: np.ndarray, in_t: DType, out_t: DType) -> np.ndarray:
    """round_to_nearest_float, as the fp64 value the result is checked against."""
    exact = x.astype(np.float64)  # every TOSA int and float value is exact in fp64
    if out_t.has_inf:
        # Overflow to infinity and subnormal/zero results are what rounding this value
        # gives; the 0.5 ulp compliance rule accepts exactly those.
        return exact
    # fp8e4m3: OCP-OFP8 non-saturating mode, out-of-range values (infinities too)
    # become NaN.  The value is kept where it rounds to a finite fp8e4m3 number; where
    # that is (464 is a tie that goes to 448, 465 is NaN) is round_to's rule.
    overflows = np.isnan(round_to(out_t, x).astype(np.float64)) & ~np.isnan(exact)
    return np.where(overflows, np.nan, exact)


# TOSA 1.1: CAST's input_unsigned reads an integer input as unsigned; a float or bool
# input cannot be read so.
INPUT_UNSIGNED_CLAUSE = "input_unsigned && !is_integer<in_t>()"


def declares_input_unsigned(op_spec: OperatorSpec) -> bool:
    """Whether CAST has the ``input_unsigned`` attribute (TOSA 1.1 on)."""
    return any(a.name == "input_unsigned" for a in op_spec.attributes)


def is_integer(dt: DType) -> bool:
    """is_integer<type>() of TOSA 1.1's generic helpers: i8, i16, i32, i48 and i64
    (not bool, not the shape type)."""
    return dt.kind == "int"


def zero_extended(v: np.ndarray, dt: DType) -> np.ndarray:
    """zero_extend<uint64_t>(in): the operand's bits as an unsigned value, in int64
    where it fits (every type below 64 bits); an i64 keeps its bits, whose truncation
    to a narrower type is the same either way."""
    if dt.bits >= 64:
        return ar.as_int(v)
    return ar.as_int(v) & ((1 << dt.bits) - 1)


# TOSA 1.1, the block-scaled modes: a composite of rank >= 1 whose innermost dimension
# is whole blocks, stated once for in_t and once for out_t.
def _block_rank_clause(var: str) -> str:
    return f"is_block_scale<{var}>() && rank(shape) == 0"


def _block_shape_clause(var: str) -> str:
    return (
        f"is_block_scale<{var}>() && shape[rank(shape)-1] % get_innermost_block_size<{var}>() != 0"
    )


BLOCK_RANK_IN_CLAUSE = _block_rank_clause("in_t")
BLOCK_SHAPE_IN_CLAUSE = _block_shape_clause("in_t")
BLOCK_RANK_OUT_CLAUSE = _block_rank_clause("out_t")
BLOCK_SHAPE_OUT_CLAUSE = _block_shape_clause("out_t")
# The block-scaled out_t branch's ERROR_IF, as CAST.tosac writes its condition.  Its
# comment says only a floating-point input may be cast to a block-scaled type, and
# every mode tosa.xml lists for the branch has one (fp8e4m3, fp8e5m2, fp16, bf16,
# fp32): as written the condition would refuse all 30 of them, so it is read as the
# comment says, an error for an input that is not floating point.  No mode binds such
# an input (a graph with one fails the type check first), so no vector reaches it.
FP_TO_BLOCK_CLAUSE = "is_floating_point<in_t>()"
# access_elem_type<in_t>() of a block-scaled type: the scaled value is read as fp32.
BLOCK_ACC_T = dtypes.FP32


def check_block_shapes(ctx: OpContext, shape: tuple[int, ...], in_t: DType, out_t: DType) -> None:
    """CAST's four ERROR_IFs on a block-scaled in_t's or out_t's shape, in order."""
    for var, dt in (("in_t", in_t), ("out_t", out_t)):
        if not is_block_scaled(dt):
            continue
        ctx.error_if(len(shape) == 0, _block_rank_clause(var), f"{var}={dt}, rank 0")
        ctx.error_if(
            shape[-1] % dt.block_size != 0,
            _block_shape_clause(var),
            f"{var}={dt}, shape {list(shape)}, block size {dt.block_size}",
        )


def to_block_scaled(x: np.ndarray, out_t: DType) -> BlockScaled:
    """The block-scaled branch: per block of the innermost axis, calc_block_scale of its
    largest magnitude and round_to_nearest_float<in_t, value_t>(value / scale), both
    held in their types (a NaN scale is fp8ue8m0's NaN; its block's values are what
    rounding a NaN gives the value type)."""
    vt, st = value_type(out_t), scale_type(out_t)
    bs = out_t.block_size
    with np.errstate(invalid="ignore"):
        wide = x.astype(np.float64)  # every in_t value is exact in fp64
    scale = block_scales(wide, vt, bs)  # [..., C / bs], fp64
    with np.errstate(invalid="ignore"):
        # exact: the scale is a power of two and the quotient stays within fp64's range
        scaled = (mx.block_view(wide, bs) / scale[..., None]).reshape(wide.shape)
    return BlockScaled(out_t, mx.encode(scaled, vt), mx.encode(scale, st))


@implements("CAST")
def cast(ctx: OpContext) -> CastResult:
    in_t, out_t = ctx.dtype("in_t"), ctx.dtype("out_t")
    check_block_shapes(ctx, ctx.input_tensor("input").shape, in_t, out_t)
    unsigned = False
    if declares_input_unsigned(ctx.op_spec):
        unsigned = bool(ctx.attr("input_unsigned", False))
        ctx.error_if(unsigned and not is_integer(in_t), INPUT_UNSIGNED_CLAUSE, f"in_t={in_t}")
    if is_block_scaled(out_t):
        ctx.error_if(not in_t.is_float, FP_TO_BLOCK_CLAUSE, f"in_t={in_t} (read: not a float)")
        return {"output": to_block_scaled(np.asarray(ctx.arg("input")), out_t)}
    given = ctx.value("input")
    if isinstance(given, BlockScaled):
        # tensor_read<in_t, acc_t>: the rest of the cast converts acc_t, as from fp32
        x = read_block_scaled(given, BLOCK_ACC_T).astype(BLOCK_ACC_T.storage)
        in_t = BLOCK_ACC_T
    else:
        x = np.asarray(given)
    if out_t.kind == "bool":
        # (in != 0) ? true : false, before any unsigned reading; a float input (1.1's
        # fp32 to bool) compares as a float: 0.5 is true, -0.0 false, NaN true.
        if in_t.is_float:
            with np.errstate(invalid="ignore"):
                return {"output": x.astype(np.float64) != 0}
        return {"output": x.astype(np.int64) != 0}
    if unsigned:
        # round_to_nearest_float of the unsigned value (exact in fp64: at most 2**32 - 1
        # for the integer-to-float modes), or its truncation to out_t.
        u = zero_extended(x, in_t)
        if out_t.is_float:
            return {"output": _to_float(u, in_t, out_t)}
        return {"output": ar.wrap(u, out_t.bits)}
    if out_t.is_float:
        # bool inputs read as 1.0 / 0.0 (1.1's bool to fp32).
        return {"output": _to_float(x, in_t, out_t)}
    if in_t.kind == "bool":
        return {"output": x.astype(np.int64)}
    if in_t.is_float:
        f = x.astype(np.float64)
        ar.require_each(ctx, x.shape, [(NAN_TO_INT_CLAUSE, ~np.isnan(f))], {"in": f})
        # round_to_nearest_int: ties to even (np.rint); overflow saturates (infinities
        # too), as the precision table requires of float -> integer casts.
        rounded = np.clip(np.rint(f), out_t.min, out_t.max)
        return {"output": rounded.astype(np.int64)}
    v = ar.as_int(x)
    if out_t.bits >= in_t.bits:
        return {"output": v}  # sign_extend: the value is unchanged
    return {"output": ar.wrap(v, out_t.bits)}  # truncate: keep the low bits


# -- RESCALE ---------------------------------------------------------------------------


# The ERROR_IFs of RESCALE.tosac, in order.
IN_ZP_CLAUSE = "in_t != i8_t && (in_t != i16_t || input_unsigned == false) && input_zp != 0"
OUT_ZP_CLAUSE = "out_t != i8_t && (out_t != i16_t || output_unsigned == false) && output_zp != 0"
IN_ZP16_CLAUSE = "in_t == i16_t && input_unsigned == true && input_zp != 0 && input_zp != 32768"
OUT_ZP16_CLAUSE = (
    "out_t == i16_t && output_unsigned == true && output_zp != 0 && output_zp != 32768"
)
SCALE32_I48_CLAUSE = "scale32 && in_t == i48_t"
DOUBLE_ROUND_CLAUSE = "!scale32 && double_round"
BOTH_UNSIGNED_CLAUSE = "input_unsigned && output_unsigned"
OUT_I32_IN_UNSIGNED_CLAUSE = "out_t == i32_t && input_unsigned"
IN_I32_OUT_UNSIGNED_CLAUSE = "in_t == i32_t && output_unsigned"
IN_I48_OUT_UNSIGNED_CLAUSE = "in_t == i48_t && output_unsigned"
PER_CHANNEL_RANK_CLAUSE = "per_channel && rank(input) < 1"
# TOSA 1.0 (the revision with a rounding_mode attribute and zero-point inputs) spells
# the type tests is_same<>(), selects double rounding by rounding_mode, and states as
# ERROR_IFs the unsigned readings that the draft leaves to make_unsigned.
IN_ZP_CLAUSE_1_0 = (
    "!is_same<in_t,i8_t>() && (!is_same<in_t,i16_t>() || input_unsigned == false) && input_zp != 0"
)
OUT_ZP_CLAUSE_1_0 = (
    "!is_same<out_t,i8_t>() && (!is_same<out_t,i16_t>() || output_unsigned == false) "
    "&& output_zp != 0"
)
IN_ZP16_CLAUSE_1_0 = (
    "is_same<in_t,i16_t>() && input_unsigned == true && input_zp != 0 && input_zp != 32768"
)
OUT_ZP16_CLAUSE_1_0 = (
    "is_same<out_t,i16_t>() && output_unsigned == true && output_zp != 0 && output_zp != 32768"
)
SCALE32_I48_CLAUSE_1_0 = "scale32 && is_same<in_t,i48_t>()"
DOUBLE_ROUND_CLAUSE_1_0 = "!scale32 && (rounding_mode == DOUBLE_ROUND)"
OUT_I32_IN_UNSIGNED_CLAUSE_1_0 = "is_same<out_t,i32_t>() && input_unsigned"
IN_I32_OUT_UNSIGNED_CLAUSE_1_0 = "is_same<in_t,i32_t>() && output_unsigned"
IN_I48_OUT_UNSIGNED_CLAUSE_1_0 = "is_same<in_t,i48_t>() && output_unsigned"
IN_I48_IN_UNSIGNED_CLAUSE = "is_same<in_t, i48_t> && input_unsigned"
IN_I32_IN_UNSIGNED_CLAUSE = "is_same<in_t, i32_t> && input_unsigned"
OUT_I32_OUT_UNSIGNED_CLAUSE = "is_same<out_t, i32_t> && output_unsigned"
# make_unsigned (type_conversion_helpers): only i8_t and i16_t have an unsigned form.
MAKE_UNSIGNED_CLAUSE = "make_unsigned: in_t != i8_t && in_t != i16_t"

# REQUIREs of apply_scale_32 / apply_scale_16 and apply_add_s<int32_t>.
MULTIPLIER_CLAUSE = "multiplier >= 0"
SHIFT_CLAUSE = "2 <= shift && shift <= 62"
VALUE_CLAUSE = "value >= (-1 << (shift - 1)) && value < (1 << (shift - 1))"
SCALE16_RESULT_CLAUSE = "result >= minimum<int32_t> && result <= maximum<int32_t>"
ADD_ZP_CLAUSE = "apply_add_s<int32_t>: c >= minimum_s<i32_t>() && c <= maximum_s<i32_t>()"


@seam
def rescale_zero_point(ctx: OpContext, name: str, dt: DType, unsigned: bool) -> int:
    """The zero point as the pseudocode extends it to int48/int32: the attribute's bits
    in ``dt``, zero-extended when the tensor is read as unsigned, else sign-extended.

    The attribute is typed in_t/out_t; a value those bits cannot hold (neither as the
    signed nor, for an unsigned tensor, as the unsigned reading) does not meet the
    argument's declaration.
    """
    raw = int(ctx.attr(name, 0))
    lo = -(1 << (dt.bits - 1))
    hi = (1 << dt.bits) - 1 if unsigned else (1 << (dt.bits - 1)) - 1
    ctx.error_if(
        not lo <= raw <= hi,
        ATTRIBUTES_CLAUSE,
        f"{name}={raw} does not fit {dt}{' read as unsigned' if unsigned else ''}",
    )
    bits = raw & ((1 << dt.bits) - 1)
    return bits if unsigned else int(ar.wrap(np.int64(bits), dt.bits))


def declares_rounding_mode(op_spec: OperatorSpec) -> bool:
    """Whether RESCALE selects its rounding by a ``rounding_mode`` attribute (TOSA 1.0
    on) rather than by the draft's ``double_round`` flag."""
    return any(a.name == "rounding_mode" for a in op_spec.attributes)


# Each rule of RESCALE in the order its pseudocode checks it: (key, the draft's clause,
# the clause of the revision with rounding_mode); None where that revision has no
# such rule (1.0 states make_unsigned's refusals as three ERROR_IFs of its own).
RESCALE_RULES: tuple[tuple[str, str | None, str | None], ...] = (
    ("in_zp", IN_ZP_CLAUSE, IN_ZP_CLAUSE_1_0),
    ("out_zp", OUT_ZP_CLAUSE, OUT_ZP_CLAUSE_1_0),
    ("in_zp16", IN_ZP16_CLAUSE, IN_ZP16_CLAUSE_1_0),
    ("out_zp16", OUT_ZP16_CLAUSE, OUT_ZP16_CLAUSE_1_0),
    ("scale32_i48", SCALE32_I48_CLAUSE, SCALE32_I48_CLAUSE_1_0),
    ("double_round", DOUBLE_ROUND_CLAUSE, DOUBLE_ROUND_CLAUSE_1_0),
    ("both_unsigned", BOTH_UNSIGNED_CLAUSE, BOTH_UNSIGNED_CLAUSE),
    ("out_i32_in_uns", OUT_I32_IN_UNSIGNED_CLAUSE, OUT_I32_IN_UNSIGNED_CLAUSE_1_0),
    ("in_i32_out_uns", IN_I32_OUT_UNSIGNED_CLAUSE, IN_I32_OUT_UNSIGNED_CLAUSE_1_0),
    ("in_i48_out_uns", IN_I48_OUT_UNSIGNED_CLAUSE, IN_I48_OUT_UNSIGNED_CLAUSE_1_0),
    ("in_i48_in_uns", None, IN_I48_IN_UNSIGNED_CLAUSE),
    ("in_i32_in_uns", None, IN_I32_IN_UNSIGNED_CLAUSE),
    ("out_i32_out_uns", None, OUT_I32_OUT_UNSIGNED_CLAUSE),
    ("per_channel_rank", PER_CHANNEL_RANK_CLAUSE, PER_CHANNEL_RANK_CLAUSE),
    ("make_unsigned_in", MAKE_UNSIGNED_CLAUSE, None),
    ("make_unsigned_out", MAKE_UNSIGNED_CLAUSE, None),
)


def rescale_clause(op_spec: OperatorSpec, key: str) -> str | None:
    """The clause of rule ``key`` as the operator's revision states it (None: no such
    rule there)."""
    pick = 2 if declares_rounding_mode(op_spec) else 1
    return next(r[pick] for r in RESCALE_RULES if r[0] == key)


def rescale_rounding(ctx: OpContext) -> str:
    """SINGLE_ROUND, INEXACT_ROUND or DOUBLE_ROUND: the ``rounding_mode`` attribute, or
    the draft's ``double_round`` flag read as one of those."""
    if declares_rounding_mode(ctx.op_spec):
        mode = str(ctx.attr("rounding_mode"))
        ctx.error_if(
            mode not in ROUNDING_MODES,
            ATTRIBUTES_CLAUSE,
            f"rounding_mode {mode!r} is not one of {', '.join(ROUNDING_MODES)}",
        )
        return mode
    return "DOUBLE_ROUND" if bool(ctx.attr("double_round", False)) else "SINGLE_ROUND"


ROUNDING_MODES = ("SINGLE_ROUND", "INEXACT_ROUND", "DOUBLE_ROUND")


def _check_rules(
    ctx: OpContext, in_t: DType, out_t: DType, flags: dict[str, bool], in_zp: int, out_zp: int
) -> None:
    """RESCALE's ERROR_IFs in pseudocode order (they do not depend on the element, so
    checking them once is checking them for every index)."""
    scale32, double_round = flags["scale32"], flags["double_round"]
    in_uns, out_uns = flags["input_unsigned"], flags["output_unsigned"]
    i, o = in_t.name, out_t.name
    rank = len(ctx.input_tensor("input").shape)
    # Reading an i32/i48 input, or writing an i32 output, as unsigned needs an unsigned
    # form of that type (zero_extend of the value, minimum_u/maximum_u<out_t>), which
    # make_unsigned refuses in the draft: only 8- and 16-bit values may be unsigned.
    fires: dict[str, tuple[bool, str]] = {
        "in_zp": (
            i != "i8" and (i != "i16" or not in_uns) and in_zp != 0,
            f"in_t={in_t}, input_unsigned={in_uns}, input_zp={in_zp}",
        ),
        "out_zp": (
            o != "i8" and (o != "i16" or not out_uns) and out_zp != 0,
            f"out_t={out_t}, output_unsigned={out_uns}, output_zp={out_zp}",
        ),
        "in_zp16": (i == "i16" and in_uns and in_zp not in (0, 32768), f"input_zp={in_zp}"),
        "out_zp16": (o == "i16" and out_uns and out_zp not in (0, 32768), f"output_zp={out_zp}"),
        "scale32_i48": (scale32 and i == "i48", ""),
        "double_round": (not scale32 and double_round, ""),
        "both_unsigned": (in_uns and out_uns, ""),
        "out_i32_in_uns": (o == "i32" and in_uns, ""),
        "in_i32_out_uns": (i == "i32" and out_uns, ""),
        "in_i48_out_uns": (i == "i48" and out_uns, ""),
        "in_i48_in_uns": (i == "i48" and in_uns, ""),
        "in_i32_in_uns": (i == "i32" and in_uns, ""),
        "out_i32_out_uns": (o == "i32" and out_uns, ""),
        "per_channel_rank": (flags["per_channel"] and rank < 1, f"rank={rank}"),
        "make_unsigned_in": (in_uns and i not in ("i8", "i16"), f"input {in_t}"),
        "make_unsigned_out": (out_uns and o not in ("i8", "i16"), f"output {out_t}"),
    }
    for key, *_ in RESCALE_RULES:
        clause = rescale_clause(ctx.op_spec, key)
        if clause is not None:
            condition, detail = fires[key]
            ctx.error_if(condition, clause, detail)


@seam
def rescale_channel_params(
    ctx: OpContext, shape: tuple[int, ...], per_channel: bool
) -> tuple[np.ndarray, np.ndarray]:
    """multiplier[c] and shift[c] for every element, as views broadcastable to shape."""
    multiplier = ar.as_int(ctx.arg("multiplier")).reshape(-1)
    shift = ar.as_int(ctx.arg("shift")).reshape(-1)
    nc = multiplier.size
    # The arguments' declaration: NC = shape[rank(shape)-1] if per_channel else 1.
    want = shape[-1] if per_channel else 1
    ctx.error_if(
        nc != want,
        INPUTS_CLAUSE,
        f"multiplier/shift have NC={nc}, "
        f"{'per_channel needs shape[rank-1]' if per_channel else 'per-tensor needs 1'}={want}",
    )
    if per_channel:
        lead = (1,) * (len(shape) - 1)
        return multiplier.reshape(*lead, nc), shift.reshape(*lead, nc)
    return multiplier[0], shift[0]


@seam
def apply_scale_32(
    value: np.ndarray, multiplier: np.ndarray, shift: np.ndarray, double_round: bool
) -> tuple[np.ndarray, list[tuple[str, np.ndarray]]]:
    """apply_scale_32 and its REQUIREs.  |value * multiplier| <= 2**62 and the rounding
    term is below 2**62, so int64 holds every intermediate."""
    ok_mult = multiplier >= 0
    ok_shift = (shift >= 2) & (shift <= 62)
    s = np.where(ok_shift, shift, 2)  # placeholder where the REQUIRE already failed
    half = np.left_shift(np.int64(1), s - 1)
    ok_value = (value >= -half) & (value < half)
    round_ = np.broadcast_to(half, np.broadcast_shapes(value.shape, half.shape))
    if double_round:
        # Round twice as a 31-bit shift followed by the rest would: bias by 2**30
        # away from zero when the shift exceeds 31.
        bias = np.where(value >= 0, 1 << 30, -(1 << 30))
        round_ = round_ + np.where(s > 31, bias, 0)
    # Where a REQUIRE failed the value is replaced so that nothing overflows; the
    # caller reports the REQUIRE before this result is used.
    safe_value = np.where(ok_value, value, 0)
    result = np.right_shift(safe_value * multiplier + round_, s)
    checks = [(MULTIPLIER_CLAUSE, ok_mult), (SHIFT_CLAUSE, ok_shift), (VALUE_CLAUSE, ok_value)]
    return ar.wrap(result, 32), checks


@seam
def apply_scale_16(
    value: np.ndarray, multiplier: np.ndarray, shift: np.ndarray
) -> tuple[np.ndarray, list[tuple[str, np.ndarray]]]:
    """apply_scale_16 and its REQUIREs.  |value| <= 2**47 and |multiplier| <= 2**15, so
    the product and rounding term stay below 2**63."""
    ok_mult = multiplier >= 0
    ok_shift = (shift >= 2) & (shift <= 62)
    s = np.where(ok_shift, shift, 2)
    result = np.right_shift(value * multiplier + np.left_shift(np.int64(1), s - 1), s)
    ok_result = (result >= I32_MIN) & (result <= I32_MAX)
    checks = [
        (MULTIPLIER_CLAUSE, ok_mult),
        (SHIFT_CLAUSE, ok_shift),
        (SCALE16_RESULT_CLAUSE, ok_result),
    ]
    return np.where(ok_result, result, 0), checks


@implements("RESCALE")
def rescale(ctx: OpContext) -> Result:
    in_t, out_t = ctx.dtype("in_t"), ctx.dtype("out_t")
    names = ("scale32", "per_channel", "input_unsigned", "output_unsigned")
    flags = {n: bool(ctx.attr(n, False)) for n in names}
    rounding = rescale_rounding(ctx)
    flags["double_round"] = rounding == "DOUBLE_ROUND"
    in_uns, out_uns = flags["input_unsigned"], flags["output_unsigned"]
    in_zp = rescale_zero_point(ctx, "input_zp", in_t, in_uns)
    out_zp = rescale_zero_point(ctx, "output_zp", out_t, out_uns)
    _check_rules(ctx, in_t, out_t, flags, in_zp, out_zp)
    x = np.asarray(ctx.arg("input"))
    shape = tuple(x.shape)
    multiplier, shift = rescale_channel_params(ctx, shape, flags["per_channel"])

    raw = ar.as_int(x)
    # zero_extend<int48_t> reads the stored bits as unsigned; sign_extend keeps the value.
    value = (raw & ((1 << in_t.bits) - 1) if in_uns else raw) - in_zp
    if flags["scale32"]:
        result, checks = apply_scale_32(value, multiplier, shift, flags["double_round"])
    else:
        result, checks = apply_scale_16(value, multiplier, shift)
    inexact = rounding == "INEXACT_ROUND"
    if inexact and not flags["scale32"]:
        checks.append(inexact_requires(value, multiplier, shift, 0, SCALE16_RESULT_CLAUSE))
    result = result + out_zp
    checks.append((ADD_ZP_CLAUSE, (result >= I32_MIN) & (result <= I32_MAX)))
    if inexact:
        checks.append(inexact_requires(value, multiplier, shift, out_zp, ADD_ZP_CLAUSE))
    shown = {"value": value, "multiplier": multiplier, "shift": shift}
    ar.require_each(ctx, shape, checks, shown)

    if out_uns:
        # apply_clip_u to [minimum_u, maximum_u] of the output type, compared as values
        # (a negative result clips to 0); static_cast<out_t> then stores the low bits.
        clipped = np.clip(result, 0, (1 << out_t.bits) - 1)
        return {"output": ar.wrap(clipped, out_t.bits)}
    return {"output": np.clip(result, out_t.min, out_t.max)}


# Precision requirements of RESCALE (TOSA 1.0): with INEXACT_ROUND a result may be any
# integer in a range around the fp64 scaling, not only apply_scale_32's
# (reference.compliance.checker.int_range holds the bound; the RESCALE describer gives
# the compliance check the scaled value).


def inexact_scaled(
    value: np.ndarray, multiplier: np.ndarray, shift: np.ndarray, out_zp: int
) -> np.ndarray:
    """out_ref + output_zp in fp64: value * multiplier * 2**-shift, ``value`` being the
    input minus its zero point as the exact path reads it."""
    m = np.asarray(multiplier, np.float64)
    scale = np.exp2(-np.asarray(shift, np.float64))
    return np.asarray(value, np.float64) * m * scale + out_zp


def inexact_requires(
    value: np.ndarray, multiplier: np.ndarray, shift: np.ndarray, out_zp: int, clause: str
) -> tuple[str, np.ndarray]:
    """Reading ``v1-inexact-round-require``: with INEXACT_ROUND the int32 result may be
    any integer within err_bnd of out_ref (plus ``out_zp``), so a REQUIRE that it fits
    int32 (apply_scale_16's, apply_add_s's) holds only where it holds for every one of
    them; elsewhere a compliant implementation may break it, and the result is
    unpredictable."""
    low, high = inexact_round_bounds(inexact_scaled(value, multiplier, shift, out_zp), out_zp)
    return clause, (low >= I32_MIN) & (high <= I32_MAX)


def inexact_round_range(
    value: np.ndarray,
    multiplier: np.ndarray,
    shift: np.ndarray,
    out_zp: int,
    out_t: DType,
    unsigned: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """The [low, high] range an INEXACT_ROUND result may take, per element: the
    ceiling and floor of out_ref -/+ err_bnd plus the zero point, clipped to the
    output type (its unsigned range for an unsigned output: the readings table)."""
    scaled = inexact_scaled(value, multiplier, shift, out_zp)
    params = IntRangeParams(int(out_zp), unsigned)
    low, high = int_range(scaled, params, out_t)
    return low.astype(np.int64), high.astype(np.int64)

"""Mutants of the element-wise binary operators (reference/ops/elementwise_binary.py),
and the vector-kernel bugs (remainder loops, tiles, broadcasting) every binary operator
shares."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from conformance.backends.mutants import (
    Result,
    mutant,
    with_attrs,
    with_inputs,
)
from conformance.backends.mutants.tools import (
    I32_MAX,
    I32_MIN,
    broadcast_pair,
    ignoring_requires,
    output_of,
)
from conformance.backends.mutants.tools import broadcast_pair as _pair
from conformance.backends.mutants.tools import output_of as _out
from conformance.dtypes import FP16, I32, I64
from conformance.spec import Spec
from reference import arithmetic as ar
from reference.broadcast import apply_broadcast
from reference.context import OpContext
from reference.registry import OpFunction


@mutant(
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


@mutant(
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


@mutant(
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


@mutant(
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


@mutant(
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


@mutant(
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


@mutant(
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


@mutant(
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


@mutant(
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


@mutant(
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


@mutant(
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


@mutant(
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


def binary_operators(spec: Spec) -> tuple[str, ...]:
    """Element-wise operators with two broadcast operands, as tosa.xml groups them."""
    return tuple(
        op.name
        for group in ("elementwise-binary", "comparison")
        for op in spec.groups().get(group, [])
        if {"input1", "input2"} <= {a.name for a in op.inputs}
    )


LANES = 8  # vector width of the modelled kernels (elements)


TILE = 4096  # elements per tile of the modelled fp16 kernel


@mutant(
    "elementwise-row-remainder-stale",
    binary_operators,
    f"innermost dimension > {LANES} and not a multiple of {LANES}",
    f"the {LANES}-lane kernel has no remainder loop: the last W % {LANES} elements of each "
    f"row are stored from the previous vector (element j gets the result of j - {LANES})",
    f"element-wise vectors whose innermost dimension is not a multiple of {LANES} "
    f"(e.g. 13), with values that differ along it",
    breaks="every element-wise operator: for_each(index in shape) computes every output "
    "element from its own inputs",
)
def _row_remainder_stale(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    out = output_of(result)
    w = out.shape[-1] if out.ndim else 0
    tail = w % LANES
    if w <= LANES or tail == 0:
        return result
    stale = np.array(out, copy=True)
    stale[..., w - tail :] = out[..., w - tail - LANES : w - LANES]
    return {"output": stale}


@mutant(
    "fp16-add-sub-tile-operand-stale",
    ["ADD", "SUB"],
    f"fp16 with more than {TILE} output elements",
    f"the tiled fp16 kernel does not advance input2's pointer past the first {TILE}-element "
    f"tile: element i reads input2 at i mod {TILE}",
    f"fp16 ADD/SUB vectors with more than {TILE} elements whose input2 differs between tiles",
    breaks="ADD.tosac / SUB.tosac: value2 = tensor_read(input2, shape2, apply_broadcast(...)) "
    "at every index",
)
def _fp16_tile_stale(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    shape = ctx.out_shape()
    if ctx.dtype("in_out_t") is not FP16 or math.prod(shape) <= TILE:
        return result
    a, b = broadcast_pair(ctx, ar.as_float)
    flat = np.ascontiguousarray(b).reshape(-1)
    stale = flat[np.arange(flat.size) % TILE].reshape(shape)
    with np.errstate(all="ignore"):
        return {"output": a + stale if ctx.name == "ADD" else a - stale}


def _cycling_is_broadcast(shape: tuple[int, ...], out: tuple[int, ...]) -> bool:
    """Reading a tensor of ``shape`` at output element i as its element i mod size is the
    broadcast exactly when every broadcast (size-1) axis comes before every kept one."""
    kept = False
    for d, o in zip(shape, out, strict=True):
        if d == o and o > 1:
            kept = True
        elif d == 1 and o > 1 and kept:
            return False
    return True


@mutant(
    "broadcast-by-cycling",
    lambda spec: (*binary_operators(spec), "SELECT"),
    "an operand with a size-1 axis after a non-broadcast one",
    "broadcasting is done by cycling through the smaller operand (element i mod its size), "
    "which is right only when its size-1 axes all lead ([1, 1, C] but not [N, 1, C])",
    "element-wise and SELECT vectors broadcasting a size-1 middle or last axis "
    "(e.g. [2, 1, 3] against [2, 4, 3])",
    breaks="library apply_broadcast: an index of a size-1 axis of the operand is 0, other "
    "axes keep the output's index",
)
def _broadcast_by_cycling(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # the real graph's ERROR_IFs and REQUIREs
    out = ctx.out_shape()
    size = math.prod(out)
    changes = {}
    # the broadcast operands (MUL's shift is not one)
    for name in ("input1", "input2", "input3"):
        if name not in ctx.operands.inputs:
            continue
        x = np.asarray(ctx.arg(name))
        if x.ndim != len(out) or x.size in (0, size) or _cycling_is_broadcast(x.shape, out):
            continue
        changes[name] = x.reshape(-1)[np.arange(size) % x.size].reshape(out)
    if not changes:
        return result
    # Integer results of the new pairings wrap as the kernel's arithmetic does.
    return original(ignoring_requires(with_inputs(ctx, **changes)))


# -- added by the second red-team pass --------------------------------------------------


@mutant(
    "logical-shift-count-masked",
    ["LOGICAL_LEFT_SHIFT", "LOGICAL_RIGHT_SHIFT"],
    "i8 / i16 with a shift of at least the lane width (8 / 16) up to 31",
    "the shift count is taken modulo the lane width, as RISC-V vsll / vsrl use only the "
    "low log2(SEW) bits of the shift: an i8 shift by 9 shifts by 1 instead of giving 0",
    "i8 / i16 LOGICAL_LEFT_SHIFT and LOGICAL_RIGHT_SHIFT vectors with shifts of 8..31 / "
    "16..31 and non-zero inputs (i8 1 << 9 = 0, not 2)",
    breaks="LOGICAL_LEFT_SHIFT.tosac: REQUIRE(0 <= value2 && value2 <= 31) for every "
    "in_out_t, result = value1 << value2 in in_out_t (all bits shifted out)",
)
def _logical_shift_masked(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # the REQUIRE 0 <= value2 <= 31
    bits = ctx.dtype("in_out_t").bits
    shift = np.asarray(ctx.arg("input2"))
    if bits >= 32 or not np.any(ar.as_int(shift) >= bits):
        return result
    masked = (ar.as_int(shift) & (bits - 1)).astype(shift.dtype)
    return original(with_inputs(ctx, input2=masked))


@mutant(
    "mul-narrow-product-wraps",
    ["MUL"],
    "i8 / i16 inputs whose product leaves the input type's range",
    "the product is formed in the input lane width (NEON vmul.s8 / vmul.s16 instead of "
    "the widening vmull), then sign-extended to the i32 output: it wraps",
    "MUL i8 / i16 vectors whose products leave -128..127 / -32768..32767 (i8 100 * 2 = "
    "200, not -56)",
    breaks="MUL.tosac: result = apply_mul_s(value1, value2) written to out_t = i32_t "
    "(the full product of i8 / i16 operands)",
)
def _mul_narrow_product(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    in_t = ctx.dtype("in_t")
    if not in_t.is_int or in_t.bits >= 32:
        return result
    a, b = broadcast_pair(ctx, ar.as_int)
    return {"output": ar.wrap(a * b, in_t.bits)}


@mutant(
    "pow-negative-base-via-exp-log",
    ["POW"],
    "floating point, input1 < 0 with an integral input2",
    "POW lowered as exp(input2 * log(input1)): log of a negative base is NaN, so "
    "integral powers of negative numbers are NaN (pow(-2, 3) gives NaN, not -8)",
    "POW vectors with negative bases and integral exponents (-2 ** 3, -3 ** 2, -5 ** 0)",
    breaks="introduction, POW accuracy: only 'x is less than zero and y is non-integral' "
    "must give NaN; otherwise the result is within the bound of the fp64 pow(x, y)",
)
def _pow_exp_log(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    a, _ = broadcast_pair(ctx, ar.as_float)
    return {"output": np.where(a < 0, np.nan, output_of(result))}


@mutant(
    "pow-negative-zero-base-sign-lost",
    ["POW"],
    "floating point, input1 = -0 with an odd integral input2",
    "POW computes |x| ** y and fixes the sign with (x < 0 && y odd): -0 < 0 is false, so a "
    "-0 base is taken as +0 (pow(-0, -3) is +inf instead of -inf, pow(-0, 3) is +0)",
    "POW vectors pairing a -0.0 base with odd integral exponents, negative ones above all "
    "(-0.0 ** -1 = -inf)",
    breaks="introduction, POW accuracy: the result is checked against the fp64 "
    "pow(x, y), and pow(-0, y) for an odd integer y < 0 is -inf",
)
def _pow_negative_zero(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    a, b = broadcast_pair(ctx, ar.as_float)
    with np.errstate(all="ignore"):
        odd = np.isfinite(b) & (np.abs(np.fmod(b, 2.0)) == 1.0)
        lost = (a == 0) & np.signbit(a) & odd
        return {"output": np.where(lost, np.power(0.0, b), output_of(result))}


@mutant(
    "ars-round-add-overflows",
    ["ARITHMETIC_RIGHT_SHIFT"],
    "i32 with round = true, value1 > 2**31 - 1 - 2**(value2 - 1)",
    "the rounded shift is computed as (value1 + (1 << (value2 - 1))) >> value2 in 32 bits: "
    "the addition wraps for values near the top of the range, so the result is negative",
    "ARITHMETIC_RIGHT_SHIFT i32 round=true vectors with value1 near 2**31 - 1 and a "
    "shift >= 1 (2**31 - 1 >> 1 = 2**30, not -2**30)",
    breaks="ARITHMETIC_RIGHT_SHIFT.tosac: if (round && value2 > 0) result = result + "
    "((value1 >> (value2 - 1)) & 1): the rounding bit is added after the shift, nothing "
    "overflows",
)
def _ars_round_overflows(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # the REQUIRE 0 <= value2 <= 31
    if ctx.dtype("in_out_t") is not I32 or not bool(ctx.attr("round", False)):
        return result
    a, b = broadcast_pair(ctx, ar.as_int)
    rounding = np.where(b > 0, np.left_shift(np.int64(1), np.maximum(b - 1, 0)), 0)
    return {"output": np.right_shift(ar.wrap(a + rounding, 32), b)}


def elementwise_operators(spec: Spec) -> tuple[str, ...]:
    """Every operator of the element-wise groups (one output, computed element by
    element): binary, unary, ternary, comparison, activation and type conversion."""
    groups = (
        "elementwise-binary",
        "elementwise-unary",
        "elementwise-ternary",
        "comparison",
        "activation",
        "type-conversion",
    )
    return tuple(op.name for group in groups for op in spec.groups().get(group, []))


INDEX_WRAP = 1 << 16  # the modelled kernel's 16-bit element counter


@mutant(
    "elementwise-index-u16-wraps",
    elementwise_operators,
    f"more than {INDEX_WRAP} output elements",
    "the element-wise kernel walks the tensor with a 16-bit element index (a DMA "
    f"descriptor's length field): element i is computed from the inputs at i mod "
    f"{INDEX_WRAP}, so everything past the first {INDEX_WRAP} elements repeats them",
    f"element-wise vectors with more than {INDEX_WRAP} elements ({INDEX_WRAP} + 1 is "
    "enough) whose values differ past the first 65536",
    breaks="every element-wise operator: for_each(index in shape) computes every output "
    "element from its own inputs (a tensor may hold up to (1 << (MAX_LOG2_SIZE + 1)) - 1 "
    "bytes)",
)
def _index_u16_wraps(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    name = next(iter(result))
    out = np.asarray(result[name])
    if out.size <= INDEX_WRAP:
        return result
    flat = out.reshape(-1)
    return {name: flat[np.arange(flat.size) % INDEX_WRAP].reshape(out.shape)}


def _signalling_nan(x: np.ndarray, dt: Any) -> np.ndarray:
    """Where the stored float ``x`` is a NaN with its quiet bit (the top mantissa bit)
    clear."""
    x = np.ascontiguousarray(x)
    view = {1: np.uint8, 2: np.uint16, 4: np.uint32}[x.dtype.itemsize]
    quiet = 1 << (dt.normal_frac - 1)
    with np.errstate(invalid="ignore"):
        return np.isnan(x.astype(np.float64)) & ((x.view(view).astype(np.int64) & quiet) == 0)


@mutant(
    "minmax-signalling-nan-dropped",
    ["MAXIMUM", "MINIMUM"],
    "floating point, a signalling NaN (quiet bit clear) in one operand only",
    "the NaN test before the compare-select looks at the quiet bit only (a hand-written "
    "is_nan: exponent all ones and top mantissa bit set): a signalling NaN is not seen, "
    "the comparison is false and the other operand is returned",
    "MAXIMUM / MINIMUM vectors with signalling NaNs (fp32 0x7F800001, fp16 0x7C01, bf16 "
    "0x7F81) against numbers",
    breaks="library apply_max_s / apply_min_s: if (isNaN(a) || isNaN(b)) return NaN, for "
    "every NaN encoding",
)
def _minmax_snan(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    dt = ctx.dtype("in_out_t")
    if not dt.is_float or dt.normal_frac is None:
        return result
    shape = ctx.out_shape()
    raw_a = apply_broadcast(np.asarray(ctx.arg("input1")), shape)
    raw_b = apply_broadcast(np.asarray(ctx.arg("input2")), shape)
    snan_a, snan_b = _signalling_nan(raw_a, dt), _signalling_nan(raw_b, dt)
    a, b = ar.as_float(raw_a), ar.as_float(raw_b)
    if not (np.any(snan_a & ~np.isnan(b)) or np.any(snan_b & ~np.isnan(a))):
        return result
    out = np.where(snan_a & ~np.isnan(b), b, output_of(result))
    return {"output": np.where(snan_b & ~np.isnan(a), a, out)}


@mutant(
    "mul-i64-low-32-bits",
    ["MUL"],
    "i64 (TOSA 1.1, EXT-INT64) products past the i32 range",
    "the i64 multiply reuses the 32-bit lane kernel (vmul.i32 on the low words, then "
    "sign-extended): only the low 32 bits of the product are kept",
    "MUL signed 64 vectors whose products leave -2**31 .. 2**31 - 1 (2**20 * 2**20 = 2**40, not 0)",
    breaks="MUL.tosac (1.1): result = apply_mul_s<out_t>(value1, value2), the low 64 bits "
    "of the product for i64_t",
)
def _mul_i64_low_32(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if ctx.dtype("in_t") is not I64:
        return result
    return {"output": ar.wrap(ar.as_int(output_of(result)), 32)}

"""Mutants of the element-wise unary operators (reference/ops/elementwise_unary.py)."""

from __future__ import annotations

import numpy as np

from conformance.backends.mutants import (
    Result,
    Wrapper,
    mutant,
    skipping_error_if,
    with_attrs,
)
from conformance.backends.mutants.tools import add_ulps, output_of, round_mantissa
from conformance.backends.mutants.tools import output_of as _out
from conformance.dtypes import I8, I64
from reference import arithmetic as ar
from reference.context import OpContext
from reference.ops.elementwise_unary import INPUT1_ZP_CLAUSE, OUTPUT_ZP_CLAUSE
from reference.registry import OpFunction


@mutant(
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


_NEGATE_ZP_CLAUSES = (INPUT1_ZP_CLAUSE, OUTPUT_ZP_CLAUSE)


@mutant(
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


mutant(
    "exp-5-ulp",
    ["EXP"],
    "floating point",
    "EXP from a fast approximation 5 ulp off (passes only where the bound is wide, |x| > 1.25)",
    "EXP vectors with |x| < 1.25 (the ABS_ERROR bound is (1 + |x|) ulp there)",
)(_ulp_error(5))


mutant(
    "log-7-ulp",
    ["LOG"],
    "floating point",
    "LOG from a fast approximation 7 ulp off (the spec allows 5)",
    "any LOG vector with finite non-zero results",
)(_ulp_error(7))


@mutant(
    "reciprocal-fast-approx",
    ["RECIPROCAL"],
    "fp32 (fp16 and bf16 results stay within 1 ulp)",
    "RECIPROCAL from a 12-bit hardware estimate (x86 rcpps style) without a Newton step",
    "RECIPROCAL fp32 vectors",
)
def _reciprocal_approx(original: OpFunction, ctx: OpContext) -> Result:
    return {"output": round_mantissa(_out(original(ctx)), 11)}


@mutant(
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


def _negate_zp_ignored(attribute: str) -> Wrapper:
    def wrapper(original: OpFunction, ctx: OpContext) -> Result:
        # Only i8 may have zero points; for other types a zero point is an ERROR_IF,
        # which the bug keeps.
        if ctx.dtype("in_out_t") is not I8 or not ctx.attr(attribute, 0):
            return original(ctx)
        return original(with_attrs(ctx, **{attribute: 0}))

    return wrapper


mutant(
    "negate-input-zp-ignored",
    ["NEGATE"],
    "i8 with input1_zp != 0",
    "input1_zp is not subtracted before the negation (output_zp still added)",
    "NEGATE i8 vectors with a non-zero input1_zp",
    breaks="NEGATE.tosac: value = apply_sub_s<acc_t>(value1, input1_zp) before 0 - value",
)(_negate_zp_ignored("input1_zp"))


mutant(
    "negate-output-zp-ignored",
    ["NEGATE"],
    "i8 with output_zp != 0",
    "output_zp is not added after the negation (input1_zp still subtracted)",
    "NEGATE i8 vectors with a non-zero output_zp",
    breaks="NEGATE.tosac: value = apply_add_s<acc_t>(value, output_zp) before the clip",
)(_negate_zp_ignored("output_zp"))


# -- added by the second red-team pass --------------------------------------------------


@mutant(
    "clz-zero-gives-31",
    ["CLZ"],
    "input 0",
    "CLZ as 31 - bsr(x) (x86 BSR, or __builtin_clz, whose result for 0 is undefined): "
    "the bit scan of 0 reads as bit 0, so CLZ(0) is 31 instead of 32",
    "CLZ vectors holding 0",
    breaks="CLZ.tosac: result = count_leading_zeros(value1), which is 32 for a value of 0",
)
def _clz_zero(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    x = ar.as_int(ctx.arg("input1"))
    return {"output": np.where(x == 0, 31, ar.as_int(output_of(result)))}


INT32_INDEFINITE = -(2**31)  # what x86 cvttss2si returns for NaN and out-of-range values


@mutant(
    "ceil-floor-through-int32",
    ["CEIL", "FLOOR"],
    "floating point: |result| >= 2**31, infinities, NaN",
    "CEIL / FLOOR done through an int32 conversion and back (SSE2 without roundps): values "
    "beyond the int32 range, infinities and NaN become -2**31 (the 'integer indefinite')",
    "CEIL / FLOOR vectors with values beyond +-2**31 (fp32 / bf16: 3e9, 1e30), infinities "
    "and NaN (fp16 results of -2**31 overflow to -inf)",
    breaks="CEIL.tosac / FLOOR.tosac: result = apply_ceil / apply_floor of value1 in "
    "in_out_t: the integral value, infinities and NaN unchanged",
)
def _ceil_floor_int32(original: OpFunction, ctx: OpContext) -> Result:
    # The real kernel also turns -0 results into +0, which the 0.5 ulp rule of CEIL and
    # FLOOR allows (a zero's sign is not checked there): left out, the mutant only
    # changes what the spec forbids.
    r = ar.as_float(output_of(original(ctx)))
    with np.errstate(invalid="ignore"):
        fits = np.isfinite(r) & (r >= -(2.0**31)) & (r < 2.0**31)
    return {"output": np.where(fits, r, float(INT32_INDEFINITE))}


@mutant(
    "rsqrt-via-pow",
    ["RSQRT"],
    "floating point, -0 and -inf",
    "RSQRT as C pow(x, -0.5): pow(-0, -0.5) is +inf (RSQRT(-0) must be -inf) and "
    "pow(-inf, -0.5) is +0 (RSQRT of a negative value must be NaN)",
    "RSQRT vectors holding -0.0 and -inf",
    breaks="introduction, RSQRT accuracy: 'If the input is less than zero the result must "
    "be a NaN. Otherwise if the input is a zero the output must be an infinity of the same "
    "sign'",
)
def _rsqrt_via_pow(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    x = ar.as_float(ctx.arg("input1"))
    out = np.where(x == 0, np.inf, output_of(result))  # pow(+-0, -0.5) = +inf
    return {"output": np.where(x == -np.inf, 0.0, out)}


@mutant(
    "logical-not-bitwise",
    ["LOGICAL_NOT"],
    "all",
    "LOGICAL_NOT done as a bitwise NOT of the bool byte (~b instead of !b): ~1 is 0xFE "
    "and ~0 is 0xFF, both non-zero, so every result is true",
    "LOGICAL_NOT vectors with a true input",
    breaks="LOGICAL_NOT.tosac: result = !value1",
)
def _logical_not_bitwise(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    return {"output": np.ones_like(np.asarray(output_of(result)), dtype=np.bool_)}


@mutant(
    "clz-via-fp32-exponent",
    ["CLZ"],
    "values within half an fp32 ulp below a power of two >= 2**25 (2**31 - 1 among them)",
    "CLZ from the exponent of the value converted to fp32 (a core without a CLZ "
    "instruction): the conversion rounds 2**k - 1 up to 2**k for k >= 25, so "
    "CLZ(2**31 - 1) is 0 instead of 1",
    "CLZ vectors with 2**31 - 1 and values just below 2**25 ... 2**31 (e.g. 2**25 - 1)",
    breaks="CLZ.tosac: result = count_leading_zeros(value1), of the exact 32-bit value",
)
def _clz_fp32(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    x = ar.as_int(ctx.arg("input1"))
    _, exponent = np.frexp(np.where(x > 0, x, 1).astype(np.float32).astype(np.float64))
    return {"output": np.where(x > 0, 32 - exponent.astype(np.int64), output_of(result))}


COS_TABLE = 256  # entries over one period


@mutant(
    "cos-lut-interpolated",
    ["COS"],
    "floating point, 0 < |x| < about 0.2 (mod 2 pi) where the bound is below the table's error",
    f"COS from a {COS_TABLE}-entry table over [0, 2 pi) with linear interpolation (an NPU's "
    "LUT unit): its absolute error of up to 7.5e-5 is fine for large |x| but not near 0, "
    "where the bound shrinks with |x|",
    "COS vectors with small inputs (1e-3 <= |x| <= 0.1, e.g. 0.01)",
    breaks="introduction, COS accuracy: err_bnd = calcAbsErrorBound<in_out_t>(x, "
    "1+abs(x), 0, 2), which is |x| * (1 + |x|) * 2**(-normal_frac / 2)",
)
def _cos_lut(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its shape check
    x = ar.as_float(ctx.arg("input"))
    step = 2 * np.pi / COS_TABLE
    with np.errstate(invalid="ignore"):
        position = np.mod(np.abs(x), 2 * np.pi) / step
        index = np.floor(position)
        fraction = position - index
        low, high = np.cos(index * step), np.cos((index + 1) * step)
        table = low + fraction * (high - low)
    return {"output": np.where(np.isfinite(x), table, output_of(result))}


@mutant(
    "clz-i64-counts-32-bits",
    ["CLZ"],
    "i64 (TOSA 1.1, EXT-INT64)",
    "the i64 CLZ runs the 32-bit instruction (__builtin_clz, lzcnt r32) on the value "
    "truncated to its low word: the high 32 bits are never looked at",
    "CLZ signed 64 vectors with values past the low word (2**40 gives 23, not 8) or of "
    "0 (64, not 32)",
    breaks="arithmetic_helpers.tosac (1.1): count_leading_zeros<i64_t> counts from bit 63, "
    "and gives 64 for 0",
)
def _clz_i64_32(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if ctx.dtype("in_out_t") is not I64:
        return result
    low = ar.wrap(ar.as_int(ctx.arg("input1")), 32)
    return {"output": ar.count_leading_zeros(low, 32)}

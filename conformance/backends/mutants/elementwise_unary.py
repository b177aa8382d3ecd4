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
from conformance.dtypes import I8
from reference import arithmetic as ar
from reference.context import OpContext
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


_NEGATE_ZP_CLAUSES = (
    "in_out_t != i8_t && input1_zp != 0",
    "in_out_t != i8_t && output_zp != 0",
)


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

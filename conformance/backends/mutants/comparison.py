"""Mutants of the comparison operators (reference/ops/comparison.py)."""

from __future__ import annotations

import numpy as np

from conformance.backends.mutants import (
    Result,
    mutant,
)
from conformance.backends.mutants.tools import broadcast_pair as _pair
from conformance.backends.mutants.tools import output_of as _out
from reference import arithmetic as ar
from reference.broadcast import apply_broadcast
from reference.context import OpContext
from reference.registry import OpFunction


@mutant(
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


# -- added by the second red-team pass --------------------------------------------------


def _bits(ctx: OpContext, name: str, signed: bool) -> np.ndarray:
    """The stored bit patterns of a float operand, broadcast to the output, as integers."""
    x = np.ascontiguousarray(apply_broadcast(np.asarray(ctx.arg(name)), ctx.out_shape()))
    width = x.dtype.itemsize
    view = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}[width]
    raw = x.view(view).astype(np.int64)
    return raw if signed else raw & ((1 << (8 * width)) - 1)


@mutant(
    "equal-float-bitwise",
    ["EQUAL"],
    "floating point, -0 against +0 (and NaN against the same NaN)",
    "float EQUAL done as an integer compare of the bit patterns (a vectoriser's "
    "memcmp-style fast path): -0 == +0 is false and a NaN equals itself",
    "EQUAL float vectors comparing -0.0 with +0.0, and NaN with NaN",
    breaks="introduction, EQUAL accuracy: 'The sign of the zero is ignored'; 'If any input "
    "is a NaN and the operation is a comparison ... the result must be false'",
)
def _equal_bitwise(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if not ctx.dtype("in_t").is_float:
        return result
    return {"output": _bits(ctx, "input1", False) == _bits(ctx, "input2", False)}


@mutant(
    "greater-float-as-int-bits",
    ["GREATER"],
    "floating point, both operands negative, +0 against -0, NaN",
    "float GREATER done as a signed-integer compare of the bit patterns (the sort-key "
    "trick without flipping negative values): negative numbers compare in reverse, "
    "+0 > -0 is true, and a positive NaN is greater than every number",
    "GREATER float vectors with two negative operands (-1 > -2 is true), +0.0 against "
    "-0.0, and NaN operands",
    breaks="GREATER.tosac: result = (value1 > value2) as floating-point values; "
    "introduction: the sign of the zero is ignored, NaN compares false",
)
def _greater_int_bits(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if not ctx.dtype("in_t").is_float:
        return result
    return {"output": _bits(ctx, "input1", True) > _bits(ctx, "input2", True)}


@mutant(
    "compare-i32-through-fp32",
    ["EQUAL", "GREATER", "GREATER_EQUAL"],
    "i32, distinct operands beyond 2**24 that round to the same fp32 value",
    "i32 comparisons done on operands converted to fp32 (a float-only compare unit, a GPU "
    "delegate): values beyond 2**24 that differ only in their low bits compare equal "
    "(EQUAL(2**24 + 1, 2**24) is true, GREATER of them false)",
    "EQUAL / GREATER / GREATER_EQUAL i32 vectors with large, nearly equal operands "
    "(a and a + 1 with |a| > 2**24)",
    breaks="EQUAL.tosac / GREATER.tosac / GREATER_EQUAL.tosac: value1 == / > / >= value2 "
    "on the exact int32_t values",
)
def _compare_through_fp32(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if ctx.dtype("in_t").name != "i32":
        return result
    a, b = _pair(ctx, lambda v: np.asarray(v).astype(np.float32))
    fn = {"EQUAL": np.equal, "GREATER": np.greater, "GREATER_EQUAL": np.greater_equal}
    return {"output": fn[ctx.name](a, b)}

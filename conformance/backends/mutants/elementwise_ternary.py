"""Mutants of the element-wise ternary operators (reference/ops/elementwise_ternary.py)."""

from __future__ import annotations

import numpy as np

from conformance.backends.mutants import (
    Result,
    mutant,
)
from reference import arithmetic as ar
from reference.broadcast import apply_broadcast
from reference.context import OpContext
from reference.engine import to_storage
from reference.registry import OpFunction


@mutant(
    "select-rank0-condition-false",
    ["SELECT"],
    "rank 0",
    "a rank-0 condition is read as an empty tensor (its element count computed from no "
    "dimensions as 0): every result is input3",
    "SELECT rank-0 vectors whose condition is true",
    breaks="SELECT.tosac with shape [] (rank 0 is a tensor of one element): "
    "value = condition ? value2 : value3",
)
def _select_rank0(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if ctx.out_shape() != ():
        return result
    other = ctx.arg("input3")
    return {"output": ar.as_float(other) if ctx.dtype("in_out_t").is_float else other}


# -- added by the second red-team pass --------------------------------------------------


@mutant(
    "select-arithmetic-blend",
    ["SELECT"],
    "floating point: an infinity or NaN in the operand not chosen, or a chosen -0",
    "SELECT done as an arithmetic blend c * a + (1 - c) * b (a shader mix(), a GPU path "
    "without a select): 0 * inf is NaN, a NaN in the unchosen operand spreads, and a chosen "
    "-0 plus +0 gives +0",
    "float SELECT vectors with infinities or NaN in input2 / input3 where the other is "
    "chosen, and -0.0 chosen",
    breaks="SELECT.tosac: result = value2 if value1 else value3: the chosen value unchanged, "
    "the other one not read",
)
def _select_blend(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if not ctx.dtype("in_out_t").is_float:
        return result
    shape = ctx.out_shape()
    c = apply_broadcast(ctx.arg("input1"), shape).astype(np.float64)
    a = ar.as_float(apply_broadcast(ctx.arg("input2"), shape))
    b = ar.as_float(apply_broadcast(ctx.arg("input3"), shape))
    with np.errstate(invalid="ignore"):
        return {"output": c * a + (1.0 - c) * b}


HALF_PI = np.pi / 2


@mutant(
    "sin-as-shifted-cos",
    ["SIN"],
    "floating point, |x| small (the bound is |x| * |x| * 2**(-normal_frac/2))",
    "SIN computed on a cosine unit as cos(x - pi/2), the subtraction in the tensor type: "
    "pi/2 is not exact there, so sin(0) is about -4.4e-8 (fp32) instead of 0, and small "
    "inputs lose their relative accuracy",
    "SIN vectors with 0 and small inputs (|x| < 0.01 for fp32)",
    breaks="introduction, SIN accuracy: err_bnd = calcAbsErrorBound<in_out_t>(x, abs(x), "
    "0, 2), which is 0 at x = 0 and tiny for small x",
)
def _sin_shifted_cos(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)  # its shape check
    dt = ctx.dtype("in_out_t")
    x = ar.as_float(ctx.arg("input"))
    shifted = to_storage(x - to_storage(np.asarray(HALF_PI), dt).astype(np.float64), dt)
    with np.errstate(invalid="ignore"):
        return {"output": np.cos(shifted.astype(np.float64))}

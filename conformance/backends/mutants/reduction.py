"""Mutants of the reduction operators (reference/ops/reduction.py)."""

from __future__ import annotations

import numpy as np

from conformance.backends.mutants import (
    Result,
    mutant,
    with_inputs,
)
from conformance.backends.mutants.tools import lowest
from conformance.backends.mutants.tools import nan_replaced as _nan_replaced
from conformance.dtypes import BF16, FP32
from reference.context import OpContext
from reference.registry import OpFunction


@mutant(
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


@mutant(
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

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
from conformance.dtypes import BF16, FP32, I64, DType
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


# -- added by the second red-team pass --------------------------------------------------

REDUCE_LANES = 8  # vector width of the modelled reduction kernel (elements)


@mutant(
    "reduce-tail-lanes-zero-padded",
    ["REDUCE_ALL", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PRODUCT"],
    f"the innermost axis reduced, its length not a multiple of {REDUCE_LANES}",
    f"the {REDUCE_LANES}-lane reduction loads its last partial vector zero-padded instead "
    "of padded with the reduction's identity: a zero joins every reduction of the "
    "innermost axis (all-negative REDUCE_MAX gives 0, REDUCE_PRODUCT gives 0, REDUCE_ALL "
    "false)",
    f"REDUCE_MAX of all-negative rows, REDUCE_MIN of all-positive rows, REDUCE_PRODUCT and "
    f"REDUCE_ALL of all-true rows, over the last axis with a length that is not a multiple "
    f"of {REDUCE_LANES} (e.g. 3)",
    breaks="REDUCE_MAX.tosac etc.: acc starts at the identity (minimum_s<in_out_t>(), "
    "true, 1.0) and takes in exactly the shape1[axis] input values",
)
def _reduce_tail_zero(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its ERROR_IFs (axis in range) before axis is used
    x = np.asarray(ctx.arg("input"))
    axis = int(ctx.attr("axis"))
    if x.size == 0 or axis != x.ndim - 1 or x.shape[axis] % REDUCE_LANES == 0:
        return result
    out = np.asarray(result["output"])
    if ctx.name == "REDUCE_ALL":
        return {"output": np.zeros_like(out, dtype=np.bool_)}
    wide = out.astype(np.float64) if ctx.dtype("in_out_t").is_float else out.astype(np.int64)
    with np.errstate(invalid="ignore"):
        if ctx.name == "REDUCE_PRODUCT":
            return {"output": wide * 0.0}  # inf * 0 is NaN, as the kernel's product
        if ctx.name == "REDUCE_MAX":
            return {"output": np.where(wide < 0, 0, wide)}
        return {"output": np.where(wide > 0, 0, wide)}


@mutant(
    "reduce-any-count-wraps-u8",
    ["REDUCE_ANY"],
    "a multiple of 256 true values along the axis (axis length >= 256)",
    "REDUCE_ANY lowered as a sum of the bools in a uint8 accumulator, then != 0: 256 "
    "true values wrap the count to 0 and give false",
    "REDUCE_ANY vectors with exactly 256 (or 512, ...) true values along an axis",
    breaks="REDUCE_ANY.tosac: acc = acc || value over every element: true once any element is true",
)
def _reduce_any_u8(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)  # its ERROR_IFs (axis in range) before axis is used
    axis = int(ctx.attr("axis"))
    x = np.asarray(ctx.arg("input")).astype(np.int64)
    return {"output": (np.sum(x, axis=axis, keepdims=True) % 256) != 0}


def _identity(name: str, dt: DType) -> float | bool:
    """The value a reduction starts from (an element that changes nothing)."""
    if name in ("REDUCE_SUM", "REDUCE_ANY"):
        return False if dt.name == "bool" else 0
    if name in ("REDUCE_ALL", "REDUCE_PRODUCT"):
        return True if dt.name == "bool" else 1
    if name == "REDUCE_MAX":
        return lowest(dt)
    return np.inf if dt.has_inf else dt.finite_range[1]


AXIS_COUNTER = 1 << 16  # the modelled kernel's 16-bit loop counter


@mutant(
    "reduce-axis-count-u16-wraps",
    ["REDUCE_ALL", "REDUCE_ANY", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PRODUCT", "REDUCE_SUM"],
    f"reduced axis longer than {AXIS_COUNTER - 1}",
    "the reduction's loop count along the axis is held in 16 bits (a DSP's hardware loop "
    f"register): an axis of {AXIS_COUNTER} + n elements reduces only its first n",
    f"reduction vectors whose reduced axis has more than {AXIS_COUNTER - 1} elements "
    f"(e.g. REDUCE_SUM over {AXIS_COUNTER + 1} ones is {AXIS_COUNTER + 1}, not 1)",
    breaks="REDUCE_SUM.tosac etc.: for (i = 0; i < shape1[axis]; i++) takes in every "
    "element along the axis",
)
def _reduce_axis_u16(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its ERROR_IFs (axis in range) before axis is used
    x = np.asarray(ctx.arg("input"))
    axis = int(ctx.attr("axis"))
    length = x.shape[axis]
    if length < AXIS_COUNTER:
        return result
    position = np.arange(length).reshape([-1 if i == axis else 1 for i in range(x.ndim)])
    skipped = position >= length % AXIS_COUNTER
    identity = _identity(ctx.name, ctx.dtype("in_out_t"))
    unread = np.where(skipped, np.asarray(identity).astype(x.dtype), x)
    return original(with_inputs(ctx, input=unread))


REDUCE_CHUNK = 256  # elements per work-group of the modelled split reduction


@mutant(
    "reduce-split-axis-remainder-dropped",
    ["REDUCE_ALL", "REDUCE_ANY", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PRODUCT", "REDUCE_SUM"],
    f"reduced axis longer than {REDUCE_CHUNK} and not a multiple of it",
    f"axes longer than {REDUCE_CHUNK} are split into {REDUCE_CHUNK}-element work-groups "
    f"whose count is length / {REDUCE_CHUNK} rounded down (not up): the last partial "
    "chunk of the axis is never reduced",
    f"reduction vectors whose reduced axis is longer than {REDUCE_CHUNK} and not a "
    f"multiple of it (e.g. {REDUCE_CHUNK + 44}), with values in the tail that decide the "
    "result",
    breaks="REDUCE_SUM.tosac etc.: for (i = 0; i < shape1[axis]; i++) takes in every "
    "element along the axis, the last ones included",
)
def _reduce_split_remainder(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its ERROR_IFs (axis in range) before axis is used
    x = np.asarray(ctx.arg("input"))
    axis = int(ctx.attr("axis"))
    length = x.shape[axis]
    if length <= REDUCE_CHUNK or length % REDUCE_CHUNK == 0:
        return result
    position = np.arange(length).reshape([-1 if i == axis else 1 for i in range(x.ndim)])
    skipped = position >= length - length % REDUCE_CHUNK
    identity = _identity(ctx.name, ctx.dtype("in_out_t"))
    unread = np.where(skipped, np.asarray(identity).astype(x.dtype), x)
    return original(with_inputs(ctx, input=unread))


@mutant(
    "reduce-sum-i64-in-float64",
    ["REDUCE_SUM"],
    "i64 (TOSA 1.1, EXT-INT64) sums past 2**53",
    "the i64 sum is accumulated in float64 (a runtime whose number type is a double, or "
    "a GPU without 64-bit integer adds), then converted back: past 2**53 the low bits "
    "are lost",
    "REDUCE_SUM signed 64 vectors with terms or running sums past 2**53",
    breaks="REDUCE_SUM.tosac: acc = apply_add_s<acc_t>(acc, value) with acc_t = i64_t, "
    "exact integer sums",
)
def _reduce_sum_i64_float(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its REQUIREs: every running sum fits i64
    if ctx.dtype("acc_t") is not I64:
        return result
    axis = int(ctx.attr("axis"))
    total = np.sum(ctx.arg("input").astype(np.float64), axis=axis, keepdims=True)
    # The nearest int64 (2**63 itself, which rounding can reach, saturates).
    top = float(np.nextafter(2.0**63, 0))
    return {"output": np.clip(total, -(2.0**63), top).astype(np.int64)}

"""Mutants whose ERROR_IF check is off by one: each accepts the first value past the
boundary of one relational clause (``>`` where the pseudocode says ``>=``) and computes
what such a backend would, and is the reference everywhere else.  The must-fail
vectors at the boundary (strategies/boundaries.py) are what catches them."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from conformance.backends.mutants import Result, mutant, skipping_error_if, with_attrs, with_inputs
from conformance.spec import Spec
from reference.context import OpContext
from reference.ops.data_layout import SLICE_END_CLAUSE
from reference.ops.tensor_conv import OUT_PAD_X_CLAUSE, OUT_PAD_Y_CLAUSE
from reference.ops.tensor_pool_fft import POOL_PAD_X_CLAUSE, POOL_PAD_Y_CLAUSE
from reference.registry import OpFunction


def with_attributes(*names: str) -> Callable[[Spec], tuple[str, ...]]:
    """The operators that declare every attribute of ``names`` (from the spec model)."""

    def operators(spec: Spec) -> tuple[str, ...]:
        return tuple(
            sorted(
                op.name
                for op in spec.operators.values()
                if set(names) <= {a.name for a in op.attributes}
            )
        )

    return operators


def _ints(ctx: OpContext, name: str) -> list[int]:
    """An attribute or a (TOSA 1.0 shape_t) input's integers."""
    return [int(v) for v in np.asarray(ctx.attr(name)).reshape(-1)]


def _at_edge(values: list[int], limits: list[int]) -> bool:
    """Some value is at its limit and none past it: the one case an off-by-one check
    (``>`` for ``>=``) lets through."""
    pairs = list(zip(values, limits, strict=True))
    return any(v == lim for v, lim in pairs) and all(v <= lim for v, lim in pairs)


def _first_rank(ctx: OpContext) -> int:
    return len(ctx.input_tensors(ctx.op_spec.inputs[0].name)[0].shape)


@mutant(
    "error-if-off-by-one-axis",
    with_attributes("axis"),
    "axis == rank",
    "the axis check is axis > rank instead of axis >= rank: axis == rank is accepted and "
    "computed as if clamped to the last axis",
    "must-fail vectors whose axis is the rank (the first value past the boundary)",
    effect="accepts invalid graph",
    breaks="REVERSE.tosac: ERROR_IF(axis < 0 || axis >= rank(shape)); ARGMAX.tosac, "
    "REDUCE_*.tosac: the same with rank(shape1)",
)
def _axis_off_by_one(original: OpFunction, ctx: OpContext) -> Result:
    rank = _first_rank(ctx)
    if rank < 1 or int(ctx.attr("axis")) != rank:
        return original(ctx)
    return original(with_attrs(ctx, axis=rank - 1))


@mutant(
    "pool-pad-equal-kernel-accepted",
    with_attributes("kernel", "pad"),
    "a pad equal to the kernel size",
    "the pad check is pad > kernel instead of pad >= kernel: a window of padding only is "
    "accepted (its maximum is the lowest value, its average divides by zero elements)",
    "MAX_POOL2D / AVG_POOL2D must-fail vectors with a pad equal to the kernel",
    effect="accepts invalid graph",
    breaks="MAX_POOL2D.tosac, AVG_POOL2D.tosac: ERROR_IF(pad_right >= kernel_x || pad_left >= "
    "kernel_x) and ERROR_IF(pad_top >= kernel_y || pad_bottom >= kernel_y)",
)
def _pool_pad_equal_kernel(original: OpFunction, ctx: OpContext) -> Result:
    ky, kx = _ints(ctx, "kernel")
    pads = _ints(ctx, "pad")  # top, bottom, left, right
    if not _at_edge(pads, [ky, ky, kx, kx]):
        return original(ctx)
    return original(skipping_error_if(ctx, POOL_PAD_X_CLAUSE, POOL_PAD_Y_CLAUSE))


@mutant(
    "transpose-conv-out-pad-minus-kernel-accepted",
    ["TRANSPOSE_CONV2D"],
    "out_pad equal to minus the kernel size",
    "the out_pad check is out_pad < -KH instead of out_pad <= -KH: a crop of the whole "
    "kernel is accepted",
    "TRANSPOSE_CONV2D must-fail vectors with an out_pad of -KH or -KW",
    effect="accepts invalid graph",
    breaks="TRANSPOSE_CONV2D.tosac: ERROR_IF(out_pad_top <= -KH || out_pad_bottom <= -KH) and "
    "ERROR_IF(out_pad_left <= -KW || out_pad_right <= -KW)",
)
def _out_pad_minus_kernel(original: OpFunction, ctx: OpContext) -> Result:
    _, kh, kw, _ = ctx.input_tensor("weight").shape
    crop = [-v for v in _ints(ctx, "out_pad")]  # top, bottom, left, right
    if not _at_edge(crop, [kh, kh, kw, kw]):
        return original(ctx)
    return original(skipping_error_if(ctx, OUT_PAD_X_CLAUSE, OUT_PAD_Y_CLAUSE))


@mutant(
    "slice-one-past-end-accepted",
    ["SLICE"],
    "start + size == shape1 + 1",
    "the bounds check is start + size > shape1 + 1 (an inclusive end compared as "
    "exclusive): a slice one past the end is accepted and its last element read clamped",
    "SLICE must-fail vectors whose slice ends one past the input",
    effect="accepts invalid graph",
    breaks=f"SLICE.tosac: ERROR_IF({SLICE_END_CLAUSE})",
)
def _slice_one_past_end(original: OpFunction, ctx: OpContext) -> Result:
    start, size = np.asarray(_ints(ctx, "start")), np.asarray(_ints(ctx, "size"))
    shape1 = ctx.input_tensor("input1").shape
    over = start + size - np.asarray(shape1, dtype=np.int64)
    if over.size == 0 or over.max() != 1:
        return original(ctx)
    # Every other rule as the reference checks it, on the window one element earlier.
    inside = start - (over == 1)
    if "start" in ctx.attrs:
        result = original(with_attrs(ctx, start=tuple(int(v) for v in inside)))
    else:
        result = original(with_inputs(ctx, start=inside.astype(ctx.arg("start").dtype)))
    rows = [
        np.minimum(s + np.arange(n), d - 1) for s, n, d in zip(start, size, shape1, strict=True)
    ]
    out = np.asarray(result["output"])
    return {"output": ctx.arg("input1")[np.ix_(*rows)].astype(out.dtype)}

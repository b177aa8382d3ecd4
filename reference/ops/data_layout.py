"""Data layout operators: CONCAT, PAD, RESHAPE, REVERSE, SLICE, TILE, TRANSPOSE.

They move elements without converting them: outputs keep the input's storage type
bit for bit (NaN payloads, -0.0).  Shape arguments (``padding``, ``shape``, ``start``,
``size``, ``multiples``) arrive as int64 vectors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from conformance import dtypes
from reference.arguments import INPUTS_CLAUSE, OUTPUTS_CLAUSE, TYPES_CLAUSE
from reference.context import OpContext
from reference.ops.data_nodes import same_shape_or_unpredictable, to_type
from reference.registry import implements

# ERROR_IF clauses as the pseudocode states them (recipes and breakers import them).
CONCAT_AXIS_CLAUSE = "axis < 0 || axis >= max(1,rank(shapes1[0]))"
REVERSE_AXIS_CLAUSE = "axis < 0 || axis >= rank(shape)"
CONCAT_RANK_CLAUSE = "rank(input_shape) != rank(shapes1[0])"
PAD_RANK_CLAUSE = "rank(shape) != rank(shape1)"
SLICE_LENGTH_CLAUSE = "rank(shape1) != length(start) || rank(shape1) != length(size)"
RANK_CLAUSE = "rank(shape1) != rank(shape)"
CONCAT_SHAPE_CLAUSE = "shape[axis] != sum(shape_dim(shapes1[k], axis) for all k)"
SIZE_CLAUSE = "tensor_size(shape1) != tensor_size(shape)"

Result = dict[str, np.ndarray | list[np.ndarray]]
# maximum<size_t>: shape values are held as int64 (conformance.dtypes.SHAPE).
SIZE_MAX = cast(int, dtypes.SHAPE.max)


def first_failure(ctx: OpContext, checks: Sequence[tuple[str, np.ndarray]], what: str) -> None:
    """ERROR_IF checks that the pseudocode makes inside a loop over an index.

    ``checks`` are (clause, condition per index) in the order the loop body states
    them; the rule that fires is the first one to hold at the first index where any
    holds, which is what running the loop would report.
    """
    if not checks:
        return
    table = np.array([np.asarray(c, dtype=bool).reshape(-1) for _, c in checks])
    if table.size == 0 or not table.any():
        return
    index = int(np.argmax(table.any(axis=0)))
    rule = int(np.argmax(table[:, index]))
    ctx.error_if(True, checks[rule][0], f"{what} {index}")


def tensor_size(ctx: OpContext, shape: Sequence[int], name: str) -> int:
    """tensor_size(): every dimension must be at least 1 and the product must fit
    size_t (REQUIREs, so a bad shape makes the graph unpredictable)."""
    dims = [int(d) for d in shape]  # a shape vector, at most MAX_RANK long
    size = 1
    for i, d in enumerate(dims):
        ctx.require(
            1 <= d <= SIZE_MAX // size,
            "1 <= shape[i] && shape[i] <= maximum<size_t> / size (tensor_size)",
            f"{name}[{i}] = {d} in {dims}",
        )
        size *= d
    return size


def _shape_arg(ctx: OpContext, name: str) -> np.ndarray:
    return np.asarray(ctx.arg(name), dtype=np.int64).reshape(-1)


def _same_type(x: np.ndarray) -> np.ndarray:
    # A fresh array of the input's storage type: later operators may not alias it.
    return np.array(x, copy=True)


@implements("CONCAT")
def concat(ctx: OpContext) -> Result:
    xs = ctx.arg_list("input1")
    tensors = ctx.input_tensors("input1")
    ctx.error_if(not xs, INPUTS_CLAUSE, "input1 is an empty list")
    # List arguments are not bound to in_out_t by the engine; the description asks
    # for every input to have the output's data type.
    out_dt = ctx.dtype("in_out_t")
    wrong = [f"{t.name}: {t.dtype}" for t in tensors if t.dtype is not out_dt]
    ctx.error_if(bool(wrong), TYPES_CLAUSE, f"in_out_t is {out_dt}; {', '.join(wrong)}")
    shapes1 = [t.shape for t in tensors]
    shape = ctx.out_shape()
    axis = int(ctx.attr("axis"))
    rank0 = len(shapes1[0])
    ctx.error_if(
        axis < 0 or axis >= max(1, rank0),
        CONCAT_AXIS_CLAUSE,
        f"axis {axis}, rank(shapes1[0]) {rank0}",
    )
    # Rank-0 inputs concatenate into a vector (shape_dim reads them as size 1), so
    # the output has rank max(1, rank); shape[axis] below needs that many dimensions.
    out_rank = max(1, rank0)
    same_shape_or_unpredictable(ctx, (len(shape),), (out_rank,), "rank(shape) == max(1, rank)")
    along = [s[axis] if axis < len(s) else 1 for s in shapes1]
    ctx.error_if(
        shape[axis] != sum(along),
        CONCAT_SHAPE_CLAUSE,
        f"shape[{axis}] = {shape[axis]}, inputs give {along}",
    )
    for k, s in enumerate(shapes1):  # over the list of tensors, not their elements
        ctx.error_if(
            len(s) != rank0,
            CONCAT_RANK_CLAUSE,
            f"input {k} has shape {list(s)}, input 0 {list(shapes1[0])}",
        )
        differs = (np.arange(rank0) != axis) & (
            np.asarray(s, dtype=np.int64) != np.asarray(shapes1[0], dtype=np.int64)
        )
        first_failure(
            ctx,
            [("index != axis && input_shape[index] != shapes1[0][index]", differs)],
            f"input {k} shape {list(s)} vs {list(shapes1[0])} at dimension",
        )
    want = tuple(sum(along) if i == axis else d for i, d in enumerate(shapes1[0] or (1,)))
    same_shape_or_unpredictable(ctx, shape, want, "shape[i] == shapes1[0][i] for i != axis")
    parts = [x.reshape(-1) if x.ndim == 0 else x for x in xs]
    return {"output": np.concatenate(parts, axis=axis)}


@implements("PAD")
def pad(ctx: OpContext) -> Result:
    x = ctx.arg("input1")
    padding = _shape_arg(ctx, "padding")
    shape1 = ctx.input_tensor("input1").shape
    shape = ctx.out_shape()
    # The description gives padding as [start, end] per input dimension.
    ctx.error_if(
        len(padding) != 2 * len(shape1),
        INPUTS_CLAUSE,
        f"padding has {len(padding)} values for rank {len(shape1)}",
    )
    ctx.error_if(
        len(shape) != len(shape1),
        PAD_RANK_CLAUSE,
        f"output rank {len(shape)}, input rank {len(shape1)}",
    )
    before, after = padding[0::2], padding[1::2]
    first_failure(
        ctx,
        [
            ("padding[i * 2] < 0 || padding[(i * 2) + 1] < 0", (before < 0) | (after < 0)),
            (
                "shape[i] != padding[i * 2] + shape1[i] + padding[(i * 2) + 1]",
                np.asarray(shape) != before + np.asarray(shape1) + after,
            ),
        ],
        f"padding {padding.tolist()}, input {list(shape1)}, output {list(shape)}: dimension",
    )
    fill = to_type(ctx, np.asarray(ctx.attr("pad_const")), "in_out_t", "pad_const")
    out = np.full(shape, fill, dtype=x.dtype)
    out[tuple(slice(int(b), int(b) + d) for b, d in zip(before, shape1, strict=True))] = x
    return {"output": out}


@implements("RESHAPE")
def reshape(ctx: OpContext) -> Result:
    x = ctx.arg("input1")
    new_shape = _shape_arg(ctx, "shape")
    shape1 = ctx.input_tensor("input1").shape
    out_shape = ctx.out_shape()
    # The output's shape and the shape input carry the same name in tosa.xml.
    ctx.error_if(
        tuple(new_shape.tolist()) != out_shape,
        OUTPUTS_CLAUSE,
        f"output shape {list(out_shape)}, shape input {new_shape.tolist()}",
    )
    size1 = tensor_size(ctx, shape1, "shape1")
    size = tensor_size(ctx, new_shape.tolist(), "shape")
    ctx.error_if(
        size1 != size,
        SIZE_CLAUSE,
        f"{list(shape1)} has {size1} elements, {new_shape.tolist()} has {size}",
    )
    # Row-major offsets on both sides: numpy's C-order reshape is the same mapping.
    return {"output": _same_type(x.reshape(out_shape))}


@implements("REVERSE")
def reverse(ctx: OpContext) -> Result:
    # The draft calls the input 'input', TOSA 1.0 'input1': the one declared input.
    x = ctx.arg(ctx.op_spec.inputs[0].name)
    axis = int(ctx.attr("axis"))
    ctx.error_if(
        axis < 0 or axis >= x.ndim,
        REVERSE_AXIS_CLAUSE,
        f"axis {axis}, rank {x.ndim}",
    )
    return {"output": _same_type(np.flip(x, axis=axis))}


@implements("SLICE")
def slice_(ctx: OpContext) -> Result:
    x = ctx.arg("input1")
    start = _shape_arg(ctx, "start")
    size = _shape_arg(ctx, "size")
    shape1 = ctx.input_tensor("input1").shape
    shape = ctx.out_shape()
    rank1 = len(shape1)
    ctx.error_if(
        rank1 != len(start) or rank1 != len(size),
        SLICE_LENGTH_CLAUSE,
        f"rank {rank1}, start {start.tolist()}, size {size.tolist()}",
    )
    ctx.error_if(
        rank1 != len(shape),
        RANK_CLAUSE,
        f"input rank {rank1}, output rank {len(shape)}",
    )
    first_failure(
        ctx,
        [
            ("start[index] < 0", start < 0),
            ("size[index] <= 0", size <= 0),
            ("start[index] + size[index] > shape1[index]", start + size > np.asarray(shape1)),
            ("shape[index] != size[index]", np.asarray(shape) != size),
        ],
        f"start {start.tolist()}, size {size.tolist()}, input {list(shape1)}: index",
    )
    window = tuple(slice(int(s), int(s + n)) for s, n in zip(start, size, strict=True))
    return {"output": _same_type(x[window])}


@implements("TILE")
def tile(ctx: OpContext) -> Result:
    x = ctx.arg("input1")
    multiples = _shape_arg(ctx, "multiples")
    shape1 = ctx.input_tensor("input1").shape
    shape = ctx.out_shape()
    # multiples is declared with shape [rank(shape1)].
    ctx.error_if(
        len(multiples) != len(shape1),
        INPUTS_CLAUSE,
        f"multiples {multiples.tolist()} for input rank {len(shape1)}",
    )
    ctx.error_if(
        len(shape1) != len(shape),
        RANK_CLAUSE,
        f"input rank {len(shape1)}, output rank {len(shape)}",
    )
    first_failure(
        ctx,
        [("shape1[i] * multiples[i] != shape[i]", np.asarray(shape1) * multiples != shape)],
        f"input {list(shape1)} x {multiples.tolist()} vs output {list(shape)}: dimension",
    )
    # Output index maps to index % shape1 in each dimension: numpy's tile.
    return {"output": np.tile(x, tuple(int(m) for m in multiples))}


@implements("TRANSPOSE")
def transpose(ctx: OpContext) -> Result:
    x = ctx.arg("input1")
    perms = np.asarray(ctx.attr("perms"), dtype=np.int64).reshape(-1)
    shape1 = ctx.input_tensor("input1").shape
    shape = ctx.out_shape()
    rank1 = len(shape1)
    ctx.error_if(
        rank1 != len(shape),
        RANK_CLAUSE,
        f"input rank {rank1}, output rank {len(shape)}",
    )
    size1 = tensor_size(ctx, shape1, "shape1")
    size = tensor_size(ctx, shape, "shape")
    ctx.error_if(
        size1 != size,
        SIZE_CLAUSE,
        f"{list(shape1)} vs {list(shape)}",
    )
    # A value is repeated when an earlier position of perms holds it already.
    earlier = np.tril(perms[:, None] == perms[None, :], k=-1).any(axis=1)
    first_failure(
        ctx,
        [
            ("index >= rank(shape1)", perms >= rank1),
            ("index < 0", perms < 0),
            ("indexes_used[index] == true", earlier),
        ],
        f"perms {perms.tolist()}: position",
    )
    permuted = np.asarray(shape1)[perms]
    first_failure(
        ctx,
        [("shape1[perms[i]] != shape[i]", permuted != np.asarray(shape, dtype=np.int64))],
        f"input {list(shape1)} permuted by {perms.tolist()} vs output {list(shape)}: i =",
    )
    # tmp_index[perms[i]] = index[i]: output axis i is input axis perms[i].
    return {"output": _same_type(np.transpose(x, perms))}

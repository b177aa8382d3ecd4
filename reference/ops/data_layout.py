"""Data layout operators: CONCAT, PAD, RESHAPE, REVERSE, SLICE, TILE, TRANSPOSE.

They move elements without converting them: outputs keep the input's storage type
bit for bit (NaN payloads, -0.0).  Shape arguments (``padding``, ``shape``, ``start``,
``size``, ``multiples``) arrive as int64 vectors.

TOSA 1.1's block-scaled modes (``in_out_t`` a ``bs32_*`` type; all but PAD's) move each
value with its block's scale (tensor_read_value_scale / tensor_write_value_scale):
:func:`moved` applies the same index mapping to the values and to every element's
scale, and groups the scales back into blocks.  Their ERROR_IFs keep the innermost
dimension a whole number of blocks, and blocks whole (SLICE starts on a block
boundary, TRANSPOSE keeps the innermost axis innermost), so that each output block
takes one input block's scale.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from conformance import dtypes
from conformance.block_tensor import BlockScaled, TensorValue, is_block_scaled
from conformance.dtypes import DType
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
CONCAT_DIMS_CLAUSE = "index != axis && input_shape[index] != shapes1[0][index]"
SIZE_CLAUSE = "tensor_size(shape1) != tensor_size(shape)"
# The ERROR_IFs the pseudocode makes in a loop over an index (first_failure), in the
# order each loop body states them: PAD's per dimension i, SLICE's per index, TILE's per
# dimension i, TRANSPOSE's on each perms value (index) and then per output dimension i.
PADDING_NEGATIVE_CLAUSE = "padding[i * 2] < 0 || padding[(i * 2) + 1] < 0"
PAD_SHAPE_CLAUSE = "shape[i] != padding[i * 2] + shape1[i] + padding[(i * 2) + 1]"
SLICE_START_CLAUSE = "start[index] < 0"
SLICE_SIZE_CLAUSE = "size[index] <= 0"
SLICE_END_CLAUSE = "start[index] + size[index] > shape1[index]"
SLICE_SHAPE_CLAUSE = "shape[index] != size[index]"
TILE_SHAPE_CLAUSE = "shape1[i] * multiples[i] != shape[i]"
PERMS_RANGE_CLAUSE = "index >= rank(shape1)"
PERMS_NEGATIVE_CLAUSE = "index < 0"
PERMS_REPEATED_CLAUSE = "indexes_used[index] == true"
TRANSPOSE_SHAPE_CLAUSE = "shape1[perms[i]] != shape[i]"
# TOSA 1.1, the block-scaled modes: the innermost dimension holds whole blocks.
_BS = "is_block_scale<in_out_t>()"
_MULTIPLE = "% get_innermost_block_size<in_out_t>() != 0"
BLOCK_SHAPE_CLAUSE = f"{_BS} && shape[rank(shape) - 1] {_MULTIPLE}"
BLOCK_SHAPE1_CLAUSE = f"{_BS} && shape1[rank(shape1) - 1] {_MULTIPLE}"
CONCAT_BLOCK_INPUT_CLAUSE = (
    f"{_BS} && shapes1[shape_index][rank(shapes1[shape_index]) - 1] {_MULTIPLE}"
)
BLOCK_RANK_CLAUSE = f"{_BS} && rank(shape) == 0"
BLOCK_RANK1_CLAUSE = f"{_BS} && rank(shape1) == 0"
SLICE_BLOCK_START_CLAUSE = f"{_BS} && start[rank(shape1) - 1] {_MULTIPLE}"
TRANSPOSE_BLOCK_PERMS_CLAUSE = f"{_BS} && perms[rank(shape) - 1] != rank(shape1) - 1"

Result = dict[str, Any]


@dataclass(frozen=True)
class ConcatClauses:
    """CONCAT's list rules as a revision's pseudocode words them."""

    empty: str
    rank: str
    dims: str
    axis_sum: str


# The draft words CONCAT's list rules per input_shape and index (an empty list is the
# argument's description, INPUTS_CLAUSE); TOSA 1.0 rewrote them as a loop over
# shape_index and axis_index with an axis_sum, and an ERROR_IF(input1 == []).  The rules
# are the same (the 1.1 draft keeps 1.0's words): a vector names the clause as its
# revision writes it.  Keyed by revision because the wording is pseudocode, not tosa.xml.
CONCAT_CLAUSES = {
    "2024-04-draft": ConcatClauses(
        INPUTS_CLAUSE, CONCAT_RANK_CLAUSE, CONCAT_DIMS_CLAUSE, CONCAT_SHAPE_CLAUSE
    ),
}
CONCAT_CLAUSES_1_0 = ConcatClauses(
    "input1 == []",
    "rank(shapes1[shape_index]) != rank(shapes1[0])",
    "shapes1[shape_index][axis_index] != shapes1[0][axis_index]",
    "axis_sum != shape[axis]",
)


def concat_clauses(revision: str) -> ConcatClauses:
    """The wording of ``revision`` (1.0's for 1.0, the 1.1 draft and a custom tosa.xml)."""
    return CONCAT_CLAUSES.get(revision, CONCAT_CLAUSES_1_0)


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


def moved(
    ctx: OpContext, xs: Sequence[TensorValue], move: Callable[..., np.ndarray]
) -> TensorValue:
    """``move`` (an index mapping: reverse, slice, tile ...) of arrays ``xs``; for
    block-scaled tensors, of their values and of their elements' scales, which must
    then fall into whole blocks (what the operator's ERROR_IFs guarantee)."""
    if not any(isinstance(x, BlockScaled) for x in xs):
        return move(*xs)
    parts = [x for x in xs if isinstance(x, BlockScaled)]
    if len(parts) != len(xs):
        raise TypeError(f"{ctx.name}: block-scaled and plain inputs together")
    dt = parts[0].dtype
    values = move(*(x.values for x in parts))
    scales = move(*(x.element_scales() for x in parts))
    try:
        return BlockScaled.from_element_scales(dt, np.array(values), np.array(scales))
    except ValueError as exc:
        raise RuntimeError(f"{ctx.name}: {exc}: a missing ERROR_IF check") from None


def block_size(ctx: OpContext, var: str = "in_out_t") -> int:
    """get_innermost_block_size of the mode's type, 0 when it is not block-scaled."""
    dt: DType = ctx.dtype(var)
    return dt.block_size if is_block_scaled(dt) else 0


def check_whole_blocks(
    ctx: OpContext, shape: Sequence[int], clause: str, name: str, var: str = "in_out_t"
) -> None:
    """ERROR_IF(is_block_scale && shape[rank(shape) - 1] % block size != 0)."""
    bs = block_size(ctx, var)
    if bs and shape:
        inner = int(shape[-1])
        ctx.error_if(inner % bs != 0, clause, f"{name} {list(shape)}, block size {bs}")


def check_block_rank(
    ctx: OpContext, shape: Sequence[int], clause: str, name: str, var: str = "in_out_t"
) -> None:
    """ERROR_IF(is_block_scale && rank(shape) == 0)."""
    if block_size(ctx, var):
        ctx.error_if(len(shape) == 0, clause, f"{name} has rank 0")


def _shape_arg(ctx: OpContext, name: str) -> np.ndarray:
    return np.asarray(ctx.arg(name), dtype=np.int64).reshape(-1)


def _same_type(x: np.ndarray) -> np.ndarray:
    # A fresh array of the input's storage type: later operators may not alias it.
    return np.array(x, copy=True)


@implements("CONCAT")
def concat(ctx: OpContext) -> Result:
    xs = ctx.value_list("input1")
    tensors = ctx.input_tensors("input1")
    words = concat_clauses(ctx.revision)
    ctx.error_if(not xs, words.empty, "input1 is an empty list")
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
    check_whole_blocks(ctx, shape, BLOCK_SHAPE_CLAUSE, "output")
    # Rank-0 inputs concatenate into a vector (shape_dim reads them as size 1), so
    # the output has rank max(1, rank); shape[axis] below needs that many dimensions.
    out_rank = max(1, rank0)
    same_shape_or_unpredictable(ctx, (len(shape),), (out_rank,), "rank(shape) == max(1, rank)")
    along = [s[axis] if axis < len(s) else 1 for s in shapes1]
    # The draft checks the sum before the list, 1.0 after it (its axis_sum is summed in
    # the loop); a vector breaks one rule only, so the order shows in no verdict.
    ctx.error_if(
        shape[axis] != sum(along),
        words.axis_sum,
        f"shape[{axis}] = {shape[axis]}, inputs give {along}",
    )
    for k, s in enumerate(shapes1):  # over the list of tensors, not their elements
        ctx.error_if(
            len(s) != rank0,
            words.rank,
            f"input {k} has shape {list(s)}, input 0 {list(shapes1[0])}",
        )
        check_whole_blocks(ctx, s, CONCAT_BLOCK_INPUT_CLAUSE, f"input {k}")
        differs = (np.arange(rank0) != axis) & (
            np.asarray(s, dtype=np.int64) != np.asarray(shapes1[0], dtype=np.int64)
        )
        first_failure(
            ctx,
            [(words.dims, differs)],
            f"input {k} shape {list(s)} vs {list(shapes1[0])} at dimension",
        )
    want = tuple(sum(along) if i == axis else d for i, d in enumerate(shapes1[0] or (1,)))
    same_shape_or_unpredictable(ctx, shape, want, "shape[i] == shapes1[0][i] for i != axis")

    def join(*parts: np.ndarray) -> np.ndarray:
        return np.concatenate([x.reshape(-1) if x.ndim == 0 else x for x in parts], axis=axis)

    return {"output": moved(ctx, xs, join)}


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
            (PADDING_NEGATIVE_CLAUSE, (before < 0) | (after < 0)),
            (PAD_SHAPE_CLAUSE, np.asarray(shape) != before + np.asarray(shape1) + after),
        ],
        f"padding {padding.tolist()}, input {list(shape1)}, output {list(shape)}: dimension",
    )
    fill = to_type(ctx, np.asarray(ctx.attr("pad_const")), "in_out_t", "pad_const")
    out = np.full(shape, fill, dtype=x.dtype)
    out[tuple(slice(int(b), int(b) + d) for b, d in zip(before, shape1, strict=True))] = x
    return {"output": out}


@implements("RESHAPE")
def reshape(ctx: OpContext) -> Result:
    x = ctx.value("input1")
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
    check_block_rank(ctx, shape1, BLOCK_RANK1_CLAUSE, "input1")
    check_block_rank(ctx, out_shape, BLOCK_RANK_CLAUSE, "output")
    check_whole_blocks(ctx, shape1, BLOCK_SHAPE1_CLAUSE, "input1")
    check_whole_blocks(ctx, out_shape, BLOCK_SHAPE_CLAUSE, "output")
    # Row-major offsets on both sides: numpy's C-order reshape is the same mapping.
    return {"output": moved(ctx, [x], lambda v: _same_type(v.reshape(out_shape)))}


@implements("REVERSE")
def reverse(ctx: OpContext) -> Result:
    # The draft calls the input 'input', TOSA 1.0 'input1': the one declared input.
    x = ctx.value(ctx.op_spec.inputs[0].name)
    shape = x.shape
    axis = int(ctx.attr("axis"))
    ctx.error_if(
        axis < 0 or axis >= len(shape),
        REVERSE_AXIS_CLAUSE,
        f"axis {axis}, rank {len(shape)}",
    )
    check_block_rank(ctx, shape, BLOCK_RANK_CLAUSE, "input")
    check_whole_blocks(ctx, shape, BLOCK_SHAPE_CLAUSE, "input")
    return {"output": moved(ctx, [x], lambda v: _same_type(np.flip(v, axis=axis)))}


@implements("SLICE")
def slice_(ctx: OpContext) -> Result:
    x = ctx.value("input1")
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
            (SLICE_START_CLAUSE, start < 0),
            (SLICE_SIZE_CLAUSE, size <= 0),
            (SLICE_END_CLAUSE, start + size > np.asarray(shape1)),
            (SLICE_SHAPE_CLAUSE, np.asarray(shape) != size),
        ],
        f"start {start.tolist()}, size {size.tolist()}, input {list(shape1)}: index",
    )
    check_whole_blocks(ctx, shape1, BLOCK_SHAPE1_CLAUSE, "input1")
    check_whole_blocks(ctx, shape, BLOCK_SHAPE_CLAUSE, "output")
    bs = block_size(ctx)
    if bs and rank1:
        first = int(start[-1])
        ctx.error_if(
            first % bs != 0, SLICE_BLOCK_START_CLAUSE, f"start {start.tolist()}, block size {bs}"
        )
    window = tuple(slice(int(s), int(s + n)) for s, n in zip(start, size, strict=True))
    return {"output": moved(ctx, [x], lambda v: _same_type(v[window]))}


@implements("TILE")
def tile(ctx: OpContext) -> Result:
    x = ctx.value("input1")
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
    check_whole_blocks(ctx, shape1, BLOCK_SHAPE1_CLAUSE, "input1")
    first_failure(
        ctx,
        [(TILE_SHAPE_CLAUSE, np.asarray(shape1) * multiples != shape)],
        f"input {list(shape1)} x {multiples.tolist()} vs output {list(shape)}: dimension",
    )
    # Output index maps to index % shape1 in each dimension: numpy's tile.
    reps = tuple(int(m) for m in multiples)
    return {"output": moved(ctx, [x], lambda v: np.tile(v, reps))}


@implements("TRANSPOSE")
def transpose(ctx: OpContext) -> Result:
    x = ctx.value("input1")
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
            (PERMS_RANGE_CLAUSE, perms >= rank1),
            (PERMS_NEGATIVE_CLAUSE, perms < 0),
            (PERMS_REPEATED_CLAUSE, earlier),
        ],
        f"perms {perms.tolist()}: position",
    )
    permuted = np.asarray(shape1)[perms]
    first_failure(
        ctx,
        [(TRANSPOSE_SHAPE_CLAUSE, permuted != np.asarray(shape, dtype=np.int64))],
        f"input {list(shape1)} permuted by {perms.tolist()} vs output {list(shape)}: i =",
    )
    check_whole_blocks(ctx, shape1, BLOCK_SHAPE1_CLAUSE, "input1")
    if block_size(ctx) and rank1:
        ctx.error_if(
            int(perms[-1]) != rank1 - 1,
            TRANSPOSE_BLOCK_PERMS_CLAUSE,
            f"perms {perms.tolist()} moves the innermost axis",
        )
    # tmp_index[perms[i]] = index[i]: output axis i is input axis perms[i].
    return {"output": moved(ctx, [x], lambda v: _same_type(np.transpose(v, perms)))}

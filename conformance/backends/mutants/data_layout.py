"""Mutants of the data-layout operators (reference/ops/data_layout.py): CONCAT, PAD,
REVERSE, SLICE, TRANSPOSE."""

from __future__ import annotations

import numpy as np

from conformance.backends.mutants import (
    Result,
    mutant,
    with_attrs,
    with_inputs,
)
from conformance.backends.mutants.tools import output_of
from conformance.graph import Operator
from reference.context import OpContext
from reference.registry import OpFunction


@mutant(
    "pad-const-ignored",
    ["PAD"],
    "pad_const != 0",
    "pad_const is ignored: the padding is always zero",
    "PAD vectors with a non-zero pad_const",
)
def _pad_const_ignored(original: OpFunction, ctx: OpContext) -> Result:
    if ctx.attr("pad_const", 0) == 0:
        return original(ctx)
    return original(with_attrs(ctx, pad_const=0))


@mutant(
    "slice-end-off-by-one",
    ["SLICE"],
    "slices reaching the last element",
    "the bounds check is start + size >= shape1 (off by one): a slice ending at the last "
    "element is refused",
    "valid SLICE vectors whose slice reaches the end of a dimension",
    effect="rejects valid graph",
)
def _slice_off_by_one(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    start = np.asarray(ctx.arg("start"), dtype=np.int64).reshape(-1)
    size = np.asarray(ctx.arg("size"), dtype=np.int64).reshape(-1)
    shape1 = np.asarray(ctx.input_tensor("input1").shape, dtype=np.int64)
    ctx.error_if(
        bool(np.any(start + size >= shape1)),
        "start[index] + size[index] >= shape1[index]",
        f"start {start.tolist()}, size {size.tolist()}, input {shape1.tolist()}",
    )
    return result


@mutant(
    "transpose-inverse-perm",
    ["TRANSPOSE"],
    "rank >= 3, perms not its own inverse",
    "the inverse permutation is applied (output axis perms[i] taken from input axis i)",
    "TRANSPOSE vectors with a 3-cycle such as perms [1, 2, 0]",
)
def _transpose_inverse(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)  # its ERROR_IFs (perms valid) before perms is used
    perms = np.asarray(ctx.attr("perms"), dtype=np.int64).reshape(-1)
    moved = np.transpose(ctx.arg("input1"), np.argsort(perms))
    return {"output": np.ascontiguousarray(moved).reshape(ctx.out_shape())}


@mutant(
    "concat-rank0-unwritten",
    ["CONCAT"],
    "rank-0 inputs",
    "the copy kernel copies along each input's innermost axis; a rank-0 input has none, "
    "so nothing is copied and its output elements stay zero",
    "CONCAT vectors of rank-0 inputs (a vector built from scalars) with non-zero values",
    breaks="CONCAT.tosac: shape_dim(shapes1[k], axis) reads a rank-0 input as one element, "
    "which is written to the output",
)
def _concat_rank0_unwritten(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    tensors = ctx.input_tensors("input1")
    if not tensors or tensors[0].shape != ():
        return result
    return {"output": np.zeros_like(output_of(result))}


GENERIC_RANK = 5  # kernels for ranks below this have their own (correct) paths


@mutant(
    "transpose-generic-inverse-perm",
    ["TRANSPOSE"],
    f"rank >= {GENERIC_RANK}, perms not its own inverse",
    f"the generic N-D path (rank >= {GENERIC_RANK}) applies the inverse permutation; the "
    "fixed-rank paths below it are right",
    f"TRANSPOSE vectors of rank {GENERIC_RANK} or 6 with a permutation that is not an involution",
    breaks="TRANSPOSE.tosac: tmp_index[perms[i]] = index[i] (output axis i is input axis perms[i])",
)
def _transpose_generic_inverse(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its ERROR_IFs (perms valid) before perms is used
    x = ctx.arg("input1")
    if x.ndim < GENERIC_RANK:
        return result
    perms = np.asarray(ctx.attr("perms"), dtype=np.int64).reshape(-1)
    moved = np.transpose(x, np.argsort(perms))
    return {"output": np.ascontiguousarray(moved).reshape(ctx.out_shape())}


@mutant(
    "reverse-axis0-merged",
    ["REVERSE"],
    f"rank >= {GENERIC_RANK}, axis 0, shape[1] > 1",
    f"rank >= {GENERIC_RANK} is collapsed to 4-D by merging axes 0 and 1, so reversing "
    "axis 0 reverses the merged axis (axes 0 and 1 together)",
    f"REVERSE axis-0 vectors of rank {GENERIC_RANK} or 6 with shape[1] > 1",
    breaks="REVERSE.tosac: tmp_index[axis] = shape[axis] - 1 - index[axis], the other "
    "indices unchanged",
)
def _reverse_axis0_merged(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its ERROR_IF (axis in range)
    x = ctx.arg("input")
    if x.ndim < GENERIC_RANK or int(ctx.attr("axis")) != 0:
        return result
    return {"output": np.array(np.flip(x, axis=(0, 1)), copy=True)}


@mutant(
    "slice-last-axis-start-early",
    ["SLICE"],
    "start > 0 on the last axis",
    "the last axis's window is placed from an exclusive end computed one too low: it "
    "starts one element early (start - 1)",
    "SLICE vectors with a non-zero start on the last axis",
    breaks="SLICE.tosac: tmp_index[i] = index[i] + start[i] on every axis",
)
def _slice_start_early(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its ERROR_IFs
    x = ctx.arg("input1")
    start = np.asarray(ctx.arg("start"), dtype=np.int64).reshape(-1)
    size = np.asarray(ctx.arg("size"), dtype=np.int64).reshape(-1)
    if x.ndim == 0 or start[-1] == 0:
        return result
    window = [slice(int(s), int(s + n)) for s, n in zip(start, size, strict=True)]
    window[-1] = slice(int(start[-1] - 1), int(start[-1] - 1 + size[-1]))
    return {"output": np.array(x[tuple(window)], copy=True)}


@mutant(
    "pad-before-after-swapped",
    ["PAD"],
    "padding[2i] != padding[2i + 1]",
    "padding is read as [after, before] per axis: asymmetric padding lands on the wrong "
    "side (the output shape, which uses their sum, is unchanged)",
    "PAD vectors with asymmetric padding on some axis",
    breaks="PAD.tosac: index1[i] = index1[i] - padding[i * 2] (the first of each pair pads "
    "the start)",
)
def _pad_swapped(original: OpFunction, ctx: OpContext) -> Result:
    padding = np.asarray(ctx.arg("padding"))
    rank = len(ctx.input_tensor("input1").shape)
    if padding.size != 2 * rank or rank == 0:
        return original(ctx)  # the ERROR_IF on its length, unchanged
    swapped = padding.reshape(-1, 2)[:, ::-1].reshape(padding.shape)
    if np.array_equal(swapped, padding):
        return original(ctx)
    return original(with_inputs(ctx, padding=np.ascontiguousarray(swapped)))


@mutant(
    "reshape-nchw-order",
    ["RESHAPE"],
    "rank-4 input to another rank, C > 1 and H * W > 1",
    "the backend keeps 4-D tensors channel-first (NCHW) and flattens them in its own "
    "order when the rank changes (the ONNX-converter Flatten bug): elements are read "
    "N, C, H, W instead of N, H, W, C",
    "RESHAPE vectors from a rank-4 [N, H, W, C] input with C > 1 and H * W > 1 to rank 2 "
    "or 3 (e.g. [1, 2, 2, 3] -> [1, 12])",
    breaks="RESHAPE.tosac: tmp_index = tensor_offset_to_index(shape1, offset), row-major "
    "offsets on both sides",
)
def _reshape_nchw(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its ERROR_IFs and REQUIREs
    x = np.asarray(ctx.arg("input1"))
    out_shape = ctx.out_shape()
    if x.ndim != 4 or len(out_shape) == 4:
        return result
    moved = np.ascontiguousarray(np.transpose(x, (0, 3, 1, 2)))
    return {"output": moved.reshape(out_shape)}


@mutant(
    "tile-repeats-elements",
    ["TILE"],
    "an axis with shape1[i] > 1 and multiples[i] > 1",
    "TILE is implemented as repeat (numpy.repeat / torch.repeat_interleave): each "
    "element is repeated multiples[i] times instead of the whole axis being tiled",
    "TILE vectors with multiples > 1 on an axis longer than 1 (e.g. [1, 2] x [1, 2] "
    "gives [1, 2, 1, 2], not [1, 1, 2, 2])",
    breaks="TILE.tosac: tmp_index[i] = index[i] % shape1[i]",
)
def _tile_repeats(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)  # its ERROR_IFs
    x = np.asarray(ctx.arg("input1"))
    multiples = np.asarray(ctx.arg("multiples"), dtype=np.int64).reshape(-1)
    out = x
    for axis, m in enumerate(multiples):
        out = np.repeat(out, int(m), axis=axis)
    return {"output": np.ascontiguousarray(out)}


@mutant(
    "pad-negative-zero-const",
    ["PAD"],
    "floating point with pad_const = -0.0",
    "the padding fast path tests pad_const == 0 and clears the output with memset, which "
    "writes +0.0 where pad_const is -0.0",
    "float PAD vectors with pad_const = -0.0 (EXACT_NAN checks the sign of zero)",
    breaks="PAD.tosac: value = is_pad ? pad_const : tensor_read(...), pad_const written as given",
)
def _pad_negative_zero(original: OpFunction, ctx: OpContext) -> Result:
    if not ctx.dtype("in_out_t").is_float:
        return original(ctx)
    const = np.asarray(ctx.attr("pad_const", 0.0), dtype=np.float64)
    if const.size != 1 or float(const.reshape(-1)[0]) != 0.0 or not np.signbit(const).all():
        return original(ctx)
    return original(with_attrs(ctx, pad_const=0.0))


@mutant(
    "reverse-axis-innermost-first",
    ["REVERSE"],
    "rank >= 2, axis != rank - 1 - axis",
    "the axis is passed to a library that numbers dimensions innermost first (Arm Compute "
    "Library style) without conversion: axis a reverses TOSA axis rank - 1 - a",
    "REVERSE vectors of rank >= 2 reversing an outer axis (axis 0 of a [2, 3] tensor)",
    breaks="REVERSE.tosac: tmp_index[axis] = shape[axis] - 1 - index[axis]",
)
def _reverse_innermost_first(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its ERROR_IF (axis in range)
    x = np.asarray(ctx.arg("input"))
    axis = int(ctx.attr("axis"))
    if x.ndim < 2:
        return result
    return {"output": np.array(np.flip(x, axis=x.ndim - 1 - axis), copy=True)}


def _producer(ctx: OpContext, tensor: str) -> Operator | None:
    """The operator of the running block that writes ``tensor`` (None: an input or a
    constant of the block)."""
    return next((o for o in ctx.block.operators if tensor in o.outputs), None)


@mutant(
    "reshape-after-transpose-folded",
    ["RESHAPE"],
    "a RESHAPE of a TRANSPOSE's output whose permutation moves elements",
    "a graph rewrite folds TRANSPOSE -> RESHAPE into one RESHAPE of the TRANSPOSE's "
    "input (a canonicalisation that is only right when the transpose moves size-1 axes), "
    "so the elements keep the untransposed order",
    "graphs chaining TRANSPOSE (a permutation of axes longer than 1) into RESHAPE",
    breaks="RESHAPE.tosac: output elements are input1's (the TRANSPOSE output's) in "
    "row-major order",
)
def _reshape_after_transpose(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its ERROR_IFs and REQUIREs
    producer = _producer(ctx, ctx.operands.inputs["input1"][0])
    if producer is None or producer.op != "TRANSPOSE":
        return result
    before = np.asarray(ctx.values[producer.inputs[0]])
    return {"output": np.ascontiguousarray(before).reshape(ctx.out_shape())}


@mutant(
    "concat-repeated-input-unwritten",
    ["CONCAT"],
    "the same tensor listed more than once in input1",
    "concat elision: the memory planner places each input tensor straight into its slot "
    "of the output buffer, which a tensor listed twice cannot occupy: its later slots are "
    "never written (zeros)",
    "CONCAT vectors whose input list repeats a tensor (CONCAT(x, y, x))",
    breaks="CONCAT.tosac: every input1[k] is copied to its offset along axis, for all k",
)
def _concat_repeated_input(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its ERROR_IFs and REQUIREs
    names = ctx.operands.inputs["input1"]
    if len(set(names)) == len(names):
        return result
    out = np.array(output_of(result), copy=True)
    axis = int(ctx.attr("axis"))
    start = 0
    for k, t in enumerate(ctx.input_tensors("input1")):
        size = t.shape[axis] if t.shape else 1
        if names[k] in names[:k]:
            index = [slice(None)] * out.ndim
            index[axis] = slice(start, start + size)
            out[tuple(index)] = 0
        start += size
    return {"output": out}

"""Mutants of graph rewrites: a compiler folds, merges or fuses a pattern of operators
(strategies.rewrites lists them, with the condition under which the fold is wrong)
without checking that condition.  Each wraps the last operator of its pattern: when
the operator before it in the running block is the pattern's, it returns what the
rewritten graph computes; elsewhere it is the reference.  The pad > convolution and
transpose > reshape folds are tensor_conv's ``conv-folds-pad-const`` and data_layout's
``reshape-after-transpose-folded``."""

from __future__ import annotations

import dataclasses

import numpy as np

from conformance.backends.mutants import Result, mutant, with_attrs, with_values
from conformance.graph import Operator
from reference.context import OpContext
from reference.engine import to_storage
from reference.registry import OpFunction
from strategies.chains import pool_fold_legal
from strategies.rewrite_conditions import composed, seams, window


def _producer(ctx: OpContext, arg: str, op: str) -> Operator | None:
    """The operator of kind ``op`` in the running block that writes argument ``arg``."""
    names = ctx.operands.inputs.get(arg) or []
    if len(names) != 1:
        return None
    found = next((o for o in ctx.block.operators if names[0] in o.outputs), None)
    return found if found is not None and found.op == op else None


def _constant(ctx: OpContext, name: str) -> np.ndarray | None:
    data = ctx.block.tensors[name].data
    return None if data is None else np.asarray(data)


def _first_input(ctx: OpContext) -> str:
    return ctx.op_spec.inputs[0].name


def _ints(ctx: OpContext, op: Operator, index: int) -> list[int]:
    return [int(v) for v in np.asarray(ctx.values[op.inputs[index]]).reshape(-1)]


def _as_output(ctx: OpContext, value: np.ndarray) -> Result:
    return {"output": np.ascontiguousarray(to_storage(value, ctx.output_tensor().dtype))}


@mutant(
    "mul-by-zero-folded",
    ["MUL"],
    "float MUL with a constant all-zero operand and a NaN or infinite other operand",
    "MUL(x, 0) with a splat-zero constant is folded to a constant 0, as if x * 0 were 0 "
    "for every x",
    "float MUL vectors of a constant zero operand and NaN or infinite elements in the other "
    "(rewrite:mul-by-zero)",
    breaks="MUL.tosac: apply_mul_s(value1, value2), inf * 0 and NaN * 0 are NaN",
)
def _mul_by_zero(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if not ctx.output_tensor().dtype.is_float:
        return result
    for name in ctx.operator.inputs[:2]:
        c = _constant(ctx, name)
        if c is not None and not c.astype(np.float64).any():
            return _as_output(ctx, np.zeros(ctx.out_shape()))
    return result


@mutant(
    "sub-self-folded",
    ["SUB"],
    "float SUB of a tensor from itself holding NaN or an infinity",
    "SUB(x, x) is folded to a constant 0, as if x - x were 0 for every x",
    "float SUB vectors whose two inputs are one tensor with NaN or infinite elements "
    "(rewrite:sub-self)",
    breaks="SUB.tosac: apply_sub_s(value1, value2), inf - inf and NaN - NaN are NaN",
)
def _sub_self(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    a, b = ctx.operator.inputs[:2]
    if a != b or not ctx.output_tensor().dtype.is_float:
        return result
    return _as_output(ctx, np.zeros(ctx.out_shape()))


@mutant(
    "clamp-clamp-merged",
    ["CLAMP"],
    "a CLAMP of a CLAMP whose ranges are disjoint",
    "CLAMP > CLAMP is merged into one clip to max(min_val) and min(max_val) without "
    "checking that the ranges meet; an empty range clips to its max_val",
    "chains of two CLAMPs with disjoint ranges (rewrite:clamp-clamp)",
    breaks="CLAMP.tosac: apply_clip_s(value, min_val, max_val) of each CLAMP in turn",
)
def _clamp_clamp(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    inner = _producer(ctx, "input", "CLAMP")
    if inner is None:
        return result
    lo = max(float(inner.attributes["min_val"]), float(ctx.attr("min_val")))
    hi = min(float(inner.attributes["max_val"]), float(ctx.attr("max_val")))
    x = np.asarray(ctx.values[inner.inputs[0]]).astype(np.float64)
    return _as_output(ctx, np.minimum(np.maximum(x, lo), hi))


def _splat(ctx: OpContext, op: Operator) -> tuple[str, float] | None:
    """(the other operand, the value) when one operand of ``op`` is a constant splat."""
    for k in (0, 1):
        c = _constant(ctx, op.inputs[k])
        if c is not None and c.size and (c == c.reshape(-1)[0]).all():
            return op.inputs[1 - k], float(c.reshape(-1)[0])
    return None


@mutant(
    "min-max-fused-as-clamp",
    ["MAXIMUM"],
    "MAXIMUM(MINIMUM(x, hi), lo) of constant bounds with lo > hi",
    "MAXIMUM(MINIMUM(x, hi), lo) is fused into one clip of x to [lo, hi] (an activation "
    "fusion), which for lo > hi gives hi where the graph gives lo",
    "chains MINIMUM > MAXIMUM of constant splat bounds, the lower above the upper "
    "(rewrite:min-max-as-clamp)",
    breaks="MAXIMUM.tosac and MINIMUM.tosac: apply_max_s(apply_min_s(x, hi), lo) per element",
)
def _min_max(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    outer = _splat(ctx, ctx.operator)
    inner_op = (
        next((o for o in ctx.block.operators if outer[0] in o.outputs), None) if outer else None
    )
    if outer is None or inner_op is None or inner_op.op != "MINIMUM":
        return result
    inner = _splat(ctx, inner_op)
    if inner is None:
        return result
    x = np.asarray(ctx.values[inner[0]]).astype(np.float64)
    fused = np.minimum(np.maximum(x, outer[1]), inner[1])
    return _as_output(ctx, np.broadcast_to(fused, ctx.out_shape()))


@mutant(
    "transposes-composed-backwards",
    ["TRANSPOSE"],
    "a TRANSPOSE of a TRANSPOSE whose permutations do not commute",
    "TRANSPOSE > TRANSPOSE is composed into one permutation in the wrong order "
    "(perms1[perms2] read as perms2[perms1])",
    "chains of two TRANSPOSEs of rank 3 or more whose permutations do not commute "
    "(rewrite:transpose-transpose)",
    breaks="TRANSPOSE.tosac: each TRANSPOSE permutes its own input's axes by its perms",
)
def _transposes(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    inner = _producer(ctx, "input1", "TRANSPOSE")
    if inner is None:
        return result
    x = np.asarray(ctx.values[inner.inputs[0]])
    p1, p2 = list(inner.attributes["perms"]), list(ctx.attr("perms"))
    wrong = np.transpose(x, composed(p2, p1))
    return _as_output(ctx, wrong.reshape(ctx.out_shape()))


@mutant(
    "reverse-pair-cancelled",
    ["REVERSE"],
    "a REVERSE of a REVERSE on another axis",
    "REVERSE > REVERSE is cancelled without comparing the two axes",
    "chains of two REVERSEs on different axes longer than 1 (rewrite:reverse-reverse)",
    breaks="REVERSE.tosac: tmp_index[axis] = shape[axis] - 1 - index[axis], each on its axis",
)
def _reverse_pair(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    inner = _producer(ctx, _first_input(ctx), "REVERSE")
    if inner is None:
        return result
    return _as_output(ctx, np.asarray(ctx.values[inner.inputs[0]]))


@mutant(
    "reshapes-merged-across-transpose",
    ["RESHAPE"],
    "RESHAPE > TRANSPOSE > RESHAPE where the TRANSPOSE moves elements",
    "the two RESHAPEs of RESHAPE > TRANSPOSE > RESHAPE are merged into one, the "
    "TRANSPOSE between them taken for a relabelling of axes",
    "chains RESHAPE > TRANSPOSE > RESHAPE whose permutation moves axes longer than 1 "
    "(rewrite:reshape-transpose-reshape)",
    breaks="RESHAPE.tosac: output elements are input1's in row-major order, after the "
    "TRANSPOSE moved them",
)
def _reshapes_merged(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    t = _producer(ctx, "input1", "TRANSPOSE")
    r = None
    if t is not None:
        r = next((o for o in ctx.block.operators if t.inputs[0] in o.outputs), None)
    if t is None or r is None or r.op != "RESHAPE":
        return result
    x = np.asarray(ctx.values[r.inputs[0]])
    return _as_output(ctx, x.reshape(ctx.out_shape()))


@mutant(
    "slice-of-concat-one-input",
    ["SLICE"],
    "a SLICE of a CONCAT whose window crosses a seam",
    "SLICE of CONCAT is folded to a SLICE of the input the window starts in; the part "
    "of the window past that input's end reads zeros",
    "chains CONCAT > SLICE whose window crosses a seam (rewrite:slice-concat)",
    breaks="SLICE.tosac: output[index] = input1[start + index] of the whole CONCAT output",
)
def _slice_concat(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    cat = _producer(ctx, "input1", "CONCAT")
    if cat is None:
        return result
    axis = int(cat.attributes["axis"])
    start, size = _ints(ctx, ctx.operator, 1), _ints(ctx, ctx.operator, 2)
    parts = [np.asarray(ctx.values[n]) for n in cat.inputs]
    edges = [0, *seams(p.shape[axis] for p in parts)]
    k = max(i for i, e in enumerate(edges) if e <= start[axis])
    part = parts[k]
    local = list(start)
    local[axis] -= edges[k]
    take = list(size)
    take[axis] = min(size[axis], part.shape[axis] - local[axis])
    out = np.zeros(tuple(size), dtype=part.dtype)
    out[tuple(slice(0, n) for n in take)] = window(part, local, take)
    return _as_output(ctx, out)


@mutant(
    "slice-slice-offset-dropped",
    ["SLICE"],
    "a SLICE of a SLICE that starts past 0",
    "SLICE > SLICE is merged into one SLICE of the first one's input at the second "
    "one's start, the first start dropped",
    "chains SLICE > SLICE whose first slice starts past 0 (rewrite:slice-slice)",
    breaks="SLICE.tosac: output[index] = input1[start + index], for each SLICE in turn",
)
def _slice_slice(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    inner = _producer(ctx, "input1", "SLICE")
    if inner is None:
        return result
    x = np.asarray(ctx.values[inner.inputs[0]])
    start, size = _ints(ctx, ctx.operator, 1), _ints(ctx, ctx.operator, 2)
    wrong = window(x, start, size)
    return result if wrong.shape != tuple(size) else _as_output(ctx, wrong)


def _pad_const(ctx: OpContext, op: Operator) -> float:
    if "pad_const" in op.attributes:
        return float(op.attributes["pad_const"])
    return float(np.asarray(ctx.values[op.inputs[2]]).reshape(-1)[0])


@mutant(
    "pad-pad-merged",
    ["PAD"],
    "a PAD of a PAD whose pad_const values differ",
    "PAD > PAD is merged into one PAD of the summed padding with the outer pad_const, "
    "without comparing the two pad_const values",
    "chains of two PADs with different pad_const values (rewrite:pad-pad)",
    breaks="PAD.tosac: value = pad_const of each PAD at its own border",
)
def _pad_pad(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    inner = _producer(ctx, "input1", "PAD")
    if inner is None:
        return result
    x = np.asarray(ctx.values[inner.inputs[0]])
    p = np.add(_ints(ctx, inner, 1), _ints(ctx, ctx.operator, 1)).reshape(-1, 2)
    merged = np.pad(
        x, [tuple(int(v) for v in r) for r in p], constant_values=_pad_const(ctx, ctx.operator)
    )
    return _as_output(ctx, merged)


@mutant(
    "cast-round-trip-dropped",
    ["CAST"],
    "an integer CAST back to the type a narrowing CAST took values from",
    "integer CAST > CAST through a narrower type (i32 -> i8 -> i32) is folded to no cast, "
    "as if the narrowing kept every value",
    "chains of integer CASTs to a narrower type and back with values outside the narrower "
    "type (rewrite:cast-cast)",
    breaks="CAST.tosac: an integer narrowed to out_t keeps its low bits (truncate)",
)
def _cast_cast(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    inner = _producer(ctx, "input", "CAST")
    out = ctx.output_tensor().dtype
    if inner is None or not out.is_int:
        return result
    source = ctx.block.tensors[inner.inputs[0]].dtype
    if source is not out:
        return result
    return _as_output(ctx, np.asarray(ctx.values[inner.inputs[0]]))


def _folded_pool(original: OpFunction, ctx: OpContext, pad_op: Operator) -> Result | None:
    """The pool with PAD's spatial padding added to its own pad, on PAD's input."""
    padding = _ints(ctx, pad_op, 1)
    if not pool_fold_legal(padding, ctx.operator):
        return None
    x = np.asarray(ctx.values[pad_op.inputs[0]])
    name = ctx.operands.inputs["input"][0]
    pad = [int(p) + padding[2 + i] for i, p in enumerate(ctx.attr("pad"))]
    altered = with_values(ctx, {name: x})
    tensors = {
        **ctx.block.tensors,
        name: dataclasses.replace(ctx.block.tensors[name], shape=x.shape),
    }
    altered.block = dataclasses.replace(ctx.block, tensors=tensors)
    altered.operator = dataclasses.replace(
        ctx.operator, attributes={**ctx.operator.attributes, "pad": pad}
    )
    return original(altered)


@mutant(
    "avg-pool-folds-pad",
    ["AVG_POOL2D"],
    "an AVG_POOL2D of a PAD of the spatial axes whose pad_const is the input zero point",
    "PAD > AVG_POOL2D is folded into the pool's own pad when pad_const is the zero point: "
    "the pool's padding is left out of the divisor, PAD's border was not",
    "chains PAD > AVG_POOL2D with pad_const the input zero point and windows over the "
    "border (rewrite:pad-avg-pool)",
    breaks="AVG_POOL2D.tosac: the divisor counts the window's input elements, PAD's "
    "border among them",
)
def _avg_pool_folds_pad(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    pad_op = _producer(ctx, "input", "PAD")
    zp = float(ctx.attr("input_zp", 0)) if ctx.output_tensor().dtype.is_int else 0.0
    if pad_op is None or _pad_const(ctx, pad_op) != zp:
        return result
    return _folded_pool(original, ctx, pad_op) or result


@mutant(
    "max-pool-folds-pad",
    ["MAX_POOL2D"],
    "a MAX_POOL2D of a PAD of the spatial axes whose pad_const is above a window's values",
    "PAD > MAX_POOL2D is folded into the pool's own pad, whose positions take no part in "
    "the maximum, whatever pad_const was",
    "chains PAD > MAX_POOL2D with pad_const above the values of a window over the border "
    "(rewrite:pad-max-pool)",
    breaks="MAX_POOL2D.tosac: PAD's border elements are input elements of the window",
)
def _max_pool_folds_pad(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    pad_op = _producer(ctx, "input", "PAD")
    if pad_op is None:
        return result
    return _folded_pool(original, ctx, pad_op) or result


def _zero_output_zp(ctx: OpContext) -> OpContext:
    """The context with RESCALE's output zero point 0 (an attribute or a [1] input)."""
    if "output_zp" in ctx.operator.attributes:
        return with_attrs(ctx, output_zp=0)
    name = ctx.operands.inputs["output_zp"][0]
    return with_values(ctx, {name: np.zeros_like(np.asarray(ctx.values[name]))})


@mutant(
    "conv-epilogue-per-tensor-scale",
    ["RESCALE"],
    "a per-channel RESCALE of a CONV2D's accumulator whose channels' scales differ",
    "CONV2D > RESCALE is fused into a convolution whose requantising epilogue holds one "
    "(multiplier, shift): the first channel's is applied to every channel",
    "chains CONV2D > RESCALE, per channel, with distinct channel scales "
    "(rewrite:conv-epilogue-per-tensor)",
    breaks="RESCALE.tosac: apply_scale_32(value, multiplier[c], shift[c]) of each channel c",
)
def _epilogue_per_tensor(original: OpFunction, ctx: OpContext) -> Result:
    if _producer(ctx, "input", "CONV2D") is None or not ctx.attr("per_channel"):
        return original(ctx)
    changes = {}
    for arg in ("multiplier", "shift"):
        name = ctx.operands.inputs[arg][0]
        v = np.asarray(ctx.values[name])
        changes[name] = np.full_like(v, v.reshape(-1)[0])
    return original(with_values(ctx, changes))


@mutant(
    "conv-epilogue-zp-after-saturation",
    ["RESCALE"],
    "an i8 RESCALE of a CONV2D's accumulator with a non-zero output zero point, where a "
    "scaled value (or it plus the zero point) leaves i8",
    "CONV2D > RESCALE is fused into a convolution whose epilogue saturates the scaled "
    "value to i8 first and adds the output zero point after, in 8 bits (it wraps)",
    "chains CONV2D > RESCALE to i8 with an output zero point and saturating results "
    "(rewrite:conv-epilogue-zp-after-saturation)",
    breaks="RESCALE.tosac: value = apply_add_s(scaled, output_zp) before the clip to out_t",
)
def _epilogue_zp_late(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    out = ctx.output_tensor().dtype
    zp = int(ctx.attr("output_zp", 0))
    if _producer(ctx, "input", "CONV2D") is None or out.bits != 8 or zp == 0:
        return result
    clipped = np.asarray(original(_zero_output_zp(ctx))["output"]).astype(np.int64)
    return {"output": (clipped + zp).astype(out.storage)}  # the 8-bit add wraps

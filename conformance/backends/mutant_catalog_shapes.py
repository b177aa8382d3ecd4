"""Mutants whose bug shows only on particular shapes and attributes: row remainders and
tiles of large tensors, broadcasts with a size-1 axis in the middle, rank 0 and ranks
above 4, level limits near their maximum, asymmetric pads, non-square strides and
dilations, long dot products, negative RESIZE offsets and non-zero borders.  Each
names the spec rule it breaks (``breaks``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from conformance.backends.mutant_tools import (
    WEIGHTED_OPS,
    broadcast_pair,
    fp16_accumulated,
    ignoring_requires,
    output_of,
    register,
    wraps,
)
from conformance.backends.mutants import (
    HelperPatch,
    Mutant,
    Result,
    Wrapper,
    with_attrs,
    with_inputs,
)
from conformance.dtypes import FP16, FP32, I8
from conformance.spec import load_spec
from reference import arithmetic as ar
from reference.context import OpContext
from reference.levels import level_violations
from reference.ops import image, tensor_conv
from reference.registry import OpFunction

_SPEC = load_spec()
# Element-wise operators with two broadcast operands, as tosa.xml groups them.
BINARY_OPS = tuple(
    op.name
    for group in ("elementwise-binary", "comparison")
    for op in _SPEC.groups()[group]
    if {"input1", "input2"} <= {a.name for a in op.inputs}
)
LANES = 8  # vector width of the modelled kernels (elements)
TILE = 4096  # elements per tile of the modelled fp16 kernel

# == element-wise kernels: remainders, tiles, broadcasts ======================================


@wraps(
    "elementwise-row-remainder-stale",
    BINARY_OPS,
    f"innermost dimension > {LANES} and not a multiple of {LANES}",
    f"the {LANES}-lane kernel has no remainder loop: the last W % {LANES} elements of each "
    f"row are stored from the previous vector (element j gets the result of j - {LANES})",
    f"element-wise vectors whose innermost dimension is not a multiple of {LANES} "
    f"(e.g. 13), with values that differ along it",
    breaks="every element-wise operator: for_each(index in shape) computes every output "
    "element from its own inputs",
)
def _row_remainder_stale(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    out = output_of(result)
    w = out.shape[-1] if out.ndim else 0
    tail = w % LANES
    if w <= LANES or tail == 0:
        return result
    stale = np.array(out, copy=True)
    stale[..., w - tail :] = out[..., w - tail - LANES : w - LANES]
    return {"output": stale}


@wraps(
    "fp16-add-sub-tile-operand-stale",
    ["ADD", "SUB"],
    f"fp16 with more than {TILE} output elements",
    f"the tiled fp16 kernel does not advance input2's pointer past the first {TILE}-element "
    f"tile: element i reads input2 at i mod {TILE}",
    f"fp16 ADD/SUB vectors with more than {TILE} elements whose input2 differs between tiles",
    breaks="ADD.tosac / SUB.tosac: value2 = tensor_read(input2, shape2, apply_broadcast(...)) "
    "at every index",
)
def _fp16_tile_stale(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    shape = ctx.out_shape()
    if ctx.dtype("in_out_t") is not FP16 or math.prod(shape) <= TILE:
        return result
    a, b = broadcast_pair(ctx, ar.as_float)
    flat = np.ascontiguousarray(b).reshape(-1)
    stale = flat[np.arange(flat.size) % TILE].reshape(shape)
    with np.errstate(all="ignore"):
        return {"output": a + stale if ctx.name == "ADD" else a - stale}


def _cycling_is_broadcast(shape: tuple[int, ...], out: tuple[int, ...]) -> bool:
    """Reading a tensor of ``shape`` at output element i as its element i mod size is the
    broadcast exactly when every broadcast (size-1) axis comes before every kept one."""
    kept = False
    for d, o in zip(shape, out, strict=True):
        if d == o and o > 1:
            kept = True
        elif d == 1 and o > 1 and kept:
            return False
    return True


@wraps(
    "broadcast-by-cycling",
    (*BINARY_OPS, "SELECT"),
    "an operand with a size-1 axis after a non-broadcast one",
    "broadcasting is done by cycling through the smaller operand (element i mod its size), "
    "which is right only when its size-1 axes all lead ([1, 1, C] but not [N, 1, C])",
    "element-wise and SELECT vectors broadcasting a size-1 middle or last axis "
    "(e.g. [2, 1, 3] against [2, 4, 3])",
    breaks="library apply_broadcast: an index of a size-1 axis of the operand is 0, other "
    "axes keep the output's index",
)
def _broadcast_by_cycling(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # the real graph's ERROR_IFs and REQUIREs
    out = ctx.out_shape()
    size = math.prod(out)
    changes = {}
    # the broadcast operands (MUL's shift is not one)
    for name in ("input1", "input2", "input3"):
        if name not in ctx.operands.inputs:
            continue
        x = np.asarray(ctx.arg(name))
        if x.ndim != len(out) or x.size in (0, size) or _cycling_is_broadcast(x.shape, out):
            continue
        changes[name] = x.reshape(-1)[np.arange(size) % x.size].reshape(out)
    if not changes:
        return result
    # Integer results of the new pairings wrap as the kernel's arithmetic does.
    return original(ignoring_requires(with_inputs(ctx, **changes)))


# == rank 0 ==================================================================================


@wraps(
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


@wraps(
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


# == level limits ============================================================================


def _operators_limited_by(limit: str) -> tuple[str, ...]:
    return tuple(
        sorted(
            op.name
            for op in _SPEC.operators.values()
            if any(lim.limit == limit for _, lim in op.level_limits())
        )
    )


def _limit_lowered(limit: str, lowered: Callable[[int], int]) -> Wrapper:
    """A backend whose support for ``limit`` stops at ``lowered(level maximum)``: the
    level's own checks, at the lower maximum, refuse the graph before it runs."""

    def wrapper(original: OpFunction, ctx: OpContext) -> Result:
        if limit in ctx.level.maxima:
            low = lowered(ctx.level[limit])
            level = dataclasses.replace(ctx.level, maxima={**ctx.level.maxima, limit: low})
            found = [
                v
                for v in level_violations(
                    ctx.op_spec, ctx.operands, ctx.block.tensors, ctx.attrs, ctx.values, level
                )
                if f"<= {limit} (" in v
            ]
            ctx.error_if(bool(found), f"backend support: {limit} <= {low}", "; ".join(found))
        return original(ctx)

    return wrapper


for _limit, _what in (
    ("MAX_KERNEL", "kernel sizes, dilated kernels, pads and FFT sizes"),
    ("MAX_STRIDE", "strides"),
    ("MAX_SCALE", "RESIZE scale factors"),
):
    wraps(
        f"{_limit.lower().replace('_', '-')}-halved",
        _operators_limited_by(_limit),
        f"{_limit} / 2 < value <= {_limit}",
        f"the backend supports {_what} only up to half the level's {_limit}, and refuses "
        f"graphs above that",
        f"valid vectors with a value above {_limit} / 2 (at {_limit} itself, e.g. 8K's "
        f"{_SPEC.level('8K')[_limit]})",
        effect="rejects valid graph",
        breaks=f"introduction, levels: an implementation of a level supports every value up "
        f"to its {_limit} (LEVEL_CHECK({_limit}))",
    )(_limit_lowered(_limit, lambda m: m // 2))

wraps(
    "max-rank-4",
    _operators_limited_by("MAX_RANK"),
    "rank 5 and 6",
    "tensors of rank 5 or 6 are refused (a backend built on 4-D kernels, as NNAPI's are)",
    "valid vectors of rank 5 and 6",
    effect="rejects valid graph",
    breaks="introduction, levels: 8K requires MAX_RANK = 6 (LEVEL_CHECK(rank(shape) <= MAX_RANK))",
)(_limit_lowered("MAX_RANK", lambda m: min(m, 4)))


# == dot products ===========================================================================

LONG_KS = 256


@wraps(
    "dot-long-ks-accumulated-in-fp16",
    ["MATMUL", "FULLY_CONNECTED"],
    f"fp32 output with KS > {LONG_KS}",
    f"for dot products longer than {LONG_KS} the backend picks a split-K kernel that "
    "accumulates in fp16 (reduced-precision reduction), then widens to fp32",
    f"MATMUL / FULLY_CONNECTED fp32-output vectors with KS > {LONG_KS}",
    breaks="introduction, dot product accuracy: fp32 accumulation (acc_t fp32), the error "
    "bound of the dot-product tests",
)
def _long_ks_fp16(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its ERROR_IFs
    ks = ctx.input_tensor("A" if ctx.name == "MATMUL" else "input").shape[-1]
    if ctx.dtype("out_t") is not FP32 or ks <= LONG_KS:
        return result
    return fp16_accumulated(ctx)


@wraps(
    "dot-weight-zp-ignored",
    (*WEIGHTED_OPS, "MATMUL"),
    "i8 with weight_zp / B_zp != 0",
    "the weight zero point is not subtracted (the input zero point still is)",
    "i8 convolution / FULLY_CONNECTED / MATMUL vectors with a non-zero weight_zp or B_zp",
    breaks="CONV2D.tosac etc.: weight = apply_sub_s<acc_t>(weight, weight_zp); MATMUL.tosac: "
    "value2 = apply_sub_s<out_t>(value2, B_zp)",
)
def _weight_zp_ignored(original: OpFunction, ctx: OpContext) -> Result:
    key, var = ("B_zp", "in_t") if ctx.name == "MATMUL" else ("weight_zp", "weight_t")
    # Only i8 may have a zero point; elsewhere one is an ERROR_IF the bug keeps.
    if ctx.dtype(var) is not I8 or not ctx.attr(key, 0):
        return original(ctx)
    return original(with_attrs(ctx, **{key: 0}))


# == convolution and pooling geometry =========================================================

# Operators whose pad attribute names pad_top and pad_bottom (tosa.xml's element names).
PADDED_OPS = tuple(
    op.name
    for op in _SPEC.operators.values()
    for a in op.attributes
    if a.name == "pad" and {"pad_top", "pad_bottom"} <= set(a.element_names)
)


@wraps(
    "pad-top-bottom-swapped",
    PADDED_OPS,
    "pad_top != pad_bottom",
    "the pad attribute is read as [bottom, top, ...]: asymmetric vertical padding is "
    "applied upside down (the output size, which uses their sum, is unchanged)",
    "convolution / pooling vectors with pad_top != pad_bottom",
    breaks="CONV2D.tosac etc.: iy = oy * stride_y - pad_top (pad_bottom only sizes OH)",
)
def _pad_top_bottom_swapped(original: OpFunction, ctx: OpContext) -> Result:
    names = ctx.op_spec.argument("pad").element_names
    pad = [int(v) for v in np.asarray(ctx.attr("pad")).reshape(-1)]
    if len(pad) != len(names):
        return original(ctx)  # the engine's declaration check refuses it
    top, bottom = names.index("pad_top"), names.index("pad_bottom")
    if pad[top] == pad[bottom]:
        return original(ctx)
    pad[top], pad[bottom] = pad[bottom], pad[top]
    return original(with_attrs(ctx, pad=tuple(pad)))


def _axes_patch(change: Callable[[list[Any]], list[Any]]) -> Callable[..., Any]:
    """A replacement of tensor_conv._conv_axes that alters the axes it returns (after
    its ERROR_IFs, which see the graph's own attributes)."""

    def patch(original: Callable[..., Any]) -> Callable[..., Any]:
        def conv_axes(*args: Any, **kwargs: Any) -> Any:
            return change(list(original(*args, **kwargs)))

        return conv_axes

    return patch


def _y_undilated(axes: list[Any]) -> list[Any]:
    axes[-2] = dataclasses.replace(axes[-2], dilation=1)  # [(d,) y, x]
    return axes


def _strides_swapped(axes: list[Any]) -> list[Any]:
    y, x = axes[-2], axes[-1]
    axes[-2], axes[-1] = (
        dataclasses.replace(y, stride=x.stride),
        dataclasses.replace(x, stride=y.stride),
    )
    return axes


_CONV_FORWARD = ("CONV2D", "CONV3D", "DEPTHWISE_CONV2D")

register(
    Mutant(
        "conv-dilation-y-ignored",
        _CONV_FORWARD,
        "dilation_y > 1",
        "only dilation_x is applied to the input address; rows are read undilated (the "
        "output size still follows dilation_y)",
        "convolution vectors with dilation_y > 1 (dilation [2, 1] or [2, 2])",
        helpers=(HelperPatch(tensor_conv, "_conv_axes", _axes_patch(_y_undilated)),),
    ),
    breaks="CONV2D.tosac etc.: y = iy + ky * dilation_y",
)

register(
    Mutant(
        "conv-strides-swapped",
        _CONV_FORWARD,
        "stride_y != stride_x",
        "stride_y steps the columns and stride_x the rows (the output size still follows "
        "the right ones)",
        "convolution vectors with stride_y != stride_x (non-square strides)",
        helpers=(HelperPatch(tensor_conv, "_conv_axes", _axes_patch(_strides_swapped)),),
    ),
    breaks="CONV2D.tosac etc.: iy = oy * stride_y - pad_top, ix = ox * stride_x - pad_left",
)


# == RESIZE ===================================================================================


def _offset_clamped(original: Callable[..., Any]) -> Callable[..., Any]:
    def axis(out_size: int, in_size: int, n: int, d: int, offset: int) -> Any:
        return original(out_size, in_size, n, d, max(offset, 0))

    return axis


register(
    Mutant(
        "resize-negative-offset-clamped",
        ("RESIZE",),
        "offset_y < 0 or offset_x < 0",
        "a negative offset is clamped to 0 in the sampling position (kept in the output "
        "size), as if offsets were unsigned",
        "RESIZE vectors with a negative offset (e.g. half-pixel downscaling)",
        helpers=(HelperPatch(image, "_axis", _offset_clamped),),
    ),
    breaks="RESIZE.tosac: y = oy * scale_y_d + offset_y, where offset_y >= -scale_y_n is valid",
)


@wraps(
    "resize-border-ignored",
    ["RESIZE"],
    "border_y != 0 or border_x != 0",
    "the output size is validated without the border term, so a graph with a non-zero "
    "border is refused as having the wrong OH/OW",
    "valid RESIZE vectors with a non-zero border",
    effect="rejects valid graph",
    breaks="RESIZE.tosac: OH = idiv_check((IH - 1) * scale_y_n - offset_y + border_y, "
    "scale_y_d) + 1",
)
def _resize_border_ignored(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # the real ERROR_IFs first
    y_n, y_d, x_n, x_d = (int(v) for v in np.asarray(ctx.arg("scale")).reshape(-1))
    off_y, off_x = (int(v) for v in np.asarray(ctx.arg("offset")).reshape(-1))
    _, ih, iw, _ = ctx.input_tensor("input").shape
    _, oh, ow, _ = ctx.out_shape()
    for size, in_size, n, d, off, axis in (
        (oh, ih, y_n, y_d, off_y, "OH"),
        (ow, iw, x_n, x_d, off_x, "OW"),
    ):
        numerator = (in_size - 1) * n - off
        ctx.error_if(
            numerator % d != 0 or numerator // d + 1 != size,
            f"backend: {axis} != idiv_check((I - 1) * scale_n - offset, scale_d) + 1",
            f"{axis} = {size}",
        )
    return result


# == data layout ============================================================================

GENERIC_RANK = 5  # kernels for ranks below this have their own (correct) paths


@wraps(
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


@wraps(
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


@wraps(
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


@wraps(
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

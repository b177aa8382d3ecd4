"""Mutants of the tensor, image and data-layout operators (the original catalogue's
second half): dot products, pooling, reductions, FFT, RESIZE, PAD, SLICE, TRANSPOSE,
GATHER and SCATTER.  They register into :data:`mutant_tools.CATALOGUE`."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from conformance.backends.mutant_tools import (
    CONV_OPS,
    DOT_OPS,
    WEIGHTED_OPS,
    fp16_accumulated,
    round_mantissa,
    wraps,
)
from conformance.backends.mutant_tools import output_of as _out
from conformance.backends.mutant_tools import register as _add
from conformance.backends.mutants import HelperPatch, Mutant, Result, with_attrs, with_inputs
from conformance.dtypes import BF16, FP32, I8, I48
from reference import arithmetic as ar
from reference.context import OpContext
from reference.ops import image, tensor_conv, tensor_pool_fft
from reference.registry import OpFunction

# == dot products ================================================================================


def _no_dilation(original: Callable[..., Any]) -> Callable[..., Any]:
    def conv_axes(*args: Any, **kwargs: Any) -> Any:
        return [dataclasses.replace(a, dilation=1) for a in original(*args, **kwargs)]

    return conv_axes


_add(
    Mutant(
        "conv-dilation-ignored",
        ("CONV2D", "CONV3D", "DEPTHWISE_CONV2D"),
        "dilation > 1",
        "dilation is ignored in the input address (the output size still follows it)",
        "convolution vectors with dilation > 1",
        helpers=(HelperPatch(tensor_conv, "_conv_axes", _no_dilation),),
    )
)


def _negated_out_pad(original: Callable[..., Any]) -> Callable[..., Any]:
    def transpose_span(self: Any, k: int) -> Any:
        return original(dataclasses.replace(self, pad=-self.pad), k)

    return transpose_span


_add(
    Mutant(
        "transpose-conv-out-pad-negated",
        ("TRANSPOSE_CONV2D",),
        "out_pad_top or out_pad_left != 0",
        "out_pad is applied with the wrong sign, as a crop like a convolution's padding",
        "TRANSPOSE_CONV2D vectors with non-zero out_pad_top / out_pad_left",
        helpers=(HelperPatch(tensor_conv._Axis, "transpose_span", _negated_out_pad),),
    )
)


@wraps(
    "conv-bias-first-channel",
    WEIGHTED_OPS,
    "per-channel bias (BC > 1)",
    "the bias is always broadcast from element 0, as if BC were 1",
    "convolution / FULLY_CONNECTED vectors with a per-channel bias",
)
def _bias_first_channel(original: OpFunction, ctx: OpContext) -> Result:
    b = np.asarray(ctx.arg("bias"))
    if b.size < 2:
        return original(ctx)
    return original(with_inputs(ctx, bias=np.full_like(b, b.reshape(-1)[0])))


@wraps(
    "dot-input-zp-ignored",
    DOT_OPS,
    "i8 with input_zp / A_zp != 0",
    "the input zero point is not subtracted (the weight zero point still is)",
    "i8 convolution / FULLY_CONNECTED / MATMUL vectors with a non-zero input zero point",
)
def _input_zp_ignored(original: OpFunction, ctx: OpContext) -> Result:
    key = "A_zp" if ctx.name == "MATMUL" else "input_zp"
    # Only i8 may have a zero point; elsewhere one is an ERROR_IF the bug keeps.
    if ctx.dtype("in_t") is not I8 or not ctx.attr(key, 0):
        return original(ctx)
    return original(with_attrs(ctx, **{key: 0}))


@wraps(
    "depthwise-channel-order",
    ["DEPTHWISE_CONV2D"],
    "channel multiplier M > 1 and C > 1",
    "output channels are laid out m * C + c instead of c * M + m",
    "DEPTHWISE_CONV2D vectors with C > 1 and M > 1",
)
def _depthwise_channel_order(original: OpFunction, ctx: OpContext) -> Result:
    out = _out(original(ctx))
    c = ctx.input_tensor("input").shape[-1]
    m = ctx.input_tensor("weight").shape[-1]
    lead = out.shape[:-1]
    return {"output": out.reshape(*lead, c, m).swapaxes(-1, -2).reshape(out.shape)}


def _dot_inputs(ctx: OpContext) -> tuple[str, str]:
    return ("A", "B") if ctx.name == "MATMUL" else ("input", "weight")


@wraps(
    "dot-fp32-inputs-tf32",
    DOT_OPS,
    "fp32 inputs",
    "fp32 products formed from TF32 inputs (10-bit mantissa), as tensor cores do by default",
    "fp32 MATMUL / FULLY_CONNECTED / convolution vectors",
)
def _tf32(original: OpFunction, ctx: OpContext) -> Result:
    if ctx.dtype("in_t") is not FP32:
        return original(ctx)
    changes = {}
    with np.errstate(over="ignore"):
        for name in _dot_inputs(ctx):
            changes[name] = round_mantissa(ctx.arg(name), 10).astype(np.float32)
    return original(with_inputs(ctx, **changes))


@wraps(
    "dot-fp32-accumulated-in-fp16",
    ["MATMUL", "FULLY_CONNECTED"],
    "fp32 output (fp16/bf16/fp32 inputs with fp32 accumulate)",
    "the dot product is accumulated in fp16 (half-precision unit), then widened to fp32",
    "MATMUL / FULLY_CONNECTED vectors with fp32 outputs, the longer the dot product the surer",
)
def _fp16_accumulate(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its ERROR_IFs
    if ctx.dtype("out_t") is not FP32:
        return result
    return fp16_accumulated(ctx)


@wraps(
    "local-bound-ignored",
    CONV_OPS,
    "floating point with local_bound = true",
    "a fast (Winograd/FFT) convolution is used even when local_bound asks for the direct "
    "one: input rounding scales with the largest input (modelled as the input on a grid of "
    "max|input| * 2**-(frac+3))",
    "float convolution vectors with local_bound = true and inputs of widely varying "
    "magnitude; with local_bound = false this mutant must pass",
)
def _local_bound_ignored(original: OpFunction, ctx: OpContext) -> Result:
    out_t = ctx.dtype("out_t")
    if not out_t.is_float:
        return original(ctx)
    assert out_t.normal_frac is not None
    x = ctx.arg("input").astype(np.float64)
    finite = np.isfinite(x)
    top = float(np.max(np.abs(x[finite]), initial=0.0))
    if top == 0.0:
        return original(ctx)
    step = top * 2.0 ** -(out_t.normal_frac + 3)
    # fp64 values in the context: the operator reads its inputs through as_float.
    return original(with_inputs(ctx, input=np.where(finite, np.rint(x / step) * step, x)))


@wraps(
    "i48-accumulator-truncated",
    DOT_OPS,
    "i16 inputs with i48 output",
    "the 48-bit accumulator is kept in 32 bits, so large sums wrap",
    "i16 dot-product vectors whose results leave the int32 range",
)
def _acc_truncated(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if ctx.dtype("out_t") is not I48:
        return result
    return {"output": ar.wrap(_out(result), 32)}


# == pooling, reduction, FFT ======================================================================


def _count_padding(original: Callable[..., Any]) -> Callable[..., Any]:
    def valid_count(size: int, out: int, kernel: int, stride: int, pad: int) -> np.ndarray:
        return np.full(out, kernel, dtype=np.int64)

    return valid_count


_add(
    Mutant(
        "avg-pool-counts-padding",
        ("AVG_POOL2D",),
        "pad > 0",
        "the divisor is kernel_y * kernel_x, counting padded positions (count_include_pad)",
        "AVG_POOL2D vectors with padding (border outputs)",
        helpers=(HelperPatch(tensor_pool_fft, "_valid_count", _count_padding),),
    )
)


def _floor_scale(original: Callable[..., Any]) -> Callable[..., Any]:
    def apply_scale_32(ctx: OpContext, value: Any, multiplier: Any, shift: Any) -> Any:
        original(ctx, value, multiplier, shift)  # its REQUIREs
        return (value * multiplier) >> shift

    return apply_scale_32


_add(
    Mutant(
        "avg-pool-int-floors",
        ("AVG_POOL2D",),
        "i8 / i16",
        "the integer average drops apply_scale_32's rounding term (floors the quotient)",
        "integer AVG_POOL2D vectors whose window sums are not multiples of the count",
        helpers=(HelperPatch(tensor_pool_fft, "_apply_scale_32", _floor_scale),),
    )
)


def _zero_fill(original: Callable[..., Any]) -> Callable[..., Any]:
    def padded(x: np.ndarray, w: Any, fill: Any) -> np.ndarray:
        return original(x, w, 0)  # type: ignore[no-any-return]

    return padded


_add(
    Mutant(
        "max-pool-pads-zero",
        ("MAX_POOL2D",),
        "pad > 0",
        "padding takes part in the maximum as 0 instead of being skipped",
        "MAX_POOL2D vectors with padding and all-negative border windows",
        helpers=(HelperPatch(tensor_pool_fft, "_padded", _zero_fill),),
    )
)


@wraps(
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


@wraps(
    "fft-inverse-ignored",
    ["FFT2D"],
    "inverse = true",
    "the inverse attribute is ignored: always the forward transform",
    "FFT2D vectors with inverse = true and a non-zero imaginary result",
)
def _fft_inverse_ignored(original: OpFunction, ctx: OpContext) -> Result:
    if bool(ctx.attr("inverse", False)):
        return original(with_attrs(ctx, inverse=False))
    return original(ctx)


@wraps(
    "rfft-imag-negated",
    ["RFFT2D"],
    "all",
    "the imaginary part has the opposite sign (exp(+i a) convention)",
    "any RFFT2D vector whose input is not symmetric",
)
def _rfft_imag_negated(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    return {**result, "output_imag": -_out(result, "output_imag")}


# == image ========================================================================================


def _half_pixel(original: Callable[..., Any]) -> Callable[..., Any]:
    def axis(out_size: int, in_size: int, n: int, d: int, offset: int) -> Any:
        # half-pixel centres: n * in = o * d + (d - n) / 2, on top of the graph's offset
        pos = np.arange(out_size, dtype=np.int64) * d + offset + (d - n) // 2
        i = pos // n
        r = pos - i * n
        return np.clip(i, 0, in_size - 1), np.clip(i + 1, 0, in_size - 1), r

    return axis


_add(
    Mutant(
        "resize-half-pixel-added",
        ("RESIZE",),
        "scale_n != scale_d (both modes)",
        "a half-pixel centre offset is applied on top of the offset input (counted twice)",
        "RESIZE vectors that change the size",
        helpers=(HelperPatch(image, "_axis", _half_pixel),),
    )
)


@wraps(
    "resize-nearest-ties-down",
    ["RESIZE"],
    "NEAREST_NEIGHBOR",
    "nearest neighbour rounds an exact half-way position down instead of up",
    "NEAREST_NEIGHBOR vectors with positions exactly half-way (e.g. 2x upscale, offset 0)",
)
def _resize_nearest_ties_down(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if ctx.attr("mode") != "NEAREST_NEIGHBOR":
        return result
    x = np.asarray(ctx.arg("input"))
    _, ih, iw, _ = x.shape
    _, oh, ow, _ = ctx.out_shape()
    y_n, y_d, x_n, x_d = (int(v) for v in np.asarray(ctx.arg("scale")).reshape(-1))
    off_y, off_x = (int(v) for v in np.asarray(ctx.arg("offset")).reshape(-1))
    iy0, iy1, ry = image._axis(oh, ih, y_n, y_d, off_y)
    ix0, ix1, rx = image._axis(ow, iw, x_n, x_d, off_x)
    rows = np.where(2 * ry > y_n, iy1, iy0)
    cols = np.where(2 * rx > x_n, ix1, ix0)
    return {"output": x[:, rows][:, :, cols]}


# == data layout ==================================================================================


@wraps(
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


@wraps(
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


@wraps(
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


@wraps(
    "gather-batch-ignored",
    ["GATHER"],
    "N > 1",
    "the batch offset is left out of the address: every batch gathers from batch 0",
    "GATHER vectors with more than one batch",
)
def _gather_batch_ignored(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)  # its REQUIREs (indices in range)
    k = np.asarray(ctx.arg("indices")).astype(np.int64)
    return {"output": np.asarray(ctx.arg("values"))[0][k]}


@wraps(
    "scatter-no-copy",
    ["SCATTER"],
    "W < K",
    "values_out starts as zeros instead of a copy of values_in (in-place assumption)",
    "SCATTER vectors that leave some positions unwritten",
)
def _scatter_no_copy(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)  # its REQUIREs (in range, each position once)
    values_in = np.asarray(ctx.arg("values_in"))
    k = np.asarray(ctx.arg("indices")).astype(np.int64)
    out = np.zeros_like(values_in)
    out[np.arange(values_in.shape[0])[:, None], k] = ctx.arg("input")
    return {"values_out": out}

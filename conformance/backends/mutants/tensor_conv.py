"""Mutants of the convolution and matrix operators (reference/ops/tensor_conv.py):
accumulation, zero points, bias, dilation, stride and padding geometry."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from conformance.backends.mutants import (
    Result,
    mutant,
    with_attrs,
    with_inputs,
)
from conformance.backends.mutants.tools import (
    CONV_OPS,
    DOT_OPS,
    WEIGHTED_OPS,
    fp16_accumulated,
    round_mantissa,
)
from conformance.backends.mutants.tools import output_of as _out
from conformance.dtypes import FP32, I8, I48
from conformance.spec import Spec
from reference import arithmetic as ar
from reference.context import OpContext
from reference.ops import tensor_conv
from reference.registry import OpFunction


@mutant(
    "conv-dilation-ignored",
    ("CONV2D", "CONV3D", "DEPTHWISE_CONV2D"),
    "dilation > 1",
    "dilation is ignored in the input address (the output size still follows it)",
    "convolution vectors with dilation > 1",
    patch=(tensor_conv, "conv_axes"),
)
def _no_dilation(original: Callable[..., Any]) -> Callable[..., Any]:
    def conv_axes(*args: Any, **kwargs: Any) -> Any:
        return [dataclasses.replace(a, dilation=1) for a in original(*args, **kwargs)]

    return conv_axes


@mutant(
    "transpose-conv-out-pad-negated",
    ("TRANSPOSE_CONV2D",),
    "out_pad_top or out_pad_left != 0",
    "out_pad is applied with the wrong sign, as a crop like a convolution's padding",
    "TRANSPOSE_CONV2D vectors with non-zero out_pad_top / out_pad_left",
    patch=(tensor_conv.ConvAxis, "transpose_span"),
)
def _negated_out_pad(original: Callable[..., Any]) -> Callable[..., Any]:
    def transpose_span(self: Any, k: int) -> Any:
        return original(dataclasses.replace(self, pad=-self.pad), k)

    return transpose_span


@mutant(
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


@mutant(
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


@mutant(
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


@mutant(
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


@mutant(
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


@mutant(
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


@mutant(
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


LONG_KS = 256


@mutant(
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


@mutant(
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


def padded_operators(spec: Spec) -> tuple[str, ...]:
    """Operators whose pad attribute names pad_top and pad_bottom (tosa.xml's element
    names)."""
    return tuple(
        op.name
        for op in spec.operators.values()
        for a in op.attributes
        if a.name == "pad" and {"pad_top", "pad_bottom"} <= set(a.element_names)
    )


@mutant(
    "pad-top-bottom-swapped",
    padded_operators,
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
    """A replacement of tensor_conv.conv_axes that alters the axes it returns (after
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


mutant(
    "conv-dilation-y-ignored",
    _CONV_FORWARD,
    "dilation_y > 1",
    "only dilation_x is applied to the input address; rows are read undilated (the "
    "output size still follows dilation_y)",
    "convolution vectors with dilation_y > 1 (dilation [2, 1] or [2, 2])",
    breaks="CONV2D.tosac etc.: y = iy + ky * dilation_y",
    patch=(tensor_conv, "conv_axes"),
)(_axes_patch(_y_undilated))


mutant(
    "conv-strides-swapped",
    _CONV_FORWARD,
    "stride_y != stride_x",
    "stride_y steps the columns and stride_x the rows (the output size still follows "
    "the right ones)",
    "convolution vectors with stride_y != stride_x (non-square strides)",
    breaks="CONV2D.tosac etc.: iy = oy * stride_y - pad_top, ix = ox * stride_x - pad_left",
    patch=(tensor_conv, "conv_axes"),
)(_axes_patch(_strides_swapped))

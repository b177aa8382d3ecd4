"""Mutants of the convolution and matrix operators (reference/ops/tensor_conv.py, and
TOSA 1.1's MATMUL_T, reference/ops/matmul_t.py): accumulation, zero points, bias,
dilation, stride and padding geometry, B's layout, mixed-precision operand types.

Types are read from the operators' declarations (the data operand's element type: in_t,
or MATMUL's A_t from TOSA 1.1), never assumed to be in_t."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from conformance.backends.mutants import (
    HelperPatch,
    Result,
    mutant,
    with_attrs,
    with_inputs,
    with_values,
)
from conformance.backends.mutants.tools import (
    CONV_OPS,
    DOT_OPS,
    WEIGHTED_OPS,
    fp16_accumulated,
    round_mantissa,
)
from conformance.backends.mutants.tools import output_of as _out
from conformance.block_tensor import BlockScaled, TensorValue, scale_type
from conformance.dtypes import FP32, I8, I48, DType
from conformance.operator_table import OperatorTable, family
from conformance.spec import Spec
from reference import arithmetic as ar
from reference import mx
from reference.context import OpContext
from reference.engine import to_storage
from reference.expectations import element_values
from reference.ops import tensor_conv
from reference.ops.tensor_conv import zero_point_type_var
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
    if ctx.dtype(zero_point_type_var(ctx.op_spec, key)) is not I8 or not ctx.attr(key, 0):
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
    return ("A", "B") if ctx.name in ("MATMUL", "MATMUL_T") else ("input", "weight")


def _declared(ctx: OpContext, arg: str) -> DType:
    """An operand's element type, as its declaration binds it (in_t, weight_t, A_t)."""
    return ctx.dtype(ctx.op_spec.argument(arg).element_type)


@mutant(
    "dot-fp32-inputs-tf32",
    DOT_OPS,
    "fp32 inputs",
    "fp32 products formed from TF32 inputs (10-bit mantissa), as tensor cores do by default",
    "fp32 MATMUL / FULLY_CONNECTED / convolution vectors",
)
def _tf32(original: OpFunction, ctx: OpContext) -> Result:
    changes = {}
    with np.errstate(over="ignore"):
        for name in _dot_inputs(ctx):  # each fp32 operand (1.1 mixes fp32 with others)
            if _declared(ctx, name) is FP32:
                changes[name] = round_mantissa(ctx.arg(name), 10).astype(np.float32)
    return original(with_inputs(ctx, **changes)) if changes else original(ctx)


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
    x = ctx.arg("input").astype(np.float64)
    finite = np.isfinite(x)
    top = float(np.max(np.abs(x[finite]), initial=0.0))
    if top == 0.0:
        return original(ctx)
    step = top * 2.0 ** -(out_t.fp.normal_frac + 3)
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
    key = "B_zp" if ctx.name == "MATMUL" else "weight_zp"
    # Only i8 may have a zero point; elsewhere one is an ERROR_IF the bug keeps.
    if ctx.dtype(zero_point_type_var(ctx.op_spec, key)) is not I8 or not ctx.attr(key, 0):
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


_CONV_FORWARD = family(("CONV2D", "CONV3D", "DEPTHWISE_CONV2D"))


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


def _depth_undilated(axes: list[Any]) -> list[Any]:
    if len(axes) == 3:  # [d, y, x]: CONV3D only
        axes[0] = dataclasses.replace(axes[0], dilation=1)
    return axes


mutant(
    "conv3d-dilation-d-ignored",
    ("CONV3D",),
    "dilation_d > 1",
    "CONV3D is lowered to a sum of CONV2Ds over the depth taps, and the 2-D kernels get "
    "dilation_y / dilation_x only: depth taps are read undilated (the output size still "
    "follows dilation_d)",
    "CONV3D vectors with dilation_d > 1 and KD > 1",
    breaks="CONV3D.tosac: d = id + kd * dilation_d",
    patch=(tensor_conv, "conv_axes"),
)(_axes_patch(_depth_undilated))


class _TransposeState(threading.local):
    """The x axis of the TRANSPOSE_CONV2D being run, and the stride it is given."""

    x_axis: Any = None
    stride: int = 0


_TRANSPOSE = _TransposeState()


def _x_stride_from_y(original: Callable[..., Any]) -> Callable[..., Any]:
    def transpose_span(self: Any, k: int) -> Any:
        if _TRANSPOSE.x_axis is not None and self == _TRANSPOSE.x_axis:
            return original(dataclasses.replace(self, stride=_TRANSPOSE.stride), k)
        return original(self, k)

    return transpose_span


@mutant(
    "transpose-conv-square-stride",
    ("TRANSPOSE_CONV2D",),
    "stride_y != stride_x",
    "the deconvolution engine supports square strides only and places input columns "
    "with stride_y as well (the output size still follows stride_x)",
    "TRANSPOSE_CONV2D vectors with stride_y != stride_x",
    breaks="TRANSPOSE_CONV2D.tosac: ox = ix * stride_x + dx + out_pad_left",
    helpers=(HelperPatch(tensor_conv.ConvAxis, "transpose_span", _x_stride_from_y),),
)
def _transpose_square_stride(original: OpFunction, ctx: OpContext) -> Result:
    sy, sx = (int(v) for v in np.asarray(ctx.attr("stride")).reshape(-1))
    if sy == sx or sy < 1 or sx < 1:
        return original(ctx)
    _, _, iw, _ = ctx.input_tensor("input").shape
    _, _, kw, _ = ctx.input_tensor("weight").shape
    _, _, ow, _ = ctx.out_shape()
    left = int(np.asarray(ctx.attr("out_pad")).reshape(-1)[2])
    _TRANSPOSE.x_axis = tensor_conv.ConvAxis(iw, ow, kw, sx, 1, left)
    _TRANSPOSE.stride = sy
    try:
        return original(ctx)
    finally:
        _TRANSPOSE.x_axis = None


@mutant(
    "matmul-b-batch0",
    ("MATMUL",),
    "N > 1",
    "a batched MATMUL is lowered to FULLY_CONNECTED with B as a shared weight matrix: "
    "every batch is multiplied by B's batch 0",
    "MATMUL vectors with N > 1 whose B differs between batches",
    breaks="MATMUL.tosac: value2 = tensor_read<in_t>(B, [N,C,W], [n,c,w]) (B's batch n)",
)
def _matmul_b_batch0(original: OpFunction, ctx: OpContext) -> Result:
    b = np.asarray(ctx.arg("B"))
    if b.ndim != 3 or b.shape[0] < 2:
        return original(ctx)
    return original(with_inputs(ctx, B=np.ascontiguousarray(np.broadcast_to(b[:1], b.shape))))


_FORWARD_WEIGHT_SUM_AXES = OperatorTable(
    {"CONV2D": (1, 2, 3), "CONV3D": (1, 2, 3, 4), "DEPTHWISE_CONV2D": (0, 1)}
)


@mutant(
    "conv-pads-zero-before-zp",
    _CONV_FORWARD,
    "i8 with input_zp != 0 and pad > 0",
    "the input is padded with literal zeros and input_zp is then subtracted from every tap, "
    "padding included: padded taps add (0 - input_zp) * weight instead of nothing (the "
    "padding should hold the zero point)",
    "i8 convolution vectors with a non-zero input_zp and padding, whose border outputs "
    "meet non-zero weights",
    breaks="CONV2D.tosac etc.: if (0 <= y < IH && 0 <= x < IW) { ... apply_sub_s(value, "
    "input_zp) ... }: padded taps are skipped",
)
def _pads_zero_before_zp(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its ERROR_IFs and REQUIREs
    zp = int(ctx.attr("input_zp", 0))
    pads = np.asarray(ctx.attr("pad")).reshape(-1)
    if ctx.dtype("in_t") is not I8 or zp == 0 or not pads.any():
        return result
    x = np.asarray(ctx.arg("input"))
    w = np.asarray(ctx.arg("weight")).astype(np.int64) - int(ctx.attr("weight_zp", 0))
    # sum of (weight - weight_zp) over the taps inside the input, per output: the
    # operator on a constant input one step from the zero point, without bias
    probe = zp + 1 if zp < 127 else zp - 1
    inside = _out(
        original(
            with_inputs(
                ctx,
                input=np.full_like(x, probe),
                bias=np.zeros_like(np.asarray(ctx.arg("bias"))),
            )
        )
    ).astype(np.int64) * (probe - zp)
    total = w.sum(axis=_FORWARD_WEIGHT_SUM_AXES[ctx.name]).reshape(-1)  # every tap
    out = _out(result).astype(np.int64) - zp * (total - inside)
    return {"output": ar.wrap(out, 32)}


@mutant(
    "fully-connected-zero-weights-skipped",
    ["FULLY_CONNECTED"],
    "floating point, an infinite or NaN input meeting a zero weight",
    "the weight encoder compresses zero weights away (zero-skipping NPU weight streams), "
    "so 0 * inf and 0 * NaN terms are never formed: an output whose only non-finite "
    "input meets a zero weight is finite instead of NaN",
    "float FULLY_CONNECTED vectors with an infinite or NaN input on a column whose weight "
    "is 0 for some output",
    breaks="FULLY_CONNECTED.tosac: acc = apply_add_s(acc, value * weight) for every ic "
    "(0 * inf is NaN)",
)
def _zero_weights_skipped(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if not ctx.dtype("out_t").is_float:
        return result
    out = _out(result)
    if not np.isnan(out).any():
        return result
    x = ar.as_float(ctx.arg("input"))  # [N, IC]
    w = ar.as_float(ctx.arg("weight"))  # [OC, IC]
    bias = np.broadcast_to(ar.as_float(ctx.arg("bias")).reshape(-1), (w.shape[0],))
    with np.errstate(all="ignore"):
        terms = np.where(w[None, :, :] != 0, x[:, None, :] * w[None, :, :], 0.0)
        skipped = terms.sum(axis=2) + bias
    return {"output": np.where(np.isnan(out), skipped, out)}


@mutant(
    "conv-folds-pad-const",
    _CONV_FORWARD,
    "a convolution of a PAD's output whose pad_const is not the input zero point",
    "a graph rewrite folds PAD -> convolution into the convolution's own padding without "
    "checking pad_const: the padded border is read as the zero point (0 for floats) "
    "instead of pad_const",
    "graphs chaining PAD (spatial padding, pad_const != input_zp) into CONV2D / CONV3D / "
    "DEPTHWISE_CONV2D",
    breaks="PAD.tosac: value = is_pad ? pad_const : ...; the convolution reads pad_const "
    "at those positions (only its own pad attribute's taps are skipped)",
)
def _folds_pad_const(original: OpFunction, ctx: OpContext) -> Result:
    src = ctx.operands.inputs["input"][0]
    pad = next((o for o in ctx.block.operators if src in o.outputs), None)
    if pad is None or pad.op != "PAD":
        return original(ctx)
    x = np.asarray(ctx.arg("input"))
    padding = np.asarray(ctx.values[pad.inputs[1]], dtype=np.int64).reshape(-1, 2)
    if padding.shape[0] != x.ndim or padding[0].any() or padding[-1].any():
        return original(ctx)  # padding N or C: no convolution padding can hold it
    zp = int(ctx.attr("input_zp", 0)) if ctx.dtype("in_t") is I8 else 0
    if float(pad.attributes.get("pad_const", 0)) == zp:
        return original(ctx)  # the fold is right
    original(ctx)  # its ERROR_IFs and REQUIREs, on the graph's values
    border = np.ones(x.shape, dtype=bool)
    border[tuple(slice(int(b), d - int(a)) for (b, a), d in zip(padding, x.shape, strict=True))] = (
        False
    )
    folded = np.where(border, np.asarray(zp).astype(x.dtype), x).astype(x.dtype)
    return original(with_inputs(ctx, input=folded))


def _zero_points(ctx: OpContext) -> tuple[tuple[str, str, str], tuple[str, str, str]]:
    """((data argument, its zero point, its type variable), (weight ...))."""
    data, weight = _dot_inputs(ctx)
    data_zp, weight_zp = ("A_zp", "B_zp") if data == "A" else ("input_zp", "weight_zp")
    return (
        (data, data_zp, zero_point_type_var(ctx.op_spec, data_zp)),
        (weight, weight_zp, zero_point_type_var(ctx.op_spec, weight_zp)),
    )


def _probe(zp: int, like: np.ndarray) -> tuple[np.ndarray, int]:
    """A constant operand one step from its zero point, and that step (+1 or -1)."""
    step = 1 if zp < 127 else -1
    return np.full_like(like, zp + step), step


@mutant(
    "dot-zp-cross-term-dropped",
    DOT_OPS,
    "i8 with both the input and the weight zero point non-zero",
    "zero points are applied gemmlowp-style, sum(a * b) - zp_b * sum(a) - zp_a * sum(b), "
    "and the constant term + K * zp_a * zp_b is forgotten (K: the taps each output sums)",
    "i8 dot-product vectors whose input and weight zero points are both non-zero (CONV2D "
    "input_zp and weight_zp, MATMUL A_zp and B_zp)",
    breaks="CONV2D.tosac etc.: acc += apply_sub_s(value, input_zp) * apply_sub_s(weight, "
    "weight_zp); MATMUL.tosac: value1 - A_zp times value2 - B_zp",
)
def _zp_cross_term_dropped(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its ERROR_IFs and REQUIREs
    (data, data_zp, data_t), (weight, weight_zp, weight_t) = _zero_points(ctx)
    if ctx.dtype(data_t) is not I8 or ctx.dtype(weight_t) is not I8:
        return result
    za, zb = int(ctx.attr(data_zp, 0)), int(ctx.attr(weight_zp, 0))
    if za == 0 or zb == 0:
        return result
    # the number of products each output sums: the operator on operands one step from
    # their zero points (every product is +-1), without bias
    a, sa = _probe(za, np.asarray(ctx.arg(data)))
    b, sb = _probe(zb, np.asarray(ctx.arg(weight)))
    probes = {data: a, weight: b}
    if ctx.name != "MATMUL":
        probes["bias"] = np.zeros_like(np.asarray(ctx.arg("bias")))
    taps = _out(original(with_inputs(ctx, **probes))).astype(np.int64) * (sa * sb)
    out = _out(result).astype(np.int64) - taps * za * zb
    return {"output": ar.wrap(out, 32)}


_MATMULS = family(("MATMUL", "MATMUL_T"))


@mutant(
    "matmul-transpose-b-flag-inverted",
    _MATMULS,
    "C > 1 and W > 1",
    "one GEMM kernel serves MATMUL (B [N,C,W]) and MATMUL_T (B [D,W,C]) with a "
    "'B transposed' flag, set the wrong way round: B's buffer is read in the other "
    "layout (the shapes still check out)",
    "MATMUL / MATMUL_T vectors whose contraction C and column count W are both > 1",
    breaks="MATMUL.tosac: value2 = tensor_read<B_t>(B, [N,C,W], [n,c,w]); MATMUL_T.tosac: "
    "value2 = tensor_read<B_t, out_t>(B, [D,W,C], [d,w,c])",
)
def _transpose_b_inverted(original: OpFunction, ctx: OpContext) -> Result:
    b = np.asarray(ctx.arg("B"))
    if b.ndim != 3:
        return original(ctx)  # the engine's declaration check refuses it
    # B's elements in memory order, read as the other layout: [x, p, q] -> [x, q, p]
    # reinterpreted, then seen through the operator's own indexing.
    other = np.ascontiguousarray(b.reshape(b.shape[0], b.shape[2], b.shape[1]).swapaxes(1, 2))
    return original(with_inputs(ctx, B=other))


# The operators with TOSA 1.1 mixed-precision modes (the data operand's type and the
# weight's differ): data argument and weight argument.
_MIXED = OperatorTable(
    {
        "CONV2D": ("input", "weight"),
        "CONV3D": ("input", "weight"),
        "TRANSPOSE_CONV2D": ("input", "weight"),
        "MATMUL": ("A", "B"),
        "MATMUL_T": ("A", "B"),
    }
)


@mutant(
    "dot-mixed-data-in-weight-type",
    tuple(_MIXED),
    "floating point, data and weight types differ (TOSA 1.1 mixed precision)",
    "a mixed-precision dot product is lowered to a kernel of one element type, the "
    "weight's: the data operand is rounded to weight_t (B_t) before the products "
    "(fp32 or fp16 data against fp16 / bf16 / fp8 weights loses bits; exact where the "
    "data type is the narrower)",
    "TOSA 1.1 mixed-precision convolution / MATMUL / MATMUL_T vectors whose data type is "
    "wider than the weight type, with data values that type cannot hold",
    breaks="CONV2D.tosac etc.: value = tensor_read<in_t, acc_t>(input, ...); MATMUL_T.tosac: "
    "value1 = tensor_read<A_t, out_t>(A, ...): each operand is read in its own type",
)
def _mixed_data_in_weight_type(original: OpFunction, ctx: OpContext) -> Result:
    data, weight = _MIXED[ctx.name]
    data_t, weight_t = _declared(ctx, data), _declared(ctx, weight)
    if not (data_t.is_float and weight_t.is_float) or data_t is weight_t:
        return original(ctx)
    original(ctx)  # its ERROR_IFs, on the graph's values
    x = ar.as_float(ctx.arg(data))
    with np.errstate(over="ignore", invalid="ignore"):
        # fp64 values in the context: the operator reads its inputs through as_float.
        narrowed = ar.as_float(to_storage(x, weight_t))
    return original(with_inputs(ctx, **{data: narrowed}))


# -- TOSA 1.1's block-scaled operands (bs32_fp8ue8m0_*_t) ---------------------------------

BLOCK_SCALED_OPS = family(("CONV2D", "CONV3D", "TRANSPOSE_CONV2D", "MATMUL_T"))
_READ_RULE = (
    "tensor_read.tosac, tensor_read<in_t, out_t>: value = static_cast<out_t>(value) and "
    "scale = static_cast<out_t>(scale at index[last] / block_size), then "
    "apply_mul_s<out_t>(scale, value)"
)


def _with_block_operands(
    original: OpFunction, ctx: OpContext, change: Callable[[BlockScaled], TensorValue]
) -> Result:
    """The operator with each block-scaled operand replaced by ``change`` of it (the
    reference where it has none)."""
    found = {}
    for arg in _dot_inputs(ctx):
        v = ctx.value(arg)
        if isinstance(v, BlockScaled):
            found[ctx.operands.inputs[arg][0]] = change(v)
    if not found:
        return original(ctx)
    original(ctx)  # its ERROR_IFs, on the graph's values
    return original(with_values(ctx, found))  # type: ignore[arg-type]


def _scales_replaced(v: BlockScaled, codes: np.ndarray) -> BlockScaled:
    st = scale_type(v.dtype)
    return BlockScaled(v.dtype, v.values, mx.from_bits(codes.reshape(v.scales.shape), st))


def _codes(v: BlockScaled) -> np.ndarray:
    return mx.to_bits(v.scales, scale_type(v.dtype)).astype(np.int64)


@mutant(
    "block-scale-ignored",
    BLOCK_SCALED_OPS,
    "a block-scaled in_t / weight_t (A_t / B_t)",
    "the block-scaled operand's values are used without their scales (every scale read "
    "as 1.0), as a kernel that handles the value type but drops the scale tensor",
    "block-scaled convolution / MATMUL_T vectors whose scales are not all 1.0",
    breaks=_READ_RULE,
    composites=True,
)
def _block_scale_ignored(original: OpFunction, ctx: OpContext) -> Result:
    def unit(v: BlockScaled) -> BlockScaled:
        return _scales_replaced(v, np.full(v.scales.shape, mx.UE8M0_BIAS))

    return _with_block_operands(original, ctx, unit)


@mutant(
    "block-scale-first-of-channel",
    BLOCK_SCALED_OPS,
    "a block-scaled operand whose scales differ between the blocks of one output channel",
    "one scale per output channel: a convolution weight's element takes the scale of "
    "[oc, 0, ..., 0] (every tap and block of the channel), MATMUL_T's B and A and a "
    "convolution input the first block of their row",
    "block-scaled vectors with IC (C) of two blocks or more, or kernels larger than 1x1, "
    "whose scales differ along them",
    breaks=_READ_RULE + " (the scale index is the element's own, its last coordinate "
    "divided by the block size)",
    composites=True,
)
def _block_scale_first_of_channel(original: OpFunction, ctx: OpContext) -> Result:
    conv_weight = ctx.value("weight") if "weight" in ctx.operands.inputs else None

    def first(v: BlockScaled) -> BlockScaled:
        codes = _codes(v)
        if v is conv_weight:  # [OC, kernel..., IC / 32]: the channel's first scale
            lead = codes.reshape(codes.shape[0], -1)[:, :1]
            return _scales_replaced(
                v, np.broadcast_to(lead, (codes.shape[0], codes.size // codes.shape[0])).copy()
            )
        return _scales_replaced(v, np.broadcast_to(codes[..., :1], codes.shape).copy())

    return _with_block_operands(original, ctx, first)


@mutant(
    "block-nan-scale-as-one",
    BLOCK_SCALED_OPS,
    "a block-scaled operand holding the NaN scale (0xFF)",
    "the NaN scale is treated as 1.0 (exponent field 0xFF cleared to the bias), so its "
    "block reads as plain values instead of NaN",
    "block-scaled vectors with a NaN scale (0xFF) in a block that reaches an output",
    breaks="introduction, fp8ue8m0_t: 'The NaN encoding must be supported' (" + _READ_RULE + ")",
    composites=True,
)
def _block_nan_scale_as_one(original: OpFunction, ctx: OpContext) -> Result:
    def as_one(v: BlockScaled) -> BlockScaled:
        codes = _codes(v)
        return _scales_replaced(v, np.where(codes == mx.UE8M0_NAN, mx.UE8M0_BIAS, codes))

    return _with_block_operands(original, ctx, as_one)


@mutant(
    "block-scale-exact-product",
    BLOCK_SCALED_OPS,
    "a block-scaled operand with scale * value outside acc_t's range (fp32 / bf16 "
    "overflow, bf16 subnormals)",
    "scale * value is formed exactly (as a kernel that applies each block's scale to a "
    "wide block sum), never rounded to acc_t: 448 * 2**127 stays finite instead of "
    "overflowing fp32 to infinity",
    "block-scaled vectors with the scale 2**127 (or 2**-127 with a bf16 accumulator) on "
    "values whose product leaves acc_t, in outputs that stay finite or cancel",
    breaks=_READ_RULE + ": the product is rounded (and overflows) in acc_t",
    composites=True,
)
def _block_scale_exact_product(original: OpFunction, ctx: OpContext) -> Result:
    # fp64 element values in the context: the operator takes them as read.
    return _with_block_operands(original, ctx, element_values)

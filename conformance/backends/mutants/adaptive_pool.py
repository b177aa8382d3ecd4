"""Mutants of TOSA 1.1's AVG_POOL2D_ADAPTIVE and MAX_POOL2D_ADAPTIVE
(reference/ops/adaptive_pool.py)."""

from __future__ import annotations

import math

import numpy as np

from conformance.backends.mutants import Result, mutant
from conformance.dtypes import I32_MAX, I32_MIN
from reference.context import OpContext
from reference.ops import tensor_pool_fft
from reference.registry import OpFunction


def framework_windows(size: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    """The frameworks' adaptive pooling windows along one axis (PyTorch's
    AdaptiveAvgPool2d / AdaptiveMaxPool2d, ONNX-style global pooling): output ``o``
    covers ``floor(o * size / out)`` up to ``ceil((o + 1) * size / out)``, whatever the
    kernel, stride and pad."""
    o = np.arange(out, dtype=np.int64)
    return (o * size) // out, -((-(o + 1) * size) // out)


def _windows_agree(ctx: OpContext) -> bool:
    """Whether the framework windows are TOSA's: no padding and stride = kernel, with
    each axis exactly OH (OW) kernels long."""
    w = tensor_pool_fft.pool_window(ctx)
    _, ih, iw, _ = ctx.input_tensor("input").shape
    _, oh, ow, _ = ctx.out_shape()
    pads = (w.pad_top, w.pad_bottom, w.pad_left, w.pad_right)
    strides_are_kernels = (w.stride_y, w.stride_x) == (w.kernel_y, w.kernel_x)
    return not any(pads) and strides_are_kernels and ih == oh * w.kernel_y and iw == ow * w.kernel_x


def _reduce_windows(x: np.ndarray, axis: int, out: int, fn: np.ufunc) -> np.ndarray:
    """``fn`` reduced over each framework window of ``axis`` (1: y, 2: x)."""
    starts, ends = framework_windows(x.shape[axis], out)
    windows = zip(starts.tolist(), ends.tolist(), strict=True)
    parts = [fn.reduce(np.take(x, range(s, e), axis=axis), axis=axis) for s, e in windows]
    return np.stack(parts, axis=axis)


def _framework_max(ctx: OpContext, x: np.ndarray, oh: int, ow: int) -> np.ndarray:
    ignore = ctx.dtype("in_out_t").is_float and str(ctx.attr("nan_mode")) == "IGNORE"
    wide = x.astype(np.int64) if x.dtype.kind in "iu" else x.astype(np.float64)
    fn = np.fmax if ignore else np.maximum  # fmax keeps a number against NaN
    out = _reduce_windows(_reduce_windows(wide, 2, ow, fn), 1, oh, fn)
    return out.astype(x.dtype) if x.dtype.kind in "iu" else out


def _framework_avg(ctx: OpContext, x: np.ndarray, oh: int, ow: int) -> np.ndarray:
    _, ih, iw, _ = x.shape
    ys, ye = framework_windows(ih, oh)
    xs, xe = framework_windows(iw, ow)
    count = np.outer(ye - ys, xe - xs)[None, :, :, None]
    in_out = ctx.dtype("in_out_t")
    if in_out.is_float:
        with np.errstate(invalid="ignore", over="ignore"):
            sums = _reduce_windows(
                _reduce_windows(x.astype(np.float64), 2, ow, np.add), 1, oh, np.add
            )
            return sums / count
    zp_in, zp_out = int(ctx.attr("input_zp")), int(ctx.attr("output_zp"))
    sums = _reduce_windows(
        _reduce_windows(x.astype(np.int64) - zp_in, 2, ow, np.add), 1, oh, np.add
    )
    # reciprocal_scale(count), as AVG_POOL2D.tosac scales the sum: k is the bit length
    # of count - 1 (frexp's exponent, exact below 2**53); then the reference's
    # apply_scale_32.
    k = np.frexp((count - 1).astype(np.float64))[1].astype(np.int64)
    multiplier = np.left_shift(np.int64((1 << 30) + 1), k) // count
    shift = np.broadcast_to(30 + k, sums.shape)
    multiplier = np.broadcast_to(multiplier, sums.shape)
    acc = tensor_pool_fft.avg_pool_apply_scale_32(ctx, sums, multiplier, shift) + zp_out
    acc = np.clip(acc, I32_MIN, I32_MAX)
    return np.clip(acc, in_out.int_range.min, in_out.int_range.max).astype(in_out.storage)


@mutant(
    "adaptive-pool-framework-windows",
    ["AVG_POOL2D_ADAPTIVE", "MAX_POOL2D_ADAPTIVE"],
    "kernel, stride or pad other than IH / OH x IW / OW non-overlapping windows",
    "the _ADAPTIVE operators are taken for the frameworks' adaptive pooling "
    "(PyTorch AdaptiveAvgPool2d / AdaptiveMaxPool2d): the kernel, stride and pad inputs "
    "are ignored and output oy pools rows floor(oy * IH / OH) to ceil((oy + 1) * IH / OH), "
    "the same along x",
    "_ADAPTIVE vectors whose windows are not IH / OH x IW / OW tiles: strides other than "
    "the kernel, padding, or an input longer than OH kernels",
    breaks="AVG_POOL2D_ADAPTIVE / MAX_POOL2D_ADAPTIVE (tensor_ops) use AVG_POOL2D.tosac / "
    "MAX_POOL2D.tosac: iy = oy * stride_y - pad_top, taps iy + ky for 0 <= ky < kernel_y",
)
def _framework_windows(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its ERROR_IFs (window rules, zero points) and REQUIREs
    if _windows_agree(ctx) or math.prod(ctx.out_shape()) == 0:
        return result
    x = np.asarray(ctx.arg("input"))
    _, oh, ow, _ = ctx.out_shape()
    if ctx.name == "MAX_POOL2D_ADAPTIVE":
        return {"output": _framework_max(ctx, x, oh, ow)}
    return {"output": _framework_avg(ctx, x, oh, ow)}

"""Where the convolutions' weights may hold infinities and NaN.

Two adjustments of the float weights a recipe drew, neither of which draws anything:

* :func:`zero_weight_for_specials`: output channel 0 meets every input channel that
  holds an infinity or NaN through a zero weight, so that 0 * inf = NaN is formed.
* :func:`finite_where_skipped`: in revisions where a backend may multiply a weight by
  the 0 of a tap that reads no input (TOSA 1.0's tosa_extra_multiplies: padding, and
  TRANSPOSE_CONV2D's taps between strided inputs), an infinite or NaN weight at a
  kernel offset that some output takes such a tap at would give NaN there or not, as
  the backend chooses; those weights become 0, so every vector has one right answer.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from strategies.recipes.conv_geometry import Axis


def zero_weight_for_specials(
    out: dict[str, np.ndarray], data: str, weight: str, channel_axis: int = 0
) -> None:
    """Where the weight is [OC, ..., IC] against data [..., IC] (FULLY_CONNECTED,
    CONV2D, CONV3D; MATMUL_T's B [D, W, C] with ``channel_axis`` 1, its columns):
    output channel 0 takes every input channel that holds an infinity or NaN through a
    zero weight, so 0 * inf = NaN is formed; a kernel that skips zero weights
    (sparsity) returns a number there."""
    x = out[data]
    w = np.moveaxis(out[weight], channel_axis, 0)
    if w.ndim < 2 or w.shape[0] < 2 or not x.size or x.shape[-1] != w.shape[-1]:
        return
    with np.errstate(invalid="ignore"):
        special = ~np.isfinite(x.astype(np.float64).reshape(-1, x.shape[-1])).all(axis=0)
    if special.any():
        w = w.copy()
        w[0][..., special] = 0
        out[weight] = np.ascontiguousarray(np.moveaxis(w, 0, channel_axis))


def skipped_taps(a: Axis, transpose: bool) -> np.ndarray:
    """Per kernel offset along one axis: does some output take a tap there that reads
    no input (outside the input; for a transposed convolution also between strides)."""
    o = np.arange(a.size_out)[:, None]
    k = np.arange(a.kernel)[None, :]
    if transpose:
        t = o - a.pad_before - k
        reads = (t % a.stride == 0) & (t >= 0) & (t < a.size_in * a.stride)
    else:
        c = o * a.stride - a.pad_before + k * a.dilation
        reads = (c >= 0) & (c < a.size_in)
    return np.asarray(~reads.all(axis=0))


def finite_where_skipped(
    out: dict[str, np.ndarray], op: str, axes: Sequence[Axis], weight: str
) -> None:
    """Zero the non-finite weights at kernel offsets where some output skips the tap
    (the tap of (ky, kx) is skipped where either axis skips it)."""
    w = out[weight]
    if w.dtype.kind != "f" or not w.size:
        return
    skipped = np.zeros((), bool)
    for a in axes:
        skipped = np.logical_or.outer(skipped, skipped_taps(a, op == "TRANSPOSE_CONV2D"))
    # Weight layouts: DEPTHWISE_CONV2D [KH, KW, C, M]; the others [OC, kernel..., IC].
    mask = skipped[..., None, None] if op == "DEPTHWISE_CONV2D" else skipped[None, ..., None]
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(w.astype(np.float64)) & mask
    if bad.any():
        out[weight] = np.where(bad, np.zeros((), w.dtype), w)

"""Mutants of the image operators (reference/ops/image.py): RESIZE."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from conformance.backends.mutants import (
    Result,
    mutant,
)
from reference.context import OpContext
from reference.ops import image
from reference.registry import OpFunction


@mutant(
    "resize-half-pixel-added",
    ("RESIZE",),
    "scale_n != scale_d (both modes)",
    "a half-pixel centre offset is applied on top of the offset input (counted twice)",
    "RESIZE vectors that change the size",
    patch=(image, "resize_axis"),
)
def _half_pixel(original: Callable[..., Any]) -> Callable[..., Any]:
    def axis(out_size: int, in_size: int, n: int, d: int, offset: int) -> Any:
        # half-pixel centres: n * in = o * d + (d - n) / 2, on top of the graph's offset
        pos = np.arange(out_size, dtype=np.int64) * d + offset + (d - n) // 2
        i = pos // n
        r = pos - i * n
        return np.clip(i, 0, in_size - 1), np.clip(i + 1, 0, in_size - 1), r

    return axis


@mutant(
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
    iy0, iy1, ry = image.resize_axis(oh, ih, y_n, y_d, off_y)
    ix0, ix1, rx = image.resize_axis(ow, iw, x_n, x_d, off_x)
    rows = np.where(2 * ry > y_n, iy1, iy0)
    cols = np.where(2 * rx > x_n, ix1, ix0)
    return {"output": x[:, rows][:, :, cols]}


@mutant(
    "resize-negative-offset-clamped",
    ("RESIZE",),
    "offset_y < 0 or offset_x < 0",
    "a negative offset is clamped to 0 in the sampling position (kept in the output "
    "size), as if offsets were unsigned",
    "RESIZE vectors with a negative offset (e.g. half-pixel downscaling)",
    breaks="RESIZE.tosac: y = oy * scale_y_d + offset_y, where offset_y >= -scale_y_n is valid",
    patch=(image, "resize_axis"),
)
def _offset_clamped(original: Callable[..., Any]) -> Callable[..., Any]:
    def axis(out_size: int, in_size: int, n: int, d: int, offset: int) -> Any:
        return original(out_size, in_size, n, d, max(offset, 0))

    return axis


@mutant(
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

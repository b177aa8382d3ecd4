"""Mutants of the image operators (reference/ops/image.py): RESIZE."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from conformance.backends.mutants import (
    Result,
    mutant,
)
from conformance.dtypes import I48
from reference import arithmetic as ar
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


@mutant(
    "resize-i48-accumulated-in-i32",
    ("RESIZE",),
    "BILINEAR i16 -> i48 with |value| * scale_y_n * scale_x_n >= 2**31",
    "the i16 bilinear sum is accumulated in a 32-bit register: results beyond int32 wrap",
    "i16 BILINEAR RESIZE vectors with large inputs and large scale_n (e.g. 32767 with "
    "scale_y_n = scale_x_n = 512)",
    breaks="RESIZE.tosac: acc = v00 * (unit_y - dy) * (unit_x - dx) + ... in out_t (i48_t "
    "for i16 input)",
)
def _resize_i48_in_i32(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if ctx.dtype("out_t") is not I48:
        return result
    return {"output": ar.wrap(np.asarray(result["output"]), 32)}


@mutant(
    "resize-bilinear-lerp",
    ("RESIZE",),
    "floating-point BILINEAR with an infinite input among a sample's four neighbours",
    "bilinear interpolation is computed as two lerps, a + (b - a) * t (the usual GPU / "
    "MLIR lowering), instead of the weighted sum: inf - inf and inf * 0 turn samples "
    "next to an infinity into NaN (or a NaN into inf)",
    "float BILINEAR RESIZE vectors with infinities in the input (e.g. an output sampling "
    "exactly at an infinite input, or between two equal infinities)",
    breaks="RESIZE.tosac: acc = v00 * (unit_y - dy) * (unit_x - dx) + v01 * (unit_y - dy) "
    "* dx + v10 * dy * (unit_x - dx) + v11 * dy * dx",
)
def _resize_lerp(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its ERROR_IFs
    if ctx.attr("mode") != "BILINEAR" or not ctx.dtype("resize_t").is_float:
        return result
    x = np.asarray(ctx.arg("input")).astype(np.float64)
    if np.isfinite(x).all():
        return result  # finite inputs: the two forms differ by fp64 rounding only
    _, ih, iw, _ = x.shape
    _, oh, ow, _ = ctx.out_shape()
    y_n, y_d, x_n, x_d = (int(v) for v in np.asarray(ctx.arg("scale")).reshape(-1))
    off_y, off_x = (int(v) for v in np.asarray(ctx.arg("offset")).reshape(-1))
    iy0, iy1, ry = image.resize_axis(oh, ih, y_n, y_d, off_y)
    ix0, ix1, rx = image.resize_axis(ow, iw, x_n, x_d, off_x)
    dy = (ry / y_n)[None, :, None, None]
    dx = (rx / x_n)[None, None, :, None]
    v00, v01 = x[:, iy0][:, :, ix0], x[:, iy0][:, :, ix1]
    v10, v11 = x[:, iy1][:, :, ix0], x[:, iy1][:, :, ix1]
    with np.errstate(all="ignore"):
        top = v00 + (v01 - v00) * dx
        bottom = v10 + (v11 - v10) * dx
        lerp = top + (bottom - top) * dy
    near_inf = np.isinf(v00) | np.isinf(v01) | np.isinf(v10) | np.isinf(v11)
    return {"output": np.where(near_inf, lerp, np.asarray(result["output"]))}

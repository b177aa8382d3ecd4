"""RESIZE (tosa.xml group image).

The source position of an output element depends on its row only through ``oy`` and on
its column only through ``ox``, so the pseudocode's per-element index arithmetic is done
once per row and once per column (source indices, remainders); the output is then a
gather of the input at those rows and columns, weighted for BILINEAR.

Integer modes are exact: the weights are the remainders themselves, in units of
``scale_n`` (so the i8 -> i32 and i16 -> i48 results carry the factor
scale_y_n * scale_x_n), and every product fits int64 (|v| <= 2**15, weights <= 2**22).
Floating-point modes are computed in fp64, as the RESIZE row of the precision table
compares against the fp64 reference implementation.

The block-scaled modes (TOSA 1.1, ``in_t = out_t`` a ``bs32_*`` composite) are
NEAREST_NEIGHBOR only: each output element takes its source element's value and its
block's scale (tensor_read_value_scale / tensor_write_value_scale), bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance.block_tensor import BlockScaled, TensorValue, is_block_scaled
from reference.arguments import ATTRIBUTES_CLAUSE, INPUTS_CLAUSE, TYPES_CLAUSE
from reference.context import OpContext
from reference.registry import implements, seam

Result = dict[str, Any]  # a composite output is a BlockScaled pair (as data_layout)

# The largest image dimension: positions (< 16384 * 2**15) stay inside int32.
MAX_IMAGE_SIZE = 16384

SIZE_CLAUSE = "max(OH,OW,IH,IW) >= 16384"
SCALE_POSITIVE_CLAUSE = "scale_y_n <= 0 || scale_y_d <= 0 || scale_x_n <= 0 || scale_x_d <= 0"
SCALE_N_CLAUSE = "scale_y_n > (1 << 11) || scale_x_n > (1 << 11)"
SCALE_D_CLAUSE = "scale_y_d >= 16 * scale_y_n || scale_x_d >= 16 * scale_x_n"
OFFSET_Y_CLAUSE = "offset_y < -scale_y_n || offset_y >= 16 * scale_y_n"
OFFSET_X_CLAUSE = "offset_x < -scale_x_n || offset_x >= 16 * scale_x_n"
BORDER_Y_CLAUSE = "border_y < -16 * scale_y_n || border_y >= scale_y_n"
BORDER_X_CLAUSE = "border_x < -16 * scale_x_n || border_x >= scale_x_n"
IDIV_CHECK_CLAUSE = "idiv_check: input1 % input2 != 0"
OH_CLAUSE = "OH != idiv_check((IH - 1) * scale_y_n - offset_y + border_y, scale_y_d) + 1"
OW_CLAUSE = "OW != idiv_check((IW - 1) * scale_x_n - offset_x + border_x, scale_x_d) + 1"
# TOSA 1.1, the block-scaled modes.  C is the input's and the output's (the argument
# check makes them agree) and the modes have in_t = out_t, so the out_t rule can only
# hold where the in_t rule, checked first, already has: no vector reaches it.
BLOCK_IN_CLAUSE = "is_block_scale<in_t>() && C % get_innermost_block_size<in_t>() != 0"
BLOCK_OUT_CLAUSE = "is_block_scale<out_t>() && C % get_innermost_block_size<out_t>() != 0"
BLOCK_MODE_CLAUSE = "is_block_scale<in_t>() && mode != NEAREST_NEIGHBOR"

# resize_mode_t values as tosa.xml names them (the pseudocode's NEAREST is
# NEAREST_NEIGHBOR).
MODES = ("NEAREST_NEIGHBOR", "BILINEAR")

# shape_t inputs and their lengths ([4], [2], [2]).
_SHAPE_INPUTS = {"scale": 4, "offset": 2, "border": 2}


def _check_integer_mode(ctx: OpContext, mode: str) -> None:
    """The integer rows of the supported types table name the resize mode they are for
    ("signed 8, bilinear": i8 -> i32; "signed 8, nearest": i8 -> i8).  The engine binds
    a row by its types alone, so BILINEAR with i8 -> i8 would bind the nearest row and
    write a sum scaled by up to 2**22 into i8: a type combination the table does not
    list for that mode."""
    if is_block_scaled(ctx.dtype("in_t")):
        # Their rows say "nearest neighbor" too, but the pseudocode states their mode
        # rule itself (BLOCK_MODE_CLAUSE, after the shape rules).
        return
    row = ctx.mode.mode if ctx.mode is not None else ""
    want = "bilinear" if mode == "BILINEAR" else "nearest"
    kinds = [k for k in ("bilinear", "nearest") if k in row.lower()]
    ctx.error_if(
        bool(kinds) and kinds[0] != want,
        TYPES_CLAUSE,
        f"mode {mode} with {ctx.dtype('in_t')} -> {ctx.dtype('out_t')}, the types of row '{row}'",
    )


def _shape_values(ctx: OpContext) -> dict[str, list[int]]:
    """The scale, offset and border values.  The engine's argument check leaves shape_t
    lengths to the operator: one of another length does not fit its declaration."""
    values = {}
    for name, length in _SHAPE_INPUTS.items():
        v = np.asarray(ctx.arg(name)).reshape(-1)
        ctx.error_if(
            ctx.input_tensor(name).shape != (length,) or v.size != length,
            INPUTS_CLAUSE,
            f"{name} must be a shape of {length} values, got {v.tolist()}",
        )
        values[name] = [int(e) for e in v]
    return values


def _output_size(ctx: OpContext, in_size: int, n: int, d: int, offset: int, border: int) -> int:
    """idiv_check((in - 1) * n - offset + border, d) + 1, with idiv_check's own
    ERROR_IF when the division is inexact (C's % is 0 exactly when Python's is)."""
    numerator = (in_size - 1) * n - offset + border
    ctx.error_if(
        numerator % d != 0,
        IDIV_CHECK_CLAUSE,
        f"({in_size} - 1) * {n} - {offset} + {border} = {numerator} is not a multiple of {d}",
    )
    return numerator // d + 1


def _check(ctx: OpContext, ih: int, iw: int, oh: int, ow: int, v: dict[str, list[int]]) -> None:
    """RESIZE's ERROR_IFs in pseudocode order."""
    y_n, y_d, x_n, x_d = v["scale"]
    off_y, off_x = v["offset"]
    bor_y, bor_x = v["border"]
    ctx.error_if(max(oh, ow, ih, iw) >= MAX_IMAGE_SIZE, SIZE_CLAUSE, f"{oh=} {ow=} {ih=} {iw=}")
    scale = f"scale={v['scale']}"
    ctx.error_if(y_n <= 0 or y_d <= 0 or x_n <= 0 or x_d <= 0, SCALE_POSITIVE_CLAUSE, scale)
    ctx.error_if(y_n > (1 << 11) or x_n > (1 << 11), SCALE_N_CLAUSE, scale)
    ctx.error_if(y_d >= 16 * y_n or x_d >= 16 * x_n, SCALE_D_CLAUSE, scale)
    ctx.error_if(off_y < -y_n or off_y >= 16 * y_n, OFFSET_Y_CLAUSE, f"offset_y={off_y}, {scale}")
    ctx.error_if(off_x < -x_n or off_x >= 16 * x_n, OFFSET_X_CLAUSE, f"offset_x={off_x}, {scale}")
    ctx.error_if(bor_y < -16 * y_n or bor_y >= y_n, BORDER_Y_CLAUSE, f"border_y={bor_y}, {scale}")
    ctx.error_if(bor_x < -16 * x_n or bor_x >= x_n, BORDER_X_CLAUSE, f"border_x={bor_x}, {scale}")
    want_h = _output_size(ctx, ih, y_n, y_d, off_y, bor_y)
    ctx.error_if(oh != want_h, OH_CLAUSE, f"OH={oh}, formula gives {want_h}")
    want_w = _output_size(ctx, iw, x_n, x_d, off_x, bor_x)
    ctx.error_if(ow != want_w, OW_CLAUSE, f"OW={ow}, formula gives {want_w}")


def _check_block_scaled(ctx: OpContext, channels: int, mode: str) -> None:
    """The block-scaled rules, after the shape rules as the pseudocode has them."""
    for var, clause in (("in_t", BLOCK_IN_CLAUSE), ("out_t", BLOCK_OUT_CLAUSE)):
        dt = ctx.dtype(var)
        if is_block_scaled(dt):
            ctx.error_if(
                channels % dt.block_size != 0,
                clause,
                f"C {channels}, {var} {dt} block size {dt.block_size}",
            )
    ctx.error_if(
        is_block_scaled(ctx.dtype("in_t")) and mode != "NEAREST_NEIGHBOR",
        BLOCK_MODE_CLAUSE,
        f"mode {mode} with {ctx.dtype('in_t')}",
    )


@seam
def resize_axis(out_size: int, in_size: int, n: int, d: int, offset: int) -> tuple[np.ndarray, ...]:
    """Per output row (or column): the two source indices and the remainder.

    pos = o * d + offset; i = idiv_floor(pos, n) (numpy's // floors, as idiv_floor
    does for n > 0); r = pos - i * n, so 0 <= r < n.  The ERROR_IFs keep
    -1 <= i <= in_size - 1, so the clamped indices are always inside the input.
    """
    pos = np.arange(out_size, dtype=np.int64) * d + offset
    i = pos // n
    r = pos - i * n
    i0 = np.maximum(i, 0)
    i1 = np.minimum(i + 1, in_size - 1)
    assert i0.max(initial=0) < in_size and i1.min(initial=0) >= 0
    return i0, i1, r


def _gather(x: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """input[n, rows[oy], cols[ox], c] for every (n, oy, ox, c)."""
    return x[:, rows][:, :, cols]


def _nearest(x: TensorValue, rows: np.ndarray, cols: np.ndarray) -> TensorValue:
    """The nearest-neighbour gather; for a composite, of its values and its scales.

    tensor_write_value_scale writes the scale of output element (n, oy, ox, c) into its
    block's slot (n, oy, ox, c / block_size), once per element, so a block ends with
    the scale its last element wrote.  The source (n, iy, ix) depends on (oy, ox)
    alone and c is kept, so the block's elements all come from the same block
    (n, iy, ix, c / block_size) of the input (C is whole blocks: the ERROR_IF) and
    write the same scale: the output's scales are the input's scales gathered at the
    same rows and columns.
    """
    if isinstance(x, BlockScaled):
        return BlockScaled(x.dtype, _gather(x.values, rows, cols), _gather(x.scales, rows, cols))
    return _gather(x, rows, cols)


@implements("RESIZE")
def resize(ctx: OpContext) -> Result:
    value = ctx.value("input")
    _, ih, iw, channels = ctx.input_tensor("input").shape
    _, oh, ow, _ = ctx.out_shape()
    mode = ctx.attr("mode")
    ctx.error_if(mode not in MODES, ATTRIBUTES_CLAUSE, f"mode={mode!r}, not one of {MODES}")
    _check_integer_mode(ctx, str(mode))
    values = _shape_values(ctx)
    _check(ctx, ih, iw, oh, ow, values)
    _check_block_scaled(ctx, channels, str(mode))
    y_n, y_d, x_n, x_d = values["scale"]
    iy0, iy1, ry = resize_axis(oh, ih, y_n, y_d, values["offset"][0])
    ix0, ix1, rx = resize_axis(ow, iw, x_n, x_d, values["offset"][1])
    is_float = ctx.dtype("resize_t").is_float

    if mode == "NEAREST_NEIGHBOR":
        # Float: dy >= 0.5 with dy = ry / scale_y_n.  In fp64 that is exactly
        # 2 * ry >= scale_y_n, the integer modes' test: a quotient below 0.5 is at
        # least 1 / (2 * scale_y_n) >= 2**-12 below it, far more than an fp64 ulp.
        rows = np.where(2 * ry >= y_n, iy1, iy0)
        cols = np.where(2 * rx >= x_n, ix1, ix0)
        return {"output": _nearest(value, rows, cols)}

    assert isinstance(value, np.ndarray)  # a composite is NEAREST_NEIGHBOR only (ERROR_IF)
    x = value

    if is_float:
        v = x.astype(np.float64)
        dy, dx = ry / y_n, rx / x_n
        unit_y = unit_x = 1.0
    else:
        v = x.astype(np.int64)  # make_signed: i8 / i16 values are read as signed
        dy, dx = ry, rx
        unit_y, unit_x = y_n, x_n
    # Weights along each axis, shaped to broadcast over [N, OH, OW, C].
    wy0 = (unit_y - dy)[None, :, None, None]
    wy1 = dy[None, :, None, None]
    wx0 = (unit_x - dx)[None, None, :, None]
    wx1 = dx[None, None, :, None]
    # The pseudocode's sum, term by term and in its order (for fp64 the order decides
    # NaN results: an infinite input times a zero weight is NaN in every term it is in).
    with np.errstate(invalid="ignore", over="ignore"):
        acc = _gather(v, iy0, ix0) * wy0 * wx0
        acc = acc + _gather(v, iy0, ix1) * wy0 * wx1
        acc = acc + _gather(v, iy1, ix0) * wy1 * wx0
        acc = acc + _gather(v, iy1, ix1) * wy1 * wx1
    return {"output": acc}

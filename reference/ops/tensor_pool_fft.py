"""Tensor operators without weights: ARGMAX, AVG_POOL2D, MAX_POOL2D, FFT2D, RFFT2D.

Pooling windows are reduced separably (first along x, then along y) on strided views
of the padded input, so the cost does not grow with kernel_y * kernel_x; max and the
integer sum are exact in any order, and the floating-point sum is the fp64 reference
that the dot-product rule compares against.  The FFTs use numpy's fp64 FFT, which
computes the pseudocode's sums (no normalisation in either direction) to fp64
rounding; planes holding a NaN or an infinity are summed term by term instead,
because there IEEE special values, not rounding, decide the result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from conformance import dtypes
from conformance.dtypes import I32_MAX, I32_MIN, DType
from reference import arithmetic as ar
from reference.arguments import TYPES_CLAUSE
from reference.context import OpContext
from reference.ops.data_nodes import to_type
from reference.ops.reduction import AXIS_CLAUSE
from reference.ops.tensor_conv import STRIDE_CLAUSE, zero_point_clause
from reference.registry import implements, seam

# ERROR_IF clauses as the pseudocode states them (recipes and breakers import them).
FFT_HEIGHT_CLAUSE = "!power_of_two(H)"
FFT_WIDTH_CLAUSE = "!power_of_two(W)"
POOL_OH_CLAUSE = "OH != idiv_check(IH + pad_top + pad_bottom - kernel_y, stride_y) + 1"
POOL_OW_CLAUSE = "OW != idiv_check(IW + pad_left + pad_right - kernel_x, stride_x) + 1"
ARGMAX_SHAPE_CLAUSE = "flatten(left_shape, right_shape) != shape"
ARGMAX_INDEX_CLAUSE = "i <= maximum<out_t>()"
INPUT_ZP_CLAUSE = "in_out_t != i8_t && input_zp != 0"
KERNEL_CLAUSE = "kernel_y < 1 || kernel_x < 1"
POOL_PAD_X_CLAUSE = "pad_right >= kernel_x || pad_left >= kernel_x"
PAD_NEGATIVE_CLAUSE = "pad_top < 0 || pad_bottom < 0 || pad_left < 0 || pad_right < 0"
POOL_PAD_Y_CLAUSE = "pad_top >= kernel_y || pad_bottom >= kernel_y"

Result = dict[str, np.ndarray | list[np.ndarray]]


# acc_type_t enumeration values and the element type each names.
ACC_TYPES: dict[str, DType] = {
    "INT32": dtypes.I32,
    "INT48": dtypes.I48,
    "FP16": dtypes.FP16,
    "FP32": dtypes.FP32,
}


# -- ARGMAX ----------------------------------------------------------------------------


def argmax_index(x: np.ndarray, axis: int) -> np.ndarray:
    """ARGMAX's index along ``axis``, as the operator's prose states it (tensor_ops,
    ARGMAX): "If multiple locations have equal values, returns the first match. NaN
    values always compare as greater than non-NaN values. If an entire axis consists
    of NaN, the last location must be returned."

    So an axis without NaN gives its first maximum (-0.0 and +0.0 are equal: the first
    zero wins); an axis with some NaN gives a NaN's location; an all-NaN axis its last.
    The prose does not say which NaN of an axis with several NaN and some numbers; the
    reference takes the first (the first-match rule, and Arm's reference model), and
    vectors avoid that case (docs/compliance.md, Readings: argmax-nan).

    The pseudocode's loop read literally disagrees wherever a number follows a NaN:
    apply_max_s(value, NaN) is NaN and NaN != NaN, so every element after a NaN
    replaces the running maximum and [NaN, 1, 2] gives 2 where the prose gives 0.
    """
    if x.dtype.kind in "iu":
        return np.argmax(x, axis=axis)
    v = np.moveaxis(x.astype(np.float64), axis, -1)
    length = v.shape[-1]
    nan = np.isnan(v)
    # np.argmax returns the first of equal maxima, and -0.0 == +0.0 for it; the start
    # value minimum_s<in_t>() (-inf, or -448 for fp8e4m3) is below or equal to every
    # value, so it only means "index 0 unless something larger follows".
    first_max = np.argmax(np.where(nan, -np.inf, v), axis=-1)
    first_nan = np.argmax(nan, axis=-1)
    return np.where(nan.all(axis=-1), length - 1, np.where(nan.any(axis=-1), first_nan, first_max))


def declares_nan_mode(ctx: OpContext) -> bool:
    """Whether the operator has a ``nan_mode`` attribute (TOSA 1.0 on): then NaN is
    handled as the pseudocode's apply_max_s(a, b, nan_mode) says, else as the
    revision's prose (:func:`argmax_index`) and the two-argument apply_max_s."""
    return any(a.name == "nan_mode" for a in ctx.op_spec.attributes)


def nan_mode_of(ctx: OpContext) -> str:
    mode = str(ctx.attr("nan_mode"))
    if mode not in ("PROPAGATE", "IGNORE"):  # the engine checks enumeration values first
        raise AssertionError(f"{ctx.name} nan_mode {mode!r}")
    return mode


def argmax_index_nan_mode(x: np.ndarray, axis: int, nan_mode: str) -> np.ndarray:
    """ARGMAX's index along ``axis`` as its loop with apply_max_s(value, max, nan_mode)
    computes it, for operators that declare ``nan_mode``.

    The running maximum is replaced only when the helper's result differs from it and
    not both are NaN.  PROPAGATE starts from minimum_s<in_t>(): the first NaN becomes
    the maximum and nothing replaces it, so an axis holding NaN gives its first NaN
    (an all-NaN axis 0); without NaN, the first maximum (a tie keeps the earlier one;
    -0.0 == +0.0).  IGNORE starts from NaN: the first non-NaN value replaces it and NaN
    never replaces a number, so the first maximum of the non-NaN values; an all-NaN
    axis keeps max_index 0.  Integers have no NaN: the first maximum.
    """
    if x.dtype.kind in "iu":
        return np.argmax(x, axis=axis)
    v = np.moveaxis(x.astype(np.float64), axis, -1)
    nan = np.isnan(v)
    some = nan.any(axis=-1)
    with np.errstate(invalid="ignore"):
        top = np.max(np.where(nan, -np.inf, v), axis=-1, keepdims=True)
    # The first element equal to the largest number: a real -inf ties with the fill.
    first_max = np.argmax(~nan & (v == top), axis=-1)
    if nan_mode == "PROPAGATE":
        return np.where(some, np.argmax(nan, axis=-1), first_max)
    return np.where(nan.all(axis=-1), 0, first_max)


@implements("ARGMAX")
def argmax(ctx: OpContext) -> Result:
    x = ctx.arg("input")
    shape1 = ctx.input_tensor("input").shape
    shape = ctx.out_shape()
    axis = int(ctx.attr("axis"))
    ctx.error_if(
        axis < 0 or axis >= len(shape1),
        AXIS_CLAUSE,
        f"axis {axis}, input rank {len(shape1)}",
    )
    want = shape1[:axis] + shape1[axis + 1 :]
    ctx.error_if(
        tuple(shape) != want,
        ARGMAX_SHAPE_CLAUSE,
        f"output shape {list(shape)}, input {list(shape1)} without axis {axis} is {list(want)}",
    )
    if declares_nan_mode(ctx):
        index = argmax_index_nan_mode(x, axis, nan_mode_of(ctx))
    else:
        index = argmax_index(x, axis)
    # out_t is i32_t, or i64_t (EXT-INT64, TOSA 1.1).  The index only grows as the scan
    # goes, so the REQUIRE at each update holds exactly when the final index fits.
    out_t = ctx.dtype("out_t")
    top = int(np.max(index, initial=0))
    ctx.require(
        top <= out_t.int_range.max,
        ARGMAX_INDEX_CLAUSE,
        f"index {top} does not fit {out_t}",
    )
    return {"output": index.astype(out_t.storage)}


# -- pooling geometry --------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    kernel_y: int
    kernel_x: int
    stride_y: int
    stride_x: int
    pad_top: int
    pad_bottom: int
    pad_left: int
    pad_right: int


def _c_div_rem(a: int, b: int) -> tuple[int, int]:
    """C's int32 ``/`` and ``%``: the quotient truncates toward zero."""
    q = abs(a) // abs(b)
    q = q if (a >= 0) == (b >= 0) else -q
    return q, a - q * b


def _idiv_check(ctx: OpContext, a: int, b: int, text: str) -> int:
    q, r = _c_div_rem(a, b)
    ctx.error_if(r != 0, f"input1 % input2 != 0 (idiv_check({text}))", f"{a} % {b} = {r}")
    return q


def pool_window(ctx: OpContext) -> Window:
    """kernel/stride/pad after the ERROR_IFs both pooling operators state, in order."""
    ky, kx = (int(v) for v in ctx.attr("kernel"))
    sy, sx = (int(v) for v in ctx.attr("stride"))
    pt, pb, pl, pr = (int(v) for v in ctx.attr("pad"))
    ctx.error_if(ky < 1 or kx < 1, KERNEL_CLAUSE, f"kernel [{ky}, {kx}]")
    ctx.error_if(sy < 1 or sx < 1, STRIDE_CLAUSE, f"stride [{sy}, {sx}]")
    ctx.error_if(
        min(pt, pb, pl, pr) < 0,
        PAD_NEGATIVE_CLAUSE,
        f"pad [{pt}, {pb}, {pl}, {pr}]",
    )
    ctx.error_if(
        pr >= kx or pl >= kx,
        POOL_PAD_X_CLAUSE,
        f"pad_left {pl}, pad_right {pr}, kernel_x {kx}",
    )
    ctx.error_if(
        pt >= ky or pb >= ky,
        POOL_PAD_Y_CLAUSE,
        f"pad_top {pt}, pad_bottom {pb}, kernel_y {ky}",
    )
    _, ih, iw, _ = ctx.input_tensor("input").shape
    _, oh, ow, _ = ctx.out_shape()
    want_h = _idiv_check(
        ctx, ih + pt + pb - ky, sy, "IH + pad_top + pad_bottom - kernel_y, stride_y"
    )
    ctx.error_if(
        oh != want_h + 1,
        POOL_OH_CLAUSE,
        f"OH {oh}, expected {want_h + 1}",
    )
    want_w = _idiv_check(
        ctx, iw + pl + pr - kx, sx, "IW + pad_left + pad_right - kernel_x, stride_x"
    )
    ctx.error_if(
        ow != want_w + 1,
        POOL_OW_CLAUSE,
        f"OW {ow}, expected {want_w + 1}",
    )
    return Window(ky, kx, sy, sx, pt, pb, pl, pr)


@seam
def pad_input(x: np.ndarray, w: Window, fill: float | int) -> np.ndarray:
    """The [N, H, W, C] input with the window's padding on H and W, filled with ``fill``
    (AVG_POOL2D pads with zeros that it does not count; MAX_POOL2D with the lowest value)."""
    pads = ((0, 0), (w.pad_top, w.pad_bottom), (w.pad_left, w.pad_right), (0, 0))
    return np.pad(x, pads, constant_values=fill)


def _windows_x(x: np.ndarray, w: Window) -> np.ndarray:
    """[N, H, OW, C, kernel_x] view: the x-extent of every output column."""
    return sliding_window_view(x, w.kernel_x, axis=2)[:, :, :: w.stride_x]


def _windows_y(x: np.ndarray, w: Window) -> np.ndarray:
    """[N, OH, OW, C, kernel_y] view: the y-extent of every output row."""
    return sliding_window_view(x, w.kernel_y, axis=1)[:, :: w.stride_y]


def _window_sum(padded: np.ndarray, w: Window) -> np.ndarray:
    # inf + -inf gives NaN whatever the order; only fp64 rounding depends on it.
    with np.errstate(invalid="ignore", over="ignore"):
        rows = np.sum(_windows_x(padded, w), axis=-1)
        return np.sum(_windows_y(rows, w), axis=-1)


@seam
def valid_count(size: int, out: int, kernel: int, stride: int, pad: int) -> np.ndarray:
    """Per output position along one axis, how many window taps fall inside the input."""
    start = np.arange(out, dtype=np.int64) * stride - pad
    return np.minimum(start + kernel, size) - np.maximum(start, 0)


def window_taps(ctx: OpContext, w: Window) -> np.ndarray:
    """AVG_POOL2D's divisor, [1, OH, OW, 1]: the window's taps inside the input
    (padding is neither read nor counted)."""
    _, ih, iw, _ = ctx.input_tensor("input").shape
    _, oh, ow, _ = ctx.out_shape()
    return np.outer(
        valid_count(ih, oh, w.kernel_y, w.stride_y, w.pad_top),
        valid_count(iw, ow, w.kernel_x, w.stride_x, w.pad_left),
    )[None, :, :, None]


def _empty_output(ctx: OpContext, x: np.ndarray) -> np.ndarray:
    """OH or OW of 0 passes the ERROR_IFs when IH + pads - kernel = -stride (C's
    division gives -1, plus 1): a valid graph with nothing to compute."""
    return np.zeros(ctx.out_shape(), dtype=np.float64 if x.dtype.kind == "f" else x.dtype)


# -- MAX_POOL2D --------------------------------------------------------------------------


def _max_first_zero(v: np.ndarray) -> np.ndarray:
    """max over the last axis as apply_max_s(acc, value) folds it: NaN if any element
    is NaN; on a tie the accumulator stays, so of equal zeros the first one's sign wins."""
    m = np.max(v, axis=-1)
    if v.dtype.kind == "f":
        zero = m == 0
        if np.any(zero):
            first = np.argmax(v == 0, axis=-1)[..., None]
            negative = np.signbit(np.take_along_axis(v, first, axis=-1)[..., 0])
            m = np.where(zero, np.where(negative, -0.0, 0.0), m)
    return m


def window_any(ctx: OpContext, mask: np.ndarray) -> np.ndarray:
    """Per MAX_POOL2D output element, whether ``mask`` (shaped like the input) holds
    at any input position of its window; padding is no position."""
    w = pool_window(ctx)
    if 0 in ctx.out_shape():
        return np.zeros(ctx.out_shape(), dtype=bool)
    padded = pad_input(np.asarray(mask, dtype=np.int8), w, 0)
    rows = np.max(_windows_x(padded, w), axis=-1)
    return np.asarray(np.max(_windows_y(rows, w), axis=-1) > 0)


@implements("MAX_POOL2D")
def max_pool2d(ctx: OpContext) -> Result:
    w = pool_window(ctx)
    x = ctx.arg("input")
    if 0 in ctx.out_shape():
        return {"output": _empty_output(ctx, x)}
    # Padding is never read (the loop skips taps outside the input).  Filling it with
    # the lowest value of the type is the same thing: pad < kernel leaves at least one
    # real tap in every window, and no real value is below the fill.  Row maxima keep
    # the first zero's sign, and taking the first row whose maximum is that zero then
    # gives the first zero of the whole window in the loop's (ky, kx) order.
    if x.dtype.kind in "iu":
        wide = x.astype(np.int64)
        fill: float | int = int(np.iinfo(x.dtype).min)
    else:
        wide = x.astype(np.float64)
        fill = -np.inf
    # The mode's type decides: bf16 and fp8 arrays (ml_dtypes) are no numpy kind "f".
    floats = ctx.dtype("in_out_t").is_float
    ignore = floats and declares_nan_mode(ctx) and nan_mode_of(ctx) == "IGNORE"
    if ignore:
        # apply_max_s(acc, value, IGNORE) keeps the number when one side is NaN and the
        # accumulator starts as NaN: the maximum of the window's numbers (NaN taken as
        # the fill), and NaN where the window holds nothing but NaN.
        wide = np.where(np.isnan(wide), fill, wide)
    padded = pad_input(wide, w, fill)
    rows = _max_first_zero(_windows_x(padded, w))
    out = _max_first_zero(_windows_y(rows, w))
    if ignore:
        out = np.where(window_any(ctx, ~np.isnan(x)), out, np.nan)
    return {"output": out.astype(x.dtype) if x.dtype.kind in "iu" else out}


# -- AVG_POOL2D --------------------------------------------------------------------------


def avg_pool_acc_type(ctx: OpContext) -> DType:
    """acc_t as the acc_type attribute names it.  The mode table pairs each in_out_t
    with the accumulators it allows (fp16 with fp16 or fp32); an attribute naming
    another is a type combination the operator does not support."""
    name = str(ctx.attr("acc_type"))
    acc = ACC_TYPES.get(name)
    in_out = ctx.dtype("in_out_t")
    allowed = [m.dtype("acc_t") for m in ctx.op_spec.modes if m.dtype("in_out_t") is in_out]
    ctx.error_if(
        acc is None or acc not in allowed,
        TYPES_CLAUSE,
        f"acc_type {name} with in_out_t {in_out}; supported: " + ", ".join(a.name for a in allowed),
    )
    assert acc is not None
    return acc


def _require_running_sums(ctx: OpContext, padded: np.ndarray, w: Window) -> None:
    """apply_add_s<int32> REQUIREs every running sum of the window loop to fit.

    No running sum exceeds the window's sum of magnitudes, so the loop order only
    matters when that sum does not fit; then the sums are formed in the loop's order
    (row by row, padding adding nothing), one kernel row at a time.
    """
    magnitude = _window_sum(np.abs(padded), w)
    if int(np.max(magnitude, initial=0)) <= I32_MAX:
        return
    done = np.zeros(magnitude.shape, dtype=np.int64)  # sum of the finished kernel rows
    for ky in range(w.kernel_y):
        stop = ky + w.stride_y * (magnitude.shape[1] - 1) + 1
        row = padded[:, ky : stop : w.stride_y]  # [N, OH, IW + pads, C]
        partial = np.cumsum(_windows_x(row, w), axis=-1) + done[..., None]
        ctx.require(
            (np.min(partial, initial=0) >= I32_MIN) and (np.max(partial, initial=0) <= I32_MAX),
            ar.ACC_RANGE_CLAUSE,
            f"a running window sum leaves int32 in kernel row {ky}",
        )
        done = partial[..., -1]


def _reciprocal_scale(count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """reciprocal_scale(count) for every element: (multiplier, shift)."""
    # k = 32 - count_leading_zeros(count - 1) is the bit length of count - 1; frexp's
    # exponent is exactly that for integers below 2**53.
    k = np.frexp((count - 1).astype(np.float64))[1].astype(np.int64)
    numerator = ((1 << 30) + 1) << k
    return numerator // count, 30 + k


@seam
def avg_pool_apply_scale_32(
    ctx: OpContext, value: np.ndarray, multiplier: np.ndarray, shift: np.ndarray
) -> np.ndarray:
    """apply_scale_32(value, multiplier, shift, false), element-wise in int64.

    multiplier < 2**31 and |value| <= 2**31 keep value * multiplier + round below 2**63.
    The multiplier and shift REQUIREs hold for every reciprocal_scale result (shift is
    30 plus at most 26 bits of count), but are checked as the helper states them.
    """
    ctx.require(multiplier >= 0, "multiplier >= 0 (apply_scale_32)")
    ctx.require((shift >= 2) & (shift <= 62), "2 <= shift && shift <= 62 (apply_scale_32)")
    half = np.left_shift(np.int64(1), shift - 1)
    ctx.require(
        (value >= -half) & (value < half),
        "value >= (-1 << (shift - 1)) && value < (1 << (shift - 1)) (apply_scale_32)",
    )
    return (value * multiplier + half) >> shift


@implements("AVG_POOL2D")
def avg_pool2d(ctx: OpContext) -> Result:
    acc_t = avg_pool_acc_type(ctx)
    in_out = ctx.dtype("in_out_t")
    input_zp = to_type(ctx, np.asarray(ctx.attr("input_zp")), "in_out_t", "input_zp")
    output_zp = to_type(ctx, np.asarray(ctx.attr("output_zp")), "in_out_t", "output_zp")
    is_i8 = in_out is dtypes.I8
    ctx.error_if(
        not is_i8 and input_zp != 0,
        zero_point_clause(ctx.op_spec, "input_zp", "in_out_t"),
        f"input_zp {input_zp}",
    )
    ctx.error_if(
        not is_i8 and output_zp != 0,
        zero_point_clause(ctx.op_spec, "output_zp", "in_out_t"),
        f"output_zp {output_zp}",
    )
    w = pool_window(ctx)
    x = ctx.arg("input")
    if 0 in ctx.out_shape():
        return {"output": _empty_output(ctx, x)}
    count = window_taps(ctx, w)

    if in_out.is_float:
        # fp64 reference of acc / count (the dot-product rule's operation_fp64); the
        # count is exact here, where the pseudocode casts it to in_out_t.
        sums = _window_sum(pad_input(x.astype(np.float64), w, 0.0), w)
        with np.errstate(invalid="ignore", over="ignore"):
            return {"output": sums / count}

    # value - input_zp always fits int32 for i8/i16 (a zero point is only allowed for
    # i8), so apply_sub_s's REQUIRE cannot fail.  Padding taps add 0 to the sums.
    terms = pad_input(x.astype(np.int64) - int(input_zp), w, 0)
    _require_running_sums(ctx, terms, w)
    acc = _window_sum(terms, w)
    ctx.require(count > 0, "value > 0 (reciprocal_scale)")
    multiplier, shift = _reciprocal_scale(np.broadcast_to(count, acc.shape))
    acc = avg_pool_apply_scale_32(ctx, acc, multiplier, shift)
    acc = acc + int(output_zp)
    ctx.require((acc >= I32_MIN) & (acc <= I32_MAX), ar.ACC_RANGE_CLAUSE, "adding output_zp")
    assert acc_t is dtypes.I32
    out = np.clip(acc, in_out.int_range.min, in_out.int_range.max)
    return {"output": out.astype(in_out.storage)}


# -- FFT2D / RFFT2D ----------------------------------------------------------------------


def power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def _check_fft_size(ctx: OpContext) -> tuple[int, int]:
    _, h, w = ctx.input_tensor("input_real").shape
    ctx.error_if(not power_of_two(h), FFT_HEIGHT_CLAUSE, f"H = {h}")
    ctx.error_if(not power_of_two(w), FFT_WIDTH_CLAUSE, f"W = {w}")
    return h, w


def rfft_skipped(h: int, w: int, oy: np.ndarray, ox: np.ndarray) -> np.ndarray:
    """The RFFT2D outputs whose imaginary sum skips every term: rows 0 and H/2,
    columns 0 and W/2 (each term's angle is then a multiple of pi)."""
    row = (oy == 0) | (oy == h // 2)
    col = (ox == 0) | (ox == w // 2)
    return row[:, None] & col[None, :]


def _literal_plane(
    re: np.ndarray, im: np.ndarray | None, sign: float, out_w: int
) -> tuple[np.ndarray, np.ndarray]:
    """One [H, W] plane summed term by term in fp64, one output row at a time.

    ``im`` None is RFFT2D: no imaginary input, and the pseudocode's skipped imaginary
    terms are left out (not added as NaN * 0).
    """
    h, w = re.shape
    iy = np.arange(h)
    ix = np.arange(w)
    ox = np.arange(out_w)
    ax = (ix[None, :] * ox[:, None]) % w  # [OW, W]
    real = np.empty((h, out_w))
    imag = np.empty((h, out_w))
    with np.errstate(invalid="ignore", over="ignore"):
        for oy in range(h):
            ay = (iy * oy) % h  # [H]
            a = sign * 2.0 * math.pi * (ay[None, :, None] / h + ax[:, None, :] / w)
            cos, sin = np.cos(a), np.sin(a)  # [OW, H, W]
            if im is None:
                keep = ((h > 1) & (ay[None, :, None] % max(h // 2, 1) > 0)) | (
                    (w > 1) & (ax[:, None, :] % max(w // 2, 1) > 0)
                )
                real[oy] = np.sum(re * cos, axis=(1, 2))
                imag[oy] = np.sum(np.where(keep, -re * sin, 0.0), axis=(1, 2))
            else:
                real[oy] = np.sum(re * cos + im * sin, axis=(1, 2))
                imag[oy] = np.sum(-re * sin + im * cos, axis=(1, 2))
    return real, imag


def fft2d_values(re: np.ndarray, im: np.ndarray, inverse: bool) -> tuple[np.ndarray, np.ndarray]:
    """FFT2D of fp64 [N, H, W] planes: sum of (re + i im) * exp(-+i a), unnormalised."""
    z = np.empty(re.shape, dtype=np.complex128)
    z.real, z.imag = re, im
    # norm="forward" puts the 1/(H*W) on the forward transform, so ifft2 is the bare
    # sum with exp(+i a): the pseudocode's sign_val = -1 and no scaling.
    with np.errstate(invalid="ignore", over="ignore"):  # NaN and inf inputs are valid
        out = np.fft.ifft2(z, norm="forward") if inverse else np.fft.fft2(z)
    real, imag = out.real.copy(), out.imag.copy()
    special = ~(np.isfinite(re) & np.isfinite(im)).all(axis=(1, 2))
    for b in np.flatnonzero(special):
        real[b], imag[b] = _literal_plane(re[b], im[b], -1.0 if inverse else 1.0, re.shape[2])
    return real, imag


def rfft2d_values(re: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """RFFT2D of fp64 [N, H, W] planes: columns 0 .. W/2 of the forward transform."""
    _, h, w = re.shape
    with np.errstate(invalid="ignore", over="ignore"):
        out = np.fft.rfft2(re)
    real, imag = out.real.copy(), out.imag.copy()
    # Exactly zero where the pseudocode adds no term (the fp64 FFT leaves ~1e-16 there).
    skipped = rfft_skipped(h, w, np.arange(h), np.arange(w // 2 + 1))
    imag[:, skipped] = 0.0
    special = ~np.isfinite(re).all(axis=(1, 2))
    for b in np.flatnonzero(special):
        real[b], imag[b] = _literal_plane(re[b], None, 1.0, w // 2 + 1)
    return real, imag


@implements("FFT2D")
def fft2d(ctx: OpContext) -> Result:
    _check_fft_size(ctx)
    re = ctx.arg("input_real").astype(np.float64)
    im = ctx.arg("input_imag").astype(np.float64)
    real, imag = fft2d_values(re, im, bool(ctx.attr("inverse")))
    return {"output_real": real, "output_imag": imag}


@implements("RFFT2D")
def rfft2d(ctx: OpContext) -> Result:
    # The pseudocode uses sign_val without setting it; RFFT2D is the forward
    # transform (its formula and figure are FFT2D's forward ones), so sign_val = 1.
    _check_fft_size(ctx)
    real, imag = rfft2d_values(ctx.arg("input_real").astype(np.float64))
    return {"output_real": real, "output_imag": imag}

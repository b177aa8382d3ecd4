"""Mutants of the pooling, ARGMAX and FFT operators (reference/ops/tensor_pool_fft.py)."""

from __future__ import annotations

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
    lowest,
)
from conformance.backends.mutants.tools import nan_replaced as _nan_replaced
from conformance.backends.mutants.tools import output_of as _out
from reference.context import OpContext
from reference.ops import tensor_pool_fft
from reference.registry import OpFunction


@mutant(
    "argmax-last-max",
    ["ARGMAX"],
    "all",
    "the scan keeps the last of equal maxima (>= instead of >)",
    "ARGMAX vectors with repeated maxima along the axis",
)
def _argmax_last(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)  # its ERROR_IFs (axis range) before the axis is used
    axis = int(ctx.attr("axis"))
    x = ctx.arg("input")
    flipped = _out(original(with_inputs(ctx, input=np.flip(x, axis))))
    return {"output": (x.shape[axis] - 1 - flipped).astype(np.int32)}


@mutant(
    "avg-pool-counts-padding",
    ("AVG_POOL2D",),
    "pad > 0",
    "the divisor is kernel_y * kernel_x, counting padded positions (count_include_pad)",
    "AVG_POOL2D vectors with padding (border outputs)",
    patch=(tensor_pool_fft, "valid_count"),
)
def _count_padding(original: Callable[..., Any]) -> Callable[..., Any]:
    def valid_count(size: int, out: int, kernel: int, stride: int, pad: int) -> np.ndarray:
        return np.full(out, kernel, dtype=np.int64)

    return valid_count


@mutant(
    "avg-pool-int-floors",
    ("AVG_POOL2D",),
    "i8 / i16",
    "the integer average drops apply_scale_32's rounding term (floors the quotient)",
    "integer AVG_POOL2D vectors whose window sums are not multiples of the count",
    patch=(tensor_pool_fft, "avg_pool_apply_scale_32"),
)
def _floor_scale(original: Callable[..., Any]) -> Callable[..., Any]:
    def apply_scale_32(ctx: OpContext, value: Any, multiplier: Any, shift: Any) -> Any:
        original(ctx, value, multiplier, shift)  # its REQUIREs
        return (value * multiplier) >> shift

    return apply_scale_32


@mutant(
    "max-pool-pads-zero",
    ("MAX_POOL2D",),
    "pad > 0",
    "padding takes part in the maximum as 0 instead of being skipped",
    "MAX_POOL2D vectors with padding and all-negative border windows",
    patch=(tensor_pool_fft, "pad_input"),
)
def _zero_fill(original: Callable[..., Any]) -> Callable[..., Any]:
    def padded(x: np.ndarray, w: Any, fill: Any) -> np.ndarray:
        return original(x, w, 0)

    return padded


@mutant(
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


@mutant(
    "rfft-imag-negated",
    ["RFFT2D"],
    "all",
    "the imaginary part has the opposite sign (exp(+i a) convention)",
    "any RFFT2D vector whose input is not symmetric",
)
def _rfft_imag_negated(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    return {**result, "output_imag": -_out(result, "output_imag")}


@mutant(
    "argmax-nan-ignored",
    ["ARGMAX"],
    "floating point, NaN along the axis",
    "the scan replaces its maximum only when value > max, which a NaN never is: NaNs are "
    "skipped (the index of the largest number, 0 for an all-NaN axis)",
    "ARGMAX vectors with a NaN along the axis (in any position; an all-NaN axis too)",
    breaks="ARGMAX (tensor operators): NaN values always compare as greater than non-NaN "
    "values; an all-NaN axis returns the last location",
)
def _argmax_nan_ignored(original: OpFunction, ctx: OpContext) -> Result:
    dt = ctx.dtype("in_t")
    x = np.asarray(ctx.arg("input"))
    if not dt.is_float:
        return original(ctx)
    return original(with_inputs(ctx, input=_nan_replaced(x, np.True_, lowest(dt))))


@mutant(
    "max-pool-nan-ignored",
    ["MAX_POOL2D"],
    "floating point, NaN in a window",
    "the window maximum uses fmax (IEEE maxNum): NaN inputs are skipped (a window of only "
    "NaN gives the lowest value)",
    "MAX_POOL2D vectors with a NaN in a window that holds other values",
    breaks="MAX_POOL2D.tosac: acc = apply_max_s(acc, value) returns NaN once any value is NaN",
)
def _max_pool_nan_ignored(original: OpFunction, ctx: OpContext) -> Result:
    dt = ctx.dtype("in_out_t")
    x = np.asarray(ctx.arg("input"))
    if not dt.is_float:
        return original(ctx)
    return original(with_inputs(ctx, input=_nan_replaced(x, np.True_, lowest(dt))))


@mutant(
    "avg-pool-count-trailing-pad",
    ("AVG_POOL2D",),
    "pad_bottom > 0 or pad_right > 0 (windows that run past the input's end)",
    "the divisor clips the window at the input's start only: taps past the end (bottom "
    "and right padding) are counted (count = kernel - leading padding)",
    "AVG_POOL2D vectors with pad_bottom or pad_right > 0 and non-zero border values",
    breaks="AVG_POOL2D.tosac: count++ only for taps with y < IH && x < IW (padding does not count)",
    patch=(tensor_pool_fft, "valid_count"),
)
def _count_trailing_pad(original: Callable[..., Any]) -> Callable[..., Any]:
    def valid_count(size: int, out: int, kernel: int, stride: int, pad: int) -> np.ndarray:
        start = np.arange(out, dtype=np.int64) * stride - pad
        return kernel - np.maximum(-start, 0)

    return valid_count


_SYMMETRIC_MIN = {-128: -127, -32768: -32767}


@mutant(
    "max-pool-int-pad-symmetric-min",
    ("MAX_POOL2D",),
    "i8 / i16 with padding",
    "integer padding is filled with the symmetric range's minimum (-127 / -32767, as for "
    "symmetric quantisation) and takes part in the maximum: a border window whose real "
    "values are all -128 (-32768) gives -127 (-32767)",
    "i8 / i16 MAX_POOL2D vectors with padding and border windows holding only the type's minimum",
    breaks="MAX_POOL2D.tosac: acc = minimum_s<in_out_t>(), and padded taps are skipped "
    "(if (y >= 0 && y < IH && x >= 0 && x < IW))",
    patch=(tensor_pool_fft, "pad_input"),
)
def _pad_symmetric_min(original: Callable[..., Any]) -> Callable[..., Any]:
    def padded(x: np.ndarray, w: Any, fill: Any) -> np.ndarray:
        if isinstance(fill, int) and fill in _SYMMETRIC_MIN:
            return original(x, w, _SYMMETRIC_MIN[fill])
        return original(x, w, fill)

    return padded


@mutant(
    "argmax-int-unsigned-compare",
    ["ARGMAX"],
    "i8 / i16 with negative values along the axis",
    "integer inputs are compared as unsigned (an unsigned max kernel reused for signed "
    "data): negative values rank above positive ones",
    "integer ARGMAX vectors with negative and non-negative values on one axis",
    breaks="ARGMAX.tosac: apply_max_s<in_t>(value, max_value) is a signed comparison",
)
def _argmax_unsigned(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its ERROR_IFs (axis range, output shape)
    x = np.asarray(ctx.arg("input"))
    if x.dtype.kind != "i":
        return result
    unsigned = x.view(x.dtype.str.replace("i", "u"))
    return {"output": np.argmax(unsigned, axis=int(ctx.attr("axis"))).astype(np.int32)}


@mutant(
    "fft2d-inverse-normalised",
    ["FFT2D"],
    "inverse = true, H * W > 1",
    "the inverse transform is normalised by 1 / (H * W) (numpy / FFTW ifft convention); "
    "TOSA's inverse FFT2D is the bare sum",
    "FFT2D vectors with inverse = true and H * W > 1 with non-zero results",
    breaks="FFT2D.tosac: sum_real += val_real * cos(a) + val_imag * sin(a), no scaling in "
    "either direction",
)
def _fft_inverse_normalised(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if not bool(ctx.attr("inverse", False)):
        return result
    _, h, w = ctx.input_tensor("input_real").shape
    if h * w == 1:
        return result
    with np.errstate(all="ignore"):
        return {k: _out(result, k) / (h * w) for k in ("output_real", "output_imag")}


@mutant(
    "rfft-nyquist-column-dropped",
    ["RFFT2D"],
    "W >= 2",
    "the real FFT computes W/2 complex columns and does not write the Nyquist column "
    "ox = W/2 (both outputs stay 0 there)",
    "RFFT2D vectors with W >= 2 whose Nyquist column is non-zero",
    breaks="RFFT2D.tosac: for_each(0 <= n < N, 0 <= oy < H, 0 <= ox < W/2 + 1)",
)
def _rfft_nyquist_dropped(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    w = ctx.input_tensor("input_real").shape[2]
    if w < 2:
        return result
    out: Result = {}
    for k in ("output_real", "output_imag"):
        v = np.array(_out(result, k), copy=True)
        v[..., w // 2] = 0.0
        out[k] = v
    return out


@mutant(
    "argmax-signed-zero-ordered",
    ["ARGMAX"],
    "floating point, an axis whose maximum is zero with -0.0 before +0.0",
    "the scan compares the float bit patterns as sign-magnitude integers (a SIMD argmax "
    "trick), which orders -0.0 below +0.0: a +0.0 after a -0.0 maximum replaces it",
    "float ARGMAX vectors with an axis whose largest values are -0.0 then +0.0 (e.g. "
    "[-1, -0.0, +0.0] gives 1, not 2)",
    breaks="ARGMAX.tosac: apply_max_s(value, max_value) != max_value, and -0.0 == +0.0, so "
    "equal zeros return the first match",
)
def _argmax_signed_zero(original: OpFunction, ctx: OpContext) -> Result:
    dt = ctx.dtype("in_t")
    x = np.asarray(ctx.arg("input"))
    if not dt.is_float:
        return original(ctx)
    wide = x.astype(np.float64)
    zero = wide == 0
    if not zero.any():
        return original(ctx)
    # below every positive value of the type and above every negative one
    tiny = np.where(np.signbit(wide), -(2.0**-1070), 2.0**-1070)
    return original(with_inputs(ctx, input=np.where(zero, tiny, wide)))


@mutant(
    "max-pool-init-lowest-finite",
    ["MAX_POOL2D"],
    "fp16 / bf16 / fp32 windows holding only -inf",
    "the window maximum starts from the lowest finite value (numeric_limits<float>::lowest(), "
    "as TFLite's reference kernel does) instead of -inf: a window of only -inf gives "
    "-max_finite",
    "float MAX_POOL2D vectors with a window whose values are all -inf",
    breaks="MAX_POOL2D.tosac: acc = minimum_s<in_out_t>() (-infinity for types with one)",
)
def _max_pool_lowest_finite(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    dt = ctx.dtype("in_out_t")
    if not dt.is_float or not dt.has_inf:
        return result
    out = _out(result)
    lowest_finite = dt.finite_range[0]
    return {"output": np.where(np.isneginf(out), lowest_finite, out)}


@mutant(
    "avg-pool-int-mean-rounded-even",
    ("AVG_POOL2D",),
    "i8 / i16 windows whose mean is an exact half with an even neighbour",
    "the integer average is computed as a float mean converted with lrint (round half to "
    "even, the default rounding mode) instead of apply_scale_32 of reciprocal_scale(count), "
    "which gives ties away from zero",
    "integer AVG_POOL2D vectors whose window mean is an exact tie (sum 10 over 4 taps gives "
    "2, not 3; -10 over 4 gives -2, not -3)",
    breaks="AVG_POOL2D.tosac: scale_t scale = reciprocal_scale(count); output_val = "
    "apply_scale_32(acc, scale.multiplier, scale.shift, false)",
    patch=(tensor_pool_fft, "avg_pool_apply_scale_32"),
)
def _mean_rounded_even(original: Callable[..., Any]) -> Callable[..., Any]:
    def apply_scale_32(ctx: OpContext, value: Any, multiplier: Any, shift: Any) -> Any:
        scaled = original(ctx, value, multiplier, shift)  # its REQUIREs
        # reciprocal_scale(count): multiplier = ((1 << 30) + 1 << k) // count, shift =
        # 30 + k, so the nearest integer to that numerator / multiplier is count
        k = shift - 30
        numerator = np.left_shift(np.int64((1 << 30) + 1), k)
        count = (2 * numerator + multiplier) // (2 * multiplier)
        tie = (2 * value) % (2 * count) == count  # value / count is an exact half
        even = np.rint(value / count).astype(np.int64)  # fp64 holds these exactly
        return np.where(tie, even, scaled)

    return apply_scale_32

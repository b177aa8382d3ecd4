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

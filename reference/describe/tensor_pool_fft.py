"""AVG_POOL2D (and TOSA 1.1's AVG_POOL2D_ADAPTIVE), FFT2D and RFFT2D: dot products in
the precision table.

ARGMAX and MAX_POOL2D need no describer: their rule ("non-NaN results must be exact")
is ``compliance.for_operator``.

AVG_POOL2D is a dot product of the window with weights 1/KS, KS = kernel_y * kernel_x
(Appendix A); it has no local_bound attribute, so its abs pass is the operator rerun
on |input|.

FFT2D and RFFT2D are dot products of the input with constant coefficients.  Appendix
A splits the complex input into real scalars (FFT2D: KS = 2*H*W, the real and the
imaginary plane; RFFT2D: KS = H*W) and the coefficient exp(+-i a) into its real and
imaginary parts, so each output is a sum of real products:

    output_real = sum re * cos(a) + im * sin(a)     output_imag = sum -re * sin(a) + im * cos(a)

and the abs pass ``operation_fp64(input_abs, weight_abs)`` takes the element-wise
absolute values of both factors: ``sum |re| |cos a| + |im| |sin a|`` for output_real,
``sum |re| |sin a| + |im| |cos a|`` for output_imag (RFFT2D: the ``re`` terms only).
Rerunning the FFT on |input| would not give this (its coefficients keep their signs),
so the bound is computed here.  Without local_bound (the default) every |re| and |im|
is first replaced by the largest of them all, as for any dot product.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from conformance.dtypes import DType
from reference import compliance
from reference.expectations import DescribeContext, OutputCheck, describes
from reference.ops.tensor_conv import extra_multiplies_allowed
from reference.ops.tensor_pool_fft import ACC_TYPES, pool_window, rfft_skipped, window_taps

# Gathered elements per step of the bound's coefficient sum (memory, not accuracy).
_CHUNK = 1 << 22


@describes("AVG_POOL2D", "AVG_POOL2D_ADAPTIVE")
def avg_pool2d(ctx: DescribeContext) -> OutputCheck:
    # AVG_POOL2D_ADAPTIVE (TOSA 1.1) states AVG_POOL2D's precision requirements word
    # for word; its kernel is a shape_t input rather than an attribute.
    kernel = ctx.attr("kernel")
    if kernel is None:
        kernel = ctx.arg("kernel")
    kernel_y, kernel_x = (int(v) for v in kernel)
    # acc_t comes from the acc_type attribute (fp16 input allows fp16 or fp32).
    acc = ACC_TYPES[str(ctx.attr("acc_type"))]
    op = ctx.operator.op
    ks = kernel_y * kernel_x
    desc = compliance.dot_product(op, ctx.dtype, acc, ks=ks, data_set=ctx.data_set)
    bound = ctx.abs_pass(["input"], local_bound=True)
    return OutputCheck(desc, unbounded_past_accumulator(ctx, bound, acc, ks))


def unbounded_past_accumulator(
    ctx: DescribeContext, bound: np.ndarray, acc: DType, ks: int
) -> np.ndarray:
    """Reading ``avg-pool-acc-range``: the pseudocode sums the window in acc_t before
    it divides, so where the window's sum of magnitudes (the bound, a mean of
    magnitudes, times the taps) passes acc_t's largest value, with KS roundings of
    slack, a faithful implementation overflows (fp16 accumulate: 30000 + 40000 is
    infinity).  The dot-product form, weights 1/KS, never shows it; REDUCE_SUM's
    bound (weights 1) does.  Those outputs get an infinite bound: no accuracy limit,
    as for a bound that overflows."""
    if not acc.is_float:
        return bound
    evaluated = ctx.evaluator.context(ctx.block, ctx.index, ctx.values)
    taps = window_taps(evaluated, pool_window(evaluated))
    with np.errstate(invalid="ignore", over="ignore"):
        total = bound * taps * (1.0 + ks * 2.0 ** -acc.fp.normal_frac)
    return np.where(total > acc.fp.normal_max, np.inf, bound)


def coefficient_table(period: int, fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """|fn(2 pi r / period)| for r = 0 .. period-1, exact at multiples of pi/2 (where
    cos and sin are 0 or 1 but their fp64 evaluation is off by ~1e-16)."""
    r = np.arange(period)
    table = np.abs(fn(2.0 * math.pi * r / period))
    quarter = (4 * r) % period == 0
    table[quarter] = np.abs(np.rint(fn(0.5 * math.pi * (4 * r[quarter] // period))))
    return table


def abs_coefficient_sum(
    w: np.ndarray, out_w: int, fn: Callable[[np.ndarray], np.ndarray]
) -> np.ndarray:
    """``B[n, oy, ox] = sum over (iy, ix) of w[n, iy, ix] * |fn(a)|``, with the FFT's
    angle a = 2 pi ((iy*oy mod H)/H + (ix*ox mod W)/W), for ox < out_w.

    Summed directly as a product with the matrix of |fn(a)|, a table lookup since with
    H and W powers of two a = 2 pi r / P for P = max(H, W) and an integer r.  Every
    term is >= 0, so nothing cancels: a shortcut through the FFT of w loses the small
    terms next to huge ones (Appendix A's data set 4 mixes 0.5 with 1e18).  Rows of
    the output are done in chunks to bound the matrix's memory.  Planes with a
    non-finite w get an infinite bound (no accuracy limit; their reference is not
    finite either).
    """
    n, h, wd = w.shape
    period = max(h, wd)
    g = coefficient_table(period, fn)
    finite = np.isfinite(w).all(axis=(1, 2))
    flat = np.where(finite[:, None, None], w, 0.0).reshape(n, h * wd)
    iy = np.arange(h)[:, None, None, None] * (period // h)
    ix = np.arange(wd)[None, :, None, None] * (period // wd)
    ox = np.arange(out_w)[None, None, None, :]
    out = np.zeros((n, h, out_w))
    rows = max(1, _CHUNK // max(1, h * wd * out_w))
    for y0 in range(0, h, rows):
        oy = np.arange(y0, min(h, y0 + rows))[None, None, :, None]
        r = (iy * oy + ix * ox) % period  # [H, W, rows, OW]
        matrix = g[r].reshape(h * wd, -1)
        out[:, y0 : y0 + oy.shape[2], :] = (flat @ matrix).reshape(n, -1, out_w)
    out[~finite] = np.inf
    return out


def _sin_part(w: np.ndarray, out_w: int, extra_multiplies: bool = False) -> np.ndarray:
    # At rows 0, H/2 and columns 0, W/2 every angle is a multiple of pi: sin is exactly
    # 0 for every term (RFFT2D's pseudocode skips them), so the sum is exactly 0.  Where
    # a backend may still add -value * 0.0 for them (``extra_multiplies``, TOSA 1.0's
    # tosa_extra_multiplies), an infinite or NaN input makes that sum NaN or 0 as the
    # backend chooses: those planes keep the infinite bound (no limit) there.
    _, h, wd = w.shape
    part = abs_coefficient_sum(w, out_w, np.sin)
    skipped = rfft_skipped(h, wd, np.arange(h), np.arange(out_w))
    keep = np.zeros(w.shape[0], bool)
    if extra_multiplies:
        keep = ~np.isfinite(w).all(axis=(1, 2))
    part[:, skipped] = np.where(keep[:, None], part[:, skipped], 0.0)
    return part


def _local_bound(ctx: DescribeContext) -> bool:
    return compliance.effective_local_bound(ctx.operator.op, ctx.attr("local_bound"))


@describes("FFT2D")
def fft2d(ctx: DescribeContext) -> OutputCheck:
    re, im = ctx.arg("input_real"), ctx.arg("input_imag")
    _, h, w = re.shape
    prepared = compliance.dot_product_bound_inputs([re, im], None, local_bound=_local_bound(ctx))
    are, aim = prepared.inputs
    if ctx.output_arg == "output_real":
        bound = abs_coefficient_sum(are, w, np.cos) + _sin_part(aim, w)
    else:
        bound = _sin_part(are, w) + abs_coefficient_sum(aim, w, np.cos)
    desc = compliance.dot_product(
        "FFT2D",
        ctx.dtype,
        ctx.type_of("in_out_t"),
        ks=2 * h * w,
        data_set=ctx.data_set,
        local_bound=ctx.attr("local_bound"),
    )
    return OutputCheck(desc, bound)


@describes("RFFT2D")
def rfft2d(ctx: DescribeContext) -> OutputCheck:
    re = ctx.arg("input_real")
    _, h, w = re.shape
    prepared = compliance.dot_product_bound_inputs(re, None, local_bound=_local_bound(ctx))
    (are,) = prepared.inputs
    if ctx.output_arg == "output_real":
        bound = abs_coefficient_sum(are, w // 2 + 1, np.cos)
    else:
        extra = extra_multiplies_allowed(ctx.spec.revision)
        bound = _sin_part(are, w // 2 + 1, extra)
    desc = compliance.dot_product(
        "RFFT2D",
        ctx.dtype,
        ctx.type_of("in_out_t"),
        ks=h * w,
        data_set=ctx.data_set,
        local_bound=ctx.attr("local_bound"),
    )
    return OutputCheck(desc, bound)

"""Mutants of the block-scaled operators of TOSA 1.1 (reference/ops/block_scaled.py):
CAST_TO_BLOCK_SCALED, CAST_FROM_BLOCK_SCALED, MATMUL_T_BLOCK_SCALED and
CONV2D_BLOCK_SCALED.

Each models a bug an MX kernel can have: the shared scale taken from the block's
largest magnitude without the element type's range, an all-zero block given the NaN
scale, the scale byte decoded as a plain exponent (0xFF as 2**128, not NaN), fp4/fp6
subnormals decoded as zero, one scale read for every block of a row, the weight scale
read at kernel position 0 for every tap.

(Rounding half away from zero in CAST_TO is no mutant here: its precision rule allows
a one-ulp error, so the spec cannot tell it from ties to even; nor is a scale
from the block's mean: the rule accepts every scale up to twice the reference one, and
the values that then overflow saturate, which the capped bound accepts.)
"""

from __future__ import annotations

import numpy as np

from conformance.backends.mutants import Result, mutant, with_inputs
from conformance.backends.mutants.tools import output_of
from conformance.dtypes import DType
from reference import mx
from reference.context import OpContext
from reference.ops import block_scaled as bso
from reference.registry import OpFunction

CAST_TO_RULE = (
    "numeric_conversion_helpers.tosac, calc_block_scale: scale from the block's tensor_block_maxabs"
)


def _cast_to_with_scale(ctx: OpContext, scale: np.ndarray, bs: int) -> Result:
    """CAST_TO_BLOCK_SCALED's outputs for the given per-block scales."""
    out_t = ctx.dtype("out_t")
    x = mx.decode(ctx.arg("input_data"), ctx.dtype("in_t"))
    with np.errstate(invalid="ignore", divide="ignore"):
        scaled = (mx.block_view(x, bs) / scale[..., None]).reshape(x.shape)
    data = mx.encode(scaled, out_t) if not out_t.is_float else mx.round_value(scaled, out_t)
    return {"output_data": data, "output_scale": scale}


@mutant(
    "block-scale-emax-forgotten",
    ["CAST_TO_BLOCK_SCALED"],
    "fp4 / fp6 / fp8 value types (mxint8's largest value is about 2, so the two agree)",
    "the shared scale is the power of two of the block's largest magnitude, "
    "2**floor(log2(max_abs)), without dividing by the element type's largest value: "
    "the scale is 4x (fp4e2m1) to 256x (fp8e4m3) too large and the values lose their "
    "precision",
    "CAST_TO_BLOCK_SCALED vectors of any finite block",
    breaks=CAST_TO_RULE,
)
def _emax_forgotten(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # every ERROR_IF as the reference checks them
    bs = bso.block_size(ctx)
    m = mx.block_max_abs(mx.decode(ctx.arg("input_data"), ctx.dtype("in_t")), bs)
    finite = np.isfinite(m) & (m > 0)
    _, e = np.frexp(np.where(finite, m, 1.0))
    wrong = np.ldexp(1.0, np.clip(e - 1, -mx.UE8M0_BIAS, mx.UE8M0_BIAS))
    scale = np.asarray(output_of(result, "output_scale"), np.float64)
    return _cast_to_with_scale(ctx, np.where(finite, wrong, scale), bs)


@mutant(
    "block-scale-zero-block-nan",
    ["CAST_TO_BLOCK_SCALED"],
    "blocks of zeros",
    "log2(0) = -inf is taken for an invalid exponent: an all-zero block gets the NaN "
    "scale 0xFF instead of the smallest scale 2**-127",
    "CAST_TO_BLOCK_SCALED vectors with an all-zero block",
    breaks="numeric_conversion_helpers.tosac, calc_block_scale: "
    "if (max_abs == 0) return normal_min<scale_t>()",
)
def _zero_block_nan(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    scale = np.asarray(output_of(result, "output_scale"), np.float64)
    bs = bso.block_size(ctx)
    zero = mx.block_max_abs(mx.decode(ctx.arg("input_data"), ctx.dtype("in_t")), bs) == 0
    return _cast_to_with_scale(ctx, np.where(zero, np.nan, scale), bs)


@mutant(
    "block-scale-nan-as-exponent",
    ["CAST_FROM_BLOCK_SCALED"],
    "blocks whose scale is 0xFF",
    "the scale byte is decoded as 2**(byte - 127) with no NaN check, so the NaN scale "
    "0xFF multiplies its block by 2**128",
    "CAST_FROM_BLOCK_SCALED vectors with a NaN scale (0xFF)",
    breaks="introduction, fp8ue8m0_t: 'The NaN encoding must be supported' "
    "(CAST_FROM_BLOCK_SCALED: acc = apply_mul_s(acc, scale))",
)
def _nan_scale_as_exponent(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    bs = bso.block_size(ctx)
    raw = mx.to_bits(ctx.arg("input_scale"), ctx.dtype("scale_t")).astype(np.int64)
    scale = np.ldexp(1.0, raw - mx.UE8M0_BIAS)  # 0xFF -> 2**128
    x = mx.decode(ctx.arg("input_data"), ctx.dtype("in_t"))
    wrong = mx.dequantize(x, scale, bs)
    nan_block = mx.scale_per_element(raw == mx.UE8M0_NAN, bs) > 0
    return {"output_data": np.where(nan_block, wrong, output_of(result, "output_data"))}


def _subnormals_flushed(v: np.ndarray, dt: DType) -> np.ndarray:
    values = mx.decode(v, dt)
    return np.where(np.abs(values) < dt.fp.normal_min, np.copysign(0.0, values), values)


@mutant(
    "block-value-subnormals-as-zero",
    ["CAST_FROM_BLOCK_SCALED"],
    "fp4e2m1 / fp6e2m3 / fp6e3m2 subnormal encodings",
    "the element decoder has no subnormal path: exponent field 0 decodes as zero "
    "(fp4e2m1 0b0001 gives 0, not 0.5)",
    "CAST_FROM_BLOCK_SCALED vectors holding every fp4 / fp6 encoding",
    breaks="introduction, fp4e2m1_t / fp6e2m3_t / fp6e3m2_t: 'Subnormal values must be supported'",
)
def _subnormals_as_zero(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    in_t = ctx.dtype("in_t")
    if in_t.name not in ("fp4e2m1", "fp6e2m3", "fp6e3m2"):
        return result
    bs = bso.block_size(ctx)
    x = _subnormals_flushed(ctx.arg("input_data"), in_t)
    s = mx.decode(ctx.arg("input_scale"), ctx.dtype("scale_t"))
    return {"output_data": mx.dequantize(x, s, bs)}


@mutant(
    "block-scale-first-block-only",
    ["MATMUL_T_BLOCK_SCALED"],
    "C of two blocks or more, with scales that differ along C",
    "one scale per row: the kernel reads A's and B's scale at block 0 and applies it "
    "to every block of the row",
    "MATMUL_T_BLOCK_SCALED vectors with C >= 64 whose scales differ between blocks",
    breaks="MATMUL_T_BLOCK_SCALED.tosac: scale_A = tensor_read(A_scale, [N,H,C/block_size], "
    "[n,h,b]) for each block b",
)
def _first_block_only(original: OpFunction, ctx: OpContext) -> Result:
    sa, sb = ctx.arg("A_scale"), ctx.arg("B_scale")
    first_a = np.broadcast_to(sa[..., :1], sa.shape).copy()
    first_b = np.broadcast_to(sb[..., :1], sb.shape).copy()
    return original(with_inputs(ctx, A_scale=first_a, B_scale=first_b))


@mutant(
    "block-weight-scale-tap-zero",
    ["CONV2D_BLOCK_SCALED"],
    "kernels larger than 1x1 whose weight scales differ between taps",
    "the weight scale is indexed [oc, 0, 0, b]: every kernel position uses the scale "
    "of the first one",
    "CONV2D_BLOCK_SCALED vectors with KH * KW > 1 and weight scales that vary over the kernel",
    breaks="CONV2D_BLOCK_SCALED.tosac: scale_weight = tensor_read(weight_scale, "
    "[OC,KH,KW,IC/block_size], [oc,ky,kx,b])",
)
def _weight_scale_tap_zero(original: OpFunction, ctx: OpContext) -> Result:
    ws = ctx.arg("weight_scale")
    first = np.broadcast_to(ws[:, :1, :1, :], ws.shape).copy()
    return original(with_inputs(ctx, weight_scale=first))

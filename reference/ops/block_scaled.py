"""The block-scaled (microscaling) operators of TOSA 1.1 whose operands are plain
tensors: CAST_TO_BLOCK_SCALED and CAST_FROM_BLOCK_SCALED (type-conversion; values and
scales as separate tensors), MATMUL_T_BLOCK_SCALED and CONV2D_BLOCK_SCALED (tensor;
data and scale tensors for each operand).

Blocks are ``block_size`` (BLOCK_SIZE_32) consecutive values of the innermost
dimension, each with one fp8ue8m0 scale (reference.mx).  Results are exact fp64, as
for every floating-point operator: CAST_FROM's ``x * scale`` (exact: a value has at
most four significant bits and the scale is a power of two), CAST_TO's ``x / scale``
before the engine rounds it to the value type (mxint8, held as its raw byte, is
rounded here), and the dot products of MATMUL_T / CONV2D, each block's dot product
times the product of its two scales, summed over the blocks in fp64.

Readings (the report's ``mx-*`` rows): MATMUL_T_BLOCK_SCALED's block loop ``0 <= b <=
C/block_size`` reads one block past the scale tensors and is taken as ``b <
C/block_size``; the scale tensors' shapes ([N,H,C/block_size] ...) are argument
declarations that the engine's argument check cannot evaluate (block_size is an
enumeration attribute), so they are checked here, after the operator's own
ERROR_IFs, as the argument rule; CAST_TO's output_scale shape likewise (the output
rule); CONV2D's scales multiply the block accumulator at every tap, so a NaN weight
scale reaches an output even through a tap that reads padding.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from conformance import revisions
from conformance.dtypes import DType
from conformance.spec import load_revision, load_spec
from reference import mx
from reference.arguments import INPUTS_CLAUSE, OUTPUTS_CLAUSE
from reference.context import OpContext
from reference.ops.matmul_t import BATCH_CLAUSE
from reference.ops.tensor_conv import (
    BIAS_CLAUSE,
    DILATION_CLAUSE,
    IDIV_CHECK_CLAUSE,
    OH_CLAUSE,
    OW_CLAUSE,
    STRIDE_CLAUSE,
)
from reference.ops.tensor_pool_fft import PAD_NEGATIVE_CLAUSE
from reference.registry import implements

Result = dict[str, np.ndarray | list[np.ndarray]]

# The ERROR_IFs, as the pseudocode states them (CONV2D_BLOCK_SCALED's geometry and bias
# rules are CONV2D's, from tensor_conv; MATMUL_T_BLOCK_SCALED's batch rule MATMUL_T's).
SHAPE_BLOCK_CLAUSE = "rank(shape) == 0 || shape[rank(shape)-1] % block_size != 0"
BLOCK_SIZE_ONE_CLAUSE = "block_size == 1"
SCALE_RANK_CLAUSE = "rank(shape) != rank(in_scale_shape)"
SCALE_DIM_CLAUSE = "shape[axis_index] != in_scale_shape[axis_index]"
SCALE_INNER_CLAUSE = "shape[rank(shape) - 1] != in_scale_shape[rank(shape) - 1] * block_size"
MATMUL_C_CLAUSE = "C % block_size != 0"
MATMUL_D_CLAUSE = BATCH_CLAUSE
CONV_IC_CLAUSE = "IC % block_size != 0"
CONV_BIAS_CLAUSE = BIAS_CLAUSE

BLOCK_SIZE_ENUM = "block_size_t"


def block_size(ctx: OpContext) -> int:
    """The block_size attribute's value: an enumeration value name of block_size_t
    (BLOCK_SIZE_32, BLOCK_SIZE_1), looked up in the operator's revision."""
    raw = ctx.attr("block_size")
    if isinstance(raw, (int, np.integer)):
        return int(raw)
    spec = load_revision(ctx.revision) if ctx.revision in revisions.REVISIONS else load_spec()
    try:
        return spec.enums[BLOCK_SIZE_ENUM].value_of(str(raw))
    except KeyError:
        raise ValueError(
            f"{ctx.name}: block_size {raw!r} is not a value of {BLOCK_SIZE_ENUM}"
        ) from None


def _check_block_size(ctx: OpContext, bs: int) -> None:
    ctx.error_if(bs == 1, BLOCK_SIZE_ONE_CLAUSE, f"block_size={bs}")


def _check_innermost(ctx: OpContext, shape: tuple[int, ...], bs: int) -> None:
    ctx.error_if(
        len(shape) == 0 or shape[-1] % bs != 0,
        SHAPE_BLOCK_CLAUSE,
        f"shape {list(shape)}, block_size={bs}",
    )


def scale_shape(shape: Sequence[int], bs: int) -> tuple[int, ...]:
    """The shape of the scales of a tensor of ``shape``: its innermost dimension over
    the block size."""
    return (*shape[:-1], shape[-1] // bs)


def _check_scale_tensor(
    ctx: OpContext, got: tuple[int, ...], want: tuple[int, ...], name: str, clause: str
) -> None:
    ctx.error_if(
        got != want,
        clause,
        f"{name} has shape {list(got)}, its declaration gives {list(want)}",
    )


def _values(ctx: OpContext, arg: str, var: str) -> np.ndarray:
    return mx.decode(ctx.arg(arg), ctx.dtype(var))


# -- CAST_TO_BLOCK_SCALED / CAST_FROM_BLOCK_SCALED ----------------------------------------


def block_scales(x: np.ndarray, value_t: DType, bs: int) -> np.ndarray:
    """calc_block_scale of every block of ``x`` (fp64 values), from tensor_block_maxabs:
    ``[..., C / bs]`` scales in fp64 (NaN for a block holding NaN or infinity)."""
    return mx.block_scale(mx.block_max_abs(x, bs), value_t)


def _encoded(values: np.ndarray, dt: DType) -> np.ndarray:
    """A value tensor as the operator returns it: fp64 for a floating-point type (the
    engine rounds it), the raw byte for mxint8 (which the engine does not round)."""
    return mx.encode(values, dt) if not dt.is_float else values


@implements("CAST_TO_BLOCK_SCALED")
def cast_to_block_scaled(ctx: OpContext) -> Result:
    out_t = ctx.dtype("out_t")
    shape = ctx.input_tensor("input_data").shape
    bs = block_size(ctx)
    _check_innermost(ctx, shape, bs)
    _check_block_size(ctx, bs)
    _check_scale_tensor(
        ctx, ctx.output_tensor("output_scale").shape, scale_shape(shape, bs), "output_scale",
        OUTPUTS_CLAUSE,
    )  # fmt: skip
    x = _values(ctx, "input_data", "in_t")
    scale = block_scales(x, out_t, bs)
    with np.errstate(invalid="ignore"):
        scaled = (mx.block_view(x, bs) / scale[..., None]).reshape(shape)
    return {"output_data": _encoded(scaled, out_t), "output_scale": scale}


@implements("CAST_FROM_BLOCK_SCALED")
def cast_from_block_scaled(ctx: OpContext) -> Result:
    shape = ctx.input_tensor("input_data").shape
    scales = ctx.input_tensor("input_scale").shape
    bs = block_size(ctx)
    _check_innermost(ctx, shape, bs)
    ctx.error_if(
        len(shape) != len(scales),
        SCALE_RANK_CLAUSE,
        f"input_data rank {len(shape)}, input_scale rank {len(scales)}",
    )
    _check_block_size(ctx, bs)
    for axis in range(len(shape) - 1):
        ctx.error_if(
            shape[axis] != scales[axis],
            SCALE_DIM_CLAUSE,
            f"axis {axis}: {shape[axis]} against {scales[axis]}",
        )
    ctx.error_if(
        shape[-1] != scales[-1] * bs,
        SCALE_INNER_CLAUSE,
        f"innermost {shape[-1]} against {scales[-1]} scales of {bs}",
    )
    x = _values(ctx, "input_data", "in_t")
    s = _values(ctx, "input_scale", "scale_t")
    return {"output_data": mx.dequantize(x, s, bs)}


# -- MATMUL_T_BLOCK_SCALED ------------------------------------------------------------


def block_dot(a: np.ndarray, b: np.ndarray, bs: int) -> np.ndarray:
    """Per block of the innermost axis, the dot product of a [..., H, C] with b
    [..., W, C]: [..., H, W, C / bs] in fp64 (IEEE: inf * 0 is NaN)."""
    a4 = mx.block_view(a, bs)  # [..., H, nb, bs]
    b4 = mx.block_view(b, bs)  # [..., W, nb, bs]
    a_t = np.moveaxis(a4, -2, -3)  # [..., nb, H, bs]
    b_t = np.moveaxis(b4, -2, -3).swapaxes(-1, -2)  # [..., nb, bs, W]
    with np.errstate(all="ignore"):
        dots = np.matmul(a_t, b_t)  # [..., nb, H, W]
    return np.moveaxis(dots, -3, -1)


def scaled_sum(dots: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """sum over blocks of block_acc * (scale_A * scale_B), in fp64."""
    with np.errstate(all="ignore"):
        return np.sum(dots * scale, axis=-1)


@implements("MATMUL_T_BLOCK_SCALED")
def matmul_t_block_scaled(ctx: OpContext) -> Result:
    n, h, c = ctx.input_tensor("A_data").shape
    d, w, _ = ctx.input_tensor("B_data").shape
    bs = block_size(ctx)
    ctx.error_if(c % bs != 0, MATMUL_C_CLAUSE, f"C={c}, block_size={bs}")
    _check_block_size(ctx, bs)
    ctx.error_if(d != n and d != 1, MATMUL_D_CLAUSE, f"D={d}, N={n}")
    nb = c // bs
    _check_scale_tensor(
        ctx, ctx.input_tensor("A_scale").shape, (n, h, nb), "A_scale", INPUTS_CLAUSE
    )
    _check_scale_tensor(
        ctx, ctx.input_tensor("B_scale").shape, (d, w, nb), "B_scale", INPUTS_CLAUSE
    )
    a = _values(ctx, "A_data", "A_t")
    b = np.broadcast_to(_values(ctx, "B_data", "B_t"), (n, w, c))
    sa = _values(ctx, "A_scale", "scale_t")  # [N, H, nb]
    sb = np.broadcast_to(_values(ctx, "B_scale", "scale_t"), (n, w, nb))
    dots = block_dot(a, b, bs)  # [N, H, W, nb]
    scale = sa[:, :, None, :] * sb[:, None, :, :]
    return {"output_data": scaled_sum(dots, scale)}


# -- CONV2D_BLOCK_SCALED --------------------------------------------------------------


def _ints(ctx: OpContext, name: str, count: int) -> list[int]:
    values = [int(v) for v in np.asarray(ctx.attr(name)).reshape(-1)]
    if len(values) != count:  # the engine checks the declared [count] shape first
        raise AssertionError(f"{ctx.name} {name} has {len(values)} values, not {count}")
    return values


def _c_remainder(a: int, b: int) -> int:
    """C's ``a % b``: the sign follows the dividend."""
    return a - b * int(a / b)


def _check_size(ctx: OpContext, name: str, got: int, numerator: int, stride: int) -> None:
    """ERROR_IF(O != idiv_check(numerator, stride) + 1), idiv_check's ERROR_IF first."""
    ctx.error_if(
        _c_remainder(numerator, stride) != 0,
        IDIV_CHECK_CLAUSE,
        f"{name}: {numerator} is not a multiple of the stride {stride}",
    )
    want = numerator // stride + 1
    ctx.error_if(
        got != want, OH_CLAUSE if name == "OH" else OW_CLAUSE, f"{name}={got}, want {want}"
    )


def _tap_rows(
    size_in: int, size_out: int, k: int, stride: int, dilation: int, pad: int
) -> np.ndarray:
    """For kernel offset k: the input coordinate each output reads (-1 in the padding)."""
    coord = np.arange(size_out) * stride - pad + k * dilation
    return np.where((coord >= 0) & (coord < size_in), coord, -1)


@implements("CONV2D_BLOCK_SCALED")
def conv2d_block_scaled(ctx: OpContext) -> Result:
    nn, ih, iw, ic = ctx.input_tensor("input_data").shape
    oc, kh, kw, _ = ctx.input_tensor("weight_data").shape
    _, oh, ow, _ = ctx.output_tensor("output").shape
    pad = _ints(ctx, "pad", 4)
    stride = _ints(ctx, "stride", 2)
    dilation = _ints(ctx, "dilation", 2)
    ctx.error_if(any(p < 0 for p in pad), PAD_NEGATIVE_CLAUSE, f"pad {pad}")
    ctx.error_if(any(s < 1 for s in stride), STRIDE_CLAUSE, f"stride {stride}")
    ctx.error_if(any(v < 1 for v in dilation), DILATION_CLAUSE, f"dilation {dilation}")
    _check_size(ctx, "OH", oh, ih - 1 + pad[0] + pad[1] - (kh - 1) * dilation[0], stride[0])
    _check_size(ctx, "OW", ow, iw - 1 + pad[2] + pad[3] - (kw - 1) * dilation[1], stride[1])
    bc = ctx.input_tensor("bias").shape[0]
    ctx.error_if(bc != oc and bc != 1, CONV_BIAS_CLAUSE, f"BC={bc}, OC={oc}")
    bs = block_size(ctx)
    ctx.error_if(ic % bs != 0, CONV_IC_CLAUSE, f"IC={ic}, block_size={bs}")
    _check_block_size(ctx, bs)
    nb = ic // bs
    _check_scale_tensor(
        ctx, ctx.input_tensor("input_scale").shape, (nn, ih, iw, nb), "input_scale", INPUTS_CLAUSE
    )
    _check_scale_tensor(
        ctx, ctx.input_tensor("weight_scale").shape, (oc, kh, kw, nb), "weight_scale", INPUTS_CLAUSE
    )
    x = mx.block_view(_values(ctx, "input_data", "in_t"), bs)  # [N, IH, IW, nb, bs]
    xs = _values(ctx, "input_scale", "scale_t")  # [N, IH, IW, nb]
    wt = mx.block_view(_values(ctx, "weight_data", "weight_t"), bs)  # [OC, KH, KW, nb, bs]
    ws = _values(ctx, "weight_scale", "scale_t")  # [OC, KH, KW, nb]
    bias = np.broadcast_to(_values(ctx, "bias", "out_t"), (oc,))
    out = np.zeros((nn, oh, ow, oc))
    for ky in range(kh):
        rows = _tap_rows(ih, oh, ky, stride[0], dilation[0], pad[0])
        for kx in range(kw):
            cols = _tap_rows(iw, ow, kx, stride[1], dilation[1], pad[2])
            out += conv_tap(x, xs, wt[:, ky, kx], ws[:, ky, kx], rows, cols)
    with np.errstate(all="ignore"):
        return {"output": out + bias}


def conv_tap(
    x: np.ndarray,
    xs: np.ndarray,
    w: np.ndarray,
    ws: np.ndarray,
    rows: np.ndarray,
    cols: np.ndarray,
) -> np.ndarray:
    """One kernel offset's contribution to every output, [N, OH, OW, OC]: per block,
    the dot product of the input values the offset reads with the weights, times
    input scale * weight scale.  Where the offset reads padding the block
    accumulator is 0 and the input scale 1 (so 0 * weight scale: NaN for a NaN one).
    ``x`` [N, IH, IW, nb, bs], ``xs`` [N, IH, IW, nb], ``w`` [OC, nb, bs], ``ws`` [OC, nb]."""
    inside = (rows[:, None] >= 0) & (cols[None, :] >= 0)  # [OH, OW]
    r, c = np.maximum(rows, 0), np.maximum(cols, 0)
    xv = x[:, r][:, :, c]  # [N, OH, OW, nb, bs]
    sv = np.where(inside[None, :, :, None], xs[:, r][:, :, c], 1.0)  # [N, OH, OW, nb]
    with np.errstate(all="ignore"):
        # [N, OH, OW, nb, bs] x [OC, nb, bs] -> [N, OH, OW, OC, nb], one matmul per block
        dots = np.einsum("nhwbi,obi->nhwob", xv, w, optimize=True)
        dots = np.where(inside[None, :, :, None, None], dots, 0.0)
        scaled = dots * (sv[:, :, :, None, :] * ws[None, None, None, :, :])
    return np.sum(scaled, axis=-1)

"""Recipes and breakers for the block-scaled operators of TOSA 1.1 with plain tensor
operands (reference/ops/block_scaled.py): CAST_TO_BLOCK_SCALED, CAST_FROM_BLOCK_SCALED,
MATMUL_T_BLOCK_SCALED and CONV2D_BLOCK_SCALED.

Every innermost dimension that the operator blocks is a multiple of the block size
(BLOCK_SIZE_32).  The values are built per block, by construction:

* CAST_TO's input: blocks of drawn magnitudes (a binade per block), with special
  blocks placed: all zeros (the scale 2**-127), values so small that the scale clips
  at 2**-127, values near the input type's largest (for mxint8 the scale clips at
  2**127 and the values saturate), a NaN or an infinity (the NaN scale), a block whose
  largest magnitude is exactly out_max * 2**k (the scale formula's boundary), and
  elements exactly half-way between two values of the output type (ties).
* CAST_FROM's input: every encoding of the value type in every case (16 for fp4e2m1,
  64 for fp6, 256 for fp8 and mxint8, raw -128 and 127 included), in blocks with
  ordinary scales, and the scale extremes 2**-127, 2**127, 1.0 and NaN (0xFF) in
  blocks of their own.
* MATMUL_T / CONV2D: the Appendix A data set (fp32 data cast to the block-scaled type
  by CAST_TO_BLOCK_SCALED's rule, as the appendix does) or free values: random
  encodings, scales in a moderate range, mxint8's -128 / 127 and (sometimes) a NaN
  scale.  A convolution with padding keeps its weights finite and its weight scales
  non-NaN (an implementation may multiply by a padded 0, and a NaN weight scale's
  reach through padding is a reading).
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from conformance import dtypes
from conformance.dtypes import DType
from conformance.operator_table import family
from conformance.rounding import round_to
from reference import mx
from reference.arguments import INPUTS_CLAUSE, OUTPUTS_CLAUSE
from reference.datasets import bound_b, tosa_pro_fp_data
from reference.ops import block_scaled as bso
from reference.ops.tensor_conv import (
    DILATION_CLAUSE,
    IDIV_CHECK_CLAUSE,
    OH_CLAUSE,
    OW_CLAUSE,
    STRIDE_CLAUSE,
)
from reference.ops.tensor_pool_fft import PAD_NEGATIVE_CLAUSE
from strategies.case import CaseSpec, TensorDraw, shape_tensor
from strategies.invalid import breaks, broken
from strategies.recipes import RecipeContext, recipe
from strategies.recipes.data_sets import DATA_SETS

BS = mx.BLOCK_SIZE
# The data sets a dot-product case takes (-1: free values).
_SETS = st.sampled_from(DATA_SETS)
_MIN_DOTS = 1000  # Appendix A's MIN_DOT_PRODUCTS, aimed at where the budget holds it


def block_size_name(rc: RecipeContext, value: int) -> str:
    """The block_size_t value name for ``value`` (BLOCK_SIZE_32, BLOCK_SIZE_1)."""
    return rc.spec.enums[bso.BLOCK_SIZE_ENUM].name_of(value)


def _rng(draw: st.DrawFn, label: str) -> np.random.Generator:
    return np.random.default_rng(draw(st.integers(0, 2**32 - 1), label=label))


# -- shapes ---------------------------------------------------------------------------


def _blocked_shape(draw: st.DrawFn, rc: RecipeContext, arg: str, least: int) -> tuple[int, ...]:
    """A shape of the argument's rank range whose innermost dimension is a multiple of
    the block size, at least ``least`` elements (and the budget's min_elements, which a
    "large" job raises) where the budget holds them."""
    least = max(least, rc.budget.min_elements)
    lo, hi = rc.rank_range(arg, 4)
    rank = draw(st.integers(max(lo, 1), max(lo, 1, hi)), label=f"{arg}: rank")
    budget = max(BS, rc.budget.max_elements)
    lead: list[int] = []
    for i in range(rank - 1):
        room = max(1, budget // (BS * max(1, math.prod(lead))))
        lead.append(draw(st.integers(1, max(1, min(4, room))), label=f"{arg}: dim {i}"))
    outer = max(1, math.prod(lead))
    k_max = max(1, budget // (BS * outer))
    k_least = min(k_max, max(1, -(-least // (BS * outer))))
    k = draw(st.integers(k_least, max(k_least, min(k_max, k_least + 8))), label=f"{arg}: blocks")
    return (*lead, BS * k)


# -- CAST_TO_BLOCK_SCALED ----------------------------------------------------------------


def _ties(rng: np.random.Generator, out_t: DType, n: int) -> np.ndarray:
    """Values exactly half-way between two neighbouring values of ``out_t`` (in units
    of the block scale), of both signs."""
    if out_t is dtypes.MXINT8:
        raw = rng.integers(-127, 127, n)
        return (raw + 0.5) / mx.MXINT8_SCALE
    values = np.unique(np.abs(mx.decode_bits(np.arange(mx.code_count(out_t)), out_t)))
    values = values[np.isfinite(values)]
    idx = rng.integers(0, len(values) - 1, n)
    mid = (values[idx] + values[idx + 1]) / 2
    return np.where(rng.random(n) < 0.5, -mid, mid)


def _normal_max(dt: DType) -> float:
    return 127 / mx.MXINT8_SCALE if dt is dtypes.MXINT8 else float(dt.normal_max or 0.0)


SPECIAL_BLOCKS = ("zero", "tiny", "huge", "nan", "inf", "boundary", "ties")


def cast_to_values(
    draw: st.DrawFn, rc: RecipeContext, in_t: DType, out_t: DType, shape: tuple[int, ...]
) -> np.ndarray:
    """Input values for CAST_TO_BLOCK_SCALED, in ``in_t``'s storage (module text)."""
    rng = _rng(draw, "input_data: seed")
    blocks = mx.block_view(rng.standard_normal(shape), BS).copy()  # [..., nb, 32]
    flat = blocks.reshape(-1, BS)
    nb = flat.shape[0]
    # A binade per block, so that the scales differ.
    flat *= np.ldexp(1.0, rng.integers(-24, 24, nb))[:, None]
    out_max = mx.largest_rounding_to_normal_max(out_t)
    edge = rc.target == "edge"
    wanted = [
        name
        for name in SPECIAL_BLOCKS
        if (name != "inf" or in_t.has_inf)
        and (edge or draw(st.booleans(), label=f"input_data: a {name} block"))
    ]
    order = rng.permutation(nb)
    for j, name in zip(order, wanted, strict=False):  # one block each, as far as they go
        row = flat[j]
        if name == "zero":
            row[:] = np.where(rng.random(BS) < 0.5, -0.0, 0.0)
        elif name == "tiny":  # max/out_max below 2**-127: the scale clips at its minimum
            row[:] = np.clip(row, -1, 1) * in_t.fp.normal_min * 2.0**-4
        elif name == "huge":  # near the largest input value (mxint8: the scale clips)
            row[:] = np.clip(row / 4, -1, 1) * float(in_t.fp.normal_max)
            row[rng.integers(BS)] = float(in_t.fp.normal_max) * rng.choice([-1.0, 1.0])
        elif name == "nan":
            row[rng.integers(BS)] = np.nan
        elif name == "inf":
            row[rng.integers(BS)] = rng.choice([-np.inf, np.inf])
        elif name == "boundary":  # max_abs / out_max an exact power of two
            k = int(rng.integers(-8, 8))
            row[:] = np.clip(row / 4, -1, 1) * out_max * 2.0**k
            row[rng.integers(BS)] = out_max * 2.0**k
        else:  # ties: x / scale half-way between two values of out_t
            # The block's largest value normal_max * 2**k fixes its scale at 2**k
            # (normal_max / out_max is in [1/2, 1) for every value type).
            s = 2.0 ** int(rng.integers(-8, 8))
            row[:] = _ties(rng, out_t, BS) * s
            row[0] = _normal_max(out_t) * s * rng.choice([-1.0, 1.0])
    with np.errstate(over="ignore", invalid="ignore"):
        return round_to(in_t, flat.reshape(shape))


@recipe("CAST_TO_BLOCK_SCALED")
def cast_to_block_scaled(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    in_t, out_t, scale_t = rc.dtype("in_t"), rc.dtype("out_t"), rc.dtype("scale_t")
    least = BS * len(SPECIAL_BLOCKS) if rc.target == "edge" else BS
    shape = _blocked_shape(draw, rc, "input_data", least)
    x = cast_to_values(draw, rc, in_t, out_t, shape)
    return rc.spec_of(
        [TensorDraw("input_data", shape, in_t, x)],
        [
            TensorDraw("output_data", shape, out_t),
            TensorDraw("output_scale", bso.scale_shape(shape, BS), scale_t),
        ],
        attributes={"block_size": block_size_name(rc, BS)},
    )


# -- CAST_FROM_BLOCK_SCALED ---------------------------------------------------------------

# The scale encodings every CAST_FROM case places: 2**-127, 2**127, 1.0 and NaN.
SCALE_EXTREMES = (0x00, 0xFE, 0x7F, mx.UE8M0_NAN)


def every_encoding(rng: np.random.Generator, dt: DType, size: int) -> np.ndarray:
    """``size`` (>= the code count) encodings of ``dt`` holding every one of them at
    least once, shuffled."""
    n = mx.code_count(dt)
    codes = np.concatenate([np.arange(n), rng.integers(0, n, max(0, size - n))])
    return rng.permutation(codes)


def _scales(rng: np.random.Generator, shape: tuple[int, ...], spread: int) -> np.ndarray:
    """Scale encodings around 1.0 (0x7F), within +-``spread`` binades."""
    return mx.UE8M0_BIAS + rng.integers(-spread, spread + 1, shape)


@recipe("CAST_FROM_BLOCK_SCALED")
def cast_from_block_scaled(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    in_t, out_t, scale_t = rc.dtype("in_t"), rc.dtype("out_t"), rc.dtype("scale_t")
    n = mx.code_count(in_t)
    code_blocks = -(-n // BS)
    least = BS * (code_blocks + len(SCALE_EXTREMES))
    if rc.target == "large":
        # The budget gives each of the two inputs half the aim; the scales are a 32nd
        # of the data, so the data holds nearly all of it.
        least = max(least, -(-2 * rc.budget.min_elements * BS // (BS + 1)))
    shape = _blocked_shape(draw, rc, "input_data", least)
    rng = _rng(draw, "input_data: seed")
    size = math.prod(shape)
    nb = size // BS
    # The encodings fill the first blocks (in row-major order: the innermost axis is a
    # whole number of blocks, so element e is in flat block e // 32) ...
    head = min(size, code_blocks * BS)
    codes = np.concatenate([every_encoding(rng, in_t, head), rng.integers(0, n, size - head)])
    scales = _scales(rng, (nb,), draw(st.integers(0, 40), label="input_scale: binades"))
    # ... under ordinary scales, and the extremes take blocks of their own after them.
    extremes = draw(st.booleans(), label="input_scale: extremes") or rc.target == "edge"
    if extremes and nb > code_blocks:
        spots = rng.permutation(np.arange(code_blocks, nb))[: len(SCALE_EXTREMES)]
        scales[spots] = SCALE_EXTREMES[: len(spots)]
    scales[: min(nb, code_blocks)] = np.clip(scales[: min(nb, code_blocks)], 0x70, 0x8E)
    data = mx.from_bits(codes.reshape(shape), in_t)
    scale = mx.from_bits(scales.reshape(bso.scale_shape(shape, BS)), scale_t)
    return rc.spec_of(
        [
            TensorDraw("input_data", shape, in_t, data),
            TensorDraw("input_scale", scale.shape, scale_t, scale),
        ],
        [TensorDraw("output_data", shape, out_t)],
        attributes={"block_size": block_size_name(rc, BS)},
    )


# -- dot products: MATMUL_T_BLOCK_SCALED, CONV2D_BLOCK_SCALED -------------------------------


def quantized(x: np.ndarray, value_t: DType, scale_t: DType) -> tuple[np.ndarray, np.ndarray]:
    """fp32 values cast to (data, scale) tensors by CAST_TO_BLOCK_SCALED's rule."""
    scaled, scale = mx.quantize(round_to(dtypes.FP32, x).astype(np.float64), value_t)
    return mx.encode(scaled, value_t), mx.encode(scale, scale_t)


def free_operand(
    draw: st.DrawFn, value_t: DType, scale_t: DType, shape: tuple[int, ...], label: str,
    *, finite: bool, nan_scale: bool,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Random finite encodings (subnormals and the extremes among them), a few of
    fp8's NaN and infinity unless ``finite``, mxint8's raw -128 and 127, and scales
    within a few binades of 1 (one NaN if asked)."""
    rng = _rng(draw, f"{label}: seed")
    values = mx.decode_bits(np.arange(mx.code_count(value_t)), value_t)
    ok = np.flatnonzero(np.isfinite(values))
    codes = rng.choice(ok, shape)
    flat = codes.reshape(-1)
    if value_t is dtypes.MXINT8 and flat.size >= 2:  # the raw bounds -128 and 127, always
        flat[rng.permutation(flat.size)[:2]] = [0x80, 0x7F]
    specials = np.flatnonzero(~np.isfinite(values))  # fp8's NaN and infinity
    if specials.size and not finite and flat.size >= 2:
        count = draw(st.integers(0, 2), label=f"{label}: special values")
        spots = rng.permutation(flat.size)[:count]
        flat[spots] = rng.choice(specials, len(spots))
    sshape = bso.scale_shape(shape, BS)
    scales = _scales(rng, sshape, 6)
    if nan_scale and scales.size > 1:
        scales.reshape(-1)[rng.integers(scales.size)] = mx.UE8M0_NAN
    return mx.from_bits(codes, value_t), mx.from_bits(scales, scale_t)


def _data_set(draw: st.DrawFn, rc: RecipeContext) -> int:
    if rc.data_set is not None:
        return rc.data_set
    if rc.target == "edge":
        return -1
    return draw(_SETS, label="data set")


def _set_values(s: int, ks: int, p: int, k: np.ndarray, i: np.ndarray) -> np.ndarray:
    b = bound_b(dtypes.FP32, dtypes.FP32, dtypes.FP32)
    return tosa_pro_fp_data(s, ks, p, k, i, b=b)


def _matmul_dims(draw: st.DrawFn, rc: RecipeContext) -> tuple[int, int, int, int, int]:
    budget = max(2 * BS, rc.budget.max_elements)
    n = draw(st.integers(1, 2), label="N")
    d = n if n == 1 or draw(st.booleans(), label="B batched (D = N)") else 1
    k = draw(st.integers(1, max(1, min(8, budget // (BS * 4 * n)))), label="C blocks")
    c = BS * k
    side = max(1, budget // (c * n))
    # Appendix A's statistics need N*H*W >= 1000: aim there where the budget holds it.
    many = draw(st.booleans(), label="many outputs")
    want = math.isqrt(-(-_MIN_DOTS // n)) + 1 if many else 1
    h = draw(st.integers(1, max(1, min(side, 64))), label="H")
    w = draw(st.integers(1, max(1, min(side, 64))), label="W")
    if many and side >= want:
        h, w = max(h, want), max(w, want)
    return n, d, h, w, c


@recipe("MATMUL_T_BLOCK_SCALED")
def matmul_t_block_scaled(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    a_t, b_t, scale_t = rc.dtype("A_t"), rc.dtype("B_t"), rc.dtype("scale_t")
    n, d, h, w, c = _matmul_dims(draw, rc)
    s = _data_set(draw, rc)
    if s >= 0:
        ni, yi, ci = np.ogrid[:n, :h, :c]
        a_data, a_scale = quantized(_set_values(s, c, 0, ci, (ni * h + yi) * c + ci), a_t, scale_t)
        di, xi, cj = np.ogrid[:d, :w, :c]
        b_data, b_scale = quantized(_set_values(s, c, 1, cj, (di * w + xi) * c + cj), b_t, scale_t)
    else:
        nan = draw(st.booleans(), label="a NaN scale")
        a_data, a_scale = free_operand(
            draw, a_t, scale_t, (n, h, c), "A", finite=False, nan_scale=nan
        )
        b_data, b_scale = free_operand(
            draw, b_t, scale_t, (d, w, c), "B", finite=False, nan_scale=False
        )
    return rc.spec_of(
        [
            TensorDraw("A_data", a_data.shape, a_t, a_data),
            TensorDraw("A_scale", a_scale.shape, scale_t, a_scale),
            TensorDraw("B_data", b_data.shape, b_t, b_data),
            TensorDraw("B_scale", b_scale.shape, scale_t, b_scale),
        ],
        [TensorDraw("output_data", (n, h, w), rc.dtype("out_t"))],
        attributes={"block_size": block_size_name(rc, BS)},
        data_set=s,
    )


def _conv_axis(draw: st.DrawFn, label: str, cap: int) -> tuple[int, int, int, int, int, int]:
    """(input size at most ``cap``, kernel, stride, dilation, pad before, pad after)
    whose output size follows exactly: IH - 1 + pads - (KH - 1) * dilation is a multiple
    of the stride."""
    dil = draw(st.integers(1, 2), label=f"dilation_{label}")
    k = draw(st.integers(1, max(1, min(3, (cap + 1) // dil))), label=f"K{label}")
    stride = draw(st.integers(1, 3), label=f"stride_{label}")
    reach = (k - 1) * dil + 1  # the padded extent one output needs
    pads = draw(st.integers(0, min(2, reach - 1)), label=f"pads {label}")
    most = max(1, (cap + pads - reach) // stride + 1)
    out = draw(st.integers(1, most), label=f"O{label}")
    span = (out - 1) * stride + reach  # the padded input extent
    before = draw(st.integers(0, pads), label=f"pad before {label}")
    return span - pads, k, stride, dil, before, pads - before


@recipe("CONV2D_BLOCK_SCALED")
def conv2d_block_scaled(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    in_t, w_t, scale_t, out_t = (rc.dtype(v) for v in ("in_t", "weight_t", "scale_t", "out_t"))
    budget = max(4 * BS, rc.budget.max_elements)
    nn = draw(st.integers(1, 2), label="N")
    k_ic = draw(st.integers(1, max(1, min(3, budget // (BS * 16)))), label="IC blocks")
    ic = BS * k_ic
    room = max(1, math.isqrt(max(1, budget // (ic * nn))) - 2)
    ih, kh, sy, dy, pt, pb = _conv_axis(draw, "y", min(room, 12))
    iw, kw, sx, dx, pl, pr = _conv_axis(draw, "x", min(room, 12))
    oh = (ih - 1 + pt + pb - (kh - 1) * dy) // sy + 1
    ow = (iw - 1 + pl + pr - (kw - 1) * dx) // sx + 1
    oc = draw(st.integers(1, max(1, min(16, budget // (kh * kw * ic)))), label="OC")
    bc = oc if draw(st.booleans(), label="bias per channel") else 1
    padded = pt + pb + pl + pr > 0
    s = _data_set(draw, rc)
    ks = kh * kw * ic
    if s >= 0:
        n_, y_, x_, c_ = np.ogrid[:nn, :ih, :iw, :ic]
        kx = ((y_ % kh) * kw + (x_ % kw)) * ic + c_
        x_data, x_scale = quantized(
            _set_values(s, ks, 0, kx, ((n_ * ih + y_) * iw + x_) * ic + c_), in_t, scale_t
        )
        o_, ky_, kx_, c2 = np.ogrid[:oc, :kh, :kw, :ic]
        kw_ = (ky_ * kw + kx_) * ic + c2
        w_data, w_scale = quantized(
            _set_values(s, ks, 1, kw_, ((o_ * kh + ky_) * kw + kx_) * ic + c2), w_t, scale_t
        )
        bias = round_to(out_t, _set_values(s, ks, 2, np.zeros(bc, np.int64), np.arange(bc)))
    else:
        nan = draw(st.booleans(), label="a NaN scale")
        x_data, x_scale = free_operand(
            draw, in_t, scale_t, (nn, ih, iw, ic), "input", finite=False, nan_scale=nan
        )
        w_data, w_scale = free_operand(
            draw,
            w_t,
            scale_t,
            (oc, kh, kw, ic),
            "weight",
            finite=padded,
            nan_scale=nan and not padded,
        )
        bias = round_to(out_t, _rng(draw, "bias: seed").standard_normal(bc))
    return rc.spec_of(
        [
            TensorDraw("input_data", x_data.shape, in_t, x_data),
            TensorDraw("input_scale", x_scale.shape, scale_t, x_scale),
            TensorDraw("weight_data", w_data.shape, w_t, w_data),
            TensorDraw("weight_scale", w_scale.shape, scale_t, w_scale),
            TensorDraw("bias", (bc,), out_t, bias),
            shape_tensor("pad", [pt, pb, pl, pr]),
            shape_tensor("stride", [sy, sx]),
            shape_tensor("dilation", [dy, dx]),
        ],
        [TensorDraw("output", (nn, oh, ow, oc), out_t)],
        attributes={"block_size": block_size_name(rc, BS)},
        data_set=s,
    )


# -- breakers -----------------------------------------------------------------------------

ALL_OPS = family(
    (
        "CAST_TO_BLOCK_SCALED",
        "CAST_FROM_BLOCK_SCALED",
        "MATMUL_T_BLOCK_SCALED",
        "CONV2D_BLOCK_SCALED",
    )
)


@breaks(*ALL_OPS, clause=bso.BLOCK_SIZE_ONE_CLAUSE)
def block_size_one(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """block_size BLOCK_SIZE_1: a block of one value, which these operators refuse."""
    out = broken(spec, bso.BLOCK_SIZE_ONE_CLAUSE)
    out.attributes["block_size"] = block_size_name(rc, 1)
    return out


def _off_block(draw: st.DrawFn, size: int) -> int:
    """``size`` plus 1..31: no longer a multiple of the block size."""
    return size + draw(st.integers(1, BS - 1), label="innermost made off a block")


def _with_inner(spec: CaseSpec, name: str, inner: int) -> None:
    t = spec.tensor(name)
    spec.reshape_tensor(name, (*t.shape[:-1], inner))


@breaks("CAST_TO_BLOCK_SCALED", "CAST_FROM_BLOCK_SCALED", clause=bso.SHAPE_BLOCK_CLAUSE)
def innermost_off_block(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """The innermost dimension of the values not a multiple of the block size."""
    out = broken(spec, bso.SHAPE_BLOCK_CLAUSE)
    inner = _off_block(draw, spec.tensor("input_data").shape[-1])
    _with_inner(out, "input_data", inner)
    _with_inner(out, "output_data", inner)
    if rc.name == "CAST_TO_BLOCK_SCALED":
        _with_inner(out, "output_scale", max(1, inner // BS))
    return out


@breaks("CAST_TO_BLOCK_SCALED", clause=OUTPUTS_CLAUSE)
def output_scale_shape(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """output_scale one scale too long (its shape is the values' over the block)."""
    out = broken(spec, OUTPUTS_CLAUSE)
    t = spec.tensor("output_scale")
    _with_inner(out, "output_scale", t.shape[-1] + draw(st.integers(1, 3), label="extra scales"))
    return out


@breaks("CAST_FROM_BLOCK_SCALED", clause=bso.SCALE_RANK_CLAUSE)
def scale_rank(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """input_scale of another rank than input_data."""
    out = broken(spec, bso.SCALE_RANK_CLAUSE)
    t = spec.tensor("input_scale")
    # One leading 1 (the innermost still matches), or at the top rank one fewer.
    shape = (1, *t.shape) if len(t.shape) < rc.level["MAX_RANK"] else t.shape[1:]
    out.reshape_tensor("input_scale", shape)
    return out


@breaks("CAST_FROM_BLOCK_SCALED", clause=bso.SCALE_DIM_CLAUSE, optional=True)
def scale_outer_dim(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """A dimension of input_scale before the innermost differs from input_data's."""
    t = spec.tensor("input_scale")
    if len(t.shape) < 2:
        return None
    out = broken(spec, bso.SCALE_DIM_CLAUSE)
    axis = draw(st.integers(0, len(t.shape) - 2), label="scale axis made wrong")
    shape = list(t.shape)
    shape[axis] += 1
    out.reshape_tensor("input_scale", tuple(shape))
    return out


@breaks("CAST_FROM_BLOCK_SCALED", clause=bso.SCALE_INNER_CLAUSE)
def scale_inner_dim(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """input_scale's innermost dimension is not input_data's over the block size."""
    out = broken(spec, bso.SCALE_INNER_CLAUSE)
    t = spec.tensor("input_scale")
    step = draw(st.sampled_from([-1, 1]), label="scales one fewer or one more")
    inner = t.shape[-1] + (step if t.shape[-1] > 1 else 1)
    _with_inner(out, "input_scale", inner)
    return out


@breaks("MATMUL_T_BLOCK_SCALED", clause=bso.MATMUL_C_CLAUSE)
def matmul_c_off_block(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    out = broken(spec, bso.MATMUL_C_CLAUSE)
    inner = _off_block(draw, spec.tensor("A_data").shape[-1])
    _with_inner(out, "A_data", inner)
    _with_inner(out, "B_data", inner)
    return out


@breaks("MATMUL_T_BLOCK_SCALED", clause=bso.MATMUL_D_CLAUSE)
def matmul_d(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """B's batch D neither N nor 1."""
    out = broken(spec, bso.MATMUL_D_CLAUSE)
    n = spec.tensor("A_data").shape[0]
    d = n + draw(st.integers(1, 2), label="D past N")
    for name in ("B_data", "B_scale"):
        t = spec.tensor(name)
        out.reshape_tensor(name, (d, *t.shape[1:]))
    return out


@breaks("MATMUL_T_BLOCK_SCALED", "CONV2D_BLOCK_SCALED", clause=INPUTS_CLAUSE)
def scale_tensor_shape(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A scale tensor one block too long for its data tensor."""
    names = (
        ("A_scale", "B_scale")
        if rc.name == "MATMUL_T_BLOCK_SCALED"
        else ("input_scale", "weight_scale")
    )
    name = draw(st.sampled_from(names), label="scale tensor made wrong")
    out = broken(spec, INPUTS_CLAUSE)
    _with_inner(out, name, spec.tensor(name).shape[-1] + 1)
    return out


def _shape_values(spec: CaseSpec, name: str) -> list[int]:
    v = spec.tensor(name).values
    assert v is not None
    return [int(x) for x in v.reshape(-1)]


def _geometry_breaker(clause: str, arg: str, index_label: str) -> None:
    """One element of pad / stride / dilation made out of range (-1 or 0)."""

    @breaks("CONV2D_BLOCK_SCALED", clause=clause)
    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        out = broken(spec, clause)
        values = _shape_values(spec, arg)
        i = draw(st.integers(0, len(values) - 1), label=index_label)
        values[i] = -1 if arg == "pad" else draw(st.integers(-1, 0), label=f"{arg} below 1")
        out.set_shape_input(arg, values)
        return out

    fn.__name__ = f"conv_{arg}_out_of_range"


_geometry_breaker(PAD_NEGATIVE_CLAUSE, "pad", "pad made negative")
_geometry_breaker(STRIDE_CLAUSE, "stride", "stride made < 1")
_geometry_breaker(DILATION_CLAUSE, "dilation", "dilation made < 1")


@breaks("CONV2D_BLOCK_SCALED", clause=IDIV_CHECK_CLAUSE)
def conv_idiv(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """IH - 1 + pads - (KH - 1) * dilation_y not a multiple of stride_y: pad_bottom one
    more (and stride_y 2 where it was 1 and the extent became even)."""
    out = broken(spec, IDIV_CHECK_CLAUSE)
    pad, stride, dil = (_shape_values(spec, a) for a in ("pad", "stride", "dilation"))
    ih = spec.tensor("input_data").shape[1]
    kh = spec.tensor("weight_data").shape[1]
    pad[1] += 1
    numerator = ih - 1 + pad[0] + pad[1] - (kh - 1) * dil[0]
    if numerator % stride[0] == 0:
        stride[0] = numerator + 1 if numerator > 0 else 2
    if numerator % stride[0] == 0:  # numerator 0: a further pad makes it 1, odd
        pad[1] += 1
    out.set_shape_input("pad", pad)
    out.set_shape_input("stride", stride)
    return out


def _output_breaker(clause: str, axis: int) -> None:
    @breaks("CONV2D_BLOCK_SCALED", clause=clause)
    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        out = broken(spec, clause)
        t = spec.tensor("output")
        shape = list(t.shape)
        shape[axis] += draw(st.integers(1, 2), label="output size made wrong")
        out.replace_tensor("output", shape=tuple(shape))
        return out

    fn.__name__ = f"conv_output_{axis}"


_output_breaker(OH_CLAUSE, 1)
_output_breaker(OW_CLAUSE, 2)


@breaks("CONV2D_BLOCK_SCALED", clause=bso.CONV_BIAS_CLAUSE)
def conv_bias(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    out = broken(spec, bso.CONV_BIAS_CLAUSE)
    oc = spec.tensor("weight_data").shape[0]
    out.reshape_tensor("bias", (oc + draw(st.integers(1, 2), label="BC past OC"),))
    return out


@breaks("CONV2D_BLOCK_SCALED", clause=bso.CONV_IC_CLAUSE)
def conv_ic_off_block(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    out = broken(spec, bso.CONV_IC_CLAUSE)
    inner = _off_block(draw, spec.tensor("input_data").shape[-1])
    _with_inner(out, "input_data", inner)
    _with_inner(out, "weight_data", inner)
    return out

"""Recipes and breakers for the dot-product operators with weights: CONV2D, CONV3D,
DEPTHWISE_CONV2D, TRANSPOSE_CONV2D, FULLY_CONNECTED and MATMUL (TOSA 1.1's MATMUL_T:
strategies/recipes/matmul_t.py, on the helpers here).

Geometry (strategies.recipes.conv_geometry for the convolutions) is drawn so that
every size ERROR_IF holds exactly and every tensor stays within the element budget,
around a drawn number of outputs and KS (strategies.recipes.data_sets): at least
MIN_DOT_PRODUCTS outputs for every floating-point case, whatever its data set, where
the budget holds them.

Integer values keep every running sum inside the accumulator by construction: the
largest |value - zero point| of each operand times KS bounds every running sum, and
the bias is drawn so that adding it cannot leave out_t either.  Now and then some
output channels get all their weights at the weight zero point, so that their
products are 0 and their bias may take any value of out_t, its extremes included.
Float modes take their inputs from the Appendix A data set asked for (or drawn), or
free values (S = -1) with every special value placed (floats have no REQUIRE: inf
and NaN results are valid).

Types are read from the operator's declarations (the data operand's element type,
in_t or 1.1's A_t; the weight's, weight_t or B_t), so TOSA 1.1's mixed-precision modes
draw each operand in its own type.  A block-scaled operand (1.1's bs32_fp8ue8m0_*_t of
CONV2D, CONV3D, TRANSPOSE_CONV2D and MATMUL_T) is drawn as Appendix A says: its data
(data set or free values) in fp32, then cast to the composite by
CAST_TO_BLOCK_SCALED's rule (:func:`block_scaled_operand`); the contraction axis (IC,
C) is a whole number of blocks, and a free-value case may put the scale extremes
(2**127, 2**-127, NaN) in blocks of the weight, and of the data where each output's
bound is its own (local_bound), at taps every output reads.  Operators without a
block-scaled form refuse such modes (:func:`block_scaled_refusal`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from hypothesis import strategies as st

from conformance.block_tensor import (
    BlockScaled,
    is_block_scaled,
    scale_shape,
    scale_type,
    value_type,
)
from conformance.dtypes import FP32, I8, I32_MIN, DType
from conformance.operator_table import OperatorTable, family
from conformance.spec import TypeSupport
from reference import mx
from reference.arguments import ATTRIBUTES_CLAUSE, INPUTS_CLAUSE, OUTPUTS_CLAUSE, TYPES_CLAUSE
from reference.datasets import dataset_inputs
from reference.ops.tensor_conv import (
    ACC_TYPES,
    BIAS_CLAUSE,
    DEPTHWISE_BIAS_CLAUSE,
    DILATION_CLAUSE,
    IDIV_CHECK_CLAUSE,
    MATMUL_ZP_CLAUSE,
    OUT_PAD_X_CLAUSE,
    OUT_PAD_Y_CLAUSE,
    OUTPUT_SIZE_CLAUSES,
    STRIDE_CLAUSE,
    TRANSPOSE_OH_CLAUSE,
    TRANSPOSE_OW_CLAUSE,
    block_clause,
    extra_multiplies_allowed,
    zero_point_is_input,
)
from reference.ops.tensor_pool_fft import PAD_NEGATIVE_CLAUSE
from strategies.block_tensors import SCALE_EXTREMES
from strategies.case import CaseSpec, TensorDraw
from strategies.invalid import breaks, broken, one_element_off
from strategies.recipes import RecipeContext, recipe
from strategies.recipes.block_scaled import quantized
from strategies.recipes.conv_geometry import (
    conv_geometry,
    fc_sizes,
    kernel_channels_cap,
    least_side,
    matmul_sizes,
)
from strategies.recipes.conv_specials import (
    finite_where_skipped,
    skipped_taps,
    zero_weight_for_specials,
)
from strategies.recipes.data_sets import (
    DotAim,
    data_set,
    dot_aim,
    least_outputs,
    local_bound,
    place_specials,
    zero_point,
)
from strategies.valid import NoRecipe, unbuildable_reason
from strategies.values import ValueRange

CONVS = family(("CONV2D", "CONV3D", "DEPTHWISE_CONV2D"))  # forward convolutions
ACC_OPS = family((*CONVS, "TRANSPOSE_CONV2D"))  # the operators with acc_type and local_bound
BIASED = family((*ACC_OPS, "FULLY_CONNECTED"))
ACC_NAMES = {dt: name for name, dt in ACC_TYPES.items()}
# Output channels (MATMUL: columns) a case needs before its weights get infinities and
# extremes: each one leaves its channel's outputs without an accuracy limit.
SPECIAL_CHANNELS = 8
_THREE = st.integers(0, 2)
_FOUR = st.integers(0, 3)


def block_scaled_refusal(mode: TypeSupport) -> str | None:
    """Why no case of ``mode`` can be drawn yet, or None (strategies.valid's
    ``unbuildable_reason``: a block-scaled type, which the graph IR cannot hold)."""
    why = unbuildable_reason(mode)
    return None if why is None else f"{mode.operator} [{mode.mode}]: {why}"


def refuse_block_scaled(rc: RecipeContext) -> None:
    """Raise NoRecipe, with the reason, for a mode no case can be drawn of."""
    reason = block_scaled_refusal(rc.mode)
    if reason is not None:
        raise NoRecipe(reason)


def drawable(rc: RecipeContext) -> bool:
    """A breaker's ``applies``: the mode's valid cases can be drawn."""
    return block_scaled_refusal(rc.mode) is None


# -- block-scaled operands (TOSA 1.1) --------------------------------------------------------


def stand_in(dt: DType) -> DType:
    """The type an operand's data is drawn in: fp32 for a block-scaled composite
    (Appendix A: generated in fp, then cast to the composite), else its own."""
    return FP32 if is_block_scaled(dt) else dt


def block_of(*types: DType) -> int:
    """The block size the contraction axis must be a multiple of (1: none)."""
    return max((dt.block_size for dt in types if is_block_scaled(dt)), default=1)


def block_scaled_operand(
    draw: st.DrawFn, x: np.ndarray, dt: DType, extremes_at: np.ndarray | None, label: str
) -> BlockScaled:
    """``x`` (fp32) cast to composite ``dt`` by CAST_TO_BLOCK_SCALED's rule; where
    ``extremes_at`` (a mask over the scale blocks) is given, some of those blocks get
    the scale extremes 2**-127, 2**127, 1.0 and NaN instead of their own."""
    with np.errstate(invalid="ignore"):  # NaN / inf data: its block takes the NaN scale
        data, scale = quantized(x.astype(np.float64), value_type(dt), scale_type(dt))
    if extremes_at is not None and extremes_at.any():
        seed = draw(st.integers(0, 2**32 - 1), label=f"{label}: scale extremes at")
        spots = np.random.default_rng(seed).permutation(np.flatnonzero(extremes_at))
        codes = mx.to_bits(scale, scale_type(dt)).copy().reshape(-1)
        picked = spots[: len(SCALE_EXTREMES)]
        codes[picked] = SCALE_EXTREMES[: len(picked)]
        scale = mx.from_bits(codes.reshape(scale.shape), scale_type(dt))
    return BlockScaled(dt, data, scale)


def _read_taps(op: str, axes: Sequence[Any], shape: tuple[int, ...]) -> np.ndarray:
    """A mask over a weight's scale blocks ([OC, kernel..., IC / 32]): the kernel
    offsets every output reads the input at (an extreme scale there meets no tap a
    backend may skip or not)."""
    skipped = np.zeros((), bool)
    for a in axes:
        skipped = np.logical_or.outer(skipped, skipped_taps(a, op == "TRANSPOSE_CONV2D"))
    return np.broadcast_to(~skipped[None, ..., None], shape)


def with_block_scaled(
    draw: st.DrawFn,
    rc: RecipeContext,
    tensors: list[TensorDraw],
    s: int,
    edge_masks: dict[str, np.ndarray | bool],
) -> list[TensorDraw]:
    """The drawn tensors with every block-scaled one cast from its fp32 data; a
    free-value case (S = -1) places the scale extremes where ``edge_masks`` allows
    (a mask over the tensor's scale blocks, True: any block; always for an ``edge``
    target, else when drawn)."""
    out = []
    extremes = s < 0 and (rc.target == "edge" or draw(st.booleans(), label="block scale extremes"))
    for t in tensors:
        if t.values is None or not is_block_scaled(t.dtype):
            out.append(t)
            continue
        allowed = edge_masks.get(t.name, False) if extremes else False
        mask = None
        if allowed is True:
            mask = np.ones(scale_shape(t.shape, t.dtype.block_size), bool)
        elif allowed is not False:
            mask = np.asarray(allowed)
        v = block_scaled_operand(draw, t.values, t.dtype, mask, t.name)
        out.append(TensorDraw(t.name, t.shape, t.dtype, v.values, t.const, v.scales))
    return out


# -- values --------------------------------------------------------------------------------


def _max_deviation(dt: DType, zp: int) -> int:
    return max(zp - dt.int_range.min, dt.int_range.max - zp)


def _deviation_caps(
    x_dt: DType, x_zp: int, w_dt: DType, w_zp: int, ks: int, acc: DType
) -> tuple[int, int]:
    """Caps on |x - x_zp| and |w - w_zp| whose product times KS is at most half the
    accumulator (the other half is the bias's).  The whole types fit for every budget
    up to KS = 16384 (i8 x i8 in i32); only larger dot products narrow the values."""
    half = acc.int_range.max // 2
    dx, dw = _max_deviation(x_dt, x_zp), _max_deviation(w_dt, w_zp)
    if ks * dx * dw <= half:
        return dx, dw
    dx = min(dx, max(1, half // (ks * dw)))
    if ks * dx * dw > half:
        dw = max(1, half // (ks * dx))
    return dx, dw


def _int_operand(
    draw: st.DrawFn,
    rc: RecipeContext,
    dt: DType,
    shape: tuple[int, ...],
    zp: int,
    dev: int,
    label: str,
) -> np.ndarray:
    lo = max(dt.int_range.min, zp - dev)
    hi = min(dt.int_range.max, zp + dev)
    r = None if (lo, hi) == (dt.min, dt.max) else ValueRange(low=lo, high=hi)
    return rc.values(draw, dt, shape, r, label=label)


def _max_abs(a: np.ndarray) -> int:
    return int(np.max(np.abs(a.astype(np.int64)))) if a.size else 0


@dataclass(frozen=True)
class Operand:
    name: str
    shape: tuple[int, ...]
    dtype: DType
    zp: int | float = 0


def _channel_view(op: str, w: np.ndarray) -> np.ndarray:
    """The weights as [output channel, taps]: OC leads the convolutions' and
    FULLY_CONNECTED's weights; DEPTHWISE_CONV2D's output channel c * M + m is the
    weight column [:, :, c, m]."""
    if op == "DEPTHWISE_CONV2D":
        kh, kw, c, m = w.shape
        return w.reshape(kh * kw, c * m).T
    return w.reshape(w.shape[0], -1)


def _int_values(
    draw: st.DrawFn,
    rc: RecipeContext,
    x: Operand,
    w: Operand,
    bias: Operand | None,
    ks: int,
    acc: DType,
) -> dict[str, np.ndarray]:
    """Values whose every running sum fits ``acc`` and whose bias addition fits out_t."""
    x_zp, w_zp = int(x.zp), int(w.zp)
    dx, dw = _deviation_caps(x.dtype, x_zp, w.dtype, w_zp, ks, acc)
    xv = _int_operand(draw, rc, x.dtype, x.shape, x_zp, dx, x.name)
    wv = _int_operand(draw, rc, w.dtype, w.shape, w_zp, dw, w.name)
    out = {x.name: xv, w.name: wv}
    if bias is None:
        return out
    worst = ks * _max_abs(xv.astype(np.int64) - x_zp) * _max_abs(wv.astype(np.int64) - w_zp)
    dt = bias.dtype
    lo, hi = dt.int_range
    r = None if worst == 0 else ValueRange(low=lo + worst, high=hi - worst)
    bv = rc.values(draw, dt, bias.shape, r, label=bias.name)
    rows = _channel_view(rc.name, wv)
    # Some output channels with every weight at weight_zp (a pruned channel): their
    # products are all 0, so their bias may take any value of out_t.  Never all of
    # them, so the case still computes dot products.
    if bias.shape[0] == rows.shape[0] >= 2 and draw(_FOUR, label="pruned channels") == 0:
        count = draw(st.integers(1, rows.shape[0] // 2), label="pruned channel count")
        seed = draw(st.integers(0, 2**32 - 1), label="pruned channels: which")
        pruned = np.random.default_rng(seed).choice(rows.shape[0], size=count, replace=False)
        rows = rows.copy()
        rows[pruned] = w_zp
        wv = _from_channels(rc.name, rows, wv.shape)
        full = rc.values(draw, dt, bias.shape, label=f"{bias.name}: pruned channels")
        bv = bv.copy()
        bv[pruned] = full[pruned]
        out[w.name] = wv
    out[bias.name] = bv
    return out


def _from_channels(op: str, rows: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    if op == "DEPTHWISE_CONV2D":
        return np.ascontiguousarray(rows.T.reshape(shape))
    return np.ascontiguousarray(rows.reshape(shape))


def _float_values(
    draw: st.DrawFn,
    rc: RecipeContext,
    operands: Sequence[Operand],
    data_peak: bool,
    channels: int,
    channel_axis: int,
) -> dict[str, np.ndarray]:
    """Free values (S = -1): small values, the unit range (sums stay well inside), or
    the whole finite range (products overflow to inf: still valid), with every
    special value placed in the data; the weights get them too when there are
    SPECIAL_CHANNELS output channels or more.  Where the rule takes the data's
    largest magnitude for every output (``data_peak``: local_bound false), the data
    gets only the specials that cannot raise it (+-0, subnormals, the smallest
    normals, NaN): an infinity there would leave no output with an accuracy limit.
    The whole range is the data's, or an operand's own where that is narrower (a
    mixed-precision mode's fp8 weights against fp32 data)."""
    top = operands[0].dtype.fp.normal_max
    kind = draw(_FOUR, label="value regime")
    out = {}
    for o in operands:
        peak = min(top, o.dtype.fp.normal_max)
        r = [None, None, ValueRange(-1.0, 1.0), ValueRange(-peak, peak)][kind]
        out[o.name] = rc.values(draw, o.dtype, o.shape, r, label=o.name)
    data, weight = operands[0], operands[1]
    out[data.name] = place_specials(
        draw, data.dtype, out[data.name], data.name, peak_safe=data_peak
    )
    out[weight.name] = place_specials(
        draw, weight.dtype, out[weight.name], weight.name, peak_safe=channels < SPECIAL_CHANNELS
    )
    zero_weight_for_specials(out, data.name, weight.name, channel_axis)
    return out


def dot_values(
    draw: st.DrawFn,
    rc: RecipeContext,
    s: int,
    operands: Sequence[Operand],
    ks: int,
    acc: DType,
    *,
    data_peak: bool = False,
    channels: int = 1,
    channel_axis: int = 0,
) -> dict[str, np.ndarray]:
    """Inputs of data set ``s``: Appendix A's, free floats, or integers that fit.
    ``channel_axis`` is the weight's axis of output channels (columns), one of which
    meets the data's special values through zero weights."""
    x, w = operands[0], operands[1]
    if s >= 0:
        return dataset_inputs(
            rc.name,
            s,
            {o.name: o.shape for o in operands},
            {o.name: o.dtype for o in operands},
            acc_dtype=acc,
            out_dtype=rc.dtype("out_t"),
        )
    if x.dtype.is_float:
        return _float_values(draw, rc, operands, data_peak, channels, channel_axis)
    bias = operands[2] if len(operands) > 2 else None
    return _int_values(draw, rc, x, w, bias, ks, acc)


def dot_tensors(
    draw: st.DrawFn, operands: Sequence[Operand], values: dict[str, np.ndarray], const_from: int
) -> list[TensorDraw]:
    """TensorDraws in argument order; weights and bias (``operands[const_from:]``) are
    constants in networks, so they are drawn constant or graph inputs."""
    const = draw(st.booleans(), label="weights constant")
    return [
        TensorDraw(o.name, o.shape, o.dtype, values[o.name], const and k >= const_from)
        for k, o in enumerate(operands)
    ]


def dot_aim_for(draw: st.DrawFn, rc: RecipeContext, dt: DType, ks_cap: int) -> DotAim:
    return dot_aim(draw, rc, dt.is_float, ks_cap)


# -- CONV2D, CONV3D, DEPTHWISE_CONV2D, TRANSPOSE_CONV2D ------------------------------------


@recipe(*ACC_OPS)
def convolution(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    refuse_block_scaled(rc)
    in_tc, w_tc = rc.arg_dtype("input"), rc.arg_dtype("weight")
    in_t, w_t = stand_in(in_tc), stand_in(w_tc)  # the types the data is drawn in
    out_t, acc = rc.dtype("out_t"), rc.dtype("acc_t")
    rank = 3 if rc.name == "CONV3D" else 2
    s = data_set(draw, rc, in_t)
    ks_cap = kernel_channels_cap(rc, least_outputs(rc, in_t.is_float))
    aim = dot_aim_for(draw, rc, in_t, ks_cap)
    g = conv_geometry(draw, rc, rank, aim, block_of(in_tc, w_tc))
    kernel = tuple(a.kernel for a in g.axes)
    sizes_in = tuple(a.size_in for a in g.axes)
    sizes_out = tuple(a.size_out for a in g.axes)
    if rc.name == "DEPTHWISE_CONV2D":
        w_shape = (*kernel, g.channels, g.out_channels)
        oc = g.channels * g.out_channels
        ks = math.prod(kernel)
    else:
        w_shape = (g.out_channels, *kernel, g.channels)
        oc = g.out_channels
        ks = math.prod(kernel) * g.channels
    # An edge case keeps a bias per channel: one element cannot hold every special value.
    broadcast = draw(st.booleans(), label="bias broadcast") and rc.target != "edge"
    bc = 1 if broadcast else oc
    x_shape = (g.n, *sizes_in, g.channels)
    x = Operand("input", x_shape, in_t, zero_point(draw, rc, in_t, "input_zp"))
    w = Operand("weight", w_shape, w_t, zero_point(draw, rc, w_t, "weight_zp"))
    bias = Operand("bias", (bc,), out_t)
    attributes: dict[str, Any] = {}
    lb = local_bound(draw, rc)
    if lb is not None:  # absent: the default, false
        attributes["local_bound"] = lb
    values = dot_values(draw, rc, s, [x, w, bias], ks, acc, data_peak=not lb, channels=oc)
    if extra_multiplies_allowed(rc.spec.revision):
        finite_where_skipped(values, rc.name, g.axes, "weight")
    if rc.name == "TRANSPOSE_CONV2D":
        attributes["out_pad"] = tuple(p for a in g.axes for p in (a.pad_before, a.pad_after))
        attributes["stride"] = tuple(a.stride for a in g.axes)
    else:
        attributes["pad"] = tuple(p for a in g.axes for p in (a.pad_before, a.pad_after))
        attributes["stride"] = tuple(a.stride for a in g.axes)
        attributes["dilation"] = tuple(a.dilation for a in g.axes)
    # acc_type must name the mode's accumulator: the builder binds acc_t from it.
    attributes["acc_type"] = ACC_NAMES[acc]
    attributes["input_zp"] = x.zp
    attributes["weight_zp"] = w.zp
    tensors = dot_tensors(draw, [x, w, bias], values, 1)
    if in_t is not in_tc or w_t is not w_tc:
        tensors = [replace(t, dtype=in_tc if t.name == "input" else w_tc)
                   if t.name in ("input", "weight") else t for t in tensors]  # fmt: skip
        w_scales = (w_shape[0], *kernel, -(-g.channels // block_of(w_tc)))
        # Without local_bound the data's peak is every output's bound: no extremes there.
        masks: dict[str, np.ndarray | bool] = {
            "weight": _read_taps(rc.name, g.axes, w_scales),
            "input": bool(lb),
        }
        tensors = with_block_scaled(draw, rc, tensors, s, masks)
    return rc.spec_of(
        tensors,
        [TensorDraw("output", (g.n, *sizes_out, oc), out_t)],
        attributes=attributes,
        data_set=s,
    )


# -- FULLY_CONNECTED -------------------------------------------------------------------------


@recipe("FULLY_CONNECTED")
def fully_connected(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    in_t, w_t, out_t = (rc.dtype(v) for v in ("in_t", "weight_t", "out_t"))
    s = data_set(draw, rc, in_t)
    aim = dot_aim_for(
        draw, rc, in_t, rc.budget.max_elements // least_side(least_outputs(rc, in_t.is_float))
    )
    n, ic, oc = fc_sizes(draw, rc, aim)
    # An edge case keeps a bias per channel: one element cannot hold every special value.
    broadcast = draw(st.booleans(), label="bias broadcast") and rc.target != "edge"
    bc = 1 if broadcast else oc
    x = Operand("input", (n, ic), in_t, zero_point(draw, rc, in_t, "input_zp"))
    w = Operand("weight", (oc, ic), w_t, zero_point(draw, rc, w_t, "weight_zp"))
    bias = Operand("bias", (bc,), out_t)
    # FULLY_CONNECTED accumulates in out_t: its modes name no acc_t.
    values = dot_values(draw, rc, s, [x, w, bias], ic, out_t, channels=oc)
    return rc.spec_of(
        dot_tensors(draw, [x, w, bias], values, 1),
        [TensorDraw("output", (n, oc), out_t)],
        attributes={"input_zp": x.zp, "weight_zp": w.zp},
        data_set=s,
    )


# -- MATMUL ----------------------------------------------------------------------------------


def matmul_case(draw: st.DrawFn, rc: RecipeContext, *, transposed: bool) -> CaseSpec:
    """A MATMUL case (B [N, C, W]), or a MATMUL_T one (B [D, W, C], D = N or, drawn,
    1: B broadcast); A and B each in their declared type (in_t, or 1.1's A_t and B_t)."""
    refuse_block_scaled(rc)
    a_tc, b_tc, out_t = rc.arg_dtype("A"), rc.arg_dtype("B"), rc.dtype("out_t")
    a_t, b_t = stand_in(a_tc), stand_in(b_tc)  # the types the data is drawn in
    s = data_set(draw, rc, a_t)
    aim = dot_aim_for(
        draw, rc, a_t, rc.budget.max_elements // least_side(least_outputs(rc, a_t.is_float))
    )
    n, h, c, w = matmul_sizes(draw, rc, aim, block_of(a_tc, b_tc))
    b_shape = (n, c, w)
    if transposed:
        d = 1 if n > 1 and draw(st.booleans(), label="B broadcast") else n
        b_shape = (d, w, c)
    a = Operand("A", (n, h, c), a_t, zero_point(draw, rc, a_t, "A_zp"))
    b = Operand("B", b_shape, b_t, zero_point(draw, rc, b_t, "B_zp"))
    # MATMUL_T's columns are B's axis 1 ([D, W, C]); MATMUL's B has C as axis 1.
    values = dot_values(
        draw, rc, s, [a, b], c, out_t, channels=w, channel_axis=1 if transposed else 0
    )
    tensors = dot_tensors(draw, [a, b], values, 1)
    if a_t is not a_tc or b_t is not b_tc:
        tensors = [replace(t, dtype=a_tc if t.name == "A" else b_tc) for t in tensors]
        # MATMUL_T's bound is per output (no local_bound attribute: always local).
        tensors = with_block_scaled(draw, rc, tensors, s, {"A": True, "B": True})
    return rc.spec_of(
        tensors,
        [TensorDraw("output", (n, h, w), out_t)],
        attributes={"A_zp": a.zp, "B_zp": b.zp},
        data_set=s,
    )


@recipe("MATMUL")
def matmul(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    return matmul_case(draw, rc, transposed=False)


# -- breakers: types and zero points ---------------------------------------------------------


@breaks(*ACC_OPS, clause=TYPES_CLAUSE, applies=drawable)
def acc_type_unsupported(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """An acc_type no mode pairs with these tensor types (i8 with FP32, fp32 with FP16,
    ...), or an enumeration value that names no accumulator (INT8; BF16 where no mode
    of these types accumulates in it: every mode before TOSA 1.1)."""
    ts = {v: rc.dtype(v) for v in ("in_t", "weight_t", "out_t")}
    allowed = {
        m.dtype("acc_t") for m in rc.op_spec.modes if all(m.dtype(v) is dt for v, dt in ts.items())
    }
    others = sorted(n for n, acc in ACC_TYPES.items() if acc not in allowed and n != "BF16")
    names = [*others, "INT8", *(["BF16"] if ACC_TYPES["BF16"] not in allowed else [])]
    out = broken(spec, TYPES_CLAUSE)
    out.attributes["acc_type"] = draw(st.sampled_from(names), label="acc_type")
    return out


def _nonzero_zp(draw: st.DrawFn, dt: DType, label: str) -> int | float:
    """A zero point other than 0 that the type holds."""
    if dt.is_float:
        return draw(st.sampled_from([1.0, -1.0, 0.5, -2.0]), label=label)
    lo, hi = dt.int_range
    return draw(st.one_of(st.integers(lo, -1), st.integers(1, hi)), label=label)


def _zp_breaker(name: str, type_var: str, clause: str) -> None:
    def applies(rc: RecipeContext) -> bool:  # 1.0's input zero points: tensor_zero_points
        return rc.dtype(type_var) is not I8 and not zero_point_is_input(rc.op_spec, name)

    # Static ``applies`` rather than a None from the breaker: a breaker that never
    # applies to a mode would make Hypothesis redraw valid cases until it gives up.
    @breaks(*BIASED, clause=clause, applies=applies)
    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        """A non-zero zero point where the type is not i8 (i4, i16 or float); the
        other zero point stays valid."""
        out = broken(spec, clause)
        out.attributes[name] = _nonzero_zp(draw, rc.dtype(type_var), name)
        return out

    fn.__name__ = f"{name}_not_i8"


_zp_breaker("input_zp", "in_t", "in_t != i8_t && input_zp != 0")
_zp_breaker("weight_zp", "weight_t", "weight_t != i8_t && weight_zp != 0")

MATMUL_ZP = MATMUL_ZP_CLAUSE


def _matmul_zp_attributes(rc: RecipeContext) -> bool:
    """The draft's zero-point attributes (its A and B are both in_t)."""
    return not zero_point_is_input(rc.op_spec, "A_zp") and rc.dtype("in_t") is not I8


@breaks("MATMUL", clause=MATMUL_ZP, applies=_matmul_zp_attributes)
def matmul_zero_point(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    out = broken(spec, MATMUL_ZP)
    dt = rc.dtype("in_t")
    which = draw(st.sampled_from([("A_zp",), ("B_zp",), ("A_zp", "B_zp")]), label="zero points")
    for name in which:
        out.attributes[name] = _nonzero_zp(draw, dt, name)
    return out


# -- breakers: attributes --------------------------------------------------------------------


def _attr(spec: CaseSpec, name: str) -> list[int]:
    return [int(v) for v in spec.attributes[name]]


def _below(draw: st.DrawFn, high: int, label: str) -> int:
    """An i32 value at most ``high``, usually just below the boundary."""
    return draw(
        st.one_of(st.integers(max(I32_MIN, high - 3), high), st.integers(I32_MIN, high)),
        label=label,
    )


def _below_breaker(ops: Sequence[str], attribute: str, clause: str, high: int) -> None:
    """Some element of ``attribute`` at most ``high`` (negative pads, strides or
    dilations below 1); the checks before it still hold."""

    @breaks(*ops, clause=clause, applies=drawable)
    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        out = broken(spec, clause)
        vals = _attr(spec, attribute)
        i = draw(st.integers(0, len(vals) - 1), label=f"{attribute} element")
        vals[i] = _below(draw, high, f"bad {attribute}")
        out.attributes[attribute] = tuple(vals)
        return out

    fn.__name__ = f"{attribute}_below_{high + 1}_{ops[0]}"


_2D = family(("CONV2D", "DEPTHWISE_CONV2D"))
_below_breaker(_2D, "pad", PAD_NEGATIVE_CLAUSE, -1)
_below_breaker(
    ("CONV3D",),
    "pad",
    "pad_d0 < 0 || pad_d1 < 0 || pad_top < 0 || pad_bottom < 0 || pad_left < 0 || pad_right < 0",
    -1,
)
_below_breaker((*_2D, "TRANSPOSE_CONV2D"), "stride", STRIDE_CLAUSE, 0)
_below_breaker(("CONV3D",), "stride", "stride_d < 1 || stride_y < 1 || stride_x < 1", 0)
_below_breaker(_2D, "dilation", DILATION_CLAUSE, 0)
_below_breaker(("CONV3D",), "dilation", "dilation_d < 1 || dilation_y < 1 || dilation_x < 1", 0)


def _spatial(spec: CaseSpec) -> int:
    return len(spec.inputs[0].shape) - 2


@breaks(*ACC_OPS, clause=ATTRIBUTES_CLAUSE, applies=drawable)
def attribute_length(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """pad (out_pad), stride or dilation with one element too many or too few."""
    names = [a for a in ("pad", "out_pad", "stride", "dilation") if a in spec.attributes]
    return one_element_off(draw, spec, names, _attr)


# -- breakers: output sizes ------------------------------------------------------------------

IDIV_CLAUSE = IDIV_CHECK_CLAUSE


def _kernel(spec: CaseSpec) -> list[int]:
    w = spec.inputs[1].shape
    return list(w[:-2] if spec.operator == "DEPTHWISE_CONV2D" else w[1:-1])


@breaks(*CONVS, clause=IDIV_CLAUSE, applies=drawable)
def idiv_remainder(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """On one axis, a stride of 2 or more that does not divide the padded extent: the
    stride kept (or raised from 1), the input grown by less than a stride if needed.
    The axes before it keep both their checks."""
    out = broken(spec, IDIV_CLAUSE)
    j = draw(st.integers(0, _spatial(spec) - 1), label="axis")
    stride, dilation, pad = _attr(spec, "stride"), _attr(spec, "dilation"), _attr(spec, "pad")
    s_cap = max(2, min(rc.level["MAX_STRIDE"], 8))
    s = stride[j] if stride[j] >= 2 else draw(st.integers(2, s_cap), label="new stride")
    stride[j] = s
    shape = list(spec.inputs[0].shape)
    k = _kernel(spec)[j]
    numerator = shape[1 + j] - 1 + pad[2 * j] + pad[2 * j + 1] - (k - 1) * dilation[j]
    if numerator % s == 0:
        shape[1 + j] += draw(st.integers(1, s - 1), label="input grown by")
    out.attributes["stride"] = tuple(stride)
    out.reshape_tensor("input", tuple(shape))
    return out


def _resize_output(draw: st.DrawFn, out: CaseSpec, dim: int) -> None:
    """Output dimension ``dim`` one to three larger or smaller (never below 1)."""
    shape = list(out.tensor("output").shape)
    d = draw(st.integers(1, 3), label="output size off by")
    if shape[dim] > d and draw(st.booleans(), label="smaller"):
        shape[dim] -= d
    else:
        shape[dim] += d
    out.replace_tensor("output", shape=tuple(shape))


def _size_breaker(ops: Sequence[str], dim: int, clause: str) -> None:
    @breaks(*ops, clause=clause, applies=drawable)
    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        out = broken(spec, clause)
        _resize_output(draw, out, dim)
        return out

    fn.__name__ = f"size_breaker_{ops[0]}_{dim}"


_size_breaker(("CONV3D",), 1, OUTPUT_SIZE_CLAUSES["OD"])
_size_breaker(("CONV3D",), 2, OUTPUT_SIZE_CLAUSES["OH"])
_size_breaker(("CONV3D",), 3, OUTPUT_SIZE_CLAUSES["OW"])
_size_breaker(_2D, 1, OUTPUT_SIZE_CLAUSES["OH"])
_size_breaker(_2D, 2, OUTPUT_SIZE_CLAUSES["OW"])
_size_breaker(("TRANSPOSE_CONV2D",), 1, TRANSPOSE_OH_CLAUSE)
_size_breaker(("TRANSPOSE_CONV2D",), 2, TRANSPOSE_OW_CLAUSE)


def _out_pad_breaker(first: int, kernel_dim: int, clause: str) -> None:
    """out_pad element ``first`` or ``first + 1`` at most -K (K = weight dimension
    ``kernel_dim``); the top/bottom pair is checked first and stays valid."""

    @breaks("TRANSPOSE_CONV2D", clause=clause, applies=drawable)
    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        out = broken(spec, clause)
        pads = _attr(spec, "out_pad")
        k = spec.inputs[1].shape[kernel_dim]
        i = first + draw(st.integers(0, 1), label="out_pad element")
        pads[i] = _below(draw, -k, "out_pad at most -K")
        out.attributes["out_pad"] = tuple(pads)
        return out

    fn.__name__ = f"out_pad_breaker_{first}"


_out_pad_breaker(0, 1, OUT_PAD_Y_CLAUSE)
_out_pad_breaker(2, 2, OUT_PAD_X_CLAUSE)


# -- breakers: bias and argument shapes ----------------------------------------------------


def _bias_breaker(ops: Sequence[str], clause: str) -> None:
    @breaks(*ops, clause=clause, applies=drawable)
    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        """A bias of neither the output channel count nor 1."""
        out = broken(spec, clause)
        oc = spec.tensor("output").shape[-1]
        wrong = [v for v in range(2, oc + 4) if v != oc]
        out.reshape_tensor("bias", (draw(st.sampled_from(wrong), label="BC"),))
        return out

    fn.__name__ = f"bias_breaker_{ops[0]}"


_bias_breaker(("CONV2D", "CONV3D", "TRANSPOSE_CONV2D", "FULLY_CONNECTED"), BIAS_CLAUSE)
_bias_breaker(("DEPTHWISE_CONV2D",), DEPTHWISE_BIAS_CLAUSE)

# The dimension of the second input that must equal one of the first input's: (second
# input's dim, first input's dim) per operator (IC, C, or MATMUL's C and N).
_SHARED_DIMS: OperatorTable[list[tuple[int, int]]] = OperatorTable(
    {
        "CONV2D": [(3, 3)],
        "CONV3D": [(4, 4)],
        "TRANSPOSE_CONV2D": [(3, 3)],
        "DEPTHWISE_CONV2D": [(2, 3)],
        "FULLY_CONNECTED": [(1, 1)],
        "MATMUL": [(1, 2), (0, 0)],
        "MATMUL_T": [(2, 2)],  # B [D, W, C]; D is MATMUL_T's own rule (matmul_t.b_batches)
    }
)


@breaks(*_SHARED_DIMS, clause=INPUTS_CLAUSE, applies=drawable)
def inputs_disagree(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """The weight's (B's) channels or batch not the input's, a bias of rank 2, or an
    input of another rank."""
    out = broken(spec, INPUTS_CLAUSE)
    first, second = spec.inputs[0], spec.inputs[1]
    how = draw(st.sampled_from(["shared", "rank", "bias"]), label="input made wrong")
    if how == "bias" and len(spec.inputs) > 2:
        bias = spec.inputs[2]
        out.reshape_tensor(bias.name, (*bias.shape, 1))
    elif how == "rank":
        other = (1, *first.shape) if draw(st.booleans(), label="one more") else first.shape[1:]
        out.reshape_tensor(first.name, other)
    else:
        dim, _ = draw(st.sampled_from(_SHARED_DIMS[spec.operator]), label="dimension")
        dims = list(second.shape)
        dims[dim] += draw(st.integers(1, 3), label="added to it")
        out.reshape_tensor(second.name, tuple(dims))
    return out


@breaks(*ACC_OPS, clause=OUTPUTS_CLAUSE, applies=drawable)
def output_disagrees(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """An output whose N or channel count is not the inputs', or of another rank (the
    generic breaker leaves these operators alone: OH and OW tie to no input)."""
    out = broken(spec, OUTPUTS_CLAUSE)
    shape = list(spec.tensor("output").shape)
    how = draw(st.sampled_from(["N", "OC", "rank"]), label="output made wrong")
    if how == "rank":
        shape = [1, *shape] if draw(st.booleans(), label="one more") else shape[1:]
    else:
        shape[0 if how == "N" else -1] += draw(st.integers(1, 3), label="added to it")
    out.replace_tensor("output", shape=tuple(shape))
    return out


# -- breakers: block-scaled operands (TOSA 1.1) ------------------------------------------------

# Per operator: its two operands, the contraction axis's name, and that axis's place in
# each operand's shape (innermost in both).
_BLOCK_OPERANDS = OperatorTable(
    {
        "CONV2D": ("input", "weight", "IC"),
        "CONV3D": ("input", "weight", "IC"),
        "TRANSPOSE_CONV2D": ("input", "weight", "IC"),
        "MATMUL_T": ("A", "B", "C"),
    }
)


def _block_breaker(first: bool) -> None:
    """The block-size ERROR_IF of the first operand (``first``) or, where the first
    is not block-scaled, of the second: the contraction axis of both operands moved
    off a whole number of blocks (by 1 to block - 1, either way), every other check
    still met."""

    def which(rc: RecipeContext) -> tuple[str, DType] | None:
        ops = _BLOCK_OPERANDS.get(rc.name)
        if ops is None:
            return None
        a, b = rc.arg_dtype(ops[0]), rc.arg_dtype(ops[1])
        if first:
            return (ops[0], a) if is_block_scaled(a) else None
        return (ops[1], b) if is_block_scaled(b) and not is_block_scaled(a) else None

    def applies(rc: RecipeContext) -> bool:
        return which(rc) is not None

    for op, (x_name, w_name, axis) in _BLOCK_OPERANDS.items():

        def fn(
            draw: st.DrawFn,
            rc: RecipeContext,
            spec: CaseSpec,
            axis: str = axis,
            names: tuple[str, str] = (x_name, w_name),
        ) -> CaseSpec:
            found = which(rc)
            assert found is not None
            arg, dt = found
            clause = block_clause(rc.op_spec.argument(arg).element_type, axis)
            out = broken(spec, clause)
            size = spec.tensor(names[0]).shape[-1]
            off = draw(st.integers(1, dt.block_size - 1), label=f"{axis} off the block by")
            fewer = size > off and draw(st.booleans(), label="fewer")
            new = size - off if fewer else size + off
            for name in names:
                t = out.tensor(name)
                out.reshape_tensor(name, (*t.shape[:-1], new))
            return out

        # Each operator's clause names its own type variable and axis: one breaker
        # per operator and clause.
        var = ("in_t" if first else "weight_t") if axis == "IC" else ("A_t" if first else "B_t")
        fn.__name__ = f"{axis.lower()}_off_block_{'first' if first else 'second'}_{op}"
        breaks(op, clause=block_clause(var, axis), applies=applies)(fn)


_block_breaker(True)
_block_breaker(False)

"""Recipes and breakers for the dot-product operators with weights: CONV2D, CONV3D,
DEPTHWISE_CONV2D, TRANSPOSE_CONV2D, FULLY_CONNECTED and MATMUL.

Geometry is drawn so that every size ERROR_IF holds exactly.  A convolution axis
draws kernel, dilation, stride, two pads (sometimes beyond what the kernel needs) and
the output size, and the input size follows as ``(O - 1) * stride + (K - 1) * dilation
+ 1 - pads`` (idiv_check divides evenly); a transposed axis draws kernel, stride, the
out_pads (negative ones crop, down to 1 - K) and the input size, and the output
follows from the formula.  Input, weight and output each stay within the element
budget.

Integer values keep every running sum inside the accumulator by construction: the
largest |value - zero point| of each operand times KS bounds every running sum, and
the bias is drawn so that adding it cannot leave out_t either.  Float modes take
their inputs from an Appendix A data set when one is asked for (or drawn), with at
least MIN_DOT_PRODUCTS outputs for the statistical sets 3..5, else free values with
every special value (floats have no REQUIRE: inf and NaN results are valid).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from hypothesis import strategies as st

from conformance.dtypes import I8, DType
from reference.arguments import ATTRIBUTES_CLAUSE, INPUTS_CLAUSE, OUTPUTS_CLAUSE
from reference.compliance import MIN_DOT_PRODUCTS
from reference.datasets import dataset_inputs
from reference.ops.tensor_conv import ACC_TYPES
from strategies.case import CaseSpec, TensorDraw
from strategies.invalid import TYPE_CLAUSE, breaks, broken
from strategies.recipes import RecipeContext, recipe
from strategies.recipes.data_layout import find, reshaped, set_tensor
from strategies.values import ValueRange

CONVS = ("CONV2D", "CONV3D", "DEPTHWISE_CONV2D")  # forward convolutions
ACC_OPS = (*CONVS, "TRANSPOSE_CONV2D")  # the operators with acc_type and local_bound
BIASED = (*ACC_OPS, "FULLY_CONNECTED")
DATA_SETS = (-1, 0, 1, 2, 3, 4, 5)  # -1: free values, else an Appendix A test set
STATISTICAL_SETS = (3, 4, 5)  # checked only with MIN_DOT_PRODUCTS outputs or more
ACC_NAMES = {dt: name for name, dt in ACC_TYPES.items()}
I32_MIN, I32_MAX = -(2**31), 2**31 - 1


# -- geometry ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Axis:
    """One spatial axis; pads are out_pads for TRANSPOSE_CONV2D (dilation 1)."""

    size_in: int
    size_out: int
    kernel: int
    stride: int = 1
    dilation: int = 1
    pad_before: int = 0  # pad_top / pad_left / pad_d0, or out_pad_top / out_pad_left
    pad_after: int = 0


_THREE = st.integers(0, 2)
_DATA_SET = st.sampled_from(DATA_SETS)
# Axis orders as one drawn index (st.permutations costs a draw per swap).
_ORDERS = {r: list(itertools.permutations(range(r))) for r in (2, 3)}
# i8 zero points: any value, the extremes and the neighbours of 0 often.
_ZP_I8 = st.one_of(st.sampled_from([-128, -127, -1, 1, 126, 127]), st.integers(-128, 127))


def _size(draw: st.DrawFn, cap: int, small: int, label: str) -> int:
    """A size in 1..cap, half the time in 1..small (the sizes networks use).  Built
    from cached strategies: a new one_of per draw costs Hypothesis a validation."""
    cap = max(1, cap)
    if small < cap and draw(st.booleans(), label=f"{label}: small"):
        cap = max(1, small)
    return draw(st.integers(1, cap), label=label)


def _stride(draw: st.DrawFn, k: int, cap: int, label: str) -> int:
    """1, the kernel size (the common networks' choices), or any stride up to cap."""
    cap = max(1, cap)
    kind = draw(_THREE, label=f"{label}: stride kind")
    if kind == 0:
        return 1
    if kind == 1:
        return min(k, cap)
    return draw(st.integers(1, cap), label=f"{label}: stride")


def _share(room: int, left: int, cap: int) -> int:
    """A per-axis cap: about the left-th root of what remains, doubled (as
    strategies.shapes does, so that later axes still get sizes above 1)."""
    return max(1, min(cap, room, round(room ** (1.0 / left)) * 2))


def conv_axis(
    draw: st.DrawFn,
    room: int,
    out_cap: int,
    kernel_cap: int,
    stride_cap: int,
    max_kernel: int,
    label: str,
) -> Axis:
    """A forward-convolution axis with input at most ``room`` and output at most
    ``out_cap``; ``max_kernel`` is the level's bound on dilation * K and the pads."""
    room, out_cap = max(1, room), max(1, out_cap)
    k_cap = max(1, min(kernel_cap, room, max_kernel))
    k = _size(draw, k_cap, 3, f"{label}: kernel")
    # The dilated extent stays within the room (padding may still make it exceed the
    # input); with K = 1 the dilation is irrelevant but still drawn.
    d_cap = (room - 1) // (k - 1) if k > 1 else 4
    d_cap = max(1, min(d_cap, max_kernel // k))
    d = 1
    if not draw(st.booleans(), label=f"{label}: dilation 1"):
        d = _size(draw, d_cap, 4, f"{label}: dilation")
    extent = (k - 1) * d + 1
    s = _stride(draw, k, min(stride_cap, room), label)
    # Pads beyond extent - 1 leave outputs that read only padding: valid, as long as
    # the input keeps a size of 1 or more and the output fits out_cap.
    wide = draw(st.booleans(), label=f"{label}: pads beyond the kernel's need")
    p_top = extent + 2 if wide else extent - 1
    total_cap = min(2 * max_kernel, extent - 1 + (out_cap - 1) * s)
    p0 = draw(st.integers(0, max(0, min(p_top, max_kernel, total_cap))), label=f"{label}: pad 0")
    p1_cap = max(0, min(p_top, max_kernel, total_cap - p0))
    p1 = draw(st.integers(0, p1_cap), label=f"{label}: pad 1")
    o_lo = 1 + max(0, -(-(p0 + p1 - extent + 1) // s))
    o_hi = max(o_lo, min(out_cap, 1 + (room - extent + p0 + p1) // s))
    o = draw(st.integers(o_lo, o_hi), label=f"{label}: output size")
    return Axis((o - 1) * s + extent - p0 - p1, o, k, s, d, p0, p1)


def transpose_axis(
    draw: st.DrawFn,
    room: int,
    out_cap: int,
    kernel_cap: int,
    stride_cap: int,
    max_kernel: int,
    label: str,
) -> Axis:
    """A transposed-convolution axis: O = (I - 1) * stride + out_pads + K, out_pads
    above -K (negative ones crop the output), I <= room, O <= out_cap."""
    room, out_cap = max(1, room), max(1, out_cap)
    k_cap = max(1, min(kernel_cap, max_kernel))
    k = _size(draw, k_cap, 3, f"{label}: kernel")
    s = _stride(draw, k, min(stride_cap, out_cap), label)
    p_top = min(max_kernel, (0, 2, k)[draw(_THREE, label=f"{label}: out_pad top")])
    # pt + pb + K <= out_cap keeps a one-element input within out_cap.
    pt = draw(st.integers(1 - k, min(p_top, out_cap - 1)), label=f"{label}: out_pad 0")
    pb = draw(st.integers(1 - k, min(p_top, out_cap - k - pt)), label=f"{label}: out_pad 1")
    base = pt + pb + k  # the output of a one-element input
    i_lo = 1 if base >= 1 else 1 - (-(1 - base) // s)
    i_hi = min(room, 1 + (out_cap - base) // s)
    if i_lo > i_hi:  # cropping needs more input than the room has: crop less
        pb = 1 - k - pt
        base, i_lo, i_hi = 1, 1, min(room, 1 + (out_cap - 1) // s)
    i = draw(st.integers(i_lo, i_hi), label=f"{label}: input size")
    return Axis(i, (i - 1) * s + base, k, s, 1, pt, pb)


def _spatial_axes(
    draw: st.DrawFn, rc: RecipeContext, rank: int, n: int, in_ch: int, out_ch: int
) -> list[Axis]:
    """``rank`` axes such that N * prod(I) * in_ch, N * prod(O) * out_ch and prod(K) *
    in_ch stay within the budget (out channels beyond out_ch are drawn later)."""
    budget, max_dim = rc.budget.max_elements, rc.budget.max_dim
    max_kernel, max_stride = rc.level["MAX_KERNEL"], rc.level["MAX_STRIDE"]
    in_room = max(1, budget // (n * in_ch))
    out_room = max(1, budget // (n * out_ch))
    k_room = max(1, budget // in_ch)
    orders = _ORDERS[rank]
    order = orders[draw(st.integers(0, len(orders) - 1), label="axis order")]
    axis_fn = transpose_axis if rc.name == "TRANSPOSE_CONV2D" else conv_axis
    axes: dict[int, Axis] = {}
    for pos, j in enumerate(order):
        left = rank - pos
        a = axis_fn(
            draw,
            _share(in_room, left, max_dim),
            _share(out_room, left, max_dim),
            _share(k_room, left, max_dim),
            max_stride,
            max_kernel,
            f"axis {j}",
        )
        in_room = max(1, in_room // a.size_in)
        out_room = max(1, out_room // a.size_out)
        k_room = max(1, k_room // a.kernel)
        axes[j] = a
    return [axes[j] for j in range(rank)]


@lru_cache(maxsize=65536)
def _product_exists(count: int, lo: int, hi: int, cap: int) -> bool:
    """Is there a product of ``count`` integers in 1..cap within [lo, hi]?"""
    lo = max(lo, 1)
    if lo > hi:
        return False
    if count == 0:
        return lo == 1
    if cap**count < lo:
        return False
    return any(
        _product_exists(count - 1, -(-lo // d), hi // d, cap) for d in range(1, min(cap, hi) + 1)
    )


def _dims_with_product(
    draw: st.DrawFn, count: int, lo: int, hi: int, cap: int, label: str
) -> list[int]:
    """``count`` sizes in 1..cap whose product is in [lo, hi] (one must exist)."""
    dims = []
    for j in range(count):
        left = count - j - 1
        options = [
            d
            for d in range(1, min(cap, hi) + 1)
            if _product_exists(left, -(-lo // d), hi // d, cap)
        ]
        d = draw(st.sampled_from(options), label=f"{label}: size {j}")
        dims.append(d)
        lo, hi = -(-lo // d), hi // d
    return dims


@dataclass(frozen=True)
class ConvGeometry:
    n: int
    axes: list[Axis]
    channels: int  # IC, or C for DEPTHWISE_CONV2D
    out_channels: int  # OC, or M for DEPTHWISE_CONV2D


def _conv_geometry(draw: st.DrawFn, rc: RecipeContext, rank: int) -> ConvGeometry:
    budget, max_dim = rc.budget.max_elements, rc.budget.max_dim
    depthwise = rc.name == "DEPTHWISE_CONV2D"
    n = _size(draw, min(max_dim, 8, budget), 2, "N")
    ch = _size(draw, min(max_dim, budget // n), 4, "IC")
    axes = _spatial_axes(draw, rc, rank, n, ch, ch if depthwise else 1)
    outs = math.prod(a.size_out for a in axes)
    ks = math.prod(a.kernel for a in axes)
    # OC (M): the output N*O*OC (N*O*C*M) and the weight OC*K*IC (K*C*M) in the budget.
    per_out = n * outs * (ch if depthwise else 1)
    m_cap = max(1, min(max_dim, budget // per_out, budget // (ks * ch)))
    m = _size(draw, m_cap, 4, "OC")
    return ConvGeometry(n, axes, ch, m)


def _many_conv_geometry(draw: st.DrawFn, rc: RecipeContext, rank: int) -> ConvGeometry | None:
    """Stride 1, 'same' padding and kernels up to 3: O = I, with N * prod(O) * OC of at
    least MIN_DOT_PRODUCTS; None when the budget cannot hold that many outputs."""
    budget, max_dim = rc.budget.max_elements, rc.budget.max_dim
    depthwise = rc.name == "DEPTHWISE_CONV2D"
    k_cap = max(1, min(3, rc.level["MAX_KERNEL"]))
    kernel = [draw(st.integers(1, k_cap), label=f"axis {j}: kernel") for j in range(rank)]
    ks = math.prod(kernel)
    ch = draw(st.integers(1, 4), label="IC")

    def bounds(m: int) -> tuple[int, int]:
        out_ch = ch * m if depthwise else m
        return -(-MIN_DOT_PRODUCTS // out_ch), budget // max(ch, out_ch)

    options = [
        m
        for m in range(1, max_dim + 1)
        if ks * ch * m <= budget and _product_exists(rank + 1, *bounds(m), max_dim)
    ]
    if not options:
        return None
    m = draw(st.sampled_from(options), label="OC")
    *sizes, n = _dims_with_product(draw, rank + 1, *bounds(m), max_dim, "spatial sizes, N")
    axes = []
    for j, (k, size) in enumerate(zip(kernel, sizes, strict=True)):
        if rc.name == "TRANSPOSE_CONV2D":  # out_pads adding up to 1 - K: O = I
            p0 = draw(st.integers(1 - k, 0), label=f"axis {j}: out_pad 0")
            axes.append(Axis(size, size, k, 1, 1, p0, 1 - k - p0))
        else:  # pads adding up to K - 1: O = I
            p0 = draw(st.integers(0, k - 1), label=f"axis {j}: pad 0")
            axes.append(Axis(size, size, k, 1, 1, p0, k - 1 - p0))
    return ConvGeometry(n, axes, ch, m)


# -- values --------------------------------------------------------------------------------


def _data_set(draw: st.DrawFn, rc: RecipeContext, dt: DType) -> int:
    """The Appendix A set asked for, else one drawn (-1: free values); integer modes
    have none."""
    if not dt.is_float:
        return -1
    if rc.data_set is not None:
        return rc.data_set
    return draw(_DATA_SET, label="data set")


def _zero_point(draw: st.DrawFn, rc: RecipeContext, dt: DType, label: str) -> int | float:
    """Any i8 value for i8 operands (drawn as a one-element tensor: rank-0 draws do
    not always get the extremes); 0 for every other type."""
    if dt is I8:
        return draw(_ZP_I8, label=label)
    return 0.0 if dt.is_float else 0


def _max_deviation(dt: DType, zp: int) -> int:
    return max(zp - int(dt.min), int(dt.max) - zp)  # type: ignore[arg-type]


def _deviation_caps(
    x_dt: DType, x_zp: int, w_dt: DType, w_zp: int, ks: int, acc: DType
) -> tuple[int, int]:
    """Caps on |x - x_zp| and |w - w_zp| whose product times KS is at most half the
    accumulator (the other half is the bias's).  The whole types fit for every budget
    up to KS = 16384 (i8 x i8 in i32); only larger dot products narrow the values."""
    half = int(acc.max) // 2  # type: ignore[arg-type]
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
    lo = max(int(dt.min), zp - dev)  # type: ignore[arg-type]
    hi = min(int(dt.max), zp + dev)  # type: ignore[arg-type]
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
    # Now and then every data value sits at its zero point: all products are 0, so
    # the bias may take any value of out_t, its extremes included.
    if draw(st.integers(0, 5), label="data at its zero point") == 0:
        xv = np.full(x.shape, x_zp, x.dtype.storage)
    out = {x.name: xv, w.name: wv}
    if bias is not None:
        worst = ks * _max_abs(xv.astype(np.int64) - x_zp) * _max_abs(wv.astype(np.int64) - w_zp)
        dt = bias.dtype
        r = None if worst == 0 else ValueRange(low=int(dt.min) + worst, high=int(dt.max) - worst)  # type: ignore[arg-type]
        out[bias.name] = rc.values(draw, dt, bias.shape, r, label=bias.name)
    return out


def _float_values(
    draw: st.DrawFn, rc: RecipeContext, operands: Sequence[Operand]
) -> dict[str, np.ndarray]:
    """Small values with every special value, the whole finite range (products
    overflow to inf: still valid), or the unit range (sums stay well inside)."""
    top = float(operands[0].dtype.normal_max)  # type: ignore[arg-type]
    regimes = [None, ValueRange(-top, top), ValueRange(-1.0, 1.0)]
    r = regimes[draw(_THREE, label="value regime")]
    return {o.name: rc.values(draw, o.dtype, o.shape, r, label=o.name) for o in operands}


def _values(
    draw: st.DrawFn,
    rc: RecipeContext,
    data_set: int,
    x: Operand,
    w: Operand,
    bias: Operand | None,
    ks: int,
    acc: DType,
) -> dict[str, np.ndarray]:
    operands = [x, w] if bias is None else [x, w, bias]
    if data_set >= 0:
        return dataset_inputs(
            rc.name,
            data_set,
            {o.name: o.shape for o in operands},
            {o.name: o.dtype for o in operands},
            acc_dtype=acc,
            out_dtype=rc.dtype("out_t"),
        )
    if x.dtype.is_float:
        return _float_values(draw, rc, operands)
    return _int_values(draw, rc, x, w, bias, ks, acc)


def _tensors(
    draw: st.DrawFn, operands: Sequence[Operand], values: dict[str, np.ndarray], const_from: int
) -> list[TensorDraw]:
    """TensorDraws in argument order; weights and bias (``operands[const_from:]``) are
    constants in networks, so they are drawn constant or graph inputs."""
    const = draw(st.booleans(), label="weights constant")
    return [
        TensorDraw(o.name, o.shape, o.dtype, values[o.name], const and k >= const_from)
        for k, o in enumerate(operands)
    ]


def _local_bound(draw: st.DrawFn, attributes: dict[str, Any]) -> None:
    local_bound = (None, False, True)[draw(_THREE, label="local_bound")]
    if local_bound is not None:  # absent: the default, false
        attributes["local_bound"] = local_bound


# -- CONV2D, CONV3D, DEPTHWISE_CONV2D, TRANSPOSE_CONV2D ------------------------------------


@recipe(*ACC_OPS)
def convolution(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    in_t, w_t, out_t, acc = (rc.dtype(v) for v in ("in_t", "weight_t", "out_t", "acc_t"))
    rank = 3 if rc.name == "CONV3D" else 2
    data_set = _data_set(draw, rc, in_t)
    geometry = None
    if data_set in STATISTICAL_SETS:
        geometry = _many_conv_geometry(draw, rc, rank)
    if geometry is None:
        geometry = _conv_geometry(draw, rc, rank)
    g = geometry
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
    bc = 1 if draw(st.booleans(), label="bias broadcast") else oc
    x_shape = (g.n, *sizes_in, g.channels)
    x = Operand("input", x_shape, in_t, _zero_point(draw, rc, in_t, "input_zp"))
    w = Operand("weight", w_shape, w_t, _zero_point(draw, rc, w_t, "weight_zp"))
    bias = Operand("bias", (bc,), out_t)
    values = _values(draw, rc, data_set, x, w, bias, ks, acc)
    attributes: dict[str, Any] = {}
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
    _local_bound(draw, attributes)
    return rc.spec_of(
        _tensors(draw, [x, w, bias], values, 1),
        [TensorDraw("output", (g.n, *sizes_out, oc), out_t)],
        attributes=attributes,
        data_set=data_set,
    )


# -- FULLY_CONNECTED -------------------------------------------------------------------------


def _fc_sizes(draw: st.DrawFn, rc: RecipeContext, many: bool) -> tuple[int, int, int]:
    """(N, IC, OC): input N*IC, weight OC*IC and output N*OC within the budget; with
    ``many``, N*OC >= MIN_DOT_PRODUCTS where the budget allows it."""
    budget, max_dim = rc.budget.max_elements, rc.budget.max_dim
    if many:
        ic = draw(st.integers(1, max(1, min(max_dim, budget // max_dim))), label="IC")
        cap = max(1, min(max_dim, budget // ic))
        if _product_exists(2, MIN_DOT_PRODUCTS, budget, cap):
            n, oc = _dims_with_product(draw, 2, MIN_DOT_PRODUCTS, budget, cap, "N, OC")
            return n, ic, oc
    n = _size(draw, min(max_dim, budget), 4, "N")
    # IC is the dot product's length: it may run past max_dim up to the budget.
    ic_cap = max(1, budget // n)
    ic = _size(draw, ic_cap, min(max_dim, ic_cap), "IC")
    oc_cap = max(1, min(max_dim, budget // ic, budget // n))
    oc = draw(st.integers(1, oc_cap), label="OC")
    return n, ic, oc


@recipe("FULLY_CONNECTED")
def fully_connected(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    in_t, w_t, out_t = (rc.dtype(v) for v in ("in_t", "weight_t", "out_t"))
    data_set = _data_set(draw, rc, in_t)
    n, ic, oc = _fc_sizes(draw, rc, data_set in STATISTICAL_SETS)
    bc = 1 if draw(st.booleans(), label="bias broadcast") else oc
    x = Operand("input", (n, ic), in_t, _zero_point(draw, rc, in_t, "input_zp"))
    w = Operand("weight", (oc, ic), w_t, _zero_point(draw, rc, w_t, "weight_zp"))
    bias = Operand("bias", (bc,), out_t)
    # FULLY_CONNECTED accumulates in out_t: its modes name no acc_t.
    values = _values(draw, rc, data_set, x, w, bias, ic, out_t)
    return rc.spec_of(
        _tensors(draw, [x, w, bias], values, 1),
        [TensorDraw("output", (n, oc), out_t)],
        attributes={"input_zp": x.zp, "weight_zp": w.zp},
        data_set=data_set,
    )


# -- MATMUL ----------------------------------------------------------------------------------


def _matmul_sizes(draw: st.DrawFn, rc: RecipeContext, many: bool) -> tuple[int, int, int, int]:
    """(N, H, C, W): A N*H*C, B N*C*W and the output N*H*W within the budget."""
    budget, max_dim = rc.budget.max_elements, rc.budget.max_dim
    if many and _product_exists(3, MIN_DOT_PRODUCTS, budget, max_dim):
        n, h, w = _dims_with_product(draw, 3, MIN_DOT_PRODUCTS, budget, max_dim, "N, H, W")
        c_cap = max(1, min(max_dim, budget // (n * h), budget // (n * w)))
        c = _size(draw, c_cap, 8, "C")
        return n, h, c, w
    n = _size(draw, min(max_dim, 8, budget), 2, "N")
    room = max(1, budget // n)
    # C is the dot product's length: it may run past max_dim up to the budget.
    c = _size(draw, room, min(max_dim, room), "C")
    side = max(1, room // c)
    h = draw(st.integers(1, max(1, min(max_dim, side))), label="H")
    w = draw(st.integers(1, max(1, min(max_dim, side, room // h))), label="W")
    return n, h, c, w


@recipe("MATMUL")
def matmul(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    in_t, out_t = rc.dtype("in_t"), rc.dtype("out_t")
    data_set = _data_set(draw, rc, in_t)
    n, h, c, w = _matmul_sizes(draw, rc, data_set in STATISTICAL_SETS)
    a = Operand("A", (n, h, c), in_t, _zero_point(draw, rc, in_t, "A_zp"))
    b = Operand("B", (n, c, w), in_t, _zero_point(draw, rc, in_t, "B_zp"))
    values = _values(draw, rc, data_set, a, b, None, c, out_t)
    return rc.spec_of(
        _tensors(draw, [a, b], values, 1),
        [TensorDraw("output", (n, h, w), out_t)],
        attributes={"A_zp": a.zp, "B_zp": b.zp},
        data_set=data_set,
    )


# -- breakers: types and zero points ---------------------------------------------------------


@breaks(*ACC_OPS, clause=TYPE_CLAUSE)
def acc_type_unsupported(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """An acc_type no mode pairs with these tensor types (i8 with FP32, fp32 with FP16,
    ...), or an enumeration value that names no accumulator."""
    ts = {v: rc.dtype(v) for v in ("in_t", "weight_t", "out_t")}
    allowed = {
        m.dtype("acc_t") for m in rc.op_spec.modes if all(m.dtype(v) is dt for v, dt in ts.items())
    }
    others = sorted(name for name, acc in ACC_TYPES.items() if acc not in allowed)
    out = broken(spec, TYPE_CLAUSE)
    out.attributes["acc_type"] = draw(st.sampled_from([*others, "INT8", "BF16"]), label="acc_type")
    return out


def _nonzero_zp(draw: st.DrawFn, dt: DType, label: str) -> int | float:
    """A zero point other than 0 that the type holds."""
    if dt.is_float:
        return draw(st.sampled_from([1.0, -1.0, 0.5, -2.0]), label=label)
    lo, hi = int(dt.min), int(dt.max)  # type: ignore[arg-type]
    return draw(st.one_of(st.integers(lo, -1), st.integers(1, hi)), label=label)


def _zp_breaker(name: str, type_var: str, clause: str) -> None:
    def applies(rc: RecipeContext) -> bool:
        return rc.dtype(type_var) is not I8

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

MATMUL_ZP = "in_t != i8_t && (A_zp != 0 || B_zp != 0)"


@breaks("MATMUL", clause=MATMUL_ZP, applies=lambda rc: rc.dtype("in_t") is not I8)
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

    @breaks(*ops, clause=clause)
    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        out = broken(spec, clause)
        vals = _attr(spec, attribute)
        i = draw(st.integers(0, len(vals) - 1), label=f"{attribute} element")
        vals[i] = _below(draw, high, f"bad {attribute}")
        out.attributes[attribute] = tuple(vals)
        return out

    fn.__name__ = f"{attribute}_below_{high + 1}_{ops[0]}"


_2D = ("CONV2D", "DEPTHWISE_CONV2D")
_below_breaker(_2D, "pad", "pad_top < 0 || pad_bottom < 0 || pad_left < 0 || pad_right < 0", -1)
_below_breaker(
    ("CONV3D",),
    "pad",
    "pad_d0 < 0 || pad_d1 < 0 || pad_top < 0 || pad_bottom < 0 || pad_left < 0 || pad_right < 0",
    -1,
)
_below_breaker((*_2D, "TRANSPOSE_CONV2D"), "stride", "stride_y < 1 || stride_x < 1", 0)
_below_breaker(("CONV3D",), "stride", "stride_d < 1 || stride_y < 1 || stride_x < 1", 0)
_below_breaker(_2D, "dilation", "dilation_y < 1 || dilation_x < 1", 0)
_below_breaker(("CONV3D",), "dilation", "dilation_d < 1 || dilation_y < 1 || dilation_x < 1", 0)


def _spatial(spec: CaseSpec) -> int:
    return len(spec.inputs[0].shape) - 2


@breaks(*ACC_OPS, clause=ATTRIBUTES_CLAUSE)
def attribute_length(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """pad (out_pad), stride or dilation with one element too many or too few."""
    out = broken(spec, ATTRIBUTES_CLAUSE)
    names = [a for a in ("pad", "out_pad", "stride", "dilation") if a in spec.attributes]
    name = draw(st.sampled_from(names), label="attribute")
    vals = _attr(spec, name)
    if draw(st.booleans(), label="one more element"):
        vals.append(vals[-1])
    else:
        vals.pop()
    out.attributes[name] = tuple(vals)
    return out


# -- breakers: output sizes ------------------------------------------------------------------

IDIV_CLAUSE = "input1 % input2 != 0 (idiv_check)"
_SIZE = {
    "OD": "OD != idiv_check(ID - 1 + pad_d0 + pad_d1 - (KD - 1) * dilation_d, stride_d) + 1",
    "OH": "OH != idiv_check(IH - 1 + pad_top + pad_bottom - (KH - 1) * dilation_y, stride_y) + 1",
    "OW": "OW != idiv_check(IW - 1 + pad_left + pad_right - (KW - 1) * dilation_x, stride_x) + 1",
}


def _kernel(spec: CaseSpec) -> list[int]:
    w = spec.inputs[1].shape
    return list(w[:-2] if spec.operator == "DEPTHWISE_CONV2D" else w[1:-1])


@breaks(*CONVS, clause=IDIV_CLAUSE)
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
    reshaped(out, "input", tuple(shape))
    return out


def _resize_output(draw: st.DrawFn, out: CaseSpec, dim: int) -> None:
    """Output dimension ``dim`` one to three larger or smaller (never below 1)."""
    shape = list(find(out, "output").shape)
    d = draw(st.integers(1, 3), label="output size off by")
    if shape[dim] > d and draw(st.booleans(), label="smaller"):
        shape[dim] -= d
    else:
        shape[dim] += d
    set_tensor(out, "output", shape=tuple(shape))


def _size_breaker(ops: Sequence[str], dim: int, clause: str) -> None:
    @breaks(*ops, clause=clause)
    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        out = broken(spec, clause)
        _resize_output(draw, out, dim)
        return out

    fn.__name__ = f"size_breaker_{ops[0]}_{dim}"


_size_breaker(("CONV3D",), 1, _SIZE["OD"])
_size_breaker(("CONV3D",), 2, _SIZE["OH"])
_size_breaker(("CONV3D",), 3, _SIZE["OW"])
_size_breaker(_2D, 1, _SIZE["OH"])
_size_breaker(_2D, 2, _SIZE["OW"])
_size_breaker(
    ("TRANSPOSE_CONV2D",), 1, "OH != (IH - 1) * stride_y + out_pad_top + out_pad_bottom + KH"
)
_size_breaker(
    ("TRANSPOSE_CONV2D",), 2, "OW != (IW - 1) * stride_x + out_pad_left + out_pad_right + KW"
)


def _out_pad_breaker(first: int, kernel_dim: int, clause: str) -> None:
    """out_pad element ``first`` or ``first + 1`` at most -K (K = weight dimension
    ``kernel_dim``); the top/bottom pair is checked first and stays valid."""

    @breaks("TRANSPOSE_CONV2D", clause=clause)
    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        out = broken(spec, clause)
        pads = _attr(spec, "out_pad")
        k = spec.inputs[1].shape[kernel_dim]
        i = first + draw(st.integers(0, 1), label="out_pad element")
        pads[i] = _below(draw, -k, "out_pad at most -K")
        out.attributes["out_pad"] = tuple(pads)
        return out

    fn.__name__ = f"out_pad_breaker_{first}"


_out_pad_breaker(0, 1, "out_pad_top <= -KH || out_pad_bottom <= -KH")
_out_pad_breaker(2, 2, "out_pad_left <= -KW || out_pad_right <= -KW")


# -- breakers: bias and argument shapes ----------------------------------------------------


def _bias_breaker(ops: Sequence[str], clause: str) -> None:
    @breaks(*ops, clause=clause)
    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        """A bias of neither the output channel count nor 1."""
        out = broken(spec, clause)
        oc = find(spec, "output").shape[-1]
        wrong = [v for v in range(2, oc + 4) if v != oc]
        reshaped(out, "bias", (draw(st.sampled_from(wrong), label="BC"),))
        return out

    fn.__name__ = f"bias_breaker_{ops[0]}"


_bias_breaker(("CONV2D", "CONV3D", "TRANSPOSE_CONV2D", "FULLY_CONNECTED"), "BC != OC && BC != 1")
_bias_breaker(("DEPTHWISE_CONV2D",), "BC != C*M && BC != 1")

# The dimension of the second input that must equal one of the first input's: (second
# input's dim, first input's dim) per operator (IC, C, or MATMUL's C and N).
_SHARED_DIMS: dict[str, list[tuple[int, int]]] = {
    "CONV2D": [(3, 3)],
    "CONV3D": [(4, 4)],
    "TRANSPOSE_CONV2D": [(3, 3)],
    "DEPTHWISE_CONV2D": [(2, 3)],
    "FULLY_CONNECTED": [(1, 1)],
    "MATMUL": [(1, 2), (0, 0)],
}


@breaks(*_SHARED_DIMS, clause=INPUTS_CLAUSE)
def inputs_disagree(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """The weight's (B's) channels or batch not the input's, a bias of rank 2, or an
    input of another rank."""
    out = broken(spec, INPUTS_CLAUSE)
    first, second = spec.inputs[0], spec.inputs[1]
    how = draw(st.sampled_from(["shared", "rank", "bias"]), label="input made wrong")
    if how == "bias" and len(spec.inputs) > 2:
        bias = spec.inputs[2]
        reshaped(out, bias.name, (*bias.shape, 1))
    elif how == "rank":
        other = (1, *first.shape) if draw(st.booleans(), label="one more") else first.shape[1:]
        reshaped(out, first.name, other)
    else:
        dim, _ = draw(st.sampled_from(_SHARED_DIMS[spec.operator]), label="dimension")
        dims = list(second.shape)
        dims[dim] += draw(st.integers(1, 3), label="added to it")
        reshaped(out, second.name, tuple(dims))
    return out


@breaks(*ACC_OPS, clause=OUTPUTS_CLAUSE)
def output_disagrees(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """An output whose N or channel count is not the inputs', or of another rank (the
    generic breaker leaves these operators alone: OH and OW tie to no input)."""
    out = broken(spec, OUTPUTS_CLAUSE)
    shape = list(find(spec, "output").shape)
    how = draw(st.sampled_from(["N", "OC", "rank"]), label="output made wrong")
    if how == "rank":
        shape = [1, *shape] if draw(st.booleans(), label="one more") else shape[1:]
    else:
        shape[0 if how == "N" else -1] += draw(st.integers(1, 3), label="added to it")
    set_tensor(out, "output", shape=tuple(shape))
    return out

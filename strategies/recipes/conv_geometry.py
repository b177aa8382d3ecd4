"""Convolution geometry for the CONV2D, CONV3D, DEPTHWISE_CONV2D and TRANSPOSE_CONV2D
recipes: kernel, channels, strides, dilations, pads and sizes such that every size
ERROR_IF holds exactly, every tensor fits the element budget, and the case computes
the dot products a :class:`DotAim` asks for.

The order follows the dot product: first the kernel window and the input channels
(KS = prod(kernel) * IC, or prod(kernel) for DEPTHWISE_CONV2D) near the aimed KS, then
the output channels, then the spatial axes (each drawn with a least output size, so
the outputs add up to the aim), and last the batch, which Appendix A names as the
size to raise until there are MIN_DOT_PRODUCTS outputs.  A forward axis draws
dilation, stride, two pads (sometimes beyond what the kernel needs) and the output
size, and the input size follows as ``(O - 1) * stride + (K - 1) * dilation + 1 -
pads`` (idiv_check divides evenly); a transposed axis draws stride, the out_pads
(negative ones crop, down to 1 - K) and the input size, and the output follows.

The sizes of FULLY_CONNECTED (:func:`fc_sizes`), MATMUL and MATMUL_T
(:func:`matmul_sizes`) are drawn here too: the contraction near the aimed KS, then the
batch and the output sizes.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from hypothesis import strategies as st

from strategies.recipes import RecipeContext
from strategies.recipes.data_sets import DotAim, log_uniform, near, sizes_with_product, unit
from strategies.shapes import Budget


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


@dataclass(frozen=True)
class ConvGeometry:
    n: int
    axes: list[Axis]
    channels: int  # IC, or C for DEPTHWISE_CONV2D
    out_channels: int  # OC, or M for DEPTHWISE_CONV2D


_THREE = st.integers(0, 2)
# Axis orders as one drawn index (st.permutations costs a draw per swap).
_ORDERS = {r: list(itertools.permutations(range(r))) for r in (2, 3)}


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


def least_output(extent: int, pad0: int, pad1: int, stride: int) -> int:
    """The fewest outputs a forward axis has whose input keeps at least one element:
    ``O = (I - 1 + pad0 + pad1 - extent + 1) / stride + 1`` with I >= 1, so O - 1 is the
    padding past the window, divided by the stride and rounded up."""
    return 1 + max(0, -(-(pad0 + pad1 - extent + 1) // stride))


def input_size(outputs: int, extent: int, pad0: int, pad1: int, stride: int) -> int:
    """The input a forward axis needs for ``outputs`` exact outputs: the output-size
    rule ``O = (I - 1 + pad0 + pad1 - extent) / stride + 1`` (extent = (K - 1) *
    dilation + 1) solved for I."""
    return (outputs - 1) * stride + extent - pad0 - pad1


def conv_axis(
    draw: st.DrawFn,
    k: int,
    room: int,
    out_min: int,
    out_cap: int,
    stride_cap: int,
    max_kernel: int,
    label: str,
    dilate: bool = True,
) -> Axis:
    """A forward-convolution axis with kernel ``k``, input at most ``room`` and output
    in [out_min, out_cap] (out_min as far as the room allows); ``max_kernel`` is the
    level's bound on dilation * K and the pads; ``dilate`` False keeps dilation 1."""
    room, out_cap = max(1, room), max(1, out_cap)
    out_min = max(1, min(out_min, out_cap))
    # The dilated extent stays within the room (padding may still make it exceed the
    # input); with K = 1 the dilation is irrelevant but still drawn.
    d_cap = (room - 1) // (k - 1) if k > 1 else 4
    d_cap = max(1, min(d_cap, max_kernel // k))
    d = 1
    if dilate and not draw(st.booleans(), label=f"{label}: dilation 1"):
        d = log_uniform(draw, 1, d_cap, f"{label}: dilation")
    extent = (k - 1) * d + 1
    # A stride that still leaves room for out_min outputs once pads of extent - 1 are
    # added: (out_min - 1) * stride + 1 <= room.
    s_cap = min(stride_cap, room, max(1, (room - 1) // max(1, out_min - 1)))
    s = _stride(draw, k, s_cap, label)
    # Pads beyond extent - 1 leave outputs that read only padding: valid, as long as
    # the input keeps a size of 1 or more and the output fits out_cap.
    wide = draw(st.booleans(), label=f"{label}: pads beyond the kernel's need")
    p_top = min(max_kernel, extent + 2 if wide else extent - 1)
    total_cap = min(2 * p_top, extent - 1 + (out_cap - 1) * s)
    need = max(0, (out_min - 1) * s + extent - room)  # pads out_min outputs require
    p0 = draw(st.integers(0, max(0, min(p_top, total_cap))), label=f"{label}: pad 0")
    p1_lo = min(max(0, need - p0), p_top)
    p1 = draw(st.integers(p1_lo, max(p1_lo, min(p_top, total_cap - p0))), label=f"{label}: pad 1")
    o_lo = least_output(extent, p0, p1, s)
    o_hi = max(o_lo, min(out_cap, 1 + (room - extent + p0 + p1) // s))
    o = draw(st.integers(max(o_lo, min(out_min, o_hi)), o_hi), label=f"{label}: output size")
    return Axis(input_size(o, extent, p0, p1, s), o, k, s, d, p0, p1)


def transpose_axis(
    draw: st.DrawFn,
    k: int,
    room: int,
    out_min: int,
    out_cap: int,
    stride_cap: int,
    max_kernel: int,
    label: str,
    dilate: bool = False,
) -> Axis:
    """A transposed-convolution axis: O = (I - 1) * stride + out_pads + K, out_pads
    above -K (negative ones crop the output), I <= room, out_min <= O <= out_cap (the
    least as far as the room allows); it has no dilation, whatever ``dilate`` says."""
    room, out_cap = max(1, room), max(1, out_cap)
    k = max(1, min(k, out_cap))  # a one-element input gives at least one output
    out_min = max(1, min(out_min, out_cap))
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
    i_lo = max(i_lo, min(i_hi, 1 - (-(out_min - base) // s)))
    i = draw(st.integers(i_lo, i_hi), label=f"{label}: input size")
    return Axis(i, (i - 1) * s + base, k, s, 1, pt, pb)


def kernel_channels_cap(rc: RecipeContext, least: int) -> int:
    """The longest KS a convolution can have with ``least`` outputs in the budget
    (one output channel, input channels 1 or the kernel's share)."""
    budget = rc.budget.max_elements
    rank = 3 if rc.name == "CONV3D" else 2
    window = min(budget, _kernel_cap(rc) ** rank)
    if rc.name == "DEPTHWISE_CONV2D":
        return window
    return max(window, _ic_cap(budget, window, least) * window)


def _kernel_cap(rc: RecipeContext) -> int:
    """Kernel sizes up to the default budget's max_dim (64): a large job's wider
    max_dim is for spreading tensors over axes, not for 2048-tap kernels."""
    return max(1, min(rc.level["MAX_KERNEL"], rc.budget.max_dim, Budget().max_dim))


def _ic_cap(budget: int, window: int, least: int) -> int:
    """Input channels that leave room for ``least`` outputs: an output channel's
    weights (window * IC) and N * P * IC inputs both fit, with N * P * OC >= least."""
    return max(1, min(budget // window, math.isqrt(budget * budget // (2 * window * least))))


def whole_blocks(count: int, block: int) -> int:
    """``count`` rounded to a multiple of ``block`` (to nearest, at least one block):
    TOSA 1.1's block-scaled operands need their contraction axis in whole blocks."""
    return max(block, block * round(count / block)) if block > 1 else count


def conv_geometry(
    draw: st.DrawFn, rc: RecipeContext, rank: int, aim: DotAim, block: int = 1
) -> ConvGeometry:
    """A geometry with at least ``aim.outputs`` outputs where the budget holds them:
    two drawn tries, then 'same' padding with stride 1, which always fits.  ``block``:
    IC a multiple of it (a block-scaled operand's block size)."""
    budget = rc.budget.max_elements
    depthwise = rc.name == "DEPTHWISE_CONV2D"
    kc = _kernel_cap(rc)
    # How much of KS the kernel window takes (the rest is IC): 1x1 convolutions with
    # many channels, large windows over few channels, and all between.
    if depthwise:
        window_low, window_goal = aim.ks_low, float(aim.ks_goal)
    else:
        window_low, window_goal = 1, aim.ks_goal ** unit(draw, "kernel's share of KS")
    window_high = max(2 * window_low, 2 * math.ceil(window_goal))
    kernel = sizes_with_product(draw, [kc] * rank, window_low, window_high, window_goal, "kernel")
    window = math.prod(kernel)
    if depthwise:
        cap = max(1, min(budget // window, 4 * rc.budget.max_dim))
        ch = log_uniform(draw, 1, cap, "C")
        per_out = window * ch  # weights per multiplier
    else:
        ch = max(1, min(_ic_cap(budget, window, aim.outputs), round(aim.ks_goal / window)))
        if window * ch < aim.ks_low:  # the channels cannot make up KS: a larger window
            low = -(-aim.ks_low // ch)
            high = max(2 * low, 2 * aim.ks_goal // ch)
            kernel = sizes_with_product(draw, [kc] * rank, low, high, low, "larger kernel")
            window = math.prod(kernel)
            ch = max(1, min(_ic_cap(budget, window, aim.outputs), round(aim.ks_goal / window)))
        ch = whole_blocks(ch, block)
        per_out = window * ch
    for attempt in range(2):
        g = _drawn(draw, rc, kernel, ch, per_out, aim, compact=attempt > 0)
        if g is not None:
            return g
    return _same(draw, rc, kernel, ch, per_out, aim)


EDGE_CHANNELS = 16  # output channels of an edge case: the bias's special values fit


def _out_channels(
    draw: st.DrawFn, rc: RecipeContext, ch: int, per_out: int, aim: DotAim
) -> tuple[int, int]:
    """(OC or M, output elements per spatial position)."""
    budget = rc.budget.max_elements
    depthwise = rc.name == "DEPTHWISE_CONV2D"
    cap = max(1, budget // per_out)
    # Enough output channels that twice the outputs aimed at fit with every input
    # element used once (stride 1); DEPTHWISE_CONV2D has C * M >= C already.
    lo = 1 if depthwise else min(cap, -(-2 * aim.outputs * ch // budget))
    if aim.inputs > budget:  # "large": the weights hold a share the input cannot
        lo = max(lo, min(cap, -(-(aim.inputs - budget // 2) // (per_out + 1))))
    if rc.target == "edge":  # a bias of OC elements that holds every special value
        lo = max(lo, min(cap, -(-EDGE_CHANNELS // ch) if depthwise else EDGE_CHANNELS))
    hi = min(cap, aim.outputs_cap // (ch if depthwise else 1), max(lo, 4 * rc.budget.max_dim))
    m = log_uniform(draw, lo, max(lo, hi), "OC")
    return m, ch * m if depthwise else m


def _drawn(
    draw: st.DrawFn,
    rc: RecipeContext,
    kernel: list[int],
    ch: int,
    per_out: int,
    aim: DotAim,
    compact: bool,
) -> ConvGeometry | None:
    """Axes drawn freely (``compact``: stride and dilation 1); None when no batch size
    gives the outputs asked for within the budget."""
    budget, max_dim = rc.budget.max_elements, rc.budget.max_dim
    m, out_ch = _out_channels(draw, rc, ch, per_out, aim)
    rank = len(kernel)
    in_room, out_room = max(1, budget // ch), max(1, aim.outputs_cap // out_ch)
    p_low, p_goal = -(-aim.outputs // out_ch), aim.outputs_goal / out_ch
    orders = _ORDERS[rank]
    order = orders[draw(st.integers(0, len(orders) - 1), label="axis order")]
    axis_fn = transpose_axis if rc.name == "TRANSPOSE_CONV2D" else conv_axis
    stride_cap = 1 if compact else rc.level["MAX_STRIDE"]
    axes: dict[int, Axis] = {}
    for pos, j in enumerate(order):
        left = rank - pos
        out_cap = _share(out_room, left, max_dim)
        least = math.ceil(p_low ** (1.0 / left))
        goal = max(1, round(max(1.0, p_goal) ** (1.0 / left)))
        out_min = near(draw, min(least, out_cap), out_cap, goal, f"axis {j}: outputs")
        a = axis_fn(
            draw,
            kernel[j],
            _share(in_room, left, max_dim),
            out_min,
            out_cap,
            stride_cap,
            rc.level["MAX_KERNEL"],
            f"axis {j}",
            dilate=not compact and not _dilation_one_only(rc),
        )
        in_room = max(1, in_room // a.size_in)
        out_room = max(1, out_room // a.size_out)
        p_low, p_goal = -(-p_low // a.size_out), p_goal / a.size_out
        axes[j] = a
    ordered = [axes[j] for j in range(rank)]
    n = _batch(draw, rc, ordered, ch, out_ch, per_out * m, aim)
    return None if n is None else ConvGeometry(n, ordered, ch, m)


def _dilation_one_only(rc: RecipeContext) -> bool:
    """A capability manifest that allows dilation 1 only (e.g. ``dilation = [[1, 1]]``)."""
    allowed = rc.allowed("dilation")
    return allowed is not None and all(set(v) == {1} for v in allowed)  # type: ignore[call-overload]


def _batch(
    draw: st.DrawFn,
    rc: RecipeContext,
    axes: list[Axis],
    ch: int,
    out_ch: int,
    weights: int,
    aim: DotAim,
) -> int | None:
    """N: enough for the outputs (and a "large" job's inputs), within the budget."""
    budget = rc.budget.max_elements
    per_in = math.prod(a.size_in for a in axes) * ch
    per_out = math.prod(a.size_out for a in axes) * out_ch
    hi = rc.batch_cap(min(budget // per_in, aim.outputs_cap // per_out))
    lo = -(-aim.outputs // per_out)
    if lo > hi:
        return None
    lo = max(lo, min(hi, -(-(aim.inputs - weights) // per_in)))
    # Batch 1 to 4 as networks run, more when the outputs need it.
    goal = max(1.0, aim.outputs_goal / per_out)
    return near(draw, lo, min(hi, max(lo, 4, round(goal))), goal, "N")


def _same(
    draw: st.DrawFn, rc: RecipeContext, kernel: list[int], ch: int, per_out: int, aim: DotAim
) -> ConvGeometry:
    """Stride 1 and pads adding up to K - 1 (out_pads to 1 - K): O = I, so the spatial
    sizes are drawn with a product that reaches the outputs within the input budget."""
    budget, max_dim = rc.budget.max_elements, rc.budget.max_dim
    m, out_ch = _out_channels(draw, rc, ch, per_out, aim)
    low = -(-aim.outputs // out_ch)
    high = max(low, min(budget // ch, aim.outputs_cap // out_ch))
    sizes = sizes_with_product(
        draw, [max_dim] * len(kernel), low, high, aim.outputs_goal / out_ch, "spatial sizes"
    )
    axes = []
    for j, (k, size) in enumerate(zip(kernel, sizes, strict=True)):
        if rc.name == "TRANSPOSE_CONV2D":
            p0 = draw(st.integers(1 - k, 0), label=f"axis {j}: out_pad 0")
            axes.append(Axis(size, size, k, 1, 1, p0, 1 - k - p0))
        else:
            p0 = draw(st.integers(0, k - 1), label=f"axis {j}: pad 0")
            axes.append(Axis(size, size, k, 1, 1, p0, k - 1 - p0))
    n = _batch(draw, rc, axes, ch, out_ch, per_out * m, aim) or 1
    return ConvGeometry(n, axes, ch, m)


# -- FULLY_CONNECTED, MATMUL, MATMUL_T: batch, contraction and output sizes ---------------


def least_side(outputs: int) -> int:
    """The smaller side of the squarest pair of sizes with ``outputs`` as product."""
    side = math.isqrt(outputs)
    return side + (side * side < outputs)


def matmul_sizes(
    draw: st.DrawFn, rc: RecipeContext, aim: DotAim, block: int = 1
) -> tuple[int, int, int, int]:
    """(N, H, C, W): A N*H*C, B N*C*W (MATMUL_T: D*W*C, D at most N) and the output
    N*H*W within the budget, N*H*W at least aim.outputs; C is KS, a multiple of
    ``block`` (a block-scaled operand's block size)."""
    budget = rc.budget.max_elements
    c = whole_blocks(max(1, min(aim.ks_goal, budget // least_side(aim.outputs))), block)
    room = max(1, budget // c)  # N*H and N*W each
    # N * (room // N)**2 >= outputs: the batch leaves H and W room for the outputs.
    n_hi = max(1, min(room, room * room // max(1, aim.outputs)))
    while n_hi > 1 and n_hi * (room // n_hi) ** 2 < aim.outputs:
        n_hi -= 1
    share = unit(draw, "N's share of the outputs") / 4
    n_hi = rc.batch_cap(min(n_hi, max(4, rc.budget.max_dim)))
    n = near(draw, 1, n_hi, aim.outputs_goal**share, "N")
    side = max(1, room // n)
    h_lo = min(side, -(-aim.outputs // (n * side)))
    h_hi = max(h_lo, min(side, aim.outputs_cap // (2 * n)))
    h = near(draw, h_lo, h_hi, math.sqrt(aim.outputs_goal / n), "H")
    w_lo = min(side, -(-aim.outputs // (n * h)))
    w_hi = max(w_lo, min(side, aim.outputs_cap // (n * h)))
    w = near(draw, w_lo, w_hi, aim.outputs_goal / (n * h), "W")
    if aim.inputs:  # "large": a bigger batch, as far as the budget allows
        n_cap = min(budget // (h * c), budget // (c * w), aim.outputs_cap // (h * w))
        n = rc.batch_cap(max(n, min(n_cap, -(-aim.inputs // (c * (h + w))))))
        c = max(c, min(budget // (n * max(h, w)), -(-aim.inputs // (n * (h + w)))))
        c = max(block, c - c % block)
    return n, h, c, w


def fc_sizes(draw: st.DrawFn, rc: RecipeContext, aim: DotAim) -> tuple[int, int, int]:
    """(N, IC, OC): input N*IC, weight OC*IC and output N*OC within the budget, N*OC
    at least aim.outputs; IC is KS."""
    budget = rc.budget.max_elements
    room = budget // least_side(aim.outputs)
    ic = max(1, min(aim.ks_goal, room))
    room = max(1, budget // ic)  # N and OC each
    # N takes up to a third of the outputs' factors (batches are small), OC the rest.
    share = unit(draw, "N's share of the outputs") / 3
    n_lo = -(-aim.outputs // room)
    n_hi = rc.batch_cap(min(room, aim.outputs_cap // 2))
    n = min(n_hi, near(draw, n_lo, n_hi, aim.outputs_goal**share, "N"))
    oc_lo = -(-aim.outputs // n)
    oc_hi = max(oc_lo, min(room, aim.outputs_cap // n))
    oc = near(draw, oc_lo, oc_hi, aim.outputs_goal / n, "OC")
    if aim.inputs:  # "large": a bigger batch, then longer rows, as far as the budget allows
        n = max(n, min(room, aim.outputs_cap // oc, -(-(aim.inputs - oc * ic - oc) // ic)))
        n = rc.batch_cap(n)
        ic = max(ic, min(budget // max(n, oc), -(-(aim.inputs - oc) // (n + oc))))
    return n, ic, oc

"""Pooling geometry for the MAX_POOL2D and AVG_POOL2D recipes (and TOSA 1.1's
_ADAPTIVE operators, which draw theirs alike): per axis a kernel, a stride and two pads
below the kernel, then the output size, and the input size follows as
``(O - 1) * stride + kernel - pads`` (so ``idiv_check`` divides evenly and every window
holds at least one real tap).  The breakers of the window rules are here too, for every
pooling operator (:func:`register_window_breakers`).

AVG_POOL2D is a dot product with weights 1/KS (KS = kernel_y * kernel_x): its
geometry starts from the kernel, near an aimed KS, then the channels and the axes
(each with a least output size), and last the batch, raised until there are the
outputs the :class:`DotAim` asks for (MIN_DOT_PRODUCTS for floating-point modes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import strategies as st

from conformance.dtypes import I32_MIN
from reference.arguments import INPUTS_CLAUSE, OUTPUTS_CLAUSE
from reference.ops.tensor_conv import STRIDE_CLAUSE
from reference.ops.tensor_pool_fft import (
    KERNEL_CLAUSE,
    PAD_NEGATIVE_CLAUSE,
    POOL_OH_CLAUSE,
    POOL_OW_CLAUSE,
    POOL_PAD_X_CLAUSE,
    POOL_PAD_Y_CLAUSE,
)
from strategies.case import CaseSpec
from strategies.invalid import Breaker, breaks, broken
from strategies.recipes import RecipeContext
from strategies.recipes.data_sets import DotAim, log_uniform, near, sizes_with_product
from strategies.shapes import Budget


@dataclass(frozen=True)
class Axis:
    """One spatial axis of a pooling window: the ERROR_IFs hold by construction."""

    size: int  # IH or IW
    kernel: int
    stride: int
    pad_before: int  # pad_top or pad_left
    pad_after: int
    out: int  # OH or OW


# A target whose windows read padding on every side (pad_top, pad_bottom, pad_left and
# pad_right all above 0): the edge and large cases, and a job aimed at it (issue 25:
# int8 AVG_POOL2D had one padded vector in a pack).  Pads stay below the kernel
# (ERROR_IF), so such an axis has a kernel of 2 or more.
EVERY_SIDE = "attr:pad=every-side"


def pads_every_side(rc: RecipeContext) -> bool:
    return rc.target in ("edge", "large", EVERY_SIDE)


@st.composite
def pool_axis(
    draw: st.DrawFn,
    room: int,
    kernel_cap: int,
    stride_cap: int,
    padded: bool,
    label: str,
    least_pad: int = 0,
) -> Axis:
    """An axis whose input size is at most ``room``.

    With kernel and stride at most ``room``, the smallest valid output size already
    gives an input of at most max(kernel, stride), so a valid output size exists.
    Strides of 1 and of the kernel size (the common networks' choices) are drawn
    on purpose; any other stride, above the kernel too, is drawn as well."""
    room = max(1, room)
    k_cap = max(1, min(kernel_cap, room))
    # Mostly the small kernels networks use; any size up to the cap as well.
    k_lo = min(k_cap, 1 + least_pad)  # a pad of least_pad needs a larger kernel
    k = draw(
        st.one_of(st.integers(k_lo, max(k_lo, min(4, k_cap))), st.integers(k_lo, k_cap)),
        label=f"{label}: kernel",
    )
    s_cap = max(1, min(stride_cap, room))
    s = draw(
        st.one_of(st.just(1), st.just(min(k, s_cap)), st.integers(1, s_cap)),
        label=f"{label}: stride",
    )
    lp = min(least_pad, k - 1)
    p0 = draw(st.integers(lp, k - 1), label=f"{label}: pad before") if padded else 0
    p1 = draw(st.integers(lp, k - 1), label=f"{label}: pad after") if padded else 0
    return _axis(draw, k, s, p0, p1, room, 1, label)


def _axis(
    draw: st.DrawFn, k: int, s: int, p0: int, p1: int, room: int, out_min: int, label: str
) -> Axis:
    base = k - p0 - p1  # the input size that gives one output
    o_min = 1 if base >= 1 else 1 + -(-(1 - base) // s)
    o_max = max(o_min, 1 + (room - base) // s)
    o = draw(st.integers(max(o_min, min(out_min, o_max)), o_max), label=f"{label}: output size")
    return Axis((o - 1) * s + base, k, s, p0, p1, o)


def dot_axis(
    draw: st.DrawFn,
    k: int,
    room: int,
    out_min: int,
    stride_cap: int,
    label: str,
    least_pad: int = 0,
) -> Axis:
    """An axis with kernel ``k``, input at most ``room`` and at least ``out_min``
    outputs where the room allows: the stride leaves room for them, and the pads
    (below the kernel) make up what the kernel's extent takes."""
    room, out_min = max(1, room), max(1, out_min)
    s_cap = max(1, min(stride_cap, room, (room - 1) // max(1, out_min - 1)))
    kind = draw(st.integers(0, 2), label=f"{label}: stride kind")
    s = (1, min(k, s_cap), 0)[kind] or draw(st.integers(1, s_cap), label=f"{label}: stride")
    lp = min(least_pad, k - 1)
    p0 = draw(st.integers(lp, k - 1), label=f"{label}: pad before")
    need = (out_min - 1) * s + k - p0 - room  # more padding needed after
    p1_lo = min(k - 1, max(lp, need))
    p1 = draw(st.integers(p1_lo, k - 1), label=f"{label}: pad after")
    return _axis(draw, k, s, p0, p1, room, out_min, label)


def same_axis(draw: st.DrawFn, k: int, size: int, label: str, least_pad: int = 0) -> Axis:
    """Stride 1 and pads adding up to kernel - 1: the output as large as the input
    (both pads at least ``least_pad`` where the kernel leaves room)."""
    lp = min(least_pad, (k - 1) // 2)
    p0 = draw(st.integers(lp, k - 1 - lp), label=f"{label}: pad before")
    return Axis(size, k, 1, p0, k - 1 - p0, size)


def pool_geometry(draw: st.DrawFn, rc: RecipeContext) -> tuple[int, Axis, Axis, int]:
    """(N, y axis, x axis, C) within the budget (MAX_POOL2D)."""
    budget = rc.budget.max_elements
    max_dim = rc.budget.max_dim
    kernel_cap = min(rc.level["MAX_KERNEL"], max_dim)
    stride_cap = min(rc.level["MAX_STRIDE"], max_dim)
    first_room = min(max_dim, max(1, math.isqrt(budget)))
    y_first = draw(st.booleans(), label="y axis drawn first")
    lp = int(pads_every_side(rc))
    padded = bool(lp) or draw(st.booleans(), label="padded")
    a = draw(pool_axis(first_room, kernel_cap, stride_cap, padded, "first axis", lp))
    room = min(max_dim, max(1, budget // a.size))
    b = draw(pool_axis(room, kernel_cap, stride_cap, padded, "second axis", lp))
    y, x = (a, b) if y_first else (b, a)
    rest = max(1, budget // (y.size * x.size))
    n = draw(st.integers(1, rc.batch_cap(min(rest, max_dim))), label="N")
    c_hi = max(1, min(max_dim, rest // n))
    # Channels make up the budget's least size (an edge case needs room for every
    # special value, a large one its elements) where the spatial axes are small.
    c_lo = min(c_hi, max(1, -(-rc.budget.min_elements // (n * y.size * x.size))))
    c = draw(st.integers(c_lo, c_hi), label="C")
    return n, y, x, c


def _kernel_cap(rc: RecipeContext) -> int:
    """Kernel sizes up to the default budget's max_dim (64): a large job's wider
    max_dim is for spreading tensors over axes, not for 2048-tap windows."""
    return max(1, min(rc.level["MAX_KERNEL"], rc.budget.max_dim, Budget().max_dim))


def window_cap(rc: RecipeContext) -> int:
    """The largest kernel_y * kernel_x the level and budget allow."""
    return min(rc.budget.max_elements, _kernel_cap(rc) ** 2)


def avg_pool_geometry(
    draw: st.DrawFn, rc: RecipeContext, aim: DotAim
) -> tuple[int, Axis, Axis, int]:
    """(N, y axis, x axis, C) of an AVG_POOL2D with KS near the aim and at least
    aim.outputs outputs where the budget holds them."""
    budget, max_dim = rc.budget.max_elements, rc.budget.max_dim
    k_cap = _kernel_cap(rc)
    window_high = min(window_cap(rc), max(2 * aim.ks_low, 2 * aim.ks_goal))
    ky, kx = sizes_with_product(
        draw, [k_cap, k_cap], aim.ks_low, window_high, aim.ks_goal, "kernel"
    )
    lp = int(pads_every_side(rc))
    if lp:  # a pad on each side needs a kernel of 2 (3 for the same-size fallback)
        ky, kx = max(ky, min(k_cap, 3)), max(kx, min(k_cap, 3))
    c = log_uniform(draw, 1, max(1, min(4 * max_dim, aim.outputs_cap // 2)), "C")
    in_room, out_room = max(1, budget // c), max(1, aim.outputs_cap // c)
    p_low, p_goal = -(-aim.outputs // c), aim.outputs_goal / c
    y_first = draw(st.booleans(), label="y axis drawn first")
    kernels = (ky, kx) if y_first else (kx, ky)
    stride_cap = min(rc.level["MAX_STRIDE"], max_dim)
    axes: list[Axis] = []
    for left, k in zip((2, 1), kernels, strict=True):
        share = max(1, min(max_dim, round(in_room ** (1 / left)) * 2))
        out_cap = max(1, min(max_dim, round(out_room ** (1 / left)) * 2, share))
        least = min(out_cap, math.ceil(p_low ** (1 / left)))
        out_min = near(
            draw, least, out_cap, max(1.0, p_goal) ** (1 / left), f"{len(axes)}: outputs"
        )
        a = dot_axis(draw, k, share, out_min, stride_cap, f"axis {len(axes)}", lp)
        axes.append(a)
        in_room, out_room = max(1, in_room // a.size), max(1, out_room // a.out)
        p_low, p_goal = -(-p_low // a.out), p_goal / a.out
    y, x = axes if y_first else axes[::-1]
    n = _batch(draw, y, x, c, budget, aim, rc.batch_cap(budget))
    if n is None:  # same-size pooling (stride 1): the outputs always fit
        low = -(-aim.outputs // c)
        high = max(low, min(budget // c, aim.outputs_cap // c))
        ih, iw = sizes_with_product(
            draw, [max_dim, max_dim], low, high, aim.outputs_goal / c, "IH, IW"
        )
        y, x = same_axis(draw, ky, ih, "y", lp), same_axis(draw, kx, iw, "x", lp)
        n = _batch(draw, y, x, c, budget, aim, rc.batch_cap(budget)) or 1
    return n, y, x, c


def _batch(
    draw: st.DrawFn, y: Axis, x: Axis, c: int, budget: int, aim: DotAim, cap: int
) -> int | None:
    per_in, per_out = y.size * x.size * c, y.out * x.out * c
    hi = min(budget // per_in, aim.outputs_cap // per_out, cap)  # cap: a manifest's batch
    lo = max(-(-aim.outputs // per_out), min(hi, -(-aim.inputs // per_in)))
    if lo > hi:
        return None
    goal = max(1.0, aim.outputs_goal / per_out)
    return near(draw, lo, min(hi, max(lo, 4, round(goal))), goal, "N")


def pool_attributes(y: Axis, x: Axis) -> dict[str, Any]:
    return {
        "kernel": (y.kernel, x.kernel),
        "stride": (y.stride, x.stride),
        "pad": (y.pad_before, y.pad_after, x.pad_before, x.pad_after),
    }


# -- the window rules' breakers, shared by the pooling operators ---------------------------
#
# kernel, stride and pad are attributes of AVG_POOL2D and MAX_POOL2D and shape_t inputs
# of TOSA 1.1's AVG_POOL2D_ADAPTIVE and MAX_POOL2D_ADAPTIVE (tensor_ops: the same
# pseudocode, the parameters "as inputs rather than attributes"): each breaker reads and
# writes a parameter where the case has it.


def window_parameter(spec: CaseSpec, name: str) -> list[int]:
    """kernel, stride or pad: the attribute, else the shape_t input of that name."""
    if name in spec.attributes:
        return [int(v) for v in spec.attributes[name]]
    return [int(v) for v in np.asarray(spec.tensor(name).values).reshape(-1)]


def set_window_parameter(spec: CaseSpec, name: str, values: list[int]) -> None:
    """Write kernel, stride or pad back where :func:`window_parameter` found it (an
    input of another length becomes a shape of that length)."""
    if name in spec.attributes:
        spec.attributes[name] = tuple(values)
    else:
        spec.set_shape_input(name, values)


def _bad_value(draw: st.DrawFn, low: int, high: int, label: str) -> int:
    """A value in [low, high], usually near the boundary the rule draws."""
    near = st.integers(max(low, high - 3), high) if high - low > 3 else st.integers(low, high)
    return draw(st.one_of(near, st.integers(low, high)), label=label)


def _below_one(attribute: str, clause: str) -> Breaker:
    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        out = broken(spec, clause)
        vals = window_parameter(spec, attribute)
        i = draw(st.integers(0, 1), label=f"{attribute} element")
        vals[i] = _bad_value(draw, I32_MIN, 0, f"{attribute} below 1")
        set_window_parameter(out, attribute, vals)
        return out

    fn.__name__ = f"{attribute}_below_one"
    return fn


def pad_negative(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    out = broken(spec, PAD_NEGATIVE_CLAUSE)
    pad = window_parameter(spec, "pad")
    i = draw(st.integers(0, 3), label="pad element")
    pad[i] = _bad_value(draw, I32_MIN, -1, "negative pad")
    set_window_parameter(out, "pad", pad)
    return out


def _pad_not_below_kernel(pads: tuple[int, int], k: int, clause: str) -> Breaker:
    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        """A pad of the kernel size or a little more (the level keeps pads within
        MAX_KERNEL, beyond which the case would be a level case instead)."""
        out = broken(spec, clause)
        pad = window_parameter(spec, "pad")
        kernel = window_parameter(spec, "kernel")[k]
        i = draw(st.sampled_from(pads), label="pad element")
        top = min(rc.level["MAX_KERNEL"], kernel + 3)
        pad[i] = draw(st.integers(kernel, max(kernel, top)), label="pad at least the kernel")
        set_window_parameter(out, "pad", pad)
        return out

    fn.__name__ = f"pad_not_below_kernel_{k}"
    return fn


IDIV_H = "input1 % input2 != 0 (idiv_check(IH + pad_top + pad_bottom - kernel_y, stride_y))"
IDIV_W = "input1 % input2 != 0 (idiv_check(IW + pad_left + pad_right - kernel_x, stride_x))"


def _idiv_breaker(axis: int, clause: str) -> Breaker:
    """axis 0: y (IH, pads 0 and 1), 1: x (IW, pads 2 and 3)."""

    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        """A stride of 2 or more that does not divide the padded extent: the stride
        kept (or raised from 1), the input grown by less than a stride if needed."""
        out = broken(spec, clause)
        stride = window_parameter(spec, "stride")
        kernel = window_parameter(spec, "kernel")[axis]
        pad = window_parameter(spec, "pad")
        s = stride[axis] if stride[axis] >= 2 else draw(st.integers(2, 4), label="new stride")
        stride[axis] = s
        shape = list(spec.inputs[0].shape)
        span = shape[1 + axis] + pad[2 * axis] + pad[2 * axis + 1] - kernel
        if span % s == 0:
            shape[1 + axis] += draw(st.integers(1, s - 1), label="input grown by")
        set_window_parameter(out, "stride", stride)
        out.reshape_tensor("input", tuple(shape))
        return out

    fn.__name__ = f"idiv_breaker_{axis}"
    return fn


def _out_size_breaker(axis: int, clause: str) -> Breaker:
    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        """An output one to three larger or smaller (never below 1)."""
        out = broken(spec, clause)
        shape = list(spec.outputs[0].shape)
        d = draw(st.integers(1, 3), label="output size off by")
        if shape[1 + axis] > d and draw(st.booleans(), label="smaller"):
            shape[1 + axis] -= d
        else:
            shape[1 + axis] += d
        out.reshape_tensor("output", tuple(shape))
        return out

    fn.__name__ = f"out_size_breaker_{axis}"
    return fn


def other_rank_4d(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A rank-3 or rank-5 version of a 4D shape (same element count)."""
    if draw(st.booleans(), label="rank 5 rather than 3"):
        return (1, *shape)
    return (shape[0] * shape[1], *shape[2:])


def pool_input_rank(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    out = broken(spec, INPUTS_CLAUSE)
    out.reshape_tensor("input", other_rank_4d(draw, spec.inputs[0].shape))
    return out


def pool_output(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """An output whose N or C is not the input's, or of rank 3 or 5."""
    out = broken(spec, OUTPUTS_CLAUSE)
    shape = list(spec.outputs[0].shape)
    how = draw(st.sampled_from(["N", "C", "rank"]), label="output made wrong")
    if how == "rank":
        out.reshape_tensor("output", other_rank_4d(draw, tuple(shape)))
        return out
    dim = 0 if how == "N" else 3
    shape[dim] += draw(st.integers(1, 3), label="added to it")
    out.reshape_tensor("output", tuple(shape))
    return out


# In the pseudocode's order (pad = [top, bottom, left, right], kernel = [y, x]: the x
# rule of the pads is checked first), then the argument rules.
WINDOW_BREAKERS: tuple[tuple[str, Breaker], ...] = (
    (KERNEL_CLAUSE, _below_one("kernel", KERNEL_CLAUSE)),
    (STRIDE_CLAUSE, _below_one("stride", STRIDE_CLAUSE)),
    (PAD_NEGATIVE_CLAUSE, pad_negative),
    (POOL_PAD_X_CLAUSE, _pad_not_below_kernel((2, 3), 1, POOL_PAD_X_CLAUSE)),
    (POOL_PAD_Y_CLAUSE, _pad_not_below_kernel((0, 1), 0, POOL_PAD_Y_CLAUSE)),
    (IDIV_H, _idiv_breaker(0, IDIV_H)),
    (IDIV_W, _idiv_breaker(1, IDIV_W)),
    (POOL_OH_CLAUSE, _out_size_breaker(0, POOL_OH_CLAUSE)),
    (POOL_OW_CLAUSE, _out_size_breaker(1, POOL_OW_CLAUSE)),
    (INPUTS_CLAUSE, pool_input_rank),
    (OUTPUTS_CLAUSE, pool_output),
)


def register_window_breakers(*operators: str) -> None:
    """Register the window rules' breakers for ``operators`` (pooling operators with
    kernel, stride and pad, as attributes or as shape_t inputs)."""
    for clause, fn in WINDOW_BREAKERS:
        breaks(*operators, clause=clause)(fn)

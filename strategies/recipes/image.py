"""Recipe and breakers for RESIZE.

Per axis (y, x) the case is the tuple (in_size, n, d, offset, border, out_size) with
out_size = ((in_size - 1) * n - offset + border) / d + 1 exactly (idiv_check).  The
scale is drawn first (unit, up- or downscale up to the ERROR_IF limits and the level's
MAX_SCALE), then an input size whose output fits the budget, then an offset, and last
a border in the one residue class mod d that makes the division exact.

The block-scaled modes (TOSA 1.1, ``in_t = out_t`` a ``bs32_*`` composite) are
NEAREST_NEIGHBOR (their rows say so) with C a whole number of blocks, values and scales
from :mod:`strategies.block_tensors`.  Their breakers: C off the block grid, and
BILINEAR (the composite's mode rule); the integer rows' "mode of another row" breaker
leaves them alone, as the pseudocode states their mode rule itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from hypothesis import strategies as st

from conformance import dtypes
from conformance.block_tensor import is_block_scaled
from reference.arguments import INPUTS_CLAUSE, TYPES_CLAUSE
from reference.ops.image import (
    BLOCK_IN_CLAUSE,
    BLOCK_MODE_CLAUSE,
    BORDER_X_CLAUSE,
    BORDER_Y_CLAUSE,
    IDIV_CHECK_CLAUSE,
    MAX_IMAGE_SIZE,
    OFFSET_X_CLAUSE,
    OFFSET_Y_CLAUSE,
    OH_CLAUSE,
    OW_CLAUSE,
    SCALE_D_CLAUSE,
    SCALE_N_CLAUSE,
    SCALE_POSITIVE_CLAUSE,
    SIZE_CLAUSE,
)
from strategies import block_tensors
from strategies.case import CaseSpec, TensorDraw, resized, shape_tensor
from strategies.invalid import breaks, broken
from strategies.recipes import RecipeContext, recipe
from strategies.recipes.common import aimed
from strategies.ties import ulp
from strategies.values import add_specials

NEAREST, BILINEAR = "NEAREST_NEIGHBOR", "BILINEAR"
MAX_N = 1 << 11  # ERROR_IF(scale_n > (1 << 11))


def block_of(rc: RecipeContext) -> int:
    """The block size of a block-scaled in_t (= out_t), 0 for the other modes."""
    dt = rc.dtype("in_t")
    return dt.block_size if is_block_scaled(dt) else 0


def _channels(draw: st.DrawFn, rc: RecipeContext) -> int:
    """C: 1 to 8, or one or two whole blocks for a block-scaled mode (two where the
    budget leaves an image of 4 x 4 pixels or more)."""
    bs = block_of(rc)
    if not bs:
        return draw(st.integers(1, 8), label="C")
    most = max(1, min(2, rc.budget.max_elements // (16 * bs)))
    return bs * draw(st.integers(1, most), label="C: blocks")


@dataclass(frozen=True)
class Axis:
    """One spatial axis of a RESIZE case."""

    in_size: int
    n: int
    d: int
    offset: int
    border: int

    @property
    def numerator(self) -> int:
        return (self.in_size - 1) * self.n - self.offset + self.border

    @property
    def out_size(self) -> int:
        return self.numerator // self.d + 1


def _borders(in_size: int, n: int, d: int, offset: int, cap: int) -> range:
    """Borders within [-16n, n) that make the numerator a multiple of d, between 0 and
    (cap - 1) * d (an output size from 1 to cap)."""
    base = (in_size - 1) * n - offset
    lo = max(-16 * n, -base)
    hi = min(n - 1, (cap - 1) * d - base)
    first = lo + (-(base + lo)) % d
    return range(first, hi + 1, d)


@st.composite
def _pick(draw: st.DrawFn, r: range, label: str) -> int:
    """An element of a non-empty range: an end, the one nearest 0 (the usual border),
    or any."""
    nearest = min(range(len(r)), key=lambda i: abs(r[i])) if len(r) <= 64 else None
    if nearest is None:  # a long range: 0 is within a step of its first element's index
        nearest = max(0, min(len(r) - 1, -r[0] // r.step))
    i = draw(
        st.one_of(st.sampled_from([0, len(r) - 1, nearest]), st.integers(0, len(r) - 1)),
        label=label,
    )
    return r[i]


@st.composite
def _offset_border(
    draw: st.DrawFn, in_size: int, n: int, d: int, cap: int, label: str
) -> tuple[int, int] | None:
    """An offset in [-n, 16n) (its ends included) and a border that fits it; None when
    no offset does (the scale leaves no output size from 1 to cap)."""
    hi = min(16 * n - 1, (in_size - 1) * n + n - 1)  # larger ones leave no border
    # The ends, the usual offsets (within one input pixel), or any.
    usual = st.integers(-n, min(n, hi))
    offset = draw(
        st.one_of(st.sampled_from([-n, 0, hi]), usual, usual, st.integers(-n, hi)),
        label=f"{label} offset",
    )
    for off in (offset, 0, -n):
        r = _borders(in_size, n, d, off, cap)
        if len(r):
            return off, draw(_pick(r, f"{label} border"))
    return None


@st.composite
def _scale(draw: st.DrawFn, max_scale: int, label: str) -> tuple[int, int]:
    """(n, d) with 0 < n <= 2048, d < 16n and n / d <= MAX_SCALE."""
    max_scale = min(max_scale, MAX_N)  # n <= 2048 and d >= 1 cap the ratio anyway
    kinds = ["unit", "common", "up", "down", "extreme"]
    kind = draw(st.sampled_from(kinds), label=f"{label} scale")
    if kind == "common":  # the ratios models use, often written unreduced
        n, d = draw(st.sampled_from([(2, 1), (4, 1), (3, 2), (1, 2), (2, 3), (8, 1)]))
        k = draw(st.integers(1, MAX_N // max(n, d)), label=f"{label} times")
        return n * k, d * k
    if kind == "unit":
        k = draw(st.integers(1, MAX_N), label=f"{label} unit")
        return k, k
    if kind == "up":
        d = draw(st.integers(1, 64), label=f"{label} d")
        return draw(st.integers(d + 1, min(MAX_N, max_scale * d)), label=f"{label} n"), d
    if kind == "down":
        n = draw(st.integers(1, MAX_N), label=f"{label} n")
        return n, draw(st.integers(n + 1, 16 * n - 1), label=f"{label} d")
    ends = [(MAX_N, MAX_N // max_scale), (max_scale, 1), (1, 15), (MAX_N, 16 * MAX_N - 1)]
    ends += [(2, 1), (1, 2), (1, 1), (MAX_N - 1, MAX_N // max_scale)]
    return draw(st.sampled_from(ends), label=f"{label} ends")


@st.composite
def _axis(draw: st.DrawFn, rc: RecipeContext, cap: int, label: str, least: int = 1) -> Axis:
    """An axis with input size at most ``cap`` (and at least ``least`` where the drawn
    scale lets the output stay within ``cap``)."""
    n, d = draw(_scale(int(rc.level["MAX_SCALE"]), label))
    # (in - 1) * n <= (cap - 1) * d keeps the output within cap with offset 0.
    top = min(cap, (cap - 1) * d // n + 1)
    in_size = draw(st.integers(min(least, top), top), label=f"{label} in")
    ob = draw(_offset_border(in_size, n, d, cap, label))
    assert ob is not None  # offset 0 always fits: border -((in - 1) * n mod d)
    return Axis(in_size, n, d, *ob)


def _build(
    rc: RecipeContext, x: TensorDraw, y: Axis, x_axis: Axis, mode: str, out_dtype: dtypes.DType
) -> CaseSpec:
    n, _, _, c = x.shape
    inputs = [
        x,
        shape_tensor("scale", [y.n, y.d, x_axis.n, x_axis.d]),
        shape_tensor("offset", [y.offset, x_axis.offset]),
        shape_tensor("border", [y.border, x_axis.border]),
    ]
    out = TensorDraw("output", (n, y.out_size, x_axis.out_size, c), out_dtype)
    return rc.spec_of(inputs, [out], attributes={"mode": mode})


def _mode(draw: st.DrawFn, rc: RecipeContext) -> str:
    """The integer rows name their mode; the floating-point rows serve both (an
    "attr:mode=..." target picks one, by its tosa.xml name or the pseudocode's
    NEAREST)."""
    row = rc.mode.mode.lower()
    if "bilinear" in row:
        return BILINEAR
    if "nearest" in row:
        return NEAREST
    aimed_at = aimed(rc, "mode")
    if aimed_at in (NEAREST, "NEAREST", BILINEAR):
        return BILINEAR if aimed_at == BILINEAR else NEAREST
    return draw(st.sampled_from([NEAREST, BILINEAR]), label="mode")


def _fits(n: int, d: int, max_scale: int) -> bool:
    """The scale ERROR_IFs and the level's MAX_SCALE."""
    return 1 <= n <= MAX_N and 1 <= d < 16 * n and n <= max_scale * d


def _with_parity(n: int, d: int, odd: bool, max_scale: int) -> tuple[int, int]:
    """(n, d) with n of the wanted parity (odd ones at least 3), moved by one or two
    where the limits allow, else a unit scale of that parity."""
    for k in (n, n + 1, n - 1, n + 2):
        if k % 2 == int(odd) and (k >= 3 or not odd) and _fits(k, d, max_scale):
            return k, d
    return (3, 3) if odd else (2, 2)


@st.composite
def _hit_axis(
    draw: st.DrawFn, n: int, d: int, r: int, span: int, cap: int, label: str
) -> Axis | None:
    """An axis of scale n / d whose output rows hit, ``span`` of them in a row (d = n
    + 1 steps r by one), remainder r between two distinct input rows: an input of two
    rows or more, an offset solved for a hit at one of the first output rows
    (negative where a later row is hit), a border keeping those rows.  None where
    the scale leaves no such offset within the output cap."""
    in_size = draw(
        st.integers(span + 1, max(span + 1, min(cap, (cap - 1) * d // n + 1))), label=f"{label} in"
    )
    choices = [
        (hit, off)
        for hit in range(4)
        for off in (r - hit * d + i * n for i in range(in_size - span))
        if -n <= off < 16 * n
    ]
    for _ in range(len(choices)):
        k = draw(st.integers(0, len(choices) - 1), label=f"{label} offset")
        hit, off = choices.pop(k)
        base = (in_size - 1) * n - off
        last = (hit + span - 1) * d  # the numerator that keeps the last hit row
        keep = [b for b in _borders(in_size, n, d, off, cap) if base + b >= last]
        if keep:
            border = keep[draw(st.integers(0, len(keep) - 1), label=f"{label} border")]
            return Axis(in_size, n, d, off, border)
    return None


@st.composite
def _tie_axis(draw: st.DrawFn, rc: RecipeContext, cap: int, label: str, odd: bool) -> Axis:
    """An axis on which some output row samples half-way between two distinct input
    rows (n even, 2 * r == n) or one step of the position grid off that (n odd,
    2 * r == n +- 1): the scale drawn as usual (up, down, unit, non-integer ratios)
    and moved to the parity, else a unit scale of that parity."""
    max_scale = int(rc.level["MAX_SCALE"])
    n, d = _with_parity(*draw(_scale(max_scale, label)), odd, max_scale)
    for nn, dd in ((n, d), (3, 3) if odd else (2, 2)):
        r = nn // 2 + (draw(st.sampled_from([0, 1]), label=f"{label} above") if odd else 0)
        axis = draw(_hit_axis(nn, dd, r, 1, cap, label))
        if axis is not None:
            return axis
    raise AssertionError("a unit scale always has a half-way row")  # pragma: no cover


@st.composite
def _dyadic_axis(draw: st.DrawFn, rc: RecipeContext, cap: int) -> Axis:
    """An axis whose scale_n is a power of two: every dy = ry / scale_n is dyadic."""
    n = 1 << draw(st.integers(0, 11), label="y: log2 scale_n")
    d = draw(st.integers(max(1, -(-n // int(rc.level["MAX_SCALE"]))), 4 * n), label="y: d")
    in_size = draw(st.integers(1, min(cap, (cap - 1) * d // n + 1)), label="y: in")
    ob = draw(_offset_border(in_size, n, d, cap, "y"))
    assert ob is not None  # offset 0 always fits
    return Axis(in_size, n, d, *ob)


def _bilinear_ties(draw: st.DrawFn, shape: tuple[int, ...], dt: dtypes.DType) -> np.ndarray:
    """Input rows all alike and neighbouring columns one ulp apart: where dx is 1/2
    (and dy dyadic, so that fp64 holds every weight and product) the interpolated
    value is exactly half-way between two neighbours of the type."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="tie values"))
    n, _, w, c = shape
    base = rng.standard_normal((n, 1, 1, c)).astype(dt.storage).astype(np.float64)
    base = np.where(base == 0, 1.0, base)
    step = ulp(base, dt) * (np.arange(w) % 2)[None, None, :, None]
    return np.broadcast_to(base + step, shape).astype(dt.storage)


@st.composite
def _tie_case(draw: st.DrawFn, rc: RecipeContext, cap: int, mode: str) -> tuple[Axis, Axis]:
    """Axes for the "ties" target.  NEAREST_NEIGHBOR (and integer BILINEAR, which is
    exact): one axis with half-way rows, the other one step off.  Float BILINEAR (see
    _bilinear_ties): a power-of-two scale_y_n (dyadic dy), and columns at dx = 1/2;
    for fp16 and bf16 also at dx = 1/2 +- 1/n with n = 2**p (p the precision), whose
    values are an ulp * 2**-p off the tie, three columns in a row (d = n + 1)."""
    out_t = rc.dtype("out_t")
    if mode == BILINEAR and out_t.is_float:
        y = draw(_dyadic_axis(rc, cap))
        n = 2 << out_t.fp.normal_frac
        near = n <= MAX_N and draw(st.booleans(), label="x: columns just off the half")
        x = draw(_hit_axis(n, n + 1, n // 2 - 1, 3, cap, "x")) if near else None
        return y, x or draw(_tie_axis(rc, cap, "x", False))
    odd_y = draw(st.booleans(), label="y one step off")
    return draw(_tie_axis(rc, cap, "y", odd_y)), draw(_tie_axis(rc, cap, "x", not odd_y))


@recipe("RESIZE")
def resize(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    in_t, out_t = rc.dtype("in_t"), rc.dtype("out_t")
    mode = _mode(draw, rc)
    batch = draw(st.integers(1, rc.batch_cap(3)), label="N")
    channels = _channels(draw, rc)
    # Both the input and the output hold N * size_y * size_x * C <= the budget.
    cap = max(2, min(rc.budget.max_dim, math.isqrt(rc.budget.max_elements // (batch * channels))))
    # A large case asks the input for min_elements: each axis at least the square root.
    least = math.isqrt(-(-rc.budget.min_elements // (batch * channels)) - 1) + 1
    if rc.target == "ties":
        y, x_axis = draw(_tie_case(rc, cap, mode))
    else:
        y = draw(_axis(rc, cap, "y", least))
        x_axis = draw(_axis(rc, cap, "x", least))
    shape = (batch, y.in_size, x_axis.in_size, channels)
    x = rc.tensor(draw, "input", in_t, shape)
    if rc.target == "ties" and mode == BILINEAR and in_t.is_float:
        x = replace(x, values=_bilinear_ties(draw, shape, in_t))
    spec = _build(rc, x, y, x_axis, mode, out_t)
    if in_t.is_float and rc.target != "ties":  # no REQUIRE on values: NaN, inf, -0 too
        add_specials(draw, spec, ("input",), rc)
    return spec


# -- reading a drawn case back ----------------------------------------------------------


def _axes(spec: CaseSpec) -> tuple[Axis, Axis]:
    v = {t.name: [int(e) for e in np.asarray(t.values)] for t in spec.inputs[1:]}
    _, ih, iw, _ = spec.inputs[0].shape
    y = Axis(ih, v["scale"][0], v["scale"][1], v["offset"][0], v["border"][0])
    x = Axis(iw, v["scale"][2], v["scale"][3], v["offset"][1], v["border"][1])
    return y, x


def _rebuilt(
    rc: RecipeContext, spec: CaseSpec, clause: str, y: Axis, x: Axis, *, single: bool = False
) -> CaseSpec:
    """``spec`` with new axes (the input's values repeated or cut to their sizes, a
    composite's scales with them), labelled broken; ``single``: with one image of one
    channel (one block of a block-scaled input: C stays whole blocks)."""
    t = spec.inputs[0]
    assert t.values is not None
    n, c = (1, max(1, block_of(rc))) if single else (t.shape[0], t.shape[3])
    shape = (n, y.in_size, x.in_size, c)
    scales = None
    if is_block_scaled(t.dtype):
        scales = block_tensors.scales_for(t.scales, t.dtype, shape)
    x_in = replace(t, shape=shape, values=resized(t.values, shape), scales=scales)
    new = _build(rc, x_in, y, x, spec.attributes["mode"], spec.outputs[0].dtype)
    out = broken(spec, clause)
    out.inputs, out.outputs = new.inputs, new.outputs
    return out


def _with_output(spec: CaseSpec, clause: str, oh: int, ow: int) -> CaseSpec:
    out = broken(spec, clause)
    n, _, _, c = out.outputs[0].shape
    out.outputs[0] = replace(out.outputs[0], shape=(n, oh, ow, c))
    return out


def _y_axis(draw: st.DrawFn) -> bool:
    """Which axis a breaker changes: True for y, False for x."""
    return draw(st.booleans(), label="axis y")


def _refit(draw: st.DrawFn, a: Axis, n: int, d: int) -> Axis:
    """``a`` with a new (n, d): its offset and border drawn again for it, the output
    size kept near the input size."""
    cap = 2 * a.in_size + 2
    ob = draw(_offset_border(a.in_size, n, d, cap, "refit"))
    if ob is None:  # a scale past its limits may leave no fitting offset: offset 0
        ob = (0, -(((a.in_size - 1) * n) % d))
    return Axis(a.in_size, n, d, *ob)


# -- breakers ---------------------------------------------------------------------------


@breaks("RESIZE", clause=SIZE_CLAUSE)
def too_large(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """One image dimension of 16384 or more: the input's (at unit scale), or the
    output's (upscaled by MAX_SCALE, within the level)."""
    big = MAX_IMAGE_SIZE + draw(st.integers(0, 8), label="beyond the limit")
    if draw(st.booleans(), label="input large"):
        k = draw(st.integers(1, MAX_N), label="unit scale")
        large = Axis(big, k, k, 0, 0)
    else:
        s = min(int(rc.level["MAX_SCALE"]), MAX_N)
        in_size = (big - 1) // s + 2  # (in - 1) * s + 1 > big - 1
        large = Axis(in_size, s, 1, 0, 0)
    small = Axis(1, 1, 1, 0, 0)
    y, x = (large, small) if _y_axis(draw) else (small, large)
    return _rebuilt(rc, spec, SIZE_CLAUSE, y, x, single=True)


@breaks("RESIZE", clause=SCALE_POSITIVE_CLAUSE)
def scale_not_positive(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """One of the four scale values zero or negative."""
    out = broken(spec, SCALE_POSITIVE_CLAUSE)
    t = out.inputs[1]
    values = np.array(t.values, np.int64)
    values[draw(st.integers(0, 3), label="scale value")] = draw(st.integers(-3, 0), label="to")
    out.inputs[1] = replace(t, values=values)
    return out


@breaks("RESIZE", clause=SCALE_N_CLAUSE)
def scale_n_too_large(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """scale_n above 2048 on one axis (n / d still within MAX_SCALE), offset, border
    and output size refitted to it."""
    y, x = _axes(spec)
    n = draw(st.integers(MAX_N + 1, 2 * MAX_N), label="n")
    d = draw(st.integers(n // 2, 2 * n), label="d")
    if _y_axis(draw):
        y = _refit(draw, y, n, d)
    else:
        x = _refit(draw, x, n, d)
    return _rebuilt(rc, spec, SCALE_N_CLAUSE, y, x)


@breaks("RESIZE", clause=SCALE_D_CLAUSE)
def scale_d_too_large(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A downscale of 1/16 or beyond (scale_d >= 16 * scale_n) on one axis."""
    y, x = _axes(spec)
    is_y = _y_axis(draw)
    a = y if is_y else x
    n = min(a.n, 64)  # keeps the output of the refitted axis small
    d = 16 * n + draw(st.integers(0, n - 1), label="d beyond 16n")
    new = _refit(draw, a, n, d)
    y, x = (new, x) if is_y else (y, new)
    return _rebuilt(rc, spec, SCALE_D_CLAUSE, y, x)


def _offset_breaker(is_y: bool, clause: str) -> None:
    @breaks("RESIZE", clause=clause)
    def offset_out_of_range(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        """An offset below -n or at 16n or above; the border refitted so that the
        output size formula still holds."""
        y, x = _axes(spec)
        a = y if is_y else x
        k = draw(st.integers(0, 3), label="beyond the limit")
        high = 16 * a.n + k
        cap = 1 << 20  # only the division must be exact here
        if draw(st.booleans(), label="high side") and len(_borders(a.in_size, a.n, a.d, high, cap)):
            off = high
        else:
            off = -a.n - 1 - k  # always has a border: num = in * n + 1 + k + border
        r = _borders(a.in_size, a.n, a.d, off, cap)
        new = replace(a, offset=off, border=r[0])  # the smallest output
        y, x = (new, x) if is_y else (y, new)
        return _rebuilt(rc, spec, clause, y, x)


def _border_breaker(is_y: bool, clause: str) -> None:
    @breaks("RESIZE", clause=clause)
    def border_out_of_range(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        """A border at n or above, or below -16n where the input is large enough for
        it; its value in the residue class that keeps the division exact."""
        y, x = _axes(spec)
        a = y if is_y else x
        base = (a.in_size - 1) * a.n - a.offset
        low = -16 * a.n - 1
        low -= (base + low) % a.d  # the next one down that divides
        if base + low >= 0 and draw(st.booleans(), label="low side"):
            border = low
        else:
            border = max(a.n, -base)
            border += (-(base + border)) % a.d
        new = replace(a, border=border)
        y, x = (new, x) if is_y else (y, new)
        return _rebuilt(rc, spec, clause, y, x)


_offset_breaker(True, OFFSET_Y_CLAUSE)
_offset_breaker(False, OFFSET_X_CLAUSE)
_border_breaker(True, BORDER_Y_CLAUSE)
_border_breaker(False, BORDER_X_CLAUSE)


@breaks("RESIZE", clause=IDIV_CHECK_CLAUSE)
def inexact_division(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A numerator that is no multiple of scale_d (made 2 where it was 1): the border,
    or else the offset, moved a step or two within its range.  The output takes the
    truncated size."""
    y, x = _axes(spec)
    is_y = _y_axis(draw)
    a = y if is_y else x
    d = max(a.d, 2)  # 2 < 16n for every n >= 1, and n / 2 <= n / 1 <= MAX_SCALE
    tries = [replace(a, d=d, border=a.border + k) for k in (0, 1, -1, 2, -2)]
    tries += [replace(a, d=d, offset=a.offset + k) for k in (-1, 1, -2, 2)]
    new = next(
        t
        for t in tries
        if -16 * t.n <= t.border < t.n
        and -t.n <= t.offset < 16 * t.n
        and t.numerator >= 1
        and t.numerator % d != 0
    )
    y, x = (new, x) if is_y else (y, new)
    return _rebuilt(rc, spec, IDIV_CHECK_CLAUSE, y, x)


def _output_breaker(is_y: bool, clause: str) -> None:
    @breaks("RESIZE", clause=clause)
    def output_size_wrong(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        """The output one or a few rows (columns) larger, or smaller, than the formula."""
        _, oh, ow, _ = spec.outputs[0].shape
        size = oh if is_y else ow
        delta = draw(st.sampled_from([-1, 1, 2, 3] if size > 1 else [1, 2, 3]), label="delta")
        if is_y:
            return _with_output(spec, clause, oh + delta, ow)
        return _with_output(spec, clause, oh, ow + delta)


_output_breaker(True, OH_CLAUSE)
_output_breaker(False, OW_CLAUSE)


@breaks("RESIZE", clause=INPUTS_CLAUSE)
def shape_input_wrong_length(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """scale, offset or border with one value too many or too few."""
    out = broken(spec, INPUTS_CLAUSE)
    k = draw(st.integers(1, 3), label="shape input")
    t = out.inputs[k]
    values = np.array(t.values, np.int64)
    longer = draw(st.booleans(), label="one more")
    values = np.append(values, values[-1]) if longer else values[:-1]
    out.inputs[k] = replace(t, shape=(len(values),), values=values)
    return out


@breaks("RESIZE", clause=TYPES_CLAUSE, applies=lambda rc: rc.dtype("in_t").is_int)
def mode_of_another_row(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """An integer row with the other resize mode: "signed 8, nearest" types (i8 -> i8)
    with BILINEAR, or the bilinear types with NEAREST_NEIGHBOR.  The floating-point
    rows serve both modes, so they cannot break this; the block-scaled rows break
    their own mode rule (:func:`composite_bilinear`)."""
    out = broken(spec, TYPES_CLAUSE)
    out.attributes["mode"] = NEAREST if spec.attributes["mode"] == BILINEAR else BILINEAR
    return out


def _block_scaled(rc: RecipeContext) -> bool:
    return block_of(rc) > 0


@breaks("RESIZE", clause=BLOCK_IN_CLAUSE, applies=_block_scaled)
def channels_off_block(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """C off the block grid, by 1 to block - 1 either way (the input's and the
    output's alike, so that the argument check still holds).  The out_t rule after
    it has no breaker: with in_t = out_t and one C it holds only where this one has
    fired already."""
    bs = block_of(rc)
    t, o = spec.inputs[0], spec.outputs[0]
    c = t.shape[3]
    delta = draw(st.integers(1, bs - 1), label="C off the block grid by")
    c = c - delta if c > delta else c + delta
    out = broken(spec, BLOCK_IN_CLAUSE)
    out.reshape_tensor(t.name, (*t.shape[:3], c))
    out.replace_tensor(o.name, shape=(*o.shape[:3], c))
    return out


@breaks("RESIZE", clause=BLOCK_MODE_CLAUSE, applies=_block_scaled)
def composite_bilinear(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A block-scaled input with BILINEAR, every shape rule still met."""
    out = broken(spec, BLOCK_MODE_CLAUSE)
    out.attributes["mode"] = BILINEAR
    return out

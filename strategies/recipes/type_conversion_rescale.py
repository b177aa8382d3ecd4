"""Recipe for RESCALE (its breakers: type_conversion_rescale_breakers).

The recipe draws its attributes within the ERROR_IFs (or as an "attr:NAME=VALUE" target
asks: scale32, double_round or TOSA 1.0's rounding_mode, per_channel, input_unsigned,
output_unsigned, and the zero points as "zero", "nonzero", "min" or "max" where the
type allows one), then its per-channel multiplier and shift, then bounds each
channel's input values so that apply_scale_32's value REQUIRE, or apply_scale_16's and
apply_add_s's result REQUIREs, hold.  Shifts land the results near the output type's
range, or fit the whole input range between the output's ends around the zero point
(outputs spread, none saturated), or anywhere in [2, 62], its ends included.

"ties": each channel's multiplier and shift leave values whose shifted-out bits are
exactly 10...0 (a multiplier u * 2**a with values w * 2**(s-1-a), w odd; both signs),
values one unit off (an odd multiplier solved modulo 2**shift for 10...01 or 01...1),
and with double_round (shift > 31) values the 2**30 bias carries across the half; part
of each channel's elements take those values (strategies.ties decides which are).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from conformance import dtypes
from conformance.dtypes import I32_MAX, I32_MIN, DType
from conformance.errata import MUL_T_BY_SCALE32
from reference.ops import type_conversion as tc
from strategies.case import CaseSpec, TensorDraw
from strategies.recipes import RecipeContext, recipe
from strategies.recipes.common import aimed, drawn_bool, zero_point
from strategies.shapes import shapes
from strategies.ties import shift_classes

I8, I16, I32, I48 = dtypes.I8, dtypes.I16, dtypes.I32, dtypes.I48
INT64_SAFE = 1 << 62  # value bounds beyond what any input holds, clamped to this
NARROW = frozenset({I8, I16})  # the types with an unsigned form


def _zero_point(draw: st.DrawFn, rc: RecipeContext, name: str, dt: DType, unsigned: bool) -> int:
    """int8 / uint8: any value of the type; uint16: 0 or 32768; everything else 0."""
    if dt is I8:
        lo, hi = (0, 255) if unsigned else (-128, 127)
        return zero_point(draw, rc, name, lo, hi)
    if dt is I16 and unsigned:
        value = aimed(rc, name)
        if value in ("zero", "min", "nonzero", "max"):
            return 0 if value in ("zero", "min") else 32768
        return draw(st.sampled_from([0, 32768]), label=name)
    return 0


def _unsigned_options(in_t: DType, out_t: DType) -> list[str]:
    """Which side may be unsigned: never both, only an 8- or 16-bit side, never an
    unsigned input into i32, never an i32 or i48 input into an unsigned output."""
    options = ["none"]
    if in_t in NARROW and out_t is not I32:
        options.append("input")
    if out_t in NARROW and in_t in NARROW:
        options.append("output")
    return options


def _unsigned_side(draw: st.DrawFn, rc: RecipeContext, in_t: DType, out_t: DType) -> str:
    """The side read as unsigned, if any: as a target on the flags asks, or as a zero
    point target needs (uint16's only non-zero zero point; int8's most negative one)."""
    options = _unsigned_options(in_t, out_t)
    for side, dt in (("input", in_t), ("output", out_t)):
        flag, zp = aimed(rc, f"{side}_unsigned"), aimed(rc, f"{side}_zp")
        if side in options and (flag == "true" or (dt is I16 and zp in ("nonzero", "max"))):
            return side
        if flag == "false" or (dt is I8 and zp == "min"):
            options = [o for o in options if o != side]
    return draw(st.sampled_from(options), label="unsigned side")


def _fit_shift(m: int, vmax: int, room: int) -> int:
    """The smallest shift that keeps |value| <= vmax within |result| <= room."""
    need = -(-max(vmax, 1) * max(m, 1) // max(room, 1))  # 2**s >= vmax * m / room
    return max(2, (need - 1).bit_length())


@st.composite
def _channel(
    draw: st.DrawFn, scale32: bool, in_bits: int, out_bits: int, fit: tuple[int, int]
) -> tuple[int, int]:
    """(multiplier, shift): a normalized multiplier (as quantizers make them), any, a
    power of two (exact .5 fractions: rounding ties) or an end; a shift near where the
    result lands in the output type, one that fits the input range (``fit``: its
    largest magnitude, the room the output leaves around its zero point), anywhere in
    [2, 62] or an end."""
    bits = 31 if scale32 else 15  # the multiplier is in [0, 2**bits - 1]
    m = draw(
        st.one_of(
            st.integers(1 << (bits - 1), (1 << bits) - 1),
            st.integers(0, (1 << bits) - 1),
            st.integers(0, bits - 1).map(lambda k: 1 << k),
            st.sampled_from([0, 1, (1 << bits) - 1]),
        ),
        label="multiplier",
    )
    # |value| ~ 2**(in_bits - 1) lands at ~ 2**(out_bits - 1): v * m >> s with this s.
    centre = in_bits + max(m, 1).bit_length() - out_bits - 1
    # apply_scale_32 REQUIREs |value| < 2**(s - 1): below in_bits + 1 most values would
    # have to be cut to fit.
    floor = in_bits + 1 if scale32 else 2
    lo = min(62, max(2, floor, centre - 4))
    near = st.integers(lo, max(lo, min(62, centre + 4)))
    fitted = min(62, max(floor, _fit_shift(m, *fit)))
    # one_of picks its branches about alike: "near" twice, as most other shifts give 0
    # or a saturated result for most values.
    anywhere = st.one_of(st.integers(2, 62), st.sampled_from([2, 31, 32, 62]))
    s = draw(st.one_of(near, near, st.just(fitted), anywhere), label="shift")
    return m, s


@st.composite
def _tie_channel(
    draw: st.DrawFn, scale32: bool, double_round: bool, fits: tuple[int, int]
) -> tuple[int, int]:
    """(multiplier, shift) with ties and near-ties among unclipped results.

    ``fits``: on the side (positive or negative) where both have most, the room the
    input's values have and the room the output leaves around its zero point.  An odd
    multiplier m <= 2 * room with a shift whose residues are values the input holds:
    v * m = 2**(s-1) +- 1 (mod 2**s) has solutions v, results within m / 2, and
    +-2**(s-1) are ties.  Or m = u * 2**a, whose ties are the values w * 2**(s-1-a)
    (w odd, results w * u / 2), with a shift above 31 for double_round (and
    m <= 2**30, so that the bias 2**30 spans a multiple of m)."""
    bits = 31 if scale32 else 15
    values, room = fits
    u_top = max(1, 2 * room - 1)  # u / 2 and its neighbours stay unclipped
    if not double_round and values >= 2 and draw(st.booleans(), label="odd multiplier"):
        top = min((1 << bits) - 1, u_top)
        m = 2 * draw(st.integers(0, (top - 1) // 2), label="m") + 1
        s = draw(st.integers(2, max(2, min(62, values.bit_length()))), label="shift")
        return m, s
    top_a = min(bits - 1, 30) - (1 if double_round else 0)
    s_lo = 32 if double_round else 2
    # v = 2**(s-1-a) must fit the values: s - 1 - a < values.bit_length().
    s = draw(st.integers(s_lo, max(s_lo, min(62, top_a + values.bit_length()))), label="shift")
    a_lo = min(max(1, s - values.bit_length()), top_a)
    a = draw(st.integers(a_lo, max(a_lo, min(top_a, s - 1))), label="a")
    u_top = min((1 << (top_a + 1 - a)) - 1, u_top)
    u = 2 * draw(st.integers(0, max(0, u_top - 1) // 2), label="u") + 1
    return u << a, s


def _tie_candidates(m: int, s: int, double_round: bool) -> np.ndarray:
    """Values that may be ties or near-ties for (m, s): the caller keeps those that
    fit and that strategies.ties classifies so."""
    if m == 0:
        return np.zeros(0, np.int64)
    a = (m & -m).bit_length() - 1
    limit = 1 << 50
    out: list[int] = []
    if a <= s - 1:
        odd = [1, 3, 5, 7, 9, 15, 31, 63, 127, 255, 1023]
        out += [w * (1 << (s - 1 - a)) for w in odd + [-w for w in odd]]
    if a == 0:
        mod, half = 1 << s, 1 << (s - 1)
        for sigma in (-1, 1):
            c = pow(m, -1, mod) * (half + sigma) % mod
            out += [c - mod if c >= half else c, c, c - mod]
    if double_round and s > 31:
        kmax = (1 << 30) // m
        ties = list(out)
        out += [t - k if t > 0 else t + k for t in ties for k in {1, 2, kmax} if 1 <= k <= kmax]
    return np.array([v for v in out if abs(v) < limit], np.int64)


def _value_bounds(scale32: bool, m: int, s: int, out_zp: int) -> tuple[int, int]:
    """The values (input minus its zero point) a channel may hold.

    apply_scale_32: REQUIRE(-2**(s-1) <= value < 2**(s-1)); its result stays within
    about 2**30, so adding the output zero point cannot overflow.  apply_scale_16:
    REQUIRE the result (v * m + 2**(s-1)) >> s in int32, and apply_add_s the result
    plus the zero point; the result grows with v (m >= 0), so both bound v."""
    if scale32:
        return -(1 << (s - 1)), (1 << (s - 1)) - 1
    if m == 0:
        return -INT64_SAFE, INT64_SAFE
    hi_res = I32_MAX - max(out_zp, 0)
    lo_res = I32_MIN - min(out_zp, 0)
    half = 1 << (s - 1)
    v_hi = ((hi_res + 1) * (1 << s) - half - 1) // m
    v_lo = -((half - lo_res * (1 << s)) // m)  # ceil((lo_res * 2**s - half) / m)
    return max(v_lo, -INT64_SAFE), min(v_hi, INT64_SAFE)


def _in_bounds(
    draw: st.DrawFn,
    raw: np.ndarray,
    in_t: DType,
    unsigned: bool,
    in_zp: int,
    bounds: tuple[np.ndarray, np.ndarray],
) -> np.ndarray:
    """The values (as read, minus the zero point) of ``raw``, each one outside its
    channel's bounds replaced: by the nearest bound or by a value drawn between them."""
    mask = (1 << in_t.bits) - 1
    r = raw.astype(np.int64)
    value = (r & mask if unsigned else r) - in_zp
    lo, hi = _representable(in_t, unsigned, in_zp, bounds)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="replacement seed"))
    span = (hi - lo).astype(np.float64)
    inside = lo + np.minimum((rng.random(value.shape) * (span + 1)).astype(np.int64), hi - lo)
    clipped = np.clip(value, lo, hi)
    to_bound = rng.random(value.shape) < 0.5
    bad = (value < lo) | (value > hi)
    return np.where(bad, np.where(to_bound, clipped, inside), value)


def _representable(
    in_t: DType, unsigned: bool, in_zp: int, bounds: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """The bounds cut to what the stored type can hold, as values (they contain 0,
    the zero point)."""
    rep_lo, rep_hi = (0, (1 << in_t.bits) - 1) if unsigned else in_t.int_range
    return np.maximum(bounds[0], rep_lo - in_zp), np.minimum(bounds[1], rep_hi - in_zp)


def _stored(value: np.ndarray, in_t: DType, unsigned: bool, in_zp: int) -> np.ndarray:
    """Values back as the input tensor stores them (unsigned ones as their bits)."""
    stored = value + in_zp
    if unsigned:
        half = 1 << (in_t.bits - 1)
        stored = ((stored + half) & ((1 << in_t.bits) - 1)) - half
    return stored.astype(in_t.storage)


def _place_ties(
    draw: st.DrawFn,
    value: np.ndarray,
    params: list[tuple[int, int]],
    allowed: tuple[np.ndarray, np.ndarray],
    out_range: tuple[int, int],
    double_round: bool,
) -> np.ndarray:
    """``value`` with about half of each channel's elements set to its ties and
    near-ties (the candidates that fit the channel's bounds and the output)."""
    nc = len(params)
    cols = value.reshape(-1, nc).copy()
    lows, highs = (np.broadcast_to(b, (nc,)) for b in allowed)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="tie positions"))
    for c, (m, s) in enumerate(params):
        v = _tie_candidates(m, s, double_round)
        v = v[(v >= lows[c]) & (v <= highs[c])]
        tie, near = shift_classes(
            v * m, np.int64(s), lo=out_range[0], hi=out_range[1], double_round=double_round
        )
        v = rng.permutation(v[tie | near])
        rows = np.flatnonzero(rng.random(cols.shape[0]) < 0.5)
        rows = rows if rows.size else rng.integers(0, cols.shape[0], 1)
        if v.size and rows.size:
            cols[rows, c] = v[np.arange(rows.size) % v.size]
    return cols.reshape(value.shape)


def _ranges(
    in_t: DType, out_t: DType, in_uns: bool, out_uns: bool, in_zp: int, out_zp: int
) -> tuple[tuple[int, int], tuple[int, int]]:
    """The values the input holds (minus its zero point) and the results that leave
    the output unclipped (before its zero point is added)."""
    every = (np.array(I32_MIN), np.array(I32_MAX))
    val_lo, val_hi = (int(b) for b in _representable(in_t, in_uns, in_zp, every))
    out_lo, out_hi = (0, (1 << out_t.bits) - 1) if out_uns else out_t.int_range
    return (val_lo, val_hi), (out_lo - out_zp, out_hi - out_zp)


def _tie_room(
    in_t: DType, out_t: DType, in_uns: bool, out_uns: bool, in_zp: int, out_zp: int
) -> tuple[int, int]:
    """(value room, output room) on the side, positive or negative, where a result
    has most of both (results take their values' sign); (0, x) or (x, 0) where no
    tie can stay unclipped."""
    (val_lo, val_hi), (res_lo, res_hi) = _ranges(in_t, out_t, in_uns, out_uns, in_zp, out_zp)
    sides = [(max(val_hi, 0), max(res_hi, 0)), (max(-val_lo, 0), max(-res_lo, 0))]
    best = max(sides, key=min)
    return best if min(best) >= 1 else (0, 0)


def _rounding_modes(rc: RecipeContext, scale32: bool) -> list[str]:
    """The rounding modes a case may draw: SINGLE_ROUND, and those whose extension the
    job's claim has (the budget's attribute restriction, strategies.claimed_values;
    none where the job names no claim: chains, fuzzing): INEXACT_ROUND, and
    DOUBLE_ROUND with scale32 (the ERROR_IF)."""
    allowed = rc.allowed("rounding_mode") or ("SINGLE_ROUND",)
    modes = ["SINGLE_ROUND", "INEXACT_ROUND"] + (["DOUBLE_ROUND"] if scale32 else [])
    return [m for m in modes if m in allowed]


def _rounding(draw: st.DrawFn, rc: RecipeContext, in_t: DType) -> tuple[bool, bool, str | None]:
    """(scale32, double_round, rounding_mode): the draft's double_round flag, or the
    rounding_mode attribute of a revision that declares one (None where it does not)."""
    if not tc.declares_rounding_mode(rc.op_spec):
        scale32 = drawn_bool(draw, rc, "scale32", allowed=in_t is not I48)
        scale32 = scale32 or (in_t is not I48 and aimed(rc, "double_round") == "true")
        return scale32, drawn_bool(draw, rc, "double_round", allowed=scale32), None
    scale32 = drawn_bool(draw, rc, "scale32", allowed=in_t is not I48)
    scale32 = scale32 or (in_t is not I48 and aimed(rc, "rounding_mode") == "DOUBLE_ROUND")
    modes = _rounding_modes(rc, scale32) or ["SINGLE_ROUND"]
    mode = aimed(rc, "rounding_mode")
    mode = mode if mode in modes else draw(st.sampled_from(modes), label="rounding_mode")
    return scale32, mode == "DOUBLE_ROUND", mode


def zp_as_declared(rc: RecipeContext, name: str, zp: int, dt: DType) -> int:
    """A zero point as the case carries it: the value itself where it is an attribute;
    where the revision makes it an input tensor typed in_t/out_t, the value its bits
    have in that signed type (a uint16 zero point 32768 is stored as -32768, a uint8
    200 as -56), which the reference reads back unsigned."""
    if not any(a.name == name for a in rc.op_spec.inputs) or dt.bits >= 64:
        return zp
    half = 1 << (dt.bits - 1)
    return ((zp + half) & ((1 << dt.bits) - 1)) - half


@recipe("RESCALE")
def rescale(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    in_t, out_t = rc.dtype("in_t"), rc.dtype("out_t")
    scale32, double_round, rounding_mode = _rounding(draw, rc, in_t)
    unsigned = _unsigned_side(draw, rc, in_t, out_t)
    in_uns, out_uns = unsigned == "input", unsigned == "output"
    in_zp = _zero_point(draw, rc, "input_zp", in_t, in_uns)
    out_zp = _zero_point(draw, rc, "output_zp", out_t, out_uns)
    if rc.target == "ties" and not any(_tie_room(in_t, out_t, in_uns, out_uns, in_zp, out_zp)):
        in_zp = out_zp = 0  # e.g. only negative values into an unsigned output at 0
    lo, hi = rc.rank_range("input")
    if aimed(rc, "per_channel") == "true":
        lo = min(max(lo, 1), hi)
    shape = draw(shapes(lo, hi, rc.budget, label="shape"))
    per_channel = drawn_bool(draw, rc, "per_channel", allowed=bool(shape))
    # The large case is per channel: hundreds of channels, past an 8-bit channel index.
    per_channel = per_channel or (rc.target == "large" and bool(shape))
    nc = shape[-1] if per_channel else 1
    in_bits = in_t.bits + (1 if in_uns or in_zp else 0)  # the value's magnitude bits
    (val_lo, val_hi), out_range = _ranges(in_t, out_t, in_uns, out_uns, in_zp, out_zp)
    if rc.target == "ties":
        channel = _tie_channel(
            scale32, double_round, _tie_room(in_t, out_t, in_uns, out_uns, in_zp, out_zp)
        )
    else:
        room = draw(
            st.sampled_from(
                sorted({min(-out_range[0], out_range[1]), max(-out_range[0], out_range[1])})
            ),
            label="room",
        )
        channel = _channel(scale32, in_bits, out_t.bits, (max(-val_lo, val_hi), room))
    # At most 17 distinct channels, repeated across a wide last axis: a drawn list per
    # channel would cost a large case thousands of draws for no new behaviour.  17
    # divides no power of two, so channels c and c mod 2**k differ: a channel index
    # that wraps shows.
    drawn = min(nc, 17)
    # Distinct channels: equal ones would hide a kernel that reads the wrong channel.
    params = draw(st.lists(channel, min_size=drawn, max_size=drawn, unique=True), label="channels")
    params = [params[i % drawn] for i in range(nc)]
    bounds = [_value_bounds(scale32, m, s, out_zp) for m, s in params]
    lows = np.array([b[0] for b in bounds], np.int64)
    highs = np.array([b[1] for b in bounds], np.int64)
    if not per_channel:
        lows, highs = lows.reshape(()), highs.reshape(())
    raw = rc.values(draw, in_t, shape, label="input")
    value = _in_bounds(draw, raw, in_t, in_uns, in_zp, (lows, highs))
    if rc.target == "ties" and value.size:
        allowed = _representable(in_t, in_uns, in_zp, (lows, highs))
        value = _place_ties(draw, value, params, allowed, out_range, double_round)
    x = TensorDraw("input", shape, in_t, _stored(value, in_t, in_uns, in_zp))
    mul_t = dtypes.dtype(MUL_T_BY_SCALE32[scale32])  # erratum rescale-mul_t
    multiplier = np.array([m for m, _ in params], mul_t.storage)
    shift = np.array([s for _, s in params], np.int8)
    inputs = [
        x,
        TensorDraw("multiplier", (nc,), mul_t, multiplier, const=True),
        TensorDraw("shift", (nc,), dtypes.I8, shift, const=True),
    ]
    attributes: dict[str, object] = {
        "input_zp": zp_as_declared(rc, "input_zp", in_zp, in_t),
        "output_zp": zp_as_declared(rc, "output_zp", out_zp, out_t),
        "scale32": scale32,
        "double_round": double_round,
        "per_channel": per_channel,
        "input_unsigned": in_uns,
        "output_unsigned": out_uns,
    }
    if rounding_mode is not None:
        del attributes["double_round"]
        attributes = {**attributes, "rounding_mode": rounding_mode}
    return rc.spec_of(inputs, [TensorDraw("output", shape, out_t)], attributes=attributes)

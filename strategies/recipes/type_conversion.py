"""Recipes for CAST and RESCALE, and RESCALE's breakers.

CAST has no ERROR_IF of its own (the two generic breakers cover it); its recipe is
about values: every special value the input type has (NaN kept out of float -> integer
casts only, where the result is unpredictable; infinities saturate), ties between two
neighbours of the output type, values that overflow or underflow the output type, and
full-range integers.

RESCALE draws its attributes within the ERROR_IFs and its per-channel multiplier and
shift first, then bounds each channel's input values so that apply_scale_32's value
REQUIRE, or apply_scale_16's and apply_add_s's result REQUIREs, hold.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import numpy as np
from hypothesis import strategies as st

from conformance import dtypes
from conformance.dtypes import DType
from reference.arguments import ATTRIBUTES_CLAUSE, INPUTS_CLAUSE
from reference.ops import type_conversion as tc
from strategies.case import CaseSpec, TensorDraw
from strategies.invalid import breaks, broken
from strategies.recipes import RecipeContext, recipe
from strategies.shapes import shapes
from strategies.values import special_values

I8, I16, I32, I48 = dtypes.I8, dtypes.I16, dtypes.I32, dtypes.I48

# -- CAST -------------------------------------------------------------------------------


def _precision(dt: DType) -> int:
    """Significant bits: what a float type holds exactly, an integer's magnitude bits."""
    if dt.is_float:
        assert dt.normal_frac is not None
        return dt.normal_frac + 1
    return dt.bits - 1


def _exponents(dt: DType) -> tuple[int, int]:
    """The binades of a float type: of its smallest normal and of its largest value."""
    assert dt.normal_min is not None and dt.normal_max is not None
    return int(math.log2(dt.normal_min)), math.floor(math.log2(dt.normal_max))


def _ties(
    rng: np.random.Generator, target: DType, size: int, top: float, integral: bool
) -> np.ndarray:
    """Values exactly halfway between two neighbouring values of ``target`` (round to
    nearest even decides them), of magnitude at most about ``top``, in fp64;
    ``integral``: only integer ones (for an integer input)."""
    signs = np.where(rng.integers(0, 2, size) == 0, -1.0, 1.0)
    if not target.is_float:
        k = min(float(target.max), top)  # type: ignore[arg-type]
        return signs * (np.floor(rng.uniform(0, k, size)) + 0.5)
    assert target.normal_frac is not None
    frac = target.normal_frac
    emin, emax = _exponents(target)
    emax = min(emax, math.floor(math.log2(top)))
    # From the binade below emin (the subnormals) up, or from the first binade whose
    # midpoints are integers.
    lowest = frac + 1 if integral else emin - 1
    e = rng.integers(lowest, max(lowest, emax) + 1, size)
    m = rng.integers(0, 1 << frac, size).astype(np.float64)
    normal = (2.0 ** e.astype(np.float64)) * (1 + (m + 0.5) / 2**frac)
    subnormal = (m + 0.5) * 2.0 ** (emin - frac)
    return signs * np.where(e >= emin, normal, subnormal)


def _edges(in_t: DType, out_t: DType) -> list[float]:
    """Values at the edges of the output type, as far as the input type reaches."""
    if out_t.kind == "bool":
        return []
    if not out_t.is_float:
        lo, hi = float(out_t.min), float(out_t.max)  # type: ignore[arg-type]
        return [hi, hi + 0.5, hi + 1, lo, lo - 0.5, lo - 1, 0.5, -0.5, 1.5, -2.5]
    assert out_t.normal_max is not None and out_t.normal_min is not None
    assert out_t.normal_frac is not None
    top = out_t.normal_max
    emax = math.floor(math.log2(top))
    half_ulp = 2.0 ** (emax - out_t.normal_frac - 1)
    sub = out_t.normal_min * 2.0**-out_t.normal_frac  # the smallest subnormal
    out = [top, top + half_ulp, top + 2 * half_ulp, out_t.normal_min, sub, sub / 2, sub / 4]
    out += [out_t.normal_min - sub, out_t.normal_min - sub / 2]
    return out + [-v for v in out]


def _in_range(values: np.ndarray, dt: DType) -> np.ndarray:
    """fp64 values as ``dt`` holds them (integers clipped, floats rounded)."""
    if dt.is_float:
        with np.errstate(over="ignore"):
            return values.astype(dt.storage)
    return np.clip(np.round(values), dt.min, dt.max).astype(dt.storage)  # type: ignore[arg-type]


def _signed(rng: np.random.Generator, mags: np.ndarray) -> np.ndarray:
    return np.where(rng.integers(0, 2, mags.shape) == 0, -1.0, 1.0) * mags


def _bulk(
    rng: np.random.Generator, regime: str, in_t: DType, out_t: DType, size: int
) -> np.ndarray:
    """The values of one of the non-default regimes, in the input's storage type."""
    in_max = float(in_t.normal_max if in_t.is_float else in_t.max)  # type: ignore[arg-type]
    if regime == "full":  # magnitudes across every binade of the input type
        assert in_t.normal_min is not None
        e = rng.uniform(math.log2(in_t.normal_min) - 2, math.log2(in_max), size)
        return _in_range(_signed(rng, 2.0**e), in_t)
    if regime == "target":  # around the output type's range: under- and overflow
        if out_t.is_float:
            assert out_t.normal_min is not None and out_t.normal_max is not None
            assert out_t.normal_frac is not None
            lo = math.log2(out_t.normal_min) - out_t.normal_frac - 2
            hi = min(math.log2(in_max), math.log2(out_t.normal_max) + 1)
            return _in_range(_signed(rng, 2.0 ** rng.uniform(lo, hi, size)), in_t)
        top = min(in_max, 1.25 * float(out_t.max))  # type: ignore[arg-type]
        return _in_range(_signed(rng, rng.uniform(0, top, size)), in_t)
    assert regime == "ties"
    if in_t.is_float and not out_t.is_float:
        assert in_t.normal_frac is not None
        in_max = min(in_max, 2.0**in_t.normal_frac)  # where the input holds k + 0.5
    return _in_range(_ties(rng, out_t, size, in_max, not in_t.is_float), in_t)


@st.composite
def _cast_values(draw: st.DrawFn, rc: RecipeContext, shape: tuple[int, ...]) -> np.ndarray:
    in_t, out_t = rc.dtype("in_t"), rc.dtype("out_t")
    regimes = ["default"]  # every special value, full-range integers
    if in_t.is_float:
        regimes += ["full", "target"]
    # Halfway cases: k + 0.5 into an integer, or midpoints of a narrower float type.
    if (in_t.is_float and out_t.is_int) or (
        out_t.is_float and _precision(out_t) < _precision(in_t)
    ):
        regimes.append("ties")
    regime = draw(st.sampled_from(regimes), label="value regime")
    size = int(np.prod(shape, dtype=np.int64))
    if regime == "default":
        flat = rc.values(draw, in_t, shape).reshape(-1)
    else:
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="values seed"))
        flat = _bulk(rng, regime, in_t, out_t, size)
    if size and regime != "default":  # the default regime placed its own
        pool = [float(v) for v in special_values(in_t)] + _edges(in_t, out_t)
        picks = draw(
            st.lists(
                st.tuples(st.integers(0, size - 1), st.sampled_from(pool)), max_size=min(8, size)
            ),
            label="special values",
        )
        for pos, v in picks:
            flat[pos] = _in_range(np.array([v]), in_t)[0]
    if in_t.is_float and not out_t.is_float:
        # A NaN converted to an integer is unpredictable: an infinity (which saturates)
        # takes its place.
        f = flat.astype(np.float64)
        flat = np.where(np.isnan(f), np.inf, f).astype(in_t.storage)
    return flat.reshape(shape)


@recipe("CAST")
def cast(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    lo, hi = rc.rank_range("input")
    shape = draw(shapes(lo, hi, rc.budget, label="shape"))
    x = TensorDraw("input", shape, rc.dtype("in_t"), draw(_cast_values(rc, shape)))
    return rc.spec_of([x], [TensorDraw("output", shape, rc.dtype("out_t"))])


# -- RESCALE ----------------------------------------------------------------------------

I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1
INT64_SAFE = 1 << 62  # value bounds beyond what any input holds, clamped to this


def _zero_point(draw: st.DrawFn, dt: DType, unsigned: bool, label: str) -> int:
    """int8 / uint8: any value of the type; uint16: 0 or 32768; everything else 0."""
    if dt is I8:
        lo, hi = (0, 255) if unsigned else (-128, 127)
        return draw(st.one_of(st.sampled_from([lo, 0, hi]), st.integers(lo, hi)), label=label)
    if dt is I16 and unsigned:
        return draw(st.sampled_from([0, 32768]), label=label)
    return 0


@st.composite
def _channel(draw: st.DrawFn, scale32: bool, in_bits: int, out_bits: int) -> tuple[int, int]:
    """(multiplier, shift): a normalized multiplier (as quantizers make them), any, a
    power of two (exact .5 fractions: rounding ties) or an end; a shift anywhere in
    [2, 62] or near where the result lands in the output type."""
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
    # one_of picks its branches about alike: "near" twice, as most other shifts give 0
    # or a saturated result for most values.
    anywhere = st.one_of(st.integers(2, 62), st.sampled_from([2, 31, 32, 62]))
    s = draw(st.one_of(near, near, anywhere), label="shift")
    return m, s


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


def _bounded_input(
    draw: st.DrawFn,
    raw: np.ndarray,
    in_t: DType,
    unsigned: bool,
    in_zp: int,
    bounds: tuple[np.ndarray, np.ndarray],
) -> np.ndarray:
    """``raw`` with every value (as read, minus the zero point) outside its channel's
    bounds replaced: by the nearest bound or by a value drawn between them."""
    mask = (1 << in_t.bits) - 1
    r = raw.astype(np.int64)
    value = (r & mask if unsigned else r) - in_zp
    # What the stored type can hold, as values: the bounds contain 0 (the zero point).
    rep_lo, rep_hi = (0, mask) if unsigned else (int(in_t.min), int(in_t.max))  # type: ignore[arg-type]
    lo = np.maximum(bounds[0], rep_lo - in_zp)
    hi = np.minimum(bounds[1], rep_hi - in_zp)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="replacement seed"))
    span = (hi - lo).astype(np.float64)
    inside = lo + np.minimum((rng.random(value.shape) * (span + 1)).astype(np.int64), hi - lo)
    clipped = np.clip(value, lo, hi)
    to_bound = rng.random(value.shape) < 0.5
    bad = (value < lo) | (value > hi)
    value = np.where(bad, np.where(to_bound, clipped, inside), value)
    stored = value + in_zp
    if unsigned:
        stored = ((stored + (1 << (in_t.bits - 1))) & mask) - (1 << (in_t.bits - 1))
    return stored.astype(in_t.storage)


def _unsigned_options(in_t: DType, out_t: DType) -> list[str]:
    """Which side may be unsigned: never both, only an 8- or 16-bit side, never an
    unsigned input into i32, never an i32 or i48 input into an unsigned output."""
    options = ["none"]
    if in_t in (I8, I16) and out_t is not I32:
        options.append("input")
    if out_t in (I8, I16) and in_t in (I8, I16):
        options.append("output")
    return options


@recipe("RESCALE")
def rescale(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    in_t, out_t = rc.dtype("in_t"), rc.dtype("out_t")
    scale32 = in_t is not I48 and draw(st.booleans(), label="scale32")
    double_round = scale32 and draw(st.booleans(), label="double_round")
    unsigned = draw(st.sampled_from(_unsigned_options(in_t, out_t)), label="unsigned side")
    in_uns, out_uns = unsigned == "input", unsigned == "output"
    in_zp = _zero_point(draw, in_t, in_uns, "input_zp")
    out_zp = _zero_point(draw, out_t, out_uns, "output_zp")
    lo, hi = rc.rank_range("input")
    shape = draw(shapes(lo, hi, rc.budget, label="shape"))
    per_channel = bool(shape) and draw(st.booleans(), label="per_channel")
    nc = shape[-1] if per_channel else 1
    in_bits = in_t.bits + (1 if in_uns or in_zp else 0)  # the value's magnitude bits
    params = draw(
        st.lists(_channel(scale32, in_bits, out_t.bits), min_size=nc, max_size=nc),
        label="channels",
    )
    bounds = [_value_bounds(scale32, m, s, out_zp) for m, s in params]
    lows = np.array([b[0] for b in bounds], np.int64)
    highs = np.array([b[1] for b in bounds], np.int64)
    if not per_channel:
        lows, highs = lows.reshape(()), highs.reshape(())
    raw = rc.values(draw, in_t, shape, label="input")
    x = TensorDraw(
        "input", shape, in_t, _bounded_input(draw, raw, in_t, in_uns, in_zp, (lows, highs))
    )
    mul_t = I32 if scale32 else I16
    multiplier = np.array([m for m, _ in params], mul_t.storage)
    shift = np.array([s for _, s in params], np.int8)
    inputs = [
        x,
        TensorDraw("multiplier", (nc,), mul_t, multiplier, const=True),
        TensorDraw("shift", (nc,), dtypes.I8, shift, const=True),
    ]
    attributes = {
        "input_zp": in_zp,
        "output_zp": out_zp,
        "scale32": scale32,
        "double_round": double_round,
        "per_channel": per_channel,
        "input_unsigned": in_uns,
        "output_unsigned": out_uns,
    }
    return rc.spec_of(inputs, [TensorDraw("output", shape, out_t)], attributes=attributes)


# -- RESCALE breakers -------------------------------------------------------------------
#
# Most rules concern some type pairs only; a breaker's ``applies`` test lists it for
# exactly the modes it can break, where it always does.

NARROW = frozenset({I8, I16})  # the types with an unsigned form


def _types(rc: RecipeContext) -> tuple[DType, DType]:
    return rc.dtype("in_t"), rc.dtype("out_t")


def _when(test: Callable[[DType, DType], bool]) -> Callable[[RecipeContext], bool]:
    """A breaker's static test on the mode's (in_t, out_t)."""
    return lambda rc: test(*_types(rc))


def _with(spec: CaseSpec, clause: str, **attributes: object) -> CaseSpec:
    out = broken(spec, clause)
    out.attributes.update(attributes)
    return out


def _retyped_multiplier(spec: CaseSpec, scale32: bool) -> None:
    """The multiplier in the type scale32 asks for (values cut to fit i16)."""
    k = next(i for i, t in enumerate(spec.inputs) if t.name == "multiplier")
    t = spec.inputs[k]
    mul_t = I32 if scale32 else I16
    values = np.clip(np.asarray(t.values, np.int64), 0, mul_t.max).astype(mul_t.storage)
    spec.inputs[k] = replace(t, dtype=mul_t, values=values)


def _signed_side(spec: CaseSpec, side: str) -> dict[str, object]:
    """Attributes that make ``side`` ("input"/"output") signed again, its zero point
    reset where the unsigned one would not fit the signed type."""
    if not spec.attributes[f"{side}_unsigned"]:
        return {}
    return {f"{side}_unsigned": False, f"{side}_zp": 0}


def _nonzero_zp(draw: st.DrawFn, dt: DType, label: str) -> int:
    """A nonzero zero point of ``dt`` that the i32 attribute field can carry."""
    lo, hi = max(int(dt.min), I32_MIN), min(int(dt.max), I32_MAX)  # type: ignore[arg-type]
    return draw(st.sampled_from([1, -1, lo, hi]), label=label)


def _uint16_bad_zp(draw: st.DrawFn, label: str) -> int:
    zp = draw(st.one_of(st.sampled_from([1, 32767, 65535]), st.integers(1, 65534)), label=label)
    return zp + 1 if zp == 32768 else zp


@breaks("RESCALE", clause=tc.IN_ZP_CLAUSE, applies=_when(lambda i, o: i is not I8))
def input_zp_not_zero(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A nonzero input zero point for a signed input other than i8."""
    attrs = _signed_side(spec, "input") | {"input_zp": _nonzero_zp(draw, _types(rc)[0], "zp")}
    return _with(spec, tc.IN_ZP_CLAUSE, **attrs)


@breaks("RESCALE", clause=tc.OUT_ZP_CLAUSE, applies=_when(lambda i, o: o is not I8))
def output_zp_not_zero(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A nonzero output zero point for a signed output other than i8."""
    attrs = _signed_side(spec, "output") | {"output_zp": _nonzero_zp(draw, _types(rc)[1], "zp")}
    return _with(spec, tc.OUT_ZP_CLAUSE, **attrs)


@breaks("RESCALE", clause=tc.IN_ZP16_CLAUSE, applies=_when(lambda i, o: i is I16 and o is not I32))
def uint16_input_zp(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A uint16 input whose zero point is neither 0 nor 32768 (where an unsigned i16
    input is otherwise allowed: not into i32)."""
    attrs = _signed_side(spec, "output") | {"input_unsigned": True}
    attrs["input_zp"] = _uint16_bad_zp(draw, "input_zp")
    return _with(spec, tc.IN_ZP16_CLAUSE, **attrs)


@breaks("RESCALE", clause=tc.OUT_ZP16_CLAUSE, applies=_when(lambda i, o: o is I16 and i in NARROW))
def uint16_output_zp(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A uint16 output whose zero point is neither 0 nor 32768 (from an i8 or i16
    input, the only ones an unsigned output allows)."""
    attrs = _signed_side(spec, "input") | {"output_unsigned": True}
    attrs["output_zp"] = _uint16_bad_zp(draw, "output_zp")
    return _with(spec, tc.OUT_ZP16_CLAUSE, **attrs)


@breaks("RESCALE", clause=tc.SCALE32_I48_CLAUSE, applies=_when(lambda i, o: i is I48))
def scale32_with_i48(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """scale32 on an i48 input, the multiplier in i32 as scale32 asks."""
    out = _with(spec, tc.SCALE32_I48_CLAUSE, scale32=True)
    _retyped_multiplier(out, True)
    return out


@breaks("RESCALE", clause=tc.DOUBLE_ROUND_CLAUSE)
def double_round_without_scale32(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """double_round with a 16-bit multiplier."""
    out = _with(spec, tc.DOUBLE_ROUND_CLAUSE, scale32=False, double_round=True)
    _retyped_multiplier(out, False)
    return out


@breaks("RESCALE", clause=tc.BOTH_UNSIGNED_CLAUSE, applies=_when(lambda i, o: {i, o} <= NARROW))
def both_unsigned(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """Both sides unsigned, between 8- and 16-bit types (each of which may be unsigned
    alone).  The zero points stay: a signed one fits the unsigned reading too, and the
    recipe's i16 zero points are 0 or 32768."""
    return _with(spec, tc.BOTH_UNSIGNED_CLAUSE, input_unsigned=True, output_unsigned=True)


@breaks(
    "RESCALE",
    clause=tc.OUT_I32_IN_UNSIGNED_CLAUSE,
    applies=_when(lambda i, o: o is I32 and i in NARROW),
)
def unsigned_into_i32(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """An unsigned i8 or i16 input into i32."""
    return _with(spec, tc.OUT_I32_IN_UNSIGNED_CLAUSE, input_unsigned=True)


def _unsigned_out_breaker(src: DType, clause: str) -> None:
    @breaks("RESCALE", clause=clause, applies=_when(lambda i, o: i is src and o in NARROW))
    def wide_into_unsigned(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        """An i32 or i48 input into an unsigned i8 or i16 output."""
        return _with(spec, clause, output_unsigned=True)


_unsigned_out_breaker(I32, tc.IN_I32_OUT_UNSIGNED_CLAUSE)
_unsigned_out_breaker(I48, tc.IN_I48_OUT_UNSIGNED_CLAUSE)


@breaks("RESCALE", clause=tc.PER_CHANNEL_RANK_CLAUSE)
def per_channel_rank0(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """per_channel on a rank-0 input (one of its values kept)."""
    out = _with(spec, tc.PER_CHANNEL_RANK_CLAUSE, per_channel=True)
    t = out.inputs[0]
    assert t.values is not None
    out.inputs[0] = replace(t, shape=(), values=np.asarray(t.values).reshape(-1)[:1].reshape(()))
    out.outputs[0] = replace(out.outputs[0], shape=())
    return out


@breaks(
    "RESCALE",
    clause=tc.MAKE_UNSIGNED_CLAUSE,
    applies=_when(lambda i, o: (i in NARROW) != (o in NARROW)),
)
def unsigned_wide(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """An unsigned i32 or i48 input into i8 or i16, or an unsigned i32 output from i8
    or i16: rules the ERROR_IFs let through, but only 8- and 16-bit values have an
    unsigned form.  (i32 and i48 into i32 meet an ERROR_IF first.)"""
    if _types(rc)[0] in NARROW:
        return _with(spec, tc.MAKE_UNSIGNED_CLAUSE, output_unsigned=True)
    return _with(spec, tc.MAKE_UNSIGNED_CLAUSE, input_unsigned=True)


@breaks("RESCALE", clause=ATTRIBUTES_CLAUSE, applies=_when(lambda i, o: I8 in (i, o)))
def zp_beyond_its_type(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """An i8 zero point its type cannot hold, signed or (for an unsigned side)
    unsigned.  Only an i8 side may have a nonzero zero point, so only it is tried."""
    sides = [s for s, dt in zip(("input", "output"), _types(rc), strict=True) if dt is I8]
    side = draw(st.sampled_from(sides), label="side")
    hi = 255 if spec.attributes[f"{side}_unsigned"] else 127
    zp = draw(st.one_of(st.integers(hi + 1, 1000), st.integers(-1000, -129)), label="zp")
    return _with(spec, ATTRIBUTES_CLAUSE, **{f"{side}_zp": zp})


@breaks("RESCALE", clause=INPUTS_CLAUSE)
def channel_count_wrong(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """multiplier and shift of a length other than NC (the last dimension per channel,
    else 1)."""
    out = broken(spec, INPUTS_CLAUSE)
    nc = out.inputs[1].shape[0]
    wrong = draw(st.sampled_from([k for k in (nc - 1, nc + 1, nc + 2) if k >= 1]), label="NC")
    for k in (1, 2):
        t = out.inputs[k]
        assert t.values is not None
        out.inputs[k] = replace(t, shape=(wrong,), values=np.resize(t.values, (wrong,)))
    return out

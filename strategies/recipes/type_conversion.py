"""Recipe for CAST (RESCALE's recipe and breakers are in type_conversion_rescale).

CAST had no ERROR_IF of its own up to TOSA 1.0 (the two generic breakers cover it);
1.1 adds ERROR_IF(input_unsigned && !is_integer<in_t>()) and the unsigned reading of an
integer input, drawn where the revision's format can write it.  Its recipe is
about values: every special value the input type has (NaN kept out of float -> integer
casts only, where the result is unpredictable; infinities saturate), ties between two
neighbours of the output type and values just off them, values that overflow or
underflow the output type, and full-range integers.

Targets: "ties" draws only tie regimes (x.5 and x.5 +- one input ulp into integers;
midpoints of a narrower float type and midpoint +- one ulp of the wider input; for
integer inputs, the integer midpoints such as 2**24 + 1 for fp32, and +- 1); "edge"
places every special value of the input type and the output type's edges.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from conformance.dtypes import DType
from reference.ops.type_conversion import (
    INPUT_UNSIGNED_CLAUSE,
    declares_input_unsigned,
    is_integer,
)
from strategies.case import CaseSpec, TensorDraw
from strategies.invalid import breaks, broken
from strategies.recipes import RecipeContext, recipe
from strategies.recipes.common import drawn_bool
from strategies.shapes import shapes
from strategies.tie_values import float_midpoints
from strategies.ties import cast_rounds, ulp
from strategies.values import ValueRange, edge_pool, special_values, wants_every_special


def _edges(in_t: DType, out_t: DType) -> list[float]:
    """Values at the edges of the output type, as far as the input type reaches."""
    if out_t.kind == "bool":
        return []
    if not out_t.is_float:
        lo, hi = out_t.finite_range
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
    """fp64 values as ``dt`` holds them (integers clipped, floats rounded); integer
    values (Python ints) are taken exactly, as i64's ends are not floats."""
    if dt.is_float:
        with np.errstate(over="ignore"):
            return values.astype(dt.storage)
    lo, hi = dt.int_range
    if values.dtype.kind == "f" and dt.bits >= 64:
        # float64 reaches 2**63, one past i64: its largest value below is the top.
        return np.clip(np.round(values), lo, float(np.nextafter(2.0**63, 0))).astype(dt.storage)
    return np.clip(np.round(values), lo, hi).astype(dt.storage)


def _signed(rng: np.random.Generator, mags: np.ndarray) -> np.ndarray:
    return np.where(rng.integers(0, 2, mags.shape) == 0, -1.0, 1.0) * mags


def _max_of(dt: DType) -> float:
    return float(dt.normal_max if dt.is_float else dt.max)  # type: ignore[arg-type]


def tie_values(rng: np.random.Generator, in_t: DType, out_t: DType, size: int) -> np.ndarray:
    """fp64 values of ``in_t`` that are ties of the cast to ``out_t`` (about a third),
    or one step below or above one (one ulp of a float input, 1 for an integer one)."""
    side = rng.integers(-1, 2, size)  # -1 below, 0 on the tie, +1 above
    side[:2] = [0, rng.choice([-1, 1])][:size]  # a tie and a near-tie in every tensor
    if out_t.is_int:  # x.5, where the input type holds it
        assert in_t.normal_frac is not None
        top = min(2.0**in_t.fp.normal_frac, out_t.finite_range[1])
        low = max(-top, out_t.finite_range[0])
        t = np.floor(rng.uniform(low, top - 1, size)) + 0.5
        step = ulp(t, in_t)
    elif in_t.is_int:  # integer midpoints, from the first binade whose ulp is 2
        t = float_midpoints(rng, out_t, size, _max_of(in_t), integral=True)
        # One unit off is nearer the midpoint than a neighbour where the ulp is 4 or
        # more: a midpoint doubled is one of the next binade.
        t = np.where((side != 0) & (ulp(t, out_t) < 4), 2 * t, t)
        t = np.clip(t, in_t.finite_range[0] + 1, in_t.finite_range[1] - 1)
        step = np.ones(size)
    else:
        t = float_midpoints(rng, out_t, size, min(_max_of(in_t), _max_of(out_t)))
        step = ulp(t, in_t)
    return _in_range(t + side * step, in_t)


def _bulk(
    rng: np.random.Generator, regime: str, in_t: DType, out_t: DType, size: int
) -> np.ndarray:
    """The values of one of the non-default regimes, in the input's storage type."""
    in_max = _max_of(in_t)
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
        top = min(in_max, 1.25 * out_t.finite_range[1])
        return _in_range(_signed(rng, rng.uniform(0, top, size)), in_t)
    assert regime == "ties"
    return tie_values(rng, in_t, out_t, size)


def _place(flat: np.ndarray, values: list[float], dt: DType, positions: np.ndarray) -> None:
    """Write ``values`` (as ``dt`` holds them) at distinct ``positions`` of ``flat``."""
    for pos, v in zip(positions, values, strict=False):
        flat[int(pos)] = _in_range(np.array([v]), dt)[0]


@st.composite
def _cast_values(draw: st.DrawFn, rc: RecipeContext, shape: tuple[int, ...]) -> np.ndarray:
    in_t, out_t = rc.dtype("in_t"), rc.dtype("out_t")
    regimes = ["default"]  # every special value, full-range integers
    if in_t.is_float:
        regimes += ["full", "target"]
    rounds = cast_rounds(in_t, out_t)
    if rounds:  # halfway cases, and values one step off them
        regimes.append("ties")
    if rc.target == "ties" and rounds:
        regime = "ties"
    elif rc.target == "edge":
        regime = "default"
    else:
        regime = draw(st.sampled_from(regimes), label="value regime")
    size = int(np.prod(shape, dtype=np.int64))
    if regime == "default":
        flat = rc.values(draw, in_t, shape).reshape(-1)
    else:
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="values seed"))
        flat = _bulk(rng, regime, in_t, out_t, size)
    # An integer input's special values stay integers (i64's ends are not floats).
    pool = [v if in_t.is_int else float(v) for v in special_values(in_t)] + _edges(in_t, out_t)
    if rc.target == "edge":
        # rc.values put the input type's special values first; the output type's
        # edges (overflow, underflow, saturation) follow them.
        start = len(edge_pool(in_t, ValueRange()))
        _place(flat, _edges(in_t, out_t), in_t, np.arange(start, size))
    elif size and wants_every_special(draw, rc, "every special value"):
        # Every special value and edge at once (a random part of them where the tensor
        # is smaller), so that NaN, infinities and subnormals are in most vectors.
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="positions"))
        order = [pool[int(k)] for k in rng.permutation(len(pool))]
        _place(flat, order, in_t, rng.permutation(size))
    elif size and regime != "default" and rc.target != "ties":  # default placed its own
        picks = draw(
            st.lists(
                st.tuples(st.integers(0, size - 1), st.sampled_from(pool)), max_size=min(8, size)
            ),
            label="special values",
        )
        for pos, v in picks:
            flat[pos] = _in_range(np.array([v]), in_t)[0]
    if in_t.is_float and out_t.is_int:
        # A NaN converted to an integer is unpredictable: an infinity (which saturates)
        # takes its place.  (To bool, 1.1's fp32 to bool, NaN != 0 is true.)
        f = flat.astype(np.float64)
        flat = np.where(np.isnan(f), np.inf, f).astype(in_t.storage)
    return flat.reshape(shape)


def format_writes(rc: RecipeContext, attribute: str) -> bool:
    """Whether the revision's flatbuffer format has a field for the operator's
    ``attribute`` (TOSA 1.1's CAST input_unsigned has none in the schema tosa-tools
    ships: only its default, false, can be written, by leaving it out)."""
    from vectors.layout_1_0 import layout_for

    layout = layout_for(rc.spec.revision)
    return layout is None or any(f.name == attribute for f in layout.attribute_fields(rc.name))


def _input_unsigned(draw: st.DrawFn, rc: RecipeContext) -> dict[str, object]:
    """``{"input_unsigned": ...}`` where CAST declares it (TOSA 1.1): true only for an
    integer input (the ERROR_IF) and where the format can write it; else false."""
    if not declares_input_unsigned(rc.op_spec):
        return {}
    allowed = is_integer(rc.dtype("in_t")) and format_writes(rc, "input_unsigned")
    unsigned = drawn_bool(draw, rc, "input_unsigned", allowed=allowed)
    return {"input_unsigned": True} if unsigned else {}  # false is its absence


@recipe("CAST")
def cast(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    lo, hi = rc.rank_range("input")
    shape = draw(shapes(lo, hi, rc.budget, label="shape"))
    x = TensorDraw("input", shape, rc.dtype("in_t"), draw(_cast_values(rc, shape)))
    attributes = _input_unsigned(draw, rc)
    out = [TensorDraw("output", shape, rc.dtype("out_t"))]
    return rc.spec_of([x], out, attributes=attributes)


@breaks(
    "CAST",
    clause=INPUT_UNSIGNED_CLAUSE,
    applies=lambda rc: declares_input_unsigned(rc.op_spec) and not is_integer(rc.dtype("in_t")),
    packable=lambda rc: format_writes(rc, "input_unsigned"),
)
def unsigned_non_integer(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """input_unsigned on a float or bool input, which only an integer can be read as."""
    out = broken(spec, INPUT_UNSIGNED_CLAUSE)
    out.attributes["input_unsigned"] = True
    return out

"""Recipes for CLAMP, ERF, SIGMOID and TANH, and CLAMP's bounds breaker."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from hypothesis import strategies as st

from conformance.dtypes import DType
from reference.ops.activation import (
    CLAMP_BOUNDS_CLAUSE,
    CLAMP_NAN_BOUND_CLAUSE,
    CLAMP_NAN_BOUND_CLAUSE_1_1,
    clamp_nan_bound_clause,
)
from reference.pseudocode_revisions import draft_pseudocode
from strategies.case import CaseSpec
from strategies.invalid import breaks, broken
from strategies.recipes import RecipeContext, recipe
from strategies.recipes.common import aimed, elementwise
from strategies.recipes.elementwise_binary import nan_mode_attribute, place_nans
from strategies.recipes.elementwise_unary import float_unary
from strategies.values import ValueRange, add_specials, special_values

BOUNDS_CLAUSE = CLAMP_BOUNDS_CLAUSE


def _in_type(dt: DType, v: float) -> float:
    """``v`` rounded to ``dt``, as a graph holding the attribute would store it."""
    with np.errstate(over="ignore"):
        return float(np.asarray(v, np.float64).astype(dt.storage).astype(np.float64))


def _float_bound(dt: DType) -> st.SearchStrategy[float]:
    """A CLAMP bound of type ``dt``: a special value (never NaN: a NaN bound makes
    apply_clip_s's REQUIRE fail), or an ordinary value, rounded to the type."""
    specials = [float(v) for v in special_values(dt) if not math.isnan(float(v))]
    ordinary = st.floats(-1000.0, 1000.0, allow_nan=False)
    return st.one_of(st.sampled_from(specials), ordinary).map(lambda v: _in_type(dt, v))


def _bound(dt: DType) -> st.SearchStrategy[float] | st.SearchStrategy[int]:
    if dt.is_float:
        return _float_bound(dt)
    return st.integers(*dt.int_range)


def _values_around(dt: DType, lo: float, hi: float) -> ValueRange | None:
    """Input values spread across both bounds, so that both clip and some pass; with
    an infinite bound, the default values (specials included)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    margin = max(1.0, (hi - lo) / 2)
    top = dt.fp.normal_max
    return ValueRange(low=max(-top, lo - margin), high=min(top, hi + margin))


@recipe("CLAMP")
def clamp(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    # ERROR_IF(max_val < min_val): two bounds of the input's type, sorted (equal is
    # allowed; -0 and +0 compare equal, so either order of them is valid).
    a, b = draw(_bound(dt), label="bound"), draw(_bound(dt), label="bound")
    lo, hi = (a, b) if a <= b else (b, a)
    attrs: dict[str, object] = {"min_val": lo, "max_val": hi}
    nan_mode = nan_mode_attribute(draw, rc)  # TOSA 1.0 on
    attrs |= nan_mode
    if dt.is_int:
        return elementwise(draw, rc, attributes=attrs)  # full-range values
    around = _values_around(dt, float(lo), float(hi))
    r = draw(st.sampled_from([None, around]), label="values around the bounds")
    spec = elementwise(draw, rc, ranges={"input": r} if r else {}, attributes=attrs)
    add_specials(draw, spec, ("input",), rc)
    # NaN inputs: NaN when propagating, min_val when ignoring.
    if nan_mode and (aimed(rc, "nan_mode") or draw(st.booleans(), label="NaNs")):
        place_nans(draw, spec, ("input",))
    return spec


@breaks("CLAMP", clause=BOUNDS_CLAUSE)
def bounds_reversed(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """Bounds the wrong way round: two distinct (non-NaN) values, the larger as min_val."""
    dt = rc.dtype("in_out_t")
    a = draw(_bound(dt), label="bound")
    b = draw(_bound(dt).filter(lambda v: v != a), label="other bound")
    out = broken(spec, BOUNDS_CLAUSE)
    out.attributes["min_val"], out.attributes["max_val"] = max(a, b), min(a, b)
    return out


def _nan_bound_applies(clause: str) -> Callable[[RecipeContext], bool]:
    """Float modes of the revisions that spell the NaN-bound clause so (TOSA 1.0 on)."""

    def applies(rc: RecipeContext) -> bool:
        revision = rc.spec.revision
        return (
            rc.dtype("in_out_t").is_float
            and not draft_pseudocode(revision)
            and clamp_nan_bound_clause(revision) == clause
        )

    return applies


@breaks("CLAMP", clause=CLAMP_NAN_BOUND_CLAUSE, applies=_nan_bound_applies(CLAMP_NAN_BOUND_CLAUSE))
@breaks(
    "CLAMP",
    clause=CLAMP_NAN_BOUND_CLAUSE_1_1,
    applies=_nan_bound_applies(CLAMP_NAN_BOUND_CLAUSE_1_1),
)
def nan_bound(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A NaN bound (TOSA 1.0 on): min_val, max_val or both; max_val < min_val is
    false with a NaN, so only this ERROR_IF fires."""
    out = broken(spec, clamp_nan_bound_clause(rc.spec.revision))
    which = draw(st.sampled_from(["min_val", "max_val", "both"]), label="NaN bound")
    for name in ("min_val", "max_val"):
        if which in (name, "both"):
            out.attributes[name] = math.nan
    return out


@recipe("ERF", "SIGMOID", "TANH")
def activation(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    # No REQUIRE; saturation starts within a few units, which the default range and
    # the whole-range regime both cross.
    return float_unary(draw, rc, rc.dtype("in_out_t"))

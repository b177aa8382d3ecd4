"""Recipes for the element-wise unary operators and NEGATE's zero-point breakers.

The float operators have no REQUIRE: the behaviour tables give every special value a
result, so each may see NaN, infinities, signed zeros and subnormals.  Each draws one
value regime per case: the default (small values and every special value), the whole
finite range, or the range where the function's own interesting results are (LOG's
positive inputs, EXP's overflow boundary ...).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from hypothesis import strategies as st

from conformance.dtypes import DType
from strategies.case import CaseSpec
from strategies.invalid import breaks, broken
from strategies.recipes import RecipeContext, recipe
from strategies.recipes.common import elementwise, zero_point
from strategies.values import ValueRange, add_specials, float_regime

RegimeFn = Callable[[DType], list[ValueRange]]


def _top(dt: DType) -> float:
    return dt.fp.normal_max


def _below_integers(dt: DType) -> list[ValueRange]:
    """Rounding only acts below 2**normal_frac; above it every value is an integer."""
    edge = 2.0 ** (dt.normal_frac or 0) * 4
    return [ValueRange(-edge, edge)]


# Per operator, the ranges besides the default and the whole finite range.
FLOAT_REGIMES: dict[str, RegimeFn] = {
    "CEIL": _below_integers,
    "FLOOR": _below_integers,
    "COS": lambda dt: [ValueRange(-100.0, 100.0)],
    # Around where exp overflows and underflows to zero.
    "EXP": lambda dt: [ValueRange(-math.log(_top(dt)) * 1.2, math.log(_top(dt)) * 1.1)],
    "LOG": lambda dt: [ValueRange(0.0, 4.0), ValueRange(0.0, _top(dt))],
    "RECIPROCAL": lambda dt: [ValueRange(-1.0, 1.0)],
    "RSQRT": lambda dt: [ValueRange(0.0, 4.0), ValueRange(0.0, _top(dt))],
}


def _unary(draw: st.DrawFn, rc: RecipeContext, r: ValueRange | None, **attrs: object) -> CaseSpec:
    name = rc.op_spec.inputs[0].name  # input1 or input, as tosa.xml names it
    return elementwise(draw, rc, ranges={name: r} if r else {}, attributes=attrs or None)


def float_unary(draw: st.DrawFn, rc: RecipeContext, dt: DType) -> CaseSpec:
    """A float unary case in one of the operator's value regimes."""
    extra = FLOAT_REGIMES.get(rc.name, lambda _: [])(dt)
    r = float_regime(draw, dt, *extra, rc=rc)
    spec = _unary(draw, rc, r)
    add_specials(draw, spec, (rc.op_spec.inputs[0].name,), rc)
    return spec


@recipe("CEIL", "FLOOR", "COS", "EXP", "LOG", "RECIPROCAL", "RSQRT")
def float_only(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    return float_unary(draw, rc, rc.dtype("in_out_t"))


@recipe("BITWISE_NOT", "CLZ", "LOGICAL_NOT")
def no_require(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    return _unary(draw, rc, None)  # full-range integers (0 and negatives for CLZ), booleans


@recipe("ABS")
def abs_(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    if dt.is_float:
        return float_unary(draw, rc, dt)
    # apply_sub_s(0, INT_MIN) leaves the type: every other value is fine.
    return _unary(draw, rc, ValueRange(low=dt.int_range.min + 1))


@recipe("NEGATE")
def negate(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    if dt.is_float:
        spec = float_unary(draw, rc, dt)
        # Zero points are drawn as attributes whichever way the revision declares
        # them (CaseSpec.in_revision); not as the tensors elementwise drew for TOSA 1.0.
        spec.inputs = [t for t in spec.inputs if t.name not in ("input1_zp", "output_zp")]
        spec.attributes = {"input1_zp": 0.0, "output_zp": 0.0}
        return spec
    if dt.name == "i8":
        # The only type with zero points.  In the i32 accumulator no step can overflow
        # (|x - zp| <= 255) and the result is clipped to i8, so any pair is valid; a
        # zero-point target ("attr:input1_zp=min" ...) picks its class.
        in_zp = zero_point(draw, rc, "input1_zp", -128, 127)
        out_zp = zero_point(draw, rc, "output_zp", -128, 127)
        return _unary(draw, rc, None, input1_zp=in_zp, output_zp=out_zp)
    # 0 - x in the i32 accumulator: only INT_MIN overflows (i16 cannot).
    r = ValueRange(low=dt.int_range.min + 1) if dt.bits == 32 else None
    return _unary(draw, rc, r, input1_zp=0, output_zp=0)


def _zp_breaker(attr: str, as_input: bool) -> None:
    """The breaker of one zero point's ERROR_IF, for the revisions that declare it an
    attribute (the draft) or an input (TOSA 1.0 on), which spell the clause apart."""
    clause = (
        f"!is_same<in_out_t,i8_t>() && {attr} != 0"
        if as_input
        else f"in_out_t != i8_t && {attr} != 0"
    )

    def applies(rc: RecipeContext) -> bool:
        # i8 takes zero points: nothing to break there, so the breaker does not apply.
        declared = any(a.name == attr for a in rc.op_spec.inputs) == as_input
        return declared and rc.dtype("in_out_t").name != "i8"

    @breaks("NEGATE", clause=clause, applies=applies)
    def nonzero_zp(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        """A zero point on a type other than i8 (the other zero point stays 0)."""
        dt = rc.dtype("in_out_t")
        out = broken(spec, clause)
        if dt.is_float:
            out.attributes[attr] = draw(st.sampled_from([1.0, -1.0, 0.5, 128.0]), label=attr)
        else:
            lo, hi = dt.int_range
            value = draw(st.integers(lo, hi).filter(lambda v: v != 0), label=attr)
            out.attributes[attr] = value
        return out


_zp_breaker("input1_zp", as_input=False)
_zp_breaker("output_zp", as_input=False)
_zp_breaker("input1_zp", as_input=True)
_zp_breaker("output_zp", as_input=True)

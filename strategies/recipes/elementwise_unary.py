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

import numpy as np
from hypothesis import strategies as st

from conformance.dtypes import I64, DType
from conformance.operator_table import OperatorTable
from reference.ops.elementwise_unary import negate_zero_point_clause
from strategies.case import CaseSpec
from strategies.invalid import breaks, broken
from strategies.recipes import RecipeContext, recipe
from strategies.recipes.common import elementwise, zero_point
from strategies.recipes.elementwise_binary import place_ends
from strategies.values import ValueRange, add_specials, float_regime

RegimeFn = Callable[[DType], list[ValueRange]]


def _top(dt: DType) -> float:
    return dt.fp.normal_max


def _below_integers(dt: DType) -> list[ValueRange]:
    """Rounding only acts below 2**normal_frac; above it every value is an integer."""
    edge = 2.0 ** (dt.normal_frac or 0) * 4
    return [ValueRange(-edge, edge)]


# Per operator, the ranges besides the default and the whole finite range.
FLOAT_REGIMES: OperatorTable[RegimeFn] = OperatorTable(
    {
        "CEIL": _below_integers,
        "FLOOR": _below_integers,
        "COS": lambda dt: [ValueRange(-100.0, 100.0)],
        # Around where exp overflows and underflows to zero.
        "EXP": lambda dt: [ValueRange(-math.log(_top(dt)) * 1.2, math.log(_top(dt)) * 1.1)],
        "LOG": lambda dt: [ValueRange(0.0, 4.0), ValueRange(0.0, _top(dt))],
        "RECIPROCAL": lambda dt: [ValueRange(-1.0, 1.0)],
        "RSQRT": lambda dt: [ValueRange(0.0, 4.0), ValueRange(0.0, _top(dt))],
    }
)


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
    spec = _unary(draw, rc, None)  # full-range integers (0 and negatives for CLZ), booleans
    if rc.name == "CLZ" and rc.dtype("in_out_t") is I64 and rc.target != "edge":
        _every_bit_length(draw, spec)
    return spec


def _every_bit_length(draw: st.DrawFn, spec: CaseSpec) -> None:
    """In some cases, non-negative values of every bit length (0 to 63) at drawn
    positions of an i64 CLZ input, so that every count 1..64 occurs, not only the
    0 and 1 of full-range values; a count kept to 32 bits, or taken from a float64
    conversion (which rounds 2**k - 1 up above 2**53), shows there."""
    x = spec.inputs[0]
    assert x.values is not None
    if not x.values.size or not draw(st.booleans(), label="every bit length"):
        return
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="bit lengths"))
    flat = np.array(x.values).reshape(-1)
    lengths = np.arange(64, dtype=np.uint64)[: flat.size]  # 0 is the value 0
    # Of bit length k: 2**k - 1 (all ones), or bit k - 1 and random lower bits.
    top = np.where(lengths > 0, np.left_shift(np.uint64(1), np.maximum(lengths, 1) - 1), 0)
    top = top.astype(np.uint64)
    ones = (top << np.uint64(1)) - (top > 0).astype(np.uint64)
    lower = rng.integers(0, 2**63, size=lengths.size, dtype=np.uint64) & (top - (top > 0))
    values = np.where(rng.random(lengths.size) < 0.5, ones, top | lower).astype(np.int64)
    flat[rng.permutation(flat.size)[: lengths.size]] = values
    x.values = flat.reshape(x.values.shape)


@recipe("ABS")
def abs_(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    if dt.is_float:
        return float_unary(draw, rc, dt)
    # apply_sub_s(0, INT_MIN) leaves the type: every other value is fine.
    spec = _unary(draw, rc, ValueRange(low=dt.int_range.min + 1))
    _i64_ends(draw, spec, dt)
    return spec


def _i64_ends(draw: st.DrawFn, spec: CaseSpec, dt: DType) -> None:
    """For TOSA 1.1's i64, in some cases the ends ABS and NEGATE take (INT64_MIN + 1,
    whose negation is INT64_MAX, and INT64_MAX) at drawn positions, not only by luck."""
    if dt is I64:
        lo, hi = dt.int_range
        place_ends(draw, spec.inputs[0], [lo + 1, hi, -1], "input1")


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
    # 0 - x in the accumulator (i32; i64 for TOSA 1.1's i64): only INT_MIN of i32 or
    # i64 overflows (i16 cannot).
    r = ValueRange(low=dt.int_range.min + 1) if dt.bits >= 32 else None
    spec = _unary(draw, rc, r, input1_zp=0, output_zp=0)
    _i64_ends(draw, spec, dt)
    return spec


def _zp_breaker(attr: str, as_input: bool) -> None:
    """The breaker of one zero point's ERROR_IF, for the revisions that declare it an
    attribute (the draft) or an input (TOSA 1.0 on), which spell the clause apart."""
    clause = negate_zero_point_clause(attr, as_input)

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

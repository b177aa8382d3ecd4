"""Recipes for SELECT and SIN (which tosa.xml files in the elementwise-ternary group)."""

from __future__ import annotations

from hypothesis import strategies as st

from strategies.case import CaseSpec
from strategies.recipes import RecipeContext, recipe
from strategies.recipes.common import elementwise
from strategies.recipes.elementwise_binary import (
    add_specials,
    float_regime,
    register_broadcast_breakers,
    share_values,
)
from strategies.recipes.elementwise_unary import float_unary

SELECT_BROADCAST = "shape != broadcast_shape(broadcast_shape(shape1, shape2), shape3)"


@recipe("SELECT")
def select(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    # No REQUIRE: values pass through unchanged, special values included.  The three
    # operands broadcast independently, so each may repeat along different axes.
    dt = rc.dtype("in_out_t")
    r = float_regime(draw, dt) if dt.is_float else None
    spec = elementwise(draw, rc, ranges={"input2": r, "input3": r} if r else {})
    add_specials(draw, spec, ("input2", "input3"))
    share_values(draw, spec, 1, 2)  # equal choices: a wrong pick goes unseen there
    return spec


@recipe("SIN")
def sin(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    return float_unary(draw, rc, rc.dtype("in_out_t"))


register_broadcast_breakers(("SELECT",), SELECT_BROADCAST)

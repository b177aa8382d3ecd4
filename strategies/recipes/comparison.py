"""Recipes for EQUAL, GREATER and GREATER_EQUAL.

No REQUIREs: every value compares, NaN included (always false).  Random full-range
operands are almost never equal, so some cases copy values between the operands to
make ties (equal values, -0 against +0, equal infinities) where the operators differ.
"""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.operator_table import family
from reference.ops.elementwise_binary import BROADCAST
from strategies.case import CaseSpec
from strategies.invalid import register_broadcast_breakers
from strategies.recipes import RecipeContext, recipe
from strategies.recipes.common import elementwise, share_values
from strategies.values import add_specials, float_regime

OPERATORS = family(("EQUAL", "GREATER", "GREATER_EQUAL"))


@recipe(*OPERATORS)
def compare(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_t")
    r = float_regime(draw, dt, rc=rc) if dt.is_float else None
    spec = elementwise(draw, rc, ranges={"input1": r, "input2": r} if r else {})
    add_specials(draw, spec, ("input1", "input2"), rc)
    share_values(draw, spec, 0, 1)
    return spec


register_broadcast_breakers(OPERATORS, BROADCAST)

"""Recipes for the element-wise binary operators."""

from __future__ import annotations

from hypothesis import strategies as st

from strategies.case import CaseSpec
from strategies.recipes import RecipeContext, recipe
from strategies.recipes.common import elementwise
from strategies.values import ValueRange


@recipe("ADD", "SUB")
def add_sub(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    if dt.is_int:
        # apply_add_s / apply_sub_s REQUIRE the result in range: halve the operands.
        half = ValueRange(low=dt.min // 2, high=dt.max // 2)  # type: ignore[operator]
        return elementwise(draw, rc, ranges={"input1": half, "input2": half})
    return elementwise(draw, rc)

"""Strategies for valid cases of every (operator, mode) pair."""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.spec import Level, Spec
from strategies.case import Case, CaseSpec
from strategies.recipes import RecipeContext, load_all
from strategies.shapes import Budget


class NoRecipe(LookupError):
    """No recipe draws cases of this operator yet."""


def has_recipe(operator: str) -> bool:
    return operator in load_all()


def valid_cases(
    spec: Spec,
    operator: str,
    mode: str,
    level: Level,
    budget: Budget | None = None,
    data_set: int | None = None,
) -> st.SearchStrategy[Case]:
    """Cases of ``operator`` in ``mode`` that the reference should find valid.

    Recipes keep to the ERROR_IF clauses and avoid REQUIRE failures by construction;
    the generator still evaluates every case and drops any that is not valid.
    """
    recipes = load_all()
    op_spec = spec.operator(operator)
    if op_spec.name not in recipes:
        raise NoRecipe(f"no recipe draws {op_spec.name} cases yet")
    rc = RecipeContext(spec, op_spec, op_spec.mode(mode), level, budget or Budget(), data_set)
    fn = recipes[op_spec.name]

    @st.composite
    def draw_case(draw: st.DrawFn) -> Case:
        drawn = fn(draw, rc)
        return drawn.build(spec) if isinstance(drawn, CaseSpec) else drawn

    return draw_case()

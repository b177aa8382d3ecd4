"""Level cases: operands exactly at a level limit, and just above it.

At the limit a case is an ordinary valid vector (kind ``valid``): an implementation
claiming the level has to run it.  Above the limit the spec makes the graph
unpredictable (a failed LEVEL_CHECK), so such a case certifies nothing and is never a
must-fail vector; it is kept, labelled ``level``, to show what an implementation does.

The rank limit (``rank(shape) <= MAX_RANK``) is reached through the recipes: their
context asks every rank drawn to be the upper bound, and for the case above the limit
the recipes see a level whose MAX_RANK is one higher than the real one.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st

from conformance.spec import Level, Spec
from reference.engine import evaluate
from reference.levels import level_violations
from strategies.case import Case, CaseSpec
from strategies.recipes import RecipeContext, load_all
from strategies.shapes import Budget

LIMITS = ("MAX_RANK",)  # the limits level cases are drawn for


def rank_limited(spec: Spec, operator: str) -> bool:
    """Whether some argument of the operator is bounded by ``rank(...) <= MAX_RANK``."""
    return any(lim.limit == "MAX_RANK" for _, lim in spec.operator(operator).level_limits())


def level_cases(
    spec: Spec,
    operator: str,
    mode: str,
    level: Level,
    budget: Budget | None = None,
    *,
    above: bool = False,
) -> st.SearchStrategy[Case]:
    """Cases of ``operator`` whose ranks are at MAX_RANK (or MAX_RANK + 1 when
    ``above``).  The caller keeps the ones the reference finds valid (at) or
    unpredictable by LEVEL_CHECK (above): see :func:`is_level_case`."""
    recipes = load_all()
    op_spec = spec.operator(operator)
    draw_level = level
    if above:
        maxima = dict(level.maxima)
        maxima["MAX_RANK"] += 1
        draw_level = Level(level.name, level.description, maxima)
    rc = RecipeContext(
        spec, op_spec, op_spec.mode(mode), draw_level, budget or Budget(), force_max_rank=True
    )
    fn = recipes[op_spec.name]
    clause = "rank(shape) <= MAX_RANK"

    @st.composite
    def draw_case(draw: st.DrawFn) -> Case:
        drawn = fn(draw, rc)
        if not isinstance(drawn, CaseSpec):
            raise TypeError(f"{op_spec.name}'s recipe builds graphs; no level cases")
        if above:  # unpredictable: labelled, never a must-fail vector
            drawn = replace(drawn, kind="level", rule_broken=clause)
        drawn = replace(
            drawn, strategy=f"{drawn.strategy} / level: {'above' if above else 'at'} {clause}"
        )
        return drawn.build(spec)

    return draw_case()


def is_level_case(case: Case, spec: Spec, level: Level, *, above: bool) -> bool:
    """At the limit: valid, with some rank exactly MAX_RANK.  Above: unpredictable
    because of the rank LEVEL_CHECK."""
    outcome = evaluate(case.graph, case.inputs, spec=spec, level=level)
    if above:
        return (
            outcome.kind == "unpredictable"
            and outcome.rule is not None
            and outcome.rule.kind == "LEVEL_CHECK"
            and "MAX_RANK" in outcome.rule.clause
        )
    if outcome.kind != "valid":
        return False
    from conformance.builder import map_operands

    op = case.graph.main.operators[0]
    op_spec = spec.operator(op.op)
    operands = map_operands(op_spec, op)
    limits = dict(level.maxima)
    limits["MAX_RANK"] -= 1  # a level one lower: the at-limit case must violate it
    lower = Level(level.name, level.description, limits)
    problems = level_violations(
        op_spec, operands, case.graph.main.tensors, op.attributes, {}, lower
    )
    return any("MAX_RANK" in p for p in problems)

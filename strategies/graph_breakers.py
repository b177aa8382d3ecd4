"""Error cases of the graph-building recipes (COND_IF, WHILE_LOOP, the variable operators).

Those recipes return a :class:`Case` directly, so the breakers of
:mod:`strategies.invalid`, which edit a single-operator :class:`CaseSpec`, cannot break
them.  Their error cases register here instead (``@graph_breaks``): a function
``(draw, rc) -> Case | None`` that draws the whole graph with exactly one rule broken.
:func:`graph_invalid_cases` is the counterpart of ``strategies.invalid.invalid_cases``
for them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hypothesis import reject
from hypothesis import strategies as st

from conformance.spec import Level, Spec
from strategies.case import Case
from strategies.recipes import RecipeContext, load_all
from strategies.shapes import Budget

GraphBreaker = Callable[[st.DrawFn, RecipeContext], Case | None]


@dataclass(frozen=True)
class GraphBreakerEntry:
    """Like ``strategies.invalid.BreakerEntry``, for a recipe that builds graphs."""

    operator: str
    clause: str
    fn: GraphBreaker
    optional: bool = False  # may return None for some modes or levels
    # as BreakerEntry: whether it can break a mode (None: every mode)
    applies: Callable[[RecipeContext], bool] | None = None


GRAPH_BREAKERS: list[GraphBreakerEntry] = []


def graph_breaks(
    *operators: str,
    clause: str,
    optional: bool = False,
    applies: Callable[[RecipeContext], bool] | None = None,
) -> Callable[[GraphBreaker], GraphBreaker]:
    """Register a graph breaker; ``optional`` when it cannot apply everywhere (the
    nesting error needs a level whose MAX_NESTING is small enough to reach)."""

    def register(fn: GraphBreaker) -> GraphBreaker:
        for op in operators:
            GRAPH_BREAKERS.append(GraphBreakerEntry(op, clause, fn, optional, applies))
        return fn

    return register


def graph_breakers_for(operator: str) -> list[GraphBreakerEntry]:
    load_all()  # the recipe modules register their graph breakers
    return [b for b in GRAPH_BREAKERS if b.operator == operator]


def builds_graphs(operator: str) -> bool:
    """Whether ``operator``'s error cases come from :func:`graph_invalid_cases` (its
    recipe builds the graph itself) rather than from CaseSpec breakers."""
    return bool(graph_breakers_for(operator))


def graph_invalid_cases(
    spec: Spec,
    operator: str,
    mode: str,
    level: Level,
    budget: Budget | None = None,
    clause: str | None = None,
) -> st.SearchStrategy[Case]:
    """Cases that break one rule of a graph-building ``operator`` (optionally a given
    clause): the same contract as ``strategies.invalid.invalid_cases``."""
    op_spec = spec.operator(operator)
    rc = RecipeContext(spec, op_spec, op_spec.mode(mode), level, budget or Budget())
    entries = [
        b
        for b in graph_breakers_for(op_spec.name)
        if clause in (None, b.clause) and (b.applies is None or b.applies(rc))
    ]
    if not entries:
        raise LookupError(f"no graph breaker for {op_spec.name} {clause or ''}".strip())

    @st.composite
    def draw_case(draw: st.DrawFn) -> Case:
        entry = draw(st.sampled_from(entries), label="rule broken")
        case = entry.fn(draw, rc)
        if case is None:
            reject()
        assert case is not None
        return case

    return draw_case()

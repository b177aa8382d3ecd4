"""Level cases: operands exactly at a level limit, and just above it.

At the limit a case is an ordinary valid vector (kind ``valid``): an implementation
claiming the level has to run it.  Above the limit the spec makes the graph
unpredictable (a failed LEVEL_CHECK), so such a case certifies nothing and is never a
must-fail vector; it is kept, labelled ``level``, to show what an implementation does.

Every level limit of an operator in tosa.xml gets its cases (:func:`level_limits_for`;
the few that no vector can reach are listed in ``level_limits.EXEMPT`` with the
reason).  The rank limit (``rank(shape) <= MAX_RANK``) is reached through the
recipes: their context asks every rank drawn to be the upper bound, with every
dimension 2 (so the data is not one element), and for the case above the limit the
recipes see a level whose MAX_RANK is one higher than the real one.  The other limits
are drawn by :mod:`strategies.level_limits`.

The erratum max_nesting-no-levellimit makes MAX_NESTING an ERROR_IF: nesting past it
is a must-fail vector (the control-flow recipes' ``nesting`` breaker), not a level
one, so the nesting maximum has no case of its own; the list cases of COND_IF and
WHILE_LOOP nest MAX_NESTING deep instead, and their at-limit check asks for both.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import strategies as st

from conformance.dtypes import DType
from conformance.spec import Level, OperatorSpec, Spec
from reference.engine import evaluate
from reference.ops.control_flow import NESTING_CLAUSE
from strategies.case import Case, CaseSpec
from strategies.level_limits import (
    EXEMPT,
    MAX_LEVEL_ELEMENTS,
    NESTED,
    LimitCase,
    draw_limit_case,
    limit_case,
    limit_cases,
    widened,
)
from strategies.recipes import RecipeContext, load_all
from strategies.recipes.control_flow import Sig, make_case
from strategies.recipes.variable import OPERATORS as VARIABLE_OPERATORS
from strategies.recipes.variable import Var, VariableGraph
from strategies.shapes import Budget

__all__ = [
    "EXEMPT",
    "is_level_case",
    "level_cases",
    "level_limits_for",
    "rank_limited",
    "unwritable_cases",
]


def level_limits_for(spec: Spec, operator: str, level: Level | None = None) -> list[str]:
    """The level limit cases (``MAX_RANK``, ``MAX_KERNEL:pad``, ...) that ``operator``
    gets level cases for: one valid case exactly at each and one unpredictable case
    just above it.  With ``level``, only those a vector can hold (:func:`unwritable`)."""
    op_spec = spec.operator(operator)
    cases = [c for c in limit_cases(op_spec) if (op_spec.name, c.name) not in EXEMPT]
    if level is not None:
        cases = [c for c in cases if unwritable(c.limit, level) is None]
    return [c.name for c in cases]


def unwritable_cases(spec: Spec, operator: str, level: Level) -> list[tuple[str, str]]:
    """The limit cases of ``operator`` that no vector can hold at ``level``, each with
    the reason."""
    op_spec = spec.operator(operator)
    out = []
    for c in limit_cases(op_spec):
        why = unwritable(c.limit, level)
        if why is not None and (op_spec.name, c.name) not in EXEMPT:
            out.append((c.name, why))
    return out


# Limits whose value is a tensor extent: at a level where it is larger than any vector
# holds (level "none": kernels and strides of 2**31 - 1), no case can sit at it.
EXTENT_LIMITS = ("MAX_KERNEL", "MAX_STRIDE")


def unwritable(limit: str, level: Level) -> str | None:
    """Why no vector can sit at ``limit`` of ``level``, or None when one can."""
    value = int(level.maxima.get(limit, 0))
    if limit in EXTENT_LIMITS and value > MAX_LEVEL_ELEMENTS:
        # A kernel case slides the kernel over an input that long; a stride case puts
        # two outputs along the axis, so its input is longer than the stride.
        return (
            f"{limit} is {value} at level {level.name}: its case needs an input axis "
            f"that long, more than the {MAX_LEVEL_ELEMENTS} elements a level vector holds"
        )
    return None


def rank_limited(spec: Spec, operator: str) -> bool:
    """Whether some argument of the operator is bounded by ``rank(...) <= MAX_RANK``."""
    return any(lim.limit == "MAX_RANK" for _, lim in spec.operator(operator).level_limits())


def _with(level: Level, limit: str, delta: int) -> Level:
    maxima = dict(level.maxima)
    maxima[limit] += delta
    return Level(level.name, level.description, maxima)


def level_cases(
    spec: Spec,
    operator: str,
    mode: str,
    level: Level,
    budget: Budget | None = None,
    *,
    above: bool = False,
    limit: str = "MAX_RANK",
) -> st.SearchStrategy[Case]:
    """Cases of ``operator`` exactly at the limit case ``limit`` of ``level`` (or one
    above it when ``above``).  The caller keeps the ones the reference finds valid (at)
    or unpredictable by that LEVEL_CHECK (above): see :func:`is_level_case`."""
    op_spec = spec.operator(operator)
    case = limit_case(op_spec, limit)
    exempt = EXEMPT.get((op_spec.name, case.name))
    if exempt:
        raise ValueError(f"{op_spec.name} has no {case.name} level cases: {exempt}")
    value = level[case.limit] + int(above)
    if case.limit == "MAX_RANK":
        drawn = _rank_cases(spec, op_spec, mode, level, budget or Budget(), value)
    else:
        drawn = draw_limit_case(spec, op_spec, mode, level, case, value)
    where = "above" if above else "at"

    @st.composite
    def draw_case(draw: st.DrawFn) -> Case:
        got = draw(drawn)
        clause = " / ".join(f"{e} <= {case.limit}" for e in case.expressions)
        how = f"level: {where} {case.name} ({value})"
        if isinstance(got, CaseSpec):
            if above:  # unpredictable: labelled, never a must-fail vector
                got = replace(got, kind="level", rule_broken=clause)
            return replace(got, strategy=f"{got.strategy} / {how}").build(spec)
        if above:
            got.kind, got.rule_broken = "level", clause
        got.strategy = f"{got.strategy} / {how}"
        return got

    return draw_case()


def _rank_cases(
    spec: Spec, op_spec: OperatorSpec, mode: str, level: Level, budget: Budget, rank: int
) -> st.SearchStrategy[CaseSpec | Case]:
    """Every rank at ``rank`` (the recipes see a level whose MAX_RANK it is), every
    dimension 2: a budget whose dimensions are at most 2 but that needs 2**rank
    elements leaves shapes() no other choice (where the budget holds 2**rank)."""
    draw_level = _with(level, "MAX_RANK", rank - level["MAX_RANK"])
    twos = Budget(budget.max_elements, 2, min(2**rank, budget.max_elements))
    rc = RecipeContext(
        spec, op_spec, op_spec.mode(mode), draw_level, twos, data_set=-1, force_max_rank=True
    )
    if op_spec.name in VARIABLE_OPERATORS:
        return _variable_case(rc, rank, strict=rank <= level["MAX_RANK"])
    fn = load_all()[op_spec.name]

    @st.composite
    def draw_case(draw: st.DrawFn) -> CaseSpec | Case:
        drawn = fn(draw, rc)
        if not isinstance(drawn, CaseSpec):
            # A graph recipe (TOSA 1.0's COND_IF condition has a rank limit): its ranks
            # come from rc.rank_range() too, so the drawn graph is at the rank.
            return drawn
        # CONCAT's list members; a block-scaled list (values, scales) keeps its shapes.
        if any(a.is_list and not a.is_scaled_list for a in op_spec.inputs):
            return widened(draw, rc, drawn, 2)
        return drawn

    return draw_case()


@st.composite
def _variable_case(draw: st.DrawFn, rc: RecipeContext, rank: int, *, strict: bool) -> Case:
    """A variable of ``rank`` dimensions of 2 or 3 declared (with its initial value for
    VARIABLE, whose limit bounds it), written (always for VARIABLE_WRITE) and read."""
    dt: DType = rc.dtype(rc.op_spec.types[0])  # var_t; TOSA 1.0 declares in_t / out_t
    shape = tuple(draw(st.integers(2, 3), label=f"dim {k}") for k in range(rank))
    vg = VariableGraph(rc, strict=strict)
    var = Var(draw(st.integers(-(2**31), 2**31 - 1), label="uid"), Sig(shape, dt))
    initial = rc.name == "VARIABLE" or draw(st.booleans(), label="initial value")
    vg.declare(draw, var, initial=initial)
    if rc.name == "VARIABLE_WRITE" or not initial:
        vg.write(var, vg.graph_input(draw, var.sig))
    vg.read(var)
    return make_case(rc, vg.g, vg.inputs)


def is_level_case(
    case: Case, spec: Spec, level: Level, *, above: bool, limit: str = "MAX_RANK"
) -> bool:
    """At the limit: valid, and one lower maximum of that limit makes the reference
    report that LEVEL_CHECK (for COND_IF and WHILE_LOOP also one lower MAX_NESTING
    their nesting ERROR_IF).  Above: unpredictable by that LEVEL_CHECK."""
    op_spec = spec.operator(case.operator)
    c = limit_case(op_spec, limit)
    if above:
        return _fires(case, spec, level, c)
    outcome = evaluate(case.graph, case.inputs, spec=spec, level=level)
    if outcome.kind != "valid" or not _fires(case, spec, _with(level, c.limit, -1), c):
        return False
    if c.limit == "MAX_TENSOR_LIST_SIZE" and op_spec.name in NESTED:
        nested = evaluate(case.graph, case.inputs, spec=spec, level=_with(level, "MAX_NESTING", -1))
        return nested.rule is not None and nested.rule.clause == NESTING_CLAUSE
    return True


def _fires(case: Case, spec: Spec, level: Level, c: LimitCase) -> bool:
    """Whether the reference finds ``case`` unpredictable by one of ``c``'s LEVEL_CHECKs
    at ``level``; for a product reached through an attribute (dilation * K), that
    attribute's element in the failed check is above 1."""
    outcome = evaluate(case.graph, case.inputs, spec=spec, level=level)
    rule = outcome.rule
    if outcome.kind != "unpredictable" or rule is None or rule.kind != "LEVEL_CHECK":
        return False
    if not c.names(rule.clause):
        return False
    if c.through is None:
        return True
    op = next(o for o in case.graph.main.operators if o.op == case.operator)
    through = spec.operator(case.operator).argument(c.through)
    elements = dict(zip(through.element_names, np.asarray(op.attributes[c.through]), strict=True))
    failed = rule.clause.split(" <= ")[0]
    return all(int(v) > 1 for n, v in elements.items() if n in failed.split(" * "))

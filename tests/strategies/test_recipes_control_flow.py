"""COND_IF, WHILE_LOOP and the variable operators: their graph-building recipes give
valid graphs, nesting reaches MAX_NESTING, and each graph breaker breaks exactly the
rule it names, reported by the operator under test."""

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.spec import load_spec
from reference.engine import evaluate
from reference.ops.control_flow import NESTING_CLAUSE
from strategies.draw import draw_examples
from strategies.graph_breakers import builds_graphs, graph_breakers_for, graph_invalid_cases
from strategies.recipes import RecipeContext
from strategies.recipes.control_flow import cond_if_case, while_loop_case
from strategies.shapes import Budget

SPEC = load_spec()
LEVEL = SPEC.level("8K")
OPERATORS = ("COND_IF", "WHILE_LOOP", "VARIABLE", "VARIABLE_WRITE", "VARIABLE_READ")
PAIRS = [
    pytest.param(op, m.mode, id=f"{op}-{m.mode}")
    for op in OPERATORS
    for m in SPEC.operator(op).modes
]


def context(op: str, mode: str | None = None) -> RecipeContext:
    op_spec = SPEC.operator(op)
    return RecipeContext(
        SPEC, op_spec, op_spec.mode(mode or op_spec.modes[0].mode), LEVEL, Budget()
    )


@pytest.mark.parametrize(("op", "mode"), PAIRS)
def test_graph_breakers_break_the_rule_they_name(op: str, mode: str) -> None:
    assert builds_graphs(op)
    for entry in graph_breakers_for(op):
        cases = draw_examples(graph_invalid_cases(SPEC, op, mode, LEVEL, clause=entry.clause), 3, 2)
        if not entry.optional:
            assert cases, f"{op} [{mode}]: breaker for {entry.clause!r} never applies"
        for case in cases:
            assert case.kind == "error" and case.rule_broken == entry.clause
            assert case.operator == op and case.mode == mode
            outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
            assert outcome.kind == "error", f"{case.describe()}: {outcome}"
            assert outcome.rule is not None
            assert outcome.rule.clause == entry.clause, f"{case.describe()}: {outcome.rule}"
            assert outcome.rule.operator == op, f"{case.describe()}: {outcome.rule}"


BUILDERS = {"COND_IF": cond_if_case, "WHILE_LOOP": while_loop_case}


def drawn(
    op: str, rc: RecipeContext, fault: str | None = None, **kw: Any
) -> st.SearchStrategy[Any]:
    build = BUILDERS[op]
    return st.composite(lambda draw: build(draw, rc, fault, **kw))()


@pytest.mark.parametrize("op", list(BUILDERS))
@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_max_nesting_is_valid_and_one_more_is_an_error(op: str, data: st.DataObject) -> None:
    """MAX_NESTING nested operators run down to the innermost one; one more fails."""
    limit = LEVEL["MAX_NESTING"]
    rc = context(op)
    deepest = data.draw(drawn(op, rc, depth=limit, reach=True), label="deepest valid")
    outcome = evaluate(deepest.graph, deepest.inputs, spec=SPEC, level=LEVEL)
    assert outcome.kind == "valid", str(outcome)
    count = sum(1 for b in deepest.graph.blocks() for o in b.operators if o.op == op)
    assert count == limit
    deeper = data.draw(drawn(op, rc, "nesting"), label="one too deep")
    outcome = evaluate(deeper.graph, deeper.inputs, spec=SPEC, level=LEVEL)
    assert outcome.kind == "error" and outcome.rule is not None
    assert outcome.rule.clause == NESTING_CLAUSE


def test_nesting_error_needs_a_reachable_limit() -> None:
    """Level 'none' allows 256 nested operators: no nesting error case is drawn there."""
    op_spec = SPEC.operator("COND_IF")
    rc = RecipeContext(SPEC, op_spec, op_spec.modes[0], SPEC.level("none"), Budget())
    case = draw_examples(drawn("COND_IF", rc, "nesting"), 1, 1)
    assert case == [None]


@pytest.mark.parametrize("op", ["VARIABLE", "VARIABLE_WRITE", "VARIABLE_READ"])
def test_variable_cases_hold_the_operator_under_test(op: str) -> None:
    from strategies.valid import valid_cases

    for mode in SPEC.operator(op).modes:
        for case in draw_examples(valid_cases(SPEC, op, mode.mode, LEVEL), 8, 3):
            assert op in case.operators
            read = case.graph.main.operators[-1]
            assert read.op == "VARIABLE_READ" and read.outputs[0] in case.graph.main.outputs

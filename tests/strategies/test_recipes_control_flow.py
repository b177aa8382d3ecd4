"""COND_IF, WHILE_LOOP and the variable operators: their graph-building recipes give
valid graphs, nesting reaches MAX_NESTING, and each graph breaker breaks exactly the
rule it names, reported by the operator under test."""

from typing import Any

import numpy as np
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


def _body_blocks(case: Any) -> list[Any]:
    """The blocks a WHILE_LOOP of the case's graph names as its body_graph."""
    names = {
        o.attributes["body_graph"]
        for b in case.graph.blocks()
        for o in b.operators
        if o.op == "WHILE_LOOP"
    }
    return [b for b in case.graph.blocks() if b.name in names]


def _valid(case: Any) -> Any:
    outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
    assert outcome.kind == "valid", f"{case.describe()}: {outcome}"
    return outcome


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_cond_if_in_a_loop_body_switches_branch(data: st.DataObject) -> None:
    """A COND_IF case in a loop body: its condition, GREATER(threshold, counter), is
    true on the first iterations and false on the last, so both branches run."""
    case = data.draw(drawn("WHILE_LOOP", context("COND_IF"), switch=True), label="case")
    assert case.operator == "COND_IF"
    _valid(case)
    body = case.graph.block("body")
    (cond_if,) = [o for o in body.operators if o.op == "COND_IF"]
    (turn,) = [o for o in body.operators if o.outputs == [cond_if.inputs[0]]]
    assert turn.op == "GREATER" and turn.inputs[1] == body.inputs[0]  # the counter
    threshold = int(body.tensors[turn.inputs[0]].data.reshape(-1)[0])
    if "limit" in case.inputs:
        limit = case.inputs["limit"]
    else:
        limit = case.graph.block("cond").tensors["limit"].data
    start, stop = int(case.inputs["counter"].reshape(-1)[0]), int(limit.reshape(-1)[0])
    taken = [threshold > i for i in range(start, stop)]
    assert len(taken) >= 2 and taken[0] and not taken[-1]
    then, other = (case.graph.block(cond_if.attributes[k]) for k in ("then_graph", "else_graph"))
    assert then.outputs == then.inputs and other.outputs != other.inputs  # results differ


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_loop_bodies_permute_only_alike_carried_tensors(data: st.DataObject) -> None:
    """Drawn loops evaluate; a body output that passes an earlier input through (a
    swapped carry) is a data tensor whose signature is that of its own input."""
    case = data.draw(drawn("WHILE_LOOP", context("WHILE_LOOP")), label="loop")
    _valid(case)
    for body in _body_blocks(case):
        for j, name in enumerate(body.outputs):
            k = body.inputs.index(name) if name in body.inputs else j
            if k < j:
                a, b = body.tensors[name], body.tensors[body.inputs[j]]
                assert (a.shape, a.dtype) == (b.shape, b.dtype)
                assert k >= 1 and j >= 2  # data, never the counter


def test_default_draws_hold_the_loop_structures() -> None:
    """Among a few draws of the pack's recipes: a COND_IF case in a loop body, a loop
    body with a swapped carry, and for every variable mode a variable updated in a
    loop body; all evaluate."""
    from strategies.valid import valid_cases

    def valid(op: str, mode: str) -> list[Any]:
        return draw_examples(valid_cases(SPEC, op, mode, LEVEL), 12, 0)

    def body_ops(case: Any) -> set[str]:
        return {o.op for b in _body_blocks(case) for o in b.operators}

    cond_ifs = valid("COND_IF", SPEC.operator("COND_IF").modes[0].mode)
    assert any("COND_IF" in body_ops(c) for c in cond_ifs)
    loops = valid("WHILE_LOOP", SPEC.operator("WHILE_LOOP").modes[0].mode)
    assert any(
        body.inputs.index(n) < j
        for c in loops
        for body in _body_blocks(c)
        for j, n in enumerate(body.outputs)
        if n in body.inputs
    )
    for op in ("VARIABLE", "VARIABLE_WRITE", "VARIABLE_READ"):
        for mode in SPEC.operator(op).modes:
            in_loop = [c for c in valid(op, mode.mode) if "VARIABLE_WRITE" in body_ops(c)]
            assert in_loop, f"{op} [{mode.mode}]: no variable updated in a loop"
            for c in in_loop:
                _valid(c)


@pytest.mark.parametrize("mode", [m.mode for m in SPEC.operator("VARIABLE").modes])
@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_variable_updated_in_a_loop_sees_every_iteration(mode: str, data: st.DataObject) -> None:
    """VariableGraph.update_in_loop: n iterations of read, change, write leave the
    change applied n times (not once, as a read hoisted out of the loop would)."""
    from strategies.recipes.control_flow import Sig
    from strategies.recipes.variable import VAR_NAME, Var, VariableGraph

    rc = context("VARIABLE", mode)
    dt = rc.dtype("var_t")
    shape = data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=3), label="shape")
    small = st.integers(-8, 8)  # exact in every type, as are its sums with the steps
    size = int(np.prod(shape))
    values = data.draw(st.lists(small, min_size=size, max_size=size), label="initial")
    init = np.array(values).reshape(shape).astype(dt.storage)
    vg = VariableGraph(rc, strict=True)
    var = Var(5, Sig(tuple(shape), dt), written=True)
    vg.main.op(
        "VARIABLE", [], [], uid=5, var_shape=tuple(shape), type=VAR_NAME[dt], initial_value=init
    )
    vg.update_in_loop(data.draw, var)
    out = vg.read(var)
    graph = vg.g.build()
    outcome = evaluate(graph, vg.inputs, spec=SPEC, level=LEVEL)
    assert outcome.kind == "valid", str(outcome)
    (cond,) = [b for b in graph.blocks() if b.name.startswith("cond")]
    (body,) = [b for b in graph.blocks() if b.name.startswith("body")]
    n = int(cond.tensors["limit"].data[0])
    if dt.is_float:
        step = float(body.tensors["step"].data.astype(np.float64).reshape(-1)[0])
        expected = init.astype(np.float64) + n * step
        hoisted = init.astype(np.float64) + step
    else:
        assert n % 2 == 0  # NOT twice or four times: the value read at the loop's start
        expected, hoisted = init, ~init
    np.testing.assert_array_equal(
        outcome.outputs[out].astype(np.float64), expected.astype(np.float64)
    )
    assert not np.array_equal(expected, hoisted)

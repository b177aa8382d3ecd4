"""Chains of operators: every drawn graph is valid, names its last operator and mode,
and can be turned into a vector (the reference describes how to check its output)."""

import pytest

from conformance.spec import load_spec
from reference.engine import evaluate
from reference.expectations import expect
from strategies.draw import draw_examples
from strategies.graphs import deterministic, first_modes, graph_cases

SPEC = load_spec()
LEVEL = SPEC.level("8K")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_chains_are_valid(seed: int) -> None:
    cases = draw_examples(graph_cases(SPEC, LEVEL), 10, seed)
    assert len(cases) == 10
    for case in cases:
        assert 2 <= len(case.operators) <= 5, case.strategy
        assert case.operator == case.operators[-1]
        assert case.mode in [m.mode for m in SPEC.operator(case.operator).modes]
        assert len(case.graph.main.operators) == len(case.operators)
        outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
        assert outcome.kind == "valid", f"{case.strategy}: {outcome}"
        expect(case.graph, case.inputs, spec=SPEC, level=LEVEL)  # a rule for its output
        # A float result feeding a later operator must have one right value.
        for op in case.graph.main.operators[:-1]:
            t = case.graph.main.tensors[op.outputs[0]]
            assert not t.dtype.is_float or deterministic(op.op), case.strategy


def test_chains_keep_to_the_operators_given() -> None:
    ops = {"ADD", "SUB", "ABS", "IDENTITY", "CAST", "GREATER", "SELECT"}
    cases = draw_examples(graph_cases(SPEC, LEVEL, ops=ops, length=(3, 4)), 10, 4)
    assert cases
    for case in cases:
        assert set(case.operators) <= ops and 3 <= len(case.operators) <= 4
        outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
        assert outcome.kind == "valid", f"{case.strategy}: {outcome}"


def test_chains_start_from_single_operator_recipes() -> None:
    firsts = {m.operator for m in first_modes(SPEC)}
    assert {"ADD", "ABS", "RESHAPE"} <= firsts
    assert not firsts & {"COND_IF", "WHILE_LOOP", "VARIABLE_READ", "CUSTOM"}
    # EXP's results are within ulps, not exact: it may only end a chain
    assert first_modes(SPEC, frozenset({"EXP"})) == []
    assert "fp32" in {m.mode for m in first_modes(SPEC, frozenset({"ADD"}))}

"""Reference evaluator: CUSTOM, which it cannot evaluate."""

from __future__ import annotations

import re

import numpy as np
import pytest

from conformance.builder import single_operator_graph
from conformance.graph import Graph
from conformance.spec import load_spec
from reference.engine import EvaluationError, evaluate
from reference.outcome import Outcome

SPEC = load_spec()
ATTRS = {"operator_name": "softmax", "domain_name": "example.com", "implementation_attrs": ""}


def custom_graph(n_in: int = 2, n_out: int = 1, **attrs: str) -> Graph:
    return single_operator_graph(
        "CUSTOM",
        [(f"x{k}", (2, 2), "fp32") for k in range(n_in)],
        [(f"y{k}", (3,), "i8") for k in range(n_out)],
        {**ATTRS, **attrs},
        strict=False,
    )


def run(graph: Graph, n_in: int = 2) -> Outcome:
    return evaluate(graph, {f"x{k}": np.zeros((2, 2), np.float32) for k in range(n_in)})


def test_custom_cannot_be_evaluated() -> None:
    message = re.escape(
        "CUSTOM operator 'example.com::softmax' cannot be evaluated by the reference "
        "(operator 0): CUSTOM is implementation defined"
    )
    with pytest.raises(EvaluationError, match=message):
        run(custom_graph())


def test_every_mode_is_refused_the_same_way() -> None:
    """CUSTOM's only mode ("All") has no defined result, so no mode can be 'valid'."""
    modes = SPEC.operator("CUSTOM").modes
    assert [m.mode for m in modes] == ["All"]
    for n_in, n_out in ((0, 0), (1, 3), (3, 1)):
        with pytest.raises(EvaluationError, match="cannot be evaluated"):
            run(custom_graph(n_in, n_out, operator_name="op", domain_name="d"), n_in)


def test_engine_checks_still_come_first() -> None:
    """What the spec does state about CUSTOM is checked before the evaluator gives up:
    the tensor list limit (a LEVEL_CHECK) and the attributes (string valued)."""
    limit = SPEC.level("8K")["MAX_TENSOR_LIST_SIZE"]
    outcome = run(custom_graph(limit + 1), limit + 1)
    assert outcome.kind == "unpredictable", str(outcome)
    assert outcome.rule is not None and outcome.rule.kind == "LEVEL_CHECK"
    graph = custom_graph()
    graph.main.operators[0].attributes["operator_name"] = 7
    assert run(graph).kind == "error"
    del graph.main.operators[0].attributes["operator_name"]
    assert run(graph).kind == "error"

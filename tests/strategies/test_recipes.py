"""Every recipe's valid cases are valid, and every breaker breaks the rule it names."""

import pytest

from conformance.sources import EXEMPTIONS
from conformance.spec import load_spec
from reference.engine import evaluate
from strategies.draw import draw_examples
from strategies.invalid import breakers_for, invalid_cases
from strategies.recipes import RecipeContext
from strategies.shapes import Budget
from strategies.valid import has_recipe, unbuildable_reason, valid_cases

SPEC = load_spec()
LEVEL = SPEC.level("8K")
PAIRS = [pytest.param(m.operator, m.mode, id=f"{m.operator}-{m.mode}") for m in SPEC.modes()]
EXAMPLES = 6
# Operators that can have no recipe, and why (conformance.sources, docs/operators.md).
NO_RECIPE = EXEMPTIONS["recipe"]


def _needs_recipe(op: str, mode: str | None = None) -> None:
    """Skip an exempt operator with its reason, and a mode no vector can be made of yet
    (a block-scaled type, TOSA 1.1) with its; any other operator must have a recipe, so a
    new operator cannot arrive as a silent skip."""
    why = unbuildable_reason(SPEC.operator(op).mode(mode)) if mode is not None else None
    if why:
        pytest.skip(f"{op} [{mode}]: {why}")
    if op in NO_RECIPE:
        pytest.skip(f"{op}: no recipe ({NO_RECIPE[op]})")
    assert has_recipe(op), f"{op} has no recipe and no exemption in conformance.sources"


@pytest.mark.parametrize(("op", "mode"), PAIRS)
def test_valid_cases_are_valid(op: str, mode: str) -> None:
    _needs_recipe(op, mode)
    cases = draw_examples(valid_cases(SPEC, op, mode, LEVEL), EXAMPLES, 1)
    assert cases
    for case in cases:
        outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
        assert outcome.kind == "valid", f"{case.describe()}: {outcome}"
        assert case.mode == mode and case.operator == op


@pytest.mark.parametrize(("op", "mode"), PAIRS)
def test_invalid_cases_break_the_rule_they_name(op: str, mode: str) -> None:
    _needs_recipe(op, mode)
    rc = RecipeContext(SPEC, SPEC.operator(op), SPEC.operator(op).mode(mode), LEVEL, Budget())
    for entry in breakers_for(op, rc):
        cases = draw_examples(invalid_cases(SPEC, op, mode, LEVEL, clause=entry.clause), 3, 2)
        # An operator's own breakers must apply; generic ones may not fit every operator
        # (an output shape no input ties) or mode.
        if not entry.optional:
            assert cases, f"{op} [{mode}]: breaker for {entry.clause!r} never applies"
        for case in cases:
            outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
            assert outcome.kind == "error", f"{case.describe()}: {outcome}"
            assert outcome.rule is not None and outcome.rule.clause == case.rule_broken, (
                f"{case.describe()}: reference says {outcome.rule}"
            )

"""Valid cases drawn once per test session, by revision, operator, mode and target."""

from __future__ import annotations

from functools import cache

from conformance.spec import load_revision, spec_in_use
from strategies.case import Case
from strategies.draw import draw_examples
from strategies.shapes import Budget
from strategies.valid import valid_cases

# A long-axis job's budget as generate makes it for two multi-axis data inputs (values,
# indices): room for K past 2**16.
LONG_AXIS = Budget(max_elements=65538, max_dim=2048, min_elements=32769)


@cache
def drawn_cases(
    revision: str, op: str, mode: str, count: int = 12, target: str | None = None
) -> list[Case]:
    """``count`` valid cases of (op, mode) at level 8K (a long-axis target in the
    long-axis job's budget); at least one."""
    spec = load_revision(revision)
    budget = LONG_AXIS if target == "long-axis" else None
    with spec_in_use(spec):
        strategy = valid_cases(spec, op, mode, spec.level("8K"), budget, target=target)
        cases = draw_examples(strategy, count, 5)
    assert cases
    return cases

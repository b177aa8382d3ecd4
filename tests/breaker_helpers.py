"""Shared check of the breakers' contract: every must-fail case a breaker draws makes
the reference raise exactly the ERROR_IF it names."""

from __future__ import annotations

from collections.abc import Iterable

from conformance.spec import Level, Spec
from reference.engine import evaluate
from strategies.draw import draw_examples
from strategies.invalid import BreakerEntry, invalid_cases


def assert_breakers_trip(
    spec: Spec, op: str, mode: str, level: Level, entries: Iterable[BreakerEntry], examples: int = 2
) -> set[str]:
    """Draw ``examples`` cases of each breaker in ``entries`` (an operator's own must
    apply; an optional one may not fit the mode) and check the reference's verdict on
    each; the clauses that some case tripped."""
    seen: set[str] = set()
    for entry in entries:
        cases = draw_examples(
            invalid_cases(spec, op, mode, level, clause=entry.clause), examples, 2
        )
        assert cases or entry.optional, f"{op} [{mode}]: breaker for {entry.clause!r} never applies"
        for case in cases:
            outcome = evaluate(case.graph, case.inputs, spec=spec, level=level)
            assert outcome.kind == "error", f"{case.describe()}: {outcome}"
            assert outcome.rule is not None and outcome.rule.clause == case.rule_broken, (
                f"{case.describe()}: the reference says {outcome.rule}"
            )
            seen.add(entry.clause)
    return seen

"""Mutation score: how many of the injected-bug backends a pack catches.

Each mutant runs only the vectors of the operators it can change (the others would
give the reference's result by construction).  A mutant is *killed* when one of them
fails, *survives* when all pass, and is *not applicable* when the pack has no vector
of its operators.  A mutant whose effect is "compliant behaviour" (a freedom the spec
grants, such as flushing fp16/bf16/fp32 denormals) is no bug: it must *pass*, and a
failing vector is a *false failure* of the pack; neither counts in the score.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from conformance.backends.mutants import catalogue
from conformance.runner import run_pack
from conformance.verdicts import VectorResult


@dataclass
class MutantOutcome:
    name: str
    operators: tuple[str, ...]
    bug: str
    status: str  # "killed" | "survived" | "not applicable" | "passed" | "false failure"
    vectors: int
    killed_by: list[VectorResult]


def mutation_score(
    pack: Path,
    *,
    mutants: str | None = None,
    jobs: int = 1,
    timeout: float = 60.0,
    on_mutant: Callable[[MutantOutcome], None] | None = None,
) -> list[MutantOutcome]:
    from vectors.pack import open_pack

    with open_pack(pack) as opened:
        in_pack = {e.operator for e in opened.entries}
    pattern = re.compile(mutants) if mutants else None
    outcomes = []
    for name, mutant in sorted(catalogue().items()):
        if pattern is not None and not pattern.fullmatch(name):
            continue
        ops = [op for op in mutant.operators if op in in_pack]
        if not ops:
            outcome = MutantOutcome(name, mutant.operators, mutant.bug, "not applicable", 0, [])
        else:
            report = run_pack(pack, f"mutant:{name}", jobs=jobs, timeout=timeout, ops="|".join(ops))
            failed = report.failed
            if mutant.effect == "compliant behaviour":
                status = "false failure" if failed else "passed"
            else:
                status = "killed" if failed else "survived"
            outcome = MutantOutcome(
                name, mutant.operators, mutant.bug, status, len(report.results), failed
            )
        outcomes.append(outcome)
        if on_mutant is not None:
            on_mutant(outcome)
    return outcomes


def score(outcomes: list[MutantOutcome]) -> tuple[int, int]:
    """(killed, applicable)."""
    applicable = [o for o in outcomes if o.status in ("killed", "survived")]
    return sum(o.status == "killed" for o in applicable), len(applicable)

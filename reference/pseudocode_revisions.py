"""Pseudocode rules that changed between spec revisions without a trace in tosa.xml.

Most differences between revisions show in the operators' declarations (an argument
that became an input, a new ``nan_mode`` attribute, an input renamed ``input1``), and
the operators decide from those.  A few are in the pseudocode only, which this project
does not ship: TOSA 1.0 added CLAMP's ERROR_IF on NaN bounds and POW's domain
REQUIREs, gave the logical shifts one shift range per type, dropped INTDIV's own
quotient REQUIRE (apply_intdiv_s keeps it) and spells type tests ``is_same<>()``.

Those rules are keyed by the revisions whose pseudocode predates them, the 2024 draft
alone, so that any later revision (a 1.1 draft) follows TOSA 1.0's without an entry.
"""

from __future__ import annotations

# Revisions (conformance.revisions names) whose pseudocode is the 2024 draft's.  A
# custom tosa.xml of that family is identified as "2024-04-draft" too.
DRAFT_PSEUDOCODE: frozenset[str] = frozenset({"2024-04-draft"})


def draft_pseudocode(revision: str) -> bool:
    """Whether ``revision`` follows the 2024 draft's pseudocode rather than TOSA 1.0's."""
    return revision in DRAFT_PSEUDOCODE


def type_test(revision: str, var: str, name: str, *, negated: bool = False) -> str:
    """A clause's type test as the revision spells it: ``in_t == i32_t`` in the draft,
    ``is_same<in_t,i32_t>()`` from TOSA 1.0."""
    if draft_pseudocode(revision):
        return f"{var} {'!=' if negated else '=='} {name}"
    return f"{'!' if negated else ''}is_same<{var},{name}>()"

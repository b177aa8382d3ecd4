"""Pseudocode rules that changed between spec revisions without a trace in tosa.xml.

Most differences between revisions show in the operators' declarations (an argument
that became an input, a new ``nan_mode`` attribute, an input renamed ``input1``), and
the operators decide from those.  A few are in the pseudocode only, which this project
does not ship: TOSA 1.0 added CLAMP's ERROR_IF on NaN bounds and POW's domain
REQUIREs, gave the logical shifts one shift range per type, dropped INTDIV's own
quotient REQUIRE (apply_intdiv_s keeps it) and spells type tests ``is_same<>()``.

Those rules are keyed by the revisions whose pseudocode predates them, the 2024 draft
alone, so that any later revision (a 1.1 draft) follows TOSA 1.0's without an entry.

TOSA 1.1 changes a few more in the same way, keyed alike by the revisions before it
(PRE_1_1_PSEUDOCODE), so that a revision after 1.1 follows 1.1: apply_add_s and
apply_sub_s state their REQUIREs as sign tests on the operands rather than a range
test on a wider sum (the same set of cases for i8..i32, the exact one for i64);
apply_intdiv_s adds REQUIRE(!(a == INT64_MIN && b == -1)); ARITHMETIC_RIGHT_SHIFT's
``round`` gains ERROR_IF(round && !PRO-INT); and isNaN() is spelt is_a_NaN().
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conformance.operator_table import OperatorTable

# Revisions (conformance.revisions names) whose pseudocode is the 2024 draft's.  A
# custom tosa.xml of that family is identified as "2024-04-draft" too.
DRAFT_PSEUDOCODE: frozenset[str] = frozenset({"2024-04-draft"})


def draft_pseudocode(revision: str) -> bool:
    """Whether ``revision`` follows the 2024 draft's pseudocode rather than TOSA 1.0's."""
    return revision in DRAFT_PSEUDOCODE


# Revisions whose pseudocode predates TOSA 1.1's (the 2024 draft's and TOSA 1.0's).
PRE_1_1_PSEUDOCODE: frozenset[str] = DRAFT_PSEUDOCODE | {"1.0"}


def pseudocode_1_1(revision: str) -> bool:
    """Whether ``revision`` follows TOSA 1.1's pseudocode where it differs from 1.0's."""
    return revision not in PRE_1_1_PSEUDOCODE


# Attributes whose true value a TOSA 1.1 ERROR_IF allows only to an implementation of
# a profile: ARITHMETIC_RIGHT_SHIFT's ERROR_IF(round && !PRO-INT).  The reference
# implements every profile, so for it the clause never fires; a case that sets the
# attribute is valid for an implementation of the profile only, so its vector needs the
# profile besides its mode's requirements (conformance.vectorize reads this table).
PROFILE_GATED_ATTRIBUTES: OperatorTable[tuple[tuple[str, str], ...]] = OperatorTable(
    {
        "ARITHMETIC_RIGHT_SHIFT": (("round", "PRO-INT"),),
    }
)


def profiles_needed(revision: str, operator: str, attributes: Mapping[str, Any]) -> frozenset[str]:
    """The profiles an operator with these attributes needs under ``revision``'s
    pseudocode beyond its mode's requirements (one of them: they are alternatives)."""
    if not pseudocode_1_1(revision):
        return frozenset()
    return frozenset(
        profile
        for name, profile in PROFILE_GATED_ATTRIBUTES.get(operator, ())
        if bool(attributes.get(name, False))
    )


def type_test(revision: str, var: str, name: str, *, negated: bool = False) -> str:
    """A clause's type test as the revision spells it: ``in_t == i32_t`` in the draft,
    ``is_same<in_t,i32_t>()`` from TOSA 1.0."""
    if draft_pseudocode(revision):
        return f"{var} {'!=' if negated else '=='} {name}"
    return f"{'!' if negated else ''}is_same<{var},{name}>()"

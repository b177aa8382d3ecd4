"""The shared assertion of tests/reference_helpers.py fails where it should."""

import pytest
from reference_helpers import assert_rule

from reference.outcome import Outcome, Rule

ERR = Outcome("error", rule=Rule("ERROR_IF", "ADD", "shift < 0", "shift=-1"))
REQ = Outcome("unpredictable", rule=Rule("REQUIRE", "ADD", "c <= maximum_s<in_t>()"))


def test_accepts_the_exact_rule() -> None:
    assert_rule(ERR, "error", "shift < 0", "shift=-1")
    assert_rule(ERR, "ERROR_IF", "shift < 0")
    assert_rule(REQ, "unpredictable", "c <= maximum_s<in_t>()")
    assert_rule(REQ, "REQUIRE", "c <= maximum_s<in_t>()")


@pytest.mark.parametrize(
    ("outcome", "kind", "clause", "detail"),
    [
        (ERR, "unpredictable", "shift < 0", ""),  # wrong outcome
        (ERR, "error", "shift <", ""),  # part of the clause is not the clause
        (ERR, "error", "shift < 0", "shift=-2"),  # wrong detail
        (REQ, "LEVEL_CHECK", "c <= maximum_s<in_t>()", ""),  # wrong rule kind
        (Outcome("valid"), "error", "shift < 0", ""),
    ],
)
def test_rejects_anything_else(outcome: Outcome, kind: str, clause: str, detail: str) -> None:
    with pytest.raises(AssertionError):
        assert_rule(outcome, kind, clause, detail)


def test_unknown_kind_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown outcome or rule kind"):
        assert_rule(ERR, "wrong", "shift < 0")

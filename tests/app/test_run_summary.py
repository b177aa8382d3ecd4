"""What ``run`` prints: the skip reasons reach the console, most common first."""

from __future__ import annotations

from conformance.run_summary import SHOWN_REASONS, summary_lines
from conformance.verdicts import PASSED, SKIPPED, RunReport, VectorResult


def _result(name: str, verdict: str, detail: str = "") -> VectorResult:
    return VectorResult(name, "ADD", "fp32", "valid", verdict, detail)


def test_skip_reasons_are_printed_with_their_counts() -> None:
    results = [
        _result("a", SKIPPED, "prog declined: only ADD"),
        _result("b", SKIPPED, "manifest m does not claim SUB [fp32]"),
        _result("c", SKIPPED, "prog declined: only ADD"),
        _result("d", PASSED),
    ]
    lines = list(summary_lines(RunReport(results, 0, 1.0)))
    start = lines.index("3 skipped vectors, by reason:")
    assert lines[start + 1 : start + 3] == [
        "  2 x prog declined: only ADD",
        "  1 x manifest m does not claim SUB [fp32]",
    ]


def test_many_reasons_are_cut_with_the_count_left_out() -> None:
    results = [_result(f"v{k}", SKIPPED, f"reason {k:02d}") for k in range(SHOWN_REASONS + 3)]
    lines = list(summary_lines(RunReport(results, 0, 1.0)))
    assert "  ... and 3 more reasons (see the JSON report)" in lines


def test_no_skips_no_section() -> None:
    lines = list(summary_lines(RunReport([_result("d", PASSED)], 0, 1.0)))
    assert not any("skipped vectors" in line for line in lines)

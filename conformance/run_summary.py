"""What a run reports: the console summary and the JUnit XML file.

JUnit follows the schema CI servers read (Jenkins, GitLab, GitHub annotations): a
wrong result is a ``<failure>``; a crash or a timeout is an ``<error>`` (the backend
did not produce a verdict at all); skipped and level vectors are ``<skipped>``, as is
a known failure (``xfail``), with its reason.  Totals, a timestamp and durations are
on every suite, and the backend's log is the case's ``<system-out>``.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable
from pathlib import Path

from conformance.atomic_file import write_files
from conformance.rejudge import PLAIN
from conformance.verdicts import (
    CRASHED,
    ERROR_EXPECTED,
    FAILED,
    INFO,
    PASSED,
    SKIPPED,
    TIMEOUT,
    XFAIL,
    XPASS,
    RunReport,
    VectorResult,
)

ERRORS = frozenset({CRASHED, TIMEOUT})  # no verdict from the backend: JUnit <error>
COLUMNS = (PASSED, FAILED, ERROR_EXPECTED, CRASHED, TIMEOUT, XFAIL, XPASS, SKIPPED, INFO)


def summary_lines(report: RunReport) -> Iterable[str]:
    """A table by operator and mode, then the failures, then the totals."""
    groups: dict[tuple[str, str], dict[str, int]] = {}
    for r in report.results:
        g = groups.setdefault((r.operator, r.mode), {})
        g[r.verdict] = g.get(r.verdict, 0) + 1
    used = [c for c in COLUMNS if any(c in g for g in groups.values())]
    header = ["operator", "mode", *used]
    rows = [[op, mode, *(str(g.get(c, 0)) for c in used)] for (op, mode), g in groups.items()]
    widths = [max(len(x) for x in col) for col in zip(header, *rows, strict=True)]
    yield "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()
    for row in rows:
        yield "  ".join(x.ljust(w) for x, w in zip(row, widths, strict=True)).rstrip()
    failures = report.failed
    if failures:
        yield ""
        yield f"{len(failures)} failing vectors:"
        for r in failures[:50]:
            yield f"  {_named(r)}: {r.verdict}: {r.detail[:300]}"
        if len(failures) > 50:
            yield f"  ... and {len(failures) - 50} more (see the JSON report)"
    known = [r for r in report.results if r.verdict in (XFAIL, XPASS)]
    if known:
        yield ""
        yield f"{len(known)} known failures (--known-failures):"
        for r in known[:50]:
            yield f"  {_named(r)}: {r.verdict} ({r.known_failure}): {r.detail[:300]}"
        if len(known) > 50:
            yield f"  ... and {len(known) - 50} more (see the JSON report)"
    yield from _skip_reasons(report.results)
    second: dict[str, int] = {}
    for r in report.results:
        if r.reading != PLAIN and not r.failed:
            second[r.reading] = second.get(r.reading, 0) + 1
    if second:
        shown = ", ".join(f"{k} {n}" for k, n in sorted(second.items()))
        yield ""
        yield f"passed under a second reading (docs/compliance.md): {shown}"
    counts = report.counts()
    total = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    resumed = f" ({report.resumed} from the earlier run)" if report.resumed else ""
    yield ""
    yield f"{len(report.results)} vectors{resumed}: {total} in {report.seconds:.1f} s"


SHOWN_REASONS = 10


def _skip_reasons(results: list[VectorResult]) -> Iterable[str]:
    """Why vectors were skipped, most common first: a skip is never a pass, so the
    console says what it was (the backend declined, the manifest or the claim left it
    out) and not only how many."""
    reasons: dict[str, int] = {}
    for r in results:
        if r.verdict == SKIPPED:
            reasons[r.detail] = reasons.get(r.detail, 0) + 1
    if not reasons:
        return
    ranked = sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))
    yield ""
    yield f"{sum(reasons.values())} skipped vectors, by reason:"
    for reason, n in ranked[:SHOWN_REASONS]:
        yield f"  {n} x {reason[:300] or 'no reason given'}"
    if len(ranked) > SHOWN_REASONS:
        yield f"  ... and {len(ranked) - SHOWN_REASONS} more reasons (see the JSON report)"


def _named(r: VectorResult) -> str:
    """A vector's name, with its operators when it is a chain (a chain's failure is
    the chain's, not its last operator's)."""
    return f"{r.vector} (chain {r.chain_path})" if r.chain else r.vector


def _totals(results: list[VectorResult]) -> dict[str, str]:
    return {
        "tests": str(len(results)),
        "failures": str(sum(r.failed and r.verdict not in ERRORS for r in results)),
        "errors": str(sum(r.verdict in ERRORS for r in results)),
        "skipped": str(sum(r.verdict in (SKIPPED, INFO, XFAIL) for r in results)),
        "time": f"{sum(r.seconds for r in results):.3f}",
    }


def write_junit(report: RunReport, path: Path, backend: str) -> None:
    """JUnit XML: one test suite per operator, one test case per vector."""
    from xml.etree import ElementTree as ET

    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%S")
    root = ET.Element("testsuites", name=f"tosa-conformance on {backend}")
    root.attrib.update(_totals(report.results))
    root.set("time", f"{report.seconds:.3f}")  # the run's wall time, not the sum
    root.set("timestamp", stamp)
    by_op: dict[str, list[VectorResult]] = {}
    for r in report.results:
        by_op.setdefault(r.operator, []).append(r)
    for op, results in by_op.items():
        suite = ET.SubElement(root, "testsuite", name=op, timestamp=stamp)
        suite.attrib.update(_totals(results))
        for r in results:
            case = ET.SubElement(suite, "testcase", classname=f"{op}.{r.mode}", name=r.vector)
            case.set("time", f"{r.seconds:.3f}")
            if r.chain:  # the chain's operators, for whoever files the bug
                ET.SubElement(case, "properties").append(
                    ET.Element("property", name="tosa_chain", value=r.chain_path)
                )
            detail = f"chain {r.chain_path}: {r.detail}" if r.chain else r.detail
            if r.verdict in ERRORS:
                ET.SubElement(case, "error", type=r.verdict, message=detail[:500]).text = detail
            elif r.failed:
                ET.SubElement(case, "failure", type=r.verdict, message=detail[:500]).text = detail
            elif r.verdict in (SKIPPED, INFO, XFAIL):
                ET.SubElement(case, "skipped", type=r.verdict, message=r.detail[:500])
            elif r.verdict == XPASS:
                props = case.find("properties")
                if props is None:
                    props = ET.SubElement(case, "properties")
                props.append(ET.Element("property", name="tosa_verdict", value=XPASS))
            if r.log:
                ET.SubElement(case, "system-out").text = r.log
    # Whole or not at all (conformance.atomic_file): CI reads it after every run.
    data = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    write_files({Path(path): data})

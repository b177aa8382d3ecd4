"""Human reports of a certification: Markdown and a self-contained HTML page.

Both show the coverage matrix (operators x modes, by status), the failures with a
one-line command that reproduces each, and a histogram of the bound margin each
operator used, so that a backend that only just passes is visible.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable

from conformance.certify import Certificate, PairResult

COLOURS = {"met": "#2e7d32", "failed": "#c62828", "not met": "#ef6c00", "not testable": "#757575"}
BINS = [0.0, 0.25, 0.5, 0.75, 0.9, 1.0]  # margin histogram edges (1 = the whole bound)


def _bin(margin: float) -> int:
    for i in range(len(BINS) - 1, -1, -1):
        if margin >= BINS[i]:
            return i
    return 0


def margin_histograms(cert: Certificate, margins: dict[str, list[float]]) -> dict[str, list[int]]:
    out = {}
    for op, values in margins.items():
        counts = [0] * len(BINS)
        for m in values:
            if m is not None and math.isfinite(m):
                counts[_bin(m)] += 1
        out[op] = counts
    return out


def _bin_labels() -> list[str]:
    labels = []
    for i, lo in enumerate(BINS):
        hi = BINS[i + 1] if i + 1 < len(BINS) else None
        labels.append(f"{lo:g}-{hi:g}" if hi is not None else f">= {lo:g}")
    return labels


def repro(cert: Certificate, pack: str, vector: str, operator: str) -> str:
    return (
        f"tosa-conformance run --pack {pack} --backend {cert.backend} --ops {operator} "
        f"--vectors {vector} --jobs 1"
    )


def markdown(cert: Certificate, pack: str, margins: dict[str, list[float]]) -> str:
    lines = [
        f"# TOSA conformance: {cert.backend}",
        "",
        f"**Verdict: {'PASS' if cert.passed else 'FAIL'}** for {cert.claim.describe()}",
        "",
        f"- spec: TOSA {cert.spec.version_string} (tosa.xml sha256 `{cert.spec.sha256[:16]}...`)",
        f"- pack: `{pack}` (sha256 `{cert.pack_sha256[:16]}...`)",
        f"- date: {cert.date}",
        "",
        "## Requirements",
        "",
        "| operator | mode | status | run | passed | failed | skipped | worst margin |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for p in cert.pairs:
        margin = "-" if p.worst_margin is None else f"{p.worst_margin:.3g}"
        lines.append(
            f"| {p.operator} | {p.mode} | {p.status} | {p.run} | {p.passed} | {p.failed} | "
            f"{p.skipped} | {margin} |"
        )
    bad = [p for p in cert.pairs if p.status in ("failed", "not met")]
    if bad:
        lines += ["", "## Failures", ""]
        for p in bad:
            if p.status == "not met":
                why = "; ".join(p.skip_reasons) or "no vector ran"
                lines.append(f"- {p.operator} [{p.mode}]: not met: {why}")
            for r in p.failures:
                lines.append(f"- {r.vector}: {r.verdict}: {r.detail[:300]}")
                lines.append(f"  - reproduce: `{repro(cert, pack, r.vector, r.operator)}`")
    hist = margin_histograms(cert, margins)
    if hist:
        labels = _bin_labels()
        lines += ["", "## Bound margins (share of the allowed error used)", ""]
        lines.append("| operator | " + " | ".join(labels) + " |")
        lines.append("|---|" + "---|" * len(labels))
        for op, counts in sorted(hist.items()):
            lines.append(f"| {op} | " + " | ".join(str(c) for c in counts) + " |")
    return "\n".join(lines) + "\n"


def _matrix(
    pairs: Iterable[PairResult],
) -> tuple[list[str], list[str], dict[tuple[str, str], PairResult]]:
    by_key = {(p.operator, p.mode): p for p in pairs}
    ops = list(dict.fromkeys(p.operator for p in by_key.values()))
    modes = list(dict.fromkeys(p.mode for p in by_key.values()))
    return ops, modes, by_key


def html_page(cert: Certificate, pack: str, margins: dict[str, list[float]]) -> str:
    e = html.escape
    ops, modes, by_key = _matrix(cert.pairs)
    verdict = "PASS" if cert.passed else "FAIL"
    colour = COLOURS["met"] if cert.passed else COLOURS["failed"]
    head = "".join(f'<th class="mode"><div>{e(m)}</div></th>' for m in modes)
    rows = []
    for op in ops:
        cells = []
        for m in modes:
            p = by_key.get((op, m))
            if p is None:
                cells.append('<td class="na"></td>')
                continue
            tip = (
                f"{op} [{m}]: {p.status}, {p.passed} passed, {p.failed} failed, {p.skipped} skipped"
            )
            if p.worst_margin is not None:
                tip += f", worst margin {p.worst_margin:.3g}"
            cells.append(
                f'<td style="background:{COLOURS[p.status]}" title="{e(tip)}">'
                f"{p.passed}/{p.run}</td>"
            )
        rows.append(f"<tr><th>{e(op)}</th>{''.join(cells)}</tr>")
    failures = []
    for p in cert.pairs:
        if p.status == "not met":
            why = "; ".join(p.skip_reasons) or "no vector ran"
            failures.append(f"<li><b>{e(p.operator)} [{e(p.mode)}]</b>: not met: {e(why)}</li>")
        for r in p.failures:
            failures.append(
                f"<li><b>{e(r.vector)}</b>: {e(r.verdict)}: {e(r.detail[:400])}"
                f"<br><code>{e(repro(cert, pack, r.vector, r.operator))}</code></li>"
            )
    hist = margin_histograms(cert, margins)
    labels = _bin_labels()
    hist_rows = []
    for op, counts in sorted(hist.items()):
        total = max(1, sum(counts))
        bars = "".join(
            f'<td><div class="bar" style="width:{100 * c / total:.0f}%;'
            f'background:{"#c62828" if i >= len(BINS) - 2 else "#1565c0"}"></div>{c}</td>'
            for i, c in enumerate(counts)
        )
        hist_rows.append(f"<tr><th>{e(op)}</th>{bars}</tr>")
    summary = cert.to_json()["summary"]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>TOSA conformance: {e(cert.backend)}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; color: #222; }}
.verdict {{ font-size: 1.6em; font-weight: bold; color: {colour}; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
td, th {{ border: 1px solid #ccc; padding: 2px 6px; font-size: 12px; }}
td {{ color: white; text-align: center; }}
td.na {{ background: #eee; }}
th.mode {{ height: 140px; white-space: nowrap; vertical-align: bottom; }}
th.mode div {{ transform: rotate(-60deg); width: 24px; }}
.hist td {{ color: #222; text-align: left; min-width: 90px; }}
.bar {{ height: 10px; display: inline-block; margin-right: 4px; }}
.legend span {{ padding: 2px 8px; color: white; margin-right: 6px; }}
code {{ font-size: 11px; }}
</style></head><body>
<h1>TOSA conformance: {e(cert.backend)}</h1>
<p class="verdict">{verdict}</p>
<p>Claim: {e(cert.claim.describe())}<br>
Spec: TOSA {e(cert.spec.version_string)}, tosa.xml sha256 <code>{e(cert.spec.sha256)}</code><br>
Pack: <code>{e(pack)}</code>, sha256 <code>{e(cert.pack_sha256)}</code><br>
Date: {e(cert.date)}<br>
Requirements: {summary["required"]} (operator, mode) pairs: {summary["met"]} met,
{summary["failed"]} failed, {summary["not_met"]} not met</p>
<p class="legend"><span style="background:{COLOURS["met"]}">met</span>
<span style="background:{COLOURS["failed"]}">failed</span>
<span style="background:{COLOURS["not met"]}">not met</span>
<span style="background:{COLOURS["not testable"]}">not testable</span>
(cells: valid vectors passed / vectors run)</p>
<h2>Coverage matrix</h2>
<table><tr><th>operator</th>{head}</tr>{"".join(rows)}</table>
<h2>Failures</h2>
<ul>{"".join(failures) or "<li>none</li>"}</ul>
<h2>Bound margins</h2>
<p>How much of its allowed error each passing output used (1 = the whole bound).</p>
<table class="hist"><tr><th>operator</th>{"".join(f"<th>{e(x)}</th>" for x in labels)}</tr>
{"".join(hist_rows)}</table>
</body></html>
"""

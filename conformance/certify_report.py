"""Human reports of a certification: Markdown and a self-contained HTML page.

The coverage matrix is grouped per operator: one row per operator with a cell for each
of its modes, so it fits a 1,400 px window however many modes the spec has (a grid of
operators x every mode of the spec is mostly empty and scrolls sideways).  A cell says
"n of m passed" and its state in words and colour; n and m count the vectors of every
kind, as ``tosa-conformance run`` does.  The failures come with the command that
reproduces each.  Margin charts (matplotlib, embedded as PNG) are drawn only for the
pairs where a margin means something: floating-point modes whose outputs used some of
their bound; exact and integer modes always use none.
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Iterable

from conformance.capabilities.report import subset_html, subset_markdown
from conformance.certify import Certificate, ChainFailure, PairResult, not_met_reason
from conformance.revisions import pinned
from conformance.verdicts import VectorResult

# Each state's colour is also its text's: all meet WCAG AA (4.5:1) on the page's white,
# the cells' #fafafa and the failing cells' FAIL_BACKGROUND (tests/app/test_certify_report.py).
COLOURS = {
    "met": "#1b5e20",
    "failed": "#c62828",
    "known failure": "#8e24aa",
    "not met": "#a84300",
    "not testable": "#616161",
    "not claimed": "#546e7a",  # outside a capability manifest (conformance.capabilities)
}
FAIL_BACKGROUND = "#fdecea"
BACKGROUNDS = ("#ffffff", "#fafafa", FAIL_BACKGROUND)
MARK = {"met": "✓", "failed": "✗", "known failure": "✗", "not met": "–", "not testable": "·"}
MARK["not claimed"] = "○"
BINS = [0.0, 0.25, 0.5, 0.75, 0.9, 1.0]  # margin histogram edges (1 = the whole bound)

Margins = dict[tuple[str, str], list[float]]  # (operator, mode) -> margins of passing vectors
# The failing vectors' margins are drawn past the bound: past CHART_EDGE (an infinite or
# unknown one, a NaN where a number was due) at the edge itself.
CHART_EDGE = 1.1


def _bin(margin: float) -> int:
    for i in range(len(BINS) - 1, -1, -1):
        if margin >= BINS[i]:
            return i
    return 0


def _bin_labels() -> list[str]:
    labels = []
    for i, lo in enumerate(BINS):
        hi = BINS[i + 1] if i + 1 < len(BINS) else None
        labels.append(f"{lo:g}-{hi:g}" if hi is not None else f">= {lo:g}")
    return labels


def float_pairs(cert: Certificate) -> set[tuple[str, str]]:
    """The claim's pairs that bind a floating-point type."""
    from conformance.dtypes import dtype

    out = set()
    for m in cert.spec.modes():
        for name in m.bindings.values():
            try:
                if dtype(name).is_float:
                    out.add(m.key)
                    break
            except (KeyError, ValueError):
                continue  # a size binding such as TABLE_SIZE
    return out


def meaningful_margins(
    cert: Certificate, margins: Margins, failing: Margins | None = None
) -> Margins:
    """The pairs worth a margin chart: float modes whose vectors used some bound, or
    that have a failing vector (which must show, not vanish from the chart)."""
    floats = float_pairs(cert)
    bad = failing or {}
    keys = sorted(set(margins) | set(bad))
    return {
        k: [m for m in margins.get(k, []) if m is not None and math.isfinite(m)]
        for k in keys
        if k in floats
        and (bad.get(k) or any(m is not None and math.isfinite(m) and m > 0 for m in margins[k]))
    }


def failing_margins(cert: Certificate) -> Margins:
    """Per pair, the margin of each failing valid vector (inf where it has none: a
    mismatch of exact outputs, a NaN or a wrong shape)."""
    out: Margins = {}
    for p in cert.pairs:
        for r in p.failures:
            if r.kind == "valid":
                m = r.margin if r.margin is not None else math.inf
                out.setdefault((p.operator, p.mode), []).append(m)
    return out


def anchor(operator: str, mode: str) -> str:
    """The HTML id of a pair's failures ("fail-EXP-fp32")."""
    slug = "".join(c if c.isalnum() else "-" for c in f"{operator}-{mode}")
    return f"fail-{slug}"


def what_failed(cert: Certificate) -> list[tuple[str, str, str]]:
    """The findings a reader acts on, most important first: (title, detail, anchor) for
    every failing pair, each chain that fails while its operators pass alone, each
    known failure and each pair not met."""

    def pairs(status: str) -> list[PairResult]:
        return [p for p in cert.pairs if p.status == status]

    out = [
        (f"{p.operator} [{p.mode}]", _plural(len(p.failures), "failing vector"), _at(p))
        for p in pairs("failed")
    ]
    out += [(f"fails in a chain: {c.path}", chain_note(c), "chains") for c in cert.chain_findings]
    out += [
        (f"{p.operator} [{p.mode}]", f"known to fail ({len(p.known)} listed)", _at(p))
        for p in pairs("known failure")
    ]
    out += [
        (f"{p.operator} [{p.mode}]", f"not met: {not_met_reason(p)}", _at(p))
        for p in pairs("not met")
    ]
    return out


def _at(p: PairResult) -> str:
    return anchor(p.operator, p.mode)


def _plural(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


def coverage_gaps(cert: Certificate) -> list[str]:
    """The pack's unmet coverage obligations that no rule of the spec forbids
    ("RESCALE [32-bit to 32-bit] result:saturate"): real gaps, not properties."""
    if cert.pack is None:
        return []
    return [f"{pair} {k}" for pair, keys in sorted(cert.pack.unmet.items()) for k in keys]


def margin_histograms(margins: Margins) -> dict[tuple[str, str], list[int]]:
    out = {}
    for key, values in margins.items():
        counts = [0] * len(BINS)
        for m in values:
            counts[_bin(m)] += 1
        out[key] = counts
    return out


def repro(cert: Certificate, pack: str, vector: str, operator: str) -> str:
    return (
        f"tosa-conformance run --pack {pack} --backend {cert.backend} --ops {operator} "
        f"--vectors {vector} --jobs 1"
    )


def _counts_line(counts: dict[str, int]) -> str:
    """The totals line of 'run' (conformance.run_summary), so the two agree."""
    total = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    return f"{sum(counts.values())} vectors: {total}"


def chain_note(c: ChainFailure) -> str:
    """Where a failing chain belongs: under the operators that fail alone too, or, when
    every one passes alone, a finding of its own (the graph is compiled wrong)."""
    if c.alone:
        return f"listed under {', '.join(c.alone)}, which fail alone too"
    return "every operator passes alone: the graph is compiled wrong"


def markdown(
    cert: Certificate, pack: str, margins: Margins, counts: dict[str, int] | None = None
) -> str:
    lines = [
        f"# TOSA conformance: {cert.backend}",
        "",
        f"**Verdict: {cert.headline()}** for {cert.claim.describe()}",
        "",
        f"- spec: TOSA {cert.spec.version_string}, revision {pinned(cert.spec.revision)} "
        f"(tosa.xml sha256 `{cert.spec.sha256[:16]}...`)",
        f"- pack: `{pack}` (sha256 `{cert.pack_sha256[:16]}...`)",
        f"- date: {cert.date}",
    ]
    if cert.source and cert.source.get("kind") == "results files":
        files = cert.source["files"]
        shown = ", ".join(f"`{f['path']}` (sha256 `{f['sha256'][:16]}...`)" for f in files)
        lines.append(f"- verdicts: read from {shown}; this certificate did not run the backend")
    if counts:
        lines.append(f"- {_counts_line(counts)}")
    found = what_failed(cert)
    lines += ["", "## What failed", ""]
    lines += [f"- **{title}**: {detail}" for title, detail, _ in found] or ["Nothing."]
    gaps = coverage_gaps(cert)
    if gaps:
        lines += [
            "",
            f"Coverage gaps: the pack misses {_plural(len(gaps), 'obligation')} that no rule "
            "of the spec forbids, so nothing here tests them:",
            "",
        ]
        lines += [f"- {g}" for g in gaps[:SHOWN_GAPS]]
        if len(gaps) > SHOWN_GAPS:
            lines.append(f"- and {len(gaps) - SHOWN_GAPS} more")
    lines += subset_markdown(cert)
    lines += [
        "",
        "## Requirements",
        "",
        "| operator | mode | status | passed | of | valid passed | failed | skipped | margin |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for p in cert.pairs:
        margin = "-" if p.worst_margin is None else f"{p.worst_margin:.3g}"
        lines.append(
            f"| {p.operator} | {p.mode} | {p.status} | {p.vectors_passed} | {p.run} | "
            f"{p.passed} | {p.failed} | {p.skipped} | {margin} |"
        )
    bad = [p for p in cert.pairs if p.status in ("failed", "known failure", "not met")]
    if bad:
        lines += ["", "## Failures", ""]
        for p in bad:
            if p.status == "not met":
                why = not_met_reason(p)
                lines.append(f"- {p.operator} [{p.mode}]: not met: {why}")
            for r in [*p.failures, *(k for k in p.known if k.verdict == "xfail")]:
                lines.append(f"- {r.vector}: {r.verdict}: {r.detail[:300]}")
                lines.append(f"  - reproduce: `{repro(cert, pack, r.vector, r.operator)}`")
    if cert.chains:
        lines += ["", "## Failures in chains", ""]
        for c in cert.chains:
            r = c.result
            lines.append(f"- fails in a chain: {c.path} ({chain_note(c)}): {r.vector}: {r.verdict}")
            lines.append(f"  - {r.detail[:300]}")
            lines.append(f"  - reproduce: `{repro(cert, pack, r.vector, r.operator)}`")
    failing = failing_margins(cert)
    hist = margin_histograms(meaningful_margins(cert, margins, failing))
    if hist:
        labels = [*_bin_labels(), "failed"]
        lines += ["", "## Bound margins (share of the allowed error used)", ""]
        lines.append("| operator | mode | " + " | ".join(labels) + " |")
        lines.append("|---|---|" + "---|" * len(labels))
        for (op, mode), binned in hist.items():
            cells = [*binned, len(failing.get((op, mode), []))]
            lines.append(f"| {op} | {mode} | " + " | ".join(str(x) for x in cells) + " |")
    return "\n".join(lines) + "\n"


def _grouped(pairs: Iterable[PairResult]) -> dict[str, list[PairResult]]:
    out: dict[str, list[PairResult]] = {}
    for p in pairs:
        out.setdefault(p.operator, []).append(p)
    return out


def _mode_labels(pairs: Iterable[PairResult]) -> dict[str, str]:
    """One spelling per mode name: tosa.xml writes both "boolean" and "Boolean"."""
    first: dict[str, str] = {}
    out = {}
    for p in pairs:
        out[p.mode] = first.setdefault(p.mode.casefold(), p.mode)
    return out


def margin_chart(margins: Margins, failing: Margins | None = None) -> str | None:
    """A PNG (base64) of each pair's margins: a dot per passing vector, a bar to the
    worst, a red cross per failing vector past the bound (at CHART_EDGE when it has no
    finite margin); None without matplotlib or without a pair worth charting."""
    if not margins:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display: CI and headless machines
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    bad = failing or {}
    keys = list(margins)
    fig, ax = plt.subplots(figsize=(9, 0.8 + 0.26 * len(keys)), dpi=100)
    for y, key in enumerate(keys):
        values = margins[key]
        if values:
            ax.barh(y, max(values), color="#90caf9", height=0.6)
            ax.plot(values, [y] * len(values), "|", color="#0d47a1", markersize=9)
        worse = [min(m, CHART_EDGE) if math.isfinite(m) else CHART_EDGE for m in bad.get(key, [])]
        if worse:
            ax.plot(worse, [y] * len(worse), "x", color=COLOURS["failed"], markersize=7)
    ax.axvline(1.0, color="#c62828", linewidth=1)
    ax.set_yticks(range(len(keys)), [f"{op} [{mode}]" for op, mode in keys], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, CHART_EDGE + 0.03)
    ax.set_xlabel(
        "share of the allowed error used (1 = the whole bound; | a vector, x a failing one)"
    )
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _cell(p: PairResult, label: str) -> str:
    e = html.escape
    tip = (
        f"{p.operator} [{p.mode}]: {p.status}; {p.vectors_passed} of {p.run} vectors passed "
        f"({p.passed} valid), {p.failed} failed, {p.skipped} skipped"
    )
    if p.worst_margin is not None:
        tip += f", worst margin {p.worst_margin:.3g}"
    cls = p.status.replace(" ", "-")
    inner = (
        f'<span class="mode">{e(label)}</span>'
        f'<span class="state">{MARK[p.status]} {e(p.status)}</span>'
        f'<span class="count">{p.vectors_passed} of {p.run} passed</span>'
    )
    if p.status in ("failed", "known failure", "not met"):  # to its failures
        return f'<a class="cell {cls}" title="{e(tip)}" href="#{_at(p)}">{inner}</a>'
    return f'<div class="cell {cls}" title="{e(tip)}">{inner}</div>'


def _matrix(cert: Certificate) -> tuple[list[str], str]:
    """The coverage matrix's rows, and a note.  A subset certificate shows only the
    pairs its manifest claims: the others are listed under "Claimed subset", not drawn
    as grey cells among which the claimed ones would be lost."""
    e = html.escape
    shown = cert.pairs
    note = ""
    if cert.capabilities is not None:
        shown = [p for p in cert.pairs if p.status != "not claimed"]
        left = len(cert.pairs) - len(shown)
        note = (
            f"<p>The manifest's {len(shown)} claimed pairs; the {left} it does not claim "
            "are listed under Claimed subset.</p>"
        )
    labels = _mode_labels(shown)
    rows = [
        f'<tr><th class="op">{e(op)}</th><td>{"".join(_cell(p, labels[p.mode]) for p in ps)}'
        "</td></tr>"
        for op, ps in _grouped(shown).items()
    ]
    return rows, note


def _failures_html(cert: Certificate, pack: str) -> str:
    """Per failing, known-failing or unmet pair, under its anchor: each failure with
    its detail and the command that reproduces it; then the chains."""
    e = html.escape

    def item(r: VectorResult) -> str:
        chain = f" (chain {e(r.chain_path)})" if r.chain else ""
        return (
            f"<li><b>{e(r.vector)}</b>{chain}: {e(r.verdict)}: {e(r.detail[:400])}"
            f"<br><code>{e(repro(cert, pack, r.vector, r.operator))}</code></li>"
        )

    parts = []
    for p in cert.pairs:
        if p.status not in ("failed", "known failure", "not met"):
            continue
        items = [item(r) for r in [*p.failures, *(k for k in p.known if k.verdict == "xfail")]]
        if p.status == "not met":
            items.insert(0, f"<li>not met: {e(not_met_reason(p))}</li>")
        parts.append(
            f'<h3 id="{_at(p)}">{e(p.operator)} [{e(p.mode)}]: {e(p.status)}</h3>'
            f"<ul>{''.join(items)}</ul>"
        )
    if cert.chains:
        chains = "".join(
            f"<li><b>fails in a chain: {e(c.path)}</b> ({e(chain_note(c))}): "
            f"{e(c.result.vector)}: {e(c.result.verdict)}: {e(c.result.detail[:400])}"
            f"<br><code>{e(repro(cert, pack, c.result.vector, c.result.operator))}</code></li>"
            for c in cert.chains
        )
        parts.append(f'<h3 id="chains">Failures in chains</h3><ul>{chains}</ul>')
    return "".join(parts) or "<p>none</p>"


def _summary_html(cert: Certificate) -> str:
    """What failed, at the top: each finding linking to its failures; the real gaps of
    the pack's coverage."""
    e = html.escape
    found = what_failed(cert)
    if found:
        items = "".join(
            f'<li><a href="#{e(at)}"><b>{e(title)}</b></a>: {e(detail)}</li>'
            for title, detail, at in found
        )
        out = f'<section id="what-failed"><h2>What failed</h2><ul>{items}</ul></section>'
    else:
        out = '<section id="what-failed"><h2>What failed</h2><p>Nothing.</p></section>'
    gaps = coverage_gaps(cert)
    if gaps:
        shown = "".join(f"<li>{e(g)}</li>" for g in gaps[:SHOWN_GAPS])
        more = f"<li>and {len(gaps) - SHOWN_GAPS} more</li>" if len(gaps) > SHOWN_GAPS else ""
        out += (
            f'<section id="coverage-gaps"><p><b>Coverage gaps</b>: the pack misses '
            f"{_plural(len(gaps), 'obligation')} that no rule of the spec forbids, so "
            f"nothing here tests them:</p><ul>{shown}{more}</ul></section>"
        )
    return out


SHOWN_GAPS = 10  # coverage gaps named at the top of a report


def html_page(
    cert: Certificate,
    pack: str,
    margins: Margins,
    counts: dict[str, int] | None = None,
    failing: Margins | None = None,
) -> str:
    e = html.escape
    rows, matrix_note = _matrix(cert)
    bad = failing_margins(cert) if failing is None else failing
    charted = meaningful_margins(cert, margins, bad)
    png = margin_chart(charted, bad)
    if png is not None:
        chart = f'<img alt="bound margins per pair" src="data:image/png;base64,{png}">'
    elif charted:
        chart = "<p>(matplotlib is not installed: no chart)</p>"
    else:
        chart = "<p>No pair used any of its bound: every output was exact.</p>"
    summary = cert.to_json()["summary"]
    verdict = cert.headline()
    colour = COLOURS["met"] if cert.passed else COLOURS["failed"]
    legend = "".join(
        f'<span class="cell {s.replace(" ", "-")}">{MARK[s]} {e(s)}</span>' for s in COLOURS
    )
    styles = "".join(
        f".{s.replace(' ', '-')} {{ border-left: 6px solid {c}; }}"
        f".{s.replace(' ', '-')} .state {{ color: {c}; }}"
        for s, c in COLOURS.items()
    )
    totals = f"<br>{e(_counts_line(counts))}" if counts else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>TOSA conformance: {e(cert.backend)}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; color: #222; max-width: 1320px; }}
h1 {{ font-size: 1.4em; margin: 0 0 0.3em 0; }}
.verdict {{ font-size: 1.5em; font-weight: bold; color: {colour}; margin: 0.2em 0; }}
#what-failed li {{ margin: 2px 0; }}
table.matrix {{ border-collapse: collapse; width: 100%; }}
table.matrix th.op {{ text-align: left; vertical-align: top; padding: 6px 8px 6px 0;
  white-space: nowrap; font-size: 13px; width: 1%; }}
table.matrix td {{ padding: 3px 0; border-top: 1px solid #e0e0e0; }}
.cell {{ display: inline-flex; flex-direction: column; margin: 2px 4px 2px 0;
  padding: 2px 8px; background: #fafafa; font-size: 12px; min-width: 120px;
  color: #222; text-decoration: none; }}
a.cell:hover {{ outline: 2px solid {COLOURS["failed"]}; }}
.cell .mode {{ font-weight: bold; }}
.cell .state {{ font-weight: bold; }}
{styles}
.failed, .known-failure {{ background: {FAIL_BACKGROUND}; }}
code {{ font-size: 11px; }}
img {{ max-width: 100%; }}
</style></head><body>
<h1>TOSA conformance: {e(cert.backend)}</h1>
<p class="verdict">{e(verdict)}</p>
{_summary_html(cert)}
<p>Claim: {e(cert.claim.describe())}<br>
Spec: TOSA {e(cert.spec.version_string)} (revision {e(pinned(cert.spec.revision))}), tosa.xml sha256
<code>{e(cert.spec.sha256)}</code><br>
Pack: <code>{e(pack)}</code>, sha256 <code>{e(cert.pack_sha256)}</code><br>
Date: {e(cert.date)}<br>
Requirements: {summary["required"]} (operator, mode) pairs: {summary["met"]} met,
{summary["failed"]} failed, {summary.get("known_failure", 0)} known to fail,
{summary["not_met"]} not met{totals}</p>
{subset_html(cert)}
<h2>Failures</h2>
{_failures_html(cert, pack)}
<h2>Coverage matrix</h2>
<p class="legend">{legend}</p>
<p>A cell counts the pair's vectors of every kind (valid and must-fail) as
<code>tosa-conformance run</code> does; a pair is met when all passed. A failing cell
links to its failures.</p>
{matrix_note}
<table class="matrix">{"".join(rows)}</table>
<h2>Bound margins</h2>
<p>How much of its allowed error each output used, for the floating-point pairs whose
outputs used any (exact and integer modes always use none); a red cross is a failing
vector, past the bound.</p>
{chart}
</body></html>
"""

"""The subset section of a certificate's reports: which capability manifest, how many
of the claim's pairs it claims, and the ones it leaves out (conformance.certify_report
places it after the verdict)."""

from __future__ import annotations

import html
from typing import Any


def subset_markdown(cert: Any) -> list[str]:
    subset = cert.subset_json()
    if subset is None:
        return []
    lines = [
        "",
        "## Claimed subset",
        "",
        f"**{subset['verdict']}** of manifest `{subset['name']}` (sha256 "
        f"`{subset['sha256'][:16]}...`): {subset['claimed']} of the claim's "
        f"{subset['required']} required pairs are claimed, {subset['claimed_met']} of them met.",
        "",
        f"Not claimed ({len(subset['unclaimed'])}):",
        "",
    ]
    lines += [f"- {u['operator']} [{u['mode']}]: {u['reason']}" for u in subset["unclaimed"]]
    return lines


def subset_html(cert: Any) -> str:
    subset = cert.subset_json()
    if subset is None:
        return ""
    e = html.escape
    items = "".join(
        f"<li>{e(u['operator'])} [{e(u['mode'])}]: {e(u['reason'])}</li>"
        for u in subset["unclaimed"]
    )
    return (
        f'<h2>Claimed subset</h2><p class="subset"><b>{e(subset["verdict"])}</b> of manifest '
        f"<code>{e(subset['name'])}</code>, sha256 <code>{e(subset['sha256'])}</code>: "
        f"{subset['claimed']} of the claim's {subset['required']} required pairs are claimed, "
        f"{subset['claimed_met']} of them met.</p>"
        f"<details><summary>{len(subset['unclaimed'])} pairs not claimed</summary>"
        f"<ul>{items}</ul></details>"
    )

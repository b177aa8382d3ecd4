"""A revision's operator/mode table as text: one line per concrete mode.

The pinned 1.1 draft keeps this table beside its files
(``conformance/tosa_spec/1.1-draft/modes.txt``); a test compares it with the table
derived from the vendored tosa.xml, so moving the draft to a later commit shows, mode by
mode, what changed (``tosa-conformance --tosa 1.1-draft spec modes -o FILE`` rewrites it).
"""

from __future__ import annotations

from conformance import revisions
from conformance.spec import Spec, TypeSupport

HEADER = "# operator | mode | types | requirements (any of) | version added"


def mode_line(m: TypeSupport) -> str:
    types = " ".join(f"{k}={v}" for k, v in sorted(m.bindings.items()))
    reqs = " / ".join("+".join(sorted(r)) for r in m.requirements)
    return f"{m.operator} | {m.mode} | {types} | {reqs} | {m.version_added}"


def render(spec: Spec) -> str:
    """The table, headed by the revision, its commit and the tosa.xml's sha256."""
    rev = revisions.family(spec.revision)
    commit = rev.commit if rev and rev.commit else "-"
    lines = [
        f"# revision {spec.revision}, commit {commit}, tosa.xml sha256 {spec.sha256}",
        f"# {len(spec.operators)} operators, {len(spec.modes())} modes",
        HEADER,
    ]
    lines += [mode_line(m) for m in spec.modes()]
    return "\n".join(lines) + "\n"

"""What a pack covers, per operator family (tosa.xml's operator groups): the coverage
obligations met, the vectors, and the tensor sizes, read from the pack itself.

Sizes come from each vector's desc.json (the shapes of its inputs and outputs), so the
table describes what a backend will actually run.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from math import prod
from pathlib import Path

from conformance.spec import Spec


@dataclass
class FamilyRow:
    group: str
    pairs: set[tuple[str, str]] = field(default_factory=set)
    vectors: dict[str, int] = field(default_factory=dict)  # kind -> count
    met: int = 0
    obligations: int = 0
    sizes: list[int] = field(default_factory=list)  # largest tensor of each vector
    unmet: list[str] = field(default_factory=list)

    @property
    def median(self) -> int:
        return int(statistics.median(self.sizes)) if self.sizes else 0

    @property
    def largest(self) -> int:
        return max(self.sizes, default=0)


def family_rows(spec: Spec, pack_path: Path) -> tuple[list[FamilyRow], bool]:
    """One row per operator group; and whether the pack records its obligations."""
    from vectors.pack import open_pack

    rows: dict[str, FamilyRow] = {}

    def row(operator: str) -> FamilyRow:
        group = spec.operator(operator).group
        return rows.setdefault(group, FamilyRow(group))

    with open_pack(pack_path) as pack:
        record = pack.coverage
        for e in pack.entries:
            r = row(e.operator)
            r.pairs.add((e.operator, e.mode))
            r.vectors[e.kind] = r.vectors.get(e.kind, 0) + 1
            data = pack.source.read(f"{e.name}/desc.json")
            if data is None:
                continue
            desc = json.loads(data)
            shapes = [t["shape"] for t in desc.get("inputs", []) + desc.get("expected", [])]
            if shapes:
                r.sizes.append(max(prod(s) for s in shapes))
    for c in record or []:
        r = row(c["operator"])
        r.met += len(c["met"])
        r.obligations += len(c["met"]) + len(c["unmet"])
        r.unmet += [f"{c['operator']} [{c['mode']}] {k}" for k in c["unmet"]]
    return sorted(rows.values(), key=lambda r: r.group), record is not None


def markdown_table(rows: Iterable[FamilyRow]) -> str:
    lines = [
        "| family | pairs | obligations met | valid | must-fail | level | median tensor | "
        "largest tensor |",
        "|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.group} | {len(r.pairs)} | {r.met} of {r.obligations} | "
            f"{r.vectors.get('valid', 0)} | {r.vectors.get('error', 0)} | "
            f"{r.vectors.get('level', 0)} | {r.median:,} | {r.largest:,} |"
        )
    return "\n".join(lines) + "\n"

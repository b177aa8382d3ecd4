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
from typing import Any

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


@dataclass
class KindRow:
    """One kind of obligation (the key's first word: value, attr, shape, rewrite,
    boundary, domain ...) over a pack's pairs, or one obligation key of a kind."""

    kind: str
    met: int = 0
    unmet: int = 0
    not_applicable: int = 0


def kind_rows(record: Iterable[dict[str, Any]], kind: str | None = None) -> list[KindRow]:
    """Per kind of obligation (per key of ``kind``, if given): the pairs that meet it,
    that owe it unmet, and for which it does not apply."""
    rows: dict[str, KindRow] = {}

    def row(key: str) -> KindRow | None:
        head = key.split(":", 1)[0]
        if kind is not None and head != kind:
            return None
        name = key if kind is not None else head
        return rows.setdefault(name, KindRow(name))

    for c in record:
        for key in c["met"]:
            if (r := row(key)) is not None:
                r.met += 1
        for key in c["unmet"]:
            if (r := row(key)) is not None:
                r.unmet += 1
        for key in c["not_applicable"]:
            if (r := row(key)) is not None:
                r.not_applicable += 1
    return sorted(rows.values(), key=lambda r: r.kind)


def kind_table(rows: Iterable[KindRow], heading: str = "kind") -> str:
    lines = [f"| {heading} | met | unmet | not applicable |", "|---|--:|--:|--:|"]
    lines += [f"| {r.kind} | {r.met} | {r.unmet} | {r.not_applicable} |" for r in rows]
    return "\n".join(lines) + "\n"


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


@dataclass
class PairComparison:
    """One (operator, mode) of a family in two packs: each pack's vectors and the
    obligations it meets, and the obligations only one of them meets."""

    operator: str
    mode: str
    vectors: tuple[int, int]
    met: tuple[set[str], set[str]]
    obligations: int  # the pair's obligations (from whichever pack records the pair)

    @property
    def only(self) -> tuple[set[str], set[str]]:
        a, b = self.met
        return a - b, b - a


def compare_family(spec: Spec, packs: tuple[Path, Path], family: str) -> list[PairComparison]:
    """Every (operator, mode) of ``family`` (a tosa.xml operator group, matched without
    case) that either pack has a vector or a coverage record of, side by side."""
    from vectors.pack import open_pack

    groups = {op.group.casefold(): op.group for op in spec.operators.values()}
    if family.casefold() not in groups:
        known = ", ".join(sorted(set(groups.values())))
        raise KeyError(f"unknown operator family {family!r}; the families: {known}")
    group = groups[family.casefold()]
    pairs: dict[tuple[str, str], PairComparison] = {}

    def pair(operator: str, mode: str) -> PairComparison:
        return pairs.setdefault(
            (operator, mode), PairComparison(operator, mode, (0, 0), (set(), set()), 0)
        )

    for side, path in enumerate(packs):
        with open_pack(path) as pack:
            for e in pack.entries:
                if spec.operator(e.operator).group == group:
                    p = pair(e.operator, e.mode)
                    counts = list(p.vectors)
                    counts[side] += 1
                    p.vectors = (counts[0], counts[1])
            for c in pack.coverage or []:
                if spec.operator(c["operator"]).group == group:
                    p = pair(c["operator"], c["mode"])
                    p.met[side].update(c["met"])
                    p.obligations = max(p.obligations, len(c["met"]) + len(c["unmet"]))
    return [pairs[k] for k in sorted(pairs)]


def comparison_table(rows: Iterable[PairComparison], names: tuple[str, str]) -> str:
    """The side-by-side table, then each obligation only one pack meets."""
    a, b = names
    lines = [
        f"| operator | mode | obligations | met by {a} | met by {b} | only {a} | only {b} | "
        f"vectors {a} | vectors {b} |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    notes: list[str] = []
    totals = [0, 0, 0, 0, 0, 0, 0]
    for r in rows:
        only_a, only_b = r.only
        cells = [r.obligations, len(r.met[0]), len(r.met[1]), len(only_a), len(only_b)]
        cells += list(r.vectors)
        totals = [t + c for t, c in zip(totals, cells, strict=True)]
        lines.append(f"| {r.operator} | {r.mode} | " + " | ".join(map(str, cells)) + " |")
        notes += [f"  {r.operator} [{r.mode}] only {a}: {k}" for k in sorted(only_a)]
        notes += [f"  {r.operator} [{r.mode}] only {b}: {k}" for k in sorted(only_b)]
    lines.append("| **all** | | " + " | ".join(f"**{t}**" for t in totals) + " |")
    return "\n".join(lines) + "\n" + ("\n" + "\n".join(notes) + "\n" if notes else "")

"""Which vectors of a pack a run takes: operators, names, exclusions, known failures, shards.

Operator names match without regard to case (Arm's lists write ``add``); vector names
and exclusions match fully, as regular expressions, against the vector's name or its
pytest id ``OPERATOR::VECTOR``, so ids copied from pytest's output work as they are.

A known-failures file has one vector name or regular expression per line, optionally
followed by ``# reason``; blank lines and lines that are only a comment are skipped.
A line that matches no vector of the pack is an error: a stale list would otherwise
hide a fixed bug or a typo.  A listed vector that fails is ``xfail``, one that passes is
``xpass``; neither fails the run.

A shard ``K/N`` is a deterministic, cost-balanced part of the selection: vectors are
dealt out costliest first, each to the shard with the least cost so far, ties to the
lowest shard and the vectors in name order.  A vector's cost is a fixed overhead (a
backend's per-vector work: loading, compiling, a process) plus the bytes of its input
files (the work in proportion to the data); the overhead counts as 64 KiB of input,
so a 65,536-element vector weighs a few ordinary ones, not the whole pack.  Shards
are disjoint and together are the whole selection, whatever machine computes them.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.errors import ConformanceError

# Verdicts of vectors listed as known failures (conformance.runner re-exports them).
XFAIL = "xfail"
XPASS = "xpass"


class SelectionError(ConformanceError, ValueError):
    """A selection option or file is unusable; one line naming the option or the file."""


class NoVectors(SelectionError):
    """The selection holds no vector (exit status 5, as pytest's "no tests collected")."""


def compile_option(flag: str, value: str, flags: int = 0) -> re.Pattern[str]:
    try:
        return re.compile(value, flags)
    except re.error as exc:
        raise SelectionError(f"{flag} {value!r} is not a regular expression: {exc}") from None


def _names_of(entry: Any) -> tuple[str, str]:
    return entry.name, f"{entry.operator}::{entry.name}"


def _matches(pattern: re.Pattern[str], entry: Any) -> bool:
    return any(pattern.fullmatch(n) for n in _names_of(entry))


@dataclass(frozen=True)
class KnownFailure:
    pattern: re.Pattern[str]
    reason: str
    line: int


class KnownFailures:
    """A parsed known-failures file; :meth:`reason` says why a vector is listed."""

    def __init__(self, path: Path, items: list[KnownFailure]) -> None:
        self.path = path
        self.items = items

    @classmethod
    def read(cls, path: Path) -> KnownFailures:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SelectionError(f"{path}: cannot read the known-failures file: {exc}") from None
        items = []
        for number, raw in enumerate(text.splitlines(), 1):
            body, _, reason = raw.partition("#")
            body = body.strip()
            if not body:
                continue
            try:
                pattern = re.compile(body)
            except re.error as exc:
                raise SelectionError(
                    f"{path}:{number}: {body!r} is not a vector name or regular expression: {exc}"
                ) from None
            items.append(KnownFailure(pattern, reason.strip(), number))
        return cls(path, items)

    def check(self, entries: Iterable[Any], where: str) -> None:
        """Refuse a line that matches no vector of ``entries`` (the pack at ``where``)."""
        listed = list(entries)
        for item in self.items:
            if not any(_matches(item.pattern, e) for e in listed):
                raise SelectionError(
                    f"{self.path}:{item.line}: {item.pattern.pattern!r} matches no vector "
                    f"of {where}"
                )

    def reason(self, entry: Any) -> str | None:
        """Why the vector is a known failure ("" when the line gives no reason), or None."""
        for item in self.items:
            if _matches(item.pattern, entry):
                return item.reason
        return None


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based, as the user writes it
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
        if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
            raise SelectionError(f"--shard {text!r} is not K/N with 1 <= K <= N, e.g. 2/3")
        return cls(int(m.group(1)), int(m.group(2)))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def take(self, names: Sequence[str], cost: dict[str, int]) -> list[str]:
        """This shard's names, in the order given."""
        loads = [0] * self.count
        mine: set[str] = set()
        for name in sorted(names, key=lambda n: (-cost.get(n, 0), n)):
            k = min(range(self.count), key=lambda i: (loads[i], i))
            loads[k] += max(1, cost.get(name, 0))
            if k == self.index - 1:
                mine.add(name)
        return [n for n in names if n in mine]


OVERHEAD_BYTES = 65536  # a vector's fixed cost, in bytes of input (see the docstring)


def vector_costs(pack: Any) -> dict[str, int]:
    """Per vector, OVERHEAD_BYTES plus the bytes of its input files (its graph when it
    has none), from the pack's folder or zip directory, without reading the files."""
    source = pack.source
    sizes: dict[str, int] = {}
    members = getattr(source, "members", None)  # a zipped pack: name -> ZipInfo
    root = getattr(source, "root", None)  # a folder pack
    for e in pack.entries:
        files = [f for f in e.files if f.startswith("input-")] or sorted(e.files)
        total = OVERHEAD_BYTES
        for f in files:
            rel = f"{e.name}/{f}"
            if members is not None and rel in members:
                total += members[rel].file_size
            elif root is not None:
                # A damaged pack fails at that vector, not here.
                with contextlib.suppress(OSError):
                    total += (Path(root) / rel).stat().st_size
        sizes[e.name] = total
    return sizes


@dataclass
class Selection:
    """The options that choose vectors; empty options choose everything."""

    ops: str | None = None
    vectors: str | None = None
    exclude: str | None = None
    known: KnownFailures | None = None
    shard: Shard | None = None

    def describe(self) -> str:
        parts = [
            f"{flag} {value!r}"
            for flag, value in (
                ("--ops", self.ops),
                ("--vectors", self.vectors),
                ("--exclude", self.exclude),
            )
            if value
        ]
        if self.shard is not None:
            parts.append(f"--shard {self.shard}")
        return " ".join(parts) or "the selection"

    def select(self, pack: Any) -> list[str]:
        """The selected vector names of an open pack, in pack order; NoVectors when none."""
        entries = list(pack.entries)
        if self.known is not None:
            self.known.check(entries, str(pack.path))
        ops = compile_option("--ops", self.ops, re.IGNORECASE) if self.ops else None
        by_name = compile_option("--vectors", self.vectors) if self.vectors else None
        skip = compile_option("--exclude", self.exclude) if self.exclude else None
        names = [
            e.name
            for e in entries
            if (ops is None or ops.fullmatch(e.operator))
            and (by_name is None or _matches(by_name, e))
            and (skip is None or not _matches(skip, e))
        ]
        if self.shard is not None and names:
            names = self.shard.take(names, vector_costs(pack))
        if not names:
            raise NoVectors(f"{self.describe()} selects no vector of {pack.path}")
        return names

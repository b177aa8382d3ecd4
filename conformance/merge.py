"""Merge the JSON-lines results of the shards of one run (``run --shard K/N``).

Results merge only when they come from the same pack and the same backend: the
header each results file starts with names both (conformance.results_file), and a
file without one, or with another pack or backend, is refused, naming the file.  A
vector is in at most one file: shards are disjoint, so a vector twice means two runs
were mixed up.  The merged file has the first file's header and the results in
vector-name order (the pack's order).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.errors import ConformanceError
from conformance.results_file import is_header
from conformance.runner import VectorResult


class MergeError(ConformanceError, ValueError):
    """Results that cannot be merged; one line naming the file and the problem."""


# What must agree between the files of one run.
_KEYS = ("format_version", "pack_sha256", "backend")


@dataclass
class Results:
    path: Path
    header: dict[str, Any]
    results: list[VectorResult]


def read(path: Path) -> Results:
    """A results file: its header and its results; a torn last line is ignored, as
    :func:`conformance.runner.read_results` does for a resumed run."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise MergeError(f"{path}: cannot read the results: {exc}") from None
    header: dict[str, Any] | None = None
    results: list[VectorResult] = []
    for number, line in enumerate(lines, 1):
        try:
            doc = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):
                continue  # a run killed mid-write
            raise MergeError(f"{path}:{number}: not a JSON line") from None
        if not isinstance(doc, dict):
            raise MergeError(f"{path}:{number}: not a result record")
        if is_header(doc):
            if header is not None or results:
                raise MergeError(f"{path}:{number}: a second header: two runs in one file")
            header = doc
            continue
        try:
            results.append(VectorResult.from_json(doc))
        except (TypeError, KeyError) as exc:
            raise MergeError(f"{path}:{number}: not a result record: {exc}") from None
    if header is None:
        raise MergeError(
            f"{path}: no header naming the pack and the backend; results written by this "
            "version's 'run --json' have one"
        )
    return Results(path, header, results)


def merge(paths: list[Path]) -> Results:
    """The results of ``paths`` as one run; MergeError when they are not one run's."""
    if not paths:
        raise MergeError("merge needs at least one results file")
    parts = [read(p) for p in paths]
    first = parts[0]
    seen: dict[str, Path] = {}
    merged: list[VectorResult] = []
    for part in parts:
        for key in _KEYS:
            if part.header.get(key) != first.header.get(key):
                raise MergeError(
                    f"{part.path}: {key} is {part.header.get(key)!r}, but {first.path} has "
                    f"{first.header.get(key)!r}: results of different runs do not merge"
                )
        for r in part.results:
            if r.vector in seen:
                raise MergeError(
                    f"{part.path}: vector {r.vector} is also in {seen[r.vector]}; shards are "
                    "disjoint, so these are not the shards of one run"
                )
            seen[r.vector] = part.path
            merged.append(r)
    merged.sort(key=lambda r: r.vector)
    return Results(first.path, first.header, merged)


def write(results: Results, out: Path) -> None:
    lines = [json.dumps(results.header, sort_keys=True)]
    lines += [json.dumps(r.to_json(), sort_keys=True) for r in results.results]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")

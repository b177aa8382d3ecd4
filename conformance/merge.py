"""Merge the JSON-lines results of the shards of one run (``run --shard K/N``).

Results merge only when they come from the same pack and the same backend: the
header each results file starts with names both (conformance.results_file), and a
file without one, or with another pack or backend, is refused, naming the file.  A
vector is in at most one file: shards are disjoint, so a vector twice means two runs
were mixed up.  The merged file has the first file's header and the results in
vector-name order (the pack's order).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.atomic_file import OutputError, write_files
from conformance.errors import ConformanceError
from conformance.results_file import (
    RecordError,
    check_header,
    check_result,
    in_a_pack,
    is_header,
    parse_line,
    read_data,
    shown,
)
from conformance.verdicts import VectorResult
from vectors.pack_errors import PackError


class MergeError(ConformanceError, ValueError):
    """Results that cannot be merged; one line naming the file and the problem."""


# What must agree between the files of one run.
_KEYS = ("format_version", "pack_sha256", "backend")


@dataclass
class Results:
    path: Path
    header: dict[str, Any]
    results: list[VectorResult]
    sha256: str = ""  # of the bytes read (a merge: of its first file's)
    # The files merged into these results, as each was read.
    parts: list[Results] = field(default_factory=list)


def read(path: Path) -> Results:
    """A results file: its header and its results; a torn last line is ignored, as
    ``run --resume`` does.  Anything else that is not what ``run --json`` writes is a
    MergeError naming the file and the line (conformance.results_file)."""
    try:
        data = read_data(path)
    except PackError as exc:  # a FIFO, a device, a folder, too big, unreadable
        raise MergeError(str(exc)) from None
    if data is None:
        raise MergeError(f"{path}: no such results file")
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # the newline that ends the last line
    header: dict[str, Any] | None = None
    results: list[VectorResult] = []
    for number, line in enumerate(lines, 1):
        try:
            doc = parse_line(line)
            if is_header(doc):
                doc = check_header(doc)
            else:
                result = VectorResult.from_json(check_result(doc))
        except RecordError as exc:
            if number == len(lines) and not data.endswith(b"\n"):
                continue  # a run killed mid-write
            raise MergeError(f"{path}:{number}: {exc}") from None
        if is_header(doc):
            if header is not None or results:
                raise MergeError(f"{path}:{number}: a second header: two runs in one file")
            header = doc
            continue
        results.append(result)
    if header is None:
        raise MergeError(
            f"{path}: no header naming the pack and the backend; results written by this "
            "version's 'run --json' have one"
        )
    return Results(path, header, results, hashlib.sha256(data).hexdigest())


def merge(paths: list[Path]) -> Results:
    """The results of ``paths`` as one run; MergeError when they are not one run's."""
    if not paths:
        raise MergeError("merge needs at least one results file")
    parts = [read(p) for p in paths]
    first = parts[0]
    seen: dict[str, int] = {}  # vector -> the part it is in
    merged: list[VectorResult] = []
    for k, part in enumerate(parts):
        for key in _KEYS:
            if part.header.get(key) != first.header.get(key):
                raise MergeError(
                    f"{part.path}: {key} is {shown(part.header.get(key))}, but {first.path} "
                    f"has {shown(first.header.get(key))}: results of different runs do not "
                    "merge"
                )
        for r in part.results:
            if seen.get(r.vector) == k:
                raise MergeError(
                    f"{part.path}: vector {shown(r.vector)} is in it twice; a run writes each "
                    "vector once"
                )
            if r.vector in seen:
                other = parts[seen[r.vector]].path
                raise MergeError(
                    f"{part.path}: vector {shown(r.vector)} is also in {other}; shards are "
                    "disjoint, so these are not the shards of one run"
                )
            seen[r.vector] = k
            merged.append(r)
    merged.sort(key=lambda r: r.vector)
    return Results(first.path, first.header, merged, first.sha256, parts)


def write(results: Results, out: Path) -> None:
    """``out`` holds ``results`` after this, or (MergeError) is as it was: written whole
    (conformance.atomic_file), locked against a run writing it, never into a pack."""
    where = in_a_pack(out)
    if where is not None:
        raise MergeError(
            f"--json {out}: {where}; merged results are never written into a pack: give "
            "--json a path outside it"
        )
    lines = [json.dumps(results.header, sort_keys=True)]
    lines += [json.dumps(r.to_json(), sort_keys=True) for r in results.results]
    busy = f"{out}: a run is writing to this results file; wait for it, or merge into "
    busy += "another --json"
    try:
        write_files({out: ("\n".join(lines) + "\n").encode("utf-8")}, busy=busy)
    except OutputError as exc:
        raise MergeError(str(exc)) from None

"""``tosa-conformance merge``: the results of a run's shards as one results file."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from conformance.cli.options import UsageError
from conformance.merge import MergeError, merge, write
from conformance.spec import Spec


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "merge",
        help="merge the results of the shards of one run",
        description="Merge the JSON-lines results of 'run --shard K/N --json F' into one "
        "file, refusing results of different packs or backends and vectors that are in two "
        "files. 'certify --results' and 'run --resume' read the merged file.",
    )
    p.add_argument("results", nargs="+", type=Path, metavar="RESULTS.jsonl")
    p.add_argument("--json", required=True, type=Path, metavar="OUT", help="merged results")
    p.set_defaults(run=_run)


def _run(spec: Spec, args: argparse.Namespace) -> int:
    if any(_same_file(args.json, p) for p in args.results):
        raise UsageError(f"--json {args.json}: would overwrite one of the results it merges")
    try:
        merged = merge(args.results)
    except MergeError as exc:
        raise UsageError(str(exc)) from None
    write(merged, args.json)
    counts: dict[str, int] = {}
    for r in merged.results:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    shown = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    print(
        f"merged {len(merged.results)} results ({shown}) from {len(args.results)} files "
        f"into {args.json}"
    )
    return 0


def _same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` are one file (links, hard links); an unreadable path, or a
    loop of links, is no file of the merge's (its reader reports it)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False

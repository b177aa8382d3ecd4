"""``tosa-conformance run`` and ``tosa-conformance backends``."""

from __future__ import annotations

import argparse
from pathlib import Path

from conformance.backends import BackendError, available, get_backend
from conformance.cli.options import (
    UsageError,
    add_capabilities_argument,
    add_executor_arguments,
    add_selection_arguments,
    default_jobs,
    executor_errors,
    executor_from_args,
    manifest_from_args,
    read_selection,
    stopped,
)
from conformance.progress import Progress
from conformance.results_file import in_a_pack
from conformance.run_summary import summary_lines, write_junit
from conformance.runner import Interrupted, run_pack
from conformance.selection import SelectionError, Shard
from conformance.spec import Spec


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="run a pack against a backend",
        description="Run every vector of a pack on a backend, each isolated with a timeout, "
        "and judge it with the compliance rules. Exit status 0 only if nothing failed.",
    )
    p.add_argument("--pack", required=True, metavar="PACK", help="pack folder or .zip")
    p.add_argument(
        "--backend",
        required=True,
        metavar="B",
        help="backend NAME or NAME:ARGUMENT (see 'tosa-conformance backends')",
    )
    p.add_argument("--jobs", type=int, default=default_jobs(), metavar="N")
    p.add_argument(
        "--timeout", type=float, default=60.0, metavar="S", help="seconds per vector (60)"
    )
    p.add_argument("--ops", metavar="REGEX", help="only operators whose name matches fully")
    p.add_argument("--vectors", metavar="REGEX", help="only vectors whose name matches fully")
    add_selection_arguments(p)
    p.add_argument(
        "--shard",
        metavar="K/N",
        help="only the K-th of N cost-balanced, disjoint parts of the selection (CI matrices)",
    )
    p.add_argument("--json", type=Path, metavar="F", help="results as JSON lines, streamed")
    p.add_argument("--junit", type=Path, metavar="F", help="JUnit XML report")
    p.add_argument(
        "--resume",
        action="store_true",
        help="keep the results already in --json and run only the rest",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_executor_arguments(p)
    add_capabilities_argument(p)
    p.set_defaults(run=_run)

    b = sub.add_parser("backends", help="list the backends")
    b.set_defaults(run=_backends)


def _run(spec: Spec, args: argparse.Namespace) -> int:
    if args.resume and args.json is None:
        raise UsageError("--resume needs --json F: the results to resume from")
    if args.junit is not None and (where := in_a_pack(args.junit)) is not None:
        # Refused before the run: written after it, it would have cost the whole run.
        raise UsageError(
            f"--junit {args.junit}: {where}; a report is never written into a pack: give "
            "it a path outside it"
        )
    known = read_selection(args)
    try:
        shard = Shard.parse(args.shard) if args.shard else None
    except SelectionError as exc:
        raise UsageError(str(exc)) from None
    try:
        get_backend(args.backend)
    except BackendError as exc:
        raise UsageError(str(exc)) from None
    executor = executor_from_args(args)
    try:
        with executor_errors(), Progress("run", enabled=not args.quiet) as progress:
            report = run_pack(
                Path(args.pack),
                args.backend,
                jobs=args.jobs,
                timeout=args.timeout,
                ops=args.ops,
                vectors=args.vectors,
                json_path=args.json,
                resume=args.resume,
                progress=progress,
                exclude=args.exclude,
                known=known,
                shard=shard,
                executor=executor,
                capabilities=manifest_from_args(spec, args),
            )
    except (SelectionError, Interrupted) as exc:
        return stopped(exc)
    for line in summary_lines(report):
        print(line)
    if args.junit is not None:
        write_junit(report, args.junit, args.backend)
    return 1 if report.failed else 0


def _backends(spec: Spec, args: argparse.Namespace) -> int:
    for name, desc in sorted(available().items()):
        print(f"{name:24} {desc}")
    return 0

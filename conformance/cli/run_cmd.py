"""``tosa-conformance run`` and ``tosa-conformance backends``."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from conformance.backends import BackendError, available, get_backend
from conformance.cli.main import UsageError
from conformance.generate import ProgressBar, default_jobs
from conformance.runner import run_pack, summary_lines, write_junit
from conformance.spec import Spec


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
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
    p.add_argument("--json", type=Path, metavar="F", help="results as JSON lines, streamed")
    p.add_argument("--junit", type=Path, metavar="F", help="JUnit XML report")
    p.add_argument(
        "--resume",
        action="store_true",
        help="keep the results already in --json and run only the rest",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=_run)

    b = sub.add_parser("backends", help="list the backends")
    b.set_defaults(run=_backends)


def _run(spec: Spec, args: argparse.Namespace) -> int:
    if args.resume and args.json is None:
        raise UsageError("--resume needs --json F: the results to resume from")
    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    for flag, value in (("--ops", args.ops), ("--vectors", args.vectors)):
        if value:
            try:
                re.compile(value)
            except re.error as exc:
                raise UsageError(f"{flag} {value!r} is not a regular expression: {exc}") from None
    try:
        get_backend(args.backend)
    except BackendError as exc:
        raise UsageError(str(exc)) from None
    report = run_pack(
        Path(args.pack),
        args.backend,
        jobs=args.jobs,
        timeout=args.timeout,
        ops=args.ops,
        vectors=args.vectors,
        json_path=args.json,
        resume=args.resume,
        progress=ProgressBar(enabled=not args.quiet),
    )
    for line in summary_lines(report):
        print(line)
    if args.junit is not None:
        write_junit(report, args.junit, args.backend)
    return 1 if report.failed else 0


def _backends(spec: Spec, args: argparse.Namespace) -> int:
    for name, desc in sorted(available().items()):
        print(f"{name:24} {desc}")
    return 0

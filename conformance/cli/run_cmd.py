"""``tosa-conformance run`` and ``tosa-conformance backends``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance.backends import BackendError, available, get_backend
from conformance.cli.capabilities_cmd import add_capabilities_argument, manifest_from_args
from conformance.cli.executor_args import (
    add_executor_arguments,
    executor_errors,
    executor_from_args,
)
from conformance.cli.main import UsageError
from conformance.generate import default_jobs
from conformance.progress import Progress
from conformance.results_file import in_a_pack
from conformance.run_summary import summary_lines, write_junit
from conformance.runner import Interrupted, run_pack
from conformance.selection import (
    KnownFailures,
    NoVectors,
    SelectionError,
    Shard,
    compile_option,
)
from conformance.spec import Spec

NO_VECTORS = 5  # pytest's "no tests collected"
INTERRUPTED = 130  # the shell's status for a process ended by SIGINT


def add_selection_arguments(parser: argparse.ArgumentParser) -> None:
    """--exclude and --known-failures, shared by run and certify."""
    parser.add_argument(
        "--exclude",
        metavar="REGEX",
        help="leave out vectors whose name (or pytest id OPERATOR::VECTOR) matches fully",
    )
    parser.add_argument(
        "--known-failures",
        type=Path,
        metavar="FILE",
        help="vector names or regexes, one a line with a '# reason': xfail/xpass, not failures",
    )


def read_selection(args: argparse.Namespace) -> KnownFailures | None:
    """Check the selection options; the known-failures file, parsed."""
    for flag, value in (
        ("--ops", getattr(args, "ops", None)),
        ("--vectors", getattr(args, "vectors", None)),
        ("--exclude", args.exclude),
    ):
        if value:
            try:
                compile_option(flag, value)
            except SelectionError as exc:
                raise UsageError(str(exc)) from None
    if args.known_failures is None:
        return None
    try:
        return KnownFailures.read(args.known_failures)
    except SelectionError as exc:
        raise UsageError(str(exc)) from None


def stopped(exc: SelectionError | Interrupted) -> int:
    """The one line and exit status for an empty selection or a Ctrl-C."""
    if isinstance(exc, Interrupted):
        print(f"tosa-conformance: {exc}", file=sys.stderr)
        return INTERRUPTED
    if isinstance(exc, NoVectors):
        print(f"tosa-conformance: no vectors: {exc}", file=sys.stderr)
        return NO_VECTORS
    raise UsageError(str(exc)) from None


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

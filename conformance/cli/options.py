"""The flags and exit codes every command shares: the claim, --jobs and --timeout, the
selection, --capabilities, the scale-out flags (docs/scale-out.md), and the usage error
all of them raise.

They live here, below the command modules (``*_cmd.py``), so that each command imports
what it shares from one place and ``main`` only dispatches: no command imports the
dispatcher, and the import graph has no loop (tests/core/test_import_loops.py).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from conformance import revisions
from conformance.claims import DEFAULT_LEVEL, Claim, make_claim
from conformance.errors import ConformanceError
from conformance.executors import Executor, ExecutorError, parse_executor
from conformance.runner import Interrupted
from conformance.selection import KnownFailures, NoVectors, SelectionError, compile_option
from conformance.spec import Spec

NO_VECTORS = 5  # pytest's "no tests collected"
INTERRUPTED = 130  # the shell's status for a process ended by SIGINT


class UsageError(ConformanceError):
    """A problem with what the user asked for; printed as one line, exit status 2."""


def add_claim_arguments(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    """The claim flags every command that takes a claim shares."""
    group = parser.add_argument_group("claim")
    group.add_argument(
        "--profile",
        action="append",
        default=[],
        metavar="P",
        help="profile claimed (repeatable), in the revision's words: PRO-INT, PRO-FP "
        "(TOSA 1.0); BI, MI (2024-04 draft, where MI includes BI)",
    )
    group.add_argument(
        "--target",
        metavar="T",
        help="the claim as ExecuTorch and MLIR write it, e.g. TOSA-1.0+INT+int16 "
        "(profiles and extensions; adds to --profile/--extension)",
    )
    group.add_argument(
        "--extension",
        action="append",
        default=[],
        metavar="E",
        help="extension claimed (repeatable), e.g. EXT-INT16; 'all' for every extension "
        "of the claimed profiles",
    )
    group.add_argument(
        "--level", default=DEFAULT_LEVEL, metavar="L", help=f"level (default {DEFAULT_LEVEL})"
    )
    parser.set_defaults(claim_required=required)


def claim_from_args(spec: Spec, args: argparse.Namespace) -> Claim:
    profiles, extensions = list(args.profile), list(args.extension)
    target = getattr(args, "target", None)
    if target:
        rev = revisions.family(spec.revision)
        if rev is None:
            raise UsageError(f"--target: {spec.path} is not of a revision this project ships")
        t = revisions.parse_target(target, rev, spec.extensions)
        profiles += t.profiles
        extensions += t.extensions
    return make_claim(spec, profiles, extensions, args.level)


def default_jobs() -> int:
    return max(1, os.cpu_count() or 1)


def check_counts(args: argparse.Namespace) -> None:
    """The numbers every command that has them must get right: --jobs a count of at
    least 1, --timeout a finite positive number of seconds (nan compares false with
    everything and inf never expires: either would disable it)."""
    jobs = getattr(args, "jobs", None)
    if jobs is not None and jobs < 1:
        raise UsageError(f"--jobs {jobs}: must be at least 1")
    timeout = getattr(args, "timeout", None)
    if timeout is not None and (not math.isfinite(timeout) or timeout <= 0):
        raise UsageError(f"--timeout {timeout}: must be a positive number of seconds")


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


def add_capabilities_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--capabilities`` flag of generate, run, certify and fuzz."""
    parser.add_argument(
        "--capabilities",
        metavar="NAME|FILE",
        help="capability manifest (built-in name or TOML file): only the (operator, mode) "
        "pairs it claims, within its limits; see 'tosa-conformance capabilities'",
    )


def manifest_from_args(spec: Spec, args: argparse.Namespace) -> Any:
    """The manifest ``--capabilities`` names, or None."""
    if getattr(args, "capabilities", None) is None:
        return None
    from conformance.capabilities import load_manifest

    return load_manifest(args.capabilities, spec)


def add_executor_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``--executor`` and ``--resources`` flags that run, certify, fuzz and generate
    share (docs/scale-out.md)."""
    group = parser.add_argument_group("scale-out (docs/scale-out.md)")
    group.add_argument(
        "--executor",
        metavar="WHERE",
        help="run on Dask: dask:local (a cluster of --jobs workers on this machine) or "
        "dask://HOST:PORT (a running scheduler); default: this machine's processes",
    )
    group.add_argument(
        "--resources",
        metavar="NAME=N[,NAME=N]",
        help="Dask worker resources each task holds, e.g. board=1: one vector at a time on "
        "each worker started with --resources board=1",
    )


def executor_from_args(args: argparse.Namespace) -> Executor | None:
    """The executor the flags name, or None for this machine's pool."""
    text = getattr(args, "executor", None)
    resources = getattr(args, "resources", None)
    if text is None:
        if resources:
            raise UsageError("--resources needs --executor: resources are Dask's")
        return None
    try:
        executor = parse_executor(text, resources)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if importlib.util.find_spec("distributed") is None:
        raise UsageError(
            f"--executor {text}: Dask is not installed; pip install 'tosa-conformance[distributed]'"
        )
    return executor


@contextmanager
def executor_errors() -> Iterator[None]:
    """A cluster's refusal as the CLI's one-line usage error."""
    try:
        yield
    except ExecutorError as exc:
        raise UsageError(str(exc)) from None

"""The ``--executor`` and ``--resources`` flags that run, certify, fuzz and generate share
(docs/scale-out.md)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager

from conformance.cli.main import UsageError
from conformance.executors import Executor, ExecutorError, parse_executor


def add_executor_arguments(parser: argparse.ArgumentParser) -> None:
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
    import importlib.util

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

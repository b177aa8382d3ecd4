"""A Dask scheduler and two single-threaded worker processes on loopback, shared by
the scale-out tests (a LocalCluster: the same scheduler and workers as ``dask
scheduler`` and ``dask worker``, started in-process)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.cli.main import main
from conformance.executors import Executor
from conformance.executors.dask_pool import close_executors

# Each test module skips itself, with this reason, when Dask is not installed.
NO_DASK = "Dask is the optional extra 'distributed' (pip install .[distributed])"


def start_cluster(**kwargs: object) -> Any:
    """A LocalCluster on loopback: two single-threaded worker processes unless told."""
    distributed = pytest.importorskip("distributed", reason=NO_DASK)
    options: dict[str, object] = dict(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
    )
    options.update(kwargs)
    return distributed.LocalCluster(**options)


@pytest.fixture(name="start_cluster", scope="session")
def start_cluster_fixture() -> object:
    """:func:`start_cluster`, for tests that need a cluster of their own."""
    return start_cluster


@pytest.fixture(scope="session")
def cluster() -> Iterator[Any]:
    with start_cluster() as c:
        yield c
    close_executors()


@pytest.fixture(scope="session")
def executor(cluster: Any) -> Executor:
    return Executor(cluster.scheduler_address)


@pytest.fixture(scope="session")
def client(cluster: Any) -> Iterator[Any]:
    distributed = pytest.importorskip("distributed", reason=NO_DASK)
    with distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="session")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small pack: ADD's must-fail vectors and two valid vectors per mode."""
    out = tmp_path_factory.mktemp("pack") / "p"
    argv = ["generate", "--profile", "MI", "--ops", "ADD", "--examples", "2", "--quiet"]
    assert main([*argv, "--no-targeted", "--no-levels", "-o", str(out), "--jobs", "1"]) == 0
    return out

"""Where the work runs: this machine's worker processes, or a Dask cluster.

``--executor`` chooses: unset, the local pool (:class:`conformance.executors.local.IsolatedPool`);
``dask:local``, a LocalCluster on this machine; ``dask://HOST:PORT``, a running Dask
scheduler and its workers (docs/scale-out.md).  Dask is the optional extra
``distributed``; nothing here imports it until a Dask executor is asked for, so the
local path costs nothing.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

LOCAL_CLUSTER = "local"  # the address that means "start a LocalCluster here"
_RESOURCE = re.compile(r"^([A-Za-z_][A-Za-z0-9_.-]*)=(\d+(?:\.\d+)?)$")


class ExecutorError(Exception):
    """The cluster cannot do the work as asked (unreachable, no workers, a worker of
    another version...); one line, which the CLI prints with exit status 2."""


@dataclass(frozen=True)
class Executor:
    """A Dask cluster to run on: its scheduler address (``local``: a LocalCluster of
    this machine) and the worker resources every task needs (``board=1``)."""

    address: str
    resources: tuple[tuple[str, float], ...] = ()

    @property
    def task_resources(self) -> dict[str, float] | None:
        return dict(self.resources) or None

    def describe(self) -> str:
        where = "dask:local" if self.address == LOCAL_CLUSTER else self.address
        where = where.replace("tcp://", "dask://", 1)  # as the user wrote it
        if self.resources:
            where += " with " + ",".join(f"{k}={v:g}" for k, v in self.resources)
        return where


def parse_executor(text: str, resources: str | None = None) -> Executor:
    """``dask:local`` or ``dask://HOST:PORT`` (also ``tcp://HOST:PORT``), and
    ``NAME=N[,NAME=N]`` resources; ValueError says what is wrong."""
    if text == "dask:local":
        address = LOCAL_CLUSTER
    elif m := re.fullmatch(r"(?:dask|tcp)://([^/:\s]+):(\d+)", text):
        address = f"tcp://{m.group(1)}:{m.group(2)}"
    else:
        raise ValueError(f"--executor {text!r}: expected dask:local or dask://HOST:PORT")
    return Executor(address, parse_resources(resources) if resources else ())


def parse_resources(text: str) -> tuple[tuple[str, float], ...]:
    out: dict[str, float] = {}
    for part in text.split(","):
        m = _RESOURCE.match(part.strip())
        if not m:
            raise ValueError(f"--resources {text!r}: expected NAME=N[,NAME=N], e.g. board=1")
        out[m.group(1)] = float(m.group(2))
    return tuple(sorted(out.items()))


def identity() -> dict[str, str]:
    """What must be the same on every machine of a run: the project's version and the
    vendored tosa.xml (a worker of another version would judge by other rules)."""
    from conformance import __version__
    from conformance.spec import default_spec_path

    digest = hashlib.sha256(default_spec_path().read_bytes()).hexdigest()
    return {"tosa-conformance": __version__, "tosa.xml sha256": digest}


def path_digest(path: Path) -> str | None:
    """The sha256 that says two machines see the same pack at a path: its pack.json
    (a folder) or the file itself (a zip); None for a folder without pack.json."""
    target = path / "pack.json" if path.is_dir() else path
    if not target.is_file():
        return None
    return hashlib.sha256(target.read_bytes()).hexdigest()


class Pool(Protocol):
    """What :func:`conformance.runner.run_pack` needs of a pool."""

    def run(
        self,
        tasks: list[tuple[str, Any]],
        entries: dict[str, Any],
        on_result: Callable[[Any], None],
    ) -> None: ...

    def close(self) -> None: ...


def make_pool(
    executor: Executor | None,
    target: Callable[..., None],
    args: tuple[Any, ...],
    workers: int,
    timeout: float,
    *,
    shared: Iterable[Path] = (),
) -> Pool:
    """The local pool, or one that runs the same worker loop on Dask workers; ``shared``
    are the paths in ``args`` the workers must see as this machine does."""
    if executor is None:
        from conformance.executors.local import IsolatedPool

        return IsolatedPool(target, args, workers, timeout)
    from conformance.executors.dask_pool import DaskPool

    return DaskPool(executor, target, args, workers, timeout, shared=shared)


def map_jobs(
    executor: Executor,
    fn: Callable[[Any, Any], Any],
    items: list[Any],
    common: Any,
    progress: Callable[[int, int], None],
    workers: int,
    *,
    shared: Iterable[Path] = (),
) -> list[Any]:
    """``[fn(item, common) for item in items]`` on Dask workers, in order; ``shared``
    are the folders the workers must see (a generated pack's)."""
    from conformance.executors.dask_pool import map_on_dask

    return map_on_dask(executor, fn, items, common, progress, workers, shared=shared)

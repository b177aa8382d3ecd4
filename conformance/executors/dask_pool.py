"""Vectors and generate jobs as Dask tasks.

The client side (:class:`DaskPool`, :func:`map_on_dask`) sends tasks that name the work
(vector names, a pack path, a backend spec), never the pack's content; the workers read
the pack from storage they share with this machine, at the same path.  Results come back
as task results, so a vector is recorded when its task completes and only then: when a
worker is lost, Dask runs its tasks again elsewhere, and nothing is recorded twice.

On the worker side a task does not run the backend itself: Dask worker processes are
daemons, which may not have children, and a backend that crashes must not take the
worker with it.  Each worker thread keeps a helper subprocess
(:mod:`conformance.executors.helper`) that runs the ordinary
:class:`conformance.executors.local.IsolatedPool`, with its per-vector isolation and timeouts.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import math
import pickle
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterable
from importlib import import_module
from pathlib import Path
from typing import Any

from conformance.executors import (
    LOCAL_CLUSTER,
    Executor,
    ExecutorError,
    identity,
    path_digest,
)

WAIT_SECONDS = 30.0  # for the first worker to join a scheduler
CONNECT_SECONDS = 10.0  # for a scheduler to answer
MAX_CHUNK = 16  # vectors per task at most: a lost worker costs at most this much again
TASKS_PER_THREAD = 4  # enough tasks that a slow worker does not hold up the end

_CLIENTS: dict[tuple[Executor, int], tuple[Any, Any]] = {}


def _distributed() -> Any:
    try:
        return import_module("distributed")
    except ImportError:
        raise ExecutorError(
            "--executor dask needs Dask: pip install 'tosa-conformance[distributed]'"
        ) from None


def connect(executor: Executor, workers: int) -> Any:
    """A client of the executor's cluster (started, for dask:local, with ``workers``
    single-threaded worker processes), whose workers passed :func:`check_workers`.
    A LocalCluster is kept for the rest of the process (generate's two rounds share
    it); a scheduler's client is the caller's to :func:`release`."""
    distributed = _distributed()
    local = executor.address == LOCAL_CLUSTER
    key = (executor, max(1, workers) if local else 0)
    if key in _CLIENTS:
        client = _CLIENTS[key][0]
        if client.status == "running":
            return client
    cluster = None
    if local:
        cluster = distributed.LocalCluster(
            n_workers=max(1, workers),
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            resources=executor.task_resources,
            silence_logs=logging.ERROR,
        )
        client = distributed.Client(cluster)
    else:
        try:
            client = distributed.Client(executor.address, timeout=CONNECT_SECONDS)
        except (OSError, TimeoutError) as exc:
            raise ExecutorError(
                f"--executor {executor.describe()}: cannot reach the Dask scheduler: "
                f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
            ) from None
    try:
        check_workers(client, executor)
    except ExecutorError:
        client.close()
        if cluster is not None:
            cluster.close()
        raise
    if local:
        _CLIENTS[key] = (client, cluster)
    return client


def completed(client: Any, futures: list[Any]) -> Any:
    """The futures as they finish, tracked on ``client``'s own event loop.

    Dask's ``as_completed`` otherwise uses the process's default client, which in a
    library or test process may be another client with another loop; a future whose
    worker died is then re-gathered across loops and fails with "bound to a different
    event loop" instead of being run again."""
    return _distributed().as_completed(futures, loop=client.loop)


def release(client: Any) -> None:
    """Close a client of a running scheduler; a LocalCluster's is kept."""
    if not any(client is kept for kept, _ in _CLIENTS.values()):
        with contextlib.suppress(Exception):  # a scheduler that went away
            client.close()


def close_executors() -> None:
    """Close every client and LocalCluster this process started."""
    for client, cluster in _CLIENTS.values():
        with contextlib.suppress(Exception):  # a cluster that is already gone
            client.close()
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.close()
    _CLIENTS.clear()


atexit.register(close_executors)


def check_workers(client: Any, executor: Executor) -> None:
    """Refuse, in one line, a cluster without workers, with a worker of another
    tosa-conformance version or tosa.xml, or without the resources the tasks need."""
    where = f"--executor {executor.describe()}"
    try:
        client.wait_for_workers(1, timeout=WAIT_SECONDS)
    except TimeoutError:
        raise ExecutorError(
            f"{where}: no Dask worker joined the scheduler in {WAIT_SECONDS:g} s; start one "
            f"with: dask worker {executor.address}"
        ) from None
    mine = identity()
    try:
        theirs = client.run(identity)
    except Exception as exc:  # e.g. a worker without the project: it cannot unpickle
        raise ExecutorError(
            f"{where}: a worker cannot run tosa-conformance ({type(exc).__name__}: "
            f"{exc}); install it on every worker (docs/scale-out.md)"
        ) from None
    for address, ident in sorted(theirs.items()):
        if ident != mine:
            raise ExecutorError(f"{where}: {mismatch(address, ident, mine)}")
    if executor.resources and not _offering(client, executor):
        wanted = ",".join(f"{k}={v:g}" for k, v in executor.resources)
        raise ExecutorError(
            f"{where}: no Dask worker offers the resources {wanted}; start such workers "
            f"with: dask worker {executor.address} --resources '{wanted}'"
        )


def mismatch(address: str, theirs: dict[str, str], mine: dict[str, str]) -> str:
    def show(ident: dict[str, str]) -> str:
        sha = ident.get("tosa.xml sha256", "?")[:12]
        return f"tosa-conformance {ident.get('tosa-conformance', '?')}, tosa.xml sha256 {sha}"

    return (
        f"worker {address} has {show(theirs)}; this machine has {show(mine)}: install the "
        "same version on every worker"
    )


def _offering(client: Any, executor: Executor) -> list[tuple[str, int]]:
    """The workers with every resource the tasks need, and their thread counts."""
    try:
        info = client.scheduler_info(n_workers=-1)["workers"]  # all, not the first few
    except TypeError:  # a distributed older than the n_workers argument lists them all
        info = client.scheduler_info()["workers"]
    out = []
    for address, w in info.items():
        have = w.get("resources", {}) or {}
        if all(have.get(k, 0) >= v for k, v in executor.resources):
            out.append((address, int(w.get("nthreads", 1))))
    return out


def chunk_size(count: int, threads: int) -> int:
    """Items per task: a few tasks per worker thread, at most MAX_CHUNK items each."""
    return max(1, min(MAX_CHUNK, math.ceil(count / (TASKS_PER_THREAD * max(1, threads)))))


def _target_name(fn: Callable[..., Any]) -> str:
    return f"{fn.__module__}:{fn.__qualname__}"


def _resolve(name: str) -> Callable[..., Any]:
    module, _, attr = name.partition(":")
    if module.split(".")[0] not in ("conformance", "strategies", "reference", "vectors"):
        raise ExecutorError(f"refusing to run {name}: not a tosa-conformance function")
    return getattr(import_module(module), attr)


def _check(shared: Iterable[Path]) -> dict[str, Any]:
    """What a worker verifies before its first task: the same identity, the same
    shared paths (a pack's pack.json digest)."""
    paths = {}
    for p in shared:
        absolute = p.resolve()
        paths[str(absolute)] = path_digest(absolute)
    return {"identity": identity(), "shared": paths}


# -- the client side --------------------------------------------------------------------


class DaskPool:
    """:class:`conformance.executors.local.IsolatedPool`'s interface, on Dask workers."""

    def __init__(
        self,
        executor: Executor,
        target: Callable[..., None],
        args: tuple[Any, ...],
        workers: int,
        timeout: float,
        *,
        shared: Iterable[Path] = (),
    ) -> None:
        self.executor = executor
        self.client = connect(executor, workers)
        for a in args:
            if not isinstance(a, str | int | float):
                raise TypeError(f"worker argument {a!r} must be a string or a number")
        self.config = {"target": _target_name(target), "args": list(args), "timeout": timeout}
        self.check = _check(shared)
        self.futures: list[Any] = []

    def run(
        self,
        tasks: list[tuple[str, Any]],
        entries: dict[str, Any],
        on_result: Callable[[Any], None],
    ) -> None:
        """Run the ``(name, message)`` tasks (a message is the vector's name, or a
        :class:`conformance.executors.local.Batch` of names) and report each vector once."""
        from conformance.executors.local import Batch

        distributed = _distributed()
        threads = sum(n for _, n in _offering(self.client, self.executor)) or 1
        singles = [name for name, message in tasks if not isinstance(message, Batch)]
        per = chunk_size(len(singles), threads)
        chunks: list[list[list[Any]]] = [
            [[n, n] for n in singles[k : k + per]] for k in range(0, len(singles), per)
        ]
        for name, message in tasks:  # a backend's batch stays one task: it is prepared whole
            if isinstance(message, Batch):
                chunks.append([[name, {"batch": list(message.names)}]])
        token = uuid.uuid4().hex[:12]
        by_future: dict[Any, list[str]] = {}
        for i, chunk in enumerate(chunks):
            names = [n for t in chunk for n in _task_names(t)]
            request = {
                "config": self.config,
                "check": self.check,
                "tasks": chunk,
                "entries": {
                    n: [entries[n].operator, entries[n].mode, entries[n].kind] for n in names
                },
            }
            future = self.client.submit(
                run_vectors,
                request,
                key=f"tosa-vectors-{token}-{i}",
                pure=False,
                resources=self.executor.task_resources,
            )
            by_future[future] = names
        self.futures = list(by_future)
        recorded: set[str] = set()
        for future in completed(self.client, self.futures):
            names = by_future[future]
            try:
                docs = future.result()
            except distributed.KilledWorker as exc:
                docs = [_lost(n, entries[n], exc) for n in names]
            except ExecutorError:
                raise
            except Exception as exc:
                raise ExecutorError(
                    f"--executor {self.executor.describe()}: a task failed on a worker: "
                    f"{type(exc).__name__}: {exc}"
                ) from None
            from conformance.verdicts import VectorResult

            for doc in docs:
                if doc["vector"] in recorded:  # never twice, whatever happened on the way
                    continue
                recorded.add(doc["vector"])
                on_result(VectorResult.from_json(doc))

    def close(self) -> None:
        pending = [f for f in self.futures if not f.done()]
        if pending:  # an interrupted run: the cluster need not finish it
            with contextlib.suppress(Exception):
                self.client.cancel(pending)
        self.futures = []
        release(self.client)


def _task_names(task: list[Any]) -> list[str]:
    name, message = task
    return list(message["batch"]) if isinstance(message, dict) else [name]


def _lost(name: str, entry: Any, exc: Exception) -> dict[str, Any]:
    from conformance.verdicts import CRASHED, VectorResult

    detail = f"its Dask task killed every worker that ran it ({exc})"
    return VectorResult(name, entry.operator, entry.mode, entry.kind, CRASHED, detail).to_json()


def map_on_dask(
    executor: Executor,
    fn: Callable[[Any, Any], Any],
    items: list[Any],
    common: Any,
    progress: Callable[[int, int], None],
    workers: int,
    *,
    shared: Iterable[Path] = (),
) -> list[Any]:
    """``[fn(item, common) for item in items]`` as Dask tasks, returned in order."""
    _distributed()  # a clear error first, when Dask is missing
    client = connect(executor, workers)
    check = _check(shared)
    threads = sum(n for _, n in _offering(client, executor)) or 1
    per = chunk_size(len(items), threads)
    token = uuid.uuid4().hex[:12]
    starts = {}
    for k in range(0, len(items), per):
        future = client.submit(
            run_items,
            _target_name(fn),
            check,
            items[k : k + per],
            common,
            key=f"tosa-jobs-{token}-{k}",
            pure=False,
            resources=executor.task_resources,
        )
        starts[future] = k
    results: list[Any] = [None] * len(items)
    done = 0
    try:
        for future in completed(client, list(starts)):
            try:
                part = future.result()
            except ExecutorError:
                raise
            except Exception as exc:
                raise ExecutorError(
                    f"--executor {executor.describe()}: a task failed on a worker: "
                    f"{type(exc).__name__}: {exc}"
                ) from None
            k = starts[future]
            results[k : k + len(part)] = part
            done += len(part)
            progress(done, len(items))
    finally:
        pending = [f for f in starts if not f.done()]
        if pending:
            with contextlib.suppress(Exception):
                client.cancel(pending)
        release(client)
    return results


# -- the worker side --------------------------------------------------------------------

_VERIFIED: set[str] = set()
_LOCAL = threading.local()


def _where() -> str:
    try:
        return f"worker {import_module('distributed').get_worker().address}"
    except Exception:  # not in a Dask worker (a test calling the task directly)
        return "worker"


def verify(check: dict[str, Any]) -> None:
    """On a worker, before its first task: the same identity and the same shared paths
    as the client's; ExecutorError otherwise."""
    key = json.dumps(check, sort_keys=True)
    if key in _VERIFIED:
        return
    mine = identity()
    if check["identity"] != mine:
        raise ExecutorError(mismatch(_where(), mine, check["identity"]))
    for path, digest in check["shared"].items():
        p = Path(path)
        if not p.exists():
            raise ExecutorError(
                f"{_where()} cannot see {path}: put it on storage every worker shares, at "
                "the same path (docs/scale-out.md)"
            )
        if digest is not None and path_digest(p) != digest:
            raise ExecutorError(
                f"{_where()} sees another {path} than this machine (pack.json differs)"
            )
    _VERIFIED.add(key)


def run_items(target: str, check: dict[str, Any], items: list[Any], common: Any) -> list[Any]:
    """A Dask task of :func:`map_on_dask`, run in this thread's map helper
    (:func:`conformance.executors.helper.map_main`)."""
    from conformance.executors.helper import MAP_COMMAND

    verify(check)
    _resolve(target)  # refused here, before anything is sent
    helpers: dict[str, Any] = _LOCAL.__dict__.setdefault("mappers", {})
    for _attempt in range(2):
        proc = helpers.get(target)
        if proc is None or proc.poll() is not None:
            proc = helpers[target] = subprocess.Popen(
                [sys.executable, "-c", MAP_COMMAND],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
        assert proc.stdin is not None and proc.stdout is not None
        try:
            pickle.dump((target, items, common), proc.stdin)
            proc.stdin.flush()
            results: list[Any] = pickle.load(proc.stdout)
            return results
        except (EOFError, OSError, pickle.UnpicklingError):
            proc.kill()  # it died: a fresh one tries once more
            helpers.pop(target, None)
    raise ExecutorError(f"{_where()}: the helper running {target} died twice")


class _Helper:
    """The worker thread's helper subprocess, which runs the IsolatedPool."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "conformance.executors.helper"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._send(config)

    def _send(self, doc: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(doc) + "\n")
        self.proc.stdin.flush()

    def run(self, tasks: list[Any], entries: dict[str, Any]) -> tuple[list[dict[str, Any]], bool]:
        """The result documents, and whether the helper finished (it did not die)."""
        docs: list[dict[str, Any]] = []
        try:
            self._send({"tasks": tasks, "entries": entries})
        except (BrokenPipeError, OSError):
            return docs, False
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            msg = json.loads(line)
            if msg.get("done"):
                return docs, True
            docs.append(msg["result"])
        return docs, False

    def close(self) -> int | None:
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return self.proc.returncode


def _helpers() -> dict[str, _Helper]:
    return _LOCAL.__dict__.setdefault("helpers", {})


def _helper(config: dict[str, Any], fresh: bool = False) -> _Helper:
    helpers = _helpers()
    key = json.dumps(config, sort_keys=True)
    if fresh:
        _drop_helper(config)
    if key not in helpers:
        helpers[key] = _Helper(config)
    return helpers[key]


def _drop_helper(config: dict[str, Any]) -> int | None:
    helper = _helpers().pop(json.dumps(config, sort_keys=True), None)
    return helper.close() if helper is not None else None


def run_vectors(request: dict[str, Any]) -> list[dict[str, Any]]:
    """A Dask task of :class:`DaskPool`: run its vectors in this thread's helper.

    A helper that dies (it should not: the backend runs in its children) is replaced
    once, and the vectors it did not report run one by one in the new one."""
    from conformance.verdicts import CRASHED, VectorResult

    verify(request["check"])
    config, tasks, entries = request["config"], request["tasks"], request["entries"]
    out: list[dict[str, Any]] = []
    for attempt in range(2):
        docs, finished = _helper(config, fresh=attempt > 0).run(tasks, entries)
        out += docs
        if finished:
            return out
        done = {d["vector"] for d in out}
        tasks = [[n, n] for t in tasks for n in _task_names(t) if n not in done]
    code = _drop_helper(config)
    for name in (n for t in tasks for n in _task_names(t)):
        op, mode, kind = entries[name]
        why = f"the worker's helper process died twice (exit {code})"
        out.append(VectorResult(name, op, mode, kind, CRASHED, why).to_json())
    return out

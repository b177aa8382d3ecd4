"""Run a pack against a backend: every vector isolated, judged, streamed to disk.

Each vector runs in a worker process of :class:`conformance.executors.local.IsolatedPool`
(or of an executor's pool); this module is the worker loop (:func:`serve`) and the run
(:func:`run_pack`).  Results are appended to a JSON lines file as they come, so an
interrupted run resumes where it stopped.  The verdict of a vector comes from
:func:`conformance.verdicts.judge`, which knows nothing of processes: the pytest plugin
uses it too.
"""

from __future__ import annotations

import contextlib
import copy
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, cast

import numpy as np

from conformance.backends import get_backend
from conformance.backends.base import (
    Backend,
    BatchBackend,
    batch_size,
    denormal_modes,
    identity_of,
)
from conformance.block_tensor import BlockScaled
from conformance.executors.local import (
    NOT_STARTED,
    PREPARED,
    Batch,
)
from conformance.results_file import ResultsFile, make_header
from conformance.selection import KnownFailures, Selection
from conformance.spec import use_spec, vendored_spec
from conformance.verdicts import CRASHED, SKIPPED, RunReport, VectorResult, judge, mark_known
from conformance.worker import LOG_KEPT, captured_output, end_vector_processes
from reference.compliance.denormals import format_modes
from vectors.pack_errors import PackError, one_line
from vectors.pack_model import LoadedVector


def backend_view(vector: LoadedVector) -> LoadedVector:
    """What a backend is handed: its own copy of the graph and inputs, without the
    expected results and their bounds. Nothing it changes is what the judge reads, and
    nothing in it is the answer."""
    return replace(
        vector,
        graph=copy.deepcopy(vector.graph),
        inputs={
            k: v.copy() if isinstance(v, BlockScaled) else np.array(v, copy=True)
            for k, v in vector.inputs.items()
        },
        expected={},
        checks={},
        desc=copy.deepcopy(vector.desc),
        result_files=dict(vector.result_files),
    )


def run_one(
    backend: Backend, vector: LoadedVector, view: LoadedVector | None = None
) -> VectorResult:
    """Run one loaded vector on a backend and judge it (in a worker process); ``view``
    is the copy the backend was shown already (a batch's prepare)."""
    started = time.monotonic()
    view = view or backend_view(vector)
    reason = backend.unsupported(view)
    chain = vector.provenance.chain
    if reason is not None:
        return VectorResult(
            vector.name, vector.operator, vector.mode, vector.kind, SKIPPED, reason, chain=chain
        )
    with tempfile.TemporaryDirectory(prefix="tosa-run-") as tmp:
        result = backend.run(view, Path(tmp))
    declined = getattr(result, "declined", None)
    if declined is not None:  # found out only by running: skipped all the same
        res = VectorResult(
            vector.name,
            vector.operator,
            vector.mode,
            vector.kind,
            SKIPPED,
            str(declined),
            chain=chain,
        )
        res.log = str(getattr(result, "log", ""))[-LOG_KEPT:]
        return res
    return judge(vector, result, time.monotonic() - started, denormals=denormal_modes(backend))


def pack_worker(conn: Connection, pack_path: str, backend_spec: str) -> None:
    """Worker process: receives vector names of a pack, sends back result documents."""
    from conformance.backends.sandbox import keep_out
    from vectors.pack import open_pack

    keep_out(pack_path)  # from every program the backend starts (its answers are here)
    pack = open_pack(pack_path)
    # A pack is judged by its own revision's rules, on whichever machine runs it.
    spec = vendored_spec(pack.meta.spec_revision, pack.meta.spec_sha256)
    if spec is not None:
        use_spec(spec)
    serve(conn, backend_spec, pack.load, lambda name: _meta(pack.entry(name)))


def _meta(entry: Any) -> tuple[str, str, str]:
    return entry.operator, entry.mode, entry.kind


def ignore_interrupts() -> None:
    """In a worker process: leave Ctrl-C to the parent, which stops the workers and
    reports the interruption once (a terminal sends SIGINT to every process)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def serve(
    conn: Connection,
    backend_spec: str,
    load: Callable[[Any], LoadedVector],
    describe: Callable[[Any], tuple[str, str, str]],
) -> None:
    """The worker loop: a message in, a result document out, until None arrives."""
    import faulthandler

    # A backend crash is reported as that vector's verdict; a Python traceback dump of
    # the worker (pytest turns faulthandler on) would only be noise.
    faulthandler.disable()
    ignore_interrupts()
    try:
        backend = get_backend(backend_spec)
    except BaseException as exc:  # e.g. a device that a forked process cannot open
        conn.send({NOT_STARTED: _described(exc)})
        return
    while True:
        message = conn.recv()
        if message is None:
            return
        if isinstance(message, Batch):
            # Batches go only to a backend that prepares them (batch_size() > 1).
            _serve_batch(conn, cast(BatchBackend, backend), message, load, describe)
        else:
            conn.send(_serve_one(backend, message, load, describe))


def _serve_one(
    backend: Backend,
    message: Any,
    load: Callable[[Any], LoadedVector],
    describe: Callable[[Any], tuple[str, str, str]],
    vector: LoadedVector | None = None,
    extra: float = 0.0,
    view: LoadedVector | None = None,
) -> dict[str, Any]:
    started = time.monotonic()
    try:
        if vector is None:
            vector = load(message)
    except Exception as exc:
        # Changed since the run checked it, or damaged in a way its hashes do not show:
        # either way not the backend's doing, and never recorded as its crash.
        why = str(exc) if isinstance(exc, PackError) else f"cannot load it: {_described(exc)}"
        res = _unrun(message, describe, f"{PACK_DAMAGE}{why}")
    else:
        # What a Python backend prints is this vector's log, not the run's output.
        with captured_output() as printed:
            try:
                res = run_one(backend, vector, view)
            except BaseException as exc:
                # A backend bug is this vector's failure, not the run's: also its own
                # KeyboardInterrupt or SystemExit (the worker ignores Ctrl-C, so a
                # KeyboardInterrupt here was raised by the backend), and an exception
                # whose str() fails.
                res = _unrun(message, describe, f"the backend raised {_described(exc)}")
        if printed:
            res.log = (printed[0] + res.log)[-LOG_KEPT:]
    end_vector_processes(backend)  # what the backend started for it ends with it
    res.seconds = time.monotonic() - started + extra
    return res.to_json()


# How a worker reports a vector it could not load; run_pack stops on it (exit 2).
PACK_DAMAGE = "the pack is damaged (not the backend): "


def _unrun(message: Any, describe: Callable[[Any], tuple[str, str, str]], why: str) -> VectorResult:
    op, mode, kind = describe(message)
    name = message if isinstance(message, str) else getattr(message, "name", "?")
    return VectorResult(name, op, mode, kind, CRASHED, why)


def _serve_batch(
    conn: Connection,
    backend: BatchBackend,
    batch: Batch,
    load: Callable[[Any], LoadedVector],
    describe: Callable[[Any], tuple[str, str, str]],
) -> None:
    started = time.monotonic()
    loaded: dict[int, LoadedVector] = {}
    for k, message in enumerate(batch.messages):
        with contextlib.suppress(Exception):  # it fails again, as its own result, below
            loaded[k] = load(message)
    views = {k: backend_view(v) for k, v in loaded.items()}  # the same objects run() gets
    # prepare() only gets ahead of run(): when it fails, each vector runs unprepared.
    # BaseException: a backend's own KeyboardInterrupt or SystemExit too (see _serve_one).
    with (
        contextlib.suppress(BaseException),
        tempfile.TemporaryDirectory(prefix="tosa-run-") as tmp,
    ):
        backend.prepare(list(views.values()), Path(tmp))
    conn.send(PREPARED)
    share = (time.monotonic() - started) / max(1, len(batch.messages))
    for k, message in enumerate(batch.messages):
        conn.send(_serve_one(backend, message, load, describe, loaded.get(k), share, views.get(k)))


def _described(exc: BaseException) -> str:
    try:
        text = str(exc)
        return one_line(f"{type(exc).__name__}: {text}" if text else type(exc).__name__)
    except Exception:  # an exception whose str() fails still names its type
        return f"{type(exc).__name__} (its message cannot be shown)"


# -- the run ------------------------------------------------------------------------


def _previous(stream: ResultsFile | None) -> list[VectorResult]:
    """The results a resumed file already holds (none for a new one)."""
    results = []
    for doc in stream.previous if stream is not None else []:
        with contextlib.suppress(TypeError, KeyError):
            results.append(VectorResult.from_json(doc))
    return results


class Interrupted(Exception):
    """Ctrl-C during a run; the results so far are in its JSON lines file."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__(f"interrupted after {done} of {total} vectors; rerun with --resume")
        self.done = done
        self.total = total


def run_pack(
    pack_path: Path,
    backend_spec: str,
    *,
    jobs: int = 1,
    timeout: float = 60.0,
    ops: str | None = None,
    vectors: str | None = None,
    json_path: Path | None = None,
    resume: bool = False,
    progress: Callable[[int, int, int], None] | None = None,
    exclude: str | None = None,
    known: KnownFailures | None = None,
    shard: Any = None,
    executor: Any = None,  # conformance.executors.Executor: run on Dask workers
    capabilities: Any = None,  # conformance.capabilities.Manifest: skip what it leaves out
    claim: Any = None,  # conformance.claims.Claim: skip vectors that need more than it
) -> RunReport:
    """Run the selected vectors (see :class:`conformance.selection.Selection`; NoVectors
    when none is); ``progress(done, total, failed)`` after each result; Interrupted on
    Ctrl-C, after the results so far are on disk."""
    from vectors.pack import open_pack

    started = time.monotonic()
    # Fail early, in this process, on a backend that cannot exist.
    backend = get_backend(backend_spec)
    declared = format_modes(denormal_modes(backend))
    identity = identity_of(backend)
    selection = Selection(ops, vectors, exclude, known, shard)
    with open_pack(pack_path) as pack:
        entries = {e.name: e for e in pack.entries}
        names = selection.select(pack)
        # A damaged vector would read as a backend crash: refuse the pack up front.
        pack.check_hashes(names)
        pack_sha256 = pack.pack_sha256
        skipped: dict[str, str] = {}  # vectors the manifest leaves out -> why
        if capabilities is not None:
            from conformance.capabilities.select import skipped_vectors
            from conformance.spec import load_spec

            skipped = skipped_vectors(capabilities, pack, names, load_spec())
        if claim is not None:
            from conformance.claim_scope import beyond_claim

            skipped.update(beyond_claim(claim, pack, [n for n in names if n not in skipped]))
    stream = None
    if json_path is not None:  # locked, checked and repaired before any worker starts
        header = make_header(pack_sha256, backend_spec, {"timeout": timeout})
        stream = ResultsFile(json_path, header, resume=resume)
    done = {r.vector: r for r in _previous(stream) if r.vector in entries}
    for r in done.values():
        # Known-failure marks follow this run's list: one dropped or changed since the
        # interrupted run must not keep its old xfail (it would exit 0 where a fresh
        # run exits 1). The judge's verdict is what the file keeps beside the mark.
        if r.known_failure:
            r.verdict, r.known_failure = r.known_failure, ""
        if known is not None:
            mark_known(r, known.reason(entries[r.vector]))
    todo = [n for n in names if n not in done and n not in skipped]
    results: list[VectorResult] = [done[n] for n in names if n in done]

    failed = [sum(r.failed for r in results)]

    def on_result(res: VectorResult) -> None:
        if res.detail.startswith(PACK_DAMAGE):  # the pack's fault: stop, blame no one else
            raise PackError(f"{pack_path}: {res.vector}: {res.detail}")
        if known is not None:
            mark_known(res, known.reason(entries[res.vector]))
        results.append(res)
        failed[0] += res.failed
        if stream is not None:
            stream.append(res.to_json())
        if progress is not None:
            progress(len(results), len(names), failed[0])

    for n in names:  # skipped, with the reason: never run, never counted as passed
        if n in skipped and n not in done:
            e = entries[n]
            on_result(VectorResult(n, e.operator, e.mode, e.kind, SKIPPED, skipped[n]))
    workers = min(jobs, max(1, len(todo)))
    from conformance.executors import make_pool

    pool = make_pool(  # this machine's pool, or Dask workers that see the pack
        executor,
        pack_worker,
        (str(Path(pack_path).resolve()), backend_spec),
        workers,
        timeout,
        shared=(Path(pack_path),),
    )
    size = batch_size(backend)
    tasks: list[tuple[str, Any]] = [(n, n) for n in todo]
    if size > 1:
        chunks = [tuple(todo[k : k + size]) for k in range(0, len(todo), size)]
        tasks = [(c[0], Batch(c, c)) for c in chunks]
    try:
        pool.run(tasks, entries, on_result)
    except KeyboardInterrupt:
        raise Interrupted(len(results), len(names)) from None
    finally:
        pool.close()
        if stream is not None:
            stream.close()
    order = {n: i for i, n in enumerate(names)}
    results.sort(key=lambda r: order[r.vector])
    return RunReport(results, len(done), time.monotonic() - started, declared, identity)

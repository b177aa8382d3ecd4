"""Run a pack against a backend: every vector isolated, judged, streamed to disk.

Each vector runs in a worker process; a worker that crashes or overruns its timeout
is killed and replaced, and only that vector fails.  Results are appended to a JSON
lines file as they come, so an interrupted run resumes where it stopped.  The verdict
of a vector comes from :func:`judge`, which knows nothing of processes: the pytest
plugin uses it too.
"""

from __future__ import annotations

import contextlib
import copy
import multiprocessing as mp
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, cast

import numpy as np

from conformance import process_tree
from conformance.backends import BackendError, BackendResult, get_backend
from conformance.backends.base import (
    Backend,
    BatchBackend,
    batch_size,
    denormal_modes,
    identity_of,
)
from conformance.block_tensor import BlockScaled, TensorValue, is_block_scaled
from conformance.dtypes import DType, is_float_storage
from conformance.rejudge import NOTES, PLAIN, Rejudge, denormal_results
from conformance.results_file import PRIVATE_FDS, ResultsFile, is_header, make_header, read_lines
from conformance.selection import XFAIL, XPASS, KnownFailures, Selection
from conformance.spec import use_spec, vendored_spec
from conformance.worker import LOG_KEPT, captured_output, end_vector_processes, worker_main
from reference.compliance.denormals import FLUSH, SUPPORTED, DenormalMode, format_modes
from vectors.pack_errors import PackError, one_line
from vectors.pack_model import LoadedVector

# verdicts; the last four are failures of the backend
PASSED = "passed"
SKIPPED = "skipped"
INFO = "info"  # level vectors: unpredictable by the spec, reported but never judged
FAILED = "failed"
ERROR_EXPECTED = "error-expected-but-passed"
CRASHED = "crashed"
TIMEOUT = "timeout"
FAILURES = frozenset({FAILED, ERROR_EXPECTED, CRASHED, TIMEOUT})


@dataclass
class OutputVerdict:
    name: str
    passed: bool
    message: str
    margin: float | None = None
    failing: int = 0  # number of failing elements
    reading: str = PLAIN  # the reading it passed under (conformance.rejudge)


@dataclass
class VectorResult:
    vector: str
    operator: str
    mode: str
    kind: str
    verdict: str
    detail: str = ""
    margin: float | None = None  # worst fraction of the bound used over the outputs
    outputs: list[OutputVerdict] = field(default_factory=list)
    seconds: float = 0.0
    log: str = ""
    # The second reading an output needed to pass, if any (conformance.rejudge), and
    # per type the denormal behaviour this vector showed: "flush" (a flushing reading
    # was needed) or "supported" (a denormal result passed).
    reading: str = PLAIN
    denormals: dict[str, str] = field(default_factory=dict)
    # The verdict the judge gave a known failure (its verdict is then XFAIL or XPASS).
    known_failure: str = ""
    # A chain vector's operators in graph order (empty for one operator's vector): a
    # chain's failure is the chain's finding, not its last operator's.
    chain: list[str] = field(default_factory=list)

    @property
    def chain_path(self) -> str:
        """``CONV2D > BITWISE_AND > RESHAPE``, or "" for one operator's vector."""
        return " > ".join(self.chain)

    @property
    def failed(self) -> bool:
        return self.verdict in FAILURES

    def to_json(self) -> dict[str, Any]:
        doc = asdict(self)
        if self.margin is not None and not np.isfinite(self.margin):
            doc["margin"] = None  # JSON has no inf; the detail says why
        for o in doc["outputs"]:
            if o["margin"] is not None and not np.isfinite(o["margin"]):
                o["margin"] = None
        return doc

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> VectorResult:
        outputs = [OutputVerdict(**o) for o in doc.get("outputs", [])]
        return cls(**{**doc, "outputs": outputs})


def _as_storage(actual: Any, dt: Any) -> np.ndarray:
    """The backend's array in the tensor's storage dtype, refusing lossy conversions."""
    arr = np.asarray(actual)
    if arr.dtype == dt.storage:
        return arr
    if dt.is_float:
        if not is_float_storage(arr.dtype):
            raise ValueError(f"dtype {arr.dtype} is not a floating-point type")
        with np.errstate(over="ignore", invalid="ignore"):
            out = arr.astype(dt.storage)
            back = out.astype(np.float64)
        same = (back == arr.astype(np.float64)) | (
            np.isnan(back) & np.isnan(arr.astype(np.float64))
        )
        if not np.all(same):
            raise ValueError(f"values that are not {dt} values (dtype {arr.dtype})")
        return out
    if arr.dtype.kind not in "biu":
        raise ValueError(f"dtype {arr.dtype}, expected {dt.storage} for {dt}")
    wide = arr.astype(np.int64)
    if not np.all(dt.in_range(wide)) if dt.is_int else not np.all((wide == 0) | (wide == 1)):
        raise ValueError(f"values outside the range of {dt}")
    return wide.astype(dt.storage)


def _judge_block_scaled(vector: LoadedVector, name: str, value: TensorValue) -> OutputVerdict:
    """The verdict on a block-scaled output (reference.compliance.composite); such an
    output has no partner and no second reading (a bound only when it is judged as a
    cast's values and scales, SCALED_VALUES)."""
    from reference import compliance

    check = vector.checks.get(name)
    if check is None or check.descriptor is None:
        return OutputVerdict(name, True, "not checked")
    try:
        v = compliance.check(vector.expected[name], check.descriptor, value, check.bound)
    except ValueError as exc:
        return OutputVerdict(name, False, f"unusable output: {exc}")
    return OutputVerdict(name, v.passed, v.message, float(v.max_margin), int(v.failing_count))


def judge(
    vector: LoadedVector,
    result: BackendResult,
    seconds: float = 0.0,
    *,
    denormals: Mapping[DType, DenormalMode] | None = None,
) -> VectorResult:
    """The verdict of one vector from what the backend did with it.

    ``denormals`` are the backend's declared denormal modes (none: either is accepted);
    an output failing its plain check is given the second readings of
    :mod:`conformance.rejudge`.
    """
    base: dict[str, Any] = dict(  # the fields every verdict shares
        vector=vector.name,
        operator=vector.operator,
        mode=vector.mode,
        kind=vector.kind,
        seconds=seconds,
        log=result.log[-2000:],
        chain=vector.provenance.chain,
    )
    if vector.kind == "level":
        did = f"rejected it: {result.rejected}" if result.rejected else "returned outputs"
        return VectorResult(**base, verdict=INFO, detail=f"above a level limit; the backend {did}")
    if vector.kind == "error":
        if result.rejected is not None:
            return VectorResult(**base, verdict=PASSED, detail=f"rejected: {result.rejected}")
        rule = vector.rule or {}
        return VectorResult(
            **base,
            verdict=ERROR_EXPECTED,
            detail=f"accepted a graph that breaks ERROR_IF({rule.get('clause', '?')})",
        )
    if result.rejected is not None:
        return VectorResult(
            **base, verdict=FAILED, detail=f"rejected a valid graph: {result.rejected}"
        )
    main = vector.graph.main
    if not main.outputs:  # an operator with no outputs (ASSERT_EQUAL_SHAPE): it ran
        return VectorResult(
            **base, verdict=PASSED, detail="ran without error (the graph has no outputs)"
        )
    judged: dict[str, OutputVerdict] = {}
    worst: float | None = None
    retry: Rejudge | None = None
    observed: dict[str, str] = {}
    from reference import compliance

    usable: dict[str, np.ndarray] = {}  # outputs in their storage, of the right shape
    for name in main.outputs:
        t = main.tensors[name]
        if name not in result.outputs:
            judged[name] = OutputVerdict(name, False, "no output produced")
            continue
        if is_block_scaled(t.dtype):  # values and scales, judged alone and exactly
            judged[name] = _judge_block_scaled(vector, name, result.outputs[name])
            margin = judged[name].margin
            if margin is not None:
                worst = margin if worst is None else max(worst, margin)
            continue
        try:
            actual = _as_storage(result.outputs[name], t.dtype)
            if tuple(actual.shape) != t.shape:
                raise ValueError(f"shape {list(actual.shape)}, expected {list(t.shape)}")
        except ValueError as exc:
            judged[name] = OutputVerdict(name, False, f"unusable output: {exc}")
            continue
        usable[name] = actual
    for name, actual in usable.items():
        t = main.tensors[name]
        check = vector.checks.get(name)
        if check is None or check.descriptor is None:
            judged[name] = OutputVerdict(name, True, "not checked")
            continue
        if check.descriptor.mode is compliance.Mode.BLOCK_SCALES:
            continue  # judged once, with the values output it names (below)
        partner = None
        other = check.descriptor.partner
        if other is not None:
            if other not in usable:
                why = f"not judged: its scale output {other!r} is missing or unusable"
                judged[name] = OutputVerdict(name, False, why)
                continue
            reference = vector.expected[other]
            if not isinstance(reference, np.ndarray):  # a scale output is an array
                judged[name] = OutputVerdict(name, False, f"unusable scale output {other!r}")
                continue
            partner = compliance.Partner(other, main.tensors[other].dtype, reference, usable[other])
        try:
            v = compliance.check(
                vector.expected[name], check.descriptor, actual, check.bound, partner=partner
            )
        except ValueError as exc:
            judged[name] = OutputVerdict(name, False, f"unusable output: {exc}")
            continue
        reading, message = PLAIN, v.message
        if not v.passed:
            retry = retry or Rejudge(vector, denormals or {})
            second = retry.retry(name, actual, partner.actual if partner is not None else None)
            if second is not None:
                v, reading = second.verdict, second.reading
                message = f"{NOTES[reading]}: {v.message}"
                observed.update((d.name, FLUSH) for d in second.flushed)
        elif denormal_results(actual, t.dtype):
            observed.setdefault(t.dtype.name, SUPPORTED)
        margin = float(v.max_margin)
        worst = margin if worst is None else max(worst, margin)
        judged[name] = OutputVerdict(
            name, bool(v.passed), message, margin, int(v.failing_count), reading
        )
        if v.scales is not None:  # the scale output's part of the same check
            s = v.scales
            text = f"{s.message}, judged with {name}"
            judged[s.name] = OutputVerdict(
                s.name, s.passed, text, failing=s.failing_count, reading=reading
            )
    for name in main.outputs:  # scales whose values output could not be judged
        if name not in judged:
            d = vector.checks[name].descriptor
            why = f"not judged: its values output {d.partner if d else None!r} was not judged"
            judged[name] = OutputVerdict(name, False, why)
    verdicts = [judged[name] for name in main.outputs]
    ok = all(o.passed for o in verdicts)
    detail = "; ".join(f"{o.name}: {o.message}" for o in verdicts)
    used = next((o.reading for o in verdicts if o.reading != PLAIN), PLAIN)
    return VectorResult(
        **base,
        verdict=PASSED if ok else FAILED,
        detail=detail,
        margin=worst,
        outputs=verdicts,
        reading=used,
        denormals=observed if ok else {},
    )


# -- isolated execution ---------------------------------------------------------------


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


@dataclass(frozen=True)
class Batch:
    """Vectors for one worker to prepare together (``backend.prepare``, see
    :func:`conformance.backends.base.batch_size`), then run one by one."""

    names: tuple[str, ...]
    messages: tuple[Any, ...]


PREPARED = {"prepared": True}  # what a worker sends when a batch is prepared
NOT_STARTED = "not-started"  # key of what a worker sends when its backend cannot start


class WorkerStartError(BackendError):
    """The backend cannot run in a worker process: no vector can run (exit status 2)."""


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


@dataclass
class _Slot:
    process: Any
    conn: Connection
    name: str | None = None
    started: float = 0.0
    # The (name, message) tasks of a batch still to come back, ``name``'s first.
    todo: list[tuple[str, Any]] = field(default_factory=list)
    preparing: bool = False
    tmp: str = ""  # the worker's temporary folder, removed with the worker
    deaths: int = 0  # workers of this slot that died before taking a vector


class IsolatedPool:
    """Worker processes that each run one vector at a time, replaced when one dies or
    overruns the timeout."""

    def __init__(
        self, target: Callable[..., None], args: tuple[Any, ...], workers: int, timeout: float
    ) -> None:
        """``target(conn, *args)`` is the worker loop (see :func:`serve`)."""
        self.ctx = mp.get_context("fork")
        self.target = target
        self.args = args
        self.timeout = timeout
        self.slots: list[_Slot] = []
        for _ in range(max(1, workers)):  # one by one: each closes the ends made before it
            self.slots.append(self._spawn())

    def _spawn(self) -> _Slot:
        parent, child = self.ctx.Pipe()
        tmp = tempfile.mkdtemp(prefix="tosa-run-")
        # The worker must not hold what is the parent's: every parent end (else it never
        # sees EOF when the parent dies) and the locked results file.
        ends = [s.conn.fileno() for s in self.slots if not s.conn.closed]
        private = [parent.fileno(), *ends, *PRIVATE_FDS]
        bootstrap = (child, private, tmp, os.getpid(), self.target, *self.args)
        p = self.ctx.Process(target=worker_main, args=bootstrap, daemon=True)
        p.start()
        child.close()
        return _Slot(p, parent, tmp=tmp)

    def _end(self, slot: _Slot) -> None:
        """Kill the worker and every process below it; remove its temporary folder."""
        if slot.process.is_alive():
            process_tree.stop(slot.process.pid)  # it can start nothing more
            process_tree.kill_descendants(slot.process.pid)
            slot.process.kill()
        slot.process.join(5)
        slot.conn.close()
        shutil.rmtree(slot.tmp, ignore_errors=True)

    def _replace(self, slot: _Slot) -> None:
        self._end(slot)
        fresh = self._spawn()
        slot.process, slot.conn, slot.name, slot.tmp = fresh.process, fresh.conn, None, fresh.tmp
        slot.todo, slot.preparing = [], False

    def run(
        self,
        tasks: list[tuple[str, Any]],
        entries: dict[str, Any],
        on_result: Callable[[VectorResult], None],
    ) -> None:
        """Run ``(name, message)`` tasks; ``entries[name]`` has operator, mode and kind,
        for the results of vectors that crash or time out.  A :class:`Batch` message is
        a task for each of its vectors; when its worker dies or overruns the time while
        preparing it, its vectors are sent again one by one, so that only a vector that
        kills or hangs the backend on its own is blamed."""
        pending = list(reversed(tasks))
        busy = 0
        while pending or busy:
            for slot in self.slots:
                if slot.name is None and pending:
                    slot.name, message = pending.pop()
                    if isinstance(message, Batch):
                        slot.todo = list(zip(message.names, message.messages, strict=True))
                        slot.name, slot.preparing = message.names[0], True
                    slot.started = time.monotonic()
                    try:
                        slot.conn.send(message)
                    except OSError:  # the worker is gone already: why, and try again
                        self._check_started(slot)
                        pending.append((slot.name, message))
                        self._replace(slot)
                        continue
                    busy += 1
            ready = mp.connection.wait([s.conn for s in self.slots if s.name], timeout=0.05)
            now = time.monotonic()
            for slot in self.slots:
                if slot.name is None:
                    continue
                name = slot.name
                e = entries[name]
                if slot.conn in ready:
                    try:
                        doc = slot.conn.recv()
                    except (EOFError, OSError):
                        doc = None
                    if doc == PREPARED:
                        slot.preparing, slot.started = False, now
                        continue
                    if isinstance(doc, dict) and NOT_STARTED in doc:
                        raise WorkerStartError(_not_started(doc[NOT_STARTED]))
                    if doc is not None:
                        slot.name = None
                        if slot.todo:  # the next vector of the batch is under way
                            slot.todo.pop(0)
                            slot.name = slot.todo[0][0] if slot.todo else None
                            slot.started = now
                        busy -= slot.name is None
                        on_result(VectorResult.from_json(doc))
                        continue
                elif not slot.process.is_alive() and _unread(slot.conn):
                    # Dead, but what it sent before dying is still in the pipe (it died
                    # after this wait): read that first, or a vector it finished would
                    # be blamed for the death of the next one.
                    continue
                if slot.preparing and (
                    not slot.process.is_alive()
                    or slot.conn in ready
                    or now - slot.started > self.timeout * max(1.0, len(slot.todo) / 16)
                ):
                    pending.extend(reversed(slot.todo))  # no vector is to blame yet
                    self._replace(slot)
                    busy -= 1
                    continue
                if slot.preparing:
                    continue
                lost = not slot.process.is_alive() or slot.conn in ready
                if not lost and now - slot.started <= self.timeout:
                    continue
                # The vector under way is blamed; the rest of its batch goes on.
                rest = slot.todo[1:]
                if len(rest) > 1:
                    names, messages = zip(*rest, strict=True)
                    pending.append((names[0], Batch(names, messages)))
                else:
                    pending.extend(rest)
                if lost:
                    slot.process.join(1)  # reap it, so that its exit code is known
                    code = slot.process.exitcode
                    why = f"killed by signal {-code}" if code and code < 0 else f"exit {code}"
                    verdict, detail = CRASHED, f"the backend crashed the worker ({why})"
                else:
                    verdict, detail = TIMEOUT, f"no result after {self.timeout:g} s"
                on_result(
                    VectorResult(
                        name,
                        e.operator,
                        e.mode,
                        e.kind,
                        verdict,
                        detail,
                        seconds=now - slot.started,
                    )
                )
                self._replace(slot)
                busy -= 1

    def _check_started(self, slot: _Slot) -> None:
        """A worker that died before its first vector: the backend's reason if it sent
        one, else its exit status, as a WorkerStartError. Fresh workers that keep dying
        so would otherwise be replaced for ever."""
        with contextlib.suppress(OSError, EOFError):
            while slot.conn.poll():
                doc = slot.conn.recv()
                if isinstance(doc, dict) and NOT_STARTED in doc:
                    raise WorkerStartError(_not_started(doc[NOT_STARTED]))
        slot.process.join(1)
        slot.deaths += 1
        if slot.deaths >= 2:
            code = slot.process.exitcode
            raise WorkerStartError(
                f"the backend's worker process exited (status {code}) before it ran any "
                "vector, twice; run one vector with --jobs 1 to see why"
            )

    def close(self) -> None:
        for slot in self.slots:
            if slot.process.is_alive():
                with contextlib.suppress(OSError):  # a worker that died meanwhile
                    slot.conn.send(None)
        for slot in self.slots:
            slot.process.join(2)
            self._end(slot)  # also a worker still busy (Ctrl-C), and what it started


def _unread(conn: Connection) -> bool:
    """Whether ``conn`` holds data not yet received (EOF alone is not data)."""
    try:
        return bool(conn.poll(0))
    except (EOFError, OSError):
        return False


def _described(exc: BaseException) -> str:
    try:
        text = str(exc)
        return one_line(f"{type(exc).__name__}: {text}" if text else type(exc).__name__)
    except Exception:  # an exception whose str() fails still names its type
        return f"{type(exc).__name__} (its message cannot be shown)"


def _not_started(reason: str) -> str:
    return (
        f"the backend cannot start in a worker process ({reason}); no vector was run. "
        "A backend must be usable in a forked process"
    )


# -- the run ------------------------------------------------------------------------


@dataclass
class RunReport:
    results: list[VectorResult]
    resumed: int  # results taken over from an earlier, interrupted run
    seconds: float
    denormals: dict[str, str] = field(default_factory=dict)  # the backend's declared modes
    backend: dict[str, Any] = field(default_factory=dict)  # identity_of(the backend)

    @property
    def failed(self) -> list[VectorResult]:
        return [r for r in self.results if r.failed]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.results:
            out[r.verdict] = out.get(r.verdict, 0) + 1
        return out


def read_results(path: Path) -> list[VectorResult]:
    """Results in a JSON lines file (conformance.results_file); its header line, and a
    torn or garbled line (a killed run), are skipped."""
    results = []
    for doc in read_lines(path):
        if not is_header(doc):
            with contextlib.suppress(TypeError, KeyError):
                results.append(VectorResult.from_json(doc))
    return results


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


def mark_known(res: VectorResult, reason: str | None) -> None:
    """Turn a listed known failure's verdict into XFAIL (it failed) or XPASS (it passed),
    keeping the judge's verdict in ``known_failure``."""
    if reason is None or res.verdict in (SKIPPED, INFO, XFAIL, XPASS):
        return
    res.known_failure = res.verdict
    res.verdict = XFAIL if res.failed else XPASS


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


def __getattr__(name: str) -> Any:
    """``summary_lines`` and ``write_junit`` moved to conformance.run_summary; still
    importable from here, lazily, since that module imports this one."""
    if name in ("summary_lines", "write_junit"):
        from conformance import run_summary

        return getattr(run_summary, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

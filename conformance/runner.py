"""Run a pack against a backend: every vector isolated, judged, streamed to disk.

Each vector runs in a worker process; a worker that crashes or overruns its timeout
is killed and replaced, and only that vector fails.  Results are appended to a JSON
lines file as they come, so an interrupted run resumes where it stopped.  The verdict
of a vector comes from :func:`judge`, which knows nothing of processes: the pytest
plugin uses it too.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing as mp
import re
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np

from conformance.backends import BackendResult, get_backend
from conformance.backends.base import batch_size, denormal_modes
from conformance.dtypes import DType, is_float_storage
from conformance.rejudge import NOTES, PLAIN, Rejudge, denormal_results
from reference.compliance.denormals import FLUSH, SUPPORTED, DenormalMode, format_modes
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
    base = dict(
        vector=vector.name,
        operator=vector.operator,
        mode=vector.mode,
        kind=vector.kind,
        seconds=seconds,
        log=result.log[-2000:],
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
    verdicts: list[OutputVerdict] = []
    worst: float | None = None
    retry: Rejudge | None = None
    observed: dict[str, str] = {}
    from reference import compliance

    for name in main.outputs:
        t = main.tensors[name]
        if name not in result.outputs:
            verdicts.append(OutputVerdict(name, False, "no output produced"))
            continue
        try:
            actual = _as_storage(result.outputs[name], t.dtype)
            if tuple(actual.shape) != t.shape:
                raise ValueError(f"shape {list(actual.shape)}, expected {list(t.shape)}")
            check = vector.checks.get(name)
            if check is None or check.descriptor is None:
                verdicts.append(OutputVerdict(name, True, "not checked"))
                continue
            v = compliance.check(vector.expected[name], check.descriptor, actual, check.bound)
        except ValueError as exc:
            verdicts.append(OutputVerdict(name, False, f"unusable output: {exc}"))
            continue
        reading, message = PLAIN, v.message
        if not v.passed:
            retry = retry or Rejudge(vector, denormals or {})
            second = retry.retry(name, actual)
            if second is not None:
                v, reading = second.verdict, second.reading
                message = f"{NOTES[reading]}: {v.message}"
                observed.update((d.name, FLUSH) for d in second.flushed)
        elif denormal_results(actual, t.dtype):
            observed.setdefault(t.dtype.name, SUPPORTED)
        margin = float(v.max_margin)
        worst = margin if worst is None else max(worst, margin)
        verdicts.append(
            OutputVerdict(name, bool(v.passed), message, margin, int(v.failing_count), reading)
        )
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


def run_one(backend: Any, vector: LoadedVector) -> VectorResult:
    """Run one loaded vector on a backend and judge it (in a worker process)."""
    started = time.monotonic()
    reason = backend.unsupported(vector)
    if reason is not None:
        return VectorResult(vector.name, vector.operator, vector.mode, vector.kind, SKIPPED, reason)
    with tempfile.TemporaryDirectory(prefix="tosa-run-") as tmp:
        result = backend.run(vector, Path(tmp))
    return judge(vector, result, time.monotonic() - started, denormals=denormal_modes(backend))


def pack_worker(conn: Connection, pack_path: str, backend_spec: str) -> None:
    """Worker process: receives vector names of a pack, sends back result documents."""
    from vectors.pack import open_pack

    pack = open_pack(pack_path)
    serve(conn, backend_spec, pack.load, lambda name: _meta(pack.entry(name)))


def _meta(entry: Any) -> tuple[str, str, str]:
    return entry.operator, entry.mode, entry.kind


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
    backend = get_backend(backend_spec)
    while True:
        message = conn.recv()
        if message is None:
            return
        if isinstance(message, Batch):
            _serve_batch(conn, backend, message, load, describe)
        else:
            conn.send(_serve_one(backend, message, load, describe))


def _serve_one(
    backend: Any,
    message: Any,
    load: Callable[[Any], LoadedVector],
    describe: Callable[[Any], tuple[str, str, str]],
    vector: LoadedVector | None = None,
    extra: float = 0.0,
) -> dict[str, Any]:
    started = time.monotonic()
    try:
        res = run_one(backend, vector if vector is not None else load(message))
    except Exception as exc:  # a backend bug is this vector's failure, not the run's
        op, mode, kind = describe(message)
        name = message if isinstance(message, str) else getattr(message, "name", "?")
        res = VectorResult(
            name, op, mode, kind, CRASHED, f"the backend raised {type(exc).__name__}: {exc}"
        )
    res.seconds = time.monotonic() - started + extra
    return res.to_json()


@dataclass(frozen=True)
class Batch:
    """Vectors for one worker to prepare together (``backend.prepare``, see
    :func:`conformance.backends.base.batch_size`), then run one by one."""

    names: tuple[str, ...]
    messages: tuple[Any, ...]


PREPARED = {"prepared": True}  # what a worker sends when a batch is prepared


def _serve_batch(
    conn: Connection,
    backend: Any,
    batch: Batch,
    load: Callable[[Any], LoadedVector],
    describe: Callable[[Any], tuple[str, str, str]],
) -> None:
    started = time.monotonic()
    loaded: dict[int, LoadedVector] = {}
    for k, message in enumerate(batch.messages):
        with contextlib.suppress(Exception):  # it fails again, as its own result, below
            loaded[k] = load(message)
    # prepare() only gets ahead of run(): when it fails, each vector runs unprepared.
    with contextlib.suppress(Exception), tempfile.TemporaryDirectory(prefix="tosa-run-") as tmp:
        backend.prepare(list(loaded.values()), Path(tmp))
    conn.send(PREPARED)
    share = (time.monotonic() - started) / max(1, len(batch.messages))
    for k, message in enumerate(batch.messages):
        conn.send(_serve_one(backend, message, load, describe, loaded.get(k), share))


@dataclass
class _Slot:
    process: Any
    conn: Connection
    name: str | None = None
    started: float = 0.0
    # The (name, message) tasks of a batch still to come back, ``name``'s first.
    todo: list[tuple[str, Any]] = field(default_factory=list)
    preparing: bool = False


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
        self.slots = [self._spawn() for _ in range(max(1, workers))]

    def _spawn(self) -> _Slot:
        parent, child = self.ctx.Pipe()
        p = self.ctx.Process(target=self.target, args=(child, *self.args), daemon=True)
        p.start()
        child.close()
        return _Slot(p, parent)

    def _replace(self, slot: _Slot) -> None:
        if slot.process.is_alive():
            slot.process.kill()
        slot.process.join(5)
        slot.conn.close()
        fresh = self._spawn()
        slot.process, slot.conn, slot.name = fresh.process, fresh.conn, None
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
                    slot.conn.send(message)
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
                    if doc is not None:
                        slot.name = None
                        if slot.todo:  # the next vector of the batch is under way
                            slot.todo.pop(0)
                            slot.name = slot.todo[0][0] if slot.todo else None
                            slot.started = now
                        busy -= slot.name is None
                        on_result(VectorResult.from_json(doc))
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
                if slot.todo and (
                    not slot.process.is_alive()
                    or slot.conn in ready
                    or now - slot.started > self.timeout
                ):
                    # The vector under way is blamed below; the rest of its batch goes on.
                    rest = slot.todo[1:]
                    if len(rest) > 1:
                        names, messages = zip(*rest, strict=True)
                        pending.append((names[0], Batch(names, messages)))
                    else:
                        pending.extend(rest)
                if not slot.process.is_alive() or slot.conn in ready:
                    slot.process.join(1)  # reap it, so that its exit code is known
                    code = slot.process.exitcode
                    why = f"killed by signal {-code}" if code and code < 0 else f"exit {code}"
                    on_result(
                        VectorResult(
                            name,
                            e.operator,
                            e.mode,
                            e.kind,
                            CRASHED,
                            f"the backend crashed the worker ({why})",
                            seconds=now - slot.started,
                        )
                    )
                    self._replace(slot)
                    busy -= 1
                elif now - slot.started > self.timeout:
                    on_result(
                        VectorResult(
                            name,
                            e.operator,
                            e.mode,
                            e.kind,
                            TIMEOUT,
                            f"no result after {self.timeout:g} s",
                            seconds=now - slot.started,
                        )
                    )
                    self._replace(slot)
                    busy -= 1

    def close(self) -> None:
        for slot in self.slots:
            if slot.process.is_alive():
                with contextlib.suppress(OSError):  # a worker that died meanwhile
                    slot.conn.send(None)
                slot.process.join(2)
                if slot.process.is_alive():
                    slot.process.kill()
            slot.conn.close()


# -- the run ------------------------------------------------------------------------


@dataclass
class RunReport:
    results: list[VectorResult]
    resumed: int  # results taken over from an earlier, interrupted run
    seconds: float
    denormals: dict[str, str] = field(default_factory=dict)  # the backend's declared modes

    @property
    def failed(self) -> list[VectorResult]:
        return [r for r in self.results if r.failed]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.results:
            out[r.verdict] = out.get(r.verdict, 0) + 1
        return out


def read_results(path: Path) -> list[VectorResult]:
    """Results already in a JSON lines file; a torn last line (a killed run) is ignored."""
    results = []
    if not path.exists():
        return results
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            results.append(VectorResult.from_json(json.loads(line)))
        except (json.JSONDecodeError, TypeError):
            continue
    return results


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
    progress: Callable[[int, int], None] | None = None,
) -> RunReport:
    from vectors.pack import open_pack

    started = time.monotonic()
    # Fail early, in this process, on a backend that cannot exist.
    backend = get_backend(backend_spec)
    declared = format_modes(denormal_modes(backend))
    with open_pack(pack_path) as pack:
        entries = {e.name: e for e in pack.entries}
    pattern = re.compile(ops) if ops else None
    by_name = re.compile(vectors) if vectors else None
    names = [
        n
        for n, e in entries.items()
        if (pattern is None or pattern.fullmatch(e.operator))
        and (by_name is None or by_name.fullmatch(n))
    ]
    done: dict[str, VectorResult] = {}
    if resume and json_path is not None:
        done = {r.vector: r for r in read_results(json_path) if r.vector in entries}
    elif json_path is not None and json_path.exists():
        json_path.unlink()
    todo = [n for n in names if n not in done]
    results: list[VectorResult] = [done[n] for n in names if n in done]
    stream = json_path.open("a", encoding="utf-8") if json_path is not None else None

    def on_result(res: VectorResult) -> None:
        results.append(res)
        if stream is not None:
            stream.write(json.dumps(res.to_json(), sort_keys=True) + "\n")
            stream.flush()
        if progress is not None:
            progress(len(results), len(names))

    workers = min(jobs, max(1, len(todo)))
    pool = IsolatedPool(pack_worker, (str(pack_path), backend_spec), workers, timeout)
    size = batch_size(backend)
    tasks: list[tuple[str, Any]] = [(n, n) for n in todo]
    if size > 1:
        chunks = [tuple(todo[k : k + size]) for k in range(0, len(todo), size)]
        tasks = [(c[0], Batch(c, c)) for c in chunks]
    try:
        pool.run(tasks, entries, on_result)
    finally:
        pool.close()
        if stream is not None:
            stream.close()
    order = {n: i for i, n in enumerate(names)}
    results.sort(key=lambda r: order[r.vector])
    return RunReport(results, len(done), time.monotonic() - started, declared)


def summary_lines(report: RunReport) -> Iterable[str]:
    """A table by operator and mode, then the failures, then the totals."""
    groups: dict[tuple[str, str], dict[str, int]] = {}
    for r in report.results:
        g = groups.setdefault((r.operator, r.mode), {})
        g[r.verdict] = g.get(r.verdict, 0) + 1
    cols = [PASSED, FAILED, ERROR_EXPECTED, CRASHED, TIMEOUT, SKIPPED, INFO]
    used = [c for c in cols if any(c in g for g in groups.values())]
    header = ["operator", "mode", *used]
    rows = [[op, mode, *(str(g.get(c, 0)) for c in used)] for (op, mode), g in groups.items()]
    widths = [max(len(x) for x in col) for col in zip(header, *rows, strict=True)]
    yield "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()
    for row in rows:
        yield "  ".join(x.ljust(w) for x, w in zip(row, widths, strict=True)).rstrip()
    failures = report.failed
    if failures:
        yield ""
        yield f"{len(failures)} failing vectors:"
        for r in failures[:50]:
            yield f"  {r.vector}: {r.verdict}: {r.detail[:300]}"
        if len(failures) > 50:
            yield f"  ... and {len(failures) - 50} more (see the JSON report)"
    second: dict[str, int] = {}
    for r in report.results:
        if r.reading != PLAIN and not r.failed:
            second[r.reading] = second.get(r.reading, 0) + 1
    if second:
        shown = ", ".join(f"{k} {n}" for k, n in sorted(second.items()))
        yield ""
        yield f"passed under a second reading (docs/compliance.md): {shown}"
    counts = report.counts()
    total = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    resumed = f" ({report.resumed} from the earlier run)" if report.resumed else ""
    yield ""
    yield f"{len(report.results)} vectors{resumed}: {total} in {report.seconds:.1f} s"


def write_junit(report: RunReport, path: Path, backend: str) -> None:
    """JUnit XML: one test suite per operator, one test case per vector."""
    from xml.etree import ElementTree as ET

    root = ET.Element("testsuites", name=f"tosa-conformance on {backend}")
    by_op: dict[str, list[VectorResult]] = {}
    for r in report.results:
        by_op.setdefault(r.operator, []).append(r)
    for op, results in by_op.items():
        suite = ET.SubElement(
            root,
            "testsuite",
            name=op,
            tests=str(len(results)),
            failures=str(sum(r.failed for r in results)),
            skipped=str(sum(r.verdict in (SKIPPED, INFO) for r in results)),
        )
        for r in results:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=f"{op}.{r.mode}",
                name=r.vector,
                time=f"{r.seconds:.3f}",
            )
            if r.failed:
                ET.SubElement(
                    case, "failure", type=r.verdict, message=r.detail[:500]
                ).text = r.detail
            elif r.verdict in (SKIPPED, INFO):
                ET.SubElement(case, "skipped", message=r.detail[:500])
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)

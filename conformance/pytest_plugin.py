"""pytest plugin: the vectors of a pack as test items.

    pytest --tosa-pack PACK --tosa-backend BACKEND [--tosa-timeout S] [--tosa-in-process]

Each vector becomes an item ``OPERATOR::VECTOR`` (under one collector per operator),
marked ``tosa``, with its kind (``valid``, ``error``, ``level``) and its operator
(``ADD``) as markers and its mode as a keyword, so ``-k``, ``-m``, ``--lf``, ``-n``
(xdist) and ``--junitxml`` work as for any test.  An item runs
:func:`conformance.runner.run_one` and is judged by :func:`conformance.verdicts.judge`:
a failing vector fails with the judge's detail, a vector the backend declines is
skipped with its reason, a level vector (reported, never judged) is skipped too.

By default every item runs in a worker process of :class:`conformance.executors.local.IsolatedPool`
(one per pytest process, so one per xdist worker): a backend that crashes or hangs
fails that vector only.  ``--tosa-in-process`` runs the backend in the pytest process
instead, for ``--pdb`` and breakpoints; a backend exception is then an ordinary test
error with its traceback.

``--tosa-known-failures FILE`` takes the file ``tosa-conformance run --known-failures``
takes (see :mod:`conformance.selection`): a listed vector is marked ``xfail`` with the
line's reason, so it is reported as xfailed or xpassed and does not fail the session;
a line that matches no vector of the pack is a usage error.  ``--tosa-exclude REGEX``
deselects vectors as ``run --exclude`` leaves them out.  Test ids such as
``ADD::ADD_fp32_valid_000``, copied from pytest's output, can be given as arguments:
only those vectors run.

The plugin is registered through the ``pytest11`` entry point and so is active in
every pytest run where this package is installed: without ``--tosa-pack`` it adds
nothing.  It imports nothing heavy until a pack is given.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Generator, Iterator

    from conformance.backends.base import Backend
    from conformance.executors.local import IsolatedPool
    from conformance.verdicts import VectorResult
    from vectors.pack import Pack, PackEntry

KINDS = ("valid", "error", "level")
_LOG_LINES = 30  # lines of the backend's log shown under a failure


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tosa", "TOSA conformance vectors (tosa-conformance)")
    group.addoption(
        "--tosa-pack",
        metavar="PACK",
        default=None,
        help="run every vector of this pack (folder or zip) as a test item",
    )
    group.addoption(
        "--tosa-backend",
        metavar="BACKEND",
        default=None,
        help="the backend under test, NAME or NAME:ARGUMENT as for 'tosa-conformance run'",
    )
    group.addoption(
        "--tosa-timeout",
        metavar="SECONDS",
        type=float,
        default=60.0,
        help="per-vector timeout of the isolated worker (default 60)",
    )
    group.addoption(
        "--tosa-in-process",
        action="store_true",
        default=False,
        help="run the backend in the pytest process: no crash isolation or timeout, "
        "but --pdb and breakpoints work",
    )
    group.addoption(
        "--tosa-known-failures",
        metavar="FILE",
        default=None,
        help="vectors expected to fail (one name or regex a line, '# reason'): xfail",
    )
    group.addoption(
        "--tosa-with-tests",
        action="store_true",
        default=False,
        help="with --tosa-pack, also collect the test files pytest would find on its own "
        "(testpaths, the current folder); by default only the pack's vectors run",
    )
    group.addoption(
        "--tosa-exclude",
        metavar="REGEX",
        default=None,
        help="deselect vectors whose name or id OPERATOR::VECTOR matches fully",
    )


@dataclass
class _PackRun:
    """What a session with --tosa-pack runs, and the resources it opened."""

    pack_path: Path
    backend_spec: str
    timeout: float
    in_process: bool
    entries: list[PackEntry]
    pack_sha256: str
    backend: Backend  # made while checking the option; used in-process
    known: Any = None  # conformance.selection.KnownFailures from --tosa-known-failures
    exclude: re.Pattern[str] | None = None
    ids: set[str] = field(default_factory=set)  # OPERATOR::VECTOR ids given as arguments
    _pack: Pack | None = None
    _pool: IsolatedPool | None = None
    _closed: bool = field(default=False, repr=False)

    def run(self, entry: PackEntry) -> VectorResult:
        if self.in_process:
            from conformance.runner import run_one
            from vectors.pack import open_pack

            if self._pack is None:
                from conformance.backends.sandbox import keep_out

                keep_out(self.pack_path)
                self._pack = open_pack(self.pack_path)
            return run_one(self.backend, self._pack.load(entry.name))
        from conformance.executors.local import IsolatedPool
        from conformance.runner import pack_worker

        if self._pool is None:
            # One worker, reused from item to item and replaced when it dies: the
            # backend is made once per worker, as in 'tosa-conformance run'.
            args = (str(self.pack_path), self.backend_spec)
            self._pool = IsolatedPool(pack_worker, args, 1, self.timeout)
        results: list[VectorResult] = []
        self._pool.run([(entry.name, entry.name)], {entry.name: entry}, results.append)
        return results[0]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        if self._pack is not None:
            self._pack.close()
            self._pack = None

    def rerun_command(self, vector: str) -> str:
        argv = ["tosa-conformance", "run", "--pack", str(self.pack_path)]
        argv += ["--backend", self.backend_spec, "--vectors", vector]
        return shlex.join(argv)


_STATE = pytest.StashKey[_PackRun]()


def pytest_configure(config: pytest.Config) -> None:
    pack = config.getoption("tosa_pack")
    spec = config.getoption("tosa_backend")
    if pack is None:
        if spec is not None:
            raise pytest.UsageError("--tosa-backend needs --tosa-pack")
        return
    if spec is None:
        raise pytest.UsageError("--tosa-pack needs --tosa-backend (e.g. --tosa-backend reference)")
    from conformance.backends import BackendError, get_backend
    from vectors.pack import PackError, open_pack

    # Relative to where pytest was started, as the user typed it (xdist workers and
    # a changed rootdir see the same file).
    path = (config.invocation_params.dir / pack).resolve()
    try:
        with open_pack(path) as p:
            entries, sha = list(p.entries), p.pack_sha256
    except PackError as exc:
        raise pytest.UsageError(f"--tosa-pack: {exc}") from None
    try:
        backend = get_backend(spec)  # fail before collection on a backend that cannot exist
    except BackendError as exc:
        raise pytest.UsageError(f"--tosa-backend: {exc}") from None
    timeout = config.getoption("tosa_timeout")
    if timeout <= 0:
        raise pytest.UsageError("--tosa-timeout must be positive")
    in_process = config.getoption("tosa_in_process")
    state = _PackRun(path, spec, timeout, in_process, entries, sha, backend)
    _configure_selection(config, state)
    if config.args_source is not pytest.Config.ArgsSource.ARGS and not config.getoption(
        "tosa_with_tests"
    ):
        # Paths pytest chose itself (a project's testpaths, the folder it runs in) are
        # not what `pytest --tosa-pack` asks for: the pack's vectors alone run.
        config.args[:] = []
    config.stash[_STATE] = state
    # Registered, so that --strict-markers accepts them and -m can select by them.
    config.addinivalue_line("markers", "tosa: a vector of the --tosa-pack pack")
    for kind in KINDS:
        config.addinivalue_line("markers", f"{kind}: a TOSA vector of kind {kind}")
    for op in sorted({e.operator for e in entries}):
        config.addinivalue_line("markers", f"{op}: a TOSA vector of operator {op}")


def _configure_selection(config: pytest.Config, state: _PackRun) -> None:
    """--tosa-known-failures, --tosa-exclude, and vector ids among the arguments."""
    from conformance.selection import KnownFailures, SelectionError, compile_option

    known = config.getoption("tosa_known_failures")
    exclude = config.getoption("tosa_exclude")
    try:
        if known is not None:
            state.known = KnownFailures.read(config.invocation_params.dir / known)
            state.known.check(state.entries, str(state.pack_path))
        if exclude:
            state.exclude = compile_option("--tosa-exclude", exclude)
    except SelectionError as exc:
        raise pytest.UsageError(str(exc)) from None
    # pytest would look for files named like the ids; they are the pack's items instead.
    ids = {f"{e.operator}::{e.name}" for e in state.entries}
    state.ids = {a for a in config.args if a in ids}
    if state.ids:
        config.args[:] = [a for a in config.args if a not in state.ids]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    state = config.stash.get(_STATE, None)
    if state is None:
        return
    keep: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        if not isinstance(item, TosaVector):
            keep.append(item)
            continue
        e = item.entry
        node = f"{e.operator}::{e.name}"
        if (state.ids and node not in state.ids) or (
            state.exclude is not None
            and (state.exclude.fullmatch(e.name) or state.exclude.fullmatch(node))
        ):
            dropped.append(item)
            continue
        reason = state.known.reason(e) if state.known is not None else None
        if reason is not None:
            item.add_marker(pytest.mark.xfail(reason=reason or "known failure", strict=False))
        keep.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is not None:
        state.close()


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    state = config.stash.get(_STATE, None)
    if state is None:
        return None
    how = (
        "in the pytest process"
        if state.in_process
        else f"isolated worker, {state.timeout:g} s per vector"
    )
    return [
        f"tosa-conformance: pack {state.pack_path} ({len(state.entries)} vectors, "
        f"sha256 {state.pack_sha256[:16]}...), backend {state.backend_spec} ({how})"
    ]


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, Any]:
    """Add the pack's operators to what the session collects, next to the test files:
    the rest of pytest (selection, --lf, xdist, reports) then treats them as tests."""
    report = yield
    state = collector.config.stash.get(_STATE, None)
    if state is not None and isinstance(collector, pytest.Session):
        by_op: dict[str, list[PackEntry]] = {}
        for entry in state.entries:
            by_op.setdefault(entry.operator, []).append(entry)
        report.result.extend(
            TosaOperator.from_parent(
                collector, name=op, nodeid=op, path=state.pack_path, entries=entries
            )
            for op, entries in sorted(by_op.items())
        )
    return report


class TosaOperator(pytest.Collector):
    """The vectors of one operator; node id ``OPERATOR`` (a JUnit class name)."""

    def __init__(self, *, entries: list[PackEntry], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.entries = entries

    def collect(self) -> Iterator[TosaVector]:
        for entry in self.entries:
            yield TosaVector.from_parent(self, name=entry.name, entry=entry)


class VectorFailed(Exception):
    """A vector the judge failed; carries the result for :meth:`TosaVector.repr_failure`."""

    def __init__(self, result: VectorResult) -> None:
        super().__init__(f"{result.verdict}: {result.detail}")
        self.result = result


class TosaVector(pytest.Item):
    """One vector of the pack; node id ``OPERATOR::VECTOR``."""

    def __init__(self, *, entry: PackEntry, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.entry = entry
        for mark in ("tosa", entry.kind, entry.operator):
            self.add_marker(mark)
        # -k matches substrings of these too ("-k 'signed and valid'").
        self.extra_keyword_matches.update({entry.operator, entry.kind, entry.mode})

    def runtest(self) -> None:
        from conformance.verdicts import INFO, SKIPPED

        result = self.config.stash[_STATE].run(self.entry)
        self.user_properties.append(("tosa_verdict", result.verdict))
        if result.margin is not None:
            self.user_properties.append(("tosa_margin", f"{result.margin:.6g}"))
        if result.verdict == SKIPPED:
            _skip(result.detail or "the backend does not support this vector")
        if result.verdict == INFO:
            _skip(f"level vector, reported but not judged: {result.detail}")
        if result.failed:
            raise VectorFailed(result)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> Any:
        if isinstance(excinfo.value, VectorFailed):
            return describe_failure(excinfo.value.result, self.config.stash[_STATE])
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        # The vector's folder (inside the zip for a zipped pack), not a line of Python.
        e = self.entry
        return self.path / e.name, 0, f"{e.name} ({e.operator}, {e.mode}, {e.kind})"


def _skip(reason: str) -> None:
    """pytest.skip, reported at the vector (reportinfo) rather than at this module."""
    try:
        # The flag pytest's own skip marks use; private, hence the fallback.
        exc = pytest.skip.Exception(reason, _use_item_location=True)
    except TypeError:
        pytest.skip(reason)
    raise exc


def describe_failure(result: VectorResult, state: _PackRun) -> str:
    """The failure text: verdict, the judge's detail per output, the backend's log, and
    the command that runs the vector again outside pytest."""
    lines = [
        f"{result.vector} ({result.operator}, {result.mode}, {result.kind}) on "
        f"{state.backend_spec}: {result.verdict}",
    ]
    if result.outputs:
        for o in result.outputs:
            status = "ok" if o.passed else "FAILED"
            extra = f", margin {o.margin:.6g}" if o.margin is not None else ""
            extra += f", {o.failing} failing element(s)" if o.failing else ""
            lines.append(f"  output {o.name}: {status}{extra}: {o.message}")
    else:
        lines.append(f"  {result.detail}")
    log = [line for line in result.log.splitlines() if line.strip()]
    if log:
        lines.append(f"backend log (last {min(len(log), _LOG_LINES)} lines):")
        lines += [f"  {line}" for line in log[-_LOG_LINES:]]
    lines.append(f"run it again: {state.rerun_command(result.vector)}")
    return "\n".join(lines)

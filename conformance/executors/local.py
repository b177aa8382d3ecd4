"""Vectors run in local worker processes, each isolated: a worker that crashes or
overruns its timeout is killed and replaced, and only its vector fails.

The worker loop itself (:func:`conformance.runner.serve`) is the runner's; this module
only starts, feeds, watches and replaces the processes, and names what a crash or a
timeout did to the vector under way.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from conformance import process_tree
from conformance.backends import BackendError
from conformance.results_file import PRIVATE_FDS
from conformance.verdicts import CRASHED, TIMEOUT, VectorResult
from conformance.worker import worker_main


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
                        raise WorkerStartError(not_started_message(doc[NOT_STARTED]))
                    if doc is not None:
                        slot.name = None
                        if slot.todo:  # the next vector of the batch is under way
                            slot.todo.pop(0)
                            slot.name = slot.todo[0][0] if slot.todo else None
                            slot.started = now
                        busy -= slot.name is None
                        on_result(VectorResult.from_json(doc))
                        continue
                elif not slot.process.is_alive() and unread(slot.conn):
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
                    raise WorkerStartError(not_started_message(doc[NOT_STARTED]))
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


def unread(conn: Connection) -> bool:
    """Whether ``conn`` holds data not yet received (EOF alone is not data)."""
    try:
        return bool(conn.poll(0))
    except (EOFError, OSError):
        return False


def not_started_message(reason: str) -> str:
    return (
        f"the backend cannot start in a worker process ({reason}); no vector was run. "
        "A backend must be usable in a forked process"
    )

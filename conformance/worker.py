"""What a runner worker process does around its backend (conformance.executors.local.IsolatedPool).

* :func:`worker_main` starts every worker: it lets go of the parent's descriptors, dies
  with the parent, adopts the orphans of the processes its backend starts (so they can
  be found and killed, conformance.process_tree), and keeps its temporary files in one
  folder the parent removes.
* :func:`captured_output` makes what a Python backend prints part of the vector's log.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from typing import Any

from conformance import process_tree


def worker_main(
    conn: Connection,
    private: list[int],
    tmp: str,
    parent: int,
    target: Callable[..., None],
    *args: Any,
) -> None:
    """Every worker of an :class:`IsolatedPool` starts here, then runs ``target``.

    It lets go of the parent's descriptors, dies with the parent (SIGTERM, handled: its
    processes are killed and its temporary folder removed first), adopts the orphans of
    the processes its backend starts, and keeps every temporary file in ``tmp``.
    """
    null = os.open(os.devnull, os.O_RDWR)
    for fd in private:
        # dup2, not close: the parent's objects copied into this process still think
        # they own these numbers; /dev/null keeps any later close of theirs harmless.
        with contextlib.suppress(OSError):
            os.dup2(null, fd)
    os.close(null)
    tempfile.tempdir = tmp
    os.environ["TMPDIR"] = tmp  # a command: program's temporary files go there too

    def on_parent_death(signum: int, frame: Any) -> None:
        process_tree.kill_descendants(os.getpid())
        shutil.rmtree(tmp, ignore_errors=True)
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, on_parent_death)
    process_tree.become_subreaper()
    process_tree.die_with_parent(signal.SIGTERM)
    if os.getppid() != parent:  # the parent died before the request took effect
        on_parent_death(signal.SIGTERM, None)
    try:
        target(conn, *args)
    finally:
        process_tree.kill_descendants(os.getpid())


def end_vector_processes(backend: object) -> None:
    """Kill what the backend started for the vector just run (docs/reliability.md):
    every process below this worker except the children it still holds a
    ``subprocess.Popen`` of (a helper it keeps, like a compiler server); none at all
    when the backend says ``keeps_processes = True``."""
    if getattr(backend, "keeps_processes", False):
        return
    own = os.getpid()
    parents = process_tree._parents()
    below = process_tree.descendants(own, parents)
    # The common case after the first vector: nothing below but the helpers found held
    # last time, idle (no children), still this worker's children.  Finding held
    # children walks every object of the process (gc), which costs far more than a
    # vector of a fast backend, so it is done only when something else is there.
    if all(p in _HELD and parents.get(p) == own for p in below):
        return
    _HELD.clear()
    _HELD.update(held_children())
    process_tree.kill_descendants(own, spare=_HELD)


_HELD: set[int] = set()  # children found held by the last full check


def held_children() -> list[int]:
    """Running children this process holds a Popen of.  One dropped without a wait is
    on subprocess's list of those to reap later: not held."""
    import gc
    import subprocess

    dropped = {id(p) for p in getattr(subprocess, "_active", None) or []}
    return [
        o.pid
        for o in gc.get_objects()
        if isinstance(o, subprocess.Popen) and id(o) not in dropped and o.returncode is None
    ]


LOG_KEPT = 2000  # characters of a vector's log kept in its result (as judge keeps)


@contextlib.contextmanager
def captured_output() -> Iterator[list[str]]:
    """Send file descriptors 1 and 2 (print, C libraries, child processes) to a file
    for the block; the list gets the tail of what was written, when anything was."""
    out: list[str] = []
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        with tempfile.TemporaryFile() as f:
            os.dup2(f.fileno(), 1)
            os.dup2(f.fileno(), 2)
            try:
                yield out
            finally:
                for stream in (sys.stdout, sys.stderr):
                    with contextlib.suppress(OSError, ValueError):
                        stream.flush()
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
                size = f.seek(0, os.SEEK_END)
                f.seek(max(0, size - LOG_KEPT))
                text = f.read().decode("utf-8", errors="replace")
                if text:
                    out.append(text)
    finally:
        for fd in saved:
            os.close(fd)

"""Processes a runner worker is responsible for, and killing them (Linux ``/proc``).

A worker is made a *child subreaper*: a process its backend started that loses its
parent (a ``command:`` program's child after the program exits, a daemon that left
the session with ``setsid``) is re-parented to the worker instead of to init, so it is
still found below the worker by following parent ids.  Killing a tree stops every
process first (so none can fork or be re-parented away while it is being killed), then
kills them all.

Elsewhere than Linux the functions find nothing and the parent-death signal is not
set: process groups and the runner's own kills are then all there is.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Iterable

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def _prctl(option: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return False
    return int(prctl(option, value, 0, 0, 0)) == 0


def die_with_parent(sig: int = signal.SIGKILL) -> bool:
    """Ask the kernel to send ``sig`` to this process when its parent dies."""
    return _prctl(_PR_SET_PDEATHSIG, int(sig))


def become_subreaper() -> bool:
    """Orphaned descendants of this process are re-parented to it (see the docstring)."""
    return _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process visible in /proc."""
    out: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue  # it ended meanwhile
        # The command name is in parentheses and may hold spaces or ")".
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1:
            out[int(entry)] = int(fields[1])
    return out


def descendants(pid: int, parents: dict[int, int] | None = None) -> list[int]:
    """Every process below ``pid``, parents before their children (``parents``: one
    reading of ``/proc`` to reuse, else a fresh one)."""
    children: dict[int, list[int]] = {}
    for child, parent in (_parents() if parents is None else parents).items():
        children.setdefault(parent, []).append(child)
    out: list[int] = []
    todo = list(children.get(pid, []))
    while todo:
        p = todo.pop(0)
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def _signal_all(pids: Iterable[int], sig: int) -> None:
    for p in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(p, sig)


def kill_descendants(pid: int, *, spare: Iterable[int] = ()) -> int:
    """SIGKILL every process below ``pid``, except ``spare`` and their descendants;
    how many were killed.  Those that are this process's children are reaped."""
    spared = set(spare)
    if spared:
        parents = _parents()
        for p in list(spared):
            spared.update(descendants(p, parents))
    stopped: list[int] = []
    # Stop until no new process appears: a stopped process cannot fork any more.
    for _ in range(20):
        fresh = [p for p in descendants(pid) if p not in spared and p not in stopped]
        if not fresh:
            break
        _signal_all(fresh, signal.SIGSTOP)
        stopped.extend(fresh)
    _signal_all(stopped, signal.SIGKILL)
    own = os.getpid()
    parents = _parents()
    for p in stopped:
        if parents.get(p) == own:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(p, 0)
    return len(stopped)


def stop(pid: int) -> None:
    """SIGSTOP one process (before its descendants are killed: it cannot fork more)."""
    _signal_all([pid], signal.SIGSTOP)

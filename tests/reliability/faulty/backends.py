"""Faulty Python backends for the fault-injection suite (``python:FILE:FACTORY``).

A process a backend starts carries the marker in ``$TOSA_FAULT_MARKER`` on its command
line, so a test can look for it in /proc afterwards.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from conformance.backends.base import BackendResult
from conformance.backends.reference import ReferenceBackend

_previous: list[int] = []  # the child started for the vector before, in this worker


def _marked_child() -> subprocess.Popen[bytes]:
    marker = os.environ.get("TOSA_FAULT_MARKER", "tosa-fault-marker")
    code = "import time; time.sleep(300)"
    return subprocess.Popen([sys.executable, "-c", code, marker])


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


class Spawner(ReferenceBackend):
    """Starts a child per vector and leaves it running; prints whether the previous
    vector's child was still alive when this one began."""

    def run(self, vector, workdir: Path) -> BackendResult:
        if _previous:
            print(f"previous child alive: {_alive(_previous[-1])}")
        _previous.append(_marked_child().pid)
        return super().run(vector, workdir)


class Keeper(ReferenceBackend):
    """Keeps one helper process for all its vectors (as IREE's compiler server), and
    prints its pid and whether it survived the vector before."""

    def __init__(self, argument: str | None = None) -> None:
        super().__init__(argument)
        self.helper: subprocess.Popen[bytes] | None = None

    def run(self, vector, workdir: Path) -> BackendResult:
        if self.helper is None:
            self.helper = _marked_child()
        else:
            print(f"helper {self.helper.pid} alive: {self.helper.poll() is None}")
        return super().run(vector, workdir)


class Hanger(ReferenceBackend):
    """Starts a marked child, then never returns."""

    def run(self, vector, workdir: Path) -> BackendResult:
        _marked_child()
        time.sleep(300)
        raise AssertionError("not reached")


class Printer(ReferenceBackend):
    """Prints, from Python and straight to the file descriptors."""

    def run(self, vector, workdir: Path) -> BackendResult:
        print(f"PRINTED-BY-BACKEND {vector.name}")
        os.write(2, b"WRITTEN-TO-FD-2\n")
        return super().run(vector, workdir)


class Slow(ReferenceBackend):
    """Takes ``$TOSA_FAULT_SLOW`` seconds (0.3 by default) per vector."""

    def run(self, vector, workdir: Path) -> BackendResult:
        time.sleep(float(os.environ.get("TOSA_FAULT_SLOW", "0.3")))
        return super().run(vector, workdir)


def spawner(_: object) -> Spawner:
    return Spawner()


def keeper(_: object) -> Keeper:
    return Keeper()


def hanger(_: object) -> Hanger:
    return Hanger()


def printer(_: object) -> Printer:
    return Printer()


def slow(_: object) -> Slow:
    return Slow()


def raises(_: object) -> ReferenceBackend:
    raise RuntimeError("the factory could not find its device")


def main_process_only(_: object) -> ReferenceBackend:
    """Builds in the first process that asks (the run's main process), not in the
    processes forked from it, which inherit its environment (a GPU context that does not
    survive fork does this)."""
    first = os.environ.setdefault("TOSA_FAULT_BUILT_IN", str(os.getpid()))
    if first != str(os.getpid()):
        raise RuntimeError("no device in a forked process")
    return ReferenceBackend()


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise ValueError("no text for this one")


class Raiser(ReferenceBackend):
    """Raises, from run(), what ``what`` names: ``interrupt`` (KeyboardInterrupt),
    ``exit`` (SystemExit), or ``unprintable`` (an exception whose str() fails)."""

    def __init__(self, what: str) -> None:
        super().__init__(None)
        self.what = what

    def run(self, vector, workdir: Path) -> BackendResult:
        if self.what == "interrupt":
            raise KeyboardInterrupt
        if self.what == "exit":
            raise SystemExit(3)
        raise _Unprintable


def raise_interrupt(_: object) -> Raiser:
    return Raiser("interrupt")


def raise_exit(_: object) -> Raiser:
    return Raiser("exit")


def raise_unprintable(_: object) -> Raiser:
    return Raiser("unprintable")

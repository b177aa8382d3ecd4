"""Backends that misbehave on purpose, for the runner's isolation tests.

Each wraps the reference and goes wrong on vectors whose name ends in ``_001``.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import numpy as np

from conformance.backends.base import BackendResult
from conformance.backends.reference import ReferenceBackend


class _Flaky(ReferenceBackend):
    name = "flaky"

    def misbehave(self, vector, result: BackendResult) -> BackendResult:
        raise NotImplementedError

    def run(self, vector, workdir: Path) -> BackendResult:
        result = super().run(vector, workdir)
        if vector.name.endswith("_001"):
            return self.misbehave(vector, result)
        return result


class Segfault(_Flaky):
    def misbehave(self, vector, result):
        os.kill(os.getpid(), signal.SIGSEGV)


class Hang(_Flaky):
    def misbehave(self, vector, result):
        time.sleep(3600)


class WrongShape(_Flaky):
    def misbehave(self, vector, result):
        return BackendResult({n: np.zeros((7, 7), v.dtype) for n, v in result.outputs.items()})


class Raises(_Flaky):
    def misbehave(self, vector, result):
        raise RuntimeError("backend bug")


class Slow(ReferenceBackend):
    """Takes a while per vector, so a test can interrupt a run."""

    def run(self, vector, workdir: Path) -> BackendResult:
        time.sleep(0.2)
        return super().run(vector, workdir)


def segfault(_: object) -> Segfault:
    return Segfault()


def hang(_: object) -> Hang:
    return Hang()


def wrong_shape(_: object) -> WrongShape:
    return WrongShape()


def raises(_: object) -> Raises:
    return Raises()


def slow(_: object) -> Slow:
    return Slow()


class OffByOneOnLargeValues(ReferenceBackend):
    """Adds one to integer results wherever the first input exceeds 1000 in magnitude: a
    bug a fuzzer should find and shrink to one element."""

    def run(self, vector, workdir: Path) -> BackendResult:
        result = super().run(vector, workdir)
        if result.rejected is not None:
            return result
        first = next(iter(vector.inputs.values()), None)
        if first is None:
            return result
        for name, out in result.outputs.items():
            if out.dtype.kind == "i" and out.shape == first.shape:
                bump = (np.abs(first.astype(np.int64)) > 1000).astype(out.dtype)
                result.outputs[name] = out + bump
        return result


def off_by_one(_: object) -> OffByOneOnLargeValues:
    return OffByOneOnLargeValues()


class DeclinesWhatItFails(WrongShape):
    """Would fail every ``_001`` vector, and honestly declines exactly those."""

    def unsupported(self, vector) -> str | None:
        return "not implemented here" if vector.name.endswith("_001") else None


def declines_what_it_fails(_: object) -> DeclinesWhatItFails:
    return DeclinesWhatItFails()


class RewritesTheAnswer(ReferenceBackend):
    """Returns zeros, and makes the vector it was handed agree: zero expected results,
    inputs changed in place (a numpy ``+=`` is enough)."""

    def run(self, vector, workdir: Path) -> BackendResult:
        result = super().run(vector, workdir)
        for expected in vector.expected.values():
            expected[...] = 0
        for values in vector.inputs.values():
            values += 1
        return BackendResult({n: np.zeros_like(v) for n, v in result.outputs.items()})


def rewrites_the_answer(_: object) -> RewritesTheAnswer:
    return RewritesTheAnswer()

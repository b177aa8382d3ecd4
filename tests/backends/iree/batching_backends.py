"""Backends with the optional batch hook, for the runner's batch protocol tests.

Each is our reference evaluator with ``batch_size`` 4 and a ``prepare`` that appends
one line per call (the names it was given) to the file named by $TOSA_TEST_BATCH_LOG,
and misbehaves, when asked, only for batches of more than one vector: the runner must
then fall back to sending the vectors one by one, and every verdict stays right.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

from conformance.backends.base import BackendResult
from conformance.backends.reference import ReferenceBackend
from vectors.pack_model import LoadedVector


class Batching(ReferenceBackend):
    batch_size = 4
    misbehave = ""

    def prepare(self, vectors: Sequence[LoadedVector], workdir: Path) -> None:
        with open(os.environ["TOSA_TEST_BATCH_LOG"], "a", encoding="utf-8") as log:
            log.write(" ".join(v.name for v in vectors) + "\n")
        if len(vectors) > 1:
            if self.misbehave == "dies":
                os._exit(3)
            if self.misbehave == "hangs":
                time.sleep(3600)
            if self.misbehave == "raises":
                raise RuntimeError("prepare bug")

    def run(self, vector: LoadedVector, workdir: Path) -> BackendResult:
        if self.misbehave == "dies-running" and vector.name.endswith("_001"):
            os._exit(4)
        return super().run(vector, workdir)


def make(misbehave: str) -> Batching:
    backend = Batching()
    backend.misbehave = misbehave
    return backend


def plain(argument: str | None) -> Batching:
    return make("")


def dies(argument: str | None) -> Batching:
    return make("dies")


def hangs(argument: str | None) -> Batching:
    return make("hangs")


def raises(argument: str | None) -> Batching:
    return make("raises")


def dies_running(argument: str | None) -> Batching:
    return make("dies-running")

"""The reference, slowed down, writing when each vector ran: the placement test reads
the intervals back to see whether two vectors ever ran at once on one board."""

from __future__ import annotations

import os
import time
from pathlib import Path

from conformance.backends.base import BackendResult
from conformance.backends.reference import ReferenceBackend

RECORD = "TOSA_TEST_RECORD"  # the file the intervals go to, one line per vector


class Recording(ReferenceBackend):
    name = "recording"

    def run(self, vector, workdir: Path) -> BackendResult:
        started = time.time()
        time.sleep(0.1)
        result = super().run(vector, workdir)
        with open(os.environ[RECORD], "a", encoding="utf-8") as f:
            f.write(f"{vector.name} {started!r} {time.time()!r}\n")
        return result


def recording(_: object) -> Recording:
    return Recording()

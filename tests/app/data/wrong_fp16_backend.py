"""A backend that gets every valid fp16 vector wrong (a wrong output shape), for the
known-failures tests (tests/app/test_selection.py, tests/app/test_merge.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from conformance.backends.base import BackendResult
from conformance.backends.reference import ReferenceBackend


class WrongFp16(ReferenceBackend):
    def run(self, vector, workdir: Path) -> BackendResult:
        result = super().run(vector, workdir)
        if vector.mode == "fp16" and vector.kind == "valid":
            return BackendResult({n: np.zeros((7, 7), v.dtype) for n, v in result.outputs.items()})
        return result


def make(_: object) -> WrongFp16:
    return WrongFp16()

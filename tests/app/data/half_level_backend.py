"""Backends that support only half of one level maximum, for the level certification
tests (tests/app/test_level_certify.py).

Each behaves as the reference, except that it rejects every graph the reference
would find beyond half of its maximum: a kernel, stride, scale or list LEVEL_CHECK
that fails at the halved level, or a nesting deeper than half of MAX_NESTING (the
nesting limit is an ERROR_IF, erratum max_nesting-no-levellimit).  Such a backend
claims 8K but implements half of it; certification must catch it.
"""

from __future__ import annotations

from pathlib import Path

from conformance.backends.base import BackendResult
from conformance.backends.reference import ReferenceBackend
from conformance.spec import Level
from reference.engine import Evaluator
from reference.ops.control_flow import NESTING_CLAUSE
from vectors.pack_model import LoadedVector


class HalfLevel(ReferenceBackend):
    def __init__(self, limit: str) -> None:
        super().__init__()
        self.limit = limit
        self.name = f"half-{limit}"

    def beyond_half(self, vector: LoadedVector) -> bool:
        level = self.spec.level(vector.requirements.level)
        maxima = dict(level.maxima)
        maxima[self.limit] //= 2
        half = Level(level.name, level.description, maxima)
        outcome = Evaluator(vector.graph, self.spec, half).run(vector.inputs)
        rule = outcome.rule
        if rule is None:
            return False
        if self.limit == "MAX_NESTING":
            return rule.clause == NESTING_CLAUSE
        return rule.kind == "LEVEL_CHECK" and self.limit in rule.clause

    def run(self, vector: LoadedVector, workdir: Path) -> BackendResult:
        if self.beyond_half(vector):
            return BackendResult.reject(f"{self.limit} beyond half of level 8K: not supported")
        return super().run(vector, workdir)


def half_kernel(_: object) -> HalfLevel:
    return HalfLevel("MAX_KERNEL")


def half_stride(_: object) -> HalfLevel:
    return HalfLevel("MAX_STRIDE")


def half_scale(_: object) -> HalfLevel:
    return HalfLevel("MAX_SCALE")


def half_list(_: object) -> HalfLevel:
    return HalfLevel("MAX_TENSOR_LIST_SIZE")


def half_nesting(_: object) -> HalfLevel:
    return HalfLevel("MAX_NESTING")

"""Cases for the data-node mutants (CONST, IDENTITY)."""

from __future__ import annotations

from typing import Any

import numpy as np
from mutant_cases import Case, unary

from conformance.builder import single_operator_graph
from targeted_cases import Cases


def const(values: Any, dt: str) -> Case:
    v = np.asarray(values)
    graph = single_operator_graph("CONST", [], [("y", v.shape, dt)], {"values": v})
    return Case(graph, {})


CASES: Cases = {
    "identity-negative-zero-lost": (
        [
            lambda: unary("IDENTITY", [-0.0, 1.0], "fp32"),
            lambda: unary("IDENTITY", [[-0.0]], "fp16"),
        ],
        [
            lambda: unary("IDENTITY", [0.0, -1.0, np.nan, -np.inf], "fp32"),
            lambda: unary("IDENTITY", [0, -1], "i8"),
        ],
    ),
    "const-i48-low-32-bits": (
        [lambda: const([1 << 33, -(1 << 40) - 5], "i48"), lambda: const([2**31], "i48")],
        [
            lambda: const([2**31 - 1, -(2**31), 7], "i48"),
            lambda: const([2**31 - 1, -5], "i32"),
        ],
    ),
}

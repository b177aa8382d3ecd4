"""Cases for the comparison mutants of the second red-team pass."""

from __future__ import annotations

from typing import Any

import numpy as np
from mutant_cases import Case, case


def compare(op: str, a: Any, b: Any, dt: str) -> Case:
    a, b = np.asarray(a), np.asarray(b)
    shape = np.broadcast_shapes(a.shape, b.shape)
    return case(op, [("a", a, dt), ("b", b, dt)], [("y", shape, "bool")])


CASES = {
    "equal-float-bitwise": (
        [
            lambda: compare("EQUAL", [-0.0, 1.0], [0.0, 1.0], "fp32"),
            lambda: compare("EQUAL", [np.nan], [np.nan], "fp16"),
        ],
        [
            lambda: compare("EQUAL", [1.0, 2.0, np.inf, -0.0], [1.0, 3.0, np.inf, -0.0], "fp32"),
            lambda: compare("EQUAL", [[1.5], [2.0]], [2.0, 1.5], "bf16"),
            lambda: compare("EQUAL", [0, -1], [0, 1], "i32"),
        ],
    ),
    "greater-float-as-int-bits": (
        [
            lambda: compare("GREATER", [-1.0, 2.0], [-2.0, 1.0], "fp32"),
            lambda: compare("GREATER", [0.0], [-0.0], "fp16"),
        ],
        [
            lambda: compare("GREATER", [1.0, 2.0, -1.0, np.inf], [2.0, 1.0, 3.0, 5.0], "fp32"),
            lambda: compare("GREATER", [-1, -5], [-2, 3], "i32"),
        ],
    ),
    "compare-i32-through-fp32": (
        [
            lambda: compare("EQUAL", [2**24 + 1], [2**24], "i32"),
            lambda: compare("GREATER", [2**30 + 1, 5], [2**30, 4], "i32"),
            lambda: compare("GREATER_EQUAL", [-(2**30) - 1], [-(2**30)], "i32"),
        ],
        [
            lambda: compare("EQUAL", [2**24, 2**24 - 1, 2**30], [2**24, 2**24, 2**30 + 128], "i32"),
            lambda: compare("GREATER", [2**24, -5], [2**24 - 1, -6], "i32"),
            lambda: compare("EQUAL", [1.0 + 2**-23], [1.0], "fp32"),
        ],
    ),
}

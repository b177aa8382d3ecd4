"""Cases for the SCATTER mutant added by the red team."""

from __future__ import annotations

from typing import Any

import numpy as np
from mutant_cases import Case, case

from targeted_cases import Cases


def scatter(values_in: Any, indices: Any, updates: Any, dt: str = "i8") -> Case:
    v = np.asarray(values_in)
    return case(
        "SCATTER",
        [("v", v, dt), ("k", np.asarray(indices), "shape"), ("u", np.asarray(updates), dt)],
        [("y", v.shape, dt)],
    )


def gather(values: Any, indices: Any, dt: str = "i8") -> Case:
    v, k = np.asarray(values), np.asarray(indices)
    return case(
        "GATHER",
        [("v", v, dt), ("k", k, "shape")],
        [("y", (v.shape[0], k.shape[1], v.shape[2]), dt)],
    )


# K = 2**16 + 1 rows; row 2**16 differs from row 0
WIDE_VALUES = (np.arange((1 << 16) + 1) % 101 + 1).reshape(1, -1, 1)

CASES: Cases = {
    "scatter-batch-ignored": (
        # batch 1's update goes to batch 0: [[9, 2, 3], [4, 5, 6]] instead of
        # [[1, 2, 3], [4, 9, 6]]
        [
            lambda: scatter(np.arange(1, 7).reshape(2, 3, 1), [[0], [1]], [[[8]], [[9]]]),
            lambda: scatter(
                np.zeros((3, 2, 2)), [[1], [1], [0]], np.arange(1.0, 7.0).reshape(3, 1, 2), "fp32"
            ),
        ],
        [
            lambda: scatter(np.arange(1, 4).reshape(1, 3, 1), [[2, 0]], [[[8], [9]]]),
            lambda: scatter(np.arange(1, 7).reshape(1, 3, 2), [[1]], [[[-1, -2]]]),
        ],
    ),
    "gather-index-16-bit": (
        # row 65536 is read as row 0
        [lambda: gather(WIDE_VALUES, [[65536, 3]]), lambda: gather(WIDE_VALUES, [[65536]], "fp32")],
        [
            lambda: gather(WIDE_VALUES, [[65535, 0]]),
            lambda: gather(np.arange(12).reshape(2, 3, 2) % 100, [[2, 0], [1, 1]]),
        ],
    ),
}

"""Cases for the mutant of TOSA 1.1's ROW_GATHER (cases of the 1.1 revision)."""

from __future__ import annotations

from typing import Any

import numpy as np
from mutant_cases import Case, case

from conformance.spec import load_revision
from targeted_cases import Cases

SPEC_1_1 = load_revision("1.1-draft")


def row_gather(values: Any, indices: Any, row_count: int, dt: str = "i16") -> Case:
    v, k = np.asarray(values), np.asarray(indices)
    return case(
        "ROW_GATHER",
        [("v", v, dt), ("k", k, "i32"), ("r", [row_count], "i32")],
        [("y", (v.shape[0], k.shape[1] * row_count, v.shape[2]), dt)],
        consts=("r",),
        spec=SPEC_1_1,
    )


ROWS_4 = np.array([10, 11, 12, 13]).reshape(1, 4, 1)

CASES: Cases = {
    "row-gather-offset-major": (
        [
            # indices 0 and 2, two rows each: rows 10, 11 then 12, 13; offset-major
            # concatenation gives 10, 12, 11, 13
            lambda: row_gather(ROWS_4, [[0, 2]], 2),
            # three windows of two rows in fp32 (overlapping: 1 and 2 share row 2)
            lambda: row_gather(np.arange(5.0).reshape(1, 5, 1), [[1, 2, 0]], 2, "fp32"),
        ],
        [
            # one row per index, or one index per batch: nothing to reorder
            lambda: row_gather(ROWS_4, [[3, 0, 1]], 1),
            lambda: row_gather(np.arange(12).reshape(2, 3, 2), [[0], [0]], 3, "i32"),
        ],
    ),
}

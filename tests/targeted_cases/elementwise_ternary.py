"""Cases for the SELECT and SIN mutants of the second red-team pass."""

from __future__ import annotations

import numpy as np
from mutant_cases import select, unary

CASES = {
    "select-arithmetic-blend": (
        [
            # 1 * 2 + 0 * inf is NaN, not 2
            lambda: select([True, False], [2.0, 1.0], [np.inf, 3.0]),
            lambda: select([False], [np.nan], [1.0], "fp16"),
            lambda: select([True], [-0.0], [5.0], "bf16"),
        ],
        [
            lambda: select([True, False], [2.0, -1.5], [7.0, 3.25]),
            lambda: select([True, False], [1, -5], [np.iinfo(np.int32).max, 2], "i32"),
        ],
    ),
    "sin-as-shifted-cos": (
        [lambda: unary("SIN", [0.0], "fp32"), lambda: unary("SIN", [1e-3, 2.0], "fp32")],
        [lambda: unary("SIN", [np.inf, -np.inf, np.nan], "fp32")],
    ),
    "select-rank0-condition-false": (
        [lambda: select(True, 1.0, 2.0)],
        [lambda: select(False, 1.0, 2.0), lambda: select([True], [1.0], [2.0])],
    ),
}

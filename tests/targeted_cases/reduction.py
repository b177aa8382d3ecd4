"""Cases for the reduction mutants of the second red-team pass."""

from __future__ import annotations

from typing import Any

import numpy as np
from mutant_cases import Case, case


def reduce(op: str, x: Any, axis: int, dt: str = "fp32") -> Case:
    x = np.asarray(x)
    out = tuple(1 if i == axis else d for i, d in enumerate(x.shape))
    return case(op, [("x", x, dt)], [("y", out, dt)], axis=axis)


NEGATIVE_ROWS = [[-1.0, -2.0, -3.0], [-4.0, -5.0, -6.0]]

CASES = {
    "reduce-tail-lanes-zero-padded": (
        [
            lambda: reduce("REDUCE_MAX", NEGATIVE_ROWS, 1, "fp32"),
            lambda: reduce("REDUCE_MIN", [[1, 2, 3]], 1, "i8"),
            lambda: reduce("REDUCE_PRODUCT", [[2.0, 3.0]], 1, "fp32"),
            lambda: reduce("REDUCE_ALL", [[True, True, True]], 1, "bool"),
        ],
        [
            # the reduced axis is not the innermost one
            lambda: reduce("REDUCE_MAX", NEGATIVE_ROWS, 0, "fp32"),
            # a whole number of vectors
            lambda: reduce("REDUCE_PRODUCT", np.full((1, 8), 2.0), 1, "fp32"),
            # a zero cannot change these
            lambda: reduce("REDUCE_MAX", [[1.0, -2.0, 3.0]], 1, "fp32"),
            lambda: reduce("REDUCE_ALL", [[True, False, True]], 1, "bool"),
        ],
    ),
    "reduce-any-count-wraps-u8": (
        [lambda: reduce("REDUCE_ANY", np.ones((1, 256), bool), 1, "bool")],
        [
            lambda: reduce("REDUCE_ANY", np.ones((1, 255), bool), 1, "bool"),
            lambda: reduce("REDUCE_ANY", [[False, False], [True, False]], 1, "bool"),
        ],
    ),
    "reduce-axis-count-u16-wraps": (
        [
            lambda: reduce("REDUCE_SUM", np.ones((1, 65537), np.int32), 1, "i32"),
            lambda: reduce("REDUCE_MAX", np.arange(65537.0).reshape(65537, 1), 0, "fp32"),
            lambda: reduce("REDUCE_ANY", np.arange(65536) == 65535, 0, "bool"),
        ],
        [
            lambda: reduce("REDUCE_SUM", np.ones((1, 65535), np.int32), 1, "i32"),
            lambda: reduce("REDUCE_MIN", np.arange(65535.0).reshape(65535, 1), 0, "fp32"),
        ],
    ),
    "reduce-split-axis-remainder-dropped": (
        [
            # the maximum sits in the tail past the 256-element chunk
            lambda: reduce("REDUCE_MAX", np.arange(300.0).reshape(1, 300), 1, "fp32"),
            lambda: reduce("REDUCE_SUM", np.ones((257, 2), np.int32), 0, "i32"),
            lambda: reduce("REDUCE_ANY", np.arange(300) == 299, 0, "bool"),
        ],
        [
            lambda: reduce("REDUCE_MAX", np.arange(256.0).reshape(1, 256), 1, "fp32"),
            lambda: reduce("REDUCE_SUM", np.ones((512, 2), np.int32), 0, "i32"),
            lambda: reduce("REDUCE_MIN", np.arange(255.0).reshape(255, 1), 0, "fp32"),
        ],
    ),
    "reduce-minmax-nan-first-only": (
        [
            lambda: reduce("REDUCE_MAX", [[1.0, np.nan, 3.0]], 1),
            lambda: reduce("REDUCE_MIN", [[1.0], [np.nan]], 0),
        ],
        [lambda: reduce("REDUCE_MAX", [[np.nan, 1.0, 3.0], [-0.0, 0.0, -1.0]], 1)],
    ),
}

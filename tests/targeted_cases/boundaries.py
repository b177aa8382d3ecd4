"""Cases for the off-by-one ERROR_IF mutants (conformance/backends/mutants/boundaries.py):
each shows on a graph at the first value past its clause's boundary, which the
reference refuses and the mutant runs, and agrees with the reference one step inside
the boundary (a valid graph) and two steps past it (both refuse it)."""

from __future__ import annotations

from typing import Any

import numpy as np
from mutant_cases import ARANGE_2X2, Case, case, pool

from targeted_cases import Cases
from targeted_cases.data_layout import reverse, slice_
from targeted_cases.tensor_conv import transpose_conv

GRID_2X3 = np.arange(6).reshape(2, 3)
X_2X2 = np.arange(4).reshape(1, 2, 2, 1)
W_2X2 = np.ones((1, 2, 2, 1), dtype=np.int64)


def reduce_sum(x: Any, axis: int) -> Case:
    x = np.asarray(x)
    out = tuple(1 if i == min(axis, x.ndim - 1) else d for i, d in enumerate(x.shape))
    return case("REDUCE_SUM", [("x", x, "i32")], [("y", out, "i32")], axis=axis)


def max_pool(pad: tuple[int, int, int, int]) -> Case:
    return pool("MAX_POOL2D", ARANGE_2X2, (2, 2), (1, 1), pad)


CASES: Cases = {
    "error-if-off-by-one-axis": (
        [lambda: reverse(GRID_2X3, 2), lambda: reduce_sum(GRID_2X3, 2)],
        [
            lambda: reverse(GRID_2X3, 1),
            lambda: reverse(GRID_2X3, 3),
            lambda: reduce_sum(GRID_2X3, 1),
        ],
    ),
    "pool-pad-equal-kernel-accepted": (
        [lambda: max_pool((2, 0, 0, 0)), lambda: max_pool((0, 0, 0, 2))],
        [lambda: max_pool((1, 1, 1, 1)), lambda: max_pool((3, 0, 0, 0))],
    ),
    "transpose-conv-out-pad-minus-kernel-accepted": (
        [lambda: transpose_conv(X_2X2, W_2X2, (1, 1), out_pad=(-2, 0, 0, 0))],
        [
            lambda: transpose_conv(X_2X2, W_2X2, (1, 1), out_pad=(-1, 0, 0, -1)),
            lambda: transpose_conv(X_2X2, W_2X2, (2, 2), out_pad=(0, 0, -3, 0)),
        ],
    ),
    "slice-one-past-end-accepted": (
        [lambda: slice_(np.arange(4), [2], [3]), lambda: slice_(GRID_2X3, [0, 1], [2, 3])],
        [lambda: slice_(np.arange(4), [1], [3]), lambda: slice_(np.arange(4), [3], [3])],
    ),
}

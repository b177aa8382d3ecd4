"""Cases for the activation mutants of the second red-team pass."""

from __future__ import annotations

import numpy as np
from mutant_cases import unary

CASES = {
    "clamp-zero-min-as-relu": (
        [
            lambda: unary("CLAMP", [120, 50, -3], "i8", min_val=0, max_val=100),
            lambda: unary("CLAMP", [9.0, -1.0], "fp32", min_val=0.0, max_val=8.0),
        ],
        [
            lambda: unary("CLAMP", [120, 50, -3], "i8", min_val=0, max_val=127),
            lambda: unary("CLAMP", [9.0, -1.0], "fp32", min_val=0.0, max_val=6.0),
            lambda: unary("CLAMP", [120, 50, -3], "i8", min_val=-1, max_val=100),
        ],
    ),
    "sigmoid-negative-by-symmetry": (
        [lambda: unary("SIGMOID", [-20.0, 1.0], "fp32"), lambda: unary("SIGMOID", [-8.0], "fp16")],
        [lambda: unary("SIGMOID", [0.0, 1.0, 20.0, np.inf, np.nan], "fp32")],
    ),
    "tanh-exp-ratio-overflows": (
        [lambda: unary("TANH", [6.0, 1.0], "fp16"), lambda: unary("TANH", [50.0, np.inf], "fp32")],
        [
            lambda: unary("TANH", [5.0, -6.0, -np.inf], "fp16"),
            lambda: unary("TANH", [44.0, -50.0], "fp32"),
        ],
    ),
    "sigmoid-saturates-at-8": (
        # sigmoid(10) = 1 - 4.54e-5; the bound at 10 in fp32 is about 2.6e-6: caught
        [lambda: unary("SIGMOID", [10.0, 1.0], "fp32"), lambda: unary("SIGMOID", [9.0], "fp32")],
        # below 8, and where sigmoid is 1 in the type (fp32 from about 17), it is exact
        [lambda: unary("SIGMOID", [7.9, -10.0, 0.0, 20.0, np.inf, np.nan], "fp32")],
    ),
    "erf-abramowitz-stegun": (
        [lambda: unary("ERF", [0.0], "fp32"), lambda: unary("ERF", [1e-3, 0.5], "fp32")],
        [lambda: unary("ERF", [4.0, -5.0, np.inf, -np.inf, np.nan], "fp32")],
    ),
    "clamp-rejects-equal-bounds": (
        [
            lambda: unary("CLAMP", [120, -3], "i8", min_val=5, max_val=5),
            lambda: unary("CLAMP", [1.0], "fp16", min_val=-0.0, max_val=0.0),
        ],
        [lambda: unary("CLAMP", [120, -3], "i8", min_val=5, max_val=6)],
    ),
}

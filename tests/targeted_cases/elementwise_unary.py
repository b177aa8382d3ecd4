"""Cases for the element-wise unary mutants of the second red-team pass."""

from __future__ import annotations

from typing import Any

import numpy as np
from mutant_cases import Case, unary


def negate(x: Any, input1_zp: int, output_zp: int) -> Case:
    return unary("NEGATE", x, "i8", input1_zp=input1_zp, output_zp=output_zp)


CASES = {
    "clz-zero-gives-31": (
        [lambda: unary("CLZ", [0, 1], "i32")],
        [lambda: unary("CLZ", [1, -1, 1 << 30, 255], "i32")],
    ),
    "ceil-floor-through-int32": (
        [
            lambda: unary("FLOOR", [np.nan], "fp16"),
            lambda: unary("FLOOR", [3e9, 1.5], "fp32"),
            lambda: unary("CEIL", [np.inf], "bf16"),
        ],
        [
            lambda: unary("CEIL", [1.5, -1.5, 0.0, 1e6 + 0.5, -(2.0**31)], "fp32"),
            lambda: unary("FLOOR", [0.25, -0.25, -0.0, 100.5], "fp16"),
        ],
    ),
    "rsqrt-via-pow": (
        [lambda: unary("RSQRT", [-0.0, 4.0], "fp32"), lambda: unary("RSQRT", [-np.inf], "fp16")],
        [lambda: unary("RSQRT", [0.0, 4.0, -1.0, np.inf, np.nan], "fp32")],
    ),
    "logical-not-bitwise": (
        [lambda: unary("LOGICAL_NOT", [True, False], "bool")],
        [lambda: unary("LOGICAL_NOT", [False, False], "bool")],
    ),
    "clz-via-fp32-exponent": (
        [lambda: unary("CLZ", [2**31 - 1], "i32"), lambda: unary("CLZ", [2**25 - 1, 7], "i32")],
        [lambda: unary("CLZ", [0, -1, 1, 2**24 - 1, 2**30, 2**31 - 256], "i32")],
    ),
    "cos-lut-interpolated": (
        [lambda: unary("COS", [0.01, 0.0], "fp32"), lambda: unary("COS", [-0.003], "fp32")],
        [lambda: unary("COS", [0.0, np.inf, -np.inf, np.nan], "fp32")],
    ),
    "abs-keeps-negative-zero": (
        [lambda: unary("ABS", [-0.0, -2.0], "fp32")],
        [lambda: unary("ABS", [0.0, -2.0, np.nan, -np.inf], "fp16")],
    ),
    # -(5 - 3) = -2, not -5; -5 + 4 = -1, not -5
    "negate-input-zp-ignored": ([lambda: negate([5], 3, 0)], [lambda: negate([5, -128], 0, 4)]),
    "negate-output-zp-ignored": ([lambda: negate([5], 0, 4)], [lambda: negate([5, 127], 3, 0)]),
}

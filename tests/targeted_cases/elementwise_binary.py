"""Cases for the element-wise binary mutants of the second red-team pass."""

from __future__ import annotations

from typing import Any

import numpy as np
from mutant_cases import ONE_30, Case, binary, case, select, unary

from conformance.dtypes import BF16, I32_MAX, I32_MIN


def mul(a: Any, b: Any, shift: int = 0, dt: str = "i32") -> Case:
    a = np.asarray(a)
    return case(
        "MUL",
        [("a", a, dt), ("b", np.asarray(b), dt), ("s", shift, "i8")],
        [("y", a.shape, "i32")],
        consts=("s",),
    )


def row(n: int, width: int) -> np.ndarray:
    return np.arange(n * width).reshape(n, width)


def ars(a: Any, b: Any, dt: str, round_: bool = True) -> Case:
    a, b = np.asarray(a), np.asarray(b)
    return case(
        "ARITHMETIC_RIGHT_SHIFT", [("a", a, dt), ("b", b, dt)], [("y", a.shape, dt)], round=round_
    )


def bits(patterns: list[int], view: Any, dt: Any = None) -> np.ndarray:
    """Float values with the given bit patterns (NaN payloads kept)."""
    raw = np.array(patterns, dtype=view)
    if dt is None:
        return raw.view({np.uint32: np.float32, np.uint16: np.float16}[view])
    return raw.view(dt)


CASES = {
    "logical-shift-count-masked": (
        [
            # i8 1 << 9 is 0 (every bit shifted out), not 1 << 1
            lambda: binary("LOGICAL_LEFT_SHIFT", [1, 3], [9, 8], "i8"),
            lambda: binary("LOGICAL_RIGHT_SHIFT", [-1], [17], "i16"),
        ],
        [
            lambda: binary("LOGICAL_LEFT_SHIFT", [1, -1, 5], [7, 3, 0], "i8"),
            lambda: binary("LOGICAL_RIGHT_SHIFT", [-1, 1 << 30], [20, 31], "i32"),
        ],
    ),
    "mul-narrow-product-wraps": (
        # 100 * 2 = 200 wraps to -56 in 8 bits; 300 * 300 = 90000 in 16 bits
        [lambda: mul([100, 3], [2, 4], dt="i8"), lambda: mul([300], [300], dt="i16")],
        [
            lambda: mul([-128, 11], [1, -11], dt="i8"),
            lambda: mul([181, -32768], [181, 1], dt="i16"),
        ],
    ),
    "pow-negative-base-via-exp-log": (
        [
            lambda: binary("POW", [-2.0, 2.0], [3.0, 3.0], "fp32"),
            lambda: binary("POW", [-3.0], [0.0], "fp16"),
        ],
        [lambda: binary("POW", [2.0, 0.5, -2.0, 0.0], [3.0, -2.0, 0.5, 2.0], "fp32")],
    ),
    "pow-negative-zero-base-sign-lost": (
        [lambda: binary("POW", [-0.0, 2.0], [-3.0, 2.0], "fp32")],
        [lambda: binary("POW", [-0.0, 0.0, -2.0, -0.0], [2.0, -3.0, 3.0, 0.5], "fp32")],
    ),
    "ars-round-add-overflows": (
        # 2**31 - 1 >> 1 rounded is 2**30; (2**31 - 1 + 1) wraps to -2**31 first
        [lambda: ars([2**31 - 1, 5], [1, 1], "i32")],
        [
            lambda: ars([2**31 - 2**30, -(2**31), 5], [1, 31, 2], "i32"),
            lambda: ars([127, -128], [1, 7], "i8"),
            lambda: ars([2**31 - 1], [1], "i32", round_=False),
        ],
    ),
    "elementwise-index-u16-wraps": (
        [
            lambda: unary("ABS", np.arange(65537) - 7, "i32"),
            lambda: binary("ADD", np.arange(65537).reshape(1, 65537), [[1]], "i32"),
            lambda: unary("CAST", np.arange(65537) >= 65536, "bool", "i8"),
        ],
        [
            lambda: unary("ABS", np.arange(65536) - 7, "i32"),
            lambda: binary("GREATER", np.arange(65536), np.full(65536, 9), "i32", "bool"),
            # past the first 65536 the values repeat them: nothing can show
            lambda: unary("NEGATE", np.arange(65536 * 2) % 65536 - 5, "i32"),
        ],
    ),
    "minmax-signalling-nan-dropped": (
        [
            lambda: binary(
                "MAXIMUM", bits([0x7F800001, 0x3F800000], np.uint32), [2.0, 3.0], "fp32"
            ),
            lambda: binary("MINIMUM", [2.0], bits([0x7C01], np.uint16), "fp16"),
            lambda: binary("MAXIMUM", bits([0x7F81], np.uint16, BF16.storage), [1.0], "bf16"),
        ],
        [
            lambda: binary("MAXIMUM", [np.nan, 1.0, 5.0], [2.0, np.nan, 3.0], "fp32"),
            lambda: binary("MINIMUM", bits([0x7F800001], np.uint32), [np.nan], "fp32"),
        ],
    ),
    "sub-negation-saturates": (
        [lambda: binary("SUB", [-1, -5], [I32_MIN, I32_MIN], "i32")],
        [lambda: binary("SUB", [-1, 5, I32_MIN], [I32_MIN + 1, 3, -1], "i32")],
    ),
    "add-sub-i32-through-fp32": (
        # 2**30 + 1 is 2**30 in fp32
        [lambda: binary("ADD", [ONE_30 + 1], [1], "i32")],
        [lambda: binary("ADD", [2**23 + 1, -7], [2**23 - 1, 3], "i32")],
    ),
    "minmax-nan-from-input2-only": (
        [
            lambda: binary("MAXIMUM", [np.nan, 1.0], [2.0, 3.0], "fp32"),
            lambda: binary("MINIMUM", [np.nan], [2.0], "fp16"),
        ],
        [lambda: binary("MAXIMUM", [1.0, 2.0, -0.0], [np.nan, 3.0, 0.0], "fp32")],
    ),
    "minmax-zero-tie-swapped": (
        [
            lambda: binary("MAXIMUM", [-0.0], [0.0], "fp32"),
            lambda: binary("MINIMUM", [0.0], [-0.0], "bf16"),
        ],
        [lambda: binary("MAXIMUM", [1.0, -0.0, np.nan, 0.0], [2.0, -0.0, 0.0, 0.0], "fp32")],
    ),
    "mul-shift-ties-down": (
        # (3 + 1) >> 1 = 2 and (-3 + 1) >> 1 = -1; half-down gives 1 and -2
        [lambda: mul([3, -3], [1, 1], 1)],
        [lambda: mul([5, 7, -5], [1, 1, 1], 2)],
    ),
    "elementwise-row-remainder-stale": (
        [
            lambda: binary("ADD", row(2, 13), np.ones((2, 13), int), "i32"),
            lambda: binary("GREATER", row(1, 9), np.full((1, 9), 4), "i32", "bool"),
        ],
        [
            lambda: binary("ADD", row(2, 16), np.ones((2, 16), int), "i32"),
            lambda: binary("ADD", row(2, 7), np.ones((2, 7), int), "i32"),
        ],
    ),
    "fp16-add-sub-tile-operand-stale": (
        [lambda: binary("ADD", np.zeros(4097), np.arange(4097) % 1000, "fp16")],
        [
            lambda: binary("ADD", np.zeros(4096), np.arange(4096) % 1000, "fp16"),
            lambda: binary("SUB", np.zeros(5000), np.arange(5000) % 1000, "fp32"),
        ],
    ),
    "broadcast-by-cycling": (
        [
            lambda: binary("ADD", np.zeros((2, 3, 2)), np.arange(4.0).reshape(2, 1, 2), "fp32"),
            lambda: select([[True], [False]], np.zeros((2, 3)), np.ones((2, 3))),
            lambda: binary("ADD", [[0, -1, -2], [3, 4, 5]], [[I32_MAX], [0]], "i32"),
        ],
        [
            lambda: binary("ADD", np.zeros((2, 3, 2)), np.arange(2.0).reshape(1, 1, 2), "fp32"),
            lambda: select([True, False], np.zeros(2), np.ones(2)),
        ],
    ),
}

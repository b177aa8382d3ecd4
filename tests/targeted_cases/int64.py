"""Cases for the mutants of TOSA 1.1's 64-bit integer modes (EXT-INT64) and of CAST's
input_unsigned (cases of the 1.1 revision)."""

from __future__ import annotations

from typing import Any

import numpy as np
from mutant_cases import Case, case

from conformance.spec import load_revision
from targeted_cases import Cases

SPEC_1_1 = load_revision("1.1-draft")
I64_MAX = (1 << 63) - 1
I64_MIN = -(1 << 63)


def mul64(a: Any, b: Any) -> Case:
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    return case(
        "MUL",
        [("a", a, "i64"), ("b", b, "i64"), ("s", [0], "i8")],
        [("y", np.broadcast_shapes(a.shape, b.shape), "i64")],
        consts=("s",),
        spec=SPEC_1_1,
    )


def clz(x: Any, dt: str = "i64") -> Case:
    arr = np.asarray(x)
    return case("CLZ", [("x", arr, dt)], [("y", arr.shape, dt)], spec=SPEC_1_1)


def reduce_sum(x: Any, dt: str = "i64", axis: int = 0) -> Case:
    arr = np.asarray(x)
    out = tuple(1 if i == axis else d for i, d in enumerate(arr.shape))
    return case("REDUCE_SUM", [("x", arr, dt)], [("y", out, dt)], axis=axis, spec=SPEC_1_1)


def cast(x: Any, in_dt: str, out_dt: str, unsigned: bool) -> Case:
    arr = np.asarray(x)
    attrs = {"input_unsigned": True} if unsigned else {}
    return case("CAST", [("x", arr, in_dt)], [("y", arr.shape, out_dt)], spec=SPEC_1_1, **attrs)


CASES: Cases = {
    "mul-i64-low-32-bits": (
        [
            # 2**20 * 2**20 = 2**40, whose low 32 bits are 0
            lambda: mul64([1 << 20], [1 << 20]),
            # INT64_MAX * 2 keeps its low 64 bits: -2 (the low 32 bits also read -2, but
            # 3 * 2**31 = 6442450944 reads 2147483648 - 2**32 = -2147483648 in 32 bits)
            lambda: mul64([I64_MAX, 3], [2, 1 << 31]),
        ],
        [
            # products inside i32, and the i32 mode (untouched)
            lambda: mul64([46340, -7, I64_MIN], [46340, 3, 0]),
            lambda: case(
                "MUL",
                [("a", [1 << 20], "i32"), ("b", [1 << 20], "i32"), ("s", [0], "i8")],
                [("y", (1,), "i32")],
                consts=("s",),
                spec=SPEC_1_1,
            ),
        ],
    ),
    "clz-i64-counts-32-bits": (
        [
            # 2**40 has 23 leading zeros: 64 - 41; its low word is 0, so the mutant says 32
            lambda: clz([1 << 40, 0, 1]),
            # 2**32 + 1: 31 leading zeros; the low word 1 gives 31 too, but 0 gives 32 not 64
            lambda: clz([(1 << 32) + 1, 0]),
        ],
        [
            # the i32 mode is untouched
            lambda: clz([0, 1, -1, 1 << 30], "i32"),
            # negative i64 values: 0 either way (the low word of -1 is negative too)
            lambda: clz([-1, I64_MIN + (1 << 31)]),
        ],
    ),
    "reduce-sum-i64-in-float64": (
        [
            # 2**53 + 1: float64 rounds it to 2**53
            lambda: reduce_sum([1 << 53, 1]),
            # INT64_MAX, then INT64_MIN: the exact sum is -1; in float64 both are +-2**63
            # and the sum is 0
            lambda: reduce_sum([[I64_MAX, 7], [I64_MIN, -7]]),
        ],
        [
            # small sums are exact in float64, and the i32 mode is untouched
            lambda: reduce_sum([[1, -5], [1 << 40, 3]]),
            lambda: reduce_sum([1 << 29, 1 << 29], "i32"),
        ],
    ),
    "cast-input-unsigned-ignored": (
        [
            # i32 -1 read unsigned is 4294967295 (zero-extended), not -1
            lambda: cast([-1, 5, -(1 << 31)], "i32", "i64", True),
            # i8 -56 read unsigned is 200
            lambda: cast([-56, 3], "i8", "fp32", True),
        ],
        [
            # non-negative values read the same either way; input_unsigned false
            lambda: cast([0, 5, (1 << 31) - 1], "i32", "i64", True),
            lambda: cast([-1, 5], "i32", "i64", False),
        ],
    ),
}

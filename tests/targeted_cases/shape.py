"""Cases for the shape-operator mutants (ADD_SHAPE, SUB_SHAPE, MUL_SHAPE, DIV_SHAPE,
CONCAT_SHAPE, CONST_SHAPE, DIM), and for those of TOSA 1.1's shape operators, whose
cases are graphs of that revision."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from mutant_cases import Case, case

from conformance.builder import single_operator_graph
from conformance.spec import load_revision
from targeted_cases import Cases


def shape_binary(op: str, a: Sequence[int], b: Sequence[int]) -> Case:
    return case(
        op,
        [("a", list(a), "shape"), ("b", list(b), "shape")],
        [("y", (len(a),), "shape")],
        consts=("a", "b"),
    )


def concat_shape(*parts: Sequence[int]) -> Case:
    inputs = [(f"s{i}", list(p), "shape") for i, p in enumerate(parts)]
    total = sum(len(p) for p in parts)
    return case(
        "CONCAT_SHAPE", inputs, [("y", (total,), "shape")], consts=tuple(n for n, _, _ in inputs)
    )


def const_shape(values: Sequence[int]) -> Case:
    v = np.asarray(values, dtype=np.int64)
    graph = single_operator_graph("CONST_SHAPE", [], [("y", v.shape, "shape")], {"values": v})
    return Case(graph, {})


def dim(shape: tuple[int, ...], axis: int, dt: str = "i8") -> Case:
    x: Any = np.zeros(shape)
    return case("DIM", [("x", x, dt)], [("y", (1,), "shape")], axis=axis)


BIG = 1 << 31

CASES: Cases = {
    "shape-values-int32": (
        [
            lambda: shape_binary("ADD_SHAPE", [BIG - 1, 3], [1, 4]),
            lambda: shape_binary("MUL_SHAPE", [65536], [65536]),
            lambda: shape_binary("SUB_SHAPE", [-BIG], [1]),
            lambda: shape_binary("DIV_SHAPE", [BIG * 4], [2]),
            lambda: concat_shape([1, 2], [BIG * 3]),
            lambda: const_shape([BIG + 5, 1]),
        ],
        [
            lambda: shape_binary("ADD_SHAPE", [BIG - 2, -5], [1, 4]),
            lambda: shape_binary("MUL_SHAPE", [46340, -3], [46340, 7]),
            lambda: shape_binary("DIV_SHAPE", [BIG - 1, -7], [2, 2]),
            lambda: concat_shape([1, 2], [BIG - 1]),
            lambda: const_shape([-BIG, 4]),
        ],
    ),
    "div-shape-floors": (
        [
            lambda: shape_binary("DIV_SHAPE", [-7, 8], [2, 3]),
            lambda: shape_binary("DIV_SHAPE", [7], [-4]),
        ],
        [lambda: shape_binary("DIV_SHAPE", [7, -8, -9, 0], [2, -3, 3, -5])],
    ),
    "dim-axis-innermost-first": (
        [lambda: dim((2, 3), 0), lambda: dim((1, 4, 5, 2), 1, "fp32")],
        [lambda: dim((2, 3, 4), 1), lambda: dim((5,), 0), lambda: dim((3, 1, 3), 2)],
    ),
}


# -- TOSA 1.1's shape operators (cases of that revision) --------------------------------

SPEC_1_1 = load_revision("1.1-draft")


def shape_binary_1_1(op: str, a: Sequence[int], b: Sequence[int]) -> Case:
    return case(
        op,
        [("a", list(a), "shape"), ("b", list(b), "shape")],
        [("y", (len(a),), "shape")],
        consts=("a", "b"),
        spec=SPEC_1_1,
    )


def shape_unary_1_1(op: str, x: Sequence[int], level: str = "8K") -> Case:
    c = case(op, [("x", list(x), "shape")], [("y", (len(x),), "shape")], ("x",), SPEC_1_1)
    c.level = level
    return c


def slice_shape(x: Sequence[int], start: int, size: int) -> Case:
    return case(
        "SLICE_SHAPE",
        [("x", list(x), "shape"), ("start", [start], "i32"), ("size", [size], "i32")],
        [("y", (size,), "shape")],
        consts=("x", "start", "size"),
        spec=SPEC_1_1,
    )


def assert_equal_shape(a: Sequence[int], b: Sequence[int], allow_broadcast: bool) -> Case:
    return case(
        "ASSERT_EQUAL_SHAPE",
        [("a", list(a), "shape"), ("b", list(b), "shape")],
        [],
        consts=("a", "b"),
        spec=SPEC_1_1,
        allow_broadcast=allow_broadcast,
    )


I32_TOP = (1 << 31) - 1  # tensor_size_t's maximum at level 8K (MAX_LOG2_SIZE 31)

CASES.update(
    {
        "div-ceil-shape-sum-overflows": (
            [
                # ceil((2**31 - 1) / 2) = 2**30; the sum 2**31 wraps to -2**31: -2**30
                lambda: shape_binary_1_1("DIV_CEIL_SHAPE", [I32_TOP], [2]),
                # (2**31 - 2) / 3 = 715827882 exactly; 2**31 - 2 + 2 wraps as well
                lambda: shape_binary_1_1("DIV_CEIL_SHAPE", [5, I32_TOP - 1], [2, 3]),
            ],
            # sums 8, 4, 2**31 - 2: no wrap; ceil gives 4, 0, 2**31 - 2
            [lambda: shape_binary_1_1("DIV_CEIL_SHAPE", [7, 0, I32_TOP - 1], [2, 5, 1])],
        ),
        "div-floor-shape-fp32": (
            # 2**24 + 1 is 2**24 in fp32
            [lambda: shape_binary_1_1("DIV_FLOOR_SHAPE", [(1 << 24) + 1, 7], [1, 2])],
            # exact in fp32: 2**24 / 1, 7 / 2 = 3.5 -> 3, 1000 / 7 = 142.86 -> 142
            [lambda: shape_binary_1_1("DIV_FLOOR_SHAPE", [1 << 24, 7, 1000], [1, 2, 7])],
        ),
        "mod-shape-mask": (
            # 7 % 3 = 1; 7 & 2 = 2
            [lambda: shape_binary_1_1("MOD_SHAPE", [7, 9], [3, 4])],
            # powers of two: 7 & 3 = 3, 13 & 7 = 5, 0 & 0 = 0
            [lambda: shape_binary_1_1("MOD_SHAPE", [7, 13, 0], [4, 8, 1])],
        ),
        "min-max-shape-unsigned": (
            [
                # min(-1, 5) = -1; unsigned, -1 is 2**64 - 1: 5
                lambda: shape_binary_1_1("MIN_SHAPE", [-1, 3], [5, 2]),
                lambda: shape_binary_1_1("MAX_SHAPE", [-1], [5]),
            ],
            [
                # same signs: unsigned order is the signed one
                lambda: shape_binary_1_1("MIN_SHAPE", [3, -4], [7, -2]),
                lambda: shape_binary_1_1("MAX_SHAPE", [0, 9], [0, 4]),
            ],
        ),
        "exp2-shape-int32-shift": (
            # level none: 2**40 and 2**31; in 32 bits 1 << (40 & 31) = 256 and -2**31
            [lambda: shape_unary_1_1("EXP2_SHAPE", [40, 31], "none")],
            [
                lambda: shape_unary_1_1("EXP2_SHAPE", [0, 5, 30], "none"),
                lambda: shape_unary_1_1("EXP2_SHAPE", [30, 1]),
            ],
        ),
        "exp2-shape-fp16-path": (
            [
                # 2**16 = 65536 is past fp16's largest finite 65504: +inf, saturated to
                # 2**31 - 1 at 8K; 2**3 = 8 is exact
                lambda: shape_unary_1_1("EXP2_SHAPE", [16, 3]),
                # the largest exponent at 8K: 2**30, not 2**31 - 1
                lambda: shape_unary_1_1("EXP2_SHAPE", [30]),
            ],
            # 2**15 = 32768 <= 65504, 2**0 = 1, 2**7 = 128: exact in fp16
            [lambda: shape_unary_1_1("EXP2_SHAPE", [15, 0, 7])],
        ),
        "log2-ceil-shape-bit-length": (
            # ceil(log2(8)) = 3 and of 1, 0; bit lengths 4 and 1
            [lambda: shape_unary_1_1("LOG2_CEIL_SHAPE", [8, 1])],
            # not powers of two: 5 -> 3, 3 -> 2, 2**31 - 1 -> 31, as their bit lengths
            [lambda: shape_unary_1_1("LOG2_CEIL_SHAPE", [5, 3, I32_TOP])],
        ),
        "log2-floor-shape-fp32": (
            # floor(log2(2**31 - 1)) = 30, of 2**25 - 1 24; in fp32 they are 2**31, 2**25
            [lambda: shape_unary_1_1("LOG2_FLOOR_SHAPE", [I32_TOP, (1 << 25) - 1])],
            # 2**24 - 1 is exact in fp32: 23; 1000: 9; 2**30: 30
            [lambda: shape_unary_1_1("LOG2_FLOOR_SHAPE", [(1 << 24) - 1, 1000, 1 << 30])],
        ),
        "slice-shape-innermost-first": (
            # [2, 3, 4, 5][0:2] = [2, 3]; counted from the end: [4, 5]
            [lambda: slice_shape([2, 3, 4, 5], 0, 2)],
            # centred slices: [3, 4] both ways; a whole one-element shape
            [lambda: slice_shape([2, 3, 4, 5], 1, 2), lambda: slice_shape([7], 0, 1)],
        ),
        "assert-equal-shape-one-sided-broadcast": (
            # input1 holds the 1: broadcast-compatible, refused one-sidedly
            [lambda: assert_equal_shape([1, 4], [3, 4], True)],
            [
                lambda: assert_equal_shape([3, 4], [1, 4], True),
                lambda: assert_equal_shape([2, 3], [2, 3], False),
            ],
        ),
    }
)

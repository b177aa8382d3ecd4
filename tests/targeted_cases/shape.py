"""Cases for the shape-operator mutants (ADD_SHAPE, SUB_SHAPE, MUL_SHAPE, DIV_SHAPE,
CONCAT_SHAPE, CONST_SHAPE, DIM)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from mutant_cases import Case, case

from conformance.builder import single_operator_graph
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

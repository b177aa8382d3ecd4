"""Cases for the data-layout mutants added by the red team (RESHAPE, TILE, PAD,
REVERSE)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from mutant_cases import Case, case

from conformance.builder import GraphBuilder
from conformance.dtypes import dtype
from targeted_cases import Cases


def reshape(x: Any, shape: Sequence[int], dt: str = "i8") -> Case:
    x = np.asarray(x)
    return case(
        "RESHAPE",
        [("x", x, dt), ("s", list(shape), "shape")],
        [("y", tuple(shape), dt)],
        consts=("s",),
    )


def tile(x: Any, multiples: Sequence[int], dt: str = "i8") -> Case:
    x = np.asarray(x)
    out = tuple(d * m for d, m in zip(x.shape, multiples, strict=True))
    return case(
        "TILE", [("x", x, dt), ("m", list(multiples), "shape")], [("y", out, dt)], consts=("m",)
    )


def pad(
    x: Any, padding: Sequence[int], const: float = 0.0, dt: str = "fp32", out: Sequence[int] = ()
) -> Case:
    x = np.asarray(x)
    p = np.asarray(padding).reshape(-1, 2)
    out = tuple(out) or tuple(int(d + a + b) for d, (a, b) in zip(x.shape, p, strict=True))
    return case(
        "PAD",
        [("x", x, dt), ("p", list(padding), "shape")],
        [("y", out, dt)],
        consts=("p",),
        pad_const=const,
    )


def reverse(x: Any, axis: int, dt: str = "i8") -> Case:
    x = np.asarray(x)
    return case("REVERSE", [("x", x, dt)], [("y", x.shape, dt)], axis=axis)


def transpose_reshape(x: Any, perms: tuple[int, ...], shape: Sequence[int], dt: str = "i8") -> Case:
    """TRANSPOSE(x, perms) feeding RESHAPE(shape)."""
    x = np.asarray(x)
    moved = tuple(x.shape[p] for p in perms)
    g = GraphBuilder()
    main = g.block("main")
    main.input("x", x.shape, dt)
    main.tensor("t", moved, dt)
    main.tensor("s", (len(shape),), "shape", data=np.asarray(shape, dtype=np.int64))
    main.tensor("y", tuple(shape), dt)
    main.op("TRANSPOSE", ["x"], ["t"], perms=perms)
    main.op("RESHAPE", ["t", "s"], ["y"])
    main.output("y")
    return Case(g.build(), {"x": x.astype(dtype(dt).storage)})


def concat_of(parts: Sequence[tuple[str, Any]], axis: int, dt: str = "i8") -> Case:
    arrays = {name: np.asarray(v) for name, v in parts}
    shapes = [arrays[name].shape for name, _ in parts]
    out = list(shapes[0])
    out[axis] = sum(s[axis] for s in shapes)
    return case(
        "CONCAT",
        [(name, arrays[name], dt) for name, _ in parts],
        [("out", tuple(out), dt)],
        axis=axis,
    )


def concat(xs: Sequence[np.ndarray], out: tuple[int, ...]) -> Case:
    inputs = [(f"x{i}", x, "i8") for i, x in enumerate(xs)]
    return case("CONCAT", inputs, [("y", out, "i8")], axis=0)


def transpose(x: Any, perms: tuple[int, ...]) -> Case:
    x = np.asarray(x)
    out = tuple(x.shape[p] for p in perms)
    return case("TRANSPOSE", [("x", x, "i8")], [("y", out, "i8")], perms=perms)


def slice_(x: Any, start: list[int], size: list[int]) -> Case:
    return case(
        "SLICE",
        [("x", np.asarray(x), "i8"), ("start", start, "shape"), ("size", size, "shape")],
        [("y", tuple(size), "i8")],
        consts=("start", "size"),
    )


NHWC_1223 = np.arange(12).reshape(1, 2, 2, 3)

CASES: Cases = {
    "reshape-nchw-order": (
        [
            lambda: reshape(NHWC_1223, (1, 12)),
            lambda: reshape(np.arange(8.0).reshape(2, 2, 1, 2), (2, 2, 2), "fp32"),
        ],
        [
            lambda: reshape(np.arange(6).reshape(1, 2, 3, 1), (1, 6)),
            lambda: reshape(np.arange(6).reshape(2, 1, 1, 3), (6,)),
            lambda: reshape(NHWC_1223, (1, 4, 1, 3)),
            lambda: reshape(np.arange(12).reshape(3, 4), (2, 6)),
        ],
    ),
    "tile-repeats-elements": (
        [lambda: tile([1, 2], [2]), lambda: tile([[1.0], [2.0]], [2, 3], "fp32")],
        [
            lambda: tile([[1, 2]], [3, 1]),
            lambda: tile([[5]], [2, 2]),
            lambda: tile([1, 2, 3], [1]),
        ],
    ),
    "pad-negative-zero-const": (
        [lambda: pad([1.0, 2.0], [1, 1], -0.0), lambda: pad([[1.0]], [0, 0, 0, 2], -0.0, "bf16")],
        [
            lambda: pad([1.0, -0.0], [1, 1], 0.0),
            lambda: pad([1.0, 2.0], [1, 0], -1.5),
            lambda: pad([3, 4], [1, 1], 0, "i8"),
        ],
    ),
    "reverse-axis-innermost-first": (
        [
            lambda: reverse([[1, 2, 3], [4, 5, 6]], 0),
            lambda: reverse(np.arange(8.0).reshape(2, 2, 2), 2, "fp32"),
        ],
        [
            lambda: reverse([1, 2, 3], 0),
            # the middle axis of rank 3 is its own mirror
            lambda: reverse(np.arange(12).reshape(2, 3, 2), 1),
        ],
    ),
    "reshape-after-transpose-folded": (
        [
            lambda: transpose_reshape(np.arange(6).reshape(2, 3), (1, 0), (6,)),
            lambda: transpose_reshape(np.arange(24.0).reshape(2, 3, 4), (0, 2, 1), (2, 12), "fp32"),
        ],
        [
            # moving a size-1 axis keeps the order: the fold is right
            lambda: transpose_reshape(np.arange(3).reshape(1, 3), (1, 0), (3,)),
            lambda: reshape(np.arange(6).reshape(2, 3), (3, 2)),
        ],
    ),
    "concat-repeated-input-unwritten": (
        [
            lambda: concat_of([("x", [1, 2]), ("y", [3]), ("x", [1, 2])], 0),
            lambda: concat_of([("x", [[1.0], [2.0]]), ("x", [[1.0], [2.0]])], 1, "fp32"),
        ],
        [
            lambda: concat_of([("x", [1, 2]), ("y", [1, 2]), ("z", [3])], 0),
            lambda: concat_of([("x", [[1, 2]]), ("y", [[3, 4]])], 0),
        ],
    ),
    "concat-rank0-unwritten": (
        [lambda: concat([np.int8(5), np.int8(0)], (2,))],
        [lambda: concat([np.array([5]), np.array([6])], (2,))],
    ),
    "transpose-generic-inverse-perm": (
        [lambda: transpose(np.arange(24).reshape(2, 3, 4, 1, 1), (1, 2, 0, 3, 4))],
        [
            lambda: transpose(np.arange(24).reshape(2, 3, 4), (1, 2, 0)),
            lambda: transpose(np.arange(24).reshape(2, 3, 4, 1, 1), (1, 0, 2, 4, 3)),
        ],
    ),
    "reverse-axis0-merged": (
        [lambda: reverse(np.arange(4).reshape(2, 2, 1, 1, 1), 0)],
        [
            lambda: reverse(np.arange(4).reshape(2, 2, 1, 1, 1), 1),
            lambda: reverse(np.arange(4).reshape(2, 2, 1, 1), 0),
        ],
    ),
    "slice-last-axis-start-early": (
        [lambda: slice_([1, 2, 3, 4], [2], [2])],
        [lambda: slice_([[1, 2], [3, 4]], [1, 0], [1, 2])],
    ),
    "pad-before-after-swapped": (
        [lambda: pad([1.0, 2.0], [1, 0])],
        [lambda: pad([[1.0, 2.0]], [0, 0, 2, 2])],
    ),
}

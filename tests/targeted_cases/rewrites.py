"""Cases for the graph-rewrite mutants (conformance.backends.mutants.rewrites): each a
small chain, where the rewrite's condition holds (the mutant's output fails) and where
it does not (the fold is right, the mutant must give the reference's bits)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from mutant_cases import Case

from conformance.builder import GraphBuilder
from conformance.dtypes import dtype
from targeted_cases import Cases

Const = tuple[str, Any, str]  # a constant operand: (name, value, type)


def chain(
    x: Any,
    dt: str,
    steps: Sequence[tuple[str, Sequence[str | Const], Sequence[int], str, dict[str, Any]]],
) -> Case:
    """Graph input ``x`` through ``steps``: (operator, its inputs, output shape, output
    type, attributes); an input "prev" is the step before's output (x for the first),
    a tuple a constant."""
    x = np.asarray(x).astype(dtype(dt).storage)
    g = GraphBuilder()
    main = g.block("main")
    main.input("x", x.shape, dt)
    prev = "x"
    for k, (op, inputs, shape, out_dt, attrs) in enumerate(steps):
        names = []
        for i in inputs:
            if isinstance(i, tuple):
                name, value, t = i
                data = np.asarray(value).astype(dtype(t).storage)
                main.tensor(name, data.shape, t, data=data)
                names.append(name)
            else:
                names.append(prev if i == "prev" else i)
        out = f"t{k}"
        main.tensor(out, tuple(shape), out_dt)
        main.op(op, names, [out], **attrs)
        prev = out
    main.output(prev)
    return Case(g.build(), {"x": x})


def _shape(values: Sequence[int], name: str) -> Const:
    return (name, np.asarray(values, dtype=np.int64), "shape")


def mul_zero(x: Any, zero: Any, dt: str = "fp32") -> Case:
    x = np.asarray(x)
    shift = ("shift", np.int8(0), "i8")
    return chain(x, dt, [("MUL", ["prev", ("zero", zero, dt), shift], x.shape, dt, {})])


def sub(x: Any, other: str | Const, dt: str = "fp32") -> Case:
    x = np.asarray(x)
    return chain(x, dt, [("SUB", ["prev", other], x.shape, dt, {})])


def clamps(x: Any, first: tuple[float, float], second: tuple[float, float], dt: str = "i8") -> Case:
    x = np.asarray(x)
    steps = [
        ("CLAMP", ["prev"], x.shape, dt, {"min_val": first[0], "max_val": first[1]}),
        ("CLAMP", ["prev"], x.shape, dt, {"min_val": second[0], "max_val": second[1]}),
    ]
    return chain(x, dt, steps)


def min_max(x: Any, hi: float, lo: float, dt: str = "i32") -> Case:
    x = np.asarray(x)
    ones = (1,) * x.ndim
    steps = [
        ("MINIMUM", ["prev", ("hi", np.full(ones, hi), dt)], x.shape, dt, {}),
        ("MAXIMUM", ["prev", ("lo", np.full(ones, lo), dt)], x.shape, dt, {}),
    ]
    return chain(x, dt, steps)


def transposes(x: Any, p1: tuple[int, ...], p2: tuple[int, ...], dt: str = "i8") -> Case:
    x = np.asarray(x)
    mid = tuple(x.shape[i] for i in p1)
    out = tuple(mid[i] for i in p2)
    steps = [
        ("TRANSPOSE", ["prev"], mid, dt, {"perms": p1}),
        ("TRANSPOSE", ["prev"], out, dt, {"perms": p2}),
    ]
    return chain(x, dt, steps)


def reverses(x: Any, a1: int, a2: int, dt: str = "i8") -> Case:
    x = np.asarray(x)
    steps = [
        ("REVERSE", ["prev"], x.shape, dt, {"axis": a1}),
        ("REVERSE", ["prev"], x.shape, dt, {"axis": a2}),
    ]
    return chain(x, dt, steps)


def reshape_transpose_reshape(
    x: Any, mid: tuple[int, ...], perms: tuple[int, ...], out: tuple[int, ...], dt: str = "i8"
) -> Case:
    moved = tuple(mid[i] for i in perms)
    steps = [
        ("RESHAPE", ["prev", _shape(mid, "s1")], mid, dt, {}),
        ("TRANSPOSE", ["prev"], moved, dt, {"perms": perms}),
        ("RESHAPE", ["prev", _shape(out, "s2")], out, dt, {}),
    ]
    return chain(x, dt, steps)


def slice_concat(x: Any, y: Any, start: list[int], size: list[int], dt: str = "i8") -> Case:
    """CONCAT(x, y) on axis 0, then SLICE."""
    x, y = np.asarray(x), np.asarray(y)
    cat = (x.shape[0] + y.shape[0], *x.shape[1:])
    steps = [
        ("CONCAT", ["prev", ("y", y, dt)], cat, dt, {"axis": 0}),
        ("SLICE", ["prev", _shape(start, "start"), _shape(size, "size")], size, dt, {}),
    ]
    return chain(x, dt, steps)


def slices(x: Any, s1: list[int], z1: list[int], s2: list[int], z2: list[int]) -> Case:
    steps = [
        ("SLICE", ["prev", _shape(s1, "start1"), _shape(z1, "size1")], z1, "i8", {}),
        ("SLICE", ["prev", _shape(s2, "start2"), _shape(z2, "size2")], z2, "i8", {}),
    ]
    return chain(x, "i8", steps)


def pads(x: Any, p1: list[int], c1: int, p2: list[int], c2: int, dt: str = "i8") -> Case:
    x = np.asarray(x)
    mid = tuple(d + p1[2 * i] + p1[2 * i + 1] for i, d in enumerate(x.shape))
    out = tuple(d + p2[2 * i] + p2[2 * i + 1] for i, d in enumerate(mid))
    steps = [
        ("PAD", ["prev", _shape(p1, "p1")], mid, dt, {"pad_const": c1}),
        ("PAD", ["prev", _shape(p2, "p2")], out, dt, {"pad_const": c2}),
    ]
    return chain(x, dt, steps)


def casts(x: Any, wide: str, narrow: str) -> Case:
    x = np.asarray(x)
    return chain(
        x, wide, [("CAST", ["prev"], x.shape, narrow, {}), ("CAST", ["prev"], x.shape, wide, {})]
    )


def pad_pool(
    op: str,
    x: Any,
    padding: list[int],
    pad_const: float,
    kernel: tuple[int, int],
    pad: tuple[int, int, int, int] = (0, 0, 0, 0),
) -> Case:
    """PAD(x) of the spatial axes feeding a stride-1 pool (fp32)."""
    x = np.asarray(x, dtype=np.float32)
    mid = tuple(d + padding[2 * i] + padding[2 * i + 1] for i, d in enumerate(x.shape))
    oh = mid[1] + pad[0] + pad[1] - kernel[0] + 1
    ow = mid[2] + pad[2] + pad[3] - kernel[1] + 1
    attrs: dict[str, Any] = {"kernel": kernel, "stride": (1, 1), "pad": pad}
    if op == "AVG_POOL2D":
        attrs |= {"acc_type": "FP32", "input_zp": 0.0, "output_zp": 0.0}
    steps = [
        ("PAD", ["prev", _shape(padding, "p")], mid, "fp32", {"pad_const": pad_const}),
        (op, ["prev"], (mid[0], oh, ow, mid[3]), "fp32", attrs),
    ]
    return chain(x, "fp32", steps)


def conv_rescale(
    x: int, weights: Sequence[int], mults: Sequence[int], shifts: Sequence[int], output_zp: int
) -> Case:
    """A 1x1 CONV2D of one i8 input element to len(weights) channels (i32), then a
    per-channel RESCALE to i8."""
    c = len(weights)
    conv = {
        "pad": (0, 0, 0, 0),
        "stride": (1, 1),
        "dilation": (1, 1),
        "acc_type": "INT32",
        "input_zp": 0,
        "weight_zp": 0,
    }
    rescale = {
        "input_zp": 0,
        "output_zp": output_zp,
        "scale32": True,
        "double_round": False,
        "per_channel": True,
        "input_unsigned": False,
        "output_unsigned": False,
    }
    w = ("w", np.asarray(weights).reshape(c, 1, 1, 1), "i8")
    steps = [
        ("CONV2D", ["prev", w, ("b", np.zeros(c), "i32")], (1, 1, 1, c), "i32", conv),
        (
            "RESCALE",
            ["prev", ("m", mults, "i32"), ("s", shifts, "i8")],
            (1, 1, 1, c),
            "i8",
            rescale,
        ),
    ]
    return chain(np.full((1, 1, 1, 1), x), "i8", steps)


GRID = np.arange(1.0, 10.0).reshape(1, 3, 3, 1)  # 1..9
CUBE = np.arange(24).reshape(2, 3, 4)

CASES: Cases = {
    # NaN * 0 and inf * 0 are NaN; 3 * 0 is 0 (and -3 * 0 is -0, which MUL's check
    # does not compare), so a fold to 0 is right on finite inputs.
    "mul-by-zero-folded": (
        [
            lambda: mul_zero([1.0, np.inf, 3.0], [0.0, 0.0, 0.0]),
            lambda: mul_zero([[np.nan, 2.0]], [[0.0]]),
        ],
        [lambda: mul_zero([1.0, 2.0, 3.0], [0.0, 0.0, 0.0]), lambda: mul_zero([np.inf], [2.0])],
    ),
    # inf - inf is NaN; 5 - 5 is 0.
    "sub-self-folded": (
        [lambda: sub([np.inf, 1.0], "prev"), lambda: sub([[np.nan]], "prev")],
        [lambda: sub([5.0, -2.0], "prev"), lambda: sub([np.inf], ("y", [1.0], "fp32"))],
    ),
    # [-10, 5] then [20, 30]: every value is at most 5, then raised to 20.  The merged
    # range [20, 5] is empty, a clip that applies max_val last gives 5.  Overlapping
    # [-10, 5] then [0, 30]: the merge [0, 5] is right; [20, 30] then [-10, 5] gives 5
    # both ways with this clip (one that applies min_val last would give 20: the
    # pack's chains draw both orders).
    "clamp-clamp-merged": (
        [
            lambda: clamps([-50, 0, 50], (-10, 5), (20, 30)),
            lambda: clamps([1.5, -7.0], (1.0, 2.0), (5.0, 7.0), "fp32"),
        ],
        [lambda: clamps([-50, 0, 50], (-10, 5), (0, 30)), lambda: clamps([0], (20, 30), (-10, 5))],
    ),
    # max(min(x, -5), 10) is 10 everywhere; a clip of x to [10, -5] gives -5.
    "min-max-fused-as-clamp": (
        [lambda: min_max([-20, 0, 20], -5, 10), lambda: min_max([[1.0, 2.0]], 0.0, 0.5, "fp32")],
        [lambda: min_max([-20, 0, 20], 10, -5)],
    ),
    # (1, 0, 2) then (0, 2, 1) is the one permutation (1, 2, 0); composed the wrong way
    # round it is (2, 0, 1).  A pair that commutes ((1, 2, 0) twice, (1, 0, 2) twice)
    # composes the same either way.
    "transposes-composed-backwards": (
        [
            lambda: transposes(CUBE, (1, 0, 2), (0, 2, 1)),
            lambda: transposes(CUBE, (2, 0, 1), (1, 0, 2)),
        ],
        [
            lambda: transposes(CUBE, (1, 2, 0), (1, 2, 0)),
            lambda: transposes(CUBE, (1, 0, 2), (1, 0, 2)),
        ],
    ),
    "reverse-pair-cancelled": (
        [lambda: reverses([[1, 2], [3, 4]], 0, 1)],
        [lambda: reverses([[1, 2], [3, 4]], 1, 1), lambda: reverses([[1, 2, 3]], 0, 0)],
    ),
    # [6] -> [2, 3] -> transposed [3, 2] -> [6]: 0 3 1 4 2 5, not 0 1 2 3 4 5.
    "reshapes-merged-across-transpose": (
        [lambda: reshape_transpose_reshape(np.arange(6), (2, 3), (1, 0), (6,))],
        [lambda: reshape_transpose_reshape(np.arange(3), (1, 3), (1, 0), (3,))],
    ),
    # CONCAT([1, 2, 3], [4, 5]) = 1 2 3 4 5; SLICE(1, 3) = 2 3 4 crosses the seam at 3.
    "slice-of-concat-one-input": (
        [
            lambda: slice_concat([1, 2, 3], [4, 5], [1], [3]),
            lambda: slice_concat([1], [4, 5], [0], [2]),
        ],
        [
            lambda: slice_concat([1, 2, 3], [4, 5], [0], [2]),
            lambda: slice_concat([1, 2, 3], [4, 5], [3], [2]),
        ],
    ),
    # x = 0..5; SLICE(2, 3) = 2 3 4; then SLICE(1, 2) = 3 4; dropping the first start
    # gives 1 2.
    "slice-slice-offset-dropped": (
        [lambda: slices(np.arange(6), [2], [3], [1], [2])],
        [lambda: slices(np.arange(6), [0], [4], [1], [2])],
    ),
    # [7] padded with 1 on both sides (pad_const 0) then 9: 9 0 7 0 9; merged with 9:
    # 9 9 7 9 9.
    "pad-pad-merged": (
        [lambda: pads([7], [1, 1], 0, [1, 1], 9)],
        [lambda: pads([7], [1, 1], 9, [1, 1], 9), lambda: pads([7], [0, 0], 0, [1, 1], 9)],
    ),
    # 300 through i8 is 44 (300 - 256); -129 is 127; dropping the casts keeps them.
    "cast-round-trip-dropped": (
        [lambda: casts([300, -129, 5], "i32", "i8"), lambda: casts([40000], "i32", "i16")],
        [lambda: casts([100, -128, 5], "i32", "i8")],
    ),
    # Top row padded (pad_const 0) then a 2x2 average from the top-left: the graph gives
    # (0 + 0 + 1 + 2) / 4 = 0.75; folded into the pool's own pad the window holds two
    # input elements, (1 + 2) / 2 = 1.5.  Without a border both agree.
    "avg-pool-folds-pad": (
        [lambda: pad_pool("AVG_POOL2D", GRID, [0, 0, 1, 0, 0, 0, 0, 0], 0.0, (2, 2))],
        [
            lambda: pad_pool("AVG_POOL2D", GRID, [0, 0, 0, 0, 0, 0, 0, 0], 0.0, (2, 2)),
            lambda: pad_pool("AVG_POOL2D", GRID, [0, 0, 1, 0, 0, 0, 0, 0], 3.0, (2, 2)),
        ],
    ),
    # pad_const 100 above every element: each window over the border is 100, folded it
    # is the window's own maximum.  pad_const -100 is below them all: the fold is right.
    # acc [10, 20]; channel scales 2**30 >> 31 (0.5) and 2**30 >> 30 (1): [5, 20].  One
    # scale for both (the first's) gives [5, 10].
    "conv-epilogue-per-tensor-scale": (
        [lambda: conv_rescale(10, [1, 2], [2**30, 2**30], [31, 30], 0)],
        [lambda: conv_rescale(10, [1, 2], [2**30, 2**30], [31, 31], 0)],
    ),
    # acc [100, 200] at scale 1, output_zp 50: the graph saturates 150 and 250 to 127;
    # saturated first, [100, 127] + 50 wraps in 8 bits to [-106, -79].  acc [10, 20]
    # gives [60, 70] both ways.
    "conv-epilogue-zp-after-saturation": (
        [lambda: conv_rescale(100, [1, 2], [2**30, 2**30], [30, 30], 50)],
        [
            lambda: conv_rescale(10, [1, 2], [2**30, 2**30], [30, 30], 50),
            lambda: conv_rescale(100, [1, 2], [2**30, 2**30], [30, 30], 0),
        ],
    ),
    "max-pool-folds-pad": (
        [lambda: pad_pool("MAX_POOL2D", GRID, [0, 0, 1, 0, 0, 0, 0, 0], 100.0, (2, 2))],
        [lambda: pad_pool("MAX_POOL2D", GRID, [0, 0, 1, 0, 0, 0, 0, 0], -100.0, (2, 2))],
    ),
}

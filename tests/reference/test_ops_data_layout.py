"""Reference evaluator: CONCAT, PAD, RESHAPE, REVERSE, SLICE, TILE, TRANSPOSE."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reference_helpers import assert_rule

from conformance.builder import single_operator_graph
from conformance.dtypes import DType
from conformance.graph import Graph
from conformance.spec import load_spec
from reference.arguments import ATTRIBUTES_CLAUSE, INPUTS_CLAUSE, OUTPUTS_CLAUSE, TYPES_CLAUSE
from reference.engine import Evaluator, evaluate
from reference.outcome import Outcome
from strategies.values import sample_storage

SPEC = load_spec()
LAYOUT = ("CONCAT", "PAD", "RESHAPE", "REVERSE", "SLICE", "TILE", "TRANSPOSE")
TENSOR_SIZE_CLAUSE = "1 <= shape[i] && shape[i] <= maximum<size_t> / size (tensor_size)"


def shape_const(values: Sequence[int]) -> np.ndarray:
    return np.array(values, dtype=np.int64)


@dataclass
class Case:
    """One single-operator graph and its input values."""

    op: str
    inputs: list[tuple[str, tuple[int, ...], Any]]
    out_shape: tuple[int, ...]
    dtype: Any
    attrs: dict[str, Any] = field(default_factory=dict)
    values: dict[str, np.ndarray] = field(default_factory=dict)
    constants: dict[str, np.ndarray] = field(default_factory=dict)

    def graph(self) -> Graph:
        return single_operator_graph(
            self.op,
            self.inputs,
            [("y", self.out_shape, self.dtype)],
            self.attrs,
            constants=self.constants,
        )

    def run(self) -> Outcome:
        return evaluate(self.graph(), self.values)

    def run_storage(self) -> np.ndarray:
        """The output as the next operator would read it (storage type, not fp64)."""
        graph = self.graph()
        main = graph.main
        evaluator = Evaluator(graph, SPEC, SPEC.level("8K"))
        outs, _ = evaluator.run_block(main, [self.values[n] for n in main.inputs], depth=0)
        return outs[0]


def with_shapes(
    op: str,
    x: np.ndarray,
    dt: Any,
    out_shape: Sequence[int],
    shapes: dict[str, Sequence[int]],
    attrs: dict[str, Any] | None = None,
) -> Case:
    """An operator on input1 ``x`` whose shape_t inputs are constants."""
    inputs = [("x", tuple(x.shape), dt)] + [(n, (len(v),), "shape") for n, v in shapes.items()]
    return Case(
        op,
        inputs,
        tuple(out_shape),
        dt,
        attrs or {},
        {"x": x},
        {n: shape_const(v) for n, v in shapes.items()},
    )


def pad(x: np.ndarray, dt: Any, padding: Sequence[int], out: Sequence[int], c: Any = 0) -> Case:
    return with_shapes("PAD", x, dt, out, {"padding": padding}, {"pad_const": c})


def slice_(
    x: np.ndarray, dt: Any, start: Sequence[int], size: Sequence[int], out: Sequence[int]
) -> Case:
    return with_shapes("SLICE", x, dt, out, {"start": start, "size": size})


def tile(x: np.ndarray, dt: Any, multiples: Sequence[int], out: Sequence[int]) -> Case:
    return with_shapes("TILE", x, dt, out, {"multiples": multiples})


def reshape(x: np.ndarray, dt: Any, shape: Sequence[int], out: Sequence[int]) -> Case:
    return with_shapes("RESHAPE", x, dt, out, {"shape": shape})


def transpose(x: np.ndarray, dt: Any, perms: Sequence[int], out: Sequence[int]) -> Case:
    return Case(
        "TRANSPOSE", [("x", x.shape, dt)], tuple(out), dt, {"perms": tuple(perms)}, {"x": x}
    )


def reverse(x: np.ndarray, dt: Any, axis: int, out: Sequence[int] | None = None) -> Case:
    shape = x.shape if out is None else tuple(out)
    return Case("REVERSE", [("x", x.shape, dt)], shape, dt, {"axis": axis}, {"x": x})


def concat(xs: Sequence[np.ndarray], dt: Any, axis: int, out: Sequence[int], dts=None) -> Case:
    names = [f"x{k}" for k in range(len(xs))]
    types = dts or [dt] * len(xs)
    inputs = [(n, tuple(x.shape), t) for n, x, t in zip(names, xs, types, strict=True)]
    return Case("CONCAT", inputs, tuple(out), dt, {"axis": axis}, dict(zip(names, xs, strict=True)))


def output(outcome: Outcome) -> np.ndarray:
    assert outcome.kind == "valid", str(outcome)
    return outcome.outputs["y"]


# -- hand-checked values ----------------------------------------------------------

X23 = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int8)


def test_pad_by_hand() -> None:
    # padding [1, 0, 2, 1]: one row before, none after; two columns before, one after.
    # Output shape [1 + 2 + 0, 2 + 3 + 1] = [3, 6]; input lands at rows 1..2, cols 2..4.
    out = output(pad(X23, "i8", [1, 0, 2, 1], [3, 6], -7).run())
    assert out.tolist() == [
        [-7, -7, -7, -7, -7, -7],
        [-7, -7, 1, 2, 3, -7],
        [-7, -7, 4, 5, 6, -7],
    ]


def test_pad_with_zero_padding_is_a_copy() -> None:
    assert output(pad(X23, "i8", [0, 0, 0, 0], [2, 3], 9).run()).tolist() == X23.tolist()


def test_pad_const_takes_the_tensor_type() -> None:
    # 0.1 is stored as bf16 0.10009765625 (8 significant bits), like any bf16 value.
    out = output(pad(np.ones((1, 1)), "bf16", [0, 0, 0, 1], [1, 2], 0.1).run())
    assert out.tolist() == [[1.0, float(ml_dtypes.bfloat16(0.1))]]
    # Booleans pad with true for any non-zero constant.
    out = output(pad(np.zeros((1, 1), bool), "bool", [1, 0, 0, 0], [2, 1], 1).run())
    assert out.tolist() == [[True], [False]]


def test_slice_by_hand() -> None:
    x = np.arange(12, dtype=np.int32).reshape(3, 4)  # rows [0..3], [4..7], [8..11]
    # start [1, 1], size [2, 2]: rows 1..2, columns 1..2 -> [[5, 6], [9, 10]].
    assert output(slice_(x, "i32", [1, 1], [2, 2], [2, 2]).run()).tolist() == [[5, 6], [9, 10]]
    # start + size == shape1 is inside the bounds: the last column, rows 0..2.
    out = output(slice_(x, "i32", [0, 3], [3, 1], [3, 1]).run())
    assert out.tolist() == [[3], [7], [11]]


def test_tile_by_hand() -> None:
    x = np.array([[1, 2]], dtype=np.int16)
    # multiples [2, 3]: output [2, 6], element [i, j] = x[i % 1, j % 2].
    out = output(tile(x, "i16", [2, 3], [2, 6]).run())
    assert out.tolist() == [[1, 2, 1, 2, 1, 2], [1, 2, 1, 2, 1, 2]]


def test_transpose_by_hand() -> None:
    x = np.arange(6, dtype=np.int8).reshape(1, 2, 3)  # x[0] = [[0, 1, 2], [3, 4, 5]]
    # perms (2, 0, 1): output axis i is input axis perms[i], shape [3, 1, 2], and
    # out[c, 0, b] = x[0, b, c] -> [[[0, 3]], [[1, 4]], [[2, 5]]].
    out = output(transpose(x, "i8", (2, 0, 1), (3, 1, 2)).run())
    assert out.tolist() == [[[0, 3]], [[1, 4]], [[2, 5]]]
    # perms (1, 0) of a matrix is the matrix transpose.
    assert output(transpose(X23, "i8", (1, 0), (3, 2)).run()).tolist() == [
        [1, 4],
        [2, 5],
        [3, 6],
    ]


def test_reverse_by_hand() -> None:
    # Along axis 1 each row is reversed; along axis 0 the rows swap.
    assert output(reverse(X23, "i8", 1).run()).tolist() == [[3, 2, 1], [6, 5, 4]]
    assert output(reverse(X23, "i8", 0).run()).tolist() == [[4, 5, 6], [1, 2, 3]]


def test_reshape_by_hand() -> None:
    # Row-major offsets: [[1, 2, 3], [4, 5, 6]] -> offsets 0..5 -> [3, 2] rows of two.
    assert output(reshape(X23, "i8", [3, 2], [3, 2]).run()).tolist() == [[1, 2], [3, 4], [5, 6]]
    assert output(reshape(X23, "i8", [6], [6]).run()).tolist() == [1, 2, 3, 4, 5, 6]


def test_concat_along_each_axis() -> None:
    a = np.array([[1, 2], [3, 4]], dtype=np.int32)
    b = np.array([[5], [6]], dtype=np.int32)
    c = np.array([[7, 8]], dtype=np.int32)
    # Axis 1: [2,2] ++ [2,1] -> [2,3], rows [1,2,5], [3,4,6].
    assert output(concat([a, b], "i32", 1, [2, 3]).run()).tolist() == [[1, 2, 5], [3, 4, 6]]
    # Axis 0: [2,2] ++ [1,2] ++ [2,2] -> [5,2].
    out = output(concat([a, c, a], "i32", 0, [5, 2]).run())
    assert out.tolist() == [[1, 2], [3, 4], [7, 8], [1, 2], [3, 4]]
    # Axis 2 of rank 3: [1,1,2] ++ [1,1,1] -> [1,1,3].
    out = output(concat([a[:1, None, :], b[:1, None, :]], "i32", 2, [1, 1, 3]).run())
    assert out.tolist() == [[[1, 2, 5]]]


def test_concat_of_scalars_is_a_vector() -> None:
    # Rank-0 inputs: axis must be 0 (< max(1, 0)), shape_dim gives 1 per input.
    xs = [np.array(1.5), np.array(-2.0), np.array(4.0)]
    assert output(concat(xs, "fp32", 0, [3]).run()).tolist() == [1.5, -2.0, 4.0]


# -- ERROR_IF / REQUIRE ------------------------------------------------------------

F23 = np.ones((2, 3), dtype=np.float32)

ERROR_CASES: list[tuple[str, Callable[[], Case], str]] = [
    # CONCAT
    ("concat-empty", lambda: concat([], "fp32", 0, [1]), INPUTS_CLAUSE),
    (
        "concat-types",
        lambda: concat([F23, F23], "fp32", 0, [4, 3], dts=["fp32", "fp16"]),
        TYPES_CLAUSE,
    ),
    (
        "concat-axis-negative",
        lambda: concat([F23, F23], "fp32", -1, [4, 3]),
        "axis < 0 || axis >= max(1,rank(shapes1[0]))",
    ),
    (
        "concat-axis-rank",
        lambda: concat([F23, F23], "fp32", 2, [2, 3]),
        "axis < 0 || axis >= max(1,rank(shapes1[0]))",
    ),
    (
        "concat-axis-sum",
        lambda: concat([F23, F23], "fp32", 0, [3, 3]),
        "shape[axis] != sum(shape_dim(shapes1[k], axis) for all k)",
    ),
    (
        "concat-input-rank",
        lambda: concat([F23, np.ones((2, 3, 1), np.float32)], "fp32", 0, [4, 3]),
        "rank(input_shape) != rank(shapes1[0])",
    ),
    (
        "concat-input-dim",
        lambda: concat([F23, np.ones((2, 2), np.float32)], "fp32", 0, [4, 3]),
        "index != axis && input_shape[index] != shapes1[0][index]",
    ),
    # PAD
    ("pad-length", lambda: pad(F23, "fp32", [0, 0, 0], [2, 3]), INPUTS_CLAUSE),
    ("pad-rank", lambda: pad(F23, "fp32", [0, 0, 0, 0], [2, 3, 1]), "rank(shape) != rank(shape1)"),
    (
        "pad-negative-start",
        lambda: pad(F23, "fp32", [0, 0, -1, 0], [2, 2]),
        "padding[i * 2] < 0 || padding[(i * 2) + 1] < 0",
    ),
    (
        "pad-negative-end",
        lambda: pad(F23, "fp32", [1, -1, 0, 0], [2, 3]),
        "padding[i * 2] < 0 || padding[(i * 2) + 1] < 0",
    ),
    (
        "pad-shape",
        lambda: pad(F23, "fp32", [1, 0, 0, 0], [2, 3]),
        "shape[i] != padding[i * 2] + shape1[i] + padding[(i * 2) + 1]",
    ),
    ("pad-const-range", lambda: pad(X23, "i8", [0, 0, 0, 0], [2, 3], 128), ATTRIBUTES_CLAUSE),
    # RESHAPE
    ("reshape-output", lambda: reshape(F23, "fp32", [3, 2], [6]), OUTPUTS_CLAUSE),
    (
        "reshape-size",
        lambda: reshape(F23, "fp32", [7], [7]),
        "tensor_size(shape1) != tensor_size(shape)",
    ),
    # REVERSE
    ("reverse-axis-negative", lambda: reverse(F23, "fp32", -1), "axis < 0 || axis >= rank(shape)"),
    ("reverse-axis-rank", lambda: reverse(F23, "fp32", 2), "axis < 0 || axis >= rank(shape)"),
    ("reverse-output", lambda: reverse(F23, "fp32", 0, [3, 2]), OUTPUTS_CLAUSE),
    # SLICE
    (
        "slice-start-length",
        lambda: slice_(F23, "fp32", [0], [1, 1], [1, 1]),
        "rank(shape1) != length(start) || rank(shape1) != length(size)",
    ),
    (
        "slice-size-length",
        lambda: slice_(F23, "fp32", [0, 0], [1, 1, 1], [1, 1]),
        "rank(shape1) != length(start) || rank(shape1) != length(size)",
    ),
    (
        "slice-rank",
        lambda: slice_(F23, "fp32", [0, 0], [1, 1], [1, 1, 1]),
        "rank(shape1) != rank(shape)",
    ),
    ("slice-start", lambda: slice_(F23, "fp32", [0, -1], [1, 1], [1, 1]), "start[index] < 0"),
    ("slice-size", lambda: slice_(F23, "fp32", [0, 0], [1, 0], [1, 0]), "size[index] <= 0"),
    (
        "slice-end",
        lambda: slice_(F23, "fp32", [1, 1], [1, 3], [1, 3]),
        "start[index] + size[index] > shape1[index]",
    ),
    (
        "slice-shape",
        lambda: slice_(F23, "fp32", [0, 0], [1, 2], [1, 3]),
        "shape[index] != size[index]",
    ),
    # Loop order: index 0 fails its second check before index 1 fails its first.
    ("slice-order", lambda: slice_(F23, "fp32", [0, -1], [0, 1], [0, 1]), "size[index] <= 0"),
    # TILE
    ("tile-length", lambda: tile(F23, "fp32", [1, 1, 1], [2, 3]), INPUTS_CLAUSE),
    ("tile-rank", lambda: tile(F23, "fp32", [1, 1], [2, 3, 1]), "rank(shape1) != rank(shape)"),
    (
        "tile-shape",
        lambda: tile(F23, "fp32", [2, 1], [2, 3]),
        "shape1[i] * multiples[i] != shape[i]",
    ),
    # TRANSPOSE
    (
        "transpose-perms-length",
        lambda: transpose(F23, "fp32", (1, 0, 2), (3, 2)),
        ATTRIBUTES_CLAUSE,
    ),
    (
        "transpose-rank",
        lambda: transpose(F23, "fp32", (1, 0), (3, 2, 1)),
        "rank(shape1) != rank(shape)",
    ),
    (
        "transpose-size",
        lambda: transpose(F23, "fp32", (1, 0), (3, 3)),
        "tensor_size(shape1) != tensor_size(shape)",
    ),
    (
        "transpose-perm-high",
        lambda: transpose(F23, "fp32", (0, 2), (2, 3)),
        "index >= rank(shape1)",
    ),
    ("transpose-perm-negative", lambda: transpose(F23, "fp32", (-1, 0), (3, 2)), "index < 0"),
    (
        "transpose-perm-repeated",
        lambda: transpose(np.ones((2, 2), np.float32), "fp32", (1, 1), (2, 2)),
        "indexes_used[index] == true",
    ),
    (
        "transpose-shape",
        lambda: transpose(F23, "fp32", (0, 1), (3, 2)),
        "shape1[perms[i]] != shape[i]",
    ),
]


@pytest.mark.parametrize(("make", "clause"), [pytest.param(m, c, id=i) for i, m, c in ERROR_CASES])
def test_error_if(make: Callable[[], Case], clause: str) -> None:
    assert_rule(make().run(), "error", clause)


REQUIRE_CASES: list[tuple[str, Callable[[], Case], str]] = [
    # tensor_size's REQUIRE on the new shape comes before the size comparison.
    ("reshape-zero-dim", lambda: reshape(F23, "fp32", [0, 6], [0, 6]), TENSOR_SIZE_CLAUSE),
    ("reshape-negative-dim", lambda: reshape(F23, "fp32", [-1, 6], [-1, 6]), TENSOR_SIZE_CLAUSE),
    # CONCAT's output is assumed, not checked, outside the axis.
    (
        "concat-output-dim",
        lambda: concat([F23, F23], "fp32", 0, [4, 2]),
        "shape[i] == shapes1[0][i] for i != axis (assumed by the pseudocode)",
    ),
    (
        "concat-output-rank",
        lambda: concat([F23, F23], "fp32", 0, [4, 3, 1]),
        "rank(shape) == max(1, rank) (assumed by the pseudocode)",
    ),
]


@pytest.mark.parametrize(
    ("make", "clause"), [pytest.param(m, c, id=i) for i, m, c in REQUIRE_CASES]
)
def test_require(make: Callable[[], Case], clause: str) -> None:
    outcome = make().run()
    assert_rule(outcome, "unpredictable", clause)
    assert outcome.rule is not None and outcome.rule.kind == "REQUIRE"


# -- every mode, bit for bit ---------------------------------------------------------


def mode_case(op: str, x: np.ndarray, dt: DType) -> tuple[Case, np.ndarray]:
    """A graph of ``op`` on ``x`` (shape [2,3,4]) and the output numpy expects."""
    if op == "CONCAT":
        expected = np.concatenate([x, x[:, :1]], axis=1)
        return concat([x, x[:, :1]], dt, 1, expected.shape), expected
    if op == "PAD":
        fill = np.zeros((), dtype=dt.storage)
        expected = np.full((3, 3, 6), fill, dtype=dt.storage)
        expected[1:, :, 2:] = x
        return pad(x, dt, [1, 0, 0, 0, 2, 0], expected.shape), expected
    if op == "RESHAPE":
        return reshape(x, dt, [4, 6], [4, 6]), x.reshape(4, 6)
    if op == "REVERSE":
        return reverse(x, dt, 2), x[:, :, ::-1]
    if op == "SLICE":
        return slice_(x, dt, [1, 0, 1], [1, 2, 3], [1, 2, 3]), x[1:2, 0:2, 1:4]
    if op == "TILE":
        return tile(x, dt, [1, 2, 1], [2, 6, 4]), np.concatenate([x, x], axis=1)
    assert op == "TRANSPOSE"
    return transpose(x, dt, (2, 0, 1), (4, 2, 3)), x.transpose(2, 0, 1)


def bits(a: np.ndarray) -> np.ndarray:
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "V" or a.dtype.kind == "f" else a


MODES = [
    pytest.param(op, mode.mode, id=f"{op}-{mode.mode}")
    for op in LAYOUT
    for mode in SPEC.operator(op).modes
]


@pytest.mark.parametrize(("op", "mode"), MODES)
def test_every_mode_evaluates_bit_exactly(op: str, mode: str) -> None:
    dt = SPEC.operator(op).mode(mode).dtype("in_out_t")
    x = sample_storage(np.random.default_rng(11), dt, (2, 3, 4))
    case, expected = mode_case(op, x, dt)
    assert case.run().kind == "valid"
    got = case.run_storage()
    assert got.dtype == dt.storage
    assert np.array_equal(bits(got), bits(np.ascontiguousarray(expected)))


# -- properties: the pseudocode's index mapping, element by element --------------------

SHAPES = st.lists(st.integers(1, 4), min_size=1, max_size=4)


def arange(shape: Sequence[int]) -> np.ndarray:
    return np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)


@given(data=st.data())
def test_pad_then_slice_recovers_the_input(data: st.DataObject) -> None:
    shape1 = data.draw(SHAPES, label="input shape")
    padding = data.draw(
        st.lists(st.integers(0, 3), min_size=2 * len(shape1), max_size=2 * len(shape1)),
        label="padding",
    )
    before, after = np.array(padding[0::2]), np.array(padding[1::2])
    out_shape = (np.array(shape1) + before + after).tolist()
    x = arange(shape1) + 1
    out = output(pad(x, "i32", padding, out_shape, -1).run())
    # Everything outside the input window is pad_const.
    assert int((out == -1).sum()) == out.size - x.size
    back = output(slice_(out, "i32", before.tolist(), shape1, shape1).run())
    assert np.array_equal(back, x)


@given(data=st.data())
def test_transpose_maps_indices_as_the_pseudocode(data: st.DataObject) -> None:
    shape1 = data.draw(SHAPES, label="input shape")
    perms = data.draw(st.permutations(range(len(shape1))), label="perms")
    out_shape = [shape1[p] for p in perms]
    x = arange(shape1)
    out = output(transpose(x, "i32", perms, out_shape).run())
    # tmp_index[perms[i]] = index[i] for every output index.
    index = np.indices(out_shape).reshape(len(out_shape), -1)
    tmp = np.empty_like(index)
    tmp[list(perms)] = index
    assert np.array_equal(out[tuple(index)], x[tuple(tmp)])


@given(data=st.data())
def test_tile_maps_indices_as_the_pseudocode(data: st.DataObject) -> None:
    shape1 = data.draw(SHAPES, label="input shape")
    multiples = data.draw(
        st.lists(st.integers(1, 3), min_size=len(shape1), max_size=len(shape1)),
        label="multiples",
    )
    out_shape = (np.array(shape1) * np.array(multiples)).tolist()
    x = arange(shape1)
    out = output(tile(x, "i32", multiples, out_shape).run())
    index = np.indices(out_shape).reshape(len(out_shape), -1)
    tmp = index % np.array(shape1)[:, None]
    assert np.array_equal(out[tuple(index)], x[tuple(tmp)])


@given(data=st.data())
def test_reverse_slice_reshape_map_indices_as_the_pseudocode(data: st.DataObject) -> None:
    shape1 = data.draw(SHAPES, label="input shape")
    x = arange(shape1)
    axis = data.draw(st.integers(0, len(shape1) - 1), label="axis")
    out = output(reverse(x, "i32", axis).run())
    index = np.indices(shape1).reshape(len(shape1), -1)
    tmp = index.copy()
    tmp[axis] = shape1[axis] - 1 - index[axis]
    assert np.array_equal(out[tuple(index)], x[tuple(tmp)])

    start = [data.draw(st.integers(0, d - 1), label=f"start[{i}]") for i, d in enumerate(shape1)]
    size = [
        data.draw(st.integers(1, d - s), label=f"size[{i}]")
        for i, (d, s) in enumerate(zip(shape1, start, strict=True))
    ]
    out = output(slice_(x, "i32", start, size, size).run())
    index = np.indices(size).reshape(len(size), -1)
    assert np.array_equal(out[tuple(index)], x[tuple(index + np.array(start)[:, None])])

    new_shape = data.draw(st.permutations(shape1), label="new shape")
    out = output(reshape(x, "i32", list(new_shape), list(new_shape)).run())
    assert np.array_equal(out.reshape(-1), x.reshape(-1))


@given(data=st.data())
def test_concat_splits_back_into_its_inputs(data: st.DataObject) -> None:
    shape = data.draw(SHAPES, label="common shape")
    axis = data.draw(st.integers(0, len(shape) - 1), label="axis")
    sizes = data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=4), label="sizes")
    xs = []
    for k, n in enumerate(sizes):
        s = list(shape)
        s[axis] = n
        xs.append(arange(s) + 100 * k)
    out_shape = list(shape)
    out_shape[axis] = sum(sizes)
    out = output(concat(xs, "i32", axis, out_shape).run())
    for got, want in zip(np.split(out, np.cumsum(sizes)[:-1], axis=axis), xs, strict=True):
        assert np.array_equal(got, want)

"""Reference evaluator: GATHER and SCATTER."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reference_helpers import assert_rule

from conformance.builder import single_operator_graph
from conformance.dtypes import DType
from conformance.spec import load_spec
from reference.arguments import INPUTS_CLAUSE, OUTPUTS_CLAUSE
from reference.engine import Evaluator, evaluate
from reference.outcome import Outcome

SPEC = load_spec()
RANGE = "0 <= k && k < K"
ONCE = "output_modified[n,k,c] == false"
# tosa.xml types the index tensor size_t: a tensor of the shape type.
INDEX_T = "shape"


def gather_graph(values_shape: Sequence[int], w: int, dt: Any, out_shape=None):
    n, _, c = values_shape
    return single_operator_graph(
        "GATHER",
        [("values", tuple(values_shape), dt), ("indices", (n, w), INDEX_T)],
        [("output", tuple(out_shape or (n, w, c)), dt)],
    )


def gather(values: np.ndarray, indices: np.ndarray, dt: Any, out_shape=None) -> Outcome:
    graph = gather_graph(values.shape, indices.shape[1], dt, out_shape)
    return evaluate(graph, {"values": values, "indices": indices})


def scatter_graph(values_shape: Sequence[int], w: int, dt: Any, input_shape=None):
    n, _, c = values_shape
    return single_operator_graph(
        "SCATTER",
        [
            ("values_in", tuple(values_shape), dt),
            ("indices", (n, w), INDEX_T),
            ("input", tuple(input_shape or (n, w, c)), dt),
        ],
        [("values_out", tuple(values_shape), dt)],
    )


def scatter(values_in: np.ndarray, indices: np.ndarray, x: np.ndarray, dt: Any) -> Outcome:
    graph = scatter_graph(values_in.shape, indices.shape[1], dt, x.shape)
    return evaluate(graph, {"values_in": values_in, "indices": indices, "input": x})


def result(outcome: Outcome, name: str) -> np.ndarray:
    assert outcome.kind == "valid", str(outcome)
    return outcome.outputs[name]


# -- hand-checked values ----------------------------------------------------------

# N=2 batches, K=3 positions, C=2 channels: values[n, k] = [10n + k, -(10n + k)].
VALUES = np.array([[[0, 0], [1, -1], [2, -2]], [[10, -10], [11, -11], [12, -12]]], dtype=np.int16)


def test_gather_by_hand() -> None:
    indices = np.array([[2, 0, 2, 1], [1, 1, 0, 2]])
    # output[n, w] = values[n, indices[n, w]]: batch 0 -> k 2, 0, 2, 1; batch 1 -> 1, 1, 0, 2.
    out = result(gather(VALUES, indices, "i16"), "output")
    assert out.tolist() == [
        [[2, -2], [0, 0], [2, -2], [1, -1]],
        [[11, -11], [11, -11], [10, -10], [12, -12]],
    ]


def test_scatter_by_hand() -> None:
    indices = np.array([[2, 0], [1, 2]])
    updates = np.array([[[7, 70], [8, 80]], [[9, 90], [6, 60]]], dtype=np.int16)
    # Batch 0 writes k=2 <- [7, 70], k=0 <- [8, 80]; k=1 keeps [1, -1].
    # Batch 1 writes k=1 <- [9, 90], k=2 <- [6, 60]; k=0 keeps [10, -10].
    out = result(scatter(VALUES, indices, updates, "i16"), "values_out")
    assert out.tolist() == [
        [[8, 80], [1, -1], [7, 70]],
        [[10, -10], [9, 90], [6, 60]],
    ]


def test_scatter_same_index_in_different_batches_is_fine() -> None:
    # output_modified is per (n, k, c): k=0 in batch 0 and in batch 1 are two positions.
    indices = np.array([[0], [0]])
    updates = np.array([[[5, 5]], [[6, 6]]], dtype=np.int16)
    out = result(scatter(VALUES, indices, updates, "i16"), "values_out")
    assert out[:, 0].tolist() == [[5, 5], [6, 6]]


# -- REQUIRE / ERROR_IF -----------------------------------------------------------


@pytest.mark.parametrize("k", [-1, 3])
def test_gather_index_out_of_range_is_unpredictable(k: int) -> None:
    assert_rule(gather(VALUES, np.array([[0, k], [0, 0]]), "i16"), "unpredictable", RANGE)


@pytest.mark.parametrize("k", [-1, 3])
def test_scatter_index_out_of_range_is_unpredictable(k: int) -> None:
    indices = np.array([[0, k], [0, 1]])
    updates = np.zeros((2, 2, 2), dtype=np.int16)
    assert_rule(scatter(VALUES, indices, updates, "i16"), "unpredictable", RANGE)


def test_scatter_writing_twice_is_unpredictable() -> None:
    indices = np.array([[0, 1], [2, 2]])  # batch 1 writes k=2 twice
    updates = np.zeros((2, 2, 2), dtype=np.int16)
    assert_rule(scatter(VALUES, indices, updates, "i16"), "unpredictable", ONCE)


def test_scatter_reports_the_first_failure_in_loop_order() -> None:
    updates = np.zeros((2, 3, 2), dtype=np.int16)
    # (0,1) repeats k=0 before (0,2) is out of range: the repeat is found first.
    indices = np.array([[0, 0, 5], [0, 1, 2]])
    assert_rule(scatter(VALUES, indices, updates, "i16"), "unpredictable", ONCE)
    # (0,1) is out of range before (0,2) repeats k=0.
    indices = np.array([[0, 5, 0], [0, 1, 2]])
    assert_rule(scatter(VALUES, indices, updates, "i16"), "unpredictable", RANGE)


def test_operand_shapes_must_agree() -> None:
    # indices [N,W] with N=1 against values [N,K,C] with N=2.
    graph = single_operator_graph(
        "GATHER",
        [("values", (2, 3, 2), "i16"), ("indices", (1, 2), INDEX_T)],
        [("output", (1, 2, 2), "i16")],
    )
    outcome = evaluate(graph, {"values": VALUES, "indices": np.zeros((1, 2), np.int64)})
    assert_rule(outcome, "error", INPUTS_CLAUSE)
    # output [N,W,C] with C=3.
    outcome = gather(VALUES, np.zeros((2, 2), np.int64), "i16", out_shape=(2, 2, 3))
    assert_rule(outcome, "error", OUTPUTS_CLAUSE)
    # SCATTER input [N,W,C] with W=3 against indices [N,W] with W=2.
    outcome = evaluate(
        scatter_graph((2, 3, 2), 2, "i16", input_shape=(2, 3, 2)),
        {
            "values_in": VALUES,
            "indices": np.zeros((2, 2), np.int64),
            "input": np.zeros((2, 3, 2), np.int16),
        },
    )
    assert_rule(outcome, "error", INPUTS_CLAUSE)


# -- every mode, bit for bit ---------------------------------------------------------


def storage_values(rng: np.random.Generator, dt: DType, shape: Sequence[int]) -> np.ndarray:
    if dt.is_int:
        lo, hi = dt.min, dt.max
        assert isinstance(lo, int) and isinstance(hi, int)
        return rng.integers(lo, hi + 1, size=shape).astype(dt.storage)
    x = (rng.standard_normal(shape) * 4).astype(dt.storage)
    x.reshape(-1)[0] = -0.0  # sign of zero must survive the move
    return x


def bits(a: np.ndarray) -> np.ndarray:
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind in "fV" else a


def run_storage(graph, values: dict[str, np.ndarray]) -> np.ndarray:
    main = graph.main
    outs, _ = Evaluator(graph, SPEC, SPEC.level("8K")).run_block(
        main, [values[n] for n in main.inputs], depth=0
    )
    return outs[0]


MODES = [
    pytest.param(op, mode.mode, id=f"{op}-{mode.mode}")
    for op in ("GATHER", "SCATTER")
    for mode in SPEC.operator(op).modes
]


@pytest.mark.parametrize(("op", "mode"), MODES)
def test_every_mode_evaluates_bit_exactly(op: str, mode: str) -> None:
    dt = SPEC.operator(op).mode(mode).dtype("in_out_t")
    rng = np.random.default_rng(5)
    values = storage_values(rng, dt, (2, 4, 3))
    if op == "GATHER":
        indices = np.array([[3, 0, 3], [1, 2, 0]])
        graph = gather_graph(values.shape, 3, dt)
        feed = {"values": values, "indices": indices}
        expected = values[np.arange(2)[:, None], indices]
    else:
        indices = np.array([[3, 0, 1], [1, 2, 0]])
        updates = storage_values(rng, dt, (2, 3, 3))
        graph = scatter_graph(values.shape, 3, dt)
        feed = {"values_in": values, "indices": indices, "input": updates}
        expected = values.copy()
        expected[np.arange(2)[:, None], indices] = updates
    assert evaluate(graph, feed).kind == "valid"
    got = run_storage(graph, feed)
    assert got.dtype == dt.storage
    assert np.array_equal(bits(got), bits(expected))


# -- properties ------------------------------------------------------------------------


def literal_scatter(values: np.ndarray, indices: np.ndarray, x: np.ndarray):
    """The pseudocode's loops (test oracle): (clause or None, values_out)."""
    n_, k_, c_ = values.shape
    out = values.copy()
    modified = np.zeros(values.shape, dtype=bool)
    for n in range(n_):
        for w in range(indices.shape[1]):
            for c in range(c_):
                k = int(indices[n, w])
                if not 0 <= k < k_:
                    return RANGE, None
                if modified[n, k, c]:
                    return ONCE, None
                out[n, k, c] = x[n, w, c]
                modified[n, k, c] = True
    return None, out


@given(data=st.data())
def test_scatter_matches_the_pseudocode_loop(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 3), label="N")
    k = data.draw(st.integers(1, 4), label="K")
    w = data.draw(st.integers(1, 4), label="W")
    c = data.draw(st.integers(1, 2), label="C")
    flat = data.draw(st.lists(st.integers(-1, k), min_size=n * w, max_size=n * w), label="k")
    indices = np.array(flat, dtype=np.int64).reshape(n, w)
    values = np.arange(n * k * c, dtype=np.int32).reshape(n, k, c)
    x = -1 - np.arange(n * w * c, dtype=np.int32).reshape(n, w, c)
    clause, want = literal_scatter(values, indices, x)
    outcome = scatter(values, indices, x, "i32")
    if clause is None:
        assert np.array_equal(result(outcome, "values_out"), want)
    else:
        assert_rule(outcome, "unpredictable", clause)


@given(data=st.data())
def test_gather_after_scatter_returns_the_updates(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 3), label="N")
    k = data.draw(st.integers(1, 5), label="K")
    w = data.draw(st.integers(1, k), label="W")
    rows = [data.draw(st.permutations(range(k)), label=f"order {b}")[:w] for b in range(n)]
    indices = np.array(rows, dtype=np.int64)
    values = np.zeros((n, k, 2), dtype=np.float32)
    x = np.arange(n * w * 2, dtype=np.float32).reshape(n, w, 2) + 0.5
    out = result(scatter(values, indices, x, "fp32"), "values_out")
    back = result(gather(out.astype(np.float32), indices, "fp32"), "output")
    assert np.array_equal(back, x)

"""Reference evaluator, TOSA 1.1: ROW_GATHER, and the i64_t (EXT-INT64) and Boolean
modes of GATHER and SCATTER.

Every expected value is worked out by hand from the 1.1 pseudocode in the comment
beside it (ROW_GATHER.tosac, GATHER.tosac, SCATTER.tosac)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
from reference_helpers import assert_rule, run_with_constants, valid

from conformance.dtypes import FP16
from conformance.spec import load_revision, spec_in_use
from reference.arguments import INPUTS_CLAUSE, OUTPUTS_CLAUSE
from reference.compliance import DATA_MOVEMENT_OPERATORS, Mode, for_operator
from reference.ops.row_gather import ROW_COUNT_CLAUSE, ROW_RANGE_CLAUSE, row_indices
from reference.ops.scatter_gather import ONCE_CLAUSE, RANGE_CLAUSE
from reference.outcome import Outcome

V11 = load_revision("1.1-draft")
I64_MAX = 2**63 - 1
I64_MIN = -(2**63)
run = functools.partial(run_with_constants, spec=V11)


def row_gather(
    values: Any,
    indices: Any,
    row_count: int,
    dt: str = "i16",
    index_t: str = "i32",
    out_shape: tuple[int, ...] | None = None,
    row_count_shape: tuple[int, ...] = (1,),
) -> Outcome:
    v, k = np.asarray(values), np.asarray(indices)
    if out_shape is None:
        out_shape = (v.shape[0], k.shape[1] * max(row_count, 0), v.shape[2])
    rc = np.full(row_count_shape, row_count)
    return run(
        "ROW_GATHER",
        [("v", v, dt), ("k", k, index_t)],
        out_shape,
        dt,
        constants=[("r", rc, "i32")],
    )


VALUES_2X5X2 = np.arange(20).reshape(2, 5, 2)


def test_row_gather_by_hand() -> None:
    # batch 0: index 0 takes rows 0, 1 ([0 1], [2 3]); index 3 rows 3, 4 ([6 7], [8 9]).
    # batch 1 (rows 10 + ...): index 2 takes rows 2, 3 ([14 15], [16 17]); index 1 rows
    # 1, 2 ([12 13], [14 15]): windows may overlap.  Output [2, 2 * 2, 2], index w's
    # rows at w * row_count + r.
    out = valid(row_gather(VALUES_2X5X2, [[0, 3], [2, 1]], 2))
    assert out.tolist() == [
        [[0, 1], [2, 3], [6, 7], [8, 9]],
        [[14, 15], [16, 17], [12, 13], [14, 15]],
    ]


def test_row_count_one_is_gather() -> None:
    # row_count 1: [n, w] reads row indices[n, w], as GATHER does
    idx = [[4, 0, 4], [1, 1, 3]]
    out = valid(row_gather(VALUES_2X5X2, idx, 1))
    gathered = valid(
        run("GATHER", [("v", VALUES_2X5X2, "i16"), ("k", np.array(idx), "i32")], (2, 3, 2), "i16")
    )
    assert np.array_equal(out, gathered)
    assert out[0, :, 0].tolist() == [8, 0, 8]


def test_row_count_k_copies_every_row() -> None:
    # row_count = K = 5 from index 0: the whole batch, twice
    out = valid(row_gather(VALUES_2X5X2, [[0, 0], [0, 0]], 5))
    assert np.array_equal(out[:, :5], VALUES_2X5X2) and np.array_equal(out[:, 5:], VALUES_2X5X2)


def test_row_indices_by_hand() -> None:
    # starts [[3, 1]] with 3 rows each: 3, 4, 5 then 1, 2, 3
    assert row_indices(np.array([[3, 1]]), 3).tolist() == [[3, 4, 5, 1, 2, 3]]


@pytest.mark.parametrize(
    ("index", "valid_case"),
    [
        (3, True),  # 3 + 2 = 5 <= K = 5: the last start that fits
        (4, False),  # 4 + 2 = 6 > 5
        (-1, False),  # 0 <= k fails
    ],
)
def test_rows_must_lie_in_the_tensor(index: int, valid_case: bool) -> None:
    outcome = row_gather(VALUES_2X5X2, [[0, index], [0, 0]], 2)
    if valid_case:
        assert valid(outcome)[0, 2:, 0].tolist() == [6, 8]  # rows 3, 4
    else:
        assert_rule(outcome, "REQUIRE", ROW_RANGE_CLAUSE, f"indices[0,1] = {index}")


def test_an_i64_index_near_its_maximum_does_not_wrap_into_range() -> None:
    # k = 2**63 - 1: k + row_count is 2**63 + 1, past K; in int64 it would wrap to a
    # negative number that passes (k+row_count) <= K
    outcome = row_gather(VALUES_2X5X2, [[0, I64_MAX], [0, 0]], 2, index_t="i64")
    assert_rule(outcome, "REQUIRE", ROW_RANGE_CLAUSE, str(I64_MAX))
    outcome = row_gather(VALUES_2X5X2, [[0, 0], [I64_MIN, 0]], 2, index_t="i64")
    assert_rule(outcome, "REQUIRE", ROW_RANGE_CLAUSE, "indices[1,0]")


def test_the_first_failing_index_in_loop_order_is_reported() -> None:
    # n-major, then w: [1, 0] fails after [0, 1]
    outcome = row_gather(VALUES_2X5X2, [[0, 9], [9, 0]], 1)
    assert_rule(outcome, "REQUIRE", ROW_RANGE_CLAUSE, "indices[0,1] = 9")


@pytest.mark.parametrize("row_count", [0, -1, -(2**31)])
def test_row_count_below_one_is_an_error(row_count: int) -> None:
    # checked first: the output keeps the shape of a valid case ([2, 2, 2])
    outcome = row_gather(VALUES_2X5X2, [[0], [0]], row_count, out_shape=(2, 2, 2))
    assert_rule(outcome, "error", ROW_COUNT_CLAUSE, f"row_count {row_count}")


@pytest.mark.parametrize(
    "out_shape",
    [
        (2, 2, 2),  # W = 2 rows: row_count ignored (4 expected)
        (2, 5, 2),  # one row more
        (3, 4, 2),  # another N
        (2, 4, 1),  # another C
    ],
)
def test_output_must_be_n_w_times_row_count_c(out_shape: tuple[int, ...]) -> None:
    outcome = row_gather(VALUES_2X5X2, [[0, 1], [0, 1]], 2, out_shape=out_shape)
    assert_rule(outcome, "error", OUTPUTS_CLAUSE)


def test_row_count_is_a_one_element_tensor() -> None:
    outcome = row_gather(VALUES_2X5X2, [[0], [0]], 1, out_shape=(2, 1, 2), row_count_shape=(2,))
    assert_rule(outcome, "error", INPUTS_CLAUSE, "row_count")


def test_indices_batch_must_match() -> None:
    outcome = row_gather(VALUES_2X5X2, [[0], [0], [0]], 1, out_shape=(2, 1, 2))
    assert_rule(outcome, "error", INPUTS_CLAUSE)


def test_i64_and_bool_values_are_copied_bit_for_bit() -> None:
    v = np.array([I64_MIN, -1, 0, I64_MAX]).reshape(1, 4, 1)
    out = valid(row_gather(v, [[2, 0]], 2, dt="i64", index_t="i64"))
    assert out.dtype == np.int64
    assert out.reshape(-1).tolist() == [0, I64_MAX, I64_MIN, -1]
    b = np.array([True, False, False, True]).reshape(1, 4, 1)
    out = valid(row_gather(b, [[1, 2]], 2, dt="bool"))
    assert out.reshape(-1).tolist() == [False, False, False, True]


def test_row_gather_results_must_be_exact() -> None:
    # "Results must be exact": a data-movement operator, zero signs compared
    assert "ROW_GATHER" in DATA_MOVEMENT_OPERATORS
    with spec_in_use(V11):
        desc = for_operator("ROW_GATHER", FP16)
    assert desc.mode in (Mode.EXACT, Mode.EXACT_NAN)
    v = np.array([-0.0, 0.0, np.nan, -np.inf]).reshape(1, 4, 1)
    out = valid(row_gather(v, [[0, 2]], 2, dt="fp16"))
    assert np.signbit(out.reshape(-1)[:2]).tolist() == [True, False]
    assert np.isnan(out.reshape(-1)[2]) and out.reshape(-1)[3] == -np.inf


# == GATHER and SCATTER: i64_t indices and values, bool_t values ========================


def gather(values: Any, indices: Any, dt: str, index_t: str) -> Outcome:
    v, k = np.asarray(values), np.asarray(indices)
    out = (v.shape[0], k.shape[1], v.shape[2])
    return run("GATHER", [("v", v, dt), ("k", k, index_t)], out, dt)


def scatter(values_in: Any, indices: Any, updates: Any, dt: str, index_t: str) -> Outcome:
    v, k, u = np.asarray(values_in), np.asarray(indices), np.asarray(updates)
    return run("SCATTER", [("v", v, dt), ("k", k, index_t), ("u", u, dt)], v.shape, dt)


I64_ROWS = np.array([I64_MIN, I64_MAX, 2**53 + 1]).reshape(1, 3, 1)


def test_gather_signed_64() -> None:
    # rows 2, 0, 1: 2**53 + 1 (no fp64 rounding to 2**53), then both extremes
    out = valid(gather(I64_ROWS, [[2, 0, 1]], "i64", "i64"))
    assert out.dtype == np.int64 and out.reshape(-1).tolist() == [2**53 + 1, I64_MIN, I64_MAX]


@pytest.mark.parametrize("k", [3, -1, I64_MAX, I64_MIN, 2**32])
def test_gather_i64_index_out_of_range(k: int) -> None:
    # REQUIRE(0 <= k && k < K), K = 3; 2**32 would be 0 if the index were kept in 32 bits
    assert_rule(gather(I64_ROWS, [[0, k]], "i64", "i64"), "REQUIRE", RANGE_CLAUSE)


def test_gather_boolean() -> None:
    v = np.array([[True], [False]]).reshape(1, 2, 1)
    for index_t in ("i32", "i64"):
        out = valid(gather(v, [[1, 0, 0]], "bool", index_t))
        assert out.reshape(-1).tolist() == [False, True, True]


def test_scatter_signed_64() -> None:
    # values_in [0, 0, 0, 0]; writes I64_MAX to row 3 and I64_MIN to row 1
    updates = np.array([I64_MAX, I64_MIN]).reshape(1, 2, 1)
    out = valid(scatter(np.zeros((1, 4, 1)), [[3, 1]], updates, "i64", "i64"))
    assert out.reshape(-1).tolist() == [0, I64_MIN, 0, I64_MAX]


def test_scatter_i64_index_rules() -> None:
    u = np.array([1, 2]).reshape(1, 2, 1)
    v = np.zeros((1, 4, 1))
    # 2**32 + 1 is out of range (as 32 bits it would be row 1)
    assert_rule(scatter(v, [[0, 2**32 + 1]], u, "i16", "i64"), "REQUIRE", RANGE_CLAUSE)
    # row 2 written twice
    assert_rule(scatter(v, [[2, 2]], u, "i16", "i64"), "REQUIRE", ONCE_CLAUSE)


def test_scatter_boolean() -> None:
    v = np.zeros((1, 3, 1), dtype=bool)
    u = np.array([True]).reshape(1, 1, 1)
    out = valid(scatter(v, [[2]], u, "bool", "i64"))
    assert out.reshape(-1).tolist() == [False, False, True]

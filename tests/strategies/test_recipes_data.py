"""Properties of the data-movement, reduction and shape-operator recipes that the
acceptance test (valid is valid, breakers break their rule) does not look at."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from conformance import dtypes
from conformance.graph import Tensor
from conformance.spec import load_spec
from reference.engine import evaluate
from strategies.case import Case
from strategies.draw import draw_examples
from strategies.shapes import Budget
from strategies.valid import valid_cases

SPEC = load_spec()
LEVEL = SPEC.level("8K")
MAX_RANK = LEVEL["MAX_RANK"]


def cases(op: str, mode: str, n: int = 40, seed: int = 3) -> list[Case]:
    return draw_examples(valid_cases(SPEC, op, mode, LEVEL), n, seed)


def operands(case: Case) -> tuple[list[Tensor], list[Tensor], dict[str, Any]]:
    main = case.graph.main
    op = main.operators[0]
    return (
        [main.tensors[n] for n in op.inputs],
        [main.tensors[n] for n in op.outputs],
        op.attributes,
    )


def value(case: Case, t: Tensor) -> np.ndarray:
    return np.asarray(t.data if t.data is not None else case.inputs[t.name])


@pytest.mark.parametrize(
    "op",
    ["REDUCE_MAX", "CONCAT", "PAD", "RESHAPE", "REVERSE", "SLICE", "TILE", "TRANSPOSE"],
)
def test_ranks_reach_the_level_maximum_and_tensors_fit_the_budget(op: str) -> None:
    mode = "fp32"
    # Two seeds: whether 100 draws of one seed reach rank 6 depends on every draw the
    # recipe makes, and it must not hang on one draw order.
    drawn = cases(op, mode, 100) + cases(op, mode, 100, seed=4)
    ranks = set()
    for case in drawn:
        ins, outs, _ = operands(case)
        ranks.add(len(outs[0].shape))
        for t in ins + outs:
            assert math.prod(t.shape) <= Budget().max_elements, (op, t.name, t.shape)
    assert MAX_RANK in ranks and 1 in ranks, sorted(ranks)


def test_reductions_keep_the_axis_as_one() -> None:
    for op in ("REDUCE_SUM", "REDUCE_PRODUCT", "REDUCE_MIN"):
        for case in cases(op, "fp16", 20):
            (x,), (y,), attrs = operands(case)
            axis = attrs["axis"]
            assert 0 <= axis < len(x.shape)
            assert y.shape == tuple(1 if i == axis else d for i, d in enumerate(x.shape))


def test_integer_sum_values_are_bounded_by_the_axis_length() -> None:
    big = 0
    for case in cases("REDUCE_SUM", "signed 32", 60):
        (x,), _, attrs = operands(case)
        values = value(case, x).astype(np.int64)
        length = x.shape[attrs["axis"]]
        if length > 1:
            assert np.abs(values).max() * length <= (1 << 31) - 1
        big += int(np.abs(values).max() * length > (1 << 24))
    assert big, "the bound should still allow large sums"


def test_products_are_mostly_finite_and_nonzero() -> None:
    """The bulk stays clear of overflow and underflow; specials decide a few rows."""
    finite = total = 0
    for case in cases("REDUCE_PRODUCT", "fp16", 40):
        outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
        with np.errstate(over="ignore"):
            out = np.asarray(outcome.outputs["output"], dtype=np.float64).astype(np.float16)
        finite += int(np.sum(np.isfinite(out) & (out != 0)))
        total += out.size
    assert finite >= 0.8 * total, (finite, total)


def test_boolean_reductions_see_all_true_rows() -> None:
    for op, want in (("REDUCE_ALL", True), ("REDUCE_ANY", False)):
        results = set()
        for case in cases(op, "boolean", 40):
            outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
            results.update(np.asarray(outcome.outputs["output"]).reshape(-1).tolist())
        assert want in results, op


def test_gather_and_scatter_indices() -> None:
    for case in cases("GATHER", "signed 8", 20):
        (values, indices), _, _ = operands(case)
        assert indices.dtype is dtypes.SHAPE
        k = value(case, indices)
        assert k.min() >= 0 and k.max() < values.shape[1]
    for case in cases("SCATTER", "fp32", 20):
        (values_in, indices, _), _, _ = operands(case)
        k = value(case, indices)
        assert k.min() >= 0 and k.max() < values_in.shape[1]
        for row in k:  # each position written at most once per batch
            assert len(set(row.tolist())) == len(row)


def test_transpose_perms_are_permutations() -> None:
    for case in cases("TRANSPOSE", "signed 16", 20):
        (x,), _, attrs = operands(case)
        assert sorted(attrs["perms"]) == list(range(len(x.shape)))


def test_shape_arguments_are_constant_shape_tensors() -> None:
    for op, mode in (("PAD", "fp16"), ("SLICE", "boolean"), ("ADD_SHAPE", "shape")):
        for case in cases(op, mode, 10):
            ins, _, _ = operands(case)
            for t in ins:
                if t.dtype is dtypes.SHAPE:
                    assert t.data is not None, (op, t.name)


def test_pad_const_is_a_value_of_the_type() -> None:
    for mode, dt in (("signed 8", dtypes.I8), ("bf16", dtypes.BF16), ("boolean", dtypes.BOOL)):
        for case in cases("PAD", mode, 20):
            pad_const = operands(case)[2]["pad_const"]
            stored = np.asarray(pad_const).astype(dt.storage)
            assert np.array_equal(
                stored.astype(np.float64), np.asarray(pad_const, np.float64), equal_nan=True
            )


def test_shape_arithmetic_reaches_the_int64_extremes() -> None:
    extremes = 0
    for case in cases("MUL_SHAPE", "shape", 60):
        outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
        out = np.asarray(outcome.outputs["output"], dtype=np.int64)
        extremes += int(out.size > 0 and np.abs(out.astype(np.float64)).max() > 2.0**62)
    assert extremes


def test_concat_sometimes_lists_a_tensor_twice() -> None:
    """CONCAT(x, y, x): the repeated tensor is one graph input, its slots both hold it."""
    repeated = distinct = 0
    for case in cases("CONCAT", "signed 8", 40):
        outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
        assert outcome.kind == "valid", case
        names = case.graph.main.operators[0].inputs
        if len(set(names)) == len(names):
            distinct += int(len(names) > 1)
            continue
        repeated += 1
        # each tensor a graph input once
        assert sorted(case.graph.main.inputs) == sorted(set(names))
        axis = case.graph.main.operators[0].attributes["axis"]
        # rank-0 inputs concatenate into a vector
        want = np.concatenate([np.atleast_1d(case.inputs[n]) for n in names], axis=axis)
        assert np.array_equal(np.asarray(outcome.outputs["output"]), want)
    assert repeated and distinct, (repeated, distinct)


@pytest.mark.parametrize(
    "clause",
    [
        "rank(input_shape) != rank(shapes1[0])",
        "index != axis && input_shape[index] != shapes1[0][index]",
        "operator data types do not meet requirement of operator Supported Data Types",
    ],
)
def test_concat_breakers_keep_working_on_a_repeated_input(clause: str) -> None:
    """The list breakers edit one member: a repeated one is first made a copy (else
    CONCAT(x, x) with x reshaped has a tensor and values of two shapes, or no error)."""
    from strategies.invalid import invalid_cases

    drawn = draw_examples(invalid_cases(SPEC, "CONCAT", "signed 8", LEVEL, clause=clause), 40, 5)
    assert drawn
    for case in drawn:
        outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
        assert outcome.kind == "error" and outcome.rule is not None
        assert outcome.rule.clause == clause, case

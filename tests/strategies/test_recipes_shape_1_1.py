"""The shape operators' recipes and breakers on TOSA 1.1 (EXT-SHAPE): every drawn
valid case is valid and every breaker fails with the ERROR_IF it names, at level 8K
and at no level; the cases reach the edges the 1.1 rules draw (tensor_size_t's ends,
empty shapes and MAX_SHAPE_LEN, zero and negative results, exact and inexact
divisions, powers of two, the largest exponent, slices at both ends, broadcast pairs);
and the draft's rules stay the draft's."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from conformance.spec import Spec, load_revision, spec_in_use
from reference.arguments import ATTRIBUTES_CLAUSE, TYPES_CLAUSE
from reference.engine import evaluate
from reference.ops.shape import (
    ASSERT_BROADCAST_CLAUSE,
    ASSERT_EQUAL_CLAUSE,
    CONCAT_EMPTY_INPUT_CLAUSE,
    CONCAT_LENGTH_CLAUSE,
    CONCAT_LENGTH_CLAUSE_1_1,
    CONCAT_NO_INPUT_CLAUSE,
    DIM_AXIS_CLAUSE,
    DIM_NEGATIVE_AXIS_CLAUSE,
    LENGTH_CLAUSE,
    SLICE_END_CLAUSE,
    SLICE_SIZE_CLAUSE,
    SLICE_START_CLAUSE,
)
from strategies.case import Case
from strategies.draw import draw_examples
from strategies.invalid import breakers_for, invalid_cases
from strategies.recipes import RecipeContext
from strategies.shapes import Budget
from strategies.valid import valid_cases

SPEC = load_revision("1.1-draft")
DRAFT = load_revision("2024-04-draft")
LEVELS = ("8K", "none")
TOP, BOTTOM = (1 << 31) - 1, -(1 << 31)  # tensor_size_t at 8K
I64_MAX, I64_MIN = (1 << 63) - 1, -(1 << 63)
SHAPE_OPS = sorted(op.name for op in SPEC.operators.values() if op.group == "shape")
PAIRS = [
    pytest.param(op, m.mode, level, id=f"{op}-{m.mode}-{level}")
    for op in SHAPE_OPS
    for m in SPEC.operator(op).modes
    if m.family != "MX"  # block-scaled DIM inputs: test_recipes_data_layout_1_1.py
    for level in LEVELS
]
# Every ERROR_IF of the 1.1 pseudocode of these operators (DIM's block-scaled ones
# aside), by operator: each must have a breaker.
ERROR_IFS = {
    **{
        op: {LENGTH_CLAUSE}
        for op in ("ADD_SHAPE", "SUB_SHAPE", "MUL_SHAPE", "MIN_SHAPE", "MAX_SHAPE")
    },
    **{op: {LENGTH_CLAUSE} for op in ("DIV_CEIL_SHAPE", "DIV_FLOOR_SHAPE", "MOD_SHAPE")},
    "ASSERT_EQUAL_SHAPE": {LENGTH_CLAUSE, ASSERT_EQUAL_CLAUSE, ASSERT_BROADCAST_CLAUSE},
    "CONCAT_SHAPE": {CONCAT_NO_INPUT_CLAUSE, CONCAT_LENGTH_CLAUSE_1_1, CONCAT_EMPTY_INPUT_CLAUSE},
    "SLICE_SHAPE": {SLICE_SIZE_CLAUSE, SLICE_START_CLAUSE, SLICE_END_CLAUSE},
    "DIM": {DIM_AXIS_CLAUSE, DIM_NEGATIVE_AXIS_CLAUSE},
}


@cache
def drawn(op: str, level: str = "8K", n: int = 40, target: str | None = None) -> list[Case]:
    with spec_in_use(SPEC):
        cases = draw_examples(
            valid_cases(SPEC, op, "shape", SPEC.level(level), target=target), n, 3
        )
    assert cases
    return cases


def values(case: Case, k: int) -> list[int]:
    """The constant values of the operator's input k."""
    main = case.graph.main
    data = main.tensors[main.operators[0].inputs[k]].data
    assert data is not None  # shape values are constants
    return [int(v) for v in np.asarray(data).reshape(-1)]


def result(case: Case, level: str = "8K") -> list[int]:
    outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=SPEC.level(level))
    assert outcome.kind == "valid", f"{case.describe()}: {outcome}"
    return [int(v) for v in np.asarray(outcome.outputs["output"]).reshape(-1)]


def everything(cases: list[Case], k: int) -> list[int]:
    return [v for c in cases for v in values(c, k)]


# -- valid is valid, breakers break ---------------------------------------------------------


@pytest.mark.parametrize(("op", "mode", "level"), PAIRS)
def test_valid_cases_are_valid(op: str, mode: str, level: str) -> None:
    lv = SPEC.level(level)
    with spec_in_use(SPEC):
        cases = draw_examples(valid_cases(SPEC, op, mode, lv), 12, 1)
        assert cases
        for case in cases:
            outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=lv)
            assert outcome.kind == "valid", f"{case.describe()}: {outcome}"


@pytest.mark.parametrize(("op", "mode", "level"), PAIRS)
def test_breakers_break_the_rule_they_name(op: str, mode: str, level: str) -> None:
    lv = SPEC.level(level)
    rc = RecipeContext(SPEC, SPEC.operator(op), SPEC.operator(op).mode(mode), lv, Budget())
    with spec_in_use(SPEC):
        for entry in breakers_for(op, rc):
            cases = draw_examples(invalid_cases(SPEC, op, mode, lv, clause=entry.clause), 4, 2)
            assert cases or entry.optional, f"{op}: no case breaks {entry.clause!r}"
            for case in cases:
                outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=lv)
                assert outcome.kind == "error", f"{case.describe()}: {outcome}"
                assert outcome.rule is not None and outcome.rule.clause == case.rule_broken, (
                    f"{case.describe()}: the reference says {outcome.rule}"
                )


@pytest.mark.parametrize("op", sorted(ERROR_IFS))
def test_every_error_if_has_a_breaker(op: str) -> None:
    mode = SPEC.operator(op).modes[0]
    rc = RecipeContext(SPEC, SPEC.operator(op), mode, SPEC.level("8K"), Budget())
    clauses = {b.clause for b in breakers_for(op, rc)}
    assert ERROR_IFS[op] <= clauses, ERROR_IFS[op] - clauses
    assert TYPES_CLAUSE in clauses


def test_each_revision_breaks_its_own_clauses() -> None:
    def clauses(spec: Spec, op: str) -> set[str]:
        o = spec.operator(op)
        rc = RecipeContext(spec, o, o.modes[0], spec.level("8K"), Budget())
        return {b.clause for b in breakers_for(op, rc)}

    assert CONCAT_LENGTH_CLAUSE in clauses(DRAFT, "CONCAT_SHAPE")
    assert not {CONCAT_NO_INPUT_CLAUSE, CONCAT_EMPTY_INPUT_CLAUSE} & clauses(DRAFT, "CONCAT_SHAPE")
    assert CONCAT_LENGTH_CLAUSE not in clauses(SPEC, "CONCAT_SHAPE")
    assert DIM_NEGATIVE_AXIS_CLAUSE not in clauses(DRAFT, "DIM")
    assert ATTRIBUTES_CLAUSE in clauses(DRAFT, "DIM")
    assert ATTRIBUTES_CLAUSE not in clauses(SPEC, "DIM")


def test_dim_mx_draws_whole_blocks() -> None:
    # block-scaled inputs (values and scales): tests/strategies/test_recipes_data_layout_1_1.py
    mx = [m for m in SPEC.operator("DIM").modes if m.family == "MX"]
    assert len(mx) == 6
    with spec_in_use(SPEC):
        cases = draw_examples(valid_cases(SPEC, "DIM", mx[0].mode, SPEC.level("8K")), 5, 1)
    for case in cases:
        shape = case.graph.main.tensors["input1"].shape
        assert shape[-1] % 32 == 0, shape
        assert evaluate(case.graph, case.inputs, spec=SPEC).valid


# -- the edges of the 1.1 rules ------------------------------------------------------------


@pytest.mark.parametrize(("level", "cap"), [("8K", 16), ("none", 64)])
def test_lengths_reach_zero_and_max_shape_len(level: str, cap: int) -> None:
    lengths = {len(values(c, 0)) for op in ("ADD_SHAPE", "MIN_SHAPE") for c in drawn(op, level)}
    assert 0 in lengths and cap in lengths and max(lengths) == cap, sorted(lengths)
    slices = {len(values(c, 0)) for c in drawn("SLICE_SHAPE", level)}
    assert min(slices) >= 1 and max(slices) == cap


@pytest.mark.parametrize(("level", "lo", "hi"), [("8K", BOTTOM, TOP), ("none", I64_MIN, I64_MAX)])
def test_values_reach_the_ends_of_tensor_size_t(level: str, lo: int, hi: int) -> None:
    for op in ("ADD_SHAPE", "MIN_SHAPE", "MAX_SHAPE", "ASSERT_EQUAL_SHAPE"):
        seen = everything(drawn(op, level), 0) + everything(drawn(op, level), 1)
        assert lo <= min(seen) and max(seen) <= hi
        assert {lo, hi} <= set(seen), op
    # and past int32 where the level allows it
    assert any(abs(v) > TOP + 1 for v in everything(drawn("SUB_SHAPE", "none"), 0))


def test_results_reach_zero_negatives_and_the_ends() -> None:
    sums = [v for c in drawn("ADD_SHAPE") for v in result(c)]
    assert TOP in sums and BOTTOM in sums
    differences = [v for c in drawn("SUB_SHAPE") for v in result(c)]
    assert min(differences) < 0 and 0 in differences
    products = [v for c in drawn("MUL_SHAPE") for v in result(c)]
    assert 0 in products and min(products) < 0 and max(abs(v) for v in products) > 1 << 30


def test_mixed_signs_for_min_and_max() -> None:
    pairs = [
        (x, y)
        for op in ("MIN_SHAPE", "MAX_SHAPE")
        for c in drawn(op)
        for x, y in zip(values(c, 0), values(c, 1), strict=True)
    ]
    assert any(x < 0 <= y or y < 0 <= x for x, y in pairs)
    assert any(x == y for x, y in pairs)  # ties


@pytest.mark.parametrize("op", ["DIV_FLOOR_SHAPE", "DIV_CEIL_SHAPE", "MOD_SHAPE"])
def test_divisions_exact_inexact_and_at_the_ends(op: str) -> None:
    pairs = [(a, b) for c in drawn(op) for a, b in zip(values(c, 0), values(c, 1), strict=True)]
    assert all(a >= 0 and b >= 1 for a, b in pairs)  # the REQUIREs
    assert any(a % b == 0 and a > 0 for a, b in pairs) and any(a % b for a, b in pairs)
    assert any(a == 0 for a, _ in pairs) and any(b == 1 for _, b in pairs)
    assert any(a < b for a, b in pairs)  # a quotient of 0 (DIV_CEIL's 1)
    assert any(a == TOP and b >= 2 for a, b in pairs)  # where a + b - 1 wraps


def test_log2_and_exp2_inputs() -> None:
    for op in ("LOG2_FLOOR_SHAPE", "LOG2_CEIL_SHAPE"):
        x = everything(drawn(op), 0)
        assert min(x) >= 1 and 1 in x and TOP in x
        powers = [v for v in x if v & (v - 1) == 0]
        assert len(powers) >= 3 and any(v & (v - 1) for v in x)
        assert any(v > 1 << 24 and (v + 1) & v == 0 for v in x)  # 2**k - 1 past fp32
    for level, top in (("8K", 30), ("none", 62)):  # MAX_LOG2_SIZE - 1
        x = everything(drawn("EXP2_SHAPE", level), 0)
        assert min(x) == 0 and max(x) == top


def test_slices_at_both_ends() -> None:
    starts, ends, whole = 0, 0, 0
    for c in drawn("SLICE_SHAPE"):
        n, (start,), (size,) = len(values(c, 0)), values(c, 1), values(c, 2)
        assert start >= 0 and size >= 1 and start + size <= n
        starts += start == 0
        ends += start + size == n and start > 0
        whole += size == n
        assert result(c) == values(c, 0)[start : start + size]
    assert starts and ends and whole


def test_concat_lists() -> None:
    counts, totals = set(), set()
    for c in drawn("CONCAT_SHAPE"):
        parts = [values(c, k) for k in range(len(c.graph.main.operators[0].inputs))]
        assert parts and all(parts)  # 1.1: at least one shape, none empty
        counts.add(len(parts))
        totals.add(sum(len(p) for p in parts))
        assert result(c) == [v for p in parts for v in p]
    assert 1 in counts and max(counts) >= 3
    assert max(totals) == 16 and min(totals) >= 1


def test_assert_equal_shape_pairs() -> None:
    allow = {True: 0, False: 0}
    one_in_1 = one_in_2 = 0
    for c in drawn("ASSERT_EQUAL_SHAPE"):
        a, b = values(c, 0), values(c, 1)
        flag = bool(c.graph.main.operators[0].attributes["allow_broadcast"])
        allow[flag] += 1
        if not flag:
            assert a == b
        one_in_1 += sum(x == 1 and y != 1 for x, y in zip(a, b, strict=True))
        one_in_2 += sum(y == 1 and x != 1 for x, y in zip(a, b, strict=True))
    assert allow[True] and allow[False] and one_in_1 and one_in_2


@pytest.mark.parametrize("flag", [True, False])
def test_allow_broadcast_targets(flag: bool) -> None:
    target = f"attr:allow_broadcast={'true' if flag else 'false'}"
    for c in drawn("ASSERT_EQUAL_SHAPE", n=10, target=target):
        assert c.graph.main.operators[0].attributes["allow_broadcast"] is flag


def test_slice_start_and_size_are_constant_i32_tensors() -> None:
    for c in drawn("SLICE_SHAPE", n=10):
        main = c.graph.main
        for name in main.operators[0].inputs[1:]:
            t = main.tensors[name]
            assert t.dtype.name == "i32" and t.shape == (1,) and t.data is not None
        assert not c.inputs  # nothing is a graph input


# -- the draft's recipes are the draft's -------------------------------------------------


def test_the_draft_recipes_keep_int64_and_max_rank() -> None:
    level = DRAFT.level("8K")
    cases = draw_examples(valid_cases(DRAFT, "ADD_SHAPE", "shape", level), 40, 3)
    assert max(len(values(c, 0)) for c in cases) <= level["MAX_RANK"]
    assert any(abs(v) > TOP + 1 for c in cases for v in values(c, 0))  # int64 values
    concat = draw_examples(valid_cases(DRAFT, "CONCAT_SHAPE", "shape", level), 40, 3)
    assert any(not c.graph.main.operators[0].inputs for c in concat)  # an empty list

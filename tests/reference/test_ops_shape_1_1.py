"""Reference evaluator, TOSA 1.1's shape operators (EXT-SHAPE): ADD_SHAPE, SUB_SHAPE,
MUL_SHAPE, MIN_SHAPE, MAX_SHAPE, DIV_FLOOR_SHAPE, DIV_CEIL_SHAPE, MOD_SHAPE,
EXP2_SHAPE, LOG2_FLOOR_SHAPE, LOG2_CEIL_SHAPE, CONCAT_SHAPE, SLICE_SHAPE,
ASSERT_EQUAL_SHAPE and DIM: every ERROR_IF and REQUIRE of their 1.1 pseudocode, the
range of tensor_size_t at each level, the MAX_SHAPE_LEN level limits (length(x)), and
the 2024 draft's rules kept where the two revisions differ.

Every expected value is worked out by hand from the 1.1 pseudocode in the comment
beside it.  tensor_size_t holds [-(1 << MAX_LOG2_SIZE), (1 << MAX_LOG2_SIZE) - 1]:
at 8K (MAX_LOG2_SIZE 31) [-2**31, 2**31 - 1], at no level (63) int64's range."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reference_helpers import assert_rule, valid

from conformance.block_tensor import BlockScaled, scale_shape
from conformance.builder import map_operands, single_operator_graph
from conformance.dtypes import dtype
from conformance.graph import Graph
from conformance.spec import Spec, load_revision
from reference.arguments import ATTRIBUTES_CLAUSE, OUTPUTS_CLAUSE
from reference.engine import evaluate
from reference.levels import level_violations, operand_environment
from reference.ops.shape import (
    ASSERT_BROADCAST_CLAUSE,
    ASSERT_EQUAL_CLAUSE,
    CONCAT_EMPTY_INPUT_CLAUSE,
    CONCAT_LENGTH_CLAUSE_1_1,
    CONCAT_NO_INPUT_CLAUSE,
    DIM_AXIS_CLAUSE,
    DIM_BLOCK_SIZE_CLAUSE,
    DIM_NEGATIVE_AXIS_CLAUSE,
    DIM_SIZE_CLAUSE,
    DIVIDEND_CLAUSE,
    DIVISOR_CLAUSE,
    EXP2_LIMIT_CLAUSE,
    EXP2_NEGATIVE_CLAUSE,
    LENGTH_CLAUSE,
    LOG2_CLAUSE,
    SLICE_END_CLAUSE,
    SLICE_SIZE_CLAUSE,
    SLICE_START_CLAUSE,
    TENSOR_SIZE_CLAUSE,
    tensor_size_range,
)
from reference.outcome import Outcome

SPEC = load_revision("1.1-draft")
DRAFT = load_revision("2024-04-draft")
TOP = (1 << 31) - 1  # tensor_size_t's maximum at 8K
BOTTOM = -(1 << 31)  # and its minimum
I64_MAX, I64_MIN = (1 << 63) - 1, -(1 << 63)


def shape_graph(
    op: str,
    operands: Sequence[Sequence[int]],
    out_len: int | None,
    spec: Spec = SPEC,
    **attrs: Any,
) -> Graph:
    """``op`` on constant shape operands (a, b, ...), output y of ``out_len`` (None: no
    output, ASSERT_EQUAL_SHAPE)."""
    names = [f"s{k}" for k in range(len(operands))]
    return single_operator_graph(
        op,
        [(n, (len(v),), "shape") for n, v in zip(names, operands, strict=True)],
        [] if out_len is None else [("y", (out_len,), "shape")],
        attrs,
        constants={n: np.array(v, dtype=np.int64) for n, v in zip(names, operands, strict=True)},
        spec=spec,
        strict=False,
    )


def run(
    op: str,
    *operands: Sequence[int],
    out_len: int | None = -1,
    level: str = "8K",
    spec: Spec = SPEC,
    **attrs: Any,
) -> Outcome:
    """One shape operator; the output is as long as the first operand unless given."""
    n = len(operands[0]) if out_len == -1 else out_len
    return evaluate(shape_graph(op, operands, n, spec, **attrs), {}, spec=spec, level=level)


def out(outcome: Outcome) -> list[int]:
    return [int(v) for v in valid(outcome)]


def passes(outcome: Outcome) -> bool:
    """A valid outcome of an operator without outputs (ASSERT_EQUAL_SHAPE)."""
    assert outcome.kind == "valid", str(outcome)
    return outcome.outputs == {}


# -- values by hand ----------------------------------------------------------------------

BY_HAND = [
    ("ADD_SHAPE", [1, -3, 0], [2, 3, 0], [3, 0, 0]),
    ("SUB_SHAPE", [2, 9, 0], [5, 4, 0], [-3, 5, 0]),  # negative results are values too
    ("MUL_SHAPE", [3, -4, 0], [5, 6, 7], [15, -24, 0]),
    ("MIN_SHAPE", [-1, 5, 7], [5, -2, 7], [-1, -2, 7]),  # signed: -1 < 5
    ("MAX_SHAPE", [-1, 5, 7], [5, -2, 7], [5, 5, 7]),
    # apply_intdiv_s on a >= 0, b >= 1: 7 / 2 = 3, 0 / 5 = 0, 9 / 3 = 3, 1 / 4 = 0
    ("DIV_FLOOR_SHAPE", [7, 0, 9, 1], [2, 5, 3, 4], [3, 0, 3, 0]),
    # the same quotients, plus 1 where a % b != 0: 7 % 2 = 1, 0, 9 % 3 = 0, 1 % 4 = 1
    ("DIV_CEIL_SHAPE", [7, 0, 9, 1], [2, 5, 3, 4], [4, 0, 3, 1]),
    ("MOD_SHAPE", [7, 0, 9, 1], [2, 5, 3, 4], [1, 0, 0, 1]),
    # the top of tensor_size_t at 8K: (2**31 - 1) / 2 = 1073741823 rem 1, so ceil is 2**30
    ("DIV_FLOOR_SHAPE", [TOP], [2], [(1 << 30) - 1]),
    ("DIV_CEIL_SHAPE", [TOP], [2], [1 << 30]),
    ("MOD_SHAPE", [TOP], [TOP], [0]),
]


@pytest.mark.parametrize(("op", "a", "b", "want"), BY_HAND)
def test_binary_operators_by_hand(op: str, a: list[int], b: list[int], want: list[int]) -> None:
    assert out(run(op, a, b)) == want


def test_unary_operators_by_hand() -> None:
    # 1 << input
    assert out(run("EXP2_SHAPE", [0, 1, 10, 30])) == [1, 2, 1024, 1 << 30]
    # the loop counts the shifts until in is 0, less the last: 1 -> 0, 2 -> 1, 3 -> 1,
    # 4 -> 2, 1000 (0b1111101000, ten bits) -> 9, 2**31 - 1 (31 bits) -> 30
    assert out(run("LOG2_FLOOR_SHAPE", [1, 2, 3, 4, 1000, TOP])) == [0, 1, 1, 2, 9, 30]
    # plus 1 unless input == 1 << log_val: 1 -> 0, 2 -> 1, 3 -> 2, 4 -> 2, 5 -> 3,
    # 1000 -> 10, 2**31 - 1 -> 31, 2**30 -> 30
    want = [0, 1, 2, 2, 3, 10, 31, 30]
    assert out(run("LOG2_CEIL_SHAPE", [1, 2, 3, 4, 5, 1000, TOP, 1 << 30])) == want


def test_empty_shapes_are_values() -> None:
    # length 0 (the shape of a rank-0 tensor): nothing to compute, nothing to fail
    for op in ("ADD_SHAPE", "MUL_SHAPE", "MIN_SHAPE", "DIV_CEIL_SHAPE", "MOD_SHAPE"):
        assert out(run(op, [], [])) == []
    assert out(run("LOG2_FLOOR_SHAPE", [])) == []
    assert passes(run("ASSERT_EQUAL_SHAPE", [], [], out_len=None, allow_broadcast=False))


# -- tensor_size_t ----------------------------------------------------------------------


def _range(helper: str) -> str:
    return f"c >= minimum_s<tensor_size_t>() && c <= maximum_s<tensor_size_t>() ({helper})"


def test_tensor_size_t_is_int32_at_8k() -> None:
    assert tensor_size_range(SPEC.level("8K")) == (BOTTOM, TOP)
    assert tensor_size_range(SPEC.level("none")) == (I64_MIN, I64_MAX)
    # results at the ends are values ...
    assert out(run("ADD_SHAPE", [TOP - 2, BOTTOM + 1], [2, -1])) == [TOP, BOTTOM]
    assert out(run("SUB_SHAPE", [BOTTOM], [0])) == [BOTTOM]
    assert out(run("MUL_SHAPE", [65536], [-32768])) == [BOTTOM]  # -2**31 exactly
    # ... one past them fails the helper's REQUIRE
    assert_rule(run("ADD_SHAPE", [1, TOP], [1, 1]), "REQUIRE", _range("apply_add_s"), "index 1")
    assert_rule(run("SUB_SHAPE", [BOTTOM], [1]), "REQUIRE", _range("apply_sub_s"))
    # 65536 * 32768 = 2**31: apply_mul_s's cast to tensor_size_t cannot hold it
    assert_rule(run("MUL_SHAPE", [65536], [32768]), "REQUIRE", _range("apply_mul_s"))


def test_operands_beyond_tensor_size_t_are_beyond_the_level() -> None:
    # 2**31 is no tensor_size_t at 8K, whatever the result (2**31 - 2**31 = 0)
    outcome = run("ADD_SHAPE", [0, 1 << 31], [0, -(1 << 31)])
    assert_rule(outcome, "LEVEL_CHECK", TENSOR_SIZE_CLAUSE, "input1[1] = 2147483648")
    assert_rule(run("MIN_SHAPE", [0], [BOTTOM - 1]), "LEVEL_CHECK", TENSOR_SIZE_CLAUSE, "input2")
    assert_rule(run("LOG2_CEIL_SHAPE", [1 << 40]), "LEVEL_CHECK", TENSOR_SIZE_CLAUSE)
    assert_rule(_slice([1 << 31], 0, 1), "LEVEL_CHECK", TENSOR_SIZE_CLAUSE, "input[0]")
    # at no level they are
    assert out(run("ADD_SHAPE", [1 << 40], [1], level="none")) == [(1 << 40) + 1]


def test_int64_products_at_no_level_are_checked_exactly() -> None:
    # 2**32 * 2**31 = 2**63, one past int64 (the product itself would overflow int64_t)
    outcome = run("MUL_SHAPE", [1 << 32], [1 << 31], level="none")
    assert_rule(outcome, "REQUIRE", _range("apply_mul_s"))
    # 2**32 * -2**31 = -2**63, int64's minimum
    assert out(run("MUL_SHAPE", [1 << 32], [-(1 << 31)], level="none")) == [I64_MIN]
    # (2**62 + 1) * 3 wraps int64 to a small number; it is out of range, not that
    outcome = run("MUL_SHAPE", [(1 << 62) + 1], [3], level="none")
    assert_rule(outcome, "REQUIRE", _range("apply_mul_s"))
    assert out(run("ADD_SHAPE", [I64_MAX - 1], [1], level="none")) == [I64_MAX]
    assert_rule(run("ADD_SHAPE", [I64_MAX], [1], level="none"), "REQUIRE", _range("apply_add_s"))


def test_exp2_up_to_max_log2_size() -> None:
    # REQUIRE(input < MAX_LOG2_SIZE): 30 is the largest exponent at 8K, 62 at no level
    assert out(run("EXP2_SHAPE", [30])) == [1 << 30]
    assert_rule(run("EXP2_SHAPE", [30, 31]), "REQUIRE", EXP2_LIMIT_CLAUSE, "index 1")
    assert out(run("EXP2_SHAPE", [62], level="none")) == [1 << 62]
    assert_rule(run("EXP2_SHAPE", [63], level="none"), "REQUIRE", EXP2_LIMIT_CLAUSE)
    assert_rule(run("EXP2_SHAPE", [3, -1]), "REQUIRE", EXP2_NEGATIVE_CLAUSE, "index 1")


# -- REQUIREs and ERROR_IFs -------------------------------------------------------------


@pytest.mark.parametrize("op", ["DIV_FLOOR_SHAPE", "DIV_CEIL_SHAPE", "MOD_SHAPE"])
def test_dividing_operators_require_sizes_and_positive_divisors(op: str) -> None:
    assert_rule(run(op, [-1], [1]), "REQUIRE", DIVIDEND_CLAUSE)
    assert_rule(run(op, [1], [0]), "REQUIRE", DIVISOR_CLAUSE)
    assert_rule(run(op, [1], [-3]), "REQUIRE", DIVISOR_CLAUSE)
    # both fail at index 0: the dividend's REQUIRE comes first
    assert_rule(run(op, [-1], [0]), "REQUIRE", DIVIDEND_CLAUSE)
    # the first failing index decides: index 0's divisor before index 1's dividend
    assert_rule(run(op, [5, -1], [0, 1]), "REQUIRE", DIVISOR_CLAUSE, "index 0")


@pytest.mark.parametrize("op", ["LOG2_FLOOR_SHAPE", "LOG2_CEIL_SHAPE"])
def test_log2_requires_positive_inputs(op: str) -> None:
    assert_rule(run(op, [4, 0]), "REQUIRE", LOG2_CLAUSE, "index 1")
    assert_rule(run(op, [-8]), "REQUIRE", LOG2_CLAUSE)


BINARY = ["ADD_SHAPE", "SUB_SHAPE", "MUL_SHAPE", "MIN_SHAPE", "MAX_SHAPE"]
DIVIDING = ["DIV_FLOOR_SHAPE", "DIV_CEIL_SHAPE", "MOD_SHAPE"]


@pytest.mark.parametrize("op", [*BINARY, *DIVIDING])
def test_operand_lengths_must_agree(op: str) -> None:
    assert_rule(run(op, [1, 2], [1, 2, 3]), "error", LENGTH_CLAUSE)
    assert_rule(run(op, [1, 2], [1], out_len=2), "error", LENGTH_CLAUSE)
    # the output's length is assumed, not checked: unpredictable
    outcome = run(op, [1, 2], [3, 4], out_len=3)
    assert_rule(outcome, "REQUIRE", "length(output) == length(input1) (assumed by the pseudocode)")


def test_unary_output_length_is_assumed() -> None:
    outcome = run("EXP2_SHAPE", [1, 2], out_len=1)
    assert_rule(outcome, "REQUIRE", "length(output) == length(input) (assumed by the pseudocode)")


# -- CONCAT_SHAPE -----------------------------------------------------------------------


def test_concat_shape_by_hand() -> None:
    outcome = run("CONCAT_SHAPE", [1, 2], [3], [4, BOTTOM], out_len=5)
    assert out(outcome) == [1, 2, 3, 4, BOTTOM]
    assert out(run("CONCAT_SHAPE", [7], out_len=1)) == [7]


def test_concat_shape_rules() -> None:
    # ERROR_IF(input == []): at least one shape (the draft allowed none)
    assert_rule(run("CONCAT_SHAPE", out_len=0), "error", CONCAT_NO_INPUT_CLAUSE)
    # ERROR_IF(input[i] == []): no empty shape, even where the lengths add up
    assert_rule(run("CONCAT_SHAPE", [1], [], [2], out_len=2), "error", CONCAT_EMPTY_INPUT_CLAUSE)
    # 2 + 1 elements for an output of 4
    assert_rule(run("CONCAT_SHAPE", [1, 2], [3], out_len=4), "error", CONCAT_LENGTH_CLAUSE_1_1)
    # the length rule comes first: 1 + 0 != 2
    assert_rule(run("CONCAT_SHAPE", [1], [], out_len=2), "error", CONCAT_LENGTH_CLAUSE_1_1)


def test_the_draft_concat_shape_keeps_its_rules() -> None:
    assert out(run("CONCAT_SHAPE", out_len=0, spec=DRAFT)) == []
    assert out(run("CONCAT_SHAPE", [1], [], [2], out_len=2, spec=DRAFT)) == [1, 2]
    clause = "length(output) != sum(length(input1[k]) for all k)"
    assert_rule(run("CONCAT_SHAPE", [1], out_len=2, spec=DRAFT), "error", clause)


# -- SLICE_SHAPE ------------------------------------------------------------------------


def _slice(x: Sequence[int], start: int, size: int, out_len: int | None = None) -> Outcome:
    graph = single_operator_graph(
        "SLICE_SHAPE",
        [("x", (len(x),), "shape"), ("start", (1,), "i32"), ("size", (1,), "i32")],
        [("y", (size if out_len is None else out_len,), "shape")],
        constants={
            "x": np.array(x, dtype=np.int64),
            "start": np.array([start], dtype=np.int32),
            "size": np.array([size], dtype=np.int32),
        },
        spec=SPEC,
        strict=False,
    )
    return evaluate(graph, {}, spec=SPEC)


def test_slice_shape_by_hand() -> None:
    # output[index] = input[index + start]
    assert out(_slice([2, 3, 4, 5], 1, 2)) == [3, 4]
    assert out(_slice([2, 3, 4, 5], 0, 4)) == [2, 3, 4, 5]
    assert out(_slice([2, 3, 4, 5], 3, 1)) == [5]  # start + size == length: the end


def test_slice_shape_rules() -> None:
    assert_rule(_slice([2, 3], 0, 0), "error", SLICE_SIZE_CLAUSE)
    assert_rule(_slice([2, 3], 0, -1), "error", SLICE_SIZE_CLAUSE)
    assert_rule(_slice([2, 3], -1, 1), "error", SLICE_START_CLAUSE)
    assert_rule(_slice([2, 3], -1, 0), "error", SLICE_SIZE_CLAUSE)  # size is checked first
    assert_rule(_slice([2, 3, 4, 5], 3, 2), "error", SLICE_END_CLAUSE)  # 3 + 2 > 4
    # 2**31 - 2 + 2 is past int32_t: the sum is compared exactly, never wrapped
    assert_rule(_slice([2, 3], (1 << 31) - 2, 2), "error", SLICE_END_CLAUSE)
    outcome = _slice([2, 3, 4], 0, 2, out_len=3)
    assert_rule(outcome, "REQUIRE", "length(output) == size_value (assumed by the pseudocode)")


# -- ASSERT_EQUAL_SHAPE -----------------------------------------------------------------


def _assert(a: Sequence[int], b: Sequence[int], allow_broadcast: bool) -> Outcome:
    return run("ASSERT_EQUAL_SHAPE", a, b, out_len=None, allow_broadcast=allow_broadcast)


def test_assert_equal_shape() -> None:
    assert passes(_assert([2, 3], [2, 3], False))  # no output: valid is all it says
    assert_rule(_assert([2, 3], [2, 4], False), "error", ASSERT_EQUAL_CLAUSE, "index 1")
    assert_rule(_assert([1, 3], [2, 3], False), "error", ASSERT_EQUAL_CLAUSE, "index 0")
    assert_rule(_assert([2, 3], [2], True), "error", LENGTH_CLAUSE)


def test_assert_equal_shape_with_broadcast() -> None:
    # where input1 is 1 anything goes; elsewhere input2 is 1 or the same
    assert passes(_assert([1, 4, 5], [3, 4, 1], True))
    assert passes(_assert([3, 1], [1, 7], True))
    assert passes(_assert([1], [BOTTOM], True))
    assert_rule(_assert([2, 4], [2, 3], True), "error", ASSERT_BROADCAST_CLAUSE, "index 1")
    assert_rule(_assert([0], [5], True), "error", ASSERT_BROADCAST_CLAUSE)


# -- DIM --------------------------------------------------------------------------------


def _dim(shape: tuple[int, ...], dt: str, axis: int, spec: Spec = SPEC) -> Outcome:
    graph = single_operator_graph(
        "DIM", [("x", shape, dt)], [("y", (1,), "shape")], {"axis": axis}, spec=spec, strict=False
    )
    t = dtype(dt)
    if t.kind == "block":  # a block-scaled input: values and (a scale per block) scales
        zeros = np.zeros(shape, dtype=dtype(t.block_value).storage)
        ones = np.ones(scale_shape(shape, t.block_size), dtype=dtype(t.block_scale).storage)
        return evaluate(graph, {"x": BlockScaled(t, zeros, ones)}, spec=spec)
    return evaluate(graph, {"x": np.zeros(shape, dtype=t.storage)}, spec=spec)


def test_dim_1_1() -> None:
    assert out(_dim((2, 5, 3), "fp32", 1)) == [5]  # shape_dim([2, 5, 3], 1)
    assert_rule(_dim((2, 5, 3), "fp32", 3), "error", DIM_AXIS_CLAUSE)
    assert_rule(_dim((2, 5, 3), "fp32", -1), "error", DIM_NEGATIVE_AXIS_CLAUSE)
    assert_rule(_dim((2, 0), "i8", 1), "REQUIRE", DIM_SIZE_CLAUSE)  # REQUIRE(shape[axis] > 0)
    # the draft's pseudocode has no axis < 0: the attribute's declaration refuses it
    assert_rule(_dim((2, 5, 3), "fp32", -1, DRAFT), "error", ATTRIBUTES_CLAUSE)


@pytest.mark.parametrize(
    "mode", [m.mode for m in SPEC.operator("DIM").modes if m.family != "MX"], ids=str
)
def test_dim_every_ordinary_mode(mode: str) -> None:
    dt = SPEC.operator("DIM").mode(mode).dtype("in_t")
    assert out(_dim((3, 4), dt.name, 0)) == [3]


def test_dim_block_scaled_rules() -> None:
    # the innermost dimension of a block-scaled input is a whole number of 32-blocks
    assert out(_dim((2, 64), "bs32_fp8ue8m0_fp4e2m1", 0)) == [2]
    outcome = _dim((2, 33), "bs32_fp8ue8m0_mxint8", 0)
    assert_rule(outcome, "error", DIM_BLOCK_SIZE_CLAUSE, "block size 32")


def test_dim_output_is_one_value() -> None:
    graph = single_operator_graph(
        "DIM", [("x", (2, 3), "i8")], [("y", (2,), "shape")], {"axis": 0}, spec=SPEC, strict=False
    )
    assert_rule(
        evaluate(graph, {"x": np.zeros((2, 3), np.int8)}, spec=SPEC), "error", OUTPUTS_CLAUSE
    )


# -- level limits: length(x) <= MAX_SHAPE_LEN -------------------------------------------


def test_shape_lengths_at_the_level_limit() -> None:
    sixteen = list(range(16))  # MAX_SHAPE_LEN at 8K
    assert out(run("ADD_SHAPE", sixteen, sixteen)) == [2 * v for v in sixteen]
    over = list(range(17))
    outcome = run("MAX_SHAPE", over, over)
    assert_rule(outcome, "LEVEL_CHECK", "length(input1) <= MAX_SHAPE_LEN (17 > 16)")
    outcome = run("MAX_SHAPE", sixteen, over, out_len=16)
    assert_rule(outcome, "LEVEL_CHECK", "length(input2) <= MAX_SHAPE_LEN (17 > 16)")
    assert_rule(
        run("EXP2_SHAPE", [1] * 17), "LEVEL_CHECK", "length(input) <= MAX_SHAPE_LEN (17 > 16)"
    )
    # at no level the limit is 64
    assert len(out(run("LOG2_FLOOR_SHAPE", [1] * 64, level="none"))) == 64
    outcome = run("LOG2_FLOOR_SHAPE", [1] * 65, level="none")
    assert_rule(outcome, "LEVEL_CHECK", "length(input) <= MAX_SHAPE_LEN (65 > 64)")
    # an empty assertion is within every limit; a long one is not
    outcome = run("ASSERT_EQUAL_SHAPE", over, over, out_len=None, allow_broadcast=False)
    assert_rule(outcome, "LEVEL_CHECK", "length(input1) <= MAX_SHAPE_LEN (17 > 16)")


def test_concat_shape_level_limits() -> None:
    # the output of 16 + 1 elements is past MAX_SHAPE_LEN
    outcome = run("CONCAT_SHAPE", list(range(16)), [1], out_len=17)
    assert_rule(outcome, "LEVEL_CHECK", "length(output) <= MAX_SHAPE_LEN (17 > 16)")
    # 65 one-element shapes: length(input) <= MAX_TENSOR_LIST_SIZE (64) fails, and the
    # output's 65 as well; the list's limit is the first argument's
    graph = shape_graph("CONCAT_SHAPE", [[1]] * 65, 65)
    outcome = evaluate(graph, {}, spec=SPEC)
    assert_rule(outcome, "LEVEL_CHECK", "length(input) <= MAX_TENSOR_LIST_SIZE (65 > 64)")


def test_dim_rank_limit_is_length_of_its_shape() -> None:
    # DIM's <levellimit value="length(shape)" limit="MAX_RANK"/>: rank 7 > 6
    assert_rule(_dim((1,) * 7, "i8", 0), "LEVEL_CHECK", "length(shape) <= MAX_RANK (7 > 6)")


def _env(graph: Graph, spec: Spec, level: str = "8K") -> Any:
    main = graph.main
    op = main.operators[0]
    values = {n: t.data for n, t in main.tensors.items() if t.data is not None}
    op_spec = spec.operator(op.op)
    args = (op_spec, map_operands(op_spec, op), main.tensors, op.attributes, values)
    return operand_environment(*args, spec.level(level)), level_violations(*args, spec.level(level))


def test_shape_values_are_bound_for_length() -> None:
    env, violations = _env(shape_graph("SUB_SHAPE", [[4, 5, 6], [1, 2, 3]], 3), SPEC)
    assert env.shapes["input1"] == (4, 5, 6) and env.shapes["input2"] == (1, 2, 3)
    assert len(env.shapes["output"]) == 3  # not computed yet: only its length is known
    assert violations == []
    env, _ = _env(shape_graph("CONCAT_SHAPE", [[1, 2], [3]], 3), SPEC)
    assert len(env.shapes["input"]) == 2  # a list of shapes: one entry per shape
    assert len(env.shapes["output"]) == 3


def test_reshape_keeps_its_shape_binding() -> None:
    """RESHAPE's shape_t input is named like its output's shape ("shape"): the
    output's tensor shape stays what rank(shape) reads, in every revision (here a
    shape value of length 7 against an output of rank 1: rank(shape) is 1, no level
    limit fails)."""
    for spec in (DRAFT, load_revision("1.0"), SPEC):
        graph = single_operator_graph(
            "RESHAPE",
            [("x", (2, 3), "i8"), ("s", (7,), "shape")],
            [("y", (6,), "i8")],
            constants={"s": np.array([1] * 6 + [6], dtype=np.int64)},
            spec=spec,
            strict=False,
        )
        env, violations = _env(graph, spec)
        assert env.shapes["shape"] == (6,) and violations == []


# -- properties -------------------------------------------------------------------------

EXACT = {
    "ADD_SHAPE": lambda x, y: x + y,
    "SUB_SHAPE": lambda x, y: x - y,
    "MUL_SHAPE": lambda x, y: x * y,
    "MIN_SHAPE": min,
    "MAX_SHAPE": max,
}
VALUES = st.integers(BOTTOM, TOP) | st.sampled_from([BOTTOM, -1, 0, 1, TOP]) | st.integers(-64, 64)


@given(data=st.data())
def test_1_1_arithmetic_matches_integers_within_tensor_size_t(data: st.DataObject) -> None:
    op = data.draw(st.sampled_from(sorted(EXACT)), label="op")
    n = data.draw(st.integers(1, 16), label="length")
    a = data.draw(st.lists(VALUES, min_size=n, max_size=n), label="input1")
    b = data.draw(st.lists(VALUES, min_size=n, max_size=n), label="input2")
    want = [EXACT[op](x, y) for x, y in zip(a, b, strict=True)]
    outcome = run(op, a, b)
    if all(BOTTOM <= v <= TOP for v in want):
        assert out(outcome) == want
    else:
        assert outcome.kind == "unpredictable" and outcome.rule is not None, str(outcome)
        assert outcome.rule.kind == "REQUIRE", str(outcome)


@given(a=st.integers(0, TOP), b=st.integers(1, TOP))
def test_floor_ceil_and_mod_agree(a: int, b: int) -> None:
    floor, ceil, mod = (out(run(op, [a], [b]))[0] for op in DIVIDING)
    assert floor * b + mod == a and 0 <= mod < b
    assert ceil == floor + (mod != 0)


def test_the_draft_keeps_int64_shape_values() -> None:
    # size_t holds int64 in the draft: 2**40 at 8K is a value, 2**31 a result
    assert out(run("ADD_SHAPE", [1 << 40, TOP], [1, 1], spec=DRAFT)) == [(1 << 40) + 1, 1 << 31]
    clause = "c >= minimum_s<size_t>() && c <= maximum_s<size_t>() (apply_add_s)"
    assert_rule(run("ADD_SHAPE", [I64_MAX], [1], spec=DRAFT), "REQUIRE", clause)

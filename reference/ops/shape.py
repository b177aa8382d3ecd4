"""Shape operators of the 2024 draft (ADD_SHAPE, CONCAT_SHAPE, CONST_SHAPE, DIM,
DIV_SHAPE, MUL_SHAPE, SUB_SHAPE) and of TOSA 1.1's EXT-SHAPE (those but DIV_SHAPE, with
ASSERT_EQUAL_SHAPE, DIV_CEIL_SHAPE, DIV_FLOOR_SHAPE, EXP2_SHAPE, LOG2_CEIL_SHAPE,
LOG2_FLOOR_SHAPE, MAX_SHAPE, MIN_SHAPE, MOD_SHAPE and SLICE_SHAPE).

shape_t values are int64 vectors (conformance.dtypes.SHAPE).  The arithmetic is done
on Python integers, so that a result outside the element type's range is seen and
reported by the REQUIRE it fails instead of wrapping around; the vectors are at most
MAX_RANK (draft) or MAX_SHAPE_LEN (1.1) long, so this costs nothing.

The two revisions differ in the element type.  The draft's is size_t, held in int64.
TOSA 1.1's is tensor_size_t, which an implementation need only be able to hold in
[-(1 << MAX_LOG2_SIZE), (1 << MAX_LOG2_SIZE) - 1] (introduction, "Tensor Definitions"):
int32's range at level 8K, int64's at no level.  So under 1.1 an operand value outside
that range is beyond what the level guarantees (a LEVEL_CHECK, like the tensor size
limit of the same paragraph), and a result outside it fails its helper's REQUIRE
(apply_add_s, apply_sub_s), or, for apply_mul_s, whose int64 product is cast to
tensor_size_t unchecked, cannot be relied on either.  The 1.1 rules are keyed by
``draft_pseudocode(ctx.revision)``: the draft's pseudocode has none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from conformance import dtypes
from conformance.dtypes import IntRange
from conformance.spec import Level
from reference import arithmetic as ar
from reference.arguments import ATTRIBUTES_CLAUSE, OUTPUTS_CLAUSE
from reference.context import OpContext
from reference.ops.data_nodes import same_shape_or_unpredictable
from reference.pseudocode_revisions import draft_pseudocode
from reference.registry import implements

# ERROR_IF clauses as the pseudocode states them (recipes and breakers import them).
DIM_AXIS_CLAUSE = "axis >= rank(shape)"
LENGTH_CLAUSE = "length(input1) != length(input2)"
CONCAT_LENGTH_CLAUSE = "length(output) != sum(length(input1[k]) for all k)"
# TOSA 1.1: CONCAT_SHAPE's list is named ``input``, and may hold no empty shape.
CONCAT_LENGTH_CLAUSE_1_1 = "length(output) != sum(length(input[k]) for all k)"
CONCAT_NO_INPUT_CLAUSE = "input == []"
CONCAT_EMPTY_INPUT_CLAUSE = "input[i] == []"
DIM_NEGATIVE_AXIS_CLAUSE = "axis < 0"
DIM_BLOCK_RANK_CLAUSE = "is_block_scale<in_t>() && rank(shape) == 0"
DIM_BLOCK_SIZE_CLAUSE = (
    "is_block_scale<in_t>() && shape[rank(shape) - 1] % get_innermost_block_size<in_t>() != 0"
)
SLICE_SIZE_CLAUSE = "size_value <= 0"
SLICE_START_CLAUSE = "start_value < 0"
SLICE_END_CLAUSE = "start_value + size_value > length(input)"
ASSERT_EQUAL_CLAUSE = "input1[index] != input2[index]"
# ASSERT_EQUAL_SHAPE.tosac writes the second operand of the last test as input[index];
# the operator has no argument named input, and input1[index] is what it compares.
ASSERT_BROADCAST_CLAUSE = "input2[index] != 1 && input2[index] != input1[index]"
# REQUIREs of TOSA 1.1's shape operators.
DIM_SIZE_CLAUSE = "shape[axis] > 0"
DIVIDEND_CLAUSE = "input1[index] >= 0"
DIVISOR_CLAUSE = "input2[index] >= 1"
EXP2_NEGATIVE_CLAUSE = "input[index] >= 0"
EXP2_LIMIT_CLAUSE = "input[index] < MAX_LOG2_SIZE"
LOG2_CLAUSE = "in >= 1"
# The LEVEL_CHECK an operand value outside tensor_size_t's range at the level fails.
TENSOR_SIZE_CLAUSE = (
    "-(1 << MAX_LOG2_SIZE) <= value <= (1 << MAX_LOG2_SIZE) - 1 (shape_t elements are "
    "tensor_size_t)"
)

Result = dict[str, np.ndarray | list[np.ndarray]]
Check = tuple[str, np.ndarray]  # a per-index REQUIRE: its clause, where it holds


def tensor_size_range(level: Level) -> IntRange:
    """The values TOSA 1.1's tensor_size_t must hold at ``level``: minimum_s and
    maximum_s of the type as far as a graph may rely on them."""
    log2 = level["MAX_LOG2_SIZE"]
    return IntRange(-(1 << log2), (1 << log2) - 1)


def _vector(values: object) -> np.ndarray:
    return np.asarray(values, dtype=np.int64).reshape(-1)


def _exact(values: np.ndarray) -> np.ndarray:
    """The same numbers as unbounded Python integers."""
    return np.array(values.tolist(), dtype=object).reshape(values.shape)


def _fits(values: np.ndarray, bounds: IntRange = dtypes.SHAPE.int_range) -> np.ndarray:
    return np.array((values >= bounds.min) & (values <= bounds.max), dtype=bool).reshape(
        values.shape
    )


def _first_require(ctx: OpContext, checks: list[Check], what: str) -> None:
    """REQUIREs stated per element: the first to fail at the first failing index."""
    table = np.array([c for _, c in checks], dtype=bool)  # True where the REQUIRE holds
    failing = ~table
    if failing.any():
        index = int(np.argmax(failing.any(axis=0)))
        rule = int(np.argmax(failing[:, index]))
        ctx.require(False, checks[rule][0], f"{what} at index {index}")


def _operands(ctx: OpContext) -> tuple[np.ndarray, np.ndarray]:
    a = _vector(ctx.arg("input1"))
    b = _vector(ctx.arg("input2"))
    ctx.error_if(
        len(a) != len(b),
        LENGTH_CLAUSE,
        f"input1 {a.tolist()}, input2 {b.tolist()}",
    )
    # The pseudocode writes output[index] for each index of input1.
    same_shape_or_unpredictable(ctx, ctx.out_shape(), (len(a),), "length(output) == length(input1)")
    return a, b


def _range_clause(helper: str, element: str = "size_t") -> str:
    return f"{ar.range_clause(element)} ({helper})"


def _shape_t(values: Sequence[int]) -> np.ndarray:
    return np.array([int(v) for v in values], dtype=np.int64)


# -- TOSA 1.1 -------------------------------------------------------------------------


def _tensor_sizes(ctx: OpContext, name: str, values: np.ndarray) -> np.ndarray:
    """A shape_t operand of 1.1 as Python integers, after its LEVEL_CHECK: every value
    is one tensor_size_t holds at the level."""
    exact = _exact(values)
    ok = _fits(exact, tensor_size_range(ctx.level))
    if not ok.all():
        index = int(np.argmax(~ok))
        ctx.level_check(False, TENSOR_SIZE_CLAUSE, f"{name}[{index}] = {exact[index]}")
    return exact


def _binary_1_1(
    ctx: OpContext,
    fn: Callable[[np.ndarray, np.ndarray], np.ndarray],
    checks: Callable[[np.ndarray, np.ndarray, np.ndarray], list[Check]],
) -> Result:
    """A 1.1 element-wise shape operator: ``fn`` on the exact operands, then the
    REQUIREs ``checks(a, b, c)`` states per index, in the pseudocode's order."""
    a = _tensor_sizes(ctx, "input1", _vector(ctx.arg("input1")))
    b = _tensor_sizes(ctx, "input2", _vector(ctx.arg("input2")))
    _operands(ctx)  # ERROR_IF(length(input1) != length(input2)), the output's length
    c = fn(a, b)
    _first_require(ctx, checks(a, b, c), f"{a.tolist()}, {b.tolist()}")
    return {"output": _shape_t(c.tolist())}


def _elementwise(
    helper: str, fn: Callable[[np.ndarray, np.ndarray], np.ndarray]
) -> Callable[[OpContext], Result]:
    def run(ctx: OpContext) -> Result:
        if not draft_pseudocode(ctx.revision):
            bounds = tensor_size_range(ctx.level)
            clause = _range_clause(helper, "tensor_size_t")
            return _binary_1_1(ctx, fn, lambda a, b, c: [(clause, _fits(c, bounds))])
        a, b = _operands(ctx)
        c = fn(_exact(a), _exact(b))
        _first_require(ctx, [(_range_clause(helper), _fits(c))], f"{a.tolist()}, {b.tolist()}")
        return {"output": np.array(c.tolist(), dtype=np.int64).reshape(a.shape)}

    return run


implements("ADD_SHAPE")(_elementwise("apply_add_s", lambda a, b: a + b))
implements("SUB_SHAPE")(_elementwise("apply_sub_s", lambda a, b: a - b))


@implements("MUL_SHAPE")
def mul_shape(ctx: OpContext) -> Result:
    if not draft_pseudocode(ctx.revision):
        # apply_mul_s<tensor_size_t> casts the int64_t product to tensor_size_t
        # unchecked: a product outside its range (or outside int64_t's, undefined) is
        # no value every implementation gives.
        bounds = tensor_size_range(ctx.level)
        clause = _range_clause("apply_mul_s", "tensor_size_t")
        return _binary_1_1(ctx, lambda a, b: a * b, lambda a, b, c: [(clause, _fits(c, bounds))])
    a, b = _operands(ctx)
    c = _exact(a) * _exact(b)
    # apply_mul_s has no REQUIRE, but it forms the product in int64_t, where overflow
    # is undefined: the result cannot be relied on.
    _first_require(
        ctx,
        [("int64_t c = a * b does not overflow (apply_mul_s)", _fits(c))],
        f"{a.tolist()} * {b.tolist()}",
    )
    return {"output": np.array(c.tolist(), dtype=np.int64).reshape(a.shape)}


def _sizes_and_divisors(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> list[Check]:
    # REQUIRE(input1[index] >= 0); REQUIRE(input2[index] >= 1), in this order.
    return [(DIVIDEND_CLAUSE, _bools(a >= 0)), (DIVISOR_CLAUSE, _bools(b >= 1))]


def _bools(values: np.ndarray) -> np.ndarray:
    return np.array(values, dtype=bool).reshape(-1)


def _divided(a: np.ndarray, b: np.ndarray, ceil: bool = False) -> np.ndarray:
    """a / b for a >= 0, b >= 1 (elsewhere 0: a REQUIRE has failed), rounded down or up."""
    ok = (a >= 0) & (b >= 1)
    out = [
        (x // y + (1 if ceil and x % y else 0)) if good else 0
        for x, y, good in zip(a.tolist(), b.tolist(), ok.tolist(), strict=True)
    ]
    return np.array(out, dtype=object)


@implements("DIV_FLOOR_SHAPE")
def div_floor_shape(ctx: OpContext) -> Result:
    return _binary_1_1(ctx, _divided, _sizes_and_divisors)


@implements("DIV_CEIL_SHAPE")
def div_ceil_shape(ctx: OpContext) -> Result:
    # apply_intdiv_s, then one more where the division leaves a remainder.
    return _binary_1_1(ctx, lambda a, b: _divided(a, b, ceil=True), _sizes_and_divisors)


@implements("MOD_SHAPE")
def mod_shape(ctx: OpContext) -> Result:
    def mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        ok = (a >= 0) & (b >= 1)
        return np.array([x % y if g else 0 for x, y, g in zip(a, b, ok, strict=True)], object)

    return _binary_1_1(ctx, mod, _sizes_and_divisors)


def _no_requires(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> list[Check]:
    return []  # apply_min_s / apply_max_s return an operand: a tensor_size_t


@implements("MIN_SHAPE")
def min_shape(ctx: OpContext) -> Result:
    return _binary_1_1(ctx, np.minimum, _no_requires)


@implements("MAX_SHAPE")
def max_shape(ctx: OpContext) -> Result:
    return _binary_1_1(ctx, np.maximum, _no_requires)


def _unary_1_1(
    ctx: OpContext,
    checks: Callable[[np.ndarray], list[Check]],
    fn: Callable[[int], int],
) -> Result:
    """A 1.1 shape operator of one operand: its per-index REQUIREs, then ``fn`` of
    each element."""
    x = _tensor_sizes(ctx, "input", _vector(ctx.arg("input")))
    # The pseudocode writes output[index] for each index of input.
    same_shape_or_unpredictable(ctx, ctx.out_shape(), (len(x),), "length(output) == length(input)")
    _first_require(ctx, checks(x), f"{x.tolist()}")
    return {"output": _shape_t([fn(v) for v in x.tolist()])}


@implements("EXP2_SHAPE")
def exp2_shape(ctx: OpContext) -> Result:
    limit = ctx.level["MAX_LOG2_SIZE"]

    def checks(x: np.ndarray) -> list[Check]:
        return [(EXP2_NEGATIVE_CLAUSE, _bools(x >= 0)), (EXP2_LIMIT_CLAUSE, _bools(x < limit))]

    return _unary_1_1(ctx, checks, lambda v: 1 << v)


def _log2_floor(v: int) -> int:
    # The loop shifts in right until it is zero, counting all but the last shift.
    return v.bit_length() - 1


@implements("LOG2_FLOOR_SHAPE")
def log2_floor_shape(ctx: OpContext) -> Result:
    return _unary_1_1(ctx, lambda x: [(LOG2_CLAUSE, _bools(x >= 1))], _log2_floor)


@implements("LOG2_CEIL_SHAPE")
def log2_ceil_shape(ctx: OpContext) -> Result:
    def ceil(v: int) -> int:
        floor = _log2_floor(v)
        return floor if v == 1 << floor else floor + 1

    return _unary_1_1(ctx, lambda x: [(LOG2_CLAUSE, _bools(x >= 1))], ceil)


@implements("DIV_SHAPE")
def div_shape(ctx: OpContext) -> Result:
    a, b = _operands(ctx)
    x, y = _exact(a), _exact(b)
    nonzero = b != 0
    # C division truncates toward zero (the shape chapter says so too), unlike
    # Python's floor division: divide magnitudes, then restore the sign.
    safe_y = np.where(nonzero, y, 1)
    quotient = np.abs(x) // np.abs(safe_y)
    negative = (a < 0) != (b < 0)
    c = np.where(negative, -quotient, quotient)
    # Division by zero is undefined in the int64_t division apply_intdiv_s does; the
    # pseudocode states no check, so it is unpredictable like INTDIV's REQUIRE.
    _first_require(
        ctx,
        [
            ("input2[index] != 0 (apply_intdiv_s divides by it)", nonzero),
            (_range_clause("apply_intdiv_s"), _fits(c) | ~nonzero),
        ],
        f"{a.tolist()} / {b.tolist()}",
    )
    return {"output": np.array(c.tolist(), dtype=np.int64).reshape(a.shape)}


@implements("CONCAT_SHAPE")
def concat_shape(ctx: OpContext) -> Result:
    name = ctx.op_spec.inputs[0].name  # the list: input1 in the draft, input in 1.1
    parts = [_vector(v) for v in ctx.arg_list(name)]
    total = sum(len(p) for p in parts)
    out_shape = ctx.out_shape()
    length = int(np.prod(out_shape, dtype=np.int64))
    if draft_pseudocode(ctx.revision):
        ctx.error_if(
            length != total,
            CONCAT_LENGTH_CLAUSE,
            f"output length {length}, inputs {[p.tolist() for p in parts]}",
        )
    else:
        for k, p in enumerate(parts):
            _tensor_sizes(ctx, f"{name}[{k}]", p)
        ctx.error_if(not parts, CONCAT_NO_INPUT_CLAUSE, "the list holds no shape")
        ctx.error_if(
            length != total,
            CONCAT_LENGTH_CLAUSE_1_1,
            f"output length {length}, inputs {[p.tolist() for p in parts]}",
        )
        empty = [k for k, p in enumerate(parts) if len(p) == 0]
        ctx.error_if(bool(empty), CONCAT_EMPTY_INPUT_CLAUSE, f"input[{empty[:1]}] is empty")
    out = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    return {"output": out.reshape(out_shape)}


@implements("SLICE_SHAPE")
def slice_shape(ctx: OpContext) -> Result:
    x = _tensor_sizes(ctx, "input", _vector(ctx.arg("input")))
    size = int(_vector(ctx.arg("size"))[0])  # tensor_read<i32_t>(size, [1], [0])
    start = int(_vector(ctx.arg("start"))[0])
    ctx.error_if(size <= 0, SLICE_SIZE_CLAUSE, f"size {size}")
    ctx.error_if(start < 0, SLICE_START_CLAUSE, f"start {start}")
    # Exact: the int32_t sum of two int32_t values cannot wrap for any start, size
    # that pass the two checks above and stay within a shape's length.
    ctx.error_if(
        start + size > len(x),
        SLICE_END_CLAUSE,
        f"start {start} + size {size} > length {len(x)}",
    )
    # The pseudocode writes output[index] for index < size_value.
    same_shape_or_unpredictable(ctx, ctx.out_shape(), (size,), "length(output) == size_value")
    return {"output": _shape_t(x[start : start + size].tolist())}


@implements("ASSERT_EQUAL_SHAPE")
def assert_equal_shape(ctx: OpContext) -> Result:
    a = _tensor_sizes(ctx, "input1", _vector(ctx.arg("input1")))
    b = _tensor_sizes(ctx, "input2", _vector(ctx.arg("input2")))
    ctx.error_if(len(a) != len(b), LENGTH_CLAUSE, f"input1 {a.tolist()}, input2 {b.tolist()}")
    if bool(ctx.attr("allow_broadcast")):
        # Where input1[index] is 1 anything goes; elsewhere input2 is 1 or the same.
        bad, clause = (a != 1) & (b != 1) & (b != a), ASSERT_BROADCAST_CLAUSE
    else:
        bad, clause = a != b, ASSERT_EQUAL_CLAUSE
    bad = _bools(bad)
    if bad.any():
        index = int(np.argmax(bad))
        ctx.error_if(True, clause, f"at index {index}: {a[index]}, {b[index]}")
    return {}  # an assertion has no output


@implements("CONST_SHAPE")
def const_shape(ctx: OpContext) -> Result:
    values = _vector(ctx.attr("values"))
    same_shape_or_unpredictable(
        ctx, ctx.out_shape(), (len(values),), "length(output) == length(values)"
    )
    return {"output": values}


@implements("DIM")
def dim(ctx: OpContext) -> Result:
    shape = ctx.input_tensor("input1").shape
    axis = int(ctx.attr("axis"))
    if draft_pseudocode(ctx.revision):
        # The pseudocode only bounds axis above; the attribute is declared "in range
        # from 0 to rank(shape) - 1", so a negative axis is an attribute that does not
        # meet it.
        ctx.error_if(axis < 0, ATTRIBUTES_CLAUSE, f"axis {axis} < 0")
        ctx.error_if(axis >= len(shape), DIM_AXIS_CLAUSE, f"axis {axis}, rank {len(shape)}")
    else:
        ctx.error_if(axis >= len(shape), DIM_AXIS_CLAUSE, f"axis {axis}, rank {len(shape)}")
        ctx.error_if(axis < 0, DIM_NEGATIVE_AXIS_CLAUSE, f"axis {axis}")
        ctx.require(shape[axis] > 0, DIM_SIZE_CLAUSE, f"shape {list(shape)}, axis {axis}")
        in_t = ctx.dtype("in_t")
        if in_t.kind == "block":  # the block-scaled modes (family MX)
            ctx.error_if(not shape, DIM_BLOCK_RANK_CLAUSE, "rank 0")
            ctx.error_if(
                shape[-1] % in_t.block_size != 0,
                DIM_BLOCK_SIZE_CLAUSE,
                f"shape {list(shape)}, block size {in_t.block_size}",
            )
    ctx.error_if(
        ctx.out_shape() != (1,),
        OUTPUTS_CLAUSE,
        f"output is declared a shape of size 1, got shape {list(ctx.out_shape())}",
    )
    return {"output": np.array([shape[axis]], dtype=np.int64)}

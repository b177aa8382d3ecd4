"""Shape operators: ADD_SHAPE, CONCAT_SHAPE, CONST_SHAPE, DIM, DIV_SHAPE, MUL_SHAPE,
SUB_SHAPE.

shape_t values are int64 vectors (conformance.dtypes.SHAPE).  The arithmetic is done
on Python integers held in object arrays, so that a result outside size_t's range
is seen and reported by the REQUIRE it fails instead of wrapping around; the vectors
are at most MAX_RANK long, so this costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from conformance import dtypes
from reference.arguments import ATTRIBUTES_CLAUSE, OUTPUTS_CLAUSE
from reference.context import OpContext
from reference.ops.data_nodes import same_shape_or_unpredictable
from reference.registry import implements

# ERROR_IF clauses as the pseudocode states them (recipes and breakers import them).
DIM_AXIS_CLAUSE = "axis >= rank(shape)"
LENGTH_CLAUSE = "length(input1) != length(input2)"
CONCAT_LENGTH_CLAUSE = "length(output) != sum(length(input1[k]) for all k)"

Result = dict[str, np.ndarray | list[np.ndarray]]


def _vector(values: object) -> np.ndarray:
    return np.asarray(values, dtype=np.int64).reshape(-1)


def _exact(values: np.ndarray) -> np.ndarray:
    """The same numbers as unbounded Python integers."""
    return np.array(values.tolist(), dtype=object).reshape(values.shape)


def _fits(values: np.ndarray) -> np.ndarray:
    return np.array(
        (values >= dtypes.SHAPE.min) & (values <= dtypes.SHAPE.max), dtype=bool
    ).reshape(values.shape)


def _first_require(ctx: OpContext, checks: list[tuple[str, np.ndarray]], what: str) -> None:
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


def _range_clause(helper: str) -> str:
    return f"c >= minimum_s<size_t>() && c <= maximum_s<size_t>() ({helper})"


def _elementwise(
    helper: str, fn: Callable[[np.ndarray, np.ndarray], np.ndarray]
) -> Callable[[OpContext], Result]:
    def run(ctx: OpContext) -> Result:
        a, b = _operands(ctx)
        c = fn(_exact(a), _exact(b))
        _first_require(ctx, [(_range_clause(helper), _fits(c))], f"{a.tolist()}, {b.tolist()}")
        return {"output": np.array(c.tolist(), dtype=np.int64).reshape(a.shape)}

    return run


implements("ADD_SHAPE")(_elementwise("apply_add_s", lambda a, b: a + b))
implements("SUB_SHAPE")(_elementwise("apply_sub_s", lambda a, b: a - b))


@implements("MUL_SHAPE")
def mul_shape(ctx: OpContext) -> Result:
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
    parts = [_vector(v) for v in ctx.arg_list("input1")]
    total = sum(len(p) for p in parts)
    out_shape = ctx.out_shape()
    length = int(np.prod(out_shape, dtype=np.int64))
    ctx.error_if(
        length != total,
        CONCAT_LENGTH_CLAUSE,
        f"output length {length}, inputs {[p.tolist() for p in parts]}",
    )
    out = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    return {"output": out.reshape(out_shape)}


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
    # The pseudocode only bounds axis above; the attribute is declared "in range from
    # 0 to rank(shape) - 1", so a negative axis is an attribute that does not meet it.
    ctx.error_if(axis < 0, ATTRIBUTES_CLAUSE, f"axis {axis} < 0")
    ctx.error_if(axis >= len(shape), DIM_AXIS_CLAUSE, f"axis {axis}, rank {len(shape)}")
    ctx.error_if(
        ctx.out_shape() != (1,),
        OUTPUTS_CLAUSE,
        f"output is declared a shape of size 1, got shape {list(ctx.out_shape())}",
    )
    return {"output": np.array([shape[axis]], dtype=np.int64)}

"""Data nodes (CONST, IDENTITY) and the per-operator argument checks of
``tosa_execute_graph`` that the other data-movement operators share.

The engine checks attribute kinds and element types before an operator runs, but
not that the operands' shapes fit the shape expressions tosa.xml declares (``[N,K,C]``
against ``[N,W]``, a named shape used by two arguments, a rank minimum).  Without
that check the numpy code below would fail or compute something of the wrong shape,
so :func:`check_arguments` does it here; it belongs in the engine and can move there
unchanged.
"""

from __future__ import annotations

import numpy as np

from conformance.expressions import Environment, Num
from conformance.spec import Argument
from reference.context import OpContext
from reference.registry import implements

# The ERROR_IFs tosa_execute_graph states for every operator (operators.adoc), by
# argument category; they name the rule when an operand does not fit its declaration.
INPUTS_CLAUSE = "operator input tensors do not meet requirement of operator Arguments inputs"
ATTRIBUTES_CLAUSE = "operator attributes do not meet requirement of operator Arguments attributes"
OUTPUTS_CLAUSE = "operator output tensors do not meet requirement of operator Arguments outputs"
TYPES_CLAUSE = "operator data types do not meet requirement of operator Supported Data Types"

_CLAUSE_BY_CATEGORY = {
    "input": INPUTS_CLAUSE,
    "attribute": ATTRIBUTES_CLAUSE,
    "output": OUTPUTS_CLAUSE,
}


def _operand_shape(ctx: OpContext, arg: Argument) -> tuple[int, ...] | None:
    """The shape an argument has in this operator, or None when there is nothing to
    check (list and shape_t arguments: their lengths are checked by the pseudocode or
    by the operator; absent optional attributes; non-tensor attributes)."""
    if arg.is_list or arg.type not in ("tensor_t",):
        return None
    if arg.category == "attribute":
        value = ctx.attr(arg.name)
        return None if value is None else tuple(np.shape(value))
    if arg.category == "input":
        return ctx.input_tensor(arg.name).shape
    return ctx.output_tensor(arg.name).shape


def check_arguments(ctx: OpContext) -> None:
    """ERROR_IF an operand does not fit its declared shape expression or rank minimum.

    Inputs, then attributes, then outputs, as tosa_execute_graph lists them; one
    environment is shared so that a dimension name (``N``) or shape name (``shape``)
    used by two arguments must agree, and the argument that disagrees is blamed.
    """
    env = Environment()
    for category in ("input", "attribute", "output"):
        for arg in ctx.op_spec.arguments:
            if arg.category != category:
                continue
            shape = _operand_shape(ctx, arg)
            if shape is None:
                continue
            clause = _CLAUSE_BY_CATEGORY[category]
            # Only literal rank bounds are checked: a MAX_RANK bound is a level limit,
            # which the engine checks as a LEVEL_CHECK.
            rank = len(shape)
            if isinstance(arg.rank_min, Num):
                ctx.error_if(
                    rank < arg.rank_min.value,
                    clause,
                    f"{arg.name} has rank {rank}, minimum {arg.rank_min.value}",
                )
            if isinstance(arg.rank_max, Num):
                ctx.error_if(
                    rank > arg.rank_max.value,
                    clause,
                    f"{arg.name} has rank {rank}, maximum {arg.rank_max.value}",
                )
            problems = arg.shape.bind(shape, env)
            ctx.error_if(bool(problems), clause, f"{arg.name}: {'; '.join(problems)}")


def same_shape_or_unpredictable(
    ctx: OpContext, got: tuple[int, ...], want: tuple[int, ...], what: str
) -> None:
    """The pseudocode writes ``want`` elements but the graph declares ``got``.

    Used where the pseudocode silently assumes the output shape: it loops over the
    declared shape and reads the input at the mapped index, so a larger declared
    dimension fails tensor_read's bound REQUIRE and a smaller one leaves a partial
    result no implementation computes (shape operators: elements left unwritten).
    Neither is an ERROR_IF the spec states, so the result is unpredictable rather than
    an error that implementations would have to report.
    """
    ctx.require(
        tuple(got) == tuple(want),
        f"{what} (assumed by the pseudocode)",
        f"output shape {list(got)}, the operator produces {list(want)}",
    )


def to_type(ctx: OpContext, values: np.ndarray, var: str, what: str) -> np.ndarray:
    """``values`` held in the storage of type variable ``var``.

    Integers outside the type's range are an attribute that does not meet its
    declaration; floats round to nearest even (through fp64, so that an integer
    attribute is not rounded twice); booleans take any non-zero value as true.
    """
    dt = ctx.dtype(var)
    arr = np.asarray(values)
    if dt.is_int:
        with np.errstate(invalid="ignore"):  # NaN/inf: caught by the comparison below
            wide = arr.astype(np.int64)
        ctx.error_if(
            not np.array_equal(wide, arr) or not np.all(dt.in_range(wide)),
            ATTRIBUTES_CLAUSE,
            f"{what} holds values outside {dt} ({dt.min}..{dt.max})",
        )
        return wide.astype(dt.storage)
    if dt.is_float:
        if arr.dtype == dt.storage:
            return arr.copy()  # keep NaN payloads and -0.0 bit for bit
        return arr.astype(np.float64).astype(dt.storage)
    return arr.astype(dt.storage)


@implements("CONST")
def const(ctx: OpContext) -> dict[str, np.ndarray | list[np.ndarray]]:
    check_arguments(ctx)
    return {"output": to_type(ctx, ctx.attr("values"), "out_t", "values")}


@implements("IDENTITY")
def identity(ctx: OpContext) -> dict[str, np.ndarray | list[np.ndarray]]:
    check_arguments(ctx)
    return {"output": ctx.arg("input1").copy()}

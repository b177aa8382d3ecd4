"""The argument checks ``tosa_execute_graph`` makes for every operator.

Before an operator's own pseudocode runs, its operands must fit the shapes and fixed
ranks tosa.xml declares for its arguments (``[N,K,C]`` against ``[N,W]``, a shape
name used by two arguments, a rank minimum); the engine calls :func:`check_arguments`
for every operator, and the rules name the spec's clauses.
"""

from __future__ import annotations

import numpy as np

from conformance.expressions import Environment, Num
from conformance.spec import Argument
from reference.context import OpContext

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

"""SELECT, and SIN (which tosa.xml files in the elementwise-ternary group)."""

from __future__ import annotations

import numpy as np

from reference import arithmetic as ar
from reference.broadcast import apply_broadcast, check_broadcast, check_same_shape
from reference.context import OpContext
from reference.ops.elementwise_unary import first_input
from reference.registry import implements

Result = dict[str, np.ndarray | list[np.ndarray]]

# ERROR_IF clauses as the pseudocode states them (recipes and breakers import them).
SELECT_BROADCAST_CLAUSE = "shape != broadcast_shape(broadcast_shape(shape1, shape2), shape3)"


@implements("SELECT")
def select(ctx: OpContext) -> Result:
    shape = check_broadcast(ctx, SELECT_BROADCAST_CLAUSE, "input1", "input2", "input3")
    cond = apply_broadcast(ctx.arg("input1"), shape).astype(np.bool_)
    a, b = ctx.arg("input2"), ctx.arg("input3")
    if ctx.dtype("in_out_t").is_float:
        # The chosen value is passed through unchanged; float64 holds it exactly.
        a, b = ar.as_float(a), ar.as_float(b)
    return {"output": np.where(cond, apply_broadcast(a, shape), apply_broadcast(b, shape))}


@implements("SIN")
def sin(ctx: OpContext) -> Result:
    name = first_input(ctx)  # "input" in the draft, "input1" from TOSA 1.0
    check_same_shape(ctx, name)
    with np.errstate(all="ignore"):  # sin(+-inf) is NaN
        return {"output": np.sin(ar.as_float(ctx.arg(name)))}

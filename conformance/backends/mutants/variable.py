"""Mutants of the variable operators (reference/ops/variable.py): VARIABLE,
VARIABLE_WRITE, VARIABLE_READ."""

from __future__ import annotations

import numpy as np

from conformance.backends.mutants import Result, mutant, with_attrs
from reference.context import OpContext
from reference.ops.variable import variable_address, variables
from reference.registry import OpFunction


@mutant(
    "variable-initial-value-ignored",
    ["VARIABLE"],
    "initial_value with non-zero values",
    "the variable's buffer is allocated zero-filled and initial_value is never copied "
    "into it (it still counts as written): a read before any write gives zeros",
    "variable graphs that read a variable with a non-zero initial_value before writing it",
    breaks="VARIABLE.tosac: tensor_write<in_t>(var_tensor.data, var_shape, index, value) "
    "for each index of initial_value",
)
def _initial_ignored(original: OpFunction, ctx: OpContext) -> Result:
    initial = ctx.attr("initial_value")
    if initial is None:
        return original(ctx)
    values = np.asarray(initial)
    return original(with_attrs(ctx, initial_value=np.zeros_like(values)))


_INITIAL = "mutant:variable-read-folded-to-initial"


@mutant(
    "variable-read-folded-to-initial",
    ["VARIABLE", "VARIABLE_READ"],
    "a VARIABLE_WRITE before a VARIABLE_READ of a variable with an initial_value",
    "the compiler treats a variable with an initial_value as a constant and folds every "
    "VARIABLE_READ of it to that value, ignoring VARIABLE_WRITEs",
    "variable graphs that write a variable declared with an initial_value and read it back",
    breaks="VARIABLE_READ.tosac: the output is the variable tensor's data as last written",
)
def _read_folded(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # REQUIREs of both operators
    saved: dict[int | str, np.ndarray] = ctx.state.setdefault(_INITIAL, {})
    uid = variable_address(ctx)
    if ctx.name == "VARIABLE":
        initial = ctx.attr("initial_value")
        if initial is not None and uid not in saved:
            saved[uid] = np.asarray(initial)
        return result
    if uid not in saved:
        return result
    out = np.asarray(result["output1"])
    return {"output1": saved[uid].astype(out.dtype).reshape(out.shape)}


_LOOPS = "mutant:variable-read-hoisted-out-of-loop"


@mutant(
    "variable-read-hoisted-out-of-loop",
    ["WHILE_LOOP", "VARIABLE_READ"],
    "a VARIABLE_READ inside a WHILE_LOOP of a variable the loop writes",
    "loop-invariant code motion hoists VARIABLE_READ out of the loop (its alias analysis "
    "misses the VARIABLE_WRITE in the body): every read inside the loop sees the value "
    "the variable had when the loop started",
    "WHILE_LOOP graphs whose body reads a variable, changes it and writes it back (a "
    "running total kept in a variable over 2 or more iterations)",
    breaks="VARIABLE_READ.tosac: output1 is the variable tensor's data at the read, as the "
    "last VARIABLE_WRITE left it (also one in an earlier iteration)",
)
def _read_hoisted(original: OpFunction, ctx: OpContext) -> Result:
    stack: list[dict[int | str, np.ndarray]] = ctx.state.setdefault(_LOOPS, [])
    if ctx.name == "WHILE_LOOP":
        entry = {uid: v.data.copy() for uid, v in variables(ctx).items() if v.is_written}
        stack.append(entry)
        try:
            return original(ctx)
        finally:
            stack.pop()
    result = original(ctx)  # its REQUIREs
    uid = variable_address(ctx)
    if not stack or uid not in stack[-1]:
        return result  # outside a loop, or no value before it: nothing to hoist
    return {"output1": stack[-1][uid].copy()}

"""Mutants of the element-wise ternary operators (reference/ops/elementwise_ternary.py)."""

from __future__ import annotations

from conformance.backends.mutants import (
    Result,
    mutant,
)
from reference import arithmetic as ar
from reference.context import OpContext
from reference.registry import OpFunction


@mutant(
    "select-rank0-condition-false",
    ["SELECT"],
    "rank 0",
    "a rank-0 condition is read as an empty tensor (its element count computed from no "
    "dimensions as 0): every result is input3",
    "SELECT rank-0 vectors whose condition is true",
    breaks="SELECT.tosac with shape [] (rank 0 is a tensor of one element): "
    "value = condition ? value2 : value3",
)
def _select_rank0(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if ctx.out_shape() != ():
        return result
    other = ctx.arg("input3")
    return {"output": ar.as_float(other) if ctx.dtype("in_out_t").is_float else other}

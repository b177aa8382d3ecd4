"""Mutants of the comparison operators (reference/ops/comparison.py)."""

from __future__ import annotations

import numpy as np

from conformance.backends.mutants import (
    Result,
    mutant,
)
from conformance.backends.mutants.tools import broadcast_pair as _pair
from conformance.backends.mutants.tools import output_of as _out
from reference import arithmetic as ar
from reference.context import OpContext
from reference.registry import OpFunction


@mutant(
    "greater-equal-nan-true",
    ["GREATER_EQUAL"],
    "floating point",
    "GREATER_EQUAL computed as !(a < b), which is true when either operand is NaN",
    "GREATER_EQUAL float vectors with NaN operands",
)
def _greater_equal_nan(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if not ctx.dtype("in_t").is_float:
        return result
    a, b = _pair(ctx, ar.as_float)
    return {"output": _out(result) | np.isnan(a) | np.isnan(b)}

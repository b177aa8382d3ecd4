"""Mutants of the activation operators (reference/ops/activation.py): CLAMP."""

from __future__ import annotations

import numpy as np

from conformance.backends.mutants import (
    Result,
    mutant,
)
from conformance.backends.mutants.tools import attr_in_type as _attr_in_type
from conformance.backends.mutants.tools import output_of as _out
from reference import arithmetic as ar
from reference.context import OpContext
from reference.registry import OpFunction


@mutant(
    "clamp-nan-to-min",
    ["CLAMP"],
    "floating point",
    "CLAMP built from fmax/fmin: a NaN input gives min_val instead of NaN",
    "CLAMP float vectors with NaN inputs",
)
def _clamp_nan_to_min(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    dt = ctx.dtype("in_out_t")
    if not dt.is_float:
        return result
    lo = _attr_in_type(ctx, "min_val", dt)
    x = ctx.arg("input").astype(np.float64)
    return {"output": np.where(np.isnan(x), lo, _out(result))}


@mutant(
    "clamp-accepts-inverted-bounds",
    ["CLAMP"],
    "max_val < min_val",
    "missing ERROR_IF(max_val < min_val): the graph runs and every element becomes max_val",
    "CLAMP error vectors breaking 'max_val < min_val'",
    effect="accepts invalid graph",
)
def _clamp_accepts_inverted(original: OpFunction, ctx: OpContext) -> Result:
    dt = ctx.dtype("in_out_t")
    lo, hi = _attr_in_type(ctx, "min_val", dt), _attr_in_type(ctx, "max_val", dt)
    if not hi < lo:
        return original(ctx)
    x = ctx.arg("input")
    value = ar.as_float(x) if dt.is_float else ar.as_int(x)
    return {"output": np.minimum(np.maximum(value, lo), hi)}

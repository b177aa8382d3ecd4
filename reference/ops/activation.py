"""Activation functions: CLAMP, ERF, SIGMOID, TANH."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from conformance.rounding import round_to_float64
from reference import arithmetic as ar
from reference.broadcast import check_same_shape
from reference.context import OpContext
from reference.ops.elementwise_binary import declares_nan_mode, max_nan, min_nan, nan_mode
from reference.pseudocode_revisions import draft_pseudocode, pseudocode_1_1
from reference.registry import implements

# ERROR_IF clauses as the pseudocode states them (recipes and breakers import them).
CLAMP_BOUNDS_CLAUSE = "max_val < min_val"
# TOSA 1.0 on: a NaN bound is an error before any element is read (the draft leaves
# it to apply_clip_s's REQUIRE).
CLAMP_NAN_BOUND_CLAUSE = "isNaN(min_val) || isNaN(max_val)"
CLAMP_NAN_BOUND_CLAUSE_1_1 = "is_a_NaN(min_val) || is_a_NaN(max_val)"  # 1.1's spelling


def clamp_nan_bound_clause(revision: str) -> str:
    """CLAMP's NaN-bound ERROR_IF as the revision spells it (is_a_NaN from 1.1)."""
    return CLAMP_NAN_BOUND_CLAUSE_1_1 if pseudocode_1_1(revision) else CLAMP_NAN_BOUND_CLAUSE


Result = dict[str, np.ndarray | list[np.ndarray]]


def _attr_value(ctx: OpContext, name: str) -> np.ndarray:
    """An in_out_t attribute as the operator sees it: floats rounded to the tensor type
    (the value a serialized graph would hold), integers exact."""
    dt = ctx.dtype("in_out_t")
    raw = np.asarray(ctx.attr(name))
    if dt.is_float:
        return round_to_float64(dt, raw)
    return raw.astype(np.int64)


@implements("CLAMP")
def clamp(ctx: OpContext) -> Result:
    dt = ctx.dtype("in_out_t")
    lo, hi = _attr_value(ctx, "min_val"), _attr_value(ctx, "max_val")
    check_same_shape(ctx, "input")
    ctx.error_if(hi < lo, CLAMP_BOUNDS_CLAUSE, f"min_val={lo}, max_val={hi}")
    if dt.is_float and not draft_pseudocode(ctx.revision):
        nan_bound = bool(np.isnan(lo) or np.isnan(hi))
        clause = clamp_nan_bound_clause(ctx.revision)
        ctx.error_if(nan_bound, clause, f"min_val={lo}, max_val={hi}")
    x = ctx.arg("input")
    value = ar.as_float(x) if dt.is_float else ar.as_int(x)
    if declares_nan_mode(ctx):
        # apply_clip_s(value, min_val, max_val, nan_mode): max with min_val, then min
        # with max_val, both under nan_mode (IGNORE turns a NaN input into min_val).
        mode = nan_mode(ctx)
        clipped = min_nan(max_nan(value, lo, dt.is_float, mode), hi, dt.is_float, mode)
        out = ar.Checked(clipped, np.asarray(lo <= hi))
    else:
        out = ar.clip_s(value, lo, hi, dt.is_float)
    # apply_clip_s's REQUIRE: after the ERROR_IF it can only fail on a NaN bound.  It is
    # inside the element loop, so an empty tensor never evaluates it.
    ctx.require(bool(out.ok) or x.size == 0, "min_val <= max_val", f"min_val={lo}, max_val={hi}")
    return {"output": out.value}


def _unary_float(ctx: OpContext, fn: Callable[[np.ndarray], np.ndarray]) -> Result:
    check_same_shape(ctx, "input")
    with np.errstate(all="ignore"):
        return {"output": fn(ar.as_float(ctx.arg("input")))}


@implements("ERF")
def erf(ctx: OpContext) -> Result:
    return _unary_float(ctx, ar.erf)


@implements("SIGMOID")
def sigmoid(ctx: OpContext) -> Result:
    return _unary_float(ctx, ar.sigmoid)


@implements("TANH")
def tanh(ctx: OpContext) -> Result:
    return _unary_float(ctx, np.tanh)

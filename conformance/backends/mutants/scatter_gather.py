"""Mutants of the scatter-gather operators (reference/ops/scatter_gather.py)."""

from __future__ import annotations

import numpy as np

from conformance.backends.mutants import (
    Result,
    mutant,
)
from reference.context import OpContext
from reference.registry import OpFunction


@mutant(
    "gather-batch-ignored",
    ["GATHER"],
    "N > 1",
    "the batch offset is left out of the address: every batch gathers from batch 0",
    "GATHER vectors with more than one batch",
)
def _gather_batch_ignored(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)  # its REQUIREs (indices in range)
    k = np.asarray(ctx.arg("indices")).astype(np.int64)
    return {"output": np.asarray(ctx.arg("values"))[0][k]}


@mutant(
    "scatter-no-copy",
    ["SCATTER"],
    "W < K",
    "values_out starts as zeros instead of a copy of values_in (in-place assumption)",
    "SCATTER vectors that leave some positions unwritten",
)
def _scatter_no_copy(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)  # its REQUIREs (in range, each position once)
    values_in = np.asarray(ctx.arg("values_in"))
    k = np.asarray(ctx.arg("indices")).astype(np.int64)
    out = np.zeros_like(values_in)
    out[np.arange(values_in.shape[0])[:, None], k] = ctx.arg("input")
    return {"values_out": out}

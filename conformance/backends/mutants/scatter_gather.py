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


@mutant(
    "scatter-batch-ignored",
    ["SCATTER"],
    "N > 1",
    "the batch offset is left out of the write address: every batch's updates land in "
    "batch 0 (later batches overwrite earlier ones), the other batches keep values_in",
    "SCATTER vectors with more than one batch",
    breaks="SCATTER.tosac: tensor_write<in_out_t>(values_out, [N,K,C], [n, k, c], value) "
    "writes batch n",
)
def _scatter_batch_ignored(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its REQUIREs (in range, each position once per batch)
    values_in = np.asarray(ctx.arg("values_in"))
    if values_in.shape[0] < 2:
        return result
    k = np.asarray(ctx.arg("indices")).astype(np.int64)
    updates = np.asarray(ctx.arg("input"))
    out = np.array(values_in, copy=True)
    for n in range(values_in.shape[0]):  # in batch order: the last write wins
        out[0, k[n]] = updates[n]
    return {"values_out": out}


INDEX_BITS = 16


@mutant(
    "gather-index-16-bit",
    ["GATHER"],
    f"K > 2**{INDEX_BITS} with indices at or above 2**{INDEX_BITS}",
    f"the gather descriptor holds {INDEX_BITS}-bit row indices: an index k reads row "
    f"k mod 2**{INDEX_BITS}",
    f"GATHER vectors with K > 2**{INDEX_BITS} (e.g. values [1, 65537, 1]) and an index "
    f"of 2**{INDEX_BITS} or more",
    breaks="GATHER.tosac: index_t k = tensor_read<index_t>(indices, [N,W], [n,w]); "
    "value = tensor_read(values, [N,K,C], [n,k,c]) for every 0 <= k < K",
)
def _gather_index_16(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its REQUIREs (indices in range)
    values = np.asarray(ctx.arg("values"))
    if values.shape[1] <= 1 << INDEX_BITS:
        return result
    k = np.asarray(ctx.arg("indices")).astype(np.int64) % (1 << INDEX_BITS)
    return {"output": values[np.arange(values.shape[0])[:, None], k]}

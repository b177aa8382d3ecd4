"""GATHER and SCATTER: move [C]-vectors between positions of a [N,K,C] tensor and
a [N,W,C] tensor, the positions given by an [N,W] index tensor (i32_t, or i64_t with
EXT-INT64 in TOSA 1.1; the values of any in_out_t, bool_t and i64_t included).

Out-of-range indices and a SCATTER that writes one position twice are REQUIRE
failures: the graph is unpredictable, not in error.
"""

from __future__ import annotations

import numpy as np

from reference.context import OpContext
from reference.registry import implements

Result = dict[str, np.ndarray | list[np.ndarray]]

RANGE_CLAUSE = "0 <= k && k < K"
ONCE_CLAUSE = "output_modified[n,k,c] == false"


def first_flagged(flags: np.ndarray) -> tuple[int, int]:
    """(n, w) of the first set flag in the pseudocode's row-major loop order."""
    n, w = np.unravel_index(int(np.argmax(flags)), flags.shape)
    return int(n), int(w)


def _indices(ctx: OpContext, k_range: int) -> tuple[np.ndarray, np.ndarray]:
    # index_t is i32_t, or i64_t (EXT-INT64, TOSA 1.1): int64 holds either exactly, and
    # the range test compares without arithmetic, so no index can wrap into range.
    k = np.asarray(ctx.arg("indices")).astype(np.int64)
    return k, (k >= 0) & (k < k_range)


@implements("GATHER")
def gather(ctx: OpContext) -> Result:
    values = ctx.arg("values")
    n_batches, k_range, _ = values.shape
    k, in_range = _indices(ctx, k_range)
    if not in_range.all():
        n, w = first_flagged(~in_range)
        ctx.require(False, RANGE_CLAUSE, f"indices[{n},{w}] = {k[n, w]}, K = {k_range}")
    batch = np.arange(n_batches)[:, None]
    return {"output": values[batch, k]}


def _repeats(k: np.ndarray) -> np.ndarray:
    """Flags (n, w) whose index k already appeared at an earlier w of batch n."""
    n_batches, width = k.shape
    n = np.repeat(np.arange(n_batches), width)
    w = np.tile(np.arange(width), n_batches)
    flat = k.reshape(-1)
    # Sort by (n, k, w): a position repeats its predecessor when n and k agree, and
    # the predecessor has the smaller w, i.e. was written first.
    order = np.lexsort((w, flat, n))
    same = (n[order][1:] == n[order][:-1]) & (flat[order][1:] == flat[order][:-1])
    repeated = np.zeros(flat.shape, dtype=bool)
    repeated[order[1:]] = same
    return repeated.reshape(k.shape)


@implements("SCATTER")
def scatter(ctx: OpContext) -> Result:
    values_in = ctx.arg("values_in")
    updates = ctx.arg("input")
    n_batches, k_range, _ = values_in.shape
    k, in_range = _indices(ctx, k_range)
    # Both REQUIREs are checked at each (n, w) in loop order (the channel loop is
    # innermost and uses the same k), range first; an out-of-range index fails before
    # it could count as a repeat.
    failed = ~in_range | _repeats(k)
    if failed.any():
        n, w = first_flagged(failed)
        if not in_range[n, w]:
            ctx.require(False, RANGE_CLAUSE, f"indices[{n},{w}] = {k[n, w]}, K = {k_range}")
        ctx.require(
            False,
            ONCE_CLAUSE,
            f"indices[{n},{w}] = {k[n, w]} was already written in batch {n}",
        )
    out = np.array(values_in, copy=True)
    out[np.arange(n_batches)[:, None], k] = updates
    return {"values_out": out}

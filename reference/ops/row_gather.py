"""ROW_GATHER (TOSA 1.1): for every index ``k`` of batch ``n``, ``row_count``
consecutive rows ``k .. k + row_count - 1`` of the [N, K, C] values tensor, written one
after another into the [N, W * row_count, C] output (index ``w``'s rows at
``w * row_count + r``).

ROW_GATHER.tosac, in order:

* ``ERROR_IF(row_count < 1)``;
* ``ERROR_IF(is_block_scale<in_out_t>() && C % get_innermost_block_size<in_out_t>() != 0)``;
* per (n, w), ``REQUIRE(0 <= k && (k+row_count) <= K)``: an index whose rows leave the
  tensor makes the graph unpredictable, not in error.

``row_count`` is a [1] i32_t input (a compile-time constant).  The output's declared
shape ``[N,W*row_count,C]`` needs its value, which the engine's argument check does not
have, so the operator checks it; after ``row_count < 1`` (the pseudocode's first
statement), since a row count below one gives no shape to compare with.

An i64_t index (EXT-INT64) near 2**63 would make ``k + row_count`` wrap in int64 and
pass the REQUIRE; it is evaluated as ``k <= K - row_count``, which cannot overflow
(K and row_count are sizes).
"""

from __future__ import annotations

import numpy as np

from reference.arguments import OUTPUTS_CLAUSE
from reference.context import OpContext
from reference.ops.scatter_gather import first_flagged
from reference.registry import implements

Result = dict[str, np.ndarray | list[np.ndarray]]

ROW_COUNT_CLAUSE = "row_count < 1"
BLOCK_CLAUSE = "is_block_scale<in_out_t>() && C % get_innermost_block_size<in_out_t>() != 0"
ROW_RANGE_CLAUSE = "0 <= k && (k+row_count) <= K"


def row_indices(k: np.ndarray, row_count: int) -> np.ndarray:
    """[N, W * row_count]: the values row each output row reads, ``k[n, w] + r`` at
    ``w * row_count + r`` (the indices already in range)."""
    n, w = k.shape
    rows = k[:, :, None] + np.arange(row_count, dtype=np.int64)[None, None, :]
    return rows.reshape(n, w * row_count)


@implements("ROW_GATHER")
def row_gather(ctx: OpContext) -> Result:
    values = ctx.arg("values")
    n_batches, k_range, channels = values.shape
    row_count = int(ctx.attr("row_count"))
    ctx.error_if(row_count < 1, ROW_COUNT_CLAUSE, f"row_count {row_count}")
    in_out = ctx.dtype("in_out_t")
    if in_out.kind == "block":  # no graph holds one yet; the rule as the pseudocode has it
        ctx.error_if(
            channels % in_out.block_size != 0,
            BLOCK_CLAUSE,
            f"C {channels}, block size {in_out.block_size}",
        )
    width = ctx.input_tensor("indices").shape[1]
    want = (n_batches, width * row_count, channels)
    ctx.error_if(
        tuple(ctx.out_shape()) != want,
        OUTPUTS_CLAUSE,
        f"output: [N,W*row_count,C] is {list(want)} (W {width}, row_count {row_count}), "
        f"got {list(ctx.out_shape())}",
    )
    k = np.asarray(ctx.arg("indices")).astype(np.int64)
    # (k + row_count) <= K as k <= K - row_count: exact for every i64_t k.
    out_of_range = (k < 0) | (k > k_range - row_count)
    if out_of_range.any():
        n, w = first_flagged(out_of_range)
        ctx.require(
            False,
            ROW_RANGE_CLAUSE,
            f"indices[{n},{w}] = {k[n, w]}, row_count {row_count}, K = {k_range}",
        )
    rows = row_indices(k, row_count)
    return {"output": values[np.arange(n_batches)[:, None], rows]}

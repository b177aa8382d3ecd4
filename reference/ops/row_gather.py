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

The block-scaled modes (``in_out_t`` a ``bs32_*`` composite) read and write each element
with its block's scale (tensor_read_value_scale / tensor_write_value_scale).  A row is
whole blocks (the ERROR_IF on C), and the scale of element ``[n, k+r, c]`` sits at
``[n, k+r, c / block_size]``: the scales take the same rows as the values.
:func:`gather_rows` does that gather for ROW_GATHER and ROW_GATHER_BLOCK_SCALED alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from conformance.block_tensor import BlockScaled, is_block_scaled
from reference.arguments import OUTPUTS_CLAUSE
from reference.context import OpContext
from reference.ops.scatter_gather import first_flagged
from reference.registry import implements

Result = dict[str, Any]  # a composite output is a BlockScaled pair (as data_layout)

ROW_COUNT_CLAUSE = "row_count < 1"
BLOCK_CLAUSE = "is_block_scale<in_out_t>() && C % get_innermost_block_size<in_out_t>() != 0"
ROW_RANGE_CLAUSE = "0 <= k && (k+row_count) <= K"


def row_indices(k: np.ndarray, row_count: int) -> np.ndarray:
    """[N, W * row_count]: the values row each output row reads, ``k[n, w] + r`` at
    ``w * row_count + r`` (the indices already in range)."""
    n, w = k.shape
    rows = k[:, :, None] + np.arange(row_count, dtype=np.int64)[None, None, :]
    return rows.reshape(n, w * row_count)


def gather_rows(
    ctx: OpContext, members: Sequence[np.ndarray], k_range: int, row_count: int
) -> list[np.ndarray]:
    """The per-index loop of ROW_GATHER and ROW_GATHER_BLOCK_SCALED: the REQUIRE on each
    index of ``indices`` ([N, W]), then rows ``k .. k + row_count - 1`` of every array of
    ``members`` ([N, K, ...]: values, and scales where there are any) gathered to
    ``[N, W * row_count, ...]``."""
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
    batch = np.arange(k.shape[0])[:, None]
    return [np.asarray(m)[batch, rows] for m in members]


@implements("ROW_GATHER")
def row_gather(ctx: OpContext) -> Result:
    values = ctx.value("values")
    n_batches, k_range, channels = ctx.input_tensor("values").shape
    row_count = int(ctx.attr("row_count"))
    ctx.error_if(row_count < 1, ROW_COUNT_CLAUSE, f"row_count {row_count}")
    in_out = ctx.dtype("in_out_t")
    if is_block_scaled(in_out):
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
    if isinstance(values, BlockScaled):
        got, scales = gather_rows(ctx, [values.values, values.scales], k_range, row_count)
        return {"output": BlockScaled(values.dtype, got, scales)}
    return {"output": gather_rows(ctx, [values], k_range, row_count)[0]}

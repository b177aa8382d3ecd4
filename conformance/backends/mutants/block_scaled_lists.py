"""Mutants of TOSA 1.1's block-scaled tensor-list operators, RESHAPE_BLOCK_SCALED and
ROW_GATHER_BLOCK_SCALED (reference/ops/block_scaled_lists.py): values moved right,
their scales moved wrong."""

from __future__ import annotations

import numpy as np

from conformance.backends.mutants import Result, mutant
from reference.context import OpContext
from reference.registry import OpFunction

_BLOCK_SCALED_MODES = "the block-scaled modes (values with fp8ue8m0 scales)"


def _members(result: Result) -> list[np.ndarray]:
    value = result["output"]
    assert isinstance(value, list)
    return list(value)


@mutant(
    "reshape-bs-scales-column-major",
    ["RESHAPE_BLOCK_SCALED"],
    _BLOCK_SCALED_MODES,
    "RESHAPE_BLOCK_SCALED keeps the scales in a block-major layout (the transposed "
    "[C/32, rows] many MX kernels store) and reshapes them in that layout without "
    "converting back: the scales are reshaped in column-major order, the values in "
    "row-major order",
    "RESHAPE_BLOCK_SCALED vectors whose input or output scales have two dimensions above 1",
    breaks="RESHAPE_BLOCK_SCALED.tosac: tensor_offset_to_index(in_shape, "
    "tensor_index_to_offset(out_shape, index)) for the scales (i == 1) as for the values",
)
def _scales_column_major(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its ERROR_IFs, and the values reshaped right
    members = _members(result)
    if len(members) == 2:
        scales = ctx.arg_list("input")[1]
        members[1] = np.reshape(scales, members[1].shape, order="F").copy()
    return {"output": members}


@mutant(
    "row-gather-bs-scales-first-row",
    ["ROW_GATHER_BLOCK_SCALED"],
    _BLOCK_SCALED_MODES + ", row_count > 1",
    "ROW_GATHER_BLOCK_SCALED gathers the values' row_count rows per index but the scales "
    "with one GATHER by the index (row k only), repeated over the window: every row of "
    "a window takes the scales of its first row",
    "ROW_GATHER_BLOCK_SCALED vectors with row_count > 1 whose consecutive scale rows differ",
    breaks="ROW_GATHER_BLOCK_SCALED.tosac: scale_t value = tensor_read<scale_t>(values[1], "
    "[N, K, C/block_size], [n, k+r, c])",
)
def _scales_first_row(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its ERROR_IFs and the REQUIRE on every index's rows
    members = _members(result)
    if len(members) == 2:
        row_count = int(ctx.attr("row_count"))
        scales = ctx.arg_list("values")[1]
        k = np.asarray(ctx.arg("indices")).astype(np.int64)  # [N, W], in range
        first = scales[np.arange(k.shape[0])[:, None], k]  # [N, W, C/32]
        members[1] = np.repeat(first, row_count, axis=1)
    return {"output": members}

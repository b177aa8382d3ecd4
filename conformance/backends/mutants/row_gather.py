"""Mutants of TOSA 1.1's ROW_GATHER (reference/ops/row_gather.py)."""

from __future__ import annotations

import numpy as np

from conformance.backends.mutants import Result, mutant
from conformance.backends.mutants.tools import output_of
from reference.context import OpContext
from reference.registry import OpFunction


@mutant(
    "row-gather-offset-major",
    ["ROW_GATHER"],
    "row_count > 1 and W > 1",
    "ROW_GATHER lowered to row_count GATHERs (indices + r for r = 0 .. row_count - 1) "
    "whose results are concatenated along the row axis: row r of index w lands at "
    "r * W + w instead of w * row_count + r",
    "ROW_GATHER vectors with row_count > 1 and more than one index per batch",
    breaks="ROW_GATHER.tosac: tensor_write(output, [N, W*row_count, C], "
    "[n, w*row_count + r, c], value read at [n, k+r, c])",
)
def _offset_major(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its ERROR_IFs and the REQUIRE on every index's rows
    out = output_of(result)
    row_count = int(ctx.attr("row_count"))
    n, rows, c = out.shape
    width = rows // row_count
    # The reference's [N, W, row_count, C] order read as [N, row_count, W, C].
    by_offset = out.reshape(n, width, row_count, c).transpose(0, 2, 1, 3)
    return {"output": np.ascontiguousarray(by_offset).reshape(n, rows, c)}

"""MATMUL_T (TOSA 1.1): N matrix products of A [N,H,C] with the transpose of B [D,W,C].

C is the contraction axis of both operands; B holds D = 1 matrix (broadcast to every
batch) or D = N.  The arithmetic is MATMUL's (reference/ops/tensor_conv.py, whose
helpers this module uses): out_t accumulates, integer sums are exact with their
running-sum REQUIREs checked in the pseudocode's loop order (c ascending), float results
are the fp64 dot products of the operands as stored, each read in its own type
(tensor_read<A_t, out_t>, tensor_read<B_t, out_t>).

A block-scaled A_t or B_t (bs32_fp8ue8m0_*_t) is read as tensor_read<A_t, out_t>
reads it: value times its block's scale, rounded to out_t (read_block_scaled); the
pseudocode's last two ERROR_IFs ask C to be a whole number of such an operand's blocks.
"""

from __future__ import annotations

import numpy as np

from reference.context import OpContext
from reference.ops.tensor_conv import (
    Result,
    check_block_sizes,
    check_matmul_zero_points,
    dot,
    finish,
    operand,
)
from reference.registry import implements

BATCH_CLAUSE = "D != N && D != 1"


@implements("MATMUL_T")
def matmul_t(ctx: OpContext) -> Result:
    n, h, c = ctx.input_tensor("A").shape
    d, w_, _ = ctx.input_tensor("B").shape
    ctx.error_if(d != n and d != 1, BATCH_CLAUSE, f"D={d}, N={n}")
    check_matmul_zero_points(ctx)
    check_block_sizes(ctx, ("A", "B"), "C", c)
    a = operand(ctx, "A", "A_zp")
    b = operand(ctx, "B", "B_zp")

    def compute(av: np.ndarray, bv: np.ndarray) -> np.ndarray:
        # [N, H, C] @ [D, C, W]: numpy broadcasts D = 1 over the batches.
        return dot(av, np.swapaxes(bv, -1, -2))

    def terms(av: np.ndarray, bv: np.ndarray, flat: np.ndarray) -> np.ndarray:
        i, y, x = np.unravel_index(flat, (n, h, w_))
        return av[i, y, :] * bv[0 if d == 1 else i, x, :]

    return {"output": finish(ctx, a, b, compute, terms, c, "out_t", None)}

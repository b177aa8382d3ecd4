"""Data nodes (CONST, IDENTITY) and helpers the data-movement operators share.

TOSA 1.1's block-scaled modes (``bs32_*``) pass a tensor's values and scales through
unchanged, once its innermost dimension is known to hold whole blocks.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance.block_tensor import BlockScaled, is_block_scaled
from conformance.rounding import round_to
from reference.arguments import ATTRIBUTES_CLAUSE
from reference.context import OpContext
from reference.registry import implements


def same_shape_or_unpredictable(
    ctx: OpContext, got: tuple[int, ...], want: tuple[int, ...], what: str
) -> None:
    """The pseudocode writes ``want`` elements but the graph declares ``got``.

    Used where the pseudocode silently assumes the output shape: it loops over the
    declared shape and reads the input at the mapped index, so a larger declared
    dimension fails tensor_read's bound REQUIRE and a smaller one leaves a partial
    result no implementation computes (shape operators: elements left unwritten).
    Neither is an ERROR_IF the spec states, so the result is unpredictable rather than
    an error that implementations would have to report.
    """
    ctx.require(
        tuple(got) == tuple(want),
        f"{what} (assumed by the pseudocode)",
        f"output shape {list(got)}, the operator produces {list(want)}",
    )


def to_type(ctx: OpContext, values: np.ndarray, var: str, what: str) -> np.ndarray:
    """``values`` held in the storage of type variable ``var``.

    Integers outside the type's range are an attribute that does not meet its
    declaration; floats round once to nearest even (conformance.rounding: never twice,
    as a cast through fp32 would); booleans take any non-zero value as true.
    """
    dt = ctx.dtype(var)
    arr = np.asarray(values)
    if dt.is_int:
        try:
            with np.errstate(invalid="ignore"):  # NaN/inf: caught by the comparison below
                wide = arr.astype(np.int64)
        except OverflowError:  # Python ints past int64 (an i64 type's neighbours)
            ctx.error_if(True, ATTRIBUTES_CLAUSE, f"{what} holds values outside {dt}")
            raise
        ctx.error_if(
            not np.array_equal(wide, arr) or not np.all(dt.in_range(wide)),
            ATTRIBUTES_CLAUSE,
            f"{what} holds values outside {dt} ({dt.min}..{dt.max})",
        )
        return wide.astype(dt.storage)
    if dt.is_float:
        if arr.dtype == dt.storage:
            return arr.copy()  # keep NaN payloads and -0.0 bit for bit
        return round_to(dt, arr)
    return arr.astype(dt.storage)


# TOSA 1.1's ERROR_IFs of the block-scaled modes (CONST binds out_t, IDENTITY in_out_t).
CONST_BLOCK_RANK_CLAUSE = "is_block_scale<out_t>() && rank(shape) == 0"
CONST_BLOCK_SHAPE_CLAUSE = (
    "is_block_scale<out_t>() && shape[rank(shape) - 1] % get_innermost_block_size<out_t>() != 0"
)
IDENTITY_BLOCK_RANK_CLAUSE = "is_block_scale<in_out_t>() && rank(shape) == 0"
IDENTITY_BLOCK_SHAPE_CLAUSE = (
    "is_block_scale<in_out_t>() && shape[rank(shape) - 1] "
    "% get_innermost_block_size<in_out_t>() != 0"
)


def whole_blocks(
    ctx: OpContext, var: str, shape: tuple[int, ...], rank_clause: str, clause: str
) -> None:
    """A block-scaled type's ERROR_IFs on a tensor's shape: rank at least 1, and the
    innermost dimension a multiple of the block size."""
    dt = ctx.dtype(var)
    if not is_block_scaled(dt):
        return
    ctx.error_if(len(shape) == 0, rank_clause, "rank 0")
    ctx.error_if(
        shape[-1] % dt.block_size != 0, clause, f"shape {list(shape)}, block size {dt.block_size}"
    )


@implements("CONST")
def const(ctx: OpContext) -> dict[str, Any]:
    dt = ctx.dtype("out_t")
    if not is_block_scaled(dt):
        return {"output": to_type(ctx, ctx.attr("values"), "out_t", "values")}
    values = ctx.attr("values")
    whole_blocks(ctx, "out_t", ctx.out_shape(), CONST_BLOCK_RANK_CLAUSE, CONST_BLOCK_SHAPE_CLAUSE)
    ctx.error_if(
        not isinstance(values, BlockScaled) or values.dtype is not dt,
        ATTRIBUTES_CLAUSE,
        f"values of a {dt} CONST are its values and scales",
    )
    assert isinstance(values, BlockScaled)
    return {"output": values.copy()}


@implements("IDENTITY")
def identity(ctx: OpContext) -> dict[str, Any]:
    x = ctx.value("input1")
    whole_blocks(ctx, "in_out_t", x.shape, IDENTITY_BLOCK_RANK_CLAUSE, IDENTITY_BLOCK_SHAPE_CLAUSE)
    return {"output": x.copy()}

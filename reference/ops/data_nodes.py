"""Data nodes (CONST, IDENTITY) and helpers the data-movement operators share."""

from __future__ import annotations

import numpy as np

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


@implements("CONST")
def const(ctx: OpContext) -> dict[str, np.ndarray | list[np.ndarray]]:
    return {"output": to_type(ctx, ctx.attr("values"), "out_t", "values")}


@implements("IDENTITY")
def identity(ctx: OpContext) -> dict[str, np.ndarray | list[np.ndarray]]:
    return {"output": ctx.arg("input1").copy()}

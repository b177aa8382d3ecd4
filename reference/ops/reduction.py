"""Reduction operators: REDUCE_ALL, REDUCE_ANY, REDUCE_MAX, REDUCE_MIN,
REDUCE_PRODUCT, REDUCE_SUM.

Each reduces ``input`` along ``axis`` to an output of the same rank whose ``axis``
dimension is 1.  Floating-point sums and products are computed in fp64 from the
stored inputs (the engine rounds them for later consumers); the integer sum follows
the pseudocode's running accumulator, whose every partial sum must fit acc_t.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from reference import arithmetic as ar
from reference.arguments import OUTPUTS_CLAUSE
from reference.context import OpContext
from reference.ops.data_nodes import same_shape_or_unpredictable
from reference.ops.elementwise_binary import nan_mode
from reference.pseudocode_revisions import pseudocode_1_1
from reference.registry import implements

# ERROR_IF clauses as the pseudocode states them (recipes and breakers import them).
AXIS_CLAUSE = "axis < 0 || axis >= rank(shape1)"
REDUCED_AXIS_CLAUSE = "shape[axis] != 1"
# REDUCE_SUM's accumulation: apply_add_s<acc_t>'s REQUIRE on each running sum, the
# range test up to TOSA 1.0, 1.1's two sign tests (the first is the one a positive
# term breaks, the second a negative one).
SUM_RANGE_CLAUSE = ar.ACC_RANGE_CLAUSE
SUM_ABOVE_CLAUSE = ar.ADD_ABOVE_CLAUSE.replace("in_t", "acc_t") + " (apply_add_s)"
SUM_BELOW_CLAUSE = ar.ADD_BELOW_CLAUSE.replace("in_t", "acc_t") + " (apply_add_s)"

Result = dict[str, np.ndarray | list[np.ndarray]]


def _checked_input(ctx: OpContext) -> tuple[np.ndarray, int]:
    """The input and axis after the checks every reduction shares, in pseudocode order."""
    x = ctx.arg("input")
    shape1 = ctx.input_tensor("input").shape
    shape = ctx.out_shape()
    axis = int(ctx.attr("axis"))
    # The output argument is declared "same rank as the input tensor".
    ctx.error_if(
        len(shape) != len(shape1),
        OUTPUTS_CLAUSE,
        f"output rank {len(shape)} differs from input rank {len(shape1)}",
    )
    ctx.error_if(
        axis < 0 or axis >= len(shape1),
        AXIS_CLAUSE,
        f"axis {axis}, input rank {len(shape1)}",
    )
    ctx.error_if(shape[axis] != 1, REDUCED_AXIS_CLAUSE, f"output shape {list(shape)}")
    # The loops run over the output's other dimensions and read the input there.
    want = tuple(1 if i == axis else d for i, d in enumerate(shape1))
    same_shape_or_unpredictable(ctx, shape, want, "shape[i] == shape1[i] for i != axis")
    return x, axis


def _reducer(
    fn: Callable[[np.ndarray, int], np.ndarray],
) -> Callable[[OpContext], Result]:
    def run(ctx: OpContext) -> Result:
        x, axis = _checked_input(ctx)
        return {"output": fn(x, axis)}

    return run


def _all(x: np.ndarray, axis: int) -> np.ndarray:
    return np.all(x, axis=axis, keepdims=True)


def _any(x: np.ndarray, axis: int) -> np.ndarray:
    return np.any(x, axis=axis, keepdims=True)


def _zero_sign_from(x: np.ndarray, axis: int, last: bool) -> np.ndarray:
    """Sign bit of the first (or last) zero along ``axis``, per reduced position.

    The pseudocode's max keeps the accumulator on a tie (``a >= b``) so the first of
    several equal zeros wins; its min replaces it (``a < b`` is false on a tie) so the
    last one wins.  -0.0 and +0.0 compare equal, so only this tells them apart.
    """
    is_zero = x == 0
    if last:
        pos = x.shape[axis] - 1 - np.argmax(np.flip(is_zero, axis=axis), axis=axis)
    else:
        pos = np.argmax(is_zero, axis=axis)
    chosen = np.take_along_axis(x, np.expand_dims(pos, axis), axis=axis)
    return np.signbit(chosen)


def _extreme(x: np.ndarray, axis: int, *, is_max: bool, mode: str = "PROPAGATE") -> np.ndarray:
    if x.dtype.kind in "iu":
        # Integer order is total; numpy's reduction is exact in the storage type.
        return (np.max if is_max else np.min)(x, axis=axis, keepdims=True)
    wide = x.astype(np.float64)
    if mode == "PROPAGATE":
        # np.max/np.min propagate NaN, as apply_max_s/apply_min_s return NaN on any NaN.
        out = (np.max if is_max else np.min)(wide, axis=axis, keepdims=True)
    else:
        # IGNORE: the accumulator starts as NaN, the first number replaces it and later
        # NaNs keep it, so the result is the extreme of the numbers along the axis; an
        # axis of NaNs only keeps the starting NaN.  Zeros tie as below.
        nan = np.isnan(wide)
        fill = -np.inf if is_max else np.inf
        filled = np.where(nan, fill, wide)
        out = (np.max if is_max else np.min)(filled, axis=axis, keepdims=True)
        out = np.where(np.all(nan, axis=axis, keepdims=True), np.nan, out)
    zero = out == 0
    if np.any(zero):
        negative = _zero_sign_from(wide, axis, last=not is_max)
        out = np.where(zero, np.where(negative, -0.0, 0.0), out)
    return out


def _extreme_reducer(is_max: bool) -> Callable[[OpContext], Result]:
    def run(ctx: OpContext) -> Result:
        mode = nan_mode(ctx)  # PROPAGATE where the revision declares no nan_mode
        x, axis = _checked_input(ctx)
        return {"output": _extreme(x, axis, is_max=is_max, mode=mode)}

    return run


def _product(x: np.ndarray, axis: int) -> np.ndarray:
    # fp64 reference product; the only modes are floating point.  inf * 0 -> NaN and
    # overflow to inf are the specified results, not faults.
    with np.errstate(invalid="ignore", over="ignore"):
        return np.prod(x.astype(np.float64), axis=axis, keepdims=True)


implements("REDUCE_ALL")(_reducer(_all))
implements("REDUCE_ANY")(_reducer(_any))
implements("REDUCE_MAX")(_extreme_reducer(True))
implements("REDUCE_MIN")(_extreme_reducer(False))
implements("REDUCE_PRODUCT")(_reducer(_product))


@implements("REDUCE_SUM")
def reduce_sum(ctx: OpContext) -> Result:
    x, axis = _checked_input(ctx)
    acc_t = ctx.dtype("acc_t")
    if acc_t.is_float:
        # The dot-product accuracy rule compares against the fp64 sum (inf + -inf is
        # NaN by IEEE-754, not a fault).
        with np.errstate(invalid="ignore"):
            return {"output": np.sum(x.astype(np.float64), axis=axis, keepdims=True)}
    # apply_add_s REQUIREs every running sum to fit acc_t, not just the total, so all
    # prefix sums along the axis are checked.  For an i32 accumulator int64 holds them
    # exactly (at most 2**31 terms of at most 2**31 each).
    terms = x.astype(np.int64)
    with np.errstate(over="ignore"):
        partial = np.cumsum(terms, axis=axis)  # an i64 sum wraps past its first overflow
    detail = f"a running sum leaves {acc_t} ({acc_t.min}..{acc_t.max})"
    if not pseudocode_1_1(ctx.revision):
        ctx.require(acc_t.in_range(partial), SUM_RANGE_CLAUSE, detail)
    else:
        _require_running_sums(ctx, terms, partial, axis, detail)
    total = np.take(partial, [x.shape[axis] - 1], axis=axis)
    return {"output": total.astype(ctx.dtype("in_out_t").storage)}


def _require_running_sums(
    ctx: OpContext, terms: np.ndarray, partial: np.ndarray, axis: int, detail: str
) -> None:
    """1.1's apply_add_s<acc_t>(acc, value) REQUIREs at every step, in loop order.

    The sum before each step is the running sum less its term; it is exact up to the
    first step that overflows (the wrapped int64 sums are exact until then), which is
    the only one that matters: the loops stop there.  The loops run over the output's
    positions in row-major order with the axis innermost, so the first failing step in
    that order names the clause (a positive term breaks the first, a negative one the
    second).
    """
    acc_t = ctx.dtype("acc_t")
    with np.errstate(over="ignore"):
        before = partial - terms
    above, below = ar.add_sub_rules(before, terms, acc_t, sub=False, sign_tests=True)[1]
    bad = ~(above[1] & below[1])
    if not bad.any():
        return
    lines = np.moveaxis(bad, axis, -1).reshape(-1, bad.shape[axis])
    line = int(np.argmax(lines.any(axis=1)))
    step = int(np.argmax(lines[line]))
    positive = np.moveaxis(terms, axis, -1).reshape(lines.shape)[line, step] > 0
    clause = SUM_ABOVE_CLAUSE if positive else SUM_BELOW_CLAUSE
    ctx.require(False, clause, f"{detail}: term {step} along axis {axis}")

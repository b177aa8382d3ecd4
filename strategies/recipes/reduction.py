"""Recipes and breakers for the reductions: REDUCE_ALL, REDUCE_ANY, REDUCE_MAX,
REDUCE_MIN, REDUCE_PRODUCT, REDUCE_SUM.

The output is the input with the reduced axis set to 1.  Values are chosen per
operator so that the result stays valid *and* says something: the integer sum keeps
every running sum in range, the product keeps its bulk away from overflow and
underflow (special values still turn single rows into inf, 0 or NaN), and the
boolean reductions see rows that are all true or all false, not only random ones.

A floating-point REDUCE_SUM is a dot product with a vector of ones (KS = the reduced
axis, one dot product per output): its shape is drawn around an aimed KS and number
of outputs (strategies.recipes.data_sets), at least MIN_DOT_PRODUCTS outputs where
the rank range and budget allow, and its values come from an Appendix A data set or
are free values with every special value placed (S = -1).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from hypothesis import strategies as st

from conformance.dtypes import I64, DType
from conformance.operator_table import family
from reference.arguments import INPUTS_CLAUSE, OUTPUTS_CLAUSE
from reference.datasets import dataset_inputs
from reference.ops.reduction import AXIS_CLAUSE, REDUCED_AXIS_CLAUSE
from strategies.case import CaseSpec, TensorDraw
from strategies.invalid import bad_axis, breaks, broken, other_rank, scalar_breaker
from strategies.recipes import RecipeContext, recipe
from strategies.recipes.common import aimed
from strategies.recipes.data_sets import (
    data_set,
    dot_aim,
    least_outputs,
    place_specials,
    sizes_with_product,
)
from strategies.recipes.elementwise_binary import nan_mode_attribute
from strategies.shapes import shapes
from strategies.values import ValueRange, special_values

REDUCTIONS = family(
    (
        "REDUCE_ALL",
        "REDUCE_ANY",
        "REDUCE_MAX",
        "REDUCE_MIN",
        "REDUCE_PRODUCT",
        "REDUCE_SUM",
    )
)


def _boolean_values(
    draw: st.DrawFn, rc: RecipeContext, dt: DType, shape: tuple[int, ...]
) -> np.ndarray:
    # Random booleans almost never give an all-true row on a long axis: also draw
    # tensors that are all one value except a few flipped elements.
    base = rc.values(draw, dt, shape, label="input")
    fill = draw(st.sampled_from([None, True, False]), label="input: mostly")
    if fill is None:
        return base
    size = math.prod(shape)
    flips = draw(st.lists(st.integers(0, size - 1), max_size=min(4, size)), label="flipped")
    arr = np.full(size, fill, dtype=np.bool_)
    arr[flips] = not fill
    return arr.reshape(shape)


def _product_values(draw: st.DrawFn, dt: DType, shape: tuple[int, ...], length: int) -> np.ndarray:
    # Bulk magnitudes 2**u, |u| <= e, with e * length at most half the exponent range:
    # even a row of the largest ones neither overflows nor underflows.
    e = min(2.0, 0.5 * math.log2(dt.fp.normal_max) / length)
    seed = draw(st.integers(0, 2**32 - 1), label="input: seed")
    rng = np.random.default_rng(seed)
    signs = np.where(rng.integers(0, 2, size=shape) == 0, -1.0, 1.0)
    arr = (signs * 2.0 ** rng.uniform(-e, e, size=shape)).astype(dt.storage)
    size = arr.size
    # A few special values (0, inf, NaN, subnormals, extremes): they decide their row.
    overrides = draw(
        st.lists(
            st.tuples(st.integers(0, size - 1), st.sampled_from(special_values(dt))),
            max_size=min(3, size),
        ),
        label="input: special values",
    )
    flat = arr.reshape(-1)
    for pos, v in overrides:
        with np.errstate(over="ignore", invalid="ignore"):
            flat[pos] = np.asarray(v).astype(dt.storage)
    return arr


def _sum_shape(draw: st.DrawFn, rc: RecipeContext) -> tuple[tuple[int, ...], int]:
    """(shape, axis) of a floating-point REDUCE_SUM: KS = shape[axis] near the aimed
    KS, and the other dimensions' product (the outputs) near the aimed count, with
    outputs * KS within the budget.  Rank 2 at least where the range allows (rank 1
    has a single output)."""
    budget, max_dim = rc.budget.max_elements, rc.budget.max_dim
    lo, hi = rc.rank_range("input")
    aim = dot_aim(draw, rc, True, max(1, budget // least_outputs(rc, True)))
    ks = aim.ks_goal
    if aim.inputs:  # "large": a KS long enough for the inputs within the outputs' cap
        ks = min(max(1, budget // aim.outputs), max(ks, -(-aim.inputs // aim.outputs_cap)))
    high = max(1, min(budget // ks, aim.outputs_cap))
    low = min(high, max(aim.outputs, -(-aim.inputs // ks)))
    r_lo = min(max(lo, 2), hi)
    if high < 2 * low and r_lo == 2:  # a tight range: one other dimension meets it exactly
        hi = 2
    rank = draw(st.integers(r_lo, hi), label="input shape: rank")
    axis = draw(st.integers(0, rank - 1), label="axis")
    if rank == 1:
        return (ks,), 0
    count = rank - 1
    # Dimensions up to max_dim, unless so few of them cannot hold the outputs.
    cap = max_dim if max_dim**count >= 2 * low else high
    others = sizes_with_product(draw, [cap] * count, low, high, aim.outputs_goal, "outputs")
    return (*others[:axis], ks, *others[axis:]), axis


def _sum_values(
    draw: st.DrawFn, rc: RecipeContext, dt: DType, shape: tuple[int, ...], axis: int
) -> tuple[np.ndarray, int]:
    """Input values and the data set they come from."""
    if dt.is_int:
        if dt is I64 and draw(st.booleans(), label="input: running sums drawn"):
            return _running_sum_walk(draw, dt, shape, axis), -1
        # apply_add_s REQUIREs every running sum in range: values bounded by
        # max / length keep all of them there (length 1 can take the full range).
        length = shape[axis]
        bound = dt.int_range.max // length
        r = None if length == 1 else ValueRange(low=-bound, high=bound)
        return rc.values(draw, dt, shape, r, label="input"), -1
    s = data_set(draw, rc, dt)
    if s < 0:
        # The rule takes local_bound true for REDUCE_SUM: a special value leaves only
        # its own output without an accuracy limit.
        values = rc.values(draw, dt, shape, label="input")
        return place_specials(draw, dt, values, "input"), -1
    by_name = dataset_inputs(
        "REDUCE_SUM",
        s,
        {"input": shape},
        {"input": dt},
        acc_dtype=rc.dtype("acc_t"),
        attrs={"axis": axis},
    )
    return by_name["input"], s


def _running_sum_walk(draw: st.DrawFn, dt: DType, shape: tuple[int, ...], axis: int) -> np.ndarray:
    """i64 terms across the whole range whose every running sum stays in the type:
    the running sums themselves are drawn, all of one sign per reduced line ([0, max]
    or [min, -1]), and the terms are their differences, which a same-sign pair cannot
    take out of i64.  Some lines start at the type's end, so INT64_MAX or INT64_MIN is
    a term and a running sum, and the next term is nearly as large the other way; the
    totals cover the whole range.  (An accumulator narrower than 64 bits, or one that
    saturates, gets these wrong.)"""
    lo, hi = dt.int_range
    size = math.prod(shape)
    if not size:
        return np.zeros(shape, dt.storage)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="input: running sums"))
    lines = np.moveaxis(np.zeros(shape, np.int64), axis, -1).shape
    per_line = (*lines[:-1], 1)
    positive = rng.random(per_line) < 0.5
    magnitudes = rng.integers(0, hi, size=lines, endpoint=True)
    sums = np.where(positive, magnitudes, -1 - magnitudes)  # -1 - max is min
    at_end = rng.random(per_line) < 0.5
    sums[..., :1] = np.where(at_end, np.where(positive, hi, lo), sums[..., :1])
    terms = np.diff(sums, axis=-1, prepend=0)
    return np.moveaxis(terms, -1, axis).astype(dt.storage)


# The long-axis vector of a reduction reduces one axis longer than a 16-bit loop
# count, and not a multiple of any vector width (65539 = 256 * 256 + 3), so that a
# kernel that splits the axis into chunks has a remainder to get wrong.
LONG_AXIS = 65539


def _long_axis_values(
    draw: st.DrawFn, rc: RecipeContext, dt: DType, shape: tuple[int, int]
) -> np.ndarray:
    """Rows of a long axis whose result is decided by their last element, where a
    dropped remainder, a chunk padded with zeros or a wrapped count shows:

    * booleans: a row all true but the last element (ALL false, ANY true), and a row
      of exactly 256 * k trues, at the end (a true count kept in 8 bits is 0);
    * MAX (MIN): a row of one sign, negative (positive), whose largest (smallest)
      value is the last: a zero padding a chunk would be the result;
    * PRODUCT: ones but the last element (2, -2 or 0.5);
    * integer SUM: values that keep every running sum in range (apply_add_s)."""
    if dt.kind == "bool":
        trues = 256 * draw(st.integers(1, 4), label="input: trues / 256 in row 1")
        arr = np.ones(shape, dtype=np.bool_)
        arr[0, -1] = False
        arr[1, :] = False
        arr[1, -trues:] = True
        return arr
    if rc.name == "REDUCE_PRODUCT":
        arr = np.ones(shape, dtype=dt.storage)
        arr[:, -1] = draw(st.sampled_from([2.0, -2.0, 0.5]), label="input: last element")
        return arr
    if rc.name == "REDUCE_SUM":
        bound = dt.int_range.max // shape[1]
        return rc.values(draw, dt, shape, ValueRange(low=-bound, high=bound), label="input")
    sign = -1 if rc.name == "REDUCE_MAX" else 1
    if dt.is_int:  # magnitudes 2 ... the type's limit, the last element 1
        top = dt.int_range.max if sign > 0 else -dt.int_range.min
        r = ValueRange(low=2, high=top) if sign > 0 else ValueRange(low=-top, high=-2)
        last: float = sign
    else:  # magnitudes in [0.5, 1], the last element 0.25
        r = ValueRange(low=0.5, high=1.0) if sign > 0 else ValueRange(low=-1.0, high=-0.5)
        last = 0.25 * sign
    arr = rc.values(draw, dt, shape, replace(r, specials=False), label="input")
    arr[:, -1] = np.asarray(last).astype(dt.storage)
    return arr


def _nan_rows(draw: st.DrawFn, values: np.ndarray, axis: int) -> np.ndarray:
    """NaN along a few of the reduced rows, so that nan_mode decides their result: a
    single NaN (PROPAGATE gives NaN, IGNORE the extreme of the rest) at a drawn place
    in some rows, and every element NaN in one row (NaN either way) in some cases."""
    if not values.size:
        return values
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="input: NaN rows"))
    rows = np.moveaxis(np.array(values), axis, -1).copy()
    flat = rows.reshape(-1, rows.shape[-1])  # a view of the copy: one row per output
    n, length = flat.shape
    for r in rng.choice(n, size=int(rng.integers(1, min(3, n) + 1)), replace=False):
        flat[r, int(rng.integers(length))] = np.nan
    if draw(st.booleans(), label="input: a row of NaNs"):
        flat[int(rng.integers(n))] = np.nan
    return np.moveaxis(rows, -1, axis)


@recipe(*REDUCTIONS)
def reduction(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    attributes: dict[str, object] = {}
    if rc.name in ("REDUCE_MAX", "REDUCE_MIN"):
        attributes |= nan_mode_attribute(draw, rc)  # TOSA 1.0 on
    long_axis = (
        rc.target == "long-axis"
        and not (rc.name == "REDUCE_SUM" and dt.is_float)
        # the large budget (2 * 65536): two rows of 65539 go 6 elements past it
        and rc.budget.max_elements >= LONG_AXIS
        and rc.rank_range("input")[0] <= 2 <= rc.rank_range("input")[1]
    )
    shape1: tuple[int, ...]
    if long_axis:
        shape1, axis = (2, LONG_AXIS), 1
    elif rc.name == "REDUCE_SUM" and dt.is_float:
        shape1, axis = _sum_shape(draw, rc)
    else:
        lo, hi = rc.rank_range("input")
        shape1 = draw(shapes(lo, hi, rc.budget, label="input shape"))
        # Half the time the longest axis: the one with a remainder past a vector width.
        longest = int(np.argmax(shape1)) if shape1 else 0
        drawn = st.one_of(st.just(longest), st.integers(0, max(0, len(shape1) - 1)))
        axis = draw(drawn, label="axis")
    out_shape = tuple(1 if i == axis else d for i, d in enumerate(shape1))
    data_set = -1
    if long_axis:
        values = _long_axis_values(draw, rc, dt, (2, LONG_AXIS))
    elif dt.kind == "bool":
        values = _boolean_values(draw, rc, dt, shape1)
    elif rc.name == "REDUCE_PRODUCT":
        values = _product_values(draw, dt, shape1, shape1[axis])
    elif rc.name == "REDUCE_SUM":
        values, data_set = _sum_values(draw, rc, dt, shape1, axis)
    else:  # MAX and MIN: every value, NaN and both zeros included, is valid
        values = rc.values(draw, dt, shape1, label="input")
        nans = attributes and dt.is_float
        if nans and (aimed(rc, "nan_mode") or draw(st.booleans(), label="input: NaN rows")):
            values = _nan_rows(draw, values, axis)
    return rc.spec_of(
        [TensorDraw("input", shape1, dt, values)],
        [TensorDraw("output", out_shape, dt)],
        attributes={"axis": axis, **attributes},
        data_set=data_set,
    )


@breaks(*REDUCTIONS, clause=AXIS_CLAUSE)
def reduction_axis(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    out = broken(spec, AXIS_CLAUSE)
    out.attributes["axis"] = bad_axis(draw, len(spec.inputs[0].shape))
    return out


@breaks(*REDUCTIONS, clause=REDUCED_AXIS_CLAUSE)
def reduction_not_one(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    out = broken(spec, REDUCED_AXIS_CLAUSE)
    axis = int(spec.attributes["axis"])
    o = out.outputs[0]
    # Often the input's own length: the output of forgetting to reduce.
    d = draw(st.integers(2, max(2, spec.inputs[0].shape[axis])), label="output axis length")
    out.replace_tensor(o.name, shape=tuple(d if i == axis else n for i, n in enumerate(o.shape)))
    return out


@breaks(*REDUCTIONS, clause=OUTPUTS_CLAUSE)
def reduction_rank(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """The output is declared with the input's rank: give it another (the output of
    a reduction that drops the axis, or a rank-0 output)."""
    out = broken(spec, OUTPUTS_CLAUSE)
    o = out.outputs[0]
    axis = int(spec.attributes["axis"])
    how = draw(st.sampled_from(["drop axis", "other rank"]), label="output rank")
    if how == "drop axis":
        shape = o.shape[:axis] + o.shape[axis + 1 :]
    else:
        shape = other_rank(o.shape, rc.level["MAX_RANK"])
    out.replace_tensor(o.name, shape=shape)
    return out


breaks(*REDUCTIONS, clause=INPUTS_CLAUSE)(scalar_breaker("input", INPUTS_CLAUSE))

"""Recipes and breakers for the reductions: REDUCE_ALL, REDUCE_ANY, REDUCE_MAX,
REDUCE_MIN, REDUCE_PRODUCT, REDUCE_SUM.

The output is the input with the reduced axis set to 1.  Values are chosen per
operator so that the result stays valid *and* says something: the integer sum keeps
every running sum in range, the product keeps its bulk away from overflow and
underflow (special values still turn single rows into inf, 0 or NaN), and the
boolean reductions see rows that are all true or all false, not only random ones.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from conformance.dtypes import DType
from reference.arguments import INPUTS_CLAUSE, OUTPUTS_CLAUSE
from reference.datasets import dataset_inputs
from strategies.case import CaseSpec, TensorDraw
from strategies.invalid import breaks, broken
from strategies.recipes import RecipeContext, recipe
from strategies.recipes.data_layout import bad_axis, other_rank, scalar_breaker, set_tensor
from strategies.shapes import shapes
from strategies.values import ValueRange, special_values

REDUCTIONS = (
    "REDUCE_ALL",
    "REDUCE_ANY",
    "REDUCE_MAX",
    "REDUCE_MIN",
    "REDUCE_PRODUCT",
    "REDUCE_SUM",
)
DATA_SETS = (-1, 0, 1, 2, 3, 4, 5)  # -1: free values, else an Appendix A test set


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
    assert dt.normal_max is not None
    e = min(2.0, 0.5 * math.log2(dt.normal_max) / length)
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


def _sum_values(
    draw: st.DrawFn, rc: RecipeContext, dt: DType, shape: tuple[int, ...], axis: int
) -> tuple[np.ndarray, int]:
    """Input values and the data set they come from."""
    if dt.is_int:
        # apply_add_s REQUIREs every running sum in range: values bounded by
        # max / length keep all of them there (length 1 can take the full range).
        length = shape[axis]
        bound = int(dt.max) // length  # type: ignore[arg-type]
        r = None if length == 1 else ValueRange(low=-bound, high=bound)
        return rc.values(draw, dt, shape, r, label="input"), -1
    data_set = rc.data_set
    if data_set is None:
        data_set = draw(st.sampled_from(DATA_SETS), label="data set")
    if data_set < 0:
        return rc.values(draw, dt, shape, label="input"), -1
    values = dataset_inputs(
        "REDUCE_SUM",
        data_set,
        {"input": shape},
        {"input": dt},
        acc_dtype=rc.dtype("acc_t"),
        attrs={"axis": axis},
    )
    return values["input"], data_set


@recipe(*REDUCTIONS)
def reduction(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    lo, hi = rc.rank_range("input")
    shape1 = draw(shapes(lo, hi, rc.budget, label="input shape"))
    axis = draw(st.integers(0, len(shape1) - 1), label="axis")
    out_shape = tuple(1 if i == axis else d for i, d in enumerate(shape1))
    data_set = -1
    if dt.kind == "bool":
        values = _boolean_values(draw, rc, dt, shape1)
    elif rc.name == "REDUCE_PRODUCT":
        values = _product_values(draw, dt, shape1, shape1[axis])
    elif rc.name == "REDUCE_SUM":
        values, data_set = _sum_values(draw, rc, dt, shape1, axis)
    else:  # MAX and MIN: every value, NaN and both zeros included, is valid
        values = rc.values(draw, dt, shape1, label="input")
    return rc.spec_of(
        [TensorDraw("input", shape1, dt, values)],
        [TensorDraw("output", out_shape, dt)],
        attributes={"axis": axis},
        data_set=data_set,
    )


@breaks(*REDUCTIONS, clause="axis < 0 || axis >= rank(shape1)")
def reduction_axis(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    out = broken(spec, "axis < 0 || axis >= rank(shape1)")
    out.attributes["axis"] = bad_axis(draw, len(spec.inputs[0].shape))
    return out


@breaks(*REDUCTIONS, clause="shape[axis] != 1")
def reduction_not_one(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    out = broken(spec, "shape[axis] != 1")
    axis = int(spec.attributes["axis"])
    o = out.outputs[0]
    # Often the input's own length: the output of forgetting to reduce.
    d = draw(st.integers(2, max(2, spec.inputs[0].shape[axis])), label="output axis length")
    set_tensor(out, o.name, shape=tuple(d if i == axis else n for i, n in enumerate(o.shape)))
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
    set_tensor(out, o.name, shape=shape)
    return out


breaks(*REDUCTIONS, clause=INPUTS_CLAUSE)(scalar_breaker("input", INPUTS_CLAUSE))

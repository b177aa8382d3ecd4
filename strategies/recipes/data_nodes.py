"""Recipes and breakers for the data nodes CONST and IDENTITY.

Both pass values through unchanged, so every value of every type (i4 and i48
included, NaN payloads, -0.0) is valid.  CONST has no inputs: its ``values``
attribute is an array of the output's type and shape.

TOSA 1.1's block-scaled modes (``bs32_*``) draw shapes of whole blocks innermost, and
values and scales from :mod:`strategies.block_tensors` (CONST's ``values``: their
pair); their breakers give the tensor rank 0 or an innermost dimension off the block
grid.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from hypothesis import strategies as st

from conformance import dtypes
from conformance.block_tensor import BlockScaled, is_block_scaled, scale_shape
from reference.arguments import ATTRIBUTES_CLAUSE, OUTPUTS_CLAUSE, TYPES_CLAUSE
from reference.ops.data_nodes import (
    CONST_BLOCK_RANK_CLAUSE,
    CONST_BLOCK_SHAPE_CLAUSE,
    IDENTITY_BLOCK_RANK_CLAUSE,
    IDENTITY_BLOCK_SHAPE_CLAUSE,
)
from strategies.block_tensors import block_scaled_values, blocked_shapes
from strategies.case import CaseSpec, TensorDraw
from strategies.invalid import breaks, broken, other_rank, retype_breaker
from strategies.recipes import RecipeContext, recipe
from strategies.recipes.common import elementwise
from strategies.shapes import shapes
from vectors.flatbuffer import holds_shape_tensors


@recipe("CONST")
def const(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("out_t")
    lo, hi = rc.rank_range("output")
    if is_block_scaled(dt):
        shape = draw(blocked_shapes(lo, hi, rc.budget, dt.block_size, label="shape"))
        edge = True if rc.target == "edge" else None
        pair = draw(block_scaled_values(dt, shape, label="values", extremes=edge))
        return rc.spec_of([], [TensorDraw("output", shape, dt)], attributes={"values": pair})
    shape = draw(shapes(lo, hi, rc.budget, label="shape"))
    # np.asarray: a rank-0 draw can come back as a numpy scalar, not an array.
    values = np.asarray(rc.values(draw, dt, shape, label="values"))
    return rc.spec_of([], [TensorDraw("output", shape, dt)], attributes={"values": values})


@recipe("IDENTITY")
def identity(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    if not is_block_scaled(dt):
        return elementwise(draw, rc)
    lo, hi = rc.rank_range("input1")
    shape = draw(blocked_shapes(lo, hi, rc.budget, dt.block_size, label="shape"))
    return rc.spec_of([rc.tensor(draw, "input1", dt, shape)], [TensorDraw("output", shape, dt)])


def _block_scaled(var: str) -> Callable[[RecipeContext], bool]:
    return lambda rc: is_block_scaled(rc.dtype(var))


def _off_block(draw: st.DrawFn, shape: tuple[int, ...], block_size: int) -> tuple[int, ...]:
    """``shape`` with its innermost dimension moved off the block grid."""
    delta = draw(st.integers(1, block_size - 1), label="off the block grid by")
    d = shape[-1] - delta if shape[-1] > delta else shape[-1] + delta
    return (*shape[:-1], d)


@breaks("IDENTITY", clause=IDENTITY_BLOCK_RANK_CLAUSE, applies=_block_scaled("in_out_t"))
def identity_scalar_block(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    out = broken(spec, IDENTITY_BLOCK_RANK_CLAUSE)
    out.reshape_tensor("input1", ())
    out.replace_tensor("output", shape=())
    return out


@breaks("IDENTITY", clause=IDENTITY_BLOCK_SHAPE_CLAUSE, applies=_block_scaled("in_out_t"))
def identity_off_block(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    shape = _off_block(draw, spec.inputs[0].shape, rc.dtype("in_out_t").block_size)
    out = broken(spec, IDENTITY_BLOCK_SHAPE_CLAUSE)
    out.reshape_tensor("input1", shape)
    out.replace_tensor("output", shape=shape)
    return out


def _const_values(spec: CaseSpec, shape: tuple[int, ...]) -> CaseSpec:
    """A block-scaled CONST of ``shape``, its values and scales cycled into it."""
    values = spec.attributes["values"]
    out = spec
    out.replace_tensor("output", shape=shape)
    s_shape = scale_shape(shape, values.block_size)
    out.attributes["values"] = BlockScaled(
        values.dtype,
        np.resize(values.values.reshape(-1), math.prod(shape)).reshape(shape),
        np.resize(values.scales.reshape(-1), math.prod(s_shape)).reshape(s_shape),
    )
    return out


@breaks("CONST", clause=CONST_BLOCK_RANK_CLAUSE, applies=_block_scaled("out_t"))
def const_scalar_block(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    return _const_values(broken(spec, CONST_BLOCK_RANK_CLAUSE), ())


@breaks("CONST", clause=CONST_BLOCK_SHAPE_CLAUSE, applies=_block_scaled("out_t"))
def const_off_block(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    shape = _off_block(draw, spec.outputs[0].shape, rc.dtype("out_t").block_size)
    return _const_values(broken(spec, CONST_BLOCK_SHAPE_CLAUSE), shape)


# CONST values are stored as the output tensor's data: values of another shape or out of
# the type cannot be written as a vector (packable=False).
@breaks("CONST", clause=OUTPUTS_CLAUSE, packable=lambda rc: False)
def const_output_shape(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """The output is declared with the shape of ``values``: declare another."""
    out = broken(spec, OUTPUTS_CLAUSE)
    o = out.outputs[0]
    same_rank: bool = draw(st.booleans(), label="same rank") if o.shape else False
    if same_rank:
        i = draw(st.integers(0, len(o.shape) - 1), label="wrong dimension")
        shape = tuple(d + 1 if j == i else d for j, d in enumerate(o.shape))
    else:
        shape = other_rank(o.shape, rc.level["MAX_RANK"])
    out.replace_tensor(o.name, shape=shape)
    return out


@breaks(
    "CONST",
    clause=ATTRIBUTES_CLAUSE,
    applies=lambda rc: rc.dtype("out_t").is_int,
    packable=lambda rc: False,
)
def const_out_of_range(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """An integer ``values`` element the output type cannot hold, or a fraction (float
    and boolean types take any number, rounded or tested for zero)."""
    dt = spec.outputs[0].dtype
    values = spec.attributes["values"]
    pos = draw(st.integers(0, max(0, values.size - 1)), label="bad element")
    bad = draw(
        st.sampled_from([dt.int_range.max + 1, dt.int_range.min - 1, 0.5]),
        label="its value",
    )
    # Python ints where the neighbour of an i64 end does not fit int64.
    kind = np.float64 if isinstance(bad, float) else object if dt.bits >= 64 else np.int64
    wide = values.astype(kind)
    wide.reshape(-1)[pos] = bad
    out = broken(spec, ATTRIBUTES_CLAUSE)
    out.attributes["values"] = wide
    return out


# Every CONST mode takes every usual element type: only a shape-typed output has none,
# which only the 2024 draft's format can write (1.0's holds shapes as TosaShape lists).
breaks(
    "CONST",
    clause=TYPES_CLAUSE,
    packable=lambda rc: holds_shape_tensors(rc.spec.revision),
)(retype_breaker([("output", dtypes.SHAPE)]))

"""Recipes and breakers for the data nodes CONST and IDENTITY.

Both pass values through unchanged, so every value of every type (i4 and i48
included, NaN payloads, -0.0) is valid.  CONST has no inputs: its ``values``
attribute is an array of the output's type and shape.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from conformance import dtypes
from reference.arguments import ATTRIBUTES_CLAUSE, OUTPUTS_CLAUSE
from strategies.case import CaseSpec, TensorDraw
from strategies.invalid import TYPE_CLAUSE, breaks, broken, other_rank, retype_breaker
from strategies.recipes import RecipeContext, recipe
from strategies.recipes.common import elementwise
from strategies.shapes import shapes


@recipe("CONST")
def const(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("out_t")
    lo, hi = rc.rank_range("output")
    shape = draw(shapes(lo, hi, rc.budget, label="shape"))
    # np.asarray: a rank-0 draw can come back as a numpy scalar, not an array.
    values = np.asarray(rc.values(draw, dt, shape, label="values"))
    return rc.spec_of([], [TensorDraw("output", shape, dt)], attributes={"values": values})


@recipe("IDENTITY")
def identity(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    return elementwise(draw, rc)


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


# Every CONST mode takes every usual element type: only a shape-typed output has none.
breaks("CONST", clause=TYPE_CLAUSE)(retype_breaker([("output", dtypes.SHAPE)]))

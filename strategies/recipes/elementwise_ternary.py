"""Recipes for SELECT and SIN (which tosa.xml files in the elementwise-ternary group)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from hypothesis import strategies as st

from reference.ops.elementwise_ternary import SELECT_BROADCAST_CLAUSE
from strategies.case import CaseSpec
from strategies.invalid import register_broadcast_breakers
from strategies.recipes import RecipeContext, recipe
from strategies.recipes.common import elementwise, share_values
from strategies.recipes.elementwise_unary import float_unary
from strategies.values import add_specials, float_regime


def _mixed_condition(draw: st.DrawFn, spec: CaseSpec) -> None:
    """A condition with both values in it wherever it has two elements; a single one
    (which would pick one operand for the whole output) is spread to the output's
    shape in three cases of four, so that most vectors select both ways and some keep
    a broadcast condition."""
    cond = spec.inputs[0]
    out_shape = spec.outputs[0].shape
    assert cond.values is not None
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="condition"))
    if cond.values.size < 2 <= math.prod(out_shape) and draw(
        st.integers(0, 3), label="condition at the output shape (unless 0)"
    ):
        spec.inputs[0] = cond = replace(
            cond, shape=out_shape, values=rng.integers(0, 2, out_shape).astype(np.bool_)
        )
    values = np.array(cond.values, np.bool_)  # a writable copy
    if values.size >= 2:
        first, second = rng.permutation(values.size)[:2]
        values.flat[first], values.flat[second] = True, False
    cond.values = values


@recipe("SELECT")
def select(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    # No REQUIRE: values pass through unchanged, special values included.  The three
    # operands broadcast independently, so each may repeat along different axes.
    dt = rc.dtype("in_out_t")
    r = float_regime(draw, dt, rc=rc) if dt.is_float else None
    spec = elementwise(draw, rc, ranges={"input2": r, "input3": r} if r else {})
    _mixed_condition(draw, spec)
    add_specials(draw, spec, ("input2", "input3"), rc)
    share_values(draw, spec, 1, 2)  # equal choices: a wrong pick goes unseen there
    return spec


@recipe("SIN")
def sin(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    return float_unary(draw, rc, rc.dtype("in_out_t"))


register_broadcast_breakers(("SELECT",), SELECT_BROADCAST_CLAUSE)

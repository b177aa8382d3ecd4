"""Recipes and breakers for AVG_POOL2D_ADAPTIVE and MAX_POOL2D_ADAPTIVE (TOSA 1.1).

The 1.1 draft defines them by AVG_POOL2D's and MAX_POOL2D's pseudocode, with kernel,
stride and pad as ``shape_t`` inputs (reference/ops/adaptive_pool.py).  So a case is the
pooling recipe's (its geometry, values, data sets, zero points and nan_mode), with those
three attributes turned into constant shape inputs in argument order; the zero points
stay drawn by name, and ``CaseSpec.in_revision`` makes them the [1] inputs tosa.xml
declares when the graph is built.  With the shape inputs in the case, the level cases
of MAX_KERNEL and MAX_STRIDE find kernel_y ... stride_x there (level_limits.bind).

The breakers are the window rules' (pool_geometry.register_window_breakers: they edit
the shape inputs), a shape input of another length than declared, AVG's acc_type, and
its zero points' rules as TOSA 1.0 on spells them for [1] input tensors.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from conformance import dtypes
from conformance.dtypes import I8, DType
from conformance.operator_table import OperatorTable, family
from reference.arguments import INPUTS_CLAUSE, TYPES_CLAUSE
from reference.ops.tensor_conv import input_zero_point_clause
from strategies.case import CaseSpec, TensorDraw, converted, shape_tensor
from strategies.invalid import breaks, broken
from strategies.recipes import Recipe, RecipeContext, recipe
from strategies.recipes.pool_geometry import register_window_breakers
from strategies.recipes.tensor_pool_fft import acc_type_unsupported, avg_pool2d, max_pool2d

# Each operator and the recipe of the operator whose pseudocode it has.
POOLING: OperatorTable[Recipe] = OperatorTable(
    {
        "AVG_POOL2D_ADAPTIVE": avg_pool2d,
        "MAX_POOL2D_ADAPTIVE": max_pool2d,
    }
)
ADAPTIVE = family(tuple(POOLING))
ZERO_POINTS = ("input_zp", "output_zp")  # AVG_POOL2D_ADAPTIVE's, both typed in_out_t
_RETYPES = (dtypes.I8, dtypes.I16, dtypes.I32, dtypes.FP16, dtypes.BF16, dtypes.FP32)


def window_inputs(rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """``spec`` with every attribute the operator declares as a ``shape_t`` input
    (kernel, stride, pad) moved to a constant shape input, in argument order."""
    moved = [a.name for a in rc.op_spec.inputs if a.type == "shape_t" and a.name in spec.attributes]
    shapes = [shape_tensor(n, spec.attributes[n]) for n in moved]
    attributes = {k: v for k, v in spec.attributes.items() if k not in moved}
    spec.inputs = [*spec.inputs, *shapes]
    spec.attributes = attributes
    return spec


@recipe(*ADAPTIVE)
def adaptive_pool(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    drawn = POOLING[rc.name](draw, rc)
    assert isinstance(drawn, CaseSpec)
    return window_inputs(rc, drawn)


# -- breakers ------------------------------------------------------------------------------

register_window_breakers(*ADAPTIVE)


@breaks(*ADAPTIVE, clause=INPUTS_CLAUSE)
def window_input_length(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """kernel, stride or pad with one value too many or too few: the argument declares
    [2], [2] and [4] (the draft's attribute rule, now an input's)."""
    out = broken(spec, INPUTS_CLAUSE)
    name = draw(st.sampled_from(["kernel", "stride", "pad"]), label="shape input")
    values = [int(v) for v in np.asarray(out.tensor(name).values).reshape(-1)]
    longer = draw(st.booleans(), label="one more value")
    out.set_shape_input(name, [*values, values[-1]] if longer else values[:-1])
    return out


breaks("AVG_POOL2D_ADAPTIVE", clause=TYPES_CLAUSE)(acc_type_unsupported)


def _not_i8(rc: RecipeContext) -> bool:
    return rc.dtype("in_out_t") is not I8


def _nonzero(draw: st.DrawFn, dt: DType, label: str) -> int | float:
    """A zero point other than 0 that the type holds."""
    if dt.is_float:
        return draw(st.sampled_from([1.0, -1.0, 0.5, -128.0, 127.0]), label=label)
    lo, hi = dt.int_range
    return draw(st.one_of(st.integers(lo, -1), st.integers(1, hi)), label=label)


def _only_i8_breaker(name: str) -> None:
    clause = input_zero_point_clause(name, "in_out_t")

    @breaks("AVG_POOL2D_ADAPTIVE", clause=clause, applies=_not_i8)
    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        """A non-zero zero point where in_out_t is not i8; input_zp, checked first,
        stays 0 when output_zp is the one broken."""
        dt = rc.dtype("in_out_t")
        out = broken(spec, clause)
        out.attributes[name] = _nonzero(draw, dt, name)
        if name == "output_zp":
            out.attributes["input_zp"] = 0.0 if dt.is_float else 0
        return out

    fn.__name__ = f"adaptive_{name}_not_i8"


_only_i8_breaker("input_zp")
_only_i8_breaker("output_zp")


def _as_operand(
    rc: RecipeContext, spec: CaseSpec, name: str, shape: tuple[int, ...], dt: DType
) -> None:
    """The drawn zero point attribute ``name`` as a constant tensor of ``shape`` and
    ``dt``, placed among the inputs where the argument is declared (in_revision lays out
    the drawn inputs by position, so it goes before kernel, stride and pad)."""
    value = spec.attributes.pop(name)
    data = np.full(shape, value, dtype=np.float64 if isinstance(value, float) else np.int64)
    declared = [a.name for a in rc.op_spec.inputs]
    before = set(declared[: declared.index(name)])
    at = sum(1 for t in spec.inputs if t.name in before)
    spec.inputs.insert(at, TensorDraw(name, shape, dt, converted(data, dt), const=True))


@breaks("AVG_POOL2D_ADAPTIVE", clause=INPUTS_CLAUSE)
def zero_point_shape(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A zero-point tensor that is not [1]: two or three elements, or rank 2."""
    out = broken(spec, INPUTS_CLAUSE)
    name = draw(st.sampled_from(ZERO_POINTS), label="zero point")
    shape = draw(st.sampled_from([(2,), (3,), (1, 1)]), label="zero point shape")
    _as_operand(rc, out, name, shape, rc.dtype("in_out_t"))
    return out


@breaks("AVG_POOL2D_ADAPTIVE", clause=TYPES_CLAUSE)
def zero_point_type(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A zero-point tensor of another type than in_out_t, which the input has bound."""
    out = broken(spec, TYPES_CLAUSE)
    name = draw(st.sampled_from(ZERO_POINTS), label="zero point")
    bound = rc.dtype("in_out_t")
    other = draw(st.sampled_from([t for t in _RETYPES if t is not bound]), label="zp type")
    _as_operand(rc, out, name, (1,), other)
    return out

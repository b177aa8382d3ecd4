"""Breakers for the zero points of AVG_POOL2D, the convolutions and MATMUL where the
revision passes them as [1] input tensors (TOSA 1.0).

The recipes draw every zero point by argument name and ``CaseSpec.in_revision`` makes
it a constant input there.  The draft's zero-point breakers (tensor_conv,
tensor_pool_fft) apply where the zero point is an attribute; these apply where it is
an input, and break:

* the 'zero point only for i8' ERROR_IF, spelled as the revision writes it
  (``reference.ops.tensor_conv.zero_point_clause``);
* the argument declarations that replaced the draft's attribute check (an attribute
  value outside the type; a tensor of the type cannot hold one): a zero-point tensor
  that is not of shape [1], and one whose element type is not its type variable's.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from conformance import dtypes
from conformance.dtypes import I8, DType
from reference.arguments import INPUTS_CLAUSE
from reference.ops.tensor_conv import (
    MATMUL_ZP_INPUT_CLAUSE,
    input_zero_point_clause,
    zero_point_is_input,
)
from strategies.case import CaseSpec, TensorDraw, converted
from strategies.invalid import TYPE_CLAUSE, breaks, broken
from strategies.recipes import RecipeContext

# Each operator's zero points and the type variable each one has.
ZERO_POINTS: dict[str, tuple[tuple[str, str], ...]] = {
    "AVG_POOL2D": (("input_zp", "in_out_t"), ("output_zp", "in_out_t")),
    "CONV2D": (("input_zp", "in_t"), ("weight_zp", "weight_t")),
    "CONV3D": (("input_zp", "in_t"), ("weight_zp", "weight_t")),
    "DEPTHWISE_CONV2D": (("input_zp", "in_t"), ("weight_zp", "weight_t")),
    "TRANSPOSE_CONV2D": (("input_zp", "in_t"), ("weight_zp", "weight_t")),
    "MATMUL": (("A_zp", "in_t"), ("B_zp", "in_t")),
}
_RETYPES = (dtypes.I8, dtypes.I16, dtypes.I32, dtypes.FP16, dtypes.BF16, dtypes.FP32)


def _inputs(rc: RecipeContext) -> bool:
    """The operator takes its zero points as input tensors."""
    zps = ZERO_POINTS.get(rc.name, ())
    return bool(zps) and all(zero_point_is_input(rc.op_spec, n) for n, _ in zps)


def _nonzero(draw: st.DrawFn, dt: DType, label: str) -> int | float:
    """A zero point other than 0 that the type holds."""
    if dt.is_float:
        return draw(st.sampled_from([1.0, -1.0, 0.5, -128.0, 127.0]), label=label)
    lo, hi = dt.int_range
    return draw(st.one_of(st.integers(lo, -1), st.integers(1, hi)), label=label)


def _only_i8_breaker(op: str, name: str, type_var: str, first: str | None) -> None:
    """``name`` non-zero where its type is not i8; a zero point checked before it
    (``first``) stays 0."""

    def applies(rc: RecipeContext) -> bool:
        return _inputs(rc) and rc.dtype(type_var) is not I8

    clause = input_zero_point_clause(name, type_var)

    @breaks(op, clause=clause, applies=applies)
    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        dt = rc.dtype(type_var)
        out = broken(spec, clause)
        out.attributes[name] = _nonzero(draw, dt, name)
        if first is not None:
            out.attributes[first] = 0.0 if dt.is_float else 0
        return out

    fn.__name__ = f"{op.lower()}_{name}_tensor_not_i8"


for _op in ("AVG_POOL2D", "CONV2D", "CONV3D", "DEPTHWISE_CONV2D", "TRANSPOSE_CONV2D"):
    (_a, _ta), (_b, _tb) = ZERO_POINTS[_op]
    _only_i8_breaker(_op, _a, _ta, None)
    _only_i8_breaker(_op, _b, _tb, _a if _op == "AVG_POOL2D" else None)


@breaks(
    "MATMUL",
    clause=MATMUL_ZP_INPUT_CLAUSE,
    applies=lambda rc: _inputs(rc) and rc.dtype("in_t") is not I8,
)
def matmul_zero_point_tensor(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A_zp, B_zp or both non-zero where in_t is not i8 (1.0.2 prints the rule without
    its '!': reference.ops.tensor_conv reads it as meant)."""
    out = broken(spec, MATMUL_ZP_INPUT_CLAUSE)
    dt = rc.dtype("in_t")
    which = draw(st.sampled_from([("A_zp",), ("B_zp",), ("A_zp", "B_zp")]), label="zero points")
    for name in which:
        out.attributes[name] = _nonzero(draw, dt, name)
    return out


def _as_tensor(spec: CaseSpec, name: str, shape: tuple[int, ...], dt: DType) -> None:
    """Replace the drawn zero point attribute by a constant tensor of ``shape`` and
    ``dt`` holding its value (in_revision keeps an operand the case already has)."""
    value = spec.attributes.pop(name)
    data = np.full(shape, value, dtype=np.float64 if isinstance(value, float) else np.int64)
    spec.inputs.append(TensorDraw(name, shape, dt, converted(data, dt), const=True))


@breaks(*ZERO_POINTS, clause=INPUTS_CLAUSE, applies=_inputs)
def zero_point_shape(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A zero-point tensor that is not [1]: two or three elements, or rank 2 (the
    argument declares shape [1], rank 1)."""
    out = broken(spec, INPUTS_CLAUSE)
    name, type_var = draw(st.sampled_from(ZERO_POINTS[rc.name]), label="zero point")
    shape = draw(st.sampled_from([(2,), (3,), (1, 1)]), label="zero point shape")
    _as_tensor(out, name, shape, rc.dtype(type_var))
    return out


@breaks(*ZERO_POINTS, clause=TYPE_CLAUSE, applies=_inputs)
def zero_point_type(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A zero-point tensor of another element type than its type variable, which the
    data operand has already bound (an i16 input_zp for an i8 input, ...)."""
    out = broken(spec, TYPE_CLAUSE)
    name, type_var = draw(st.sampled_from(ZERO_POINTS[rc.name]), label="zero point")
    bound = rc.dtype(type_var)
    other = draw(st.sampled_from([t for t in _RETYPES if t is not bound]), label="zp type")
    _as_tensor(out, name, (1,), other)
    return out

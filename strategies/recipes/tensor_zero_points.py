"""Breakers for the zero points of AVG_POOL2D, the convolutions, MATMUL and MATMUL_T
where the revision passes them as [1] input tensors (TOSA 1.0 and 1.1).

The recipes draw every zero point by argument name and ``CaseSpec.in_revision`` makes
it a constant input there.  The draft's zero-point breakers (tensor_conv,
tensor_pool_fft) apply where the zero point is an attribute; these apply where it is
an input, and break:

* the 'zero point only for i8' ERROR_IF, spelled as the revision writes it
  (``reference.ops.tensor_conv.zero_point_clause``; MATMUL's one rule for both zero
  points, or 1.1's one per zero point, ``matmul_zero_point_rules``);
* the argument declarations that replaced the draft's attribute check (an attribute
  value outside the type; a tensor of the type cannot hold one): a zero-point tensor
  that is not of shape [1], and one whose element type is not its type variable's.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from conformance import dtypes
from conformance.dtypes import I8, DType
from conformance.operator_table import OperatorTable, family
from reference.arguments import INPUTS_CLAUSE, TYPES_CLAUSE
from reference.ops.tensor_conv import (
    MATMUL_ZP_INPUT_CLAUSE,
    input_zero_point_clause,
    matmul_zero_point_rules,
    zero_point_is_input,
    zero_point_type_var,
)
from strategies.case import CaseSpec, TensorDraw, converted
from strategies.invalid import breaks, broken
from strategies.recipes import RecipeContext
from strategies.recipes.tensor_conv import drawable

# Each operator's zero points.  The type each one's rule tests is read from the
# declarations (reference.ops.tensor_conv.zero_point_type_var: its operand's element
# type); the type of the zero-point tensor itself is its own declaration's (in_t up to
# TOSA 1.0, 1.1's in_zp_t / A_zp_t).
ZERO_POINTS: OperatorTable[tuple[str, ...]] = OperatorTable(
    {
        "AVG_POOL2D": ("input_zp", "output_zp"),
        "CONV2D": ("input_zp", "weight_zp"),
        "CONV3D": ("input_zp", "weight_zp"),
        "DEPTHWISE_CONV2D": ("input_zp", "weight_zp"),
        "TRANSPOSE_CONV2D": ("input_zp", "weight_zp"),
        "MATMUL": ("A_zp", "B_zp"),
        "MATMUL_T": ("A_zp", "B_zp"),
    }
)
_RETYPES = (dtypes.I8, dtypes.I16, dtypes.I32, dtypes.FP16, dtypes.BF16, dtypes.FP32)
_MATMULS = family(("MATMUL", "MATMUL_T"))


def _inputs(rc: RecipeContext) -> bool:
    """The operator takes its zero points as input tensors, and its cases can be drawn."""
    zps = ZERO_POINTS.get(rc.name, ())
    return bool(zps) and all(zero_point_is_input(rc.op_spec, n) for n in zps) and drawable(rc)


def _nonzero(draw: st.DrawFn, dt: DType, label: str) -> int | float:
    """A zero point other than 0 that the type holds."""
    if dt.is_float:
        return draw(st.sampled_from([1.0, -1.0, 0.5, -128.0, 127.0]), label=label)
    lo, hi = dt.int_range
    return draw(st.one_of(st.integers(lo, -1), st.integers(1, hi)), label=label)


def _only_i8_breaker(op: str, name: str, type_var: str, first: str | None) -> None:
    """``name`` non-zero where its operand's type (``type_var``, as every revision
    declares it for these operators) is not i8; a zero point checked before it
    (``first``) stays 0."""

    def applies(rc: RecipeContext) -> bool:
        return (
            _inputs(rc)
            and zero_point_type_var(rc.op_spec, name) == type_var
            and rc.dtype(type_var) is not I8
        )

    clause = input_zero_point_clause(name, type_var)

    @breaks(op, clause=clause, applies=applies)
    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        dt = rc.arg_dtype(name)
        out = broken(spec, clause)
        out.attributes[name] = _nonzero(draw, dt, name)
        if first is not None:
            out.attributes[first] = 0.0 if dt.is_float else 0
        return out

    fn.__name__ = f"{op.lower()}_{name}_tensor_not_i8"


_TYPE_VARS = {"input_zp": "in_t", "weight_zp": "weight_t"}
for _op in ("CONV2D", "CONV3D", "DEPTHWISE_CONV2D", "TRANSPOSE_CONV2D"):
    for _zp in ZERO_POINTS[_op]:
        _only_i8_breaker(_op, _zp, _TYPE_VARS[_zp], None)
_only_i8_breaker("AVG_POOL2D", "input_zp", "in_out_t", None)
_only_i8_breaker("AVG_POOL2D", "output_zp", "in_out_t", "input_zp")


def _matmul_rule_breaker(op: str, zps: tuple[str, ...], type_var: str, clause: str) -> None:
    """MATMUL's (MATMUL_T's) zero-point rule ``clause`` broken where the revision has
    it (matmul_zero_point_rules): one rule for both zero points where A and B share
    in_t (TOSA 1.0; 1.0.2 prints it without its '!', read as meant), one per zero point
    where each has its own type (TOSA 1.1's A_t, B_t).  A rule checked before it
    holds already: the valid case gives A_zp 0 unless A_t is i8."""

    def applies(rc: RecipeContext) -> bool:
        rules = matmul_zero_point_rules(rc.op_spec)
        return _inputs(rc) and clause in {c for *_, c in rules} and rc.dtype(type_var) is not I8

    @breaks(op, clause=clause, applies=applies)
    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        out = broken(spec, clause)
        which = [zps] if len(zps) == 1 else [("A_zp",), ("B_zp",), ("A_zp", "B_zp")]
        for name in draw(st.sampled_from(which), label="zero points"):
            out.attributes[name] = _nonzero(draw, rc.arg_dtype(name), name)
        return out

    one = len(zps) == 1
    fn.__name__ = f"{op.lower()}_{zps[0]}_tensor_not_i8" if one else "matmul_zero_point_tensor"


_matmul_rule_breaker("MATMUL", ("A_zp", "B_zp"), "in_t", MATMUL_ZP_INPUT_CLAUSE)
for _op in _MATMULS:
    for _zp, _var in (("A_zp", "A_t"), ("B_zp", "B_t")):
        _matmul_rule_breaker(_op, (_zp,), _var, input_zero_point_clause(_zp, _var))


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
    name = draw(st.sampled_from(ZERO_POINTS[rc.name]), label="zero point")
    shape = draw(st.sampled_from([(2,), (3,), (1, 1)]), label="zero point shape")
    _as_tensor(out, name, shape, rc.arg_dtype(name))
    return out


@breaks(*ZERO_POINTS, clause=TYPES_CLAUSE, applies=_inputs)
def zero_point_type(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A zero-point tensor of another element type than its declaration binds (its
    operand's type, or 1.1's in_zp_t / A_zp_t, which the mode ties to it): an i16
    input_zp for an i8 input, ..."""
    out = broken(spec, TYPES_CLAUSE)
    name = draw(st.sampled_from(ZERO_POINTS[rc.name]), label="zero point")
    bound = rc.arg_dtype(name)
    other = draw(st.sampled_from([t for t in _RETYPES if t is not bound]), label="zp type")
    _as_tensor(out, name, (1,), other)
    return out

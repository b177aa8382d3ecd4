"""Element-wise unary operators (tosa.xml group elementwise-unary).

Floating-point special values follow the per-operator behaviour tables of the spec
(signed zeros, infinities, NaN), which numpy's IEEE float64 functions give directly.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from conformance.spec import OperatorSpec
from reference import arithmetic as ar
from reference.broadcast import check_same_shape
from reference.context import OpContext
from reference.ops.tensor_conv import attribute_zero_point_clause, input_zero_point_clause
from reference.pseudocode_revisions import pseudocode_1_1
from reference.registry import implements


def negate_zero_point_clause(zp_name: str, as_input: bool) -> str:
    """NEGATE's 'zero point only for i8' ERROR_IF of ``zp_name`` as the revision that
    declares the zero point writes it: ``in_out_t != i8_t`` where it is an attribute
    (the draft), ``!is_same<in_out_t,i8_t>()`` where it is a [1] input tensor (TOSA 1.0
    on); the words are the tensor operators' (reference.ops.tensor_conv)."""
    if as_input:
        return input_zero_point_clause(zp_name, "in_out_t")
    return attribute_zero_point_clause(zp_name, "in_out_t")


def zero_point_clause(op_spec: OperatorSpec, zp_name: str) -> str:
    """NEGATE's rule for ``zp_name`` as ``op_spec``'s revision declares the zero point."""
    return negate_zero_point_clause(zp_name, any(a.name == zp_name for a in op_spec.inputs))


# ERROR_IF clauses as the pseudocode states them (recipes and breakers import them):
# the draft's, whose zero points are attributes.
INPUT1_ZP_CLAUSE = negate_zero_point_clause("input1_zp", as_input=False)
OUTPUT_ZP_CLAUSE = negate_zero_point_clause("output_zp", as_input=False)


Result = dict[str, np.ndarray | list[np.ndarray]]
FloatFn = Callable[[np.ndarray], np.ndarray]


def _float_unary(fn: FloatFn) -> Callable[[OpContext], Result]:
    def run(ctx: OpContext) -> Result:
        check_same_shape(ctx, "input1")
        with np.errstate(all="ignore"):  # 1/0, log(-1), cos(inf): IEEE results wanted
            return {"output": fn(ar.as_float(ctx.arg("input1")))}

    return run


def _rsqrt(x: np.ndarray) -> np.ndarray:
    # sqrt(-0.0) is -0.0 (IEEE), so RSQRT(-0) is -inf as the behaviour table has it;
    # -0.0 < 0 is false, so it is not caught by the NaN branch.
    return np.where(x < 0, np.nan, 1.0 / np.sqrt(x))


implements("CEIL")(_float_unary(np.ceil))
implements("FLOOR")(_float_unary(np.floor))
implements("EXP")(_float_unary(np.exp))
implements("LOG")(_float_unary(np.log))  # log(+-0) = -inf, log(x < 0) = NaN
implements("RECIPROCAL")(_float_unary(lambda x: 1.0 / x))
implements("RSQRT")(_float_unary(_rsqrt))


def first_input(ctx: OpContext) -> str:
    """The name the revision gives the operator's (first) input: COS, SIN and TABLE
    read ``input`` in the draft and ``input1`` from TOSA 1.0."""
    return ctx.op_spec.inputs[0].name


@implements("COS")
def cos(ctx: OpContext) -> Result:
    name = first_input(ctx)
    check_same_shape(ctx, name)
    with np.errstate(all="ignore"):
        return {"output": np.cos(ar.as_float(ctx.arg(name)))}


@implements("ABS")
def abs_(ctx: OpContext) -> Result:
    dt = ctx.dtype("in_out_t")
    shape = check_same_shape(ctx, "input1")
    x = ctx.arg("input1")
    if dt.is_float:
        # The behaviour table: -0 -> +0, -inf -> +inf, NaN stays NaN.
        return {"output": np.abs(ar.as_float(x))}
    v = ar.as_int(x)
    # TOSA 1.0 tests static_cast<int32_t>(value1) < 0.0, 1.1 value1 < 0: the same for
    # every integer type (the float branch above follows the behaviour table).
    negated, checks = ar.add_sub_rules(
        0, v, dt, sub=True, sign_tests=pseudocode_1_1(ctx.revision), prefix="apply_sub_s: "
    )
    # Only negative elements go through apply_sub_s, so only they carry its REQUIREs.
    checks = [(clause, (v >= 0) | ok) for clause, ok in checks]
    ar.require_each(ctx, shape, checks, {"value1": v})
    return {"output": np.where(v < 0, negated, v)}


@implements("BITWISE_NOT")
def bitwise_not(ctx: OpContext) -> Result:
    check_same_shape(ctx, "input1")
    return {"output": np.invert(ar.as_int(ctx.arg("input1")))}


@implements("CLZ")
def clz(ctx: OpContext) -> Result:
    check_same_shape(ctx, "input1")
    # count_leading_zeros over the operand's width: 32 bits, 64 for TOSA 1.1's i64.
    bits = ctx.dtype("in_out_t").bits
    return {"output": ar.count_leading_zeros(ctx.arg("input1"), bits)}


@implements("LOGICAL_NOT")
def logical_not(ctx: OpContext) -> Result:
    check_same_shape(ctx, "input1")
    return {"output": np.logical_not(ctx.arg("input1").astype(np.bool_))}


@implements("NEGATE")
def negate(ctx: OpContext) -> Result:
    dt = ctx.dtype("in_out_t")
    in_zp, out_zp = ctx.attr("input1_zp", 0), ctx.attr("output_zp", 0)
    in_clause = zero_point_clause(ctx.op_spec, "input1_zp")
    out_clause = zero_point_clause(ctx.op_spec, "output_zp")
    ctx.error_if(dt.name != "i8" and in_zp != 0, in_clause, f"{dt}")
    ctx.error_if(dt.name != "i8" and out_zp != 0, out_clause, f"{dt}")
    shape = check_same_shape(ctx, "input1")
    x = ctx.arg("input1")
    if dt.is_float:
        # Plain sign flip, as the behaviour table states (+0 -> -0, inf -> -inf).  Read
        # literally, 0 - (x - 0) + 0 would turn +0 into +0 and clip infinities.
        return {"output": -ar.as_float(x)}
    acc = ctx.dtype("acc_t")
    signs = pseudocode_1_1(ctx.revision)  # 1.1 states the REQUIREs as sign tests
    step1, checks1 = ar.add_sub_rules(
        x, int(in_zp), acc, sub=True, sign_tests=signs, prefix="apply_sub_s (value1 - input1_zp): "
    )
    step2, checks2 = ar.add_sub_rules(
        0, step1, acc, sub=True, sign_tests=signs, prefix="apply_sub_s (0 - value): "
    )
    add_prefix = "apply_add_s (value + output_zp): "
    step3, checks3 = ar.add_sub_rules(
        step2, int(out_zp), acc, sub=False, sign_tests=signs, prefix=add_prefix
    )
    ar.require_each(ctx, shape, [*checks1, *checks2, *checks3], {"value1": x})
    return {"output": np.clip(step3, dt.min, dt.max)}

"""Compliance descriptors for the block-scaled operators of TOSA 1.1
(reference/ops/block_scaled.py).

* CAST_FROM_BLOCK_SCALED: ``tosa_reference_check_from_block``, an ABS_ERROR check
  whose bound tensor is its err_bnd (one ulp of the output at the block value, times
  the scale, at least normal_min).
* MATMUL_T_BLOCK_SCALED, CONV2D_BLOCK_SCALED: the dot product rule, with KS = C and
  KW*KH*IC (Appendix A), local_bound true (they have no such attribute), no
  accumulator type (acc_t is out_t, fp32), the input types recorded for 1.1's relaxed
  ABS_BOUND / VARIANCE_ERROR_BOUND rows, and the abs-input pass made here: each data
  value's magnitude, at least normal_min of its type, times its block's scale as it
  is (reading ``mx-dot-abs-floor``: the floor applies to the value, in units of the
  scale; flooring the scaled product at normal_min<fp4e2m1> = 1.0 would ignore the
  scale), the bias's magnitude at least normal_min<out_t>.
* CAST_TO_BLOCK_SCALED: its rule (``tosa_reference_check_scale``) checks the values an
  implementation returns against the scale it returned, two outputs together:
  output_data is SCALED_VALUES, naming output_scale, with the input x as its bound
  tensor (the rule's ``ref_scale * ref_value``; mxint8's expected result is its rounded
  code, so x cannot be had from it); output_scale is BLOCK_SCALES, naming output_data,
  and is judged there.  Both must be graph outputs of the vector, or neither is
  described.
"""

from __future__ import annotations

import numpy as np

from conformance.compliance_descriptor import (
    BlockScalesParams,
    ComplianceDescriptor,
    DotProductParams,
    Mode,
    ScaledValuesParams,
)
from conformance.dtypes import DType
from conformance.operator_table import OperatorTable
from reference import compliance, mx
from reference.compliance.block_scaled import (
    CAST_FROM_RULE,
    CAST_TO_RULE,
    from_block_error_bound,
)
from reference.expectations import DescribeContext, NotDescribable, OutputCheck, describes
from reference.ops.block_scaled import block_size

_DOT = "1.1 introduction, Dot product accuracy requirements"

# Per operator: (data argument, its scale, type variable) for 'input' and 'weight'.
DOT_OPERANDS: OperatorTable[tuple[tuple[str, str, str], tuple[str, str, str]]] = OperatorTable(
    {
        "MATMUL_T_BLOCK_SCALED": (("A_data", "A_scale", "A_t"), ("B_data", "B_scale", "B_t")),
        "CONV2D_BLOCK_SCALED": (
            ("input_data", "input_scale", "in_t"),
            ("weight_data", "weight_scale", "weight_t"),
        ),
    }
)


@describes("CAST_FROM_BLOCK_SCALED")
def cast_from(ctx: DescribeContext) -> OutputCheck:
    bs = block_size_of(ctx)
    # The exact x * scale (the stored output is rounded to out_t).
    ref = mx.dequantize(
        mx.decode(ctx.arg("input_data"), ctx.type_of("in_t")),
        mx.decode(ctx.arg("input_scale"), ctx.type_of("scale_t")),
        bs,
    )
    scale = mx.scale_per_element(mx.decode(ctx.arg("input_scale"), ctx.type_of("scale_t")), bs)
    bound = from_block_error_bound(ref, scale, ctx.dtype)
    desc = compliance.abs_error(ctx.dtype, CAST_FROM_RULE, magnitude=compliance.Magnitude.BOUND)
    return OutputCheck(desc, bound)


# mxint8 (fixed-point) values are described here too: integer_outputs lets them in.
@describes("CAST_TO_BLOCK_SCALED", integer_outputs=True)
def cast_to(ctx: DescribeContext) -> OutputCheck:
    values = ctx.operands.outputs["output_data"][0]
    scales = ctx.operands.outputs["output_scale"][0]
    missing = [n for n in (values, scales) if n not in ctx.block.outputs]
    if missing:
        raise NotDescribable(
            "CAST_TO_BLOCK_SCALED's precision rule (tosa_reference_check_scale) checks "
            f"output_data with output_scale: {missing[0]!r} is no output of the graph"
        )
    if ctx.output_arg == "output_scale":
        scale_params = BlockScalesParams(values)
        return OutputCheck(
            ComplianceDescriptor(Mode.BLOCK_SCALES, ctx.dtype, CAST_TO_RULE, scale_params)
        )
    params = ScaledValuesParams(scales, block_size_of(ctx))
    x = mx.decode(ctx.arg("input_data"), ctx.type_of("in_t")).astype(np.float64)
    return OutputCheck(ComplianceDescriptor(Mode.SCALED_VALUES, ctx.dtype, CAST_TO_RULE, params), x)


def block_size_of(ctx: DescribeContext) -> int:
    """The operator's block size, read as the reference reads it."""
    evaluated = ctx.evaluator.context(ctx.block, ctx.index, ctx.values)
    return block_size(evaluated)


def _abs_values(v: np.ndarray, dt: DType) -> np.ndarray:
    """max(|v|, normal_min<dt>) as fp64 values (NaN stays NaN)."""
    floor = 1.0 / mx.MXINT8_SCALE if dt.kind == "fixed" else float(dt.normal_min or 0.0)
    with np.errstate(invalid="ignore"):
        return np.where(np.isnan(v), v, np.maximum(np.abs(v), floor))


def abs_pass(ctx: DescribeContext) -> np.ndarray:
    """The operator rerun in fp64 on max(|data|, normal_min) with its scales as they are
    and max(|bias|, normal_min<out_t>): the dot product rule's per-element bound."""
    values = dict(ctx.values)
    for data, _, var in DOT_OPERANDS[ctx.operator.op]:
        name = ctx.operands.inputs[data][0]
        dt = ctx.type_of(var)
        values[name] = _abs_values(mx.decode(ctx.values[name], dt), dt)
    if "bias" in ctx.operands.inputs:
        name = ctx.operands.inputs["bias"][0]
        values[name] = _abs_values(np.asarray(ctx.values[name], np.float64), ctx.dtype)
    op_ctx = ctx.evaluator.context(ctx.block, ctx.index, values)
    with np.errstate(invalid="ignore", over="ignore"):
        out = ctx.evaluator.call(op_ctx)[ctx.output_arg]
    bound = np.asarray(out[0] if isinstance(out, list) else out, dtype=np.float64)
    # A NaN scale makes its outputs' bound NaN: the reference is NaN there too, and a
    # NaN reference requires a NaN result whatever the bound.
    return bound


def kernel_size(ctx: DescribeContext) -> int:
    """KS of Appendix A: C for MATMUL_T_BLOCK_SCALED, KW*KH*IC for CONV2D_BLOCK_SCALED."""
    if ctx.operator.op == "MATMUL_T_BLOCK_SCALED":
        return int(ctx.arg("A_data").shape[-1])
    _, kh, kw, ic = ctx.arg("weight_data").shape
    return int(kh * kw * ic)


@describes(*DOT_OPERANDS)
def dot_product(ctx: DescribeContext) -> OutputCheck:
    op = ctx.operator.op
    (_, _, in_var), (_, _, w_var) = DOT_OPERANDS[op]
    bias_abs_max = 0.0
    if "bias" in ctx.operands.inputs:
        b = np.abs(ctx.arg("bias").astype(np.float64))
        finite = b[np.isfinite(b)]
        # The abs pass floors the bias at normal_min<out_t>, so it always counts.
        bias_abs_max = max(float(finite.max()) if finite.size else 0.0, ctx.dtype.fp.normal_min)
        if not np.all(np.isfinite(b)):
            bias_abs_max = float(ctx.dtype.fp.normal_max)
    ks = kernel_size(ctx)
    params = DotProductParams(
        ks=ks,
        data_set=ctx.data_set,
        acc_dtype=ctx.dtype,  # no acc_t: the pseudocode accumulates in out_t
        bias_abs_max=bias_abs_max,
        local_bound=True,
        input_dtypes=(ctx.type_of(in_var), ctx.type_of(w_var)),
    )
    desc = ComplianceDescriptor(
        Mode.DOT_PRODUCT, ctx.dtype, f"{_DOT}, {op} KS={ks} S={ctx.data_set}", params
    )
    return OutputCheck(desc, abs_pass(ctx))

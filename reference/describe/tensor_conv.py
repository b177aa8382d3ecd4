"""Dot-product accuracy descriptors for CONV2D, CONV3D, DEPTHWISE_CONV2D,
TRANSPOSE_CONV2D, FULLY_CONNECTED and MATMUL (floating-point outputs; integer outputs
are exact and never reach a describer)."""

from __future__ import annotations

import numpy as np

from reference import compliance
from reference.datasets import kernel_size
from reference.expectations import DescribeContext, OutputCheck, describes
from reference.ops.tensor_conv import accumulator_dtype

# The argument that plays the rule's 'input' (replaced by its largest magnitude when
# local_bound is false); the others keep their own magnitudes in the abs pass.
DATA_ARGUMENT = {
    "CONV2D": "input",
    "CONV3D": "input",
    "DEPTHWISE_CONV2D": "input",
    "TRANSPOSE_CONV2D": "input",
    "FULLY_CONNECTED": "input",
    "MATMUL": "A",
}


def _bias_abs_max(ctx: DescribeContext) -> float:
    """max(abs(bias)); the rule only asks whether it is > 0, so a bias holding an
    infinity or NaN (no finite maximum) counts as non-zero via the largest finite
    value of the output type."""
    if "bias" not in ctx.operands.inputs:
        return 0.0
    b = np.abs(ctx.arg("bias").astype(np.float64))
    if b.size == 0:
        return 0.0
    if not np.all(np.isfinite(b)):
        return float(ctx.dtype.normal_max or 0.0)
    return float(np.max(b))


@describes(*DATA_ARGUMENT)
def dot_product_operator(ctx: DescribeContext) -> OutputCheck:
    op = ctx.operator.op
    shapes = {a: ctx.arg(a).shape for a in ctx.operands.inputs}
    ks = kernel_size(op, shapes, ctx.operator.attributes)
    acc = accumulator_dtype(op, ctx.attr("acc_type"), ctx.dtype)
    # The attribute as given (None when absent); rules.dot_product resolves the
    # default (false) and refuses it for operators that have no such attribute.
    attribute = ctx.attr("local_bound") if compliance.has_local_bound_attribute(op) else None
    desc = compliance.dot_product(
        op,
        ctx.dtype,
        acc,
        ks=ks,
        data_set=ctx.data_set,
        bias_abs_max=_bias_abs_max(ctx),
        local_bound=None if attribute is None else bool(attribute),
    )
    params = desc.params
    assert isinstance(params, compliance.DotProductParams)
    bound = ctx.abs_pass([DATA_ARGUMENT[op]], local_bound=params.local_bound)
    return OutputCheck(desc, bound)

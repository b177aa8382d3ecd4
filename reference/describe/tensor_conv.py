"""Dot-product accuracy descriptors for CONV2D, CONV3D, DEPTHWISE_CONV2D,
TRANSPOSE_CONV2D, FULLY_CONNECTED, MATMUL and MATMUL_T (floating-point outputs; integer
outputs are exact and never reach a describer).

A TOSA 1.1 block-scaled operand reaches the describer as the fp64 values of its
elements (reference.expectations.element_values); its declared composite type is what
input_dtypes gives the rule (whose relaxed row reads its value type)."""

from __future__ import annotations

import numpy as np

from conformance.block_tensor import is_block_scaled
from conformance.dtypes import DType
from conformance.operator_table import OperatorTable
from conformance.rounding import round_to_float64
from reference import compliance
from reference.datasets import kernel_size
from reference.expectations import DescribeContext, OutputCheck, describes
from reference.ops.tensor_conv import ConvAxis, accumulator_dtype, extra_multiplies_allowed

# The convolutions and the attribute holding their pads (before, after per axis).
CONV_AXES = OperatorTable(
    {
        "CONV2D": "pad",
        "CONV3D": "pad",
        "DEPTHWISE_CONV2D": "pad",
        "TRANSPOSE_CONV2D": "out_pad",
    }
)

# The argument that plays the rule's 'input' (replaced by its largest magnitude when
# local_bound is false); the others keep their own magnitudes in the abs pass.
DATA_ARGUMENT = OperatorTable(
    {
        "CONV2D": "input",
        "CONV3D": "input",
        "DEPTHWISE_CONV2D": "input",
        "TRANSPOSE_CONV2D": "input",
        "FULLY_CONNECTED": "input",
        "MATMUL": "A",
        "MATMUL_T": "A",
    }
)


# The argument that plays the rule's 'weight' (MATMUL's and MATMUL_T's B).
WEIGHT_ARGUMENT = OperatorTable(
    {op: "B" if data == "A" else "weight" for op, data in DATA_ARGUMENT.items()}
)


def input_dtypes(ctx: DescribeContext) -> tuple[DType, ...]:
    """The element types of the rule's 'input' and 'weight' as the operator declares
    them (in_t and weight_t; MATMUL's in_t twice up to TOSA 1.0, A_t and B_t in 1.1),
    which TOSA 1.1's ABS_BOUND and VARIANCE_ERROR_BOUND depend on."""
    op = ctx.operator.op
    return tuple(
        ctx.block.tensors[ctx.operands.inputs[a][0]].dtype
        for a in (DATA_ARGUMENT[op], WEIGHT_ARGUMENT[op])
    )


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
        input_dtypes=input_dtypes(ctx),
    )
    params = desc.params
    assert isinstance(params, compliance.DotProductParams)
    bound = ctx.abs_pass([DATA_ARGUMENT[op]], local_bound=params.local_bound)
    either = either_outputs(ctx)
    if either is not None:
        bound = np.where(either, np.inf, bound)
    return OutputCheck(desc, bound)


def either_outputs(ctx: DescribeContext) -> np.ndarray | None:
    """The convolution outputs a backend may compute either way where the revision
    allows the products of taps that read no input (``extra_multiplies_allowed``): those
    that meet an infinite or NaN weight at such a tap, where 0 * weight is NaN if
    formed and nothing if skipped.  They get no accuracy limit (a NaN reference still
    requires NaN).  None: no such output.

    Per spatial axis, ``reads[o, k]`` says whether output o's tap k reads the input; a
    tap reads only if it does on every axis, so an output meets a skipped tap with a
    bad weight unless every bad weight of its channel is at a tap it reads: the count of
    bad kernel offsets (any input channel) exceeds the count at read taps.
    """
    op = ctx.operator.op
    if op not in CONV_AXES or not extra_multiplies_allowed(ctx.spec.revision):
        return None
    weight = ctx.arg("weight").astype(np.float64)
    if is_block_scaled(ctx.block.tensors[ctx.operands.inputs["weight"][0]].dtype):
        # A block-scaled weight arrives as exact fp64 elements; the operator reads each
        # rounded to acc_t, where scale * value may overflow to infinity.
        weight = round_to_float64(accumulator_dtype(op, ctx.attr("acc_type"), ctx.dtype), weight)
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(weight)
    if not bad.any():
        return None
    x_shape = ctx.arg("input").shape
    out_shape = ctx.block.tensors[ctx.operands.outputs["output"][0]].shape
    rank = len(x_shape) - 2
    if op == "DEPTHWISE_CONV2D":  # [KH, KW, C, M] -> [C*M, KH, KW]
        kernel = bad.shape[:rank]
        per_offset = np.moveaxis(bad.reshape(*kernel, -1), -1, 0)
    else:  # [OC, kernel..., IC]
        kernel = bad.shape[1:-1]
        per_offset = bad.any(axis=-1)
    pads = [int(v) for v in ctx.attr(CONV_AXES[op])]
    strides = [int(v) for v in ctx.attr("stride")]
    dilations = [int(v) for v in ctx.attr("dilation", (1,) * rank)]
    reads = []
    for j in range(rank):
        a = ConvAxis(
            x_shape[1 + j], out_shape[1 + j], kernel[j], strides[j], dilations[j], pads[2 * j]
        )
        o = np.arange(a.size_out)[:, None]
        k = np.arange(a.kernel)[None, :]
        coord = a.transpose_coord if op == "TRANSPOSE_CONV2D" else a.conv_coord
        reads.append(coord(o, k)[1].astype(np.float64))
    outs, taps = "abc"[:rank], "ijk"[:rank]
    expr = ",".join(f"{o}{t}" for o, t in zip(outs, taps, strict=True))
    counted = per_offset.astype(np.float64)
    read_bad = np.einsum(f"{expr},z{taps}->{outs}z", *reads, counted)
    total = counted.reshape(counted.shape[0], -1).sum(axis=1)
    return np.broadcast_to((total > read_bad)[None], out_shape)

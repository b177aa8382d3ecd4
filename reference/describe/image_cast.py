"""RESIZE: its rule's error bound scales with the largest input magnitude.  RESCALE:
TOSA 1.0's INEXACT_ROUND allows a range of integers (the other roundings are exact).

CAST between plain types: its row of the precision table ("within 0.5 ulp of the
mathematical result", overflow to infinity, underflow to a zero of the correct sign)
depends on nothing but the types (``compliance.cast``: ULP 0.5 with zero sign, or
1.0's toward-zero allowance).  The reference value it is checked against is the exact
input value in fp64, or NaN where fp8e4m3's non-saturating conversion overflows
(reference/ops/type_conversion.py).  Integer outputs of RESIZE and CAST are exact,
which ``for_operator`` gives.  TOSA 1.1's block-scaled CASTs take the rules of the
type-conversion chapter's "casting from / to block-scaled types":

* from one (in_t bs32_*): ``tosa_reference_check_from_block<value_t, out_t>`` against
  ``v * s`` in fp64, the ABS_ERROR check CAST_FROM_BLOCK_SCALED's is (its bound tensor
  the err_bnd, from each element's value and its block's scale);
* to one (out_t bs32_*): ``tosa_reference_check_scale`` on the composite's scales and
  values, as CAST_TO_BLOCK_SCALED's two outputs are judged: SCALED_VALUES with the
  composite type (its scale_tensor_name the output itself) and the input x as bound.
"""

from __future__ import annotations

import numpy as np

from conformance.block_tensor import BlockScaled, is_block_scaled, scale_type, value_type
from conformance.compliance_descriptor import (
    ComplianceDescriptor,
    IntRangeParams,
    Mode,
    ScaledValuesParams,
)
from conformance.dtypes import DType
from reference import compliance, mx
from reference.compliance.block_scaled import from_block_error_bound
from reference.expectations import DescribeContext, OutputCheck, describes
from reference.ops import type_conversion as tc


@describes("RESIZE")
def resize(ctx: DescribeContext) -> OutputCheck:
    # err_bnd = max(abs(input)) * 0.006.  NaN inputs are left out of the maximum: the
    # outputs they reach are NaN references, which need a NaN result whatever the
    # bound, and the other outputs are bounded by the other inputs.
    # An infinite input makes the spec's bound infinite (any non-NaN result passes for
    # a non-NaN reference); ResizeParams takes finite values only, so the largest
    # double stands in for it: 0.006 of it still exceeds every format's range.
    mags = np.abs(ctx.arg("input").astype(np.float64))
    mags = mags[~np.isnan(mags)]
    input_abs_max = float(mags.max()) if mags.size else 0.0
    input_abs_max = min(input_abs_max, float(np.finfo(np.float64).max))
    return OutputCheck(compliance.resize(ctx.dtype, input_abs_max))


# RESCALE (TOSA 1.0), Precision Requirements: INEXACT_ROUND allows any integer within
# err_bnd of the fp64 scaling (reference.compliance.checker.int_range); SINGLE_ROUND and
# DOUBLE_ROUND (and the draft's RESCALE) are exact.
INEXACT_ROUND_RULE = "type_conversion: RESCALE Precision Requirements, INEXACT_ROUND"


def _zero_point(ctx: DescribeContext, name: str, dt: DType, unsigned: bool) -> int:
    """A zero point as RESCALE reads it: an input tensor's value (or an attribute's),
    its bits zero-extended for an unsigned side."""
    raw = ctx.arg(name) if name in ctx.operands.inputs else ctx.attr(name, 0)
    value = int(np.asarray(raw).reshape(-1)[0])
    return value & ((1 << dt.bits) - 1) if unsigned else value


@describes("RESCALE", integer_outputs=True)
def rescale(ctx: DescribeContext) -> OutputCheck:
    if ctx.attr("rounding_mode") != "INEXACT_ROUND":
        return OutputCheck(compliance.for_operator("RESCALE", ctx.dtype))
    in_t = ctx.type_of("in_t")
    in_uns = bool(ctx.attr("input_unsigned", False))
    out_uns = bool(ctx.attr("output_unsigned", False))
    raw = ctx.arg("input").astype(np.int64)
    value = (raw & ((1 << in_t.bits) - 1) if in_uns else raw) - _zero_point(
        ctx, "input_zp", in_t, in_uns
    )
    multiplier = ctx.arg("multiplier").astype(np.int64).reshape(-1)
    shift = ctx.arg("shift").astype(np.int64).reshape(-1)
    if not bool(ctx.attr("per_channel", False)):
        multiplier, shift = multiplier[:1].reshape(()), shift[:1].reshape(())
    out_zp = _zero_point(ctx, "output_zp", ctx.dtype, out_uns)
    scaled = tc.inexact_scaled(value, multiplier, shift, out_zp)
    params = IntRangeParams(out_zp, out_uns)
    desc = ComplianceDescriptor(Mode.INT_RANGE, ctx.dtype, INEXACT_ROUND_RULE, params)
    return OutputCheck(desc, scaled)


_CAST_RULES = "1.1 type_conversion, CAST Precision Requirements"
CAST_FROM_BLOCK_RULE = (
    f"{_CAST_RULES}, casting from block-scaled types: tosa_reference_check_from_block"
)
CAST_TO_BLOCK_RULE = f"{_CAST_RULES}, casting to block-scaled types: tosa_reference_check_scale"


@describes("CAST", integer_outputs=True)
def cast(ctx: DescribeContext) -> OutputCheck:
    in_t = ctx.type_of("in_t") if ctx.mode is not None else ctx.dtype
    if is_block_scaled(ctx.dtype):
        name = ctx.operands.outputs[ctx.output_arg][0]
        params = ScaledValuesParams(name, ctx.dtype.block_size)
        desc = ComplianceDescriptor(Mode.SCALED_VALUES, ctx.dtype, CAST_TO_BLOCK_RULE, params)
        # the rule's x: the input values in fp64 (the composite's are rounded)
        return OutputCheck(desc, ctx.arg("input").astype(np.float64))
    if is_block_scaled(in_t):
        given = ctx.evaluator.main_values[ctx.operands.inputs["input"][0]]
        assert isinstance(given, BlockScaled)
        # v * s in fp64 (the describer's element values) and each element's scale
        ref = ctx.arg("input")
        st = scale_type(in_t)
        scale = mx.decode(given.element_scales(), st)
        bound = from_block_error_bound(ref, scale, ctx.dtype)
        rule = f"{CAST_FROM_BLOCK_RULE} (value_t {value_type(in_t)})"
        desc = compliance.abs_error(ctx.dtype, rule, magnitude=compliance.Magnitude.BOUND)
        return OutputCheck(desc, bound)
    if ctx.dtype.is_float:
        return OutputCheck(compliance.cast(in_t, ctx.dtype))
    return OutputCheck(compliance.for_operator("CAST", ctx.dtype))

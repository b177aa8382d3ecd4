"""Mutants of the data nodes (reference/ops/data_nodes.py): CONST, IDENTITY."""

from __future__ import annotations

import numpy as np

from conformance.backends.mutants import Result, mutant
from conformance.backends.mutants.tools import output_of
from conformance.dtypes import I48
from reference import arithmetic as ar
from reference.context import OpContext
from reference.registry import OpFunction


@mutant(
    "identity-negative-zero-lost",
    ["IDENTITY"],
    "floating point, -0.0",
    "IDENTITY is folded into an add of +0.0 (x + 0.0), which turns -0.0 into +0.0",
    "float IDENTITY vectors holding -0.0 (EXACT_NAN checks the sign of zero)",
    breaks="IDENTITY.tosac: output = input1 (bit for bit)",
)
def _identity_negative_zero(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if not ctx.dtype("in_out_t").is_float:
        return result
    out = output_of(result)
    # only -0.0 changes: x + 0.0 keeps every other value (NaN stays NaN)
    return {"output": np.where(out == 0, np.zeros_like(out), out).astype(out.dtype)}


@mutant(
    "const-i48-low-32-bits",
    ["CONST"],
    "i48 values beyond the int32 range",
    "i48 constants are kept in a 32-bit constant buffer: values beyond int32 lose their "
    "high bits (sign-extended from bit 31)",
    "i48 CONST vectors with values beyond +-2**31",
    breaks="CONST.tosac: output = values (of type out_t, i48_t holds 48 bits)",
)
def _const_i48_low_bits(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if ctx.dtype("out_t") is not I48:
        return result
    return {"output": ar.wrap(output_of(result), 32)}

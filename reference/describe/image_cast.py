"""RESIZE: its rule's error bound scales with the largest input magnitude.

CAST needs no describer: its row of the precision table ("within 0.5 ulp of the
mathematical result", overflow to infinity, underflow to a zero of the correct sign)
depends on nothing but the output type, which ``compliance.for_operator`` already
gives (ULP 0.5 with zero sign).  The reference value it is checked against is the exact
input value in fp64, or NaN where fp8e4m3's non-saturating conversion overflows
(reference/ops/type_conversion.py).  Integer outputs of RESIZE and CAST are exact,
which ``for_operator`` also gives.
"""

from __future__ import annotations

import numpy as np

from reference import compliance
from reference.expectations import DescribeContext, OutputCheck, describes


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

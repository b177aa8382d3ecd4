"""Block-scaled composites (TOSA 1.1 bs32_fp8ue8m0_*) for hand-worked tests: built from
values and scale exponents, and read back."""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance import dtypes as D
from conformance.block_tensor import BlockScaled
from reference import mx
from reference.outcome import Outcome


def composite(dt: D.DType, values: Any, exponents: Any) -> BlockScaled:
    """A composite of ``values`` (codes for fp4e2m1, the numbers otherwise; mxint8: its
    raw int8 codes) whose scales are 2**exponents (None: the NaN scale), shaped as the
    values' blocks."""
    vt = D.dtype(dt.block_value)
    v = np.asarray(values)
    if vt is D.FP4E2M1:
        held = mx.from_bits(v, vt)
    elif vt is D.MXINT8:
        held = v.astype(np.int8)
    else:
        held = v.astype(np.float64).astype(vt.storage)
    e = np.array(exponents, dtype=object)
    codes = np.where(e == None, mx.UE8M0_NAN, np.where(e == None, 0, e) + mx.UE8M0_BIAS)  # noqa: E711
    return BlockScaled.of(dt, held, mx.from_bits(codes.astype(int), D.FP8UE8M0))


def exps(scales: np.ndarray) -> list[Any]:
    """The scales' exponents (None: NaN), in row-major order."""
    codes = scales.view(np.uint8).astype(int).reshape(-1)
    return [None if c == mx.UE8M0_NAN else c - mx.UE8M0_BIAS for c in codes]


def composite_result(outcome: Outcome, name: str = "y") -> BlockScaled:
    """The block-scaled output ``name`` of a valid outcome."""
    assert outcome.valid, str(outcome)
    y = outcome.outputs[name]
    assert isinstance(y, BlockScaled)
    return y

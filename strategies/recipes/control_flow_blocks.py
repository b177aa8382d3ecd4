"""The simple operators that control-flow and variable cases compute with in their
blocks, and the signatures (shape, element type) their tensor lists are made of.

Split from control_flow.py by job: these draw one block operator each; that module
draws the COND_IF / WHILE_LOOP graphs around them.  An operator's revision-specific
operands (TOSA 1.0's ``nan_mode``, MUL's ``[1]`` shift) follow the spec model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from conformance import dtypes
from conformance.builder import BlockBuilder
from conformance.dtypes import BOOL, DType
from strategies.values import ValueRange, special_values

# i32 data keeps to half the range: every block operator moves a value by at most
# I32_STEP, and all the iterations of a nest of loops stay far below 2**30 steps.
I32_DATA = ValueRange(low=-(2**30), high=2**30)
I32_STEP = 2**16


@dataclass(frozen=True)
class Sig:
    """A tensor's shape and element type, as block lists compare them."""

    shape: tuple[int, ...]
    dtype: DType


def data_range(dt: DType) -> ValueRange | None:
    return I32_DATA if dt is dtypes.I32 else None


# -- block operators -------------------------------------------------------------------


def _constant(draw: st.DrawFn, dt: DType, label: str) -> bool | int | float:
    if dt is BOOL:
        return draw(st.booleans(), label=label)
    if dt is dtypes.I32:
        return draw(st.integers(-I32_STEP, I32_STEP), label=label)
    if dt.is_int:
        return draw(st.integers(*dt.int_range), label=label)
    pool = [float(v) for v in special_values(dt)]
    return draw(st.one_of(st.sampled_from(pool), st.floats(-8.0, 8.0)), label=label)


def block_op(draw: st.DrawFn, b: BlockBuilder, src: str, dst: str, sig: Sig, tag: str) -> str:
    """Declare ``dst`` (of ``sig``) in ``b`` and compute it from ``src`` with one simple
    operator that no value of ``src`` can make fail; returns the operator's name."""
    dt, shape = sig.dtype, sig.shape
    choices = ["IDENTITY"]
    if dt is BOOL:
        choices += ["LOGICAL_NOT", "LOGICAL_XOR"]
    elif dt in (dtypes.I8, dtypes.I16):
        choices += ["BITWISE_NOT", "BITWISE_XOR"]
    elif dt is dtypes.I32:
        choices += ["BITWISE_NOT", "ABS", "ADD", "SUB", "MAXIMUM"]
    else:
        choices += ["ABS", "ADD", "SUB", "MUL", "MINIMUM", "MAXIMUM"]
    if shape:
        choices.append("REVERSE")
    op = draw(st.sampled_from(choices), label=f"{tag}: operator")
    b.tensor(dst, shape, dt)
    if op in ("IDENTITY", "LOGICAL_NOT", "BITWISE_NOT", "ABS"):
        b.op(op, [src], [dst])
    elif op == "REVERSE":
        b.op(op, [src], [dst], axis=draw(st.integers(0, len(shape) - 1), label=f"{tag}: axis"))
    else:
        # a constant broadcast along every dimension
        ones = (1,) * len(shape)
        value = np.full(ones, _constant(draw, dt, f"{tag}: constant")).astype(dt.storage)
        inputs = [src, b.tensor(f"{dst}_k", ones, dt, data=value)]
        op_spec = b.owner.spec.operator(op)
        if op == "MUL":
            # MUL's shift: rank 0 in the draft, [1] in TOSA 1.0: its declared shape
            declared = op_spec.argument("shift").shape
            shift_shape = (1,) * (len(declared.dims) if declared.kind == "dims" else 0)
            zero = np.zeros(shift_shape, np.int8)
            inputs.append(b.tensor(f"{dst}_shift", shift_shape, dtypes.I8, data=zero))
        attrs: dict[str, object] = {}
        if any(a.name == "nan_mode" for a in op_spec.attributes):
            # TOSA 1.0's MINIMUM / MAXIMUM: either NaN policy has one exact answer
            modes = ("PROPAGATE", "IGNORE")
            attrs["nan_mode"] = draw(st.sampled_from(modes), label=f"{tag}: nan_mode")
        b.op(op, inputs, [dst], **attrs)
    return op

"""Mutants of the shape operators (reference/ops/shape.py): ADD_SHAPE, SUB_SHAPE,
MUL_SHAPE, DIV_SHAPE, CONCAT_SHAPE, CONST_SHAPE, DIM."""

from __future__ import annotations

import numpy as np

from conformance.backends.mutants import Result, mutant, with_inputs
from conformance.backends.mutants.tools import output_of
from reference import arithmetic as ar
from reference.context import OpContext
from reference.registry import OpFunction

_ARITHMETIC = ("ADD_SHAPE", "SUB_SHAPE", "MUL_SHAPE", "DIV_SHAPE")


@mutant(
    "shape-values-int32",
    (*_ARITHMETIC, "CONCAT_SHAPE", "CONST_SHAPE"),
    "shape values or results beyond the int32 range",
    "shape_t is held in int32 (as TFLite and many runtimes hold dimensions): values and "
    "results beyond +-2**31 wrap",
    "shape vectors with values or results beyond +-2**31 (e.g. ADD_SHAPE [2**31 - 1] + "
    "[1], MUL_SHAPE [65536] * [65536])",
    breaks="shape chapter: shape_t elements are size_t (int64_t); apply_add_s<size_t> etc. "
    "are exact in it",
)
def _shape_int32(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its ERROR_IFs and REQUIREs, on the graph's values
    if ctx.name in _ARITHMETIC:
        a = np.asarray(ctx.arg("input1"), dtype=np.int64)
        b = np.asarray(ctx.arg("input2"), dtype=np.int64)
        a32, b32 = ar.wrap(a, 32), ar.wrap(b, 32)
        if not (np.array_equal(a, a32) and np.array_equal(b, b32)):
            # the operator on the 32-bit operands (a division by a wrapped 0 fails
            # its REQUIRE: the buggy backend divides by zero)
            result = original(with_inputs(ctx, input1=a32, input2=b32))
    return {"output": ar.wrap(output_of(result), 32)}


@mutant(
    "div-shape-floors",
    ["DIV_SHAPE"],
    "inexact quotients of mixed sign",
    "DIV_SHAPE floors (Python //, as shape code in Python front ends computes it) instead "
    "of truncating toward zero",
    "DIV_SHAPE vectors with a negative operand and an inexact quotient ([-7] / [2] = [-3], "
    "not [-4])",
    breaks="DIV_SHAPE.tosac: output[index] = apply_intdiv_s<size_t>(input1[index], "
    "input2[index]) (C division, toward zero)",
)
def _div_shape_floors(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its ERROR_IF and REQUIREs (no division by zero)
    a = np.asarray(ctx.arg("input1"), dtype=np.int64).reshape(-1)
    b = np.asarray(ctx.arg("input2"), dtype=np.int64).reshape(-1)
    out = output_of(result).copy()
    inexact = (np.remainder(a, np.where(b == 0, 1, b)) != 0) & ((a < 0) != (b < 0)) & (b != 0)
    out.reshape(-1)[inexact] -= 1
    return {"output": out}


@mutant(
    "dim-axis-innermost-first",
    ["DIM"],
    "rank >= 2, shape[axis] != shape[rank - 1 - axis]",
    "the axis is read in the runtime's innermost-first dimension order without "
    "conversion: DIM returns shape[rank - 1 - axis]",
    "DIM vectors of rank >= 2 with an outer axis whose size differs from the mirrored one",
    breaks="DIM.tosac: output[0] = shape_dim(shape, axis)",
)
def _dim_innermost_first(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)  # its ERROR_IFs
    shape = ctx.input_tensor("input1").shape
    axis = int(ctx.attr("axis"))
    return {"output": np.array([shape[len(shape) - 1 - axis]], dtype=np.int64)}

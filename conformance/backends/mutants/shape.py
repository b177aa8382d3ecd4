"""Mutants of the shape operators (reference/ops/shape.py): ADD_SHAPE, SUB_SHAPE,
MUL_SHAPE, DIV_SHAPE, CONCAT_SHAPE, CONST_SHAPE, DIM, and TOSA 1.1's ASSERT_EQUAL_SHAPE,
DIV_CEIL_SHAPE, DIV_FLOOR_SHAPE, EXP2_SHAPE, LOG2_CEIL_SHAPE, LOG2_FLOOR_SHAPE,
MAX_SHAPE, MIN_SHAPE, MOD_SHAPE and SLICE_SHAPE.

The 1.1 mutants call the reference first (its LEVEL_CHECKs, ERROR_IFs and REQUIREs
hold), then compute the result as the buggy backend would, on Python integers."""

from __future__ import annotations

import numpy as np

from conformance.backends.mutants import Result, mutant, with_inputs
from conformance.backends.mutants.tools import output_of
from conformance.operator_table import family
from reference import arithmetic as ar
from reference.context import OpContext
from reference.ops.shape import tensor_size_range
from reference.registry import OpFunction

_ARITHMETIC = family(("ADD_SHAPE", "SUB_SHAPE", "MUL_SHAPE", "DIV_SHAPE"))


@mutant(
    "shape-values-int32",
    (*_ARITHMETIC, "CONCAT_SHAPE", "CONST_SHAPE"),
    "shape values or results beyond the int32 range (the 2024 draft; TOSA 1.1 at level none "
    "only: at 8K its tensor_size_t is int32's range)",
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


# -- TOSA 1.1's EXT-SHAPE operators ---------------------------------------------------------


def _shape_arg(ctx: OpContext, name: str) -> list[int]:
    return [int(v) for v in np.asarray(ctx.arg(name), dtype=np.int64).reshape(-1)]


def _shape_out(values: list[int]) -> Result:
    # held as the reference holds shape values: int64 (a value beyond it saturates)
    lo, hi = -(1 << 63), (1 << 63) - 1
    return {"output": np.array([min(max(v, lo), hi) for v in values], dtype=np.int64)}


@mutant(
    "div-ceil-shape-sum-overflows",
    ["DIV_CEIL_SHAPE"],
    "input1 + input2 - 1 beyond tensor_size_t (input1 near (1 << MAX_LOG2_SIZE) - 1)",
    "DIV_CEIL_SHAPE as the idiom (a + b - 1) / b in tensor_size_t: the sum wraps for a "
    "dividend near the type's maximum (at 8K, a 32-bit tensor_size_t)",
    "DIV_CEIL_SHAPE vectors with a dividend near the top of tensor_size_t and a divisor "
    "above 1 ((2**31 - 1) / 2 rounds up to 2**30, not to a negative number)",
    breaks="DIV_CEIL_SHAPE.tosac: apply_intdiv_s(input1, input2), plus 1 where input1 % "
    "input2 is not 0: no intermediate sum",
)
def _div_ceil_sum_overflows(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)  # its ERROR_IF and REQUIREs, and its LEVEL_CHECKs
    bits = ctx.level["MAX_LOG2_SIZE"] + 1  # the narrowest tensor_size_t of the level
    half = 1 << (bits - 1)
    out = []
    for a, b in zip(_shape_arg(ctx, "input1"), _shape_arg(ctx, "input2"), strict=True):
        s = ((a + b - 1 + half) % (1 << bits)) - half  # the wrapped sum
        out.append(s // b if s >= 0 else -((-s) // b))  # C division, toward zero
    return _shape_out(out)


@mutant(
    "div-floor-shape-fp32",
    ["DIV_FLOOR_SHAPE"],
    "dividends or divisors beyond 2**24",
    "DIV_FLOOR_SHAPE computed on the float ALU: floor(float(a) / float(b)) in fp32, so "
    "large sizes lose their low bits",
    "DIV_FLOOR_SHAPE vectors with dividends beyond 2**24 ((2**31 - 1) / 1 gives 2**31, "
    "16777217 / 1 gives 16777216)",
    breaks="DIV_FLOOR_SHAPE.tosac: output = apply_intdiv_s<tensor_size_t>(input1, input2), "
    "exact integer division",
)
def _div_floor_fp32(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)
    a = np.asarray(_shape_arg(ctx, "input1"), dtype=np.float32)
    b = np.asarray(_shape_arg(ctx, "input2"), dtype=np.float32)
    with np.errstate(over="ignore"):
        q = np.floor(a / b)  # in fp32
    return _shape_out([int(v) for v in q.astype(np.float64)])


@mutant(
    "mod-shape-mask",
    ["MOD_SHAPE"],
    "divisors that are not a power of two",
    "MOD_SHAPE strength-reduced to input1 & (input2 - 1), the power-of-two shortcut, "
    "without checking that input2 is one",
    "MOD_SHAPE vectors with divisors that are not powers of two (7 % 3 = 1, not 7 & 2 = 2)",
    breaks="MOD_SHAPE.tosac: output = input1[index] % input2[index]",
)
def _mod_mask(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)
    pairs = zip(_shape_arg(ctx, "input1"), _shape_arg(ctx, "input2"), strict=True)
    return _shape_out([a & (b - 1) for a, b in pairs])


@mutant(
    "min-max-shape-unsigned",
    ["MIN_SHAPE", "MAX_SHAPE"],
    "operands of opposite signs",
    "shape values compared as unsigned (size_t, as dimensions are in C++ runtimes): a "
    "negative value compares above every positive one",
    "MIN_SHAPE / MAX_SHAPE vectors pairing a negative value with a non-negative one "
    "(MIN_SHAPE(-1, 5) = -1, not 5)",
    breaks="MIN_SHAPE.tosac / MAX_SHAPE.tosac: apply_min_s / apply_max_s compare "
    "sign_extend<int64_t>(a) with sign_extend<int64_t>(b), signed",
)
def _min_max_unsigned(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)
    pick = min if ctx.name == "MIN_SHAPE" else max
    pairs = zip(_shape_arg(ctx, "input1"), _shape_arg(ctx, "input2"), strict=True)
    return _shape_out([pick(a, b, key=lambda v: v % (1 << 64)) for a, b in pairs])


@mutant(
    "exp2-shape-int32-shift",
    ["EXP2_SHAPE"],
    "exponents of 31 and above: level none only (MAX_LOG2_SIZE 63); at 8K EXP2_SHAPE "
    "REQUIREs input < MAX_LOG2_SIZE = 31, where the 32-bit shift is exact",
    "EXP2_SHAPE as 1 << input with a C int literal: the shift is done in 32 bits, so "
    "2**31 wraps to -2**31 and larger exponents shift by input mod 32 (as x86 does)",
    "EXP2_SHAPE vectors at level none with exponents of 31 to 62 (2**40, not 2**8)",
    breaks="EXP2_SHAPE.tosac: output = (1 << input) in tensor_size_t, exact for every "
    "input < MAX_LOG2_SIZE",
)
def _exp2_int32_shift(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)
    out = []
    for x in _shape_arg(ctx, "input"):
        v = (1 << (x & 31)) & 0xFFFFFFFF
        out.append(v - (1 << 32) if v >= 1 << 31 else v)
    return _shape_out(out)


@mutant(
    "exp2-shape-fp16-path",
    ["EXP2_SHAPE"],
    "exponents of 16 and above",
    "EXP2_SHAPE lowered to the element-wise EXP2 of the fp16 float path (the shape value "
    "cast to fp16, EXP2, cast back with CAST's saturation): exact up to 2**15; 2**16 and "
    "above overflow fp16 to +inf, which saturates to the largest tensor_size_t",
    "EXP2_SHAPE vectors with exponents of 16 to MAX_LOG2_SIZE - 1 (2**16 = 65536, not "
    "2**31 - 1 at 8K)",
    breaks="EXP2_SHAPE.tosac: output = (1 << input) in tensor_size_t, exact for every "
    "input < MAX_LOG2_SIZE",
)
def _exp2_fp16_path(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)  # its REQUIREs: 0 <= input < MAX_LOG2_SIZE
    x = np.asarray(_shape_arg(ctx, "input"), dtype=np.float16)
    with np.errstate(over="ignore"):
        y = np.exp2(x).astype(np.float64)  # in fp16: 2**16 is past 65504, +inf
    top = tensor_size_range(ctx.level).max  # +inf saturates to the type's largest
    return _shape_out([top if np.isinf(v) else int(v) for v in y])


@mutant(
    "log2-ceil-shape-bit-length",
    ["LOG2_CEIL_SHAPE"],
    "powers of two (1 included)",
    "LOG2_CEIL_SHAPE as the bit length of input (floor(log2) + 1, as 32 - clz(x) "
    "computes it): one too many for an exact power of two",
    "LOG2_CEIL_SHAPE vectors with powers of two (ceil(log2(8)) = 3, not 4; of 1, 0)",
    breaks="LOG2_CEIL_SHAPE.tosac: log_val += input == (1 << log_val) ? 0 : 1",
)
def _log2_ceil_bit_length(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)
    return _shape_out([x.bit_length() for x in _shape_arg(ctx, "input")])


@mutant(
    "log2-floor-shape-fp32",
    ["LOG2_FLOOR_SHAPE"],
    "2**k - 1 and its neighbours for k >= 25",
    "LOG2_FLOOR_SHAPE as floor(log2f(float(x))): the conversion to fp32 rounds sizes "
    "just below a large power of two up to it",
    "LOG2_FLOOR_SHAPE vectors with values just below a power of two beyond 2**24 "
    "(floor(log2(2**31 - 1)) = 30, not 31)",
    breaks="LOG2_FLOOR_SHAPE.tosac: the loop counts the shifts of the exact integer "
    "input until it is 0",
)
def _log2_floor_fp32(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)
    rounded = np.asarray(_shape_arg(ctx, "input"), dtype=np.float32).astype(np.float64)
    return _shape_out([int(np.frexp(v)[1]) - 1 for v in rounded])  # exact log2 of it


@mutant(
    "slice-shape-innermost-first",
    ["SLICE_SHAPE"],
    "slices that are not centred (start != length - start - size)",
    "the runtime stores shape vectors innermost dimension first and slices that vector "
    "with start unconverted: the slice is taken counting from the end",
    "SLICE_SHAPE vectors slicing from the start of a longer shape ([2, 3, 4, 5] start 0, "
    "size 2 gives [2, 3], not [4, 5])",
    breaks="SLICE_SHAPE.tosac: output[index] = input[index + start_value]",
)
def _slice_innermost_first(original: OpFunction, ctx: OpContext) -> Result:
    original(ctx)  # its ERROR_IFs
    x = _shape_arg(ctx, "input")
    start = int(np.asarray(ctx.arg("start")).reshape(-1)[0])
    size = int(np.asarray(ctx.arg("size")).reshape(-1)[0])
    n = len(x)
    return _shape_out(x[n - start - size : n - start])


@mutant(
    "assert-equal-shape-one-sided-broadcast",
    ["ASSERT_EQUAL_SHAPE"],
    "allow_broadcast with input1[index] = 1 and input2[index] != 1",
    "allow_broadcast is read as numpy's 'input2 broadcasts to input1': only input2 may "
    "hold a 1, so a 1 in input1 against another size is refused",
    "valid ASSERT_EQUAL_SHAPE vectors with allow_broadcast where input1 holds a 1 that "
    "input2 does not ([1, 4] against [3, 4])",
    effect="rejects valid graph",
    breaks="ASSERT_EQUAL_SHAPE.tosac: if (input1[index] != 1) ERROR_IF(input2[index] != 1 "
    "&& ...): where input1 is 1 anything goes",
)
def _assert_one_sided(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    if bool(ctx.attr("allow_broadcast")):
        a, b = _shape_arg(ctx, "input1"), _shape_arg(ctx, "input2")
        bad = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if y != 1 and y != x]
        ctx.error_if(
            bool(bad),
            "backend check: input2[index] == 1 || input2[index] == input1[index]",
            f"at index {bad[:1]}",
        )
    return result

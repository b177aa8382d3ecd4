"""Dot-product tensor operators: CONV2D, CONV3D, DEPTHWISE_CONV2D, TRANSPOSE_CONV2D,
FULLY_CONNECTED and MATMUL (TOSA 1.1's MATMUL_T is in reference/ops/matmul_t.py, on the
helpers here).

Each output element is a dot product of input and weight elements.  The sums are
formed one kernel position at a time: for a fixed offset in the kernel, the input
positions it reads form a strided slice of the input and the outputs it feeds a
strided slice of the output, so each offset is one matrix product (BLAS) of that
slice with the weights at the offset.  Positions that fall in the padding are simply
not in the slice, which is what the pseudocode's bounds test does (padding with zeros
would not be: a zero times an infinite weight is NaN).

Floating-point results are the fp64 dot product of the inputs as stored (every mode
widens its inputs to out_t exactly, TOSA 1.1's mixed-precision ones too: each operand
is read in its own type, tensor_read<in_t, acc_t>).  Integer results are exact
(int64); apply_add_s REQUIREs every running sum of the accumulator to fit its type, so
outputs whose sum of |products| could leave the type have their running sums formed in
the pseudocode's loop order and checked.

TOSA 1.1's block-scaled operands (in_t / weight_t, A_t / B_t a bs32_fp8ue8m0_*_t
composite) are read as tensor_read<in_t, acc_t> reads them: the value and its block's
scale, each widened to the accumulator, multiplied in it (apply_mul_s<acc_t>), so the
element is rounded to acc_t (fp32 or bf16): 448 * 2**127 is +inf in fp32, a value
times 2**-127 a subnormal there, and a NaN scale makes its block NaN.  Each
block-scaled operand's innermost dimension (IC, MATMUL_T's C) must be a whole number of
blocks (BLOCK_CLAUSE).  The abs-input pass hands such an operand over as the fp64
magnitudes of its elements, which are taken as read.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from conformance.block_tensor import BlockScaled, is_block_scaled, scale_type, value_type
from conformance.dtypes import BF16, FP16, FP32, I8, I32, I48, DType
from conformance.operator_table import family
from conformance.rounding import round_to_float64
from conformance.spec import OperatorSpec, TypeSupport
from reference import arithmetic as ar
from reference import mx
from reference.arguments import TYPES_CLAUSE
from reference.context import OpContext
from reference.registry import implements, seam

# ERROR_IF clauses as the pseudocode states them (recipes and breakers import them).
TRANSPOSE_OH_CLAUSE = "OH != (IH - 1) * stride_y + out_pad_top + out_pad_bottom + KH"
TRANSPOSE_OW_CLAUSE = "OW != (IW - 1) * stride_x + out_pad_left + out_pad_right + KW"
MATMUL_ZP_CLAUSE = "in_t != i8_t && (A_zp != 0 || B_zp != 0)"
# TOSA 1.0's zero points are [1] input tensors, and its pseudocode writes the type test
# as is_same<>(); the clause is spelled as the revision that declares the zero point
# writes it (zero_point_clause).  1.0.2's MATMUL reads 'is_same<in_t,i8_t> && ...',
# without the '!' its comment ('Zero point only for i8_t') and the argument text ('Must
# be zero for non-int8 types') call for: the rule is read as meant and spelled so.
MATMUL_ZP_INPUT_CLAUSE = "!is_same<in_t,i8_t>() && (A_zp != 0 || B_zp != 0)"
IDIV_CHECK_CLAUSE = "input1 % input2 != 0 (idiv_check)"
OUT_PAD_X_CLAUSE = "out_pad_left <= -KW || out_pad_right <= -KW"
OUT_PAD_Y_CLAUSE = "out_pad_top <= -KH || out_pad_bottom <= -KH"
STRIDE_CLAUSE = "stride_y < 1 || stride_x < 1"
DILATION_CLAUSE = "dilation_y < 1 || dilation_x < 1"
BIAS_CLAUSE = "BC != OC && BC != 1"
DEPTHWISE_BIAS_CLAUSE = "BC != C*M && BC != 1"
# The output sizes' idiv_check arguments as the pseudocode writes them, and the
# ERROR_IF each output size makes (OD: CONV3D's).
_SIZE_EXPR = {
    "OD": ("ID - 1 + pad_d0 + pad_d1 - (KD - 1) * dilation_d", "stride_d"),
    "OH": ("IH - 1 + pad_top + pad_bottom - (KH - 1) * dilation_y", "stride_y"),
    "OW": ("IW - 1 + pad_left + pad_right - (KW - 1) * dilation_x", "stride_x"),
}
OUTPUT_SIZE_CLAUSES = {
    name: f"{name} != idiv_check({expr}, {stride}) + 1"
    for name, (expr, stride) in _SIZE_EXPR.items()
}
OH_CLAUSE = OUTPUT_SIZE_CLAUSES["OH"]
OW_CLAUSE = OUTPUT_SIZE_CLAUSES["OW"]
# TOSA 1.1: a block-scaled operand's contraction axis holds whole blocks.  The clause
# is written per type variable (in_t, weight_t; A_t, B_t) and axis (IC; C).
BLOCK_CLAUSE = "is_block_scale<{var}>() && {axis} % get_innermost_block_size<{var}>() != 0"


def block_clause(var: str, axis: str) -> str:
    """The block-size ERROR_IF of type variable ``var`` on contraction axis ``axis``."""
    return BLOCK_CLAUSE.format(var=var, axis=axis)


Result = dict[str, np.ndarray | list[np.ndarray]]

# Revisions whose convolution pseudocode multiplies a weight only where the tap reads
# the input.  Later ones (TOSA 1.0: tosa_extra_multiplies, "Implementations may choose
# to skip calculation of multiplies in the padding area") also allow 0 * weight at the
# other taps, NaN for an infinite or NaN weight, and RFFT2D's -value * 0.0 for the
# imaginary terms it skips.  That permission is pseudocode and prose, not tosa.xml, so
# it is keyed by revision; the reference computes no extra multiply in any of them.
NO_EXTRA_MULTIPLIES = frozenset({"2024-04-draft"})


def extra_multiplies_allowed(revision: str) -> bool:
    """Whether a backend may form the products the pseudocode skips (see above)."""
    return revision not in NO_EXTRA_MULTIPLIES


# acc_type attribute values (acc_type_t) and the element type each names (BF16: TOSA 1.1;
# no earlier mode accumulates in bf16, nor has their enumeration the value).
ACC_TYPES: dict[str, DType] = {"INT32": I32, "INT48": I48, "FP16": FP16, "FP32": FP32}
ACC_TYPES["BF16"] = BF16

# Operators whose modes name no acc_t: their pseudocode accumulates in out_t.
ACCUMULATE_IN_OUT_T = family(frozenset({"FULLY_CONNECTED", "MATMUL", "MATMUL_T"}))

# The operand each zero point belongs to.  The type its ERROR_IF tests is that
# operand's declared element type (in_t, weight_t; MATMUL's in_t before TOSA 1.1 and
# A_t / B_t from it), never the zero point's own (1.1's in_zp_t, A_zp_t).
ZERO_POINT_OPERANDS = {"input_zp": "input", "weight_zp": "weight", "output_zp": "output"}
ZERO_POINT_OPERANDS |= {"A_zp": "A", "B_zp": "B"}

# float64 holds every integer below 2**53 exactly, so an integer matrix product whose
# sum of |products| stays below it may use BLAS and still be exact.
_EXACT_IN_FP64 = 2.0**53
# Running sums checked per chunk: at most this many int64 terms at once.
_TERMS_PER_CHUNK = 1 << 22


def accumulator_dtype(op: str, acc_type: str | None, out_t: DType) -> DType:
    """The accumulator of a valid operator: the acc_type attribute's type, or out_t
    for FULLY_CONNECTED and MATMUL."""
    if op.upper() in ACCUMULATE_IN_OUT_T:
        return out_t
    if acc_type not in ACC_TYPES:
        raise ValueError(f"{op}: acc_type {acc_type!r} is not one of {', '.join(ACC_TYPES)}")
    return ACC_TYPES[acc_type]


# -- checks shared by the operators ----------------------------------------------------


def _mode_agrees(mode: TypeSupport, bindings: dict[str, DType]) -> bool:
    return all(
        mode.bindings.get(var) in (None, "-") or mode.dtype(var) is dt
        for var, dt in bindings.items()
    )


def _check_acc_type(ctx: OpContext) -> DType:
    """The mode is chosen by the tensor types and acc_type together; an acc_type that
    no mode with these tensor types lists is an unsupported type combination."""
    name = ctx.attr("acc_type")
    acc = ACC_TYPES.get(str(name))
    candidates = [m for m in ctx.op_spec.modes if _mode_agrees(m, ctx.bindings)]
    listed = [m.dtype("acc_t") for m in candidates if "acc_t" in m.bindings]
    got = ", ".join(f"{k}={v}" for k, v in sorted(ctx.bindings.items()))
    ctx.error_if(
        acc is None or acc not in listed,
        TYPES_CLAUSE,
        f"acc_type {name} with {got}; the modes for these types accumulate in "
        f"{', '.join(str(a) for a in listed) or 'nothing'}",
    )
    assert acc is not None
    return acc


def zero_point_type_var(op_spec: OperatorSpec, zp_name: str) -> str:
    """The type variable the 'zero point only for i8' rule of ``zp_name`` tests: the
    declared element type of the operand the zero point belongs to."""
    return op_spec.argument(ZERO_POINT_OPERANDS[zp_name]).element_type


def zero_point_is_input(op_spec: OperatorSpec, zp_name: str) -> bool:
    """Whether the operator takes the zero point as an input tensor (TOSA 1.0 on)
    rather than as an attribute (the 2024 draft)."""
    return any(a.name == zp_name for a in op_spec.inputs)


def zero_point_clause(op_spec: OperatorSpec, zp_name: str, type_var: str) -> str:
    """The 'zero point only for i8' ERROR_IF of one zero point, as the revision that
    declares it writes it: ``in_t != i8_t && ...`` where it is an attribute,
    ``!is_same<in_t,i8_t>() && ...`` where it is an input tensor."""
    if zero_point_is_input(op_spec, zp_name):
        return input_zero_point_clause(zp_name, type_var)
    return attribute_zero_point_clause(zp_name, type_var)


def attribute_zero_point_clause(zp_name: str, type_var: str) -> str:
    """The rule as the 2024 draft writes it for a zero-point attribute."""
    return f"{type_var} != i8_t && {zp_name} != 0"


def input_zero_point_clause(zp_name: str, type_var: str) -> str:
    """The rule as TOSA 1.0 writes it for a zero-point input tensor."""
    return f"!is_same<{type_var},i8_t>() && {zp_name} != 0"


def matmul_zero_point_rules(op_spec: OperatorSpec) -> list[tuple[tuple[str, ...], str, str]]:
    """MATMUL's (and MATMUL_T's) zero-point ERROR_IFs in pseudocode order, as (zero
    points, type variable, clause).  Where A and B share one type variable (in_t: the
    draft and TOSA 1.0) one rule covers both zero points; where each has its own (TOSA
    1.1's A_t and B_t) each zero point has its rule."""
    a_var = zero_point_type_var(op_spec, "A_zp")
    b_var = zero_point_type_var(op_spec, "B_zp")
    if a_var == b_var:
        is_input = zero_point_is_input(op_spec, "A_zp")
        clause = MATMUL_ZP_INPUT_CLAUSE if is_input else MATMUL_ZP_CLAUSE
        return [(("A_zp", "B_zp"), a_var, clause.replace("in_t", a_var))]
    return [
        ((zp,), var, zero_point_clause(op_spec, zp, var))
        for zp, var in (("A_zp", a_var), ("B_zp", b_var))
    ]


def check_matmul_zero_points(ctx: OpContext) -> None:
    """The zero-point ERROR_IFs of MATMUL / MATMUL_T (matmul_zero_point_rules)."""
    for zps, var, clause in matmul_zero_point_rules(ctx.op_spec):
        dt = ctx.dtype(var)
        values = {zp: ctx.attr(zp, 0) for zp in zps}
        shown = ", ".join(f"{zp}={v}" for zp, v in values.items())
        ctx.error_if(
            dt is not I8 and any(v != 0 for v in values.values()),
            clause,
            f"{var}={dt}, {shown}",
        )


def _check_zero_point(ctx: OpContext, zp_name: str) -> None:
    type_var = zero_point_type_var(ctx.op_spec, zp_name)
    zp = ctx.attr(zp_name, 0)
    dt = ctx.dtype(type_var)
    clause = zero_point_clause(ctx.op_spec, zp_name, type_var)
    ctx.error_if(dt is not I8 and zp != 0, clause, f"{type_var}={dt}, {zp_name}={zp}")


def _check_conv_zero_points(ctx: OpContext) -> None:
    _check_zero_point(ctx, "input_zp")
    _check_zero_point(ctx, "weight_zp")


def _c_remainder(a: int, b: int) -> int:
    """C's ``a % b``: the sign follows the dividend."""
    return int(math.fmod(a, b))


def _check_output_size(
    ctx: OpContext, out_name: str, out_size: int, numerator: int, stride: int
) -> None:
    """ERROR_IF(O != idiv_check(numerator, stride) + 1), with idiv_check's own ERROR_IF
    first; the clauses spell the pseudocode's arguments (OUTPUT_SIZE_CLAUSES)."""
    expr, stride_name = _SIZE_EXPR[out_name]
    ctx.error_if(
        _c_remainder(numerator, stride) != 0,
        IDIV_CHECK_CLAUSE,
        f"{out_name}: {expr} = {numerator} is not a multiple of {stride_name} = {stride}",
    )
    want = numerator // stride + 1
    ctx.error_if(
        out_size != want,
        OUTPUT_SIZE_CLAUSES[out_name],
        f"{out_name} is {out_size}, the attributes give {want}",
    )


def _check_bias(ctx: OpContext, channels: int, clause: str) -> None:
    bc = ctx.input_tensor("bias").shape[0]
    ctx.error_if(bc != channels and bc != 1, clause, f"BC={bc}, output channels {channels}")


# -- arithmetic --------------------------------------------------------------------------


def check_block_sizes(ctx: OpContext, names: Sequence[str], axis: str, size: int) -> None:
    """The block-size ERROR_IFs of the operands ``names``, in order: a block-scaled
    one's contraction axis (``axis`` of ``size`` elements) a multiple of its block."""
    for name in names:
        var = ctx.op_spec.argument(name).element_type
        dt = ctx.dtype(var)
        if not is_block_scaled(dt):
            continue
        ctx.error_if(
            size % dt.block_size != 0,
            block_clause(var, axis),
            f"{var}={dt}, {axis}={size}, block size {dt.block_size}",
        )


def read_block_scaled(v: BlockScaled, acc: DType) -> np.ndarray:
    """tensor_read<in_t, acc_t> of every element of a composite, in fp64: value times
    its block's scale, the product rounded to ``acc`` (the value and the scale are
    exact in fp32 and bf16, so the multiply is the only rounding)."""
    values = mx.decode(v.values, value_type(v.dtype))
    scales = mx.decode(v.element_scales(), scale_type(v.dtype))
    with np.errstate(invalid="ignore", over="ignore"):
        return round_to_float64(acc, values * scales)


def operand(ctx: OpContext, name: str, zp_name: str, acc: DType | None = None) -> np.ndarray:
    """An input widened to the accumulator (value - zero point for integers); a
    block-scaled one read in ``acc`` (default out_t), see the module text."""
    v = ctx.value(name)
    if isinstance(v, BlockScaled):
        return read_block_scaled(v, acc or ctx.dtype("out_t"))
    x = ctx.arg(name)
    if ctx.dtype("out_t").is_float:
        return ar.as_float(x)  # float zero points are 0 (ERROR_IF above)
    # |value - zp| <= 255 for i8 (the only type allowed a zero point) and |value| <=
    # 2**15 otherwise, so apply_sub_s's REQUIRE cannot fail in i32 or i48.
    return ar.as_int(x) - int(ctx.attr(zp_name, 0))


def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` (a [..., K], b [K, M] or batched); integer operands arrive as float64
    only where that is exact (see :func:`finish`)."""
    with np.errstate(all="ignore"):  # inf * 0, inf - inf: IEEE results wanted
        return np.matmul(a, b)


def _max_abs(a: np.ndarray) -> int:
    return max(abs(int(a.max())), abs(int(a.min()))) if a.size else 0


@dataclass(frozen=True)
class ConvAxis:
    """One spatial axis of a convolution."""

    size_in: int
    size_out: int
    kernel: int
    stride: int
    dilation: int
    pad: int  # padding before (top, left, d0); out_pad for TRANSPOSE_CONV2D

    @seam
    def conv_span(self, k: int) -> tuple[slice, slice] | None:
        """For kernel offset k: the outputs o whose input o*stride - pad + k*dilation
        lies inside the input, and those inputs, as (output slice, input slice)."""
        off = k * self.dilation - self.pad
        lo = max(0, -(off // self.stride))  # ceil(-off / stride)
        hi = min(self.size_out - 1, (self.size_in - 1 - off) // self.stride)
        if hi < lo:
            return None
        return slice(lo, hi + 1), slice(
            lo * self.stride + off, hi * self.stride + off + 1, self.stride
        )

    @seam
    def transpose_span(self, k: int) -> tuple[slice, slice] | None:
        """For kernel offset k of a transposed convolution: input i feeds output
        i*stride + out_pad + k, where that lies inside the output."""
        off = self.pad + k
        lo = max(0, -(off // self.stride))
        hi = min(self.size_in - 1, (self.size_out - 1 - off) // self.stride)
        if hi < lo:
            return None
        return slice(lo * self.stride + off, hi * self.stride + off + 1, self.stride), slice(
            lo, hi + 1
        )

    def conv_coord(self, o: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Input coordinate read by output o at kernel offset k, and whether it is in."""
        c = o * self.stride - self.pad + k * self.dilation
        return c, (c >= 0) & (c < self.size_in)

    def transpose_coord(self, o: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        t = o - self.pad - k
        c = t // self.stride
        return c, (t % self.stride == 0) & (c >= 0) & (c < self.size_in)


Combine = Callable[[np.ndarray, tuple[int, ...]], np.ndarray]


def _sum_over_kernel(
    x: np.ndarray,
    out: np.ndarray,
    axes: Sequence[ConvAxis],
    spans: Callable[[ConvAxis, int], tuple[slice, slice] | None],
    combine: Combine,
) -> np.ndarray:
    """Add, for every kernel offset, ``combine(input slice, offset)`` into the output
    slice it feeds.  x is [N, spatial..., C], out [N, spatial..., ...]."""
    for kpos in np.ndindex(*(a.kernel for a in axes)):
        found = [spans(a, k) for a, k in zip(axes, kpos, strict=True)]
        if any(s is None for s in found):
            continue
        out_index: tuple[Any, ...] = (slice(None), *(s[0] for s in found if s is not None), ...)
        in_index: tuple[Any, ...] = (slice(None), *(s[1] for s in found if s is not None), ...)
        with np.errstate(all="ignore"):
            out[out_index] += combine(x[in_index], kpos)
    return out


# -- integer accumulator REQUIREs --------------------------------------------------------

# Products of the dot products of the given flat output indices, [F, KS], in the
# pseudocode's loop order (terms the loop skips are 0).
Terms = Callable[[np.ndarray], np.ndarray]


def _running_sums_fit(
    shape: tuple[int, ...], bound: np.ndarray | None, terms: Terms, ks: int, acc: DType
) -> np.ndarray:
    """Per output: does every running sum of its dot product fit ``acc``.

    A running sum is at most the sum of |products| (``bound``; None when even the
    worst case fits), so only outputs whose bound exceeds the type's maximum (|minimum|
    is larger still) are looked at."""
    ok = np.ones(shape, bool)
    if bound is None:
        return ok
    suspect = np.flatnonzero(bound > acc.int_range.max)
    step = max(1, _TERMS_PER_CHUNK // max(ks, 1))
    flat_ok = ok.reshape(-1)
    for start in range(0, suspect.size, step):
        chunk = suspect[start : start + step]
        partial = np.cumsum(terms(chunk), axis=1)
        flat_ok[chunk] = np.all(acc.in_range(partial), axis=1)
    return ok


def _finish_int(
    ctx: OpContext,
    total: np.ndarray,
    bound: np.ndarray | None,
    terms: Terms,
    ks: int,
    acc_var: str,
    bias: np.ndarray | None,
) -> np.ndarray:
    """REQUIRE every running sum fits the accumulator, then that adding the bias fits
    out_t, in the order the pseudocode's per-output loop meets them."""
    acc = _acc_of(ctx, acc_var)
    out_t = ctx.dtype("out_t")
    acc_ok = _running_sums_fit(total.shape, bound, terms, ks, acc)
    checks = [(f"acc = apply_add_s<{acc_var}>(acc, product): {ar.range_clause(acc_var)}", acc_ok)]
    out = total
    if bias is not None:
        out = total + bias
        checks.append(
            (
                f"apply_add_s<out_t>(out, bias): {ar.range_clause('out_t')}",
                out_t.in_range(out),
            )
        )
    ar.require_each(ctx, total.shape, checks)
    return out.astype(out_t.storage)


def _acc_of(ctx: OpContext, acc_var: str) -> DType:
    """The accumulator type the pseudocode names: acc_t (chosen by acc_type) or out_t."""
    return ACC_TYPES[str(ctx.attr("acc_type"))] if acc_var == "acc_t" else ctx.dtype(acc_var)


def _bias_vector(ctx: OpContext, channels: int) -> np.ndarray:
    b = ctx.arg("bias")
    b = ar.as_float(b) if ctx.dtype("out_t").is_float else ar.as_int(b)
    return np.broadcast_to(b, (channels,))


def finish(
    ctx: OpContext,
    x: np.ndarray,
    w: np.ndarray,
    compute: Callable[[np.ndarray, np.ndarray], np.ndarray],
    terms: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
    ks: int,
    acc_var: str,
    bias: np.ndarray | None,
) -> np.ndarray:
    """The dot products ``compute(x, w)`` plus bias, with the integer REQUIREs."""
    if x.dtype.kind == "f":
        total = compute(x, w)
        if bias is None:
            return total
        with np.errstate(all="ignore"):
            return total + bias
    # No running sum exceeds KS * max|x| * max|w|.  Below 2**53 every partial sum BLAS
    # forms in float64 is an exactly held integer, so the fast path is exact; past it
    # (never for TOSA's own ranges) numpy's int64 product is used.
    worst = ks * _max_abs(x) * _max_abs(w)
    wide = np.float64 if worst < _EXACT_IN_FP64 else np.int64
    xv, wv = x.astype(wide), w.astype(wide)
    total = compute(xv, wv).astype(np.int64)
    # Only when the worst case could leave the accumulator is the per-output bound
    # (sum of |products|) needed to find the outputs whose running sums need a look.
    bound = None
    if worst > int(_acc_of(ctx, acc_var).max):  # type: ignore[arg-type]
        bound = compute(np.abs(xv), np.abs(wv))
    return _finish_int(ctx, total, bound, lambda idx: terms(x, w, idx), ks, acc_var, bias)


# -- convolutions ---------------------------------------------------------------------


def _conv_terms(
    axes: Sequence[ConvAxis],
    coord: Callable[[ConvAxis, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
    out_shape: tuple[int, ...],
) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """Loop-order products of CONV2D/CONV3D/TRANSPOSE_CONV2D outputs: kernel offsets in
    row-major order, then input channels.  x is [N, spatial..., IC], w [OC, kernel...,
    IC]."""
    kernel = tuple(a.kernel for a in axes)

    def terms(x: np.ndarray, w: np.ndarray, flat: np.ndarray) -> np.ndarray:
        index = np.unravel_index(flat, out_shape)
        n, spatial, oc = index[0], index[1:-1], index[-1]
        koffs = [k.reshape(-1) for k in np.indices(kernel)]  # [P] per axis
        coords, valid = [], np.ones((flat.size, koffs[0].size), bool)
        for a, o, k in zip(axes, spatial, koffs, strict=True):
            c, ok = coord(a, o[:, None], k[None, :])
            coords.append(np.clip(c, 0, a.size_in - 1))
            valid &= ok
        values = x[(n[:, None], *coords)] * valid[..., None]  # [F, P, IC]
        weights = w[(oc[:, None], *(k[None, :] for k in koffs))]  # [F, P, IC]
        return (values * weights).reshape(flat.size, -1)

    return terms


def _conv_forward(ctx: OpContext, axes: Sequence[ConvAxis], ks: int, acc_var: str) -> np.ndarray:
    acc = _acc_of(ctx, "acc_t")  # every tensor_read of a convolution reads into acc_t
    x = operand(ctx, "input", "input_zp", acc)
    w = operand(ctx, "weight", "weight_zp", acc)
    out_shape = ctx.out_shape()

    def compute(xv: np.ndarray, wv: np.ndarray) -> np.ndarray:
        out = np.zeros(out_shape, xv.dtype)

        def combine(xs: np.ndarray, kpos: tuple[int, ...]) -> np.ndarray:
            index: tuple[Any, ...] = (slice(None), *kpos)
            return dot(xs, wv[index].T)

        return _sum_over_kernel(xv, out, axes, ConvAxis.conv_span, combine)

    terms = _conv_terms(axes, ConvAxis.conv_coord, out_shape)
    bias = _bias_vector(ctx, out_shape[-1])
    return finish(ctx, x, w, compute, terms, ks, acc_var, bias)


def _ints(ctx: OpContext, name: str, count: int) -> list[int]:
    values = [int(v) for v in np.asarray(ctx.attr(name)).reshape(-1)]
    if len(values) != count:  # the engine checks the declared [count] shape first
        raise AssertionError(f"{ctx.name} {name} has {len(values)} values, not {count}")
    return values


def _check_conv_attributes(
    ctx: OpContext, names: Sequence[str], pads: list[int], strides: list[int], dils: list[int]
) -> None:
    """The pad, stride and dilation ERROR_IFs, clauses spelled as the pseudocode's."""
    pad_names = [f"pad_{p}" for p in names]
    ctx.error_if(
        any(p < 0 for p in pads),
        " || ".join(f"{p} < 0" for p in pad_names),
        f"pad {pads}",
    )
    axes = ["d", "y", "x"][3 - len(strides) :]
    ctx.error_if(
        any(s < 1 for s in strides),
        " || ".join(f"stride_{a} < 1" for a in axes),
        f"stride {strides}",
    )
    ctx.error_if(
        any(d < 1 for d in dils),
        " || ".join(f"dilation_{a} < 1" for a in axes),
        f"dilation {dils}",
    )


@seam
def conv_axes(
    ctx: OpContext,
    in_spatial: Sequence[int],
    kernel: Sequence[int],
    out_spatial: Sequence[int],
    pad_names: Sequence[str],
) -> list[ConvAxis]:
    """The geometry ERROR_IFs of CONV2D / CONV3D / DEPTHWISE_CONV2D, in pseudocode order,
    and the axes they describe."""
    rank = len(in_spatial)
    pads = _ints(ctx, "pad", 2 * rank)
    strides = _ints(ctx, "stride", rank)
    dils = _ints(ctx, "dilation", rank)
    _check_conv_attributes(ctx, pad_names, pads, strides, dils)
    names = ["OD", "OH", "OW"][3 - rank :]
    axes = []
    for j in range(rank):
        before, after = pads[2 * j], pads[2 * j + 1]
        numerator = in_spatial[j] - 1 + before + after - (kernel[j] - 1) * dils[j]
        _check_output_size(ctx, names[j], out_spatial[j], numerator, strides[j])
        axes.append(ConvAxis(in_spatial[j], out_spatial[j], kernel[j], strides[j], dils[j], before))
    return axes


_PADS_2D = ("top", "bottom", "left", "right")
_PADS_3D = ("d0", "d1", "top", "bottom", "left", "right")


@implements("CONV2D")
def conv2d(ctx: OpContext) -> Result:
    _check_acc_type(ctx)
    _check_conv_zero_points(ctx)
    _, ih, iw, ic = ctx.input_tensor("input").shape
    oc, kh, kw, _ = ctx.input_tensor("weight").shape
    _, oh, ow, _ = ctx.out_shape()
    axes = conv_axes(ctx, (ih, iw), (kh, kw), (oh, ow), _PADS_2D)
    _check_bias(ctx, oc, BIAS_CLAUSE)
    check_block_sizes(ctx, ("input", "weight"), "IC", ic)
    return {"output": _conv_forward(ctx, axes, kh * kw * ic, "acc_t")}


@implements("CONV3D")
def conv3d(ctx: OpContext) -> Result:
    _check_acc_type(ctx)
    _check_conv_zero_points(ctx)
    _, id_, ih, iw, ic = ctx.input_tensor("input").shape
    oc, kd, kh, kw, _ = ctx.input_tensor("weight").shape
    _, od, oh, ow, _ = ctx.out_shape()
    axes = conv_axes(ctx, (id_, ih, iw), (kd, kh, kw), (od, oh, ow), _PADS_3D)
    _check_bias(ctx, oc, BIAS_CLAUSE)
    check_block_sizes(ctx, ("input", "weight"), "IC", ic)
    # CONV3D's pseudocode accumulates in out_t (the same type as acc_t in every mode).
    return {"output": _conv_forward(ctx, axes, kd * kh * kw * ic, "out_t")}


@implements("DEPTHWISE_CONV2D")
def depthwise_conv2d(ctx: OpContext) -> Result:
    _check_acc_type(ctx)
    _check_conv_zero_points(ctx)
    _, ih, iw, c = ctx.input_tensor("input").shape
    kh, kw, _, m = ctx.input_tensor("weight").shape
    n, oh, ow, _ = ctx.out_shape()
    axes = conv_axes(ctx, (ih, iw), (kh, kw), (oh, ow), _PADS_2D)
    _check_bias(ctx, c * m, DEPTHWISE_BIAS_CLAUSE)
    x = operand(ctx, "input", "input_zp")
    w = operand(ctx, "weight", "weight_zp")
    split_shape = (n, oh, ow, c, m)

    def compute(xv: np.ndarray, wv: np.ndarray) -> np.ndarray:
        out = np.zeros(split_shape, xv.dtype)

        def combine(xs: np.ndarray, kpos: tuple[int, ...]) -> np.ndarray:
            return xs[..., None] * wv[kpos]  # [.., C, 1] * [C, M]

        _sum_over_kernel(xv, out, axes, ConvAxis.conv_span, combine)
        return out.reshape(n, oh, ow, c * m)

    def terms(xv: np.ndarray, wv: np.ndarray, flat: np.ndarray) -> np.ndarray:
        b, oy, ox, ch = np.unravel_index(flat, (n, oh, ow, c * m))
        ky, kx = (k.reshape(-1)[None, :] for k in np.indices((kh, kw)))
        y, y_in = axes[0].conv_coord(oy[:, None], ky)
        xx, x_in = axes[1].conv_coord(ox[:, None], kx)
        cc = (ch // m)[:, None]
        values = xv[b[:, None], np.clip(y, 0, ih - 1), np.clip(xx, 0, iw - 1), cc]
        return values * (y_in & x_in) * wv[ky, kx, cc, (ch % m)[:, None]]

    bias = _bias_vector(ctx, c * m)
    return {"output": finish(ctx, x, w, compute, terms, kh * kw, "out_t", bias)}


@implements("TRANSPOSE_CONV2D")
def transpose_conv2d(ctx: OpContext) -> Result:
    """Input (iy, ix) scaled by weight (ky, kx) lands on output (iy*stride_y +
    out_pad_top + ky, ix*stride_x + out_pad_left + kx); contributions that land outside
    the output (negative out_pad crops it) are dropped.  The 2024 draft's pseudocode
    states this per output with index typos read as meant (its loop bounds name KY and
    KX for KH and KW, its weight read the shape [OH,KH,KW,IC]); TOSA 1.0's loop gathers
    per output over every (ky, kx, ic), reading input ((oy - out_pad_top - ky) /
    stride_y, ...) where that divides evenly and lies inside: the same sums, in the
    same (ky, kx, ic) order for the running-sum REQUIREs."""
    _check_acc_type(ctx)
    _check_conv_zero_points(ctx)
    n, ih, iw, ic = ctx.input_tensor("input").shape
    oc, kh, kw, _ = ctx.input_tensor("weight").shape
    _, oh, ow, _ = ctx.out_shape()
    top, bottom, left, right = _ints(ctx, "out_pad", 4)
    sy, sx = _ints(ctx, "stride", 2)
    ctx.error_if(
        top <= -kh or bottom <= -kh,
        OUT_PAD_Y_CLAUSE,
        f"out_pad {[top, bottom, left, right]}, KH={kh}",
    )
    ctx.error_if(
        left <= -kw or right <= -kw,
        OUT_PAD_X_CLAUSE,
        f"out_pad {[top, bottom, left, right]}, KW={kw}",
    )
    ctx.error_if(sy < 1 or sx < 1, STRIDE_CLAUSE, f"stride {[sy, sx]}")
    want_h = (ih - 1) * sy + top + bottom + kh
    ctx.error_if(
        oh != want_h,
        TRANSPOSE_OH_CLAUSE,
        f"OH is {oh}, the attributes give {want_h}",
    )
    want_w = (iw - 1) * sx + left + right + kw
    ctx.error_if(
        ow != want_w,
        TRANSPOSE_OW_CLAUSE,
        f"OW is {ow}, the attributes give {want_w}",
    )
    _check_bias(ctx, oc, BIAS_CLAUSE)
    check_block_sizes(ctx, ("input", "weight"), "IC", ic)
    axes = [ConvAxis(ih, oh, kh, sy, 1, top), ConvAxis(iw, ow, kw, sx, 1, left)]
    acc = _acc_of(ctx, "acc_t")
    x = operand(ctx, "input", "input_zp", acc)
    w = operand(ctx, "weight", "weight_zp", acc)
    out_shape = (n, oh, ow, oc)

    def compute(xv: np.ndarray, wv: np.ndarray) -> np.ndarray:
        out = np.zeros(out_shape, xv.dtype)

        def combine(xs: np.ndarray, kpos: tuple[int, ...]) -> np.ndarray:
            index: tuple[Any, ...] = (slice(None), *kpos)
            return dot(xs, wv[index].T)

        return _sum_over_kernel(xv, out, axes, ConvAxis.transpose_span, combine)

    # The gather loop visits, per output, sy (so ky) ascending, then sx, then ic.
    terms = _conv_terms(axes, ConvAxis.transpose_coord, out_shape)
    bias = _bias_vector(ctx, oc)
    return {"output": finish(ctx, x, w, compute, terms, kh * kw * ic, "acc_t", bias)}


# -- fully connected and matrix multiply -----------------------------------------------


@implements("FULLY_CONNECTED")
def fully_connected(ctx: OpContext) -> Result:
    _check_conv_zero_points(ctx)
    n, ic = ctx.input_tensor("input").shape
    oc = ctx.input_tensor("weight").shape[0]
    _check_bias(ctx, oc, BIAS_CLAUSE)
    x = operand(ctx, "input", "input_zp")
    w = operand(ctx, "weight", "weight_zp")

    def compute(xv: np.ndarray, wv: np.ndarray) -> np.ndarray:
        return dot(xv, wv.T)

    def terms(xv: np.ndarray, wv: np.ndarray, flat: np.ndarray) -> np.ndarray:
        b, o = np.unravel_index(flat, (n, oc))
        return xv[b] * wv[o]

    bias = _bias_vector(ctx, oc)
    return {"output": finish(ctx, x, w, compute, terms, ic, "out_t", bias)}


@implements("MATMUL")
def matmul(ctx: OpContext) -> Result:
    check_matmul_zero_points(ctx)
    n, h, c = ctx.input_tensor("A").shape
    w_ = ctx.input_tensor("B").shape[2]
    a = operand(ctx, "A", "A_zp")
    b = operand(ctx, "B", "B_zp")

    def terms(av: np.ndarray, bv: np.ndarray, flat: np.ndarray) -> np.ndarray:
        i, y, x = np.unravel_index(flat, (n, h, w_))
        return av[i, y, :] * bv[i, :, x]

    return {"output": finish(ctx, a, b, dot, terms, c, "out_t", None)}

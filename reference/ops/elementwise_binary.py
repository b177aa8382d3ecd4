"""Element-wise binary operators (tosa.xml group elementwise-binary).

Each operator checks the output shape against TOSA's broadcast of its inputs, then
computes on broadcast views of the whole tensors.  REQUIREs that the pseudocode makes
per element are collected as masks and reported by :func:`require_each`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from conformance.dtypes import I16, I32
from reference import arithmetic as ar
from reference.broadcast import apply_broadcast, check_broadcast, check_same_shape
from reference.context import OpContext
from reference.pseudocode_revisions import (
    draft_pseudocode,
    pseudocode_1_1,
    type_test,
)
from reference.registry import implements

Result = dict[str, np.ndarray | list[np.ndarray]]

BROADCAST = "shape != broadcast_shape(shape1, shape2)"
# POW's REQUIREs from TOSA 1.0 on (the draft has none): the base positive, or zero
# with a positive exponent, and neither operand NaN or infinite.
POW_BASE_CLAUSE = "value1 >= 0"
POW_ZERO_CLAUSE = "value1 > 0 || value2 > 0"
POW_NAN_CLAUSE = "!isNaN(value1) && !isNaN(value2)"
POW_NAN_CLAUSE_1_1 = "!is_a_NaN(value1) && !is_a_NaN(value2)"
# TOSA 1.1: apply_intdiv_s REQUIREs away the one quotient int64 cannot hold.
INTDIV_INT64_MIN_CLAUSE = (
    "apply_intdiv_s: !(a_i64 == std::numeric_limits<int64_t>::min() && b_i64 == -1)"
)
# TOSA 1.1: ERROR_IF(round && !PRO-INT), the only clause of the spec that depends on the
# implementation's profile.  The reference is the implementation of every profile, so
# it never fires here; see pseudocode_revisions.PROFILE_GATED_ATTRIBUTES for the reading.
ROUND_PRO_INT_CLAUSE = "round && !PRO-INT"
POW_FINITE_CLAUSE = "is_finite(value1) && is_finite(value2)"
NAN_MODES = ("PROPAGATE", "IGNORE")


def _operands(ctx: OpContext) -> tuple[tuple[int, ...], np.ndarray, np.ndarray]:
    shape = check_broadcast(ctx, BROADCAST, "input1", "input2")
    a = apply_broadcast(ctx.arg("input1"), shape)
    b = apply_broadcast(ctx.arg("input2"), shape)
    return shape, a, b


def _float_op(ctx: OpContext, fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Result:
    _, a, b = _operands(ctx)
    with np.errstate(all="ignore"):  # inf - inf, overflow: IEEE results are wanted
        return {"output": fn(ar.as_float(a), ar.as_float(b))}


def _add_or_sub(ctx: OpContext, helper: str) -> Result:
    dt = ctx.dtype("in_out_t")
    if dt.is_float:
        return _float_op(ctx, np.add if helper == "apply_add_s" else np.subtract)
    shape, a, b = _operands(ctx)
    value, checks = ar.add_sub_rules(
        a,
        b,
        dt,
        sub=helper == "apply_sub_s",
        sign_tests=pseudocode_1_1(ctx.revision),
        prefix=f"{helper}: ",
    )
    ar.require_each(ctx, shape, checks, {"value1": a, "value2": b})
    return {"output": value}


@implements("ADD")
def add(ctx: OpContext) -> Result:
    return _add_or_sub(ctx, "apply_add_s")


@implements("SUB")
def sub(ctx: OpContext) -> Result:
    return _add_or_sub(ctx, "apply_sub_s")


def _shift_operands(ctx: OpContext, clause: str, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """Shift operands, with the per-element REQUIRE that 0 <= value2 <= limit."""
    shape, a, b = _operands(ctx)
    a, b = ar.as_int(a), ar.as_int(b)
    ok = (b >= 0) & (b <= limit)
    ar.require_each(ctx, shape, [(clause, ok)], {"value2": b})
    return a, b


def shift_range_clause(revision: str, dt_name: str, bits: int) -> str:
    """The arm of the per-type shift REQUIRE that applies to an operand type."""
    test = type_test(revision, "in_out_t", dt_name)
    return f"{test} && 0 <= value2 && value2 <= {bits - 1}"


@implements("ARITHMETIC_RIGHT_SHIFT")
def arithmetic_right_shift(ctx: OpContext) -> Result:
    dt = ctx.dtype("in_out_t")
    limit = dt.bits - 1
    clause = shift_range_clause(ctx.revision, dt.spec_name, dt.bits)
    a, b = _shift_operands(ctx, clause, limit)
    result = ar.arith_rshift(a, b)
    rounding = bool(ctx.attr("round", False))
    if pseudocode_1_1(ctx.revision):
        # Inside the element loop: an empty tensor never evaluates it.  The reference
        # implements PRO-INT, so the clause is false for it.
        fires = rounding and not REFERENCE_HAS_PRO_INT and a.size > 0
        ctx.error_if(fires, ROUND_PRO_INT_CLAUSE, "round is true, PRO-INT not implemented")
    if rounding:
        # Round half up: add the last bit shifted out (bit value2 - 1 of value1).
        last_out = ar.arith_rshift(a, np.maximum(b - 1, 0)) & 1
        result = result + ((b > 0) & (last_out != 0))
    # The draft's pseudocode clips to the type (1.0's does not); a rounded shift by
    # >= 1 cannot leave it anyway.
    return {"output": np.clip(result, dt.min, dt.max)}


# The reference evaluator implements every profile of the revision, PRO-INT among them,
# so ERROR_IF(round && !PRO-INT) never fires in it: a round=true case is valid, and its
# vector needs PRO-INT as well as its mode's requirements
# (pseudocode_revisions.PROFILE_GATED_ATTRIBUTES).
REFERENCE_HAS_PRO_INT = True


def _logical_shift_operands(ctx: OpContext, draft_clause: str) -> tuple[np.ndarray, np.ndarray]:
    """The draft REQUIREs 0 <= value2 <= 31 for every type; TOSA 1.0 the operand
    type's own range (i8: 0..7, i16: 0..15), as for ARITHMETIC_RIGHT_SHIFT."""
    dt = ctx.dtype("in_out_t")
    if draft_pseudocode(ctx.revision):
        return _shift_operands(ctx, draft_clause, 31)
    clause = shift_range_clause(ctx.revision, dt.spec_name, dt.bits)
    return _shift_operands(ctx, clause, dt.bits - 1)


@implements("LOGICAL_LEFT_SHIFT")
def logical_left_shift(ctx: OpContext) -> Result:
    a, b = _logical_shift_operands(ctx, "0 <= value2 && value2 <= 31")
    return {"output": ar.logical_lshift(a, b, ctx.dtype("in_out_t").bits)}


@implements("LOGICAL_RIGHT_SHIFT")
def logical_right_shift(ctx: OpContext) -> Result:
    clause = "0 <= static_cast<int32_t>(value2) && static_cast<int32_t>(value2) <= 31"
    a, b = _logical_shift_operands(ctx, clause)
    return {"output": ar.logical_rshift(a, b, ctx.dtype("in_out_t").bits)}


def _bitwise(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[[OpContext], Result]:
    def run(ctx: OpContext) -> Result:
        _, a, b = _operands(ctx)
        return {"output": fn(ar.as_int(a), ar.as_int(b))}

    return run


implements("BITWISE_AND")(_bitwise(np.bitwise_and))
implements("BITWISE_OR")(_bitwise(np.bitwise_or))
implements("BITWISE_XOR")(_bitwise(np.bitwise_xor))


def _logical(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[[OpContext], Result]:
    def run(ctx: OpContext) -> Result:
        _, a, b = _operands(ctx)
        return {"output": fn(a.astype(np.bool_), b.astype(np.bool_))}

    return run


implements("LOGICAL_AND")(_logical(np.logical_and))
implements("LOGICAL_OR")(_logical(np.logical_or))
implements("LOGICAL_XOR")(_logical(np.not_equal))


@implements("INTDIV")
def intdiv(ctx: OpContext) -> Result:
    dt = ctx.dtype("in_out_t")
    shape, a, b = _operands(ctx)
    q = ar.intdiv(a, b)
    # Only INT_MIN / -1 exceeds the type.  The draft checks it in the operator first
    # (apply_intdiv_s then repeats it); TOSA 1.0 leaves it to apply_intdiv_s.
    if draft_pseudocode(ctx.revision):
        quotient = "static_cast<int64_t>(value1) / static_cast<int64_t>(value2)"
        fits = f"{quotient} <= maximum_s<in_out_t>()"
    else:
        fits = f"apply_intdiv_s: {ar.RANGE_CLAUSE}"
    checks = [("value2 != 0", b != 0)]
    if pseudocode_1_1(ctx.revision):
        # In int64, against an int64 scalar: numpy 2.1 crashes comparing a broadcast
        # (zero-stride) int32 view with a Python int outside int32 (a segfault).
        int64_min = np.int64(np.iinfo(np.int64).min)
        a64, b64 = ar.as_int(a), ar.as_int(b)
        checks.append((INTDIV_INT64_MIN_CLAUSE, ~((a64 == int64_min) & (b64 == -1))))
    checks.append((fits, q <= dt.int_range.max))
    ar.require_each(ctx, shape, checks, {"value1": a, "value2": b})
    return {"output": q}


def declares_nan_mode(ctx: OpContext) -> bool:
    """Whether the operator has a ``nan_mode`` attribute (TOSA 1.0 on)."""
    return any(a.name == "nan_mode" for a in ctx.op_spec.attributes)


def nan_mode(ctx: OpContext) -> str:
    """The operator's nan_mode; PROPAGATE where it declares none, which is what the
    two-argument apply_max_s / apply_min_s of the draft do."""
    if not declares_nan_mode(ctx):
        return "PROPAGATE"
    mode = str(ctx.attr("nan_mode"))
    if mode not in NAN_MODES:
        raise ValueError(f"{ctx.name}: nan_mode {mode!r} is not one of {', '.join(NAN_MODES)}")
    return mode


def _compare_nan(a: np.ndarray, b: np.ndarray, out: np.ndarray, mode: str) -> np.ndarray:
    """compare_nan where either operand is NaN (``out`` elsewhere): NaN when
    propagating; when ignoring, the other operand (a if b is the NaN, else b, so two
    NaNs give NaN)."""
    if mode == "PROPAGATE":
        return np.where(np.isnan(a) | np.isnan(b), np.nan, out)
    return np.where(np.isnan(a), b, np.where(np.isnan(b), a, out))


def max_nan(a: np.ndarray, b: np.ndarray, is_float: bool, mode: str) -> np.ndarray:
    """apply_max_s(a, b, nan_mode): ``a >= b ? a : b`` (a tie keeps a)."""
    out = np.where(a >= b, a, b)
    return _compare_nan(a, b, out, mode) if is_float else out


def min_nan(a: np.ndarray, b: np.ndarray, is_float: bool, mode: str) -> np.ndarray:
    """apply_min_s(a, b, nan_mode): ``a < b ? a : b`` (a tie takes b)."""
    out = np.where(a < b, a, b)
    return _compare_nan(a, b, out, mode) if is_float else out


def _min_max(
    ctx: OpContext, fn: Callable[[np.ndarray, np.ndarray, bool, str], np.ndarray]
) -> Result:
    dt = ctx.dtype("in_out_t")
    mode = nan_mode(ctx)
    _, a, b = _operands(ctx)
    conv = ar.as_float if dt.is_float else ar.as_int
    return {"output": fn(conv(a), conv(b), dt.is_float, mode)}


@implements("MAXIMUM")
def maximum(ctx: OpContext) -> Result:
    return _min_max(ctx, max_nan)


@implements("MINIMUM")
def minimum(ctx: OpContext) -> Result:
    return _min_max(ctx, min_nan)


@implements("MUL")
def mul(ctx: OpContext) -> Result:
    in_t = ctx.dtype("in_t")
    raw_shift = np.asarray(ctx.arg("shift"))
    ctx.error_if(raw_shift.size != 1, "rank(shift) == 0", f"shift has shape {raw_shift.shape}")
    shift = int(raw_shift.reshape(-1)[0])
    ctx.require(0 <= shift <= 63, "0 <= shift && shift <= 63", f"shift={shift}")
    i32_only = f"{type_test(ctx.revision, 'in_t', 'int32_t')} || shift == 0"
    ctx.require(in_t is I32 or shift == 0, i32_only, f"{in_t}, {shift=}")
    shape, a, b = _operands(ctx)
    if in_t.is_float:
        # Products of fp32 (or narrower) values are exact in float64.
        with np.errstate(all="ignore"):
            return {"output": ar.as_float(a) * ar.as_float(b)}
    if in_t is I32 and shift > 0:
        product = ar.rounding_rshift(ar.as_int(a) * ar.as_int(b), shift)
        clause = "product >= minimum_s<i32_t>() && product <= maximum_s<i32_t>()"
        ar.require_each(
            ctx,
            shape,
            [(clause, ar.in_range(product, I32))],
            {"value1": a, "value2": b, "shift": np.int64(shift)},
        )
        return {"output": product}
    # Written to out_t: the low 32 bits for i32 (i8 and i16 products always fit), the
    # low 64 bits for TOSA 1.1's i64.
    return {"output": ar.mul_low(a, b, ctx.dtype("out_t").bits)}


def pow_nan_clause(revision: str) -> str:
    """POW's NaN REQUIRE as the revision spells it (isNaN, is_a_NaN from 1.1)."""
    return POW_NAN_CLAUSE_1_1 if pseudocode_1_1(revision) else POW_NAN_CLAUSE


@implements("POW")
def pow_(ctx: OpContext) -> Result:
    if draft_pseudocode(ctx.revision):
        return _float_op(ctx, ar.pow_)
    shape, a, b = _operands(ctx)
    x, y = ar.as_float(a), ar.as_float(b)
    # In the order the pseudocode states them; NaN compares false, so a NaN base
    # already fails the first.
    checks = [
        (POW_BASE_CLAUSE, x >= 0),
        (POW_ZERO_CLAUSE, (x > 0) | (y > 0)),
        (pow_nan_clause(ctx.revision), ~(np.isnan(x) | np.isnan(y))),
        (POW_FINITE_CLAUSE, np.isfinite(x) & np.isfinite(y)),
    ]
    ar.require_each(ctx, shape, checks, {"value1": x, "value2": y})
    with np.errstate(all="ignore"):
        return {"output": ar.pow_(x, y)}


@implements("TABLE")
def table(ctx: OpContext) -> Result:
    assert ctx.mode is not None  # TABLE always has a mode; TABLE_SIZE comes from it
    size = int(ctx.mode.bindings["TABLE_SIZE"])
    tab = ar.as_int(ctx.arg("table")).reshape(-1)
    ctx.require(tab.size == size, "length(table) == TABLE_SIZE", f"{tab.size} != {size}")
    name = ctx.op_spec.inputs[0].name  # "input" in the draft, "input1" from TOSA 1.0
    shape = check_same_shape(ctx, name)
    x = ar.as_int(ctx.arg(name))
    if ctx.dtype("in_t").bits == 8:
        return {"output": tab[x + 128]}
    # apply_lookup_s: the i16 value as 9.7 fixed point: the top 9 bits (offset to 0..511)
    # pick the entry, the low 7 bits interpolate toward the next one.
    index = (x + 32768) >> 7
    fraction = x & 0x7F
    base = tab[index]
    slope = tab[index + 1] - base
    ar.require_each(
        ctx,
        shape,
        [("slope >= minimum<int16_t> && slope <= maximum<int16_t>", ar.in_range(slope, I16))],
        {"value": x, "index": index, "slope": slope},
    )
    return {"output": (base << 7) + slope * fraction}

"""Whole-tensor forms of the spec's arithmetic helpers (apply_add_s, apply_intdiv_s ...).

Integer helpers work on int64 and return the value together with the mask of elements
whose REQUIRE held, so that an operator can report its REQUIREs in pseudocode order
with :func:`require_each`.  Every i8/i16/i32/i48 operand and intermediate fits int64;
TOSA 1.1's i64 operands do not leave room, so for them a sum or difference wraps in
int64 and its REQUIRE is decided from the operands' signs (apply_add_s / apply_sub_s
of 1.1 state it so), a product keeps its low 64 bits as the spec asks, and shifts and
counts work on the bits themselves (uint64 views), never on a wider value.
Floating-point helpers take and return float64: the engine keeps that exact result
and rounds it to the tensor type itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from conformance.dtypes import DType

if TYPE_CHECKING:
    from reference.context import OpContext


class Checked(NamedTuple):
    """A helper's result and, per element, whether its REQUIRE held."""

    value: np.ndarray
    ok: np.ndarray


def as_int(x: np.ndarray | np.generic | int) -> np.ndarray:
    return np.asarray(x).astype(np.int64)


def as_float(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(np.float64)


def in_range(values: np.ndarray, dt: DType) -> np.ndarray:
    """minimum_s<dt>() <= values <= maximum_s<dt>(), element-wise."""
    return (values >= dt.int_range.min) & (values <= dt.int_range.max)


def wrap(values: np.ndarray | np.integer, bits: int) -> np.ndarray:
    """truncate<> / static_cast<> to a narrower two's-complement type: keep the low
    ``bits`` bits and read them back as signed (64: int64 already holds them)."""
    if bits >= 64:
        return np.asarray(values).astype(np.int64)
    half = 1 << (bits - 1)
    return np.asarray(((values.astype(np.int64) + half) & ((1 << bits) - 1)) - half)


def _wrapping(
    fn: Callable[[np.ndarray, np.ndarray], np.ndarray], a: np.ndarray, b: np.ndarray
) -> np.ndarray:
    """``fn(a, b)`` on int64, wrapping modulo 2**64 without a warning (a 0-d operand
    makes numpy compute on scalars, which warn on overflow)."""
    with np.errstate(over="ignore"):
        return np.asarray(fn(a, b))


def require_each(
    ctx: OpContext,
    shape: Sequence[int],
    checks: Sequence[tuple[str, np.ndarray]],
    values: Mapping[str, np.ndarray | np.generic] | None = None,
) -> None:
    """REQUIREs inside the pseudocode's per-element loop.

    A scalar loop would fire at the first index (row-major) where any check fails, with
    the first failing check at that index, so that is the clause reported.  ``values``
    (broadcastable to ``shape``) are shown in the detail for that index.
    """
    shape = tuple(shape)
    oks = [np.broadcast_to(ok, shape) for _, ok in checks]
    if all(bool(ok.all()) for ok in oks):
        return
    bad = ~np.logical_and.reduce(oks) if len(oks) > 1 else ~oks[0]
    index = np.unravel_index(int(np.argmax(bad.reshape(-1))), shape)
    shown = ", ".join(
        f"{name}={np.broadcast_to(v, shape)[index]}" for name, v in (values or {}).items()
    )
    where = f"at index {[int(i) for i in index]}" + (f": {shown}" if shown else "")
    for (clause, _), ok in zip(checks, oks, strict=True):
        if not ok[index]:
            ctx.require(False, clause, where)


# -- integer helpers ---------------------------------------------------------------


def add_s(a: np.ndarray | int, b: np.ndarray | int, dt: DType) -> Checked:
    """apply_add_s for an integer type: exact sum, REQUIRE it is representable."""
    x, y = as_int(a), as_int(b)
    if dt.bits >= 64:  # the sum may leave int64: decided from the operands' signs
        above, below = _sign_tests(x, y, dt, sub=False)
        return Checked(_wrapping(np.add, x, y), above & below)
    c = x + y
    return Checked(c, in_range(c, dt))


def sub_s(a: np.ndarray | int, b: np.ndarray | int, dt: DType) -> Checked:
    """apply_sub_s for an integer type: exact difference, REQUIRE it is representable.
    (1.1's apply_sub_s bounds it by ``std::numeric_limits<int_t>``, a type it never
    declares; read as the operand type in_t, as apply_add_s does.)"""
    x, y = as_int(a), as_int(b)
    if dt.bits >= 64:
        below, above = _sign_tests(x, y, dt, sub=True)
        return Checked(_wrapping(np.subtract, x, y), below & above)
    c = x - y
    return Checked(c, in_range(c, dt))


# The REQUIREs of apply_add_s / apply_sub_s as each revision states them: a range test
# of the wider result up to TOSA 1.0, two sign tests on the operands from 1.1 (whose
# apply_sub_s names its bounds std::numeric_limits<int_t>, read as in_t's).
RANGE_CLAUSE = "c >= minimum_s<in_t>() && c <= maximum_s<in_t>()"
ADD_ABOVE_CLAUSE = "!(b_i64 > 0 && a_i64 > maximum_s<in_t>() - b_i64)"
ADD_BELOW_CLAUSE = "!(b_i64 < 0 && a_i64 < minimum_s<in_t>() - b_i64)"
SUB_BELOW_CLAUSE = "!(b_i64 > 0 && a_i64 < std::numeric_limits<int_t>::min() + b_i64)"
SUB_ABOVE_CLAUSE = "!(b_i64 < 0 && a_i64 > std::numeric_limits<int_t>::max() + b_i64)"


def range_clause(type_var: str) -> str:
    """RANGE_CLAUSE for the type variable ``type_var`` (apply_add_s<acc_t> ...)."""
    return RANGE_CLAUSE.replace("in_t", type_var)


# The range test of apply_add_s<acc_t>, as REDUCE_SUM's running sums (up to TOSA 1.0)
# and AVG_POOL2D's name it.
ACC_RANGE_CLAUSE = f"{range_clause('acc_t')} (apply_add_s)"


def _sign_tests(x: np.ndarray, y: np.ndarray, dt: DType, sub: bool) -> list[np.ndarray]:
    """Per element, whether each of 1.1's two REQUIREs holds (in its order), exactly
    for every width: the bounds are moved by b only on the side where that stays in
    int64."""
    lo, hi = dt.int_range
    pos, neg = np.maximum(y, 0), np.minimum(y, 0)
    if sub:  # x - y leaves the type below when y > 0, above when y < 0
        return [~((y > 0) & (x < lo + pos)), ~((y < 0) & (x > hi + neg))]
    return [~((y > 0) & (x > hi - pos)), ~((y < 0) & (x < lo - neg))]


def add_sub_rules(
    a: np.ndarray | int,
    b: np.ndarray | int,
    dt: DType,
    *,
    sub: bool,
    sign_tests: bool,
    prefix: str = "",
) -> tuple[np.ndarray, list[tuple[str, np.ndarray]]]:
    """apply_add_s / apply_sub_s (``sub``) for an integer type: the result and its
    REQUIREs as (clause, ok) pairs for :func:`require_each`, with ``prefix`` before each
    clause: the range test of TOSA 1.0, or 1.1's two sign tests (``sign_tests``)."""
    x, y = as_int(a), as_int(b)
    checked = (sub_s if sub else add_s)(x, y, dt)
    if not sign_tests:
        return checked.value, [(prefix + RANGE_CLAUSE, checked.ok)]
    clauses = (SUB_BELOW_CLAUSE, SUB_ABOVE_CLAUSE) if sub else (ADD_ABOVE_CLAUSE, ADD_BELOW_CLAUSE)
    oks = _sign_tests(x, y, dt, sub)
    return checked.value, [(prefix + c, ok) for c, ok in zip(clauses, oks, strict=True)]


def mul_low(a: np.ndarray, b: np.ndarray, bits: int) -> np.ndarray:
    """apply_mul_s for an integer type: the low ``bits`` bits of the exact product
    (|a*b| <= 2**62 for i32 operands, so int64 holds it; for i64 operands the int64
    product wraps modulo 2**64, which is its low 64 bits)."""
    return wrap(_wrapping(np.multiply, as_int(a), as_int(b)), bits)


def rounding_rshift(p: np.ndarray, shift: int) -> np.ndarray:
    """(p + (1 << (shift - 1))) >> shift for 1 <= shift <= 63, exactly.

    Adding the rounding term first can leave int64 (INT_MIN * INT_MIN + 2**62 is 2**63),
    so floor-shift and carry in the rounding from the bits shifted out instead.
    """
    p = as_int(p)
    half = np.int64(1 << (shift - 1))
    dropped = p & np.int64((1 << shift) - 1)  # 0 <= dropped < 2**shift
    return np.right_shift(p, shift) + (dropped >= half)


def intdiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer division truncating toward zero (C semantics); where b == 0 the result is
    0, as the caller has REQUIREd b != 0 before using it, and INT64_MIN / -1 (which
    apply_intdiv_s REQUIREs away) gives INT64_MIN rather than a numpy overflow."""
    a, b = as_int(a), as_int(b)
    int64_min = np.iinfo(np.int64).min
    safe = np.where((b == 0) | ((a == int64_min) & (b == -1)), 1, b)
    # numpy's // floors; step back toward zero when the signs differ and it is inexact.
    q = a // safe
    q = q + ((q * safe != a) & ((a < 0) != (safe < 0)))
    return np.where(b == 0, 0, q)


def arith_rshift(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """apply_arith_rshift: sign-preserving shift of the value (0 <= b <= 63)."""
    return np.right_shift(as_int(a), as_int(b))


def _unsigned64(values: np.ndarray) -> np.ndarray:
    """The 64 bits of int64 values read as uint64 (two's complement)."""
    return as_int(values).astype(np.uint64)


def logical_rshift(a: np.ndarray, b: np.ndarray, bits: int) -> np.ndarray:
    """apply_logical_rshift: shift the operand's own bits with zeros coming in (the
    value is zero-extended from ``bits``), then read the result back as that type."""
    if bits >= 64:
        shifted = np.right_shift(_unsigned64(a), as_int(b).astype(np.uint64))
        return np.asarray(shifted).astype(np.int64)  # wraps back to the signed reading
    unsigned = as_int(a) & ((1 << bits) - 1)
    return wrap(np.right_shift(unsigned, as_int(b)), bits)


def logical_lshift(a: np.ndarray, b: np.ndarray, bits: int) -> np.ndarray:
    """value1 << value2 in the operand type: bits shifted past the top are lost
    (|a| < 2**31 and b <= 31, so the int64 shift itself cannot overflow; an i64 shift
    by b <= 63 wraps in int64, which keeps exactly the low 64 bits)."""
    return wrap(_wrapping(np.left_shift, as_int(a), as_int(b)), bits)


def bit_length(v: np.ndarray) -> np.ndarray:
    """The number of significant bits of non-negative int64 values (0 for 0), exactly:
    a binary search by shifts rather than float64, which rounds above 2**53."""
    v = as_int(v).copy()
    n = np.zeros(v.shape, np.int64)
    for step in (32, 16, 8, 4, 2, 1):
        high = np.right_shift(v, step) != 0
        n = n + np.where(high, step, 0)
        v = np.where(high, np.right_shift(v, step), v)
    return n + (v != 0)


def count_leading_zeros(a: np.ndarray, bits: int) -> np.ndarray:
    """count_leading_zeros of a ``bits``-wide value (32, or 64 for TOSA 1.1's i64):
    ``bits`` for 0, 0 for any negative value."""
    v = as_int(a)
    return np.where(v < 0, 0, bits - bit_length(np.maximum(v, 0)))


def clz32(a: np.ndarray) -> np.ndarray:
    """count_leading_zeros of a 32-bit value: 32 for 0, 0 for any negative value."""
    return count_leading_zeros(a, 32)


# -- min / max / clip ----------------------------------------------------------------


def max_s(a: np.ndarray, b: np.ndarray, is_float: bool) -> np.ndarray:
    """apply_max_s: ``a >= b ? a : b``, NaN if either is NaN (float).  The tie keeps
    ``a``, so max_s(-0.0, +0.0) is -0.0 as the pseudocode states it."""
    out = np.where(a >= b, a, b)
    if is_float:
        out = np.where(np.isnan(a) | np.isnan(b), np.nan, out)
    return out


def min_s(a: np.ndarray, b: np.ndarray, is_float: bool) -> np.ndarray:
    """apply_min_s: ``a < b ? a : b`` (a tie takes ``b``), NaN if either is NaN."""
    out = np.where(a < b, a, b)
    if is_float:
        out = np.where(np.isnan(a) | np.isnan(b), np.nan, out)
    return out


def clip_s(value: np.ndarray, lo: np.ndarray, hi: np.ndarray, is_float: bool) -> Checked:
    """apply_clip_s: max with ``lo`` then min with ``hi``; REQUIRE(lo <= hi), which for
    floats also fails when either bound is NaN."""
    ok = np.asarray(lo <= hi)
    return Checked(min_s(max_s(value, lo, is_float), hi, is_float), ok)


# -- floating-point helpers (float64 in, float64 out) --------------------------------

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SERIES_LIMIT = 2.5  # |x| below this: power series; above: continued fraction for erfc
_SERIES_TERMS = 60
_FRACTION_TERMS = 40


def _exp_neg_square(x: np.ndarray) -> np.ndarray:
    """exp(-x*x) without the error of rounding x*x first: x = hi + lo with hi of 26
    bits, so hi*hi is exact and the small remainder goes into a second exp."""
    c = 134217729.0 * x  # 2**27 + 1: Veltkamp split
    hi = c - (c - x)
    lo = x - hi
    return np.exp(-hi * hi) * np.exp(-(2.0 * hi + lo) * lo)


def erf(x: np.ndarray) -> np.ndarray:
    """The error function in float64 (numpy has none).

    For |x| < 2.5 the all-positive series erf(x) = 2/sqrt(pi) exp(-x^2) sum 2^n x^(2n+1)
    / (1*3*...*(2n+1)) has no cancellation; above it, erfc's continued fraction
    x + (1/2)/(x + 1/(x + (3/2)/(x + ...))) converges quickly.  Each runs a fixed
    number of whole-array steps.  Measured against the C library: within 16 fp64 ulp.
    """
    x = as_float(x)
    ax = np.abs(x)
    out = np.empty_like(ax)
    small = ax < _SERIES_LIMIT  # NaN goes to the fraction branch and stays NaN
    xs = ax[small]
    two_x2 = 2.0 * xs * xs
    term = xs.copy()
    total = xs.copy()
    for n in range(1, _SERIES_TERMS):
        term = term * two_x2 / (2 * n + 1)
        total = total + term
    out[small] = _TWO_OVER_SQRT_PI * _exp_neg_square(xs) * total
    # erfc(8) < 1e-28, far below half an fp64 ulp of 1: larger inputs give exactly 1.
    xl = np.minimum(ax[~small], 8.0)
    tail = np.zeros_like(xl)
    for k in range(_FRACTION_TERMS, 0, -1):
        tail = (k / 2.0) / (xl + tail)
    out[~small] = 1.0 - _exp_neg_square(xl) / math.sqrt(math.pi) / (xl + tail)
    return np.copysign(out, x)  # erf is odd; keeps the sign of -0.0


def sigmoid(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-as_float(x)))


def pow_(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """apply_pow, with the spec's rules where they differ from C's pow(): any NaN input
    gives NaN (C gives pow(1, NaN) = pow(NaN, 0) = 1), and a negative base with a
    finite non-integral exponent gives NaN even for a base of -inf."""
    a, b = as_float(a), as_float(b)
    with np.errstate(all="ignore"):
        out = np.power(a, b)
        non_integral = np.isfinite(b) & (np.floor(b) != b)
    out = np.where((a < 0) & non_integral, np.nan, out)
    return np.where(np.isnan(a) | np.isnan(b), np.nan, out)

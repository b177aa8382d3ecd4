"""Operand values that land an operator's exact result on a rounding tie, or one
step off it, for the recipes' "ties" target (strategies.ties says which ones are).

Plain numpy on a generator: each constructor takes the operand already drawn (or a
shape) and returns its partner, so that a recipe can draw one operand, broadcast it to
the output shape, build the partner there and read it back at the partner's own
shape (``project``): every partner element then meets the operand it was built for.
About a third of the elements are ties, the rest one step below or above one; the
first element of a tensor is a tie and the second a near-tie, so that even tiny
tensors have both.
"""

from __future__ import annotations

import numpy as np

from conformance.dtypes import DType
from strategies.ties import ulp


def _sides(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """-1 (below), 0 (on the tie) or +1 (above) per element; a tie first, then a
    near-tie."""
    side = rng.integers(-1, 2, shape)
    flat = side.reshape(-1)
    flat[:2] = [0, rng.choice([-1, 1])][: flat.size]
    return side


def _signs(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return np.where(rng.integers(0, 2, shape) == 0, -1, 1)


def inverse_mod_pow2(a: np.ndarray, bits: int) -> np.ndarray:
    """The inverse of odd ``a`` modulo 2**bits (bits <= 62), by Newton's iteration
    (each step doubles the bits that are right; an odd a is its own inverse to 3)."""
    mask = np.uint64((1 << bits) - 1)
    shape = np.shape(a)
    # At least 1-d: numpy warns about wrapping arithmetic on scalars, not on arrays.
    a = np.atleast_1d(np.asarray(a).astype(np.int64)).astype(np.uint64) & mask
    x = a.copy()
    for _ in range(5):  # 3 -> 6 -> 12 -> 24 -> 48 -> 96 bits
        x = (x * (np.uint64(2) - a * x)) & mask  # uint64 arithmetic wraps mod 2**64
    return x.astype(np.int64).reshape(shape)


def float_midpoints(
    rng: np.random.Generator, dt: DType, size: int, top: float, *, integral: bool = False
) -> np.ndarray:
    """fp64 values exactly half-way between two neighbouring values of float type
    ``dt``, of magnitude at most about ``top``, both signs, subnormal ones included;
    ``integral``: integer midpoints only (from the first binade whose ulp is 2)."""
    frac = dt.fp.normal_frac
    emin = int(np.log2(dt.fp.normal_min))
    emax = min(int(np.floor(np.log2(dt.fp.normal_max))), int(np.floor(np.log2(top))))
    lowest = frac + 1 if integral else emin - 1
    e = rng.integers(lowest, max(lowest, emax) + 1, size)
    m = rng.integers(0, 1 << frac, size).astype(np.float64)
    normal = np.ldexp(1 + (m + 0.5) / 2**frac, e)
    subnormal = (m + 0.5) * 2.0 ** (emin - frac)
    return _signs(rng, (size,)) * np.where(e >= emin, normal, subnormal)


def add_partner(rng: np.random.Generator, a: np.ndarray, dt: DType) -> np.ndarray:
    """b (fp64, held exactly by float type ``dt``) with a + b half-way between two
    neighbours of ``a`` (half its ulp away, or three halves), or 2**-p ulp (p the
    precision) above or 2**-(p+1) ulp below such a point: what the guard and sticky
    bits of an adder decide.  b has a's sign, so that the sum stays in a's binade
    (away from zero; a power of two minus half its ulp would be exact)."""
    p = dt.fp.normal_frac + 1
    x = np.where(np.isfinite(a), a, 1.0).astype(np.float64)
    u = ulp(x, dt)
    side = _sides(rng, x.shape)
    odd = np.where(side == 0, 2 * rng.integers(0, 2, x.shape) + 1, 1)  # held in p bits
    odd.reshape(-1)[:1] = 1
    off = np.where(side > 0, np.ldexp(u, -p), np.where(side < 0, -np.ldexp(u, -p - 1), 0.0))
    return np.where(np.signbit(x), -1.0, 1.0) * (odd * u / 2 + off)


def _near_partner(sig: np.ndarray, p: int) -> np.ndarray:
    """For odd p-bit significands A: an odd B < 2**p with A * B of 2p bits and
    A * B = 2**(p-1) +- 1 modulo 2**p (B solved by an inverse modulo 2**p), else 0."""
    big = np.int64(1 << p)
    inv = inverse_mod_pow2(np.where(sig % 2 == 1, sig, 1), p)
    b = np.zeros(sig.shape, np.int64)
    for sigma in (1, -1):
        cand = inv * ((1 << (p - 1)) + sigma) % big
        fits = (sig % 2 == 1) & (sig * cand >= np.int64(1) << (2 * p - 1)) & (b == 0)
        b = np.where(fits, cand, b)
    return b


def mul_factors(rng: np.random.Generator, shape: tuple[int, ...], dt: DType) -> np.ndarray:
    """Values of float type ``dt`` whose significands A have a tie or a near-tie
    partner (see mul_partner): odd A below 2**(p+1) / 3 (3A has p + 1 bits, the last
    one 1), or odd A above 3 * 2**(p-2) for which _near_partner finds a B."""
    p = dt.fp.normal_frac + 1
    side = _sides(rng, shape)
    lo_tie, hi_tie = 1 << (p - 2), -(-(1 << (p + 1)) // 3) // 2  # odd A = 2k + 1 in these
    near = side != 0
    a = 2 * rng.integers(lo_tie, hi_tie, shape) + 1
    redo = near
    for _ in range(32):  # about half of the odd A have a partner: redraw the others
        a = np.where(redo, 2 * rng.integers(3 << (p - 3), 1 << (p - 1), shape) + 1, a)
        redo = near & (_near_partner(a, p) == 0)
        if not redo.any():
            break
    scale = rng.integers(-4, 5, shape) - p + 1
    return _signs(rng, shape) * np.ldexp(a.astype(np.float64), scale)


def mul_partner(rng: np.random.Generator, a: np.ndarray, dt: DType) -> np.ndarray:
    """b (held by ``dt``) with a * b a tie (3 * A: p + 1 bits, the last one 1) or
    within one lsb of one (_near_partner's B); 1 where a's significand allows
    neither."""
    p = dt.fp.normal_frac + 1
    x = np.where(np.isfinite(a) & (a != 0), np.abs(a), 1.0).astype(np.float64)
    m, _ = np.frexp(x)
    sig = np.ldexp(m, p).astype(np.int64)  # A in [2**(p-1), 2**p)
    b = np.where(sig >= 3 << (p - 2), _near_partner(sig, p), 0)  # mul_factors' near range
    b = np.where((sig % 2 == 1) & (3 * sig < (1 << (p + 1))), 3, b)
    b = np.where(b == 0, 1, b)
    _, eb = np.frexp(b.astype(np.float64))
    scale = rng.integers(-4, 5, x.shape) - eb + 1  # B to [1, 2) * 2**(-4..4)
    return _signs(rng, x.shape) * np.ldexp(b.astype(np.float64), scale)


def shifted_ties(rng: np.random.Generator, shift: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """int64 values in [lo, hi] whose low ``shift`` bits are 10...0 (a tie of a
    rounding right shift), 10...01 or 01...1 (shifts of 2 and more); shift 0 gives any."""
    s = np.asarray(shift, np.int64)
    side = np.where(s >= 2, _sides(rng, s.shape), 0)
    half = np.where(s >= 1, np.left_shift(np.int64(1), np.maximum(s, 1) - 1), 0)
    step = np.left_shift(np.int64(1), s)
    base = half + side
    k_lo = -((base - lo) // step)  # ceil((lo - base) / step)
    k_hi = (hi - base) // step
    k = k_lo + (rng.random(s.shape) * (k_hi - k_lo + 1)).astype(np.int64)
    return np.clip(k * step + base, lo, hi)


def _trailing_zeros(a: np.ndarray) -> np.ndarray:
    low = np.where(a == 0, 1, a & -a)  # the lowest set bit, a power of two
    return np.log2(low.astype(np.float64)).astype(np.int64)


def shifted_product_factors(
    rng: np.random.Generator, shape: tuple[int, ...], shift: int
) -> np.ndarray:
    """i32 values a with room for a partner b such that a * b / 2**shift is a tie or
    one unit off one: odd values up to 2**15, or u * 2**j (u odd) with
    shift - 31 <= j <= min(30, shift - 1); -2**31 for shifts 62 and 63."""
    if shift >= 62:
        return np.full(shape, -(1 << 31), np.int64)
    j_lo, j_hi = max(0, shift - 31), min(30, shift - 1)
    j = rng.integers(j_lo, j_hi + 1, shape)
    j = np.where(rng.random(shape) < 0.5, j_lo, j)  # odd ones half of the time
    u = 2 * rng.integers(0, 1 << np.minimum(14, 30 - j)) + 1
    return _signs(rng, shape) * u * np.left_shift(np.int64(1), j)


def shifted_product_partner(rng: np.random.Generator, a: np.ndarray, shift: int) -> np.ndarray:
    """b with a * b's low ``shift`` bits 10...0 (b = v * 2**(shift-1-j), j the
    trailing zeros of a, v odd) or, for odd a and shift <= 31, 10...01 or 01...1 (b
    solved modulo 2**shift).  Results stay below 2**29 in magnitude."""
    a = np.asarray(a, np.int64)
    if shift >= 62:  # (-2**31) * b = 2**(shift-1) times an odd number
        return np.full(a.shape, -(1 << 31) if shift == 63 else 1 << 30, np.int64)
    j = _trailing_zeros(a)
    rest = np.maximum(shift - 1 - j, 0)
    v = 2 * rng.integers(0, 1 << np.minimum(14, 30 - rest)) + 1
    tie = _signs(rng, a.shape) * v * np.left_shift(np.int64(1), rest)
    if not 2 <= shift <= 31:
        return tie
    side = _sides(rng, a.shape)
    mod = np.int64(1 << shift)
    inv = inverse_mod_pow2(np.where(j == 0, a, 1), shift)
    near = inv * ((1 << (shift - 1)) + side) % mod
    near = np.where(rng.random(a.shape) < 0.5, near, near - mod)  # both signs, in i32
    return np.where((j == 0) & (side != 0), near, tie)


def division_ties(rng: np.random.Generator, b: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """a in [lo, hi] with a / b exactly k + 1/2 (b even), or half a unit or one unit
    of a off it: a = k * b + floor(b / 2) + {-1, 0, 1}, k of either sign."""
    b = np.asarray(b, np.int64)
    mag = np.maximum(np.abs(b), 1)
    side = _sides(rng, b.shape)
    top = np.maximum((hi // mag) - 2, 0)
    k = (rng.random(b.shape) * (2 * top + 1)).astype(np.int64) - top
    return np.clip(k * b + np.floor_divide(b, 2) + side, lo, hi)

"""Round numbers to a TOSA floating-point type once, to nearest, ties to even.

ml_dtypes (0.5) converts float64 to bfloat16 and the float8 types through float32, so
a value just off a tie is first rounded onto the tie and then rounded again to even:
the float64 value 1 + 2**-8 + 2**-30 becomes bf16 1.0 instead of 1.0078125, and
CAST i32 -> bf16 of 16,842,753 gives 16,777,216 instead of 16,908,288.  ``round_to``
rounds the exact value directly:

* the significand is rounded at the type's precision in float64 arithmetic that is
  exact (scaling by powers of two and ``np.rint``, which ties to even), with the
  quantum fixed at the smallest normal exponent so subnormals round correctly;
* a result above the largest finite value overflows: to infinity of the input's sign,
  or for fp8e4m3, which has no infinity, to NaN (OCP-OFP8 non-saturating mode, which
  the precision table asks of CAST; round_to_nearest_float: "if the destination type
  does not have an infinity representation, values outside of the representable range
  must be set to NaN").  Rounding uses an unbounded exponent first, so a tie at the
  overflow threshold goes to the even neighbour: 464 -> 448 in fp8e4m3, while
  2**128 - 2**119 -> inf in bf16;
* NaN stays NaN and the sign of zero (and of results that underflow to zero) is kept.

64-bit integers, which float64 cannot always hold, are rounded in integer arithmetic.
numpy's own float64 -> float16 / float32 casts round once (IEEE conversions) and are
used as they are.
"""

from __future__ import annotations

import numpy as np

from conformance.dtypes import FP16, FP32, DType, is_float_storage

# Narrow types numpy converts to directly from float64, rounding once.
_NATIVE = (FP16, FP32)


def round_to(dt: DType, x: np.ndarray) -> np.ndarray:
    """``x`` rounded to nearest, ties to even, into floating-point type ``dt``, held in
    ``dt.storage``.

    ``x`` may be of any integer, bool or floating-point dtype up to float64 (narrow
    ml_dtypes floats included).  An array already in ``dt.storage`` is returned as a
    copy, bit for bit (NaN payloads kept).

    >>> from conformance.dtypes import BF16
    >>> round_to(BF16, np.array([1 + 2**-8 + 2**-30])).astype(np.float64)
    array([1.0078125])
    """
    if not dt.is_float:
        raise TypeError(f"round_to rounds to floating-point types, not {dt}")
    arr = np.asarray(x)
    if arr.dtype == dt.storage:
        return arr.copy()
    # Overflow to inf is the intended result and signalling NaNs widen quietly: neither
    # is worth a warning.
    with np.errstate(over="ignore", invalid="ignore"):
        if arr.dtype.kind in "iu" and arr.dtype.itemsize == 8:
            wide = _int64_rounded(arr, dt.fp.normal_frac)
        elif arr.dtype.kind in "biu" or (is_float_storage(arr.dtype) and arr.dtype.itemsize <= 8):
            wide = arr.astype(np.float64)  # exact: every such value is a float64 value
        else:
            raise TypeError(f"cannot round {arr.dtype} values to {dt} (not a real number dtype)")
        if any(dt is t for t in _NATIVE):
            return wide.astype(dt.storage)
        return _round_float64(wide, dt).astype(dt.storage)  # exact: already a dt value


def round_to_float64(dt: DType, x: np.ndarray) -> np.ndarray:
    """``round_to(dt, x)`` widened back to float64: the value a ``dt`` tensor holds."""
    return round_to(dt, x).astype(np.float64)


def _round_float64(x: np.ndarray, dt: DType) -> np.ndarray:
    """float64 values rounded to ``dt``'s values, still in float64."""
    frac = dt.fp.normal_frac
    emin = int(np.log2(dt.fp.normal_min))
    mag = np.abs(x)
    _, e2 = np.frexp(mag)  # mag = m * 2**e2 with 0.5 <= m < 1, so its exponent is e2 - 1
    # The quantum (ulp) of the binade; below normal_min it stays that of the subnormals.
    shift = frac - np.maximum(e2 - 1, emin)
    # ldexp by a power of two is exact here (no float64 overflow or underflow: the
    # scaled value is below 2**(frac+1), or the input was already that small).
    rounded = np.ldexp(np.rint(np.ldexp(mag, shift)), -shift)
    over = rounded > dt.fp.normal_max  # NaN compares False: NaN stays NaN
    rounded = np.where(over, np.inf if dt.has_inf else np.nan, rounded)
    return np.copysign(rounded, x)


def _int64_rounded(v: np.ndarray, frac: int) -> np.ndarray:
    """64-bit integers rounded to ``frac + 1`` significant bits, ties to even, as float64
    (exact: the result has at most frac + 2 <= 25 significant bits)."""
    u = v.astype(np.uint64)  # two's complement bits for negative int64
    neg = v < 0
    mag = np.where(neg, np.negative(u), u)  # |v|, including |int64 min| = 2**63
    # Bit length from the float64 exponent; the conversion may round up to the next
    # power of two, so correct by one where the top bit is not actually set.
    _, e2 = np.frexp(mag.astype(np.float64))
    top = np.clip(e2 - 1, 0, 63).astype(np.uint64)
    top = np.where((mag >> top) == 0, top - np.uint64(1), top)
    k = np.where(top > frac, top - np.uint64(frac), np.uint64(0))  # low bits dropped
    q = mag >> k
    rest = mag - (q << k)
    half = np.uint64(1) << (np.maximum(k, np.uint64(1)) - np.uint64(1))
    # k == 0 drops nothing: rest is 0 and half is 1, so nothing rounds up.
    up = (rest > half) | ((rest == half) & (k > 0) & ((q & np.uint64(1)) == 1))
    value = np.ldexp((q + up.astype(np.uint64)).astype(np.float64), k.astype(np.int64))
    return np.where(neg, -value, value)

"""The microscaling (OCP-MX) numerics of TOSA 1.1: the element types fp4e2m1, fp6e2m3,
fp6e3m2, fp8ue8m0 and mxint8, and the block scale of a block of values.

Everything is vectorised over whole tensors; nothing here loops over elements.

* **Encodings.**  :func:`decode_bits` gives the value of every encoding by arithmetic
  on its fields (introduction, "Number formats": sign, exponent, mantissa and bias of
  each type, numeric_accuracy_helpers.tosac's ``exponent_bias``), independently of
  ml_dtypes, whose ``float4_e2m1fn``, ``float6_e2m3fn``, ``float6_e3m2fn`` and
  ``float8_e8m0fnu`` hold the tensors; the tests check the two agree on every code.
  fp8ue8m0 is ``2**(code - 127)`` with code 0xFF its one NaN and no zero; mxint8 is
  the two's-complement byte over 64.
* **Rounding to a type** (``round_to_nearest_float``, numeric_conversion_helpers.tosac):
  to nearest, ties to even, subnormals kept.  Where the text gives no value, which
  :func:`encode` has to store something for, it reads (the readings table,
  ``mx-*``): a value past the largest finite one of fp4e2m1/fp6 (no infinity, no NaN)
  saturates to it, a NaN becomes +0; mxint8 (no NaN either) saturates to -128 / 127 and
  stores NaN as 0; fp8ue8m0 rounds the exponent (ties to the even exponent, as its
  single, implicit significand bit makes 1.5 * 2**e a tie between 2**e and 2**(e+1)),
  anything at or past 2**127's rounding limit, zero, negatives and NaN give its NaN,
  and values below 2**-127 saturate to it (ml_dtypes does the same).  ml_dtypes itself
  stores a NaN as -0.0 in fp4/fp6 and rounds through float32; :func:`encode` does not
  depend on either.
* **The block scale** (``calc_block_scale``): the exponent of the block's largest
  magnitude over the largest value that still rounds to the value type's normal_max
  (``get_largest_value_rounding_to_normal_max``): ``floor(log2(max_abs / out_max)) + 1``
  (fp8e4m3: ``ceil``), clipped to [2**-127, 2**127]; an all-zero block gets 2**-127,
  a block holding a NaN or an infinity the NaN scale.  Computed in fp64 (CAST_TO's
  precision text: "calculating the block scale ... using fp64_t arithmetic"), the
  floor and ceiling taken from the exact binary exponent of the quotient.
"""

from __future__ import annotations

import math

import numpy as np

from conformance import dtypes
from conformance.dtypes import DType

BLOCK_SIZE = dtypes.MX_BLOCK_SIZE  # BLOCK_SIZE_32: the innermost dimension's block
SCALE_T = dtypes.FP8UE8M0
VALUE_TYPES: tuple[DType, ...] = (
    dtypes.MX_VALUES
)  # fp8e4m3, fp8e5m2, fp6e3m2, fp6e2m3, fp4e2m1, mxint8
MX_ELEMENT_TYPES: tuple[DType, ...] = (
    dtypes.FP4E2M1,
    dtypes.FP6E2M3,
    dtypes.FP6E3M2,
    dtypes.FP8UE8M0,
    dtypes.MXINT8,
)
UE8M0_BIAS = 127
UE8M0_NAN = 0xFF
MXINT8_SCALE = 64  # mxint8: value = raw / 64

# The scale's range (introduction: fp8ue8m0_t from exp2(-127) to exp2(+127)).
SCALE_MIN = 2.0**-127
SCALE_MAX = 2.0**127


# -- encodings --------------------------------------------------------------------------


def code_count(dt: DType) -> int:
    """How many encodings the type has: 16, 64 or 256."""
    return 1 << dt.bits


def encodings(dt: DType) -> np.ndarray:
    """Every encoding of ``dt``, in code order, held in its storage dtype."""
    codes = np.arange(code_count(dt), dtype=np.uint8)
    return from_bits(codes, dt)


def from_bits(codes: np.ndarray, dt: DType) -> np.ndarray:
    """Encodings (integers 0 .. 2**bits - 1) as a ``dt`` tensor in its storage dtype."""
    c = np.asarray(codes).astype(np.uint8)
    if dt.storage.itemsize != 1:
        raise TypeError(f"{dt} is not a one-byte type")
    return c.view(dt.storage)


def to_bits(values: np.ndarray, dt: DType) -> np.ndarray:
    """The encodings of a ``dt`` tensor held in its storage dtype, as uint8."""
    arr = np.asarray(values)
    if arr.dtype != dt.storage:
        raise TypeError(f"expected {dt.storage} storage for {dt}, got {arr.dtype}")
    return arr.view(np.uint8) & np.uint8(code_count(dt) - 1)


def _float_fields(dt: DType) -> tuple[int, int, int]:
    """(exponent bits, mantissa bits, bias) of a signed floating-point MX/fp8 type."""
    e, m = dt.fp.exponent_bits, dt.fp.normal_frac
    return e, m, (1 << (e - 1)) - 1


def decode_bits(codes: np.ndarray, dt: DType) -> np.ndarray:
    """The value of each encoding of ``dt``, in fp64, from its bit fields alone."""
    c = np.asarray(codes).astype(np.int64) & (code_count(dt) - 1)
    if dt is dtypes.MXINT8:
        return np.where(c >= 128, c - 256, c).astype(np.float64) / MXINT8_SCALE
    if dt is dtypes.FP8UE8M0:
        return np.where(c == UE8M0_NAN, np.nan, np.ldexp(1.0, c - UE8M0_BIAS))
    e_bits, m_bits, bias = _float_fields(dt)
    sign = np.where((c >> (e_bits + m_bits)) & 1 == 1, -1.0, 1.0)
    exp = (c >> m_bits) & ((1 << e_bits) - 1)
    man = c & ((1 << m_bits) - 1)
    frac = man / float(1 << m_bits)
    normal = np.ldexp(1.0 + frac, exp - bias)
    sub = np.ldexp(frac, 1 - bias)
    value = sign * np.where(exp == 0, sub, normal)
    top = exp == (1 << e_bits) - 1
    if dt is dtypes.FP8E4M3:  # OCP-OFP8: S.1111.111 is NaN, no infinity
        value = np.where(top & (man == (1 << m_bits) - 1), np.nan, value)
    elif dt is dtypes.FP8E5M2:  # IEEE-like: the top exponent is infinity or NaN
        value = np.where(top, np.where(man == 0, sign * np.inf, np.nan), value)
    return value


def decode(values: np.ndarray, dt: DType) -> np.ndarray:
    """The values a ``dt`` tensor holds, in fp64.  An fp64 array is taken as values
    already (the abs-input pass of a dot product hands the operators magnitudes)."""
    arr = np.asarray(values)
    if arr.dtype == np.float64:
        return arr
    if dt is dtypes.MXINT8:
        return arr.astype(np.int64).astype(np.float64) / MXINT8_SCALE
    with np.errstate(invalid="ignore"):  # signalling NaNs widen quietly
        return arr.astype(np.float64)


def round_value(x: np.ndarray, dt: DType) -> np.ndarray:
    """``round_to_nearest_float`` into ``dt`` as an fp64 value (see the module text for
    what it gives where the spec gives no value)."""
    wide = np.asarray(x, dtype=np.float64)
    if dt is dtypes.MXINT8:
        with np.errstate(invalid="ignore"):
            raw = np.clip(np.rint(wide * MXINT8_SCALE), -128, 127)
        return np.where(np.isnan(wide), 0.0, raw) / MXINT8_SCALE
    if dt is dtypes.FP8UE8M0:
        return _round_ue8m0(wide)
    return _round_float(wide, dt)


def _round_float(x: np.ndarray, dt: DType) -> np.ndarray:
    """Round to nearest, ties to even, at ``dt``'s precision (the quantum fixed at the
    smallest normal binade below it, so subnormals round right), in exact fp64
    arithmetic; a result past normal_max is infinity (fp8e5m2), NaN (fp8e4m3) or, for
    the types with neither, the saturated normal_max (a NaN becomes +0 there)."""
    frac = dt.fp.normal_frac
    emin = math.frexp(dt.fp.normal_min)[1] - 1
    mag = np.abs(x)
    with np.errstate(invalid="ignore", over="ignore"):
        _, e2 = np.frexp(np.where(np.isfinite(mag), mag, 1.0))
        shift = frac - np.maximum(e2 - 1, emin)
        rounded = np.ldexp(np.rint(np.ldexp(mag, shift)), -shift)
    over = (rounded > dt.fp.normal_max) | np.isinf(mag)
    if dt.has_inf:
        rounded = np.where(over, np.inf, rounded)
    elif dt.has_nan:
        rounded = np.where(over, np.nan, rounded)
    else:
        rounded = np.where(over, float(dt.fp.normal_max), rounded)
        return np.where(np.isnan(x), 0.0, np.copysign(rounded, x))
    return np.where(np.isnan(x), np.nan, np.copysign(rounded, x))


def _round_ue8m0(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        ok = np.isfinite(x) & (x > 0)
        safe = np.where(ok, x, 1.0)
        m, e = np.frexp(safe)  # safe = m * 2**e, 0.5 <= m < 1
        # Significand 2m in [1, 2): 1.5 is the tie between 2**(e-1) and 2**e, which goes
        # to the even exponent; above it rounds up.
        up = (m > 0.75) | ((m == 0.75) & ((e - 1) % 2 == 1))
        exp = np.where(up, e, e - 1)
        value = np.ldexp(1.0, np.clip(exp, -UE8M0_BIAS, UE8M0_BIAS + 1))
    value = np.where(exp < -UE8M0_BIAS, SCALE_MIN, value)
    return np.where(ok & (exp <= UE8M0_BIAS), value, np.nan)


def encode(x: np.ndarray, dt: DType) -> np.ndarray:
    """``x`` rounded into ``dt`` and held in its storage (mxint8: the raw byte)."""
    value = round_value(x, dt)
    if dt is dtypes.MXINT8:
        return (value * MXINT8_SCALE).astype(np.int8)
    if dt is dtypes.FP8UE8M0:
        _, e = np.frexp(np.where(np.isnan(value), 1.0, value))
        bits = np.where(np.isnan(value), UE8M0_NAN, e - 1 + UE8M0_BIAS)
        return from_bits(bits.astype(np.uint8), dt)
    with np.errstate(invalid="ignore", over="ignore"):
        return value.astype(dt.storage)  # exact: already a value of dt


# -- the block scale ---------------------------------------------------------------------


def largest_rounding_to_normal_max(dt: DType) -> float:
    """get_largest_value_rounding_to_normal_max<dt>: normal_max plus half its ulp
    (mxint8: plus half of 1/64).  fp4e2m1 7.0, fp6e2m3 7.75, fp6e3m2 30, fp8e4m3 464,
    fp8e5m2 61440, mxint8 1.9921875."""
    if dt is dtypes.MXINT8:
        return (127 + 0.5) / MXINT8_SCALE
    top = float(dt.fp.normal_max)
    max_ulp = math.ldexp(1.0, math.frexp(top)[1] - 1 - dt.fp.normal_frac)
    return top + 0.5 * max_ulp


def block_view(x: np.ndarray, block_size: int = BLOCK_SIZE) -> np.ndarray:
    """``x`` with its innermost dimension split into (blocks, block_size)."""
    arr = np.asarray(x)
    *lead, inner = arr.shape
    if inner % block_size:
        raise ValueError(f"innermost dimension {inner} is not a multiple of {block_size}")
    return arr.reshape(*lead, inner // block_size, block_size)


def block_max_abs(x: np.ndarray, block_size: int = BLOCK_SIZE) -> np.ndarray:
    """tensor_block_maxabs for every block: the largest magnitude of its values, NaN if
    any is NaN (apply_max_s propagates NaN); shape ``[..., C / block_size]``."""
    with np.errstate(invalid="ignore"):
        return np.max(np.abs(block_view(np.asarray(x, np.float64), block_size)), axis=-1)


def block_scale(max_abs: np.ndarray, value_t: DType) -> np.ndarray:
    """calc_block_scale<in_t, fp8ue8m0_t, value_t> of each block's max_abs, in fp64."""
    m = np.asarray(max_abs, dtype=np.float64)
    out_max = largest_rounding_to_normal_max(value_t)
    special = ~np.isfinite(m)
    zero = m == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(special | zero, 1.0, m / out_max)
        f, e = np.frexp(q)  # q = f * 2**e with 0.5 <= f < 1: floor(log2 q) = e - 1
    floor_log2 = e - 1
    if value_t is dtypes.FP8E4M3:
        scale_exp = np.where(f == 0.5, floor_log2, floor_log2 + 1)  # ceil(log2 q)
    else:
        scale_exp = floor_log2 + 1
    # exp2 then apply_clip_s to [normal_min, normal_max] of the scale type.
    scale = np.ldexp(1.0, np.clip(scale_exp, -UE8M0_BIAS, UE8M0_BIAS))
    scale = np.where(zero, SCALE_MIN, scale)
    return np.where(special, np.nan, scale)


def quantize(
    x: np.ndarray, value_t: DType, block_size: int = BLOCK_SIZE
) -> tuple[np.ndarray, np.ndarray]:
    """The exact (fp64) results of block-scaling ``x``: each value over its block's
    scale (``in / scale``, before rounding to ``value_t``) and the scales, shaped
    ``x.shape`` and ``[..., C / block_size]``."""
    wide = np.asarray(x, dtype=np.float64)
    scale = block_scale(block_max_abs(wide, block_size), value_t)
    with np.errstate(invalid="ignore"):
        scaled = block_view(wide, block_size) / scale[..., None]
    return scaled.reshape(wide.shape), scale


def scale_per_element(scale: np.ndarray, block_size: int = BLOCK_SIZE) -> np.ndarray:
    """The scale of each element's block: ``scale`` repeated along the innermost axis."""
    return np.repeat(np.asarray(scale, dtype=np.float64), block_size, axis=-1)


def dequantize(data: np.ndarray, scale: np.ndarray, block_size: int = BLOCK_SIZE) -> np.ndarray:
    """``data * scale`` per element in fp64 (both already values)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return np.asarray(data, np.float64) * scale_per_element(scale, block_size)

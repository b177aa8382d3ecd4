"""Element types and tensor contents as the flatbuffer stores them.

Tensor ``data`` (and every other ``[ubyte]`` holding values: CLAMP/PAD float constants,
VARIABLE initial values) is the raw little-endian bytes of the values in the layout Arm's
serialization library uses, so that the files mean the same to its tools:

* ``BOOL``: one byte per element, 0 or 1;
* ``INT4``: two elements per byte, element ``2k`` in the low nibble, ``2k+1`` in the high
  nibble (a final odd element leaves the high nibble zero);
* ``INT48``: six bytes per element, the low 48 bits of the two's-complement value;
* ``SHAPE``: eight bytes per element (int64);
* everything else: the native bits of the element type (int8/16/32, fp8, fp16, bf16, fp32).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np

from conformance import dtypes
from conformance.dtypes import DType
from vectors.errors import DecodeError, EncodeError
from vectors.layout import DTYPE_NAMES, DTYPE_VALUES

# IR element type -> schema DType enum name (the same names in both revisions' schemas).
SCHEMA_NAMES: dict[str, str] = {
    dtypes.BOOL.name: "BOOL",
    dtypes.I4.name: "INT4",
    dtypes.I8.name: "INT8",
    dtypes.I16.name: "INT16",
    dtypes.I32.name: "INT32",
    dtypes.I48.name: "INT48",
    dtypes.FP8E4M3.name: "FP8E4M3",
    dtypes.FP8E5M2.name: "FP8E5M2",
    dtypes.FP16.name: "FP16",
    dtypes.BF16.name: "BF16",
    dtypes.FP32.name: "FP32",
    dtypes.SHAPE.name: "SHAPE",
}
_FROM_SCHEMA: dict[int, DType] = {
    DTYPE_VALUES[schema]: dtypes.BY_NAME[ir] for ir, schema in SCHEMA_NAMES.items()
}

# Range the packed encodings can carry; wider than DType.min/max for i4 because -8 has a
# bit pattern even though the spec excludes it, and it is not the codec's job to validate.
_PACKED_RANGE: dict[str, tuple[int, int]] = {
    dtypes.I4.name: (-8, 7),
    dtypes.I48.name: (-(1 << 47), (1 << 47) - 1),
}


def schema_dtype(dtype: DType) -> int:
    """The schema ``DType`` enum value of an IR element type."""
    return DTYPE_VALUES[SCHEMA_NAMES[dtype.name]]


def ir_dtype(value: int) -> DType:
    """The IR element type of a schema ``DType`` value (``UINT8`` etc. have none)."""
    try:
        return _FROM_SCHEMA[value]
    except KeyError:
        name = DTYPE_NAMES.get(value)
        if name is None:
            raise DecodeError(f"unknown DType value {value}") from None
        raise DecodeError(f"DType {name} is not a TOSA 1.x element type") from None


def element_count(shape: Sequence[int]) -> int:
    if any(d < 0 for d in shape):
        raise ValueError(f"shape {tuple(shape)} has a negative dimension")
    return math.prod(shape)


def byte_count(dtype: DType, count: int) -> int:
    if dtype is dtypes.I4:
        return (count + 1) // 2
    if dtype is dtypes.I48:
        return 6 * count
    return count * dtype.storage.itemsize


# ml_dtypes floats report numpy kind "V" (or "f"), so recognise them by name.
_ML_FLOAT_NAMES = frozenset(d.storage.name for d in (dtypes.FP8E4M3, dtypes.FP8E5M2, dtypes.BF16))


def _is_numeric(dt: np.dtype) -> bool:
    return dt.kind in "biuf" or dt.name in _ML_FLOAT_NAMES


def _lossless(original: np.ndarray, converted: np.ndarray) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # float->int of NaN/inf warns; the compare catches it
        back = converted.astype(original.dtype)
    equal_nan = original.dtype.kind == "f" or original.dtype.name in _ML_FLOAT_NAMES
    return bool(np.array_equal(back, original, equal_nan=equal_nan))


def coerce(value: object, dtype: DType, shape: tuple[int, ...], what: str) -> np.ndarray:
    """``value`` as an array of ``dtype``'s storage and the given shape.

    Conversions are allowed only when exact (an int64 array of small values for an i8
    tensor), so a round trip through the file can never change a value silently.
    """
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise EncodeError(f"{what}: not an array ({exc})") from None
    shape = tuple(int(d) for d in shape)  # the IR may hold a list or numpy integers
    if arr.shape != shape:
        raise EncodeError(f"{what}: array shape {arr.shape} does not match shape {shape}")
    if arr.dtype != dtype.storage:
        if not _is_numeric(arr.dtype):
            raise EncodeError(f"{what}: {arr.dtype} array cannot hold {dtype.name} values")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                converted = arr.astype(dtype.storage)
        except (TypeError, ValueError, OverflowError):
            converted = None
        if converted is None or not _lossless(arr, converted):
            raise EncodeError(f"{what}: {arr.dtype} values do not convert exactly to {dtype}")
        arr = converted
    bounds = _PACKED_RANGE.get(dtype.name)
    if bounds is not None and arr.size and (arr.min() < bounds[0] or arr.max() > bounds[1]):
        raise EncodeError(f"{what}: values outside the {dtype} range {bounds[0]}..{bounds[1]}")
    return arr


def encode(arr: np.ndarray, dtype: DType) -> bytes:
    """Raw bytes of ``arr`` (already in ``dtype``'s storage, see :func:`coerce`)."""
    flat = np.ascontiguousarray(arr).reshape(-1)
    if dtype is dtypes.BOOL:
        return flat.astype(np.uint8).tobytes()
    if dtype is dtypes.I4:
        nibbles = (flat.astype(np.int16) & 0xF).astype(np.uint8)
        if nibbles.size % 2:
            nibbles = np.append(nibbles, np.uint8(0))
        return (nibbles[0::2] | (nibbles[1::2] << 4)).tobytes()
    if dtype is dtypes.I48:
        as_bytes = flat.astype("<i8").view(np.uint8).reshape(-1, 8)
        return as_bytes[:, :6].tobytes()
    # View as unsigned bits so fp8/bf16 (ml_dtypes) and NaN payloads pass through untouched.
    size = flat.dtype.itemsize
    return flat.view(f"u{size}").astype(f"<u{size}").tobytes()


def decode(data: bytes, dtype: DType, shape: tuple[int, ...]) -> np.ndarray:
    """Inverse of :func:`encode`: an array of ``dtype``'s storage with the given shape."""
    try:
        count = element_count(shape)
    except ValueError as exc:
        raise DecodeError(str(exc)) from None
    expected = byte_count(dtype, count)
    if len(data) != expected:
        raise DecodeError(f"{len(data)} data bytes where shape {shape} of {dtype} needs {expected}")
    raw = np.frombuffer(data, dtype=np.uint8)
    if dtype is dtypes.BOOL:
        values = raw != 0
    elif dtype is dtypes.I4:
        nibbles = np.empty(raw.size * 2, dtype=np.int8)
        nibbles[0::2] = raw & 0xF
        nibbles[1::2] = raw >> 4
        values = ((nibbles[:count] ^ 8) - 8).astype(np.int8)  # sign-extend 4 -> 8 bits
    elif dtype is dtypes.I48:
        six = raw.reshape(count, 6)
        sign = np.where(six[:, 5:6] & 0x80, np.uint8(0xFF), np.uint8(0))
        eight = np.concatenate([six, sign, sign], axis=1)
        values = np.ascontiguousarray(eight).view("<i8").reshape(count).astype(np.int64)
    else:
        size = dtype.storage.itemsize
        values = raw.view(f"<u{size}").astype(f"u{size}").view(dtype.storage)
    return values.reshape(shape)

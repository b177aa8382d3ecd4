"""Element types and tensor contents as the flatbuffer stores them.

Tensor ``data`` (and every other ``[ubyte]`` holding values: CLAMP/PAD float constants,
VARIABLE initial values) is the raw little-endian bytes of the values in the layout Arm's
serialization library uses, so that the files mean the same to its tools:

* ``BOOL``: one byte per element, 0 or 1;
* ``INT4``: two elements per byte, element ``2k`` in the low nibble, ``2k+1`` in the high
  nibble (a final odd element leaves the high nibble zero);
* ``INT48``: six bytes per element, the low 48 bits of the two's-complement value;
* ``SHAPE``: eight bytes per element (int64);
* ``FP4E2M1`` (TOSA 1.1): two elements per byte, as ``INT4`` (element ``2k`` in the low
  nibble); the nibble is the element's 4-bit code;
* ``FP6E2M3``, ``FP6E3M2`` (TOSA 1.1): a stream of 6-bit codes, least significant bit
  first: four elements in three bytes, element ``4k`` in bits 0-5 of byte ``3k``,
  element ``4k+1`` in bits 6-7 of it and bits 0-3 of the next byte, and so on; a tail
  takes ``ceil(6n / 8)`` bytes, the unused high bits zero;
* everything else: the native bits of the element type (int8/16/32/64, fp8 including
  fp8ue8m0, fp16, bf16, fp32; mxint8 as its two's-complement byte).

These are the layouts of Arm's serializer (tosa-tools 2026.8: ``addTensor`` of an
ml_dtypes array of the type) and of its reference model reading them.  A block-scaled
composite (``bs32_...``) is a value tensor and a scale tensor in one TosaTensor of the
1.1 schema: its values are ``data`` and its scales ``scale_data``, each encoded here as
a tensor of its own type (value type, fp8ue8m0), never as the composite
(:func:`refuse_block_scaled`).
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
# TOSA 1.1's schema (tosa-tools 2026.8) names the 1.1 element types too.
SCHEMA_NAMES_1_1: dict[str, str] = {
    **SCHEMA_NAMES,
    dtypes.I64.name: "INT64",
    dtypes.FP4E2M1.name: "FP4E2M1",
    dtypes.FP6E2M3.name: "FP6E2M3",
    dtypes.FP6E3M2.name: "FP6E3M2",
    dtypes.FP8UE8M0.name: "FP8UE8M0",
    dtypes.MXINT8.name: "MXINT8",
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
    """The schema ``DType`` enum value of an IR element type in the draft schema;
    EncodeError for a type of a later revision."""
    name = SCHEMA_NAMES.get(dtype.name)
    if name is None:
        raise EncodeError(
            f"element type {dtype} is not in the 2024-04 draft's schema (a TOSA 1.1 type: "
            "write the graph in the 1.1-draft format)"
        )
    return DTYPE_VALUES[name]


def refuse_block_scaled(dtype: DType) -> None:
    """EncodeError for a block-scaled composite: its parts are encoded apart."""
    if dtype.kind == "block":
        raise EncodeError(
            f"{dtype} is a block-scaled type: its {dtype.block_value} values and "
            f"{dtype.block_scale} scales are encoded apart (a TosaTensor's data and "
            "scale_data)"
        )


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


# Element types packed below a byte, by their code width in bits.
_SUB_BYTE: dict[str, int] = {
    dtypes.I4.name: 4,
    dtypes.FP4E2M1.name: 4,
    dtypes.FP6E2M3.name: 6,
    dtypes.FP6E3M2.name: 6,
}


def byte_count(dtype: DType, count: int) -> int:
    bits = _SUB_BYTE.get(dtype.name)
    if bits is not None:
        return (bits * count + 7) // 8
    if dtype is dtypes.I48:
        return 6 * count
    return count * dtype.storage.itemsize


# ml_dtypes floats report numpy kind "V" (or "f"), so recognise them by name.
_ML_FLOAT_NAMES = frozenset(
    d.storage.name for d in dtypes.ALL if d.is_float and d.storage.kind != "f"
)


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
    refuse_block_scaled(dtype)
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
    refuse_block_scaled(dtype)
    flat = np.ascontiguousarray(arr).reshape(-1)
    if dtype is dtypes.BOOL:
        return flat.astype(np.uint8).tobytes()
    if dtype is dtypes.I4:
        return _pack4((flat.astype(np.int16) & 0xF).astype(np.uint8))
    if dtype is dtypes.FP4E2M1:
        return _pack4(flat.view(np.uint8) & 0xF)
    if _SUB_BYTE.get(dtype.name) == 6:
        return _pack6(flat.view(np.uint8) & 0x3F)
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
        nibbles = _unpack4(raw, count).astype(np.int8)
        values = ((nibbles ^ 8) - 8).astype(np.int8)  # sign-extend 4 -> 8 bits
    elif dtype is dtypes.FP4E2M1:
        values = _unpack4(raw, count).view(dtype.storage)
    elif _SUB_BYTE.get(dtype.name) == 6:
        values = _unpack6(raw, count).view(dtype.storage)
    elif dtype is dtypes.I48:
        six = raw.reshape(count, 6)
        sign = np.where(six[:, 5:6] & 0x80, np.uint8(0xFF), np.uint8(0))
        eight = np.concatenate([six, sign, sign], axis=1)
        values = np.ascontiguousarray(eight).view("<i8").reshape(count).astype(np.int64)
    else:
        size = dtype.storage.itemsize
        values = raw.view(f"<u{size}").astype(f"u{size}").view(dtype.storage)
    return values.reshape(shape)


def _pack4(codes: np.ndarray) -> bytes:
    """4-bit codes (uint8, high nibbles zero), two to a byte, the first in the low nibble."""
    if codes.size % 2:
        codes = np.append(codes, np.uint8(0))
    return (codes[0::2] | (codes[1::2] << 4)).tobytes()


def _unpack4(raw: np.ndarray, count: int) -> np.ndarray:
    codes = np.empty(raw.size * 2, dtype=np.uint8)
    codes[0::2] = raw & 0xF
    codes[1::2] = raw >> 4
    return codes[:count]


def _pack6(codes: np.ndarray) -> bytes:
    """6-bit codes (uint8, two high bits zero) as a bit stream, least significant bit
    first: each four codes make a 24-bit little-endian group of three bytes."""
    count = codes.size
    padded = np.zeros(-(-count // 4) * 4, dtype=np.uint32)
    padded[:count] = codes
    quads = padded.reshape(-1, 4)
    words = quads[:, 0] | (quads[:, 1] << 6) | (quads[:, 2] << 12) | (quads[:, 3] << 18)
    groups = words.astype("<u4").view(np.uint8).reshape(-1, 4)[:, :3]
    return groups.reshape(-1)[: (6 * count + 7) // 8].tobytes()


def _unpack6(raw: np.ndarray, count: int) -> np.ndarray:
    groups = np.zeros(-(-raw.size // 3) * 3, dtype=np.uint32)
    groups[: raw.size] = raw
    triples = groups.reshape(-1, 3)
    words = triples[:, 0] | (triples[:, 1] << 8) | (triples[:, 2] << 16)
    codes = np.stack([(words >> shift) & 0x3F for shift in (0, 6, 12, 18)], axis=1)
    return codes.reshape(-1)[:count].astype(np.uint8)

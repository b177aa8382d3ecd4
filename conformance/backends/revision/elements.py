"""Element types between this project's storage and Arm's tools.

Three places hold values, each with its own conventions:

* the compiled serializer's tensor ``data`` (constants): numpy arrays of the element
  type *as values* (ml_dtypes arrays for bf16 / fp8; INT4 / INT48 in int8 / int64 like
  ours).  Unlike Arm's deprecated pure-Python serializer it converts whatever it gets
  by value, so FP8E5M2 bits in ``uint8`` (that serializer's convention) would be read
  as the numbers 0..255;
* the in-process model's inputs and outputs (``tosa_reference_model.run``): numpy arrays
  through the buffer protocol, which cannot carry ml_dtypes types, so bf16 and fp8 travel
  as their bits (``uint16`` / ``uint8`` in, void ``V2`` / ``V1`` out).  INT4, INT48 and
  SHAPE tensors cannot cross this interface at all (the binding refuses them as inputs
  and returns them empty as outputs): :func:`crosses_binding` says so.  TOSA 1.1's
  FP4E2M1, FP6E2M3, FP6E3M2 and FP8UE8M0 go in (one code per byte, ``uint8``) but come
  back empty: :func:`returned_by_binding`;
* the command-line model's ``.npy`` files: int8 for INT4, int64 for INT48 and SHAPE;
  of TOSA 1.1's types, int64 for INT64, the code's byte (``|u1``) for MXINT8, ``V1`` for
  FP8UE8M0, and for FP4E2M1 / FP6E2M3 / FP6E3M2 the packed codes in a ``|u1`` array
  (two to a byte; four to three bytes), the flatbuffer's layout.

The 1.1 types cross the binding as one code per byte (``uint8`` in, like fp8).  A
block-scaled composite (``bs32_*``) does not cross it (it takes one array per input):
it is embedded as a constant, its values and scales in the TosaTensor's data and
scale_data, and the executable writes such an output as two files, ``<file>.npy``
(values) and ``<file>_scale.npy`` (scales).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance import dtypes
from conformance.dtypes import DType
from conformance.rounding import round_to
from vectors import encoding
from vectors.errors import DecodeError

# Our type name -> the name of Arm's DType enumeration value (the enum's numbers differ
# between schema revisions; names do not).
ARM_NAMES: dict[str, str] = {
    "bool": "BOOL",
    "i4": "INT4",
    "i8": "INT8",
    "i16": "INT16",
    "i32": "INT32",
    "i48": "INT48",
    "fp8e4m3": "FP8E4M3",
    "fp8e5m2": "FP8E5M2",
    "fp16": "FP16",
    "bf16": "BF16",
    "fp32": "FP32",
    "shape": "SHAPE",
}

# Types the binding's buffer interface cannot carry (see the module docstring).
_NOT_THROUGH_BINDING = frozenset({"i4", "i48", "shape"})
# TOSA 1.1 types it takes as inputs but cannot return (measured with tosa-tools 2026.8).
_NOT_RETURNED_BY_BINDING = frozenset({"fp4e2m1", "fp6e2m3", "fp6e3m2", "fp8ue8m0", "mxint8"})

# Types the model's .npy files hold packed (Arm's numpy_utils: fp4 two codes to a byte,
# fp6 four codes to three bytes).
_PACKED_NPY = frozenset({"fp4e2m1", "fp6e2m3", "fp6e3m2"})

# Bit-carrier dtypes for the narrow floats ml_dtypes defines.
_BITS: dict[str, np.dtype] = {
    "bf16": np.dtype(np.uint16),
    "fp8e4m3": np.dtype(np.uint8),
    "fp8e5m2": np.dtype(np.uint8),
    # TOSA 1.1: one code per byte, as ml_dtypes holds them (the binding does not pack
    # fp4 / fp6, unlike the flatbuffer's constant data and the .npy files)
    "fp4e2m1": np.dtype(np.uint8),
    "fp6e2m3": np.dtype(np.uint8),
    "fp6e3m2": np.dtype(np.uint8),
    "fp8ue8m0": np.dtype(np.uint8),
}


def arm_dtype(ts: Any, dt: DType) -> Any:
    """Arm's ``DType`` value for one of our types (``ts`` is the ``tosa_serializer`` module)."""
    return getattr(ts.DType, ARM_NAMES[dt.name])


def crosses_binding(dt: DType) -> bool:
    """Whether tensors of this type can be inputs/outputs of ``tosa_reference_model.run``."""
    return dt.name not in _NOT_THROUGH_BINDING and dt.kind != "block"


def returned_by_binding(dt: DType) -> bool:
    """Whether ``tosa_reference_model.run`` returns outputs of this type.  Besides the
    types it cannot pass at all, the 2026.8 binding takes fp4 / fp6 / fp8ue8m0 inputs
    (a code per byte) but returns such outputs empty ("Unsupported tensor DType"), and
    mxint8 outputs as an empty float64 array."""
    return crosses_binding(dt) and dt.name not in _NOT_RETURNED_BY_BINDING


def storage(values: np.ndarray, dt: DType) -> np.ndarray:
    """Values in our storage dtype for ``dt``; integers must already fit (exactly)."""
    arr = np.asarray(values)
    if arr.dtype == dt.storage:
        return arr
    if dt.is_float:
        return round_to(dt, arr)
    return arr.astype(dt.storage)


def const_data(values: np.ndarray, dt: DType) -> np.ndarray:
    """Constant tensor contents as Arm's serializer takes them."""
    arr = np.ascontiguousarray(storage(values, dt))
    if dt.name == "shape":
        return arr.astype(np.int64)
    return arr


def binding_input(values: np.ndarray, dt: DType) -> np.ndarray:
    """An input array as the in-process model takes it."""
    arr = np.ascontiguousarray(storage(values, dt))
    bits = _BITS.get(dt.name)
    return arr.view(bits) if bits is not None else arr


def from_binding(raw: np.ndarray, dt: DType, shape: tuple[int, ...]) -> np.ndarray:
    """An in-process model output in our storage dtype, exactly (bits are reinterpreted,
    never converted)."""
    arr = np.ascontiguousarray(np.asarray(raw))
    want = np.dtype(dt.storage)
    if arr.dtype != want:
        if arr.dtype.itemsize != want.itemsize:
            raise ValueError(
                f"model returned {arr.dtype} ({arr.dtype.itemsize} bytes) for a {dt} tensor "
                f"({want.itemsize} bytes per element)"
            )
        arr = arr.view(want)
    if arr.size != int(np.prod(shape, dtype=np.int64)):
        raise ValueError(f"model returned {arr.size} values for a {dt} tensor of shape {shape}")
    return arr.reshape(shape)


def from_npy(raw: np.ndarray, dt: DType, shape: tuple[int, ...]) -> np.ndarray:
    """A command-line model output file's array in our storage dtype, exactly."""
    arr = np.asarray(raw)
    want = np.dtype(dt.storage)
    count = int(np.prod(shape, dtype=np.int64))
    if dt.name in _PACKED_NPY and arr.dtype == np.uint8 and arr.size != count:
        # fp4 / fp6 (TOSA 1.1): the model writes the packed codes, as the flatbuffer holds
        # them (two to a byte; four to three bytes), in a uint8 array.
        try:
            return encoding.decode(np.ascontiguousarray(arr).tobytes(), dt, shape)
        except DecodeError as exc:
            raise ValueError(f"model wrote a packed {dt} array that does not fit: {exc}") from None
    if dt.kind == "fixed" and arr.dtype.itemsize == want.itemsize:
        arr = np.ascontiguousarray(arr).view(want)  # mxint8: the code's byte, as |u1
    if dt.is_float and arr.dtype != want:
        if arr.dtype.itemsize != want.itemsize:
            raise ValueError(f"model wrote {arr.dtype} for a {dt} tensor")
        arr = np.ascontiguousarray(arr).view(want)
    elif not dt.is_float:
        exact = arr.astype(want)
        if not np.array_equal(exact.astype(np.int64), arr.astype(np.int64)):
            raise ValueError(f"model wrote values outside {dt} storage ({arr.dtype})")
        arr = exact
    if arr.size != int(np.prod(shape, dtype=np.int64)):
        raise ValueError(f"model wrote {arr.size} values for a {dt} tensor of shape {shape}")
    return arr.reshape(shape)


def wrap_to(value: int, dt: DType) -> int:
    """An integer's low ``dt.bits`` bits read as a signed ``dt`` value (how a zero point
    given as an unsigned number is held in a signed tensor)."""
    mask = (1 << dt.bits) - 1
    bits = int(value) & mask
    return bits - (1 << dt.bits) if bits >> (dt.bits - 1) else bits


def value_bytes(value: float | int | bool, dt: DType) -> list[int]:
    """A scalar's little-endian bytes in ``dt`` (CLAMP's min_val/max_val fields)."""
    if dt is dtypes.BOOL:
        return [1 if value else 0]
    arr = np.array([value], dtype=np.float64 if dt.is_float else np.int64)
    return [int(b) for b in storage(arr, dt).view(np.uint8)]

"""Tensor files of a vector pack: ``.npy`` encodings readable by plain numpy.

Each TOSA element type has one *interchange* numpy dtype, chosen so that a backend in
any language (or numpy without ml_dtypes) can read and write the files:

* bool -> ``|b1`` (bytes must be 0 or 1)
* i4, i8 -> ``|i1`` (i4 values limited to -7..7)
* i16 -> ``<i2``; i32 -> ``<i4``
* i48, shape, i64 -> ``<i8`` (i48 values limited to +-(2**47 - 1))
* fp16 -> ``<f2``; fp32 -> ``<f4``
* bf16, fp8e4m3, fp8e5m2, and TOSA 1.1's fp4e2m1, fp6e2m3, fp6e3m2, fp8ue8m0 ->
  ``<f4``, widened exactly; on reading, every value must be one of the narrow type (a
  NaN reads back as a NaN of the same sign, and fp8ue8m0, which has no sign, takes
  either; NaN payloads are not guaranteed to survive).  Not Arm's convention, whose
  tools pack fp4 two to a byte and fp6 four to three bytes in ``|u1`` arrays (with
  the last dimension shrunk, and a multiple of 32): the values themselves stay
  readable by any numpy
* mxint8 (TOSA 1.1) -> ``|i1``: the stored two's-complement code, as the graph IR holds
  it; the value is the code / 64 (Arm's tools write the same byte as ``|u1``)
* a block-scaled composite (``bs32_...``) is two files, each of its part's type: its
  values (``input-K.npy``) and its scales (``input-K_scale.npy``, Arm's ``_scale``
  convention; shape: the values' with the innermost dimension counted in blocks of
  32) -- :func:`encode_block_scaled` / :func:`decode_block_scaled`

Expected results of floating-point outputs and bound tensors are float64 (``<f8``):
the reference result is computed in fp64 and must not be rounded before the check.

Writing is byte-deterministic: arrays are made C-contiguous and little-endian, and the
header is numpy's format version 1.0, whose text is fixed by (dtype, shape).  Reading
checks everything a corrupt or foreign file could get wrong and raises
:class:`~vectors.pack_errors.PackError` naming the file: missing, not an ``.npy``,
truncated, trailing bytes, wrong dtype, wrong shape, values outside the type.

The ``encode_*``/``decode_*`` functions work on bytes (a zipped pack is read from
memory); ``save_*``/``load_*`` are the same on files.
"""

from __future__ import annotations

import io
import math
import os
import tokenize
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from conformance.block_tensor import BlockScaled, scale_shape, scale_type, value_type
from conformance.dtypes import DType
from vectors.pack_errors import PackError, one_line
from vectors.pack_source import read_regular_file

__all__ = [
    "NpyHeader",
    "array_from",
    "decode_array",
    "decode_block_scaled",
    "decode_bound",
    "decode_expected",
    "encode_array",
    "encode_block_scaled",
    "encode_bound",
    "encode_expected",
    "expected_dtype",
    "interchange_dtype",
    "load_array",
    "load_bound",
    "load_expected",
    "read_header",
    "save_array",
    "save_bound",
    "save_expected",
]

Shape = Sequence[int]

# Little-endian explicitly: np.save writes native byte order, which would make the
# bytes (and the pack hashes) depend on the machine that generated the pack.
_INTERCHANGE: dict[str, np.dtype] = {
    "bool": np.dtype("|b1"),
    "i4": np.dtype("|i1"),
    "i8": np.dtype("|i1"),
    "i16": np.dtype("<i2"),
    "i32": np.dtype("<i4"),
    "i48": np.dtype("<i8"),
    "shape": np.dtype("<i8"),
    "fp16": np.dtype("<f2"),
    "fp32": np.dtype("<f4"),
    "bf16": np.dtype("<f4"),
    "fp8e4m3": np.dtype("<f4"),
    "fp8e5m2": np.dtype("<f4"),
    "i64": np.dtype("<i8"),
    "fp4e2m1": np.dtype("<f4"),
    "fp6e2m3": np.dtype("<f4"),
    "fp6e3m2": np.dtype("<f4"),
    "fp8ue8m0": np.dtype("<f4"),
    "mxint8": np.dtype("|i1"),
}
_FLOAT64 = np.dtype("<f8")
# Types held in a storage dtype plain numpy cannot save (ml_dtypes' bfloat16 saves as
# an opaque "<V2"); they travel as float32, which holds every one of their values.
_WIDENED = frozenset(
    {"bf16", "fp8e4m3", "fp8e5m2", "fp4e2m1", "fp6e2m3", "fp6e3m2", "fp8ue8m0"}
)
_NPY_VERSION = (1, 0)  # pinned: numpy's default may change, the bytes must not
# numpy refuses headers longer than 10000 bytes; the magic and length come first.
_HEAD_BYTES = 10000 + 12


def interchange_dtype(dtype: DType) -> np.dtype:
    """The numpy dtype a tensor of TOSA type ``dtype`` has in an ``.npy`` file."""
    try:
        return _INTERCHANGE[dtype.name]
    except KeyError:
        if dtype.kind == "block":
            raise ValueError(
                f"no one .npy encoding for the block-scaled type {dtype.name!r}: its values "
                "and scales are two files, each of its part's type"
            ) from None
        raise ValueError(f"no .npy encoding for TOSA type {dtype.name!r}") from None


def expected_dtype(dtype: DType) -> np.dtype:
    """The dtype of an expected-result file for an output of type ``dtype``."""
    return _FLOAT64 if dtype.is_float else interchange_dtype(dtype)


# ----------------------------------------------------------------------------- encode


def encode_array(array: np.ndarray, dtype: DType, *, source: str = "<array>") -> bytes:
    """A tensor held in ``dtype``'s storage type, as ``.npy`` bytes."""
    _refuse_block_scaled(dtype, source)
    arr = np.asarray(array)
    if arr.dtype != dtype.storage:
        raise PackError(
            f"{source}: array has dtype {arr.dtype}, but {dtype.name} tensors are held in "
            f"{dtype.storage}"
        )
    _check_values(arr, dtype, source)  # never write a file the reader would reject
    wide = arr.astype(np.float32) if dtype.name in _WIDENED else arr
    return _encode(wide, interchange_dtype(dtype))


def encode_expected(array: np.ndarray, dtype: DType, *, source: str = "<array>") -> bytes:
    """An expected result: fp64 for floating-point outputs, storage type otherwise."""
    if not dtype.is_float:
        return encode_array(array, dtype, source=source)
    arr = np.asarray(array)
    if arr.dtype != np.float64:
        # The reference result is exact in fp64; anything narrower was already rounded.
        raise PackError(
            f"{source}: expected result of a {dtype.name} output must be float64 "
            f"(the fp64 reference), got {arr.dtype}"
        )
    return _encode(arr, _FLOAT64)


def encode_block_scaled(
    value: BlockScaled, *, source: str = "<array>", scale_source: str = "<scales>"
) -> tuple[bytes, bytes]:
    """A block-scaled tensor (input, or expected result: both exact) as its values'
    and its scales' ``.npy`` bytes."""
    if not isinstance(value, BlockScaled):
        raise PackError(f"{source}: a block-scaled tensor needs values and scales, got an array")
    dt = value.dtype
    return (
        encode_array(value.values, value_type(dt), source=source),
        encode_array(value.scales, scale_type(dt), source=scale_source),
    )


def decode_block_scaled(
    data: bytes,
    scale_data: bytes,
    dtype: DType,
    *,
    source: str = "<bytes>",
    scale_source: str = "<scales>",
    shape: Shape | None = None,
) -> BlockScaled:
    """A block-scaled tensor from its values' and scales' ``.npy`` bytes; the scales
    must have the shape the values' gives them (PackError naming the scale file)."""
    values = decode_array(data, value_type(dtype), source=source, shape=shape)
    want = scale_shape(values.shape, dtype.block_size)
    scales = decode_array(scale_data, scale_type(dtype), source=scale_source, shape=want)
    return BlockScaled(dtype, values, scales)


def encode_bound(array: np.ndarray, *, source: str = "<array>") -> bytes:
    """A bound tensor, as float64 (widening any float array is exact)."""
    arr = np.asarray(array)
    if arr.dtype.kind != "f":
        raise PackError(f"{source}: bound tensor must be floating-point, got {arr.dtype}")
    return _encode(arr.astype(np.float64), _FLOAT64)


def _encode(arr: np.ndarray, want: np.dtype) -> bytes:
    out = io.BytesIO()
    # C order makes the header say fortran_order False.  Not np.ascontiguousarray: it
    # turns a rank-0 tensor into shape (1,).
    data = np.asarray(arr, dtype=want, order="C")
    np.lib.format.write_array(out, data, version=_NPY_VERSION, allow_pickle=False)
    return out.getvalue()


# ----------------------------------------------------------------------------- decode


def decode_array(
    data: bytes, dtype: DType, *, source: str = "<bytes>", shape: Shape | None = None
) -> np.ndarray:
    """The tensor in ``.npy`` bytes, converted back to ``dtype``'s storage type."""
    _refuse_block_scaled(dtype, source)
    arr = _decode(data, interchange_dtype(dtype), source, shape, dtype.name)
    if dtype.name in _WIDENED:
        return _narrow(arr, dtype, source)
    out = arr.astype(dtype.storage)
    _check_values(out, dtype, source)
    return out


def decode_expected(
    data: bytes, dtype: DType, *, source: str = "<bytes>", shape: Shape | None = None
) -> np.ndarray:
    """An expected-result file for an output of type ``dtype``."""
    if not dtype.is_float:
        return decode_array(data, dtype, source=source, shape=shape)
    return _decode(data, _FLOAT64, source, shape, f"an expected {dtype.name} result")


def decode_bound(data: bytes, *, source: str = "<bytes>", shape: Shape | None = None) -> np.ndarray:
    return _decode(data, _FLOAT64, source, shape, "a bound")


class NpyHeader(NamedTuple):
    """What an ``.npy`` header declares, checked against the bytes that follow it."""

    dtype: np.dtype
    shape: tuple[int, ...]
    fortran_order: bool
    offset: int  # where the array data starts

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize


def read_header(head: bytes, total: int, source: str) -> NpyHeader:
    """Parse the header at the start of ``head`` (a prefix of a file of ``total`` bytes)
    and check that the data it declares is exactly what the file holds.

    Done before any data is read: a header may declare a shape of 10**12 elements, and
    numpy would allocate that much before noticing the file is short.
    """
    if not head.startswith(np.lib.format.MAGIC_PREFIX):
        raise PackError(f"{source}: not an .npy file (no \\x93NUMPY magic)")
    fp = io.BytesIO(head)
    try:
        version = np.lib.format.read_magic(fp)
        if version == (1, 0):
            shape, fortran, dt = np.lib.format.read_array_header_1_0(fp)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dt = np.lib.format.read_array_header_2_0(fp)
        else:
            raise ValueError(f"unsupported format version {version}")
    except (ValueError, EOFError, OSError, SyntaxError, tokenize.TokenError) as exc:
        # TokenError: numpy tokenizes the header dict (an unclosed bracket ends there).
        raise PackError(one_line(f"{source}: not a readable .npy file: {exc}")) from None
    if dt.hasobject or dt.names is not None or dt.subdtype is not None:
        # Object arrays would need pickle; records and subarrays are no TOSA tensor.
        raise PackError(f"{source}: dtype {dt} is not a tensor element type")
    header = NpyHeader(dt, tuple(int(d) for d in shape), bool(fortran), fp.tell())
    have = total - header.offset
    if have < header.nbytes:
        raise PackError(
            f"{source}: truncated: the header declares shape {list(header.shape)} "
            f"({header.nbytes} bytes of data), the file holds {have}"
        )
    if have > header.nbytes:
        raise PackError(
            f"{source}: {have - header.nbytes} trailing bytes after the array data "
            "(not a well-formed .npy file)"
        )
    return header


def array_from(data: bytes, header: NpyHeader) -> np.ndarray:
    """The array a checked header describes, from the whole file's bytes (a copy)."""
    count = math.prod(header.shape)
    flat = np.frombuffer(data, dtype=header.dtype, count=count, offset=header.offset)
    if header.fortran_order:
        return flat.reshape(header.shape, order="F").copy(order="C")
    return flat.reshape(header.shape).copy()


def _decode(data: bytes, want: np.dtype, source: str, shape: Shape | None, what: str) -> np.ndarray:
    header = read_header(data[:_HEAD_BYTES], len(data), source)
    # Byte order is not part of the value: accept a big-endian file of the right type.
    if header.dtype.kind != want.kind or header.dtype.itemsize != want.itemsize:
        raise PackError(
            f"{source}: wrong dtype: file holds {_describe(header.dtype)}, expected "
            f"{_describe(want)} for {what}"
        )
    if shape is not None and header.shape != tuple(shape):
        raise PackError(
            f"{source}: wrong shape: file holds {list(header.shape)}, expected {list(shape)}"
        )
    arr = array_from(data, header)
    return np.asarray(arr, dtype=want.newbyteorder("="), order="C")


def _narrow(wide: np.ndarray, dtype: DType, source: str) -> np.ndarray:
    """float32 values back to a narrow float type, refusing any the type cannot hold."""
    with np.errstate(invalid="ignore", over="ignore"):
        narrow = wide.astype(dtype.storage)
        back = narrow.astype(np.float32)
    # A value belongs to the type if it converts back unchanged; NaN counts as NaN
    # (payloads are not meaningful in TOSA), and the sign of zeros and NaNs must survive.
    nan = np.isnan(back) & np.isnan(wide)
    same = (back == wide) | nan
    signs = np.signbit(back) == np.signbit(wide)
    same &= signs | nan if not dtype.signed else signs  # an unsigned NaN has no sign
    if not np.all(same):
        bad = np.argwhere(~same)
        first = tuple(int(i) for i in bad[0])
        raise PackError(
            f"{source}: {len(bad)} element(s) not a {dtype.name} value, first at "
            f"{list(first)}: {float(wide[first])!r}"
        )
    return narrow


def _refuse_block_scaled(dtype: DType, source: str) -> None:
    if dtype.kind == "block":
        raise PackError(
            f"{source}: {dtype.name} is a block-scaled type, whose values and scales are "
            "two .npy files (encode_block_scaled / decode_block_scaled)"
        )


def _check_values(arr: np.ndarray, dtype: DType, source: str) -> None:
    if dtype.kind == "bool":
        # numpy reads any byte into a bool array; only 0 and 1 are booleans.
        raw = arr.view(np.uint8)
        if np.any(raw > 1):
            first = tuple(int(i) for i in np.argwhere(raw > 1)[0])
            raise PackError(
                f"{source}: bool element at {list(first)} is byte {int(raw[first])}, not 0 or 1"
            )
        return
    if dtype.kind not in ("int", "shape"):
        return  # mxint8 ("fixed"): every int8 code is a value
    lo, hi = int(dtype.min or 0), int(dtype.max or 0)
    if arr.size and (int(arr.min()) < lo or int(arr.max()) > hi):
        bad = np.argwhere((arr < lo) | (arr > hi))
        first = tuple(int(i) for i in bad[0])
        raise PackError(
            f"{source}: {len(bad)} element(s) out of range for {dtype.name} ({lo}..{hi}), "
            f"first at {list(first)}: {int(arr[first])}"
        )


def _describe(dt: np.dtype) -> str:
    return f"{dt.name} ({dt.str})"


# ----------------------------------------------------------------------------- files

PathLike = str | os.PathLike[str]


def save_array(path: PathLike, array: np.ndarray, dtype: DType) -> None:
    Path(path).write_bytes(encode_array(array, dtype, source=os.fspath(path)))


def load_array(path: PathLike, dtype: DType, shape: Shape | None = None) -> np.ndarray:
    return decode_array(_read(path), dtype, source=os.fspath(path), shape=shape)


def save_expected(path: PathLike, array: np.ndarray, dtype: DType) -> None:
    Path(path).write_bytes(encode_expected(array, dtype, source=os.fspath(path)))


def load_expected(path: PathLike, dtype: DType, shape: Shape | None = None) -> np.ndarray:
    return decode_expected(_read(path), dtype, source=os.fspath(path), shape=shape)


def save_bound(path: PathLike, array: np.ndarray) -> None:
    Path(path).write_bytes(encode_bound(array, source=os.fspath(path)))


def load_bound(path: PathLike, shape: Shape | None = None) -> np.ndarray:
    return decode_bound(_read(path), source=os.fspath(path), shape=shape)


def _read(path: PathLike) -> bytes:
    data = read_regular_file(Path(path), os.fspath(path))
    if data is None:
        raise PackError(f"{os.fspath(path)}: missing")
    return data

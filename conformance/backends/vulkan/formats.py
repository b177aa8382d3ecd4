"""Element types between this project's storage and Vulkan tensor formats.

The model converter gives every TOSA type a ``VK_FORMAT`` (:data:`FORMATS`): integers a
format of their storage width (``i4`` in a byte, ``R8_SINT``; ``i48`` in 64 bits,
``R64_SINT``), ``bool`` Arm's ``R8_BOOL``, and bf16 / fp8 Arm's float encodings.  The
VGF says which format each binding has, and that is what crosses: an unsigned format
where a 2024 draft graph reads an integer as unsigned (RESCALE's ``input_unsigned``),
whose bits are those of our signed storage.  :func:`to_device` writes our values in a
binding's format, :func:`from_device` reads a result back into our storage, exactly.
"""

from __future__ import annotations

from typing import NamedTuple

import ml_dtypes
import numpy as np

from conformance.dtypes import DType
from conformance.graph import Tensor

__all__ = ["ELEMENTS", "FORMATS", "Element", "element", "format_of", "from_device", "to_device"]


class Element(NamedTuple):
    runner: str  # the scenario runner's Python name of the format (scenario_runner_py.Format)
    dtype: np.dtype  # one element of the format
    plain: np.dtype  # how a scenario file's .npy holds it (numpy has no bf16 / fp8)


def _el(runner: str, dtype: type, plain: type | None = None) -> Element:
    return Element(runner, np.dtype(dtype), np.dtype(plain or dtype))


# VK_FORMAT name -> its element.
ELEMENTS: dict[str, Element] = {
    "VK_FORMAT_R8_BOOL_ARM": _el("R8BoolArm", np.uint8),
    "VK_FORMAT_R8_SINT": _el("R8Sint", np.int8),
    "VK_FORMAT_R16_SINT": _el("R16Sint", np.int16),
    "VK_FORMAT_R32_SINT": _el("R32Sint", np.int32),
    "VK_FORMAT_R64_SINT": _el("R64Sint", np.int64),
    "VK_FORMAT_R8_UINT": _el("R8Uint", np.uint8),
    "VK_FORMAT_R16_UINT": _el("R16Uint", np.uint16),
    "VK_FORMAT_R32_UINT": _el("R32Uint", np.uint32),
    "VK_FORMAT_R16_SFLOAT": _el("R16Sfloat", np.float16),
    "VK_FORMAT_R32_SFLOAT": _el("R32Sfloat", np.float32),
    "VK_FORMAT_R16_SFLOAT_FPENCODING_BFLOAT16_ARM": _el(
        "R16Bfloat16Arm", ml_dtypes.bfloat16, np.uint16
    ),
    "VK_FORMAT_R8_SFLOAT_FPENCODING_FLOAT8E4M3_ARM": _el(
        "R8Float8E4M3Arm", ml_dtypes.float8_e4m3fn, np.uint8
    ),
    "VK_FORMAT_R8_SFLOAT_FPENCODING_FLOAT8E5M2_ARM": _el(
        "R8Float8E5M2Arm", ml_dtypes.float8_e5m2, np.uint8
    ),
}

# Our type name -> the format the converter gives it.
FORMATS: dict[str, str] = {
    "bool": "VK_FORMAT_R8_BOOL_ARM",
    "i4": "VK_FORMAT_R8_SINT",
    "i8": "VK_FORMAT_R8_SINT",
    "i16": "VK_FORMAT_R16_SINT",
    "i32": "VK_FORMAT_R32_SINT",
    "i48": "VK_FORMAT_R64_SINT",
    "fp16": "VK_FORMAT_R16_SFLOAT",
    "bf16": "VK_FORMAT_R16_SFLOAT_FPENCODING_BFLOAT16_ARM",
    "fp32": "VK_FORMAT_R32_SFLOAT",
    "fp8e4m3": "VK_FORMAT_R8_SFLOAT_FPENCODING_FLOAT8E4M3_ARM",
    "fp8e5m2": "VK_FORMAT_R8_SFLOAT_FPENCODING_FLOAT8E5M2_ARM",
}


def format_of(dt: DType) -> str | None:
    """The tensor format of ``dt``, None when Vulkan has none (shape, the 1.1 types)."""
    return FORMATS.get(dt.name)


def element(vk: str) -> Element:
    """The element of format ``vk``; ValueError for a format this backend cannot read."""
    try:
        return ELEMENTS[vk]
    except KeyError:
        raise ValueError(f"the VGF binds a {vk} tensor: a format not read here") from None


def _signed(width: int) -> np.dtype:
    return np.dtype(f"i{width}")


def to_device(values: np.ndarray, dt: DType, vk: str) -> np.ndarray:
    """``values`` (our storage of ``dt``) in format ``vk``, of their own shape: the array
    the scenario runner uploads, and a scenario file's ``.npy`` holds."""
    el = element(vk)
    arr = np.asarray(values)
    if dt.is_float:
        arr = np.require(arr.astype(el.dtype), requirements="C")  # keeps rank 0
    else:
        # bool as 0 / 1 bytes, i4 sign-extended in a byte, i48 in 64 bits; an unsigned
        # format gets the same bits
        width = el.dtype.itemsize
        arr = np.require(arr.astype(np.int64).astype(_signed(width)), requirements="C")
    return arr.view(el.plain)


def from_device(raw: np.ndarray, t: Tensor, vk: str) -> np.ndarray:
    """A result's bytes (format ``vk``) read as ``t``'s type, in our storage dtype.  A
    value ``t``'s type cannot hold (a bool byte not 0 or 1, an i4 byte outside its
    range) is handed back widened, so that the runner's judge reports it."""
    el = element(vk)
    data = np.ascontiguousarray(raw).reshape(-1).view(np.uint8)
    want = int(np.prod(t.shape, dtype=np.int64)) * el.dtype.itemsize
    if data.size != want:
        raise ValueError(
            f"the device returned {data.size} bytes for {t.name!r}, a {t.dtype} "
            f"tensor of shape {list(t.shape)} ({want} bytes)"
        )
    if t.dtype.is_float:
        return data.view(el.dtype).reshape(t.shape).astype(t.dtype.storage)
    if t.dtype.name == "bool":
        wide = data.view(np.uint8).reshape(t.shape).astype(np.int64)
        return wide.astype(np.bool_) if np.all((wide == 0) | (wide == 1)) else wide
    wide = data.view(_signed(el.dtype.itemsize)).reshape(t.shape).astype(np.int64)
    if wide.size and not np.all(t.dtype.in_range(wide)):
        return wide
    return wide.astype(t.dtype.storage)

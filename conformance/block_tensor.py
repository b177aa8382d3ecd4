"""The contents of a block-scaled composite tensor (TOSA 1.1 ``bs32_fp8ue8m0_*_t``).

A tensor of a block-scaled type holds two arrays: its *values*, of the value type
(fp8e4m3, fp8e5m2, fp6e3m2, fp6e2m3, fp4e2m1, mxint8) and of the tensor's shape, and its
*scales*, of the scale type (fp8ue8m0), one per block of ``block_size`` consecutive
elements of the innermost dimension (tensor_read.tosac: the scale of the element at
``index`` is at ``index`` with its last coordinate divided by the block size).  The
element's value is ``scale * value``; the operators that only move elements
(tensor_read_value_scale / tensor_write_value_scale) move both parts unchanged.

:class:`BlockScaled` is that pair: the constant data of a composite tensor in the graph
IR (``Tensor.data`` the values, ``Tensor.scale_data`` the scales, as the 1.1 schema's
TosaTensor carries them), a graph input's or output's value in a vector, and the
evaluator's runtime value of such a tensor.

A valid graph only has composite tensors whose innermost dimension is a multiple of
the block size (the operators' ERROR_IFs).  A must-fail vector may hold one that is
not, or of rank 0: its scales then cover the last, partial block too
(``ceil(C / block_size)`` of them), and a rank-0 tensor has one scale.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from conformance import dtypes
from conformance.dtypes import DType

__all__ = [
    "BlockScaled",
    "TensorValue",
    "arrays",
    "is_block_scaled",
    "scale_shape",
    "scale_type",
    "value_type",
]


def is_block_scaled(dt: DType) -> bool:
    """is_block_scale<dt>(): whether ``dt`` is a block-scaled composite type."""
    return dt.kind == "block"


def _composite(dt: DType) -> DType:
    if not is_block_scaled(dt):
        raise TypeError(f"{dt} is not a block-scaled type")
    return dt


def value_type(dt: DType) -> DType:
    """get_value_t<dt>: the element type of a composite's values."""
    return dtypes.dtype(_composite(dt).block_value)


def scale_type(dt: DType) -> DType:
    """get_scale_t<dt>: the element type of a composite's scales."""
    return dtypes.dtype(_composite(dt).block_scale)


def scale_shape(shape: tuple[int, ...], block_size: int) -> tuple[int, ...]:
    """The shape of the scales of a composite of ``shape``: the innermost dimension
    counted in blocks (a partial last block has a scale too); rank 0 has one scale."""
    if not shape:
        return ()
    *lead, inner = (int(d) for d in shape)
    return (*lead, -(-inner // block_size))


@dataclass(frozen=True, eq=False)  # arrays have no truth value: no field-wise ==
class BlockScaled:
    """A composite tensor's values and scales, each in its element type's storage."""

    dtype: DType
    values: np.ndarray
    scales: np.ndarray

    def __post_init__(self) -> None:
        dt = _composite(self.dtype)
        v, s = np.asarray(self.values), np.asarray(self.scales)
        vt, st = value_type(dt), scale_type(dt)
        if v.dtype != vt.storage:
            raise ValueError(f"{dt} values must be held in {vt.storage}, got {v.dtype}")
        if s.dtype != st.storage:
            raise ValueError(f"{dt} scales must be held in {st.storage}, got {s.dtype}")
        want = scale_shape(v.shape, dt.block_size)
        if s.shape != want:
            raise ValueError(
                f"{dt} values of shape {list(v.shape)} have scales of shape {list(want)}, "
                f"got {list(s.shape)}"
            )
        object.__setattr__(self, "values", v)
        object.__setattr__(self, "scales", s)

    @classmethod
    def of(cls, dt: DType, values: object, scales: object) -> BlockScaled:
        """A composite of ``dt`` from arrays already in (or exactly convertible to) the
        value and scale types' storage dtypes; ValueError otherwise."""
        vt, st = value_type(dt), scale_type(dt)
        return cls(dt, _held(values, vt, "values"), _held(scales, st, "scales"))

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.values.shape)

    @property
    def block_size(self) -> int:
        return self.dtype.block_size

    def copy(self) -> BlockScaled:
        return BlockScaled(self.dtype, self.values.copy(), self.scales.copy())

    def element_scales(self) -> np.ndarray:
        """The scale of each element's block, in the values' shape (the scales
        repeated along the innermost axis)."""
        if not self.shape:
            return self.scales.copy()
        inner = self.shape[-1]
        return np.repeat(self.scales, self.block_size, axis=-1)[..., :inner]

    @classmethod
    def from_element_scales(
        cls, dt: DType, values: np.ndarray, element_scales: np.ndarray
    ) -> BlockScaled:
        """The composite whose element_scales() are ``element_scales``: each block takes
        the scale of its first element.  ValueError when the elements of a block do not
        all carry the same scale (bit for bit), which no composite can hold."""
        v, es = np.asarray(values), np.asarray(element_scales)
        if v.shape != es.shape:
            raise ValueError(f"values {list(v.shape)} and scales {list(es.shape)} differ")
        if not v.shape:
            return cls(dt, v, es)
        scales = np.ascontiguousarray(es[..., :: dt.block_size])
        out = cls(dt, v, scales)
        if not np.array_equal(_bits(out.element_scales()), _bits(es)):
            raise ValueError(f"the elements of a block of {dt.block_size} carry different scales")
        return out

    def same(self, other: BlockScaled) -> bool:
        """Bit-for-bit equality of type, values and scales."""
        return (
            self.dtype is other.dtype
            and self.shape == other.shape
            and np.array_equal(_bits(self.values), _bits(other.values))
            and np.array_equal(_bits(self.scales), _bits(other.scales))
        )

    def __repr__(self) -> str:
        return f"BlockScaled({self.dtype}, shape={list(self.shape)})"


# What a tensor holds at run time, or in a vector: an array, or a composite's pair.
TensorValue = np.ndarray | BlockScaled


def arrays(values: Mapping[str, TensorValue], what: str = "tensor") -> dict[str, np.ndarray]:
    """``values`` where every one is an array (what code without a block-scaled form
    takes); TypeError naming the first block-scaled one."""
    out: dict[str, np.ndarray] = {}
    for name, v in values.items():
        if isinstance(v, BlockScaled):
            raise TypeError(f"{what} {name!r} is block-scaled ({v.dtype}): no array holds it")
        out[name] = v
    return out


def _bits(a: np.ndarray) -> np.ndarray:
    arr = np.ascontiguousarray(a)
    return arr.view(f"u{arr.dtype.itemsize}") if arr.dtype.kind not in "biu" else arr


def _held(a: object, dt: DType, what: str) -> np.ndarray:
    arr = np.asarray(a)
    if arr.dtype == dt.storage:
        return arr
    with np.errstate(invalid="ignore", over="ignore"):
        out = arr.astype(dt.storage)
        back = out.astype(np.float64)
    wide = arr.astype(np.float64)
    same = (back == wide) | (np.isnan(back) & np.isnan(wide))
    if not np.all(same):
        raise ValueError(f"{what}: {arr.dtype} values that are not {dt} values")
    return out

"""Graph IR: graph -> regions -> blocks -> tensors + operators.

The containers mirror the TOSA flatbuffer schema (``TosaGraph``, ``TosaRegion``,
``TosaBasicBlock``, ``TosaTensor``, ``TosaOperator``) one to one, so serialization is
mechanical.  Operator attributes are kept by the argument names tosa.xml gives them
(``pad``, ``acc_type``, ``local_bound`` ...), because the XML is the specification; the
mapping to the schema's attribute tables lives in :mod:`vectors.flatbuffer`.

Attribute values are plain Python/numpy values:

* ``i32_t`` scalars (axis, zero points) -> ``int``; ``bool_t`` -> ``bool``;
* fixed-length ``i32_t`` arrays (``pad``, ``stride``, ``perms``) -> ``tuple[int, ...]``;
* enumerations (``acc_type``, ``mode``, variable ``type``) -> the enum value name (``"INT32"``);
* element-typed scalars (``pad_const``, ``min_val``) -> ``int`` or ``float``;
* tensors (CONST ``values``, VARIABLE ``initial_value``) -> ``numpy.ndarray``; a
  block-scaled CONST's ``values`` -> :class:`~conformance.block_tensor.BlockScaled`;
* graphs (COND_IF/WHILE_LOOP) -> the name of a block in the same graph;
* strings (CUSTOM) -> ``str``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from conformance.block_tensor import BlockScaled, TensorValue, is_block_scaled
from conformance.dtypes import DType

AttrValue = Any  # int | bool | float | str | tuple[int, ...] | np.ndarray


@dataclass
class Tensor:
    """A tensor of a block.  A constant holds ``data``; a constant of a block-scaled
    type (TOSA 1.1 ``bs32_*``) holds its values in ``data`` and its scales in
    ``scale_data``, as the 1.1 schema's TosaTensor does (:meth:`constant` pairs them)."""

    name: str
    shape: tuple[int, ...]
    dtype: DType
    data: np.ndarray | None = None  # constant contents, if any
    variable: bool = False
    is_unranked: bool = False
    variable_name: str = ""
    scale_data: np.ndarray | None = None  # a block-scaled constant's scales

    def constant(self) -> TensorValue | None:
        """The constant's value: ``data``, or for a block-scaled tensor the
        (values, scales) pair; None for a tensor without data.  ValueError for a
        block-scaled tensor without scales, or scales on any other."""
        if self.data is None:
            if self.scale_data is not None:
                raise ValueError(f"tensor {self.name!r} has scale_data but no data")
            return None
        if not is_block_scaled(self.dtype):
            if self.scale_data is not None:
                raise ValueError(f"tensor {self.name!r} of type {self.dtype} has scale_data")
            return self.data
        if self.scale_data is None:
            raise ValueError(f"block-scaled tensor {self.name!r} has data but no scale_data")
        return BlockScaled.of(self.dtype, self.data, self.scale_data)

    def set_constant(self, value: TensorValue | None) -> None:
        """Make the tensor a constant holding ``value`` (None: no data)."""
        if isinstance(value, BlockScaled):
            self.data, self.scale_data = value.values, value.scales
        else:
            self.data, self.scale_data = value, None

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1


@dataclass
class Operator:
    op: str  # operator name as in tosa.xml, e.g. "CONV2D"
    inputs: list[str]
    outputs: list[str]
    attributes: dict[str, AttrValue] = field(default_factory=dict)


@dataclass
class Block:
    name: str
    operators: list[Operator] = field(default_factory=list)
    tensors: dict[str, Tensor] = field(default_factory=dict)
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)


@dataclass
class Region:
    name: str
    blocks: list[Block] = field(default_factory=list)


@dataclass
class Version:
    major: int = 1
    minor: int = 1
    patch: int = 0
    draft: bool = True


@dataclass
class Graph:
    regions: list[Region] = field(default_factory=list)
    version: Version = field(default_factory=Version)
    # The revision (a conformance.revisions name) of the spec model that built the graph,
    # or of the file format it was read from; "" when unknown (a graph made by hand).
    # Its file format follows it (vectors.flatbuffer.format_for): the version alone
    # cannot tell the 1.1 draft from the 2024 draft, whose graphs both say 1.1.0 draft.
    revision: str = ""

    @property
    def main(self) -> Block:
        """The entry block: the first block of the first region."""
        if not self.regions or not self.regions[0].blocks:
            raise ValueError("graph has no blocks")
        return self.regions[0].blocks[0]

    def blocks(self) -> Iterator[Block]:
        for region in self.regions:
            yield from region.blocks

    def block(self, name: str) -> Block:
        for b in self.blocks():
            if b.name == name:
                return b
        raise KeyError(f"graph has no block named {name!r}")

"""TOSA 1.0 or 1.1 flatbuffer bytes -> graph IR (see :mod:`vectors.flatbuffer` for the
public API).  The two revisions share tosa-tools 2026.8's schema; the
:class:`~vectors.layout_1_0.Layout` says which one's element types are read, and the
graph records the revision whose format it was read in (``Graph.revision``).

The exact inverse of :mod:`vectors.graph_writer_1_0` for everything it writes:

* a CONST / CONST_SHAPE operator without the IR marker, with no inputs and one output
  holding data, is a constant: the operator is dropped and the tensor keeps its data;
* a marked one is an operator of the IR: its output's data becomes its ``values``;
* the variable tensor of VARIABLE (its first output), VARIABLE_READ (first input) and
  VARIABLE_WRITE (first output) gives the ``name`` (and for VARIABLE ``var_shape``,
  ``type``, ``initial_value``) attributes and leaves the block;
* TosaShape entries become tensors of type ``shape`` and rank 1, after the block's other
  tensors (the one normalisation of the order of a block's tensors);
* a TosaTensor with a ``scale_type`` and a ``block_shape`` is a block-scaled tensor of
  the composite type they and its ``type`` name (a constant's scales in ``scale_data``,
  their shape inferred from the tensor's and the block shape); the MXFP serialization
  feature such a file requires is the one feature the reader accepts.

Every offset, length and string is bounds-checked (:mod:`vectors.fbreader`), so a corrupt
file raises ``CorruptError``/``DecodeError`` and never decodes into garbage.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from conformance import dtypes
from conformance.block_tensor import BlockScaled, scale_shape, scale_type, value_type
from conformance.dtypes import DType
from conformance.graph import Block, Graph, Operator, Region, Tensor, Version
from vectors import encoding
from vectors import layout_1_0 as L
from vectors.attribute_codec_1_0 import decode_attributes, read_scalar
from vectors.errors import DecodeError
from vectors.fbreader import Reader, Table
from vectors.graph_writer import find_tensor
from vectors.graph_writer_1_0 import CONST_OPS, IR_CONST_LOCATION

__all__ = ["detect_revision", "read"]

DRAFT = "2024-04-draft"

# TosaTensor fields the IR has no room for (data outside the flatbuffer); a file using
# them cannot be read exactly.
_UNSUPPORTED_TENSOR_FIELDS = ("offset", "size", "scale_offset", "scale_size")


def detect_revision(data: bytes) -> str:
    """Which format a TOSA flatbuffer is in, by its Version table and its serializer
    tables: 1.0.x is TOSA 1.0's format.  A file carrying tosa-tools' ``software_version``
    or ``compatibility`` tables (which the 2024 draft's schema does not have) is in the
    shared schema of 1.0 and 1.1: 1.1.x is the 1.1 draft's, any other version TOSA
    1.0's.  The rest is the 2024-04 draft's (whose graphs say 1.1.0 draft too)."""
    root = Reader(data).root(L.GRAPH.layout)
    version = root.table("version", L.VERSION.layout)
    major_minor = None
    if version is not None:
        major_minor = (version.i32("_major", -1), version.i32("_minor", -1))
    if major_minor == L.LAYOUT_1_0.VERSION_MAJOR_MINOR:
        return L.LAYOUT_1_0.REVISION
    if root.present("software_version") or root.present("compatibility"):
        if major_minor == L.LAYOUT_1_1.VERSION_MAJOR_MINOR:
            return L.LAYOUT_1_1.REVISION
        return L.LAYOUT_1_0.REVISION
    return DRAFT


def ir_regions(regions: list[Region]) -> list[Region]:
    """The IR's regions for a file's (the inverse of the writer's ``file_regions``):
    regions after the first that hold one block of their own name are that region's
    called graphs, and go back into it."""
    if not regions:
        return regions
    first, rest = regions[0], regions[1:]
    if rest and all(len(r.blocks) == 1 and r.blocks[0].name == r.name for r in rest):
        return [Region(first.name, first.blocks + [r.blocks[0] for r in rest])]
    return regions


def read(data: bytes, layout: L.Layout = L.LAYOUT_1_0) -> Graph:
    """Decode a whole buffer whose file identifier was already checked, in ``layout``'s
    format (TOSA 1.0's unless told)."""
    root = Reader(data).root(layout.GRAPH.layout)
    version = root.table("version", layout.VERSION.layout)
    if version is None:
        raise DecodeError("TosaGraph has no version (a required field)")
    graph = Graph(
        version=Version(
            major=version.i32("_major", -1),
            minor=version.i32("_minor", -1),
            patch=version.i32("_patch", -1),
            draft=version.boolean("_draft", True),
        ),
        revision=layout.REVISION,
    )
    _check_compatibility(root, layout)
    readers: list[_BlockReader] = []
    for region_table in root.tables("regions", layout.REGION.layout):
        region = Region(region_table.string("name") or "")
        for block_table in region_table.tables("blocks", layout.BLOCK.layout):
            reader = _BlockReader(block_table, layout)
            try:
                reader.read_containers()
            except DecodeError as exc:
                raise type(exc)(f"block {reader.block.name!r}: {exc}") from None
            region.blocks.append(reader.block)
            readers.append(reader)
        graph.regions.append(region)
    graph.regions = ir_regions(graph.regions)
    # Operators second: CLAMP's attributes need their input tensor's type, which may (in
    # odd graphs) live in a block decoded later.
    for reader in readers:
        try:
            reader.read_operators(graph)
        except DecodeError as exc:
            raise type(exc)(f"block {reader.block.name!r}: {exc}") from None
    return graph


def _check_compatibility(root: Table, layout: L.Layout) -> None:
    comp = root.table("compatibility", layout.COMPATIBILITY.layout)
    if comp is None:
        return
    features = read_scalar(comp, layout.COMPATIBILITY.field("features"))
    if layout.SERIALIZER_RELEASE is not None:  # 1.1: block-scaled tensors are read
        features &= ~(1 << layout.COMPATIBILITY_FEATURE.values["MXFP"])
    if not features:
        return
    names = [
        layout.COMPATIBILITY_FEATURE.names.get(bit, f"bit {bit}")
        for bit in range(64)
        if features >> bit & 1
    ]
    if layout.SERIALIZER_RELEASE is None:
        why = f"which {layout.title} graphs do not use"
    else:
        why = "which this reader does not know"
    raise DecodeError(
        f"the file requires the serialization features {', '.join(names)} "
        f"(TosaGraph.compatibility), {why}"
    )


@dataclass
class _RawTensor:
    name: str
    shape: tuple[int, ...] | None
    type: int | None
    data: bytes | None
    variable: bool
    is_unranked: bool
    variable_name: str
    scale_type: int | None = None  # present: a block-scaled tensor
    block_shape: int | None = None
    scale_data: bytes | None = None


@dataclass
class _RawOp:
    index: int
    op: str
    table: Table
    inputs: list[str]
    outputs: list[str]
    location: str | None


class _BlockReader:
    def __init__(self, table: Table, layout: L.Layout) -> None:
        self.table = table
        self.layout = layout
        self.block = Block(
            name=table.string("name") or "",
            inputs=table.strings("inputs"),
            outputs=table.strings("outputs"),
        )
        self.raw: dict[str, _RawTensor] = {}  # the TosaTensor entries, in file order
        self.ops: list[_RawOp] = []

    # -- tensors --------------------------------------------------------------------

    def read_containers(self) -> None:
        lay = self.layout
        for t in self.table.tables("tensors", lay.TENSOR.layout):
            raw = _raw_tensor(t, lay)
            self._add(raw.name, raw)
        shapes: dict[str, Tensor] = {}
        for s in self.table.tables("shapes", lay.SHAPE.layout):
            shape = _shape(s)
            if shape.name in self.raw or shape.name in shapes:
                raise DecodeError(f"tensor {shape.name!r} is defined twice")
            shapes[shape.name] = shape
        for index, op_table in enumerate(self.table.tables("operators", lay.OPERATOR.layout)):
            self.ops.append(_raw_op(index, op_table, lay))
        # The variable tensors the writer adds leave the block, unless something else
        # (another operand, a block input or output) refers to them too.
        slots = {id(op): _variable_slot(op) for op in self.ops}
        elsewhere = set(self.block.inputs) | set(self.block.outputs)
        for op in self.ops:
            slot = slots[id(op)]
            for direction, names in (("in", op.inputs), ("out", op.outputs)):
                elsewhere.update(n for k, n in enumerate(names) if (direction, k) != slot)
        dropped = {
            _slot_name(op, slot)
            for op in self.ops
            if (slot := slots[id(op)]) is not None
        }
        for name, raw in self.raw.items():
            if not (name in dropped and raw.variable and name not in elsewhere):
                self.block.tensors[name] = _tensor(raw, lay)
        self.block.tensors.update(shapes)

    def _add(self, name: str, raw: _RawTensor) -> None:
        if name in self.raw:
            raise DecodeError(f"tensor {name!r} is defined twice")
        self.raw[name] = raw

    # -- operators ------------------------------------------------------------------

    def read_operators(self, graph: Graph) -> None:
        block = self.block
        const_ops: list[Operator] = []
        for rop in self.ops:
            if rop.op in CONST_OPS and rop.location != IR_CONST_LOCATION and self._constant(rop):
                continue  # a constant tensor: it keeps its data
            op = Operator(rop.op, list(rop.inputs), list(rop.outputs))
            where = f"operator {rop.index} ({rop.op})"
            try:
                if rop.op in ("VARIABLE", "VARIABLE_READ", "VARIABLE_WRITE"):
                    self._variable(rop, op)
                element_type = functools.partial(_element_type, graph, block, op)
                attrs = decode_attributes(rop.op, rop.table, element_type, self.layout)
                op.attributes.update(attrs)
            except DecodeError as exc:
                raise DecodeError(f"{where}: {exc}") from None
            if rop.op in CONST_OPS:
                const_ops.append(op)
            block.operators.append(op)
        # An operator CONST's values are its output's data; the tensor then holds none.
        for op in const_ops:
            tensor = block.tensors.get(op.outputs[0]) if len(op.outputs) == 1 else None
            if tensor is not None and tensor.data is not None:
                op.attributes["values"] = tensor.constant()
                tensor.set_constant(None)

    def _constant(self, rop: _RawOp) -> bool:
        """Whether an unmarked CONST / CONST_SHAPE is the writer's form of a constant."""
        if rop.inputs or len(rop.outputs) != 1:
            return False
        tensor = self.block.tensors.get(rop.outputs[0])
        if tensor is None or tensor.data is None:
            return False
        return (tensor.dtype is dtypes.SHAPE) == (rop.op == "CONST_SHAPE")

    def _variable(self, rop: _RawOp, op: Operator) -> None:
        slot = op.inputs if rop.op == "VARIABLE_READ" else op.outputs
        direction = "input" if rop.op == "VARIABLE_READ" else "output"
        name = slot[0] if slot else None
        raw = self.raw.get(name) if name is not None else None
        if raw is None or not raw.variable:
            shown = "none" if name is None else repr(name)
            raise DecodeError(
                f"first {direction} {shown} is not a variable tensor of the block (TOSA 1.0 "
                "files name a variable through one)"
            )
        del slot[0]
        op.attributes["name"] = raw.variable_name
        if rop.op != "VARIABLE":
            return
        if raw.shape is not None:
            op.attributes["var_shape"] = raw.shape
        var_type = None
        lay = self.layout
        if raw.type is not None:
            var_type = lay.var_type_name(raw.type)
            if var_type is None:
                shown = lay.DTYPE.names.get(raw.type, f"value {raw.type}")
                raise DecodeError(f"variable tensor {raw.name!r} has DType {shown}, no var_t")
            op.attributes["type"] = var_type
        if not _no_data(raw.data, raw.shape or ()):
            if raw.shape is None or raw.type is None:
                raise DecodeError(
                    f"variable tensor {raw.name!r} holds an initial value but no shape or type"
                )
            try:
                op.attributes["initial_value"] = encoding.decode(
                    raw.data or b"", lay.IR_DTYPES[raw.type], raw.shape
                )
            except DecodeError as exc:
                raise DecodeError(f"variable tensor {raw.name!r}: {exc}") from None


def _element_type(graph: Graph, block: Block, op: Operator) -> DType:
    tensor = find_tensor(graph, block, op.inputs[0]) if op.inputs else None
    if tensor is None:
        raise DecodeError("the first input tensor, which gives the element type, is missing")
    return tensor.dtype


def _variable_slot(op: _RawOp) -> tuple[str, int] | None:
    """Where a variable operator refers to its variable tensor: (direction, position)."""
    if op.op in ("VARIABLE", "VARIABLE_WRITE") and op.outputs:
        return ("out", 0)
    if op.op == "VARIABLE_READ" and op.inputs:
        return ("in", 0)
    return None


def _slot_name(op: _RawOp, slot: tuple[str, int]) -> str:
    direction, k = slot
    return (op.inputs if direction == "in" else op.outputs)[k]


def _raw_op(index: int, table: Table, layout: L.Layout) -> _RawOp:
    value = table.u32("op")
    name = layout.OP.names.get(value)
    if name is None or name == "UNKNOWN":
        shown = f"value {value}" if name is None else name
        raise DecodeError(f"operator {index}: unknown Op {shown}")
    location = table.table("location", layout.LOCATION.layout)
    text = location.string("text") if location is not None else None
    return _RawOp(index, name, table, table.strings("inputs"), table.strings("outputs"), text)


def _raw_tensor(table: Table, layout: L.Layout) -> _RawTensor:
    name = table.string("name") or ""
    for field in _UNSUPPORTED_TENSOR_FIELDS:
        f = layout.TENSOR.field(field)
        # Arm's serializer writes these with their defaults (an empty scale_data) always.
        used = table.raw_bytes(field) if f.is_offset else read_scalar(table, f)
        if used:
            raise DecodeError(
                f"tensor {name!r}: TosaTensor.{field} (external or block-scaled data) is not "
                "supported"
            )
    # Arm's serializer writes scale_type and block_shape as UNKNOWN (0) and an empty
    # scale_data for every tensor that is not block-scaled.
    scale_t = table.u32("scale_type")
    block = table.u32("block_shape")
    return _RawTensor(
        name=name,
        shape=table.i32s("shape"),
        type=table.u32("type") if table.present("type") else None,
        data=table.raw_bytes("data"),
        variable=table.boolean("variable"),
        is_unranked=table.boolean("is_unranked"),
        variable_name=table.string("variable_name") or "",
        scale_type=scale_t or None,
        block_shape=block or None,
        scale_data=table.raw_bytes("scale_data"),
    )


def _ir_dtype(value: int, layout: L.Layout) -> DType:
    found = layout.IR_DTYPES.get(value)
    if found is not None:
        return found
    name = layout.DTYPE.names.get(value)
    if name is None:
        raise DecodeError(f"unknown DType value {value}")
    if name == "SHAPE":
        raise DecodeError(
            f"DType SHAPE in a TosaTensor: {layout.title} keeps shape values in TosaShape"
        )
    if any(name in other.DTYPE_NAMES.values() for other in L.LAYOUTS.values()):
        raise DecodeError(f"DType {name} is not an element type of {layout.title}")
    raise DecodeError(f"DType {name} has no element type in the graph IR")


def _no_data(raw: bytes | None, shape: tuple[int, ...]) -> bool:
    """Arm's serializer writes an empty ``data`` vector for every tensor without data; an
    empty vector is data only for a tensor of no elements (what our writer writes)."""
    return raw is None or (not raw and all(d >= 0 for d in shape) and math.prod(shape) > 0)


def _tensor(raw: _RawTensor, layout: L.Layout) -> Tensor:
    try:
        if raw.scale_type is not None or raw.block_shape is not None:
            return _block_scaled_tensor(raw, layout)
        if raw.scale_data:
            raise DecodeError("scale_data in a tensor with no scale_type or block_shape")
        dtype = _ir_dtype(0 if raw.type is None else raw.type, layout)
        shape = raw.shape or ()
        data = None if _no_data(raw.data, shape) else encoding.decode(raw.data or b"", dtype, shape)
    except DecodeError as exc:
        raise DecodeError(f"tensor {raw.name!r}: {exc}") from None
    return Tensor(
        name=raw.name,
        shape=shape,
        dtype=dtype,
        data=data,
        variable=raw.variable,
        is_unranked=raw.is_unranked,
        variable_name=raw.variable_name,
    )


def _block_scaled_tensor(raw: _RawTensor, layout: L.Layout) -> Tensor:
    """A TosaTensor with a scale_type and block_shape: a block-scaled tensor."""
    value = 0 if raw.type is None else raw.type
    parts = (value, raw.scale_type or 0, raw.block_shape or 0)
    dtype = layout.COMPOSITES.get(parts)
    if dtype is None:
        names = (
            layout.DTYPE.names.get(value, f"value {value}"),
            layout.DTYPE.names.get(parts[1], f"value {parts[1]}"),
            layout.BLOCK_SHAPE.names.get(parts[2], f"value {parts[2]}"),
        )
        raise DecodeError(
            "type {}, scale_type {}, block_shape {} name no block-scaled type of {}".format(
                *names, layout.title
            )
        )
    shape = raw.shape or ()
    t = Tensor(raw.name, shape, dtype, None, raw.variable, raw.is_unranked, raw.variable_name)
    if _no_data(raw.data, shape):
        if raw.scale_data:
            raise DecodeError("scale_data but no data")
        return t
    s_shape = scale_shape(shape, dtype.block_size)
    if _no_data(raw.scale_data, s_shape):
        raise DecodeError("data but no scale_data (a block-scaled constant holds both)")
    vt, st = value_type(dtype), scale_type(dtype)
    try:
        values = encoding.decode(raw.data or b"", vt, shape)
    except DecodeError as exc:
        raise DecodeError(f"data: {exc}") from None
    try:
        scales = encoding.decode(raw.scale_data or b"", st, s_shape)
    except DecodeError as exc:
        raise DecodeError(f"scale_data: {exc}") from None
    t.set_constant(BlockScaled(dtype, values, scales))
    return t


def _shape(table: Table) -> Tensor:
    name = table.string("name") or ""
    rank = table.u32("rank")
    raw = table.raw_bytes("data")
    try:
        empty = _no_data(raw, (rank,))
        data = None if empty else encoding.decode(raw or b"", dtypes.SHAPE, (rank,))
    except DecodeError as exc:
        raise DecodeError(f"shape value {name!r}: {exc}") from None
    return Tensor(name=name, shape=(rank,), dtype=dtypes.SHAPE, data=data)

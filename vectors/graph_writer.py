"""Graph IR -> TOSA flatbuffer bytes (see :mod:`vectors.flatbuffer` for the public API).

Output is deterministic: objects are written in IR order (regions, blocks, tensors in the
block's dict order, operators), attribute fields in the mapping's order, and nothing
depends on time, ids or hashing.
"""

from __future__ import annotations

import numbers

import flatbuffers
import numpy as np
from flatbuffers.builder import BuilderSizeError

from conformance.dtypes import DType
from conformance.graph import Block, Graph, Operator, Tensor
from vectors import encoding, fbwriter
from vectors import layout as L
from vectors.attribute_codec import encode_attributes
from vectors.attributes import Kind, mapping
from vectors.errors import EncodeError
from vectors.fbwriter import FieldValue


def write(graph: Graph) -> bytes:
    """The graph as TOSA flatbuffer bytes; raises :class:`EncodeError`."""
    try:
        return _Writer(graph).write()
    except BuilderSizeError:
        raise EncodeError("graph is too large for a flatbuffer (2 GiB limit)") from None


def find_tensor(graph: Graph, block: Block, name: str) -> Tensor | None:
    """``name`` in ``block``, else in the first other block defining it (blocks are
    self-contained in valid graphs; the fallback only keeps odd graphs writable)."""
    found = block.tensors.get(name)
    if found is not None:
        return found
    return next((b.tensors[name] for b in graph.blocks() if name in b.tensors), None)


def _size_hint(graph: Graph) -> int:
    total = 0
    for block in graph.blocks():
        total += 256 * (len(block.tensors) + len(block.operators))
        total += sum(t.data.nbytes for t in block.tensors.values() if t.data is not None)
        for op in block.operators:
            total += sum(v.nbytes for v in op.attributes.values() if isinstance(v, np.ndarray))
    return min(total + 4096, flatbuffers.Builder.MAX_BUFFER_SIZE)


class _Writer:
    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.b = fbwriter.new_builder(_size_hint(graph))

    def write(self) -> bytes:
        b = self.b
        # Version goes first: the first object written ends the buffer, and a table of
        # int32s leaves no alignment padding after it, so cutting even one byte off the
        # file removes bytes the reader needs and truncation is always detected.
        version = self._version()
        regions = [self._region(r.name, r.blocks) for r in self.graph.regions]
        regions_vec = fbwriter.offset_vector(b, regions)
        root = fbwriter.table(
            b, L.GRAPH, [("version", "offset", version), ("regions", "offset", regions_vec)]
        )
        b.Finish(root, file_identifier=L.FILE_IDENTIFIER)
        return bytes(b.Output())

    def _version(self) -> int:
        v = self.graph.version
        return fbwriter.table(
            self.b,
            L.VERSION,
            [
                ("_major", "i32", _checked_i32(v.major, "version major")),
                ("_minor", "i32", _checked_i32(v.minor, "version minor")),
                ("_patch", "i32", _checked_i32(v.patch, "version patch")),
                ("_draft", "bool", bool(v.draft)),
            ],
        )

    def _region(self, name: str, blocks: list[Block]) -> int:
        offsets = [self._block(block) for block in blocks]
        fields: list[FieldValue] = [
            ("name", "offset", self.b.CreateString(name)),
            ("blocks", "offset", fbwriter.offset_vector(self.b, offsets)),
        ]
        return fbwriter.table(self.b, L.REGION, fields)

    def _block(self, block: Block) -> int:
        b = self.b
        where = f"block {block.name!r}"
        try:
            const_data = self._const_data(block)
            tensors = [
                self._tensor(key, t, const_data.get(key)) for key, t in block.tensors.items()
            ]
            ops = [self._operator(block, i, op) for i, op in enumerate(block.operators)]
        except EncodeError as exc:
            raise EncodeError(f"{where}: {exc}") from None
        fields: list[FieldValue] = [
            ("name", "offset", b.CreateString(block.name)),
            ("operators", "offset", fbwriter.offset_vector(b, ops)),
            ("tensors", "offset", fbwriter.offset_vector(b, tensors)),
            ("inputs", "offset", fbwriter.string_vector(b, block.inputs)),
            ("outputs", "offset", fbwriter.string_vector(b, block.outputs)),
        ]
        return fbwriter.table(b, L.BLOCK, fields)

    def _const_data(self, block: Block) -> dict[str, np.ndarray]:
        """Output tensor name -> values of the block's CONST / CONST_SHAPE operators.

        The schema has no attribute table for them: like Arm's tools, the values become the
        output tensor's ``data``.  A tensor that already holds data must agree.
        """
        out: dict[str, np.ndarray] = {}
        for i, op in enumerate(block.operators):
            args = [a for a in mapping(op.op).args if a.kind is Kind.OUTPUT_DATA]
            if not args or args[0].arg not in op.attributes:
                continue
            where = f"operator {i} ({op.op}) attribute {args[0].arg!r}"
            tensor = block.tensors.get(op.outputs[0]) if op.outputs else None
            if tensor is None:
                raise EncodeError(f"{where}: the output tensor is not in the block")
            values = encoding.coerce(op.attributes[args[0].arg], tensor.dtype, tensor.shape, where)
            for other in (tensor.data, out.get(tensor.name)):
                if other is not None and _bytes(other, tensor) != _bytes(values, tensor):
                    raise EncodeError(f"{where}: differs from tensor {tensor.name!r}'s data")
            out[tensor.name] = values
        return out

    def _tensor(self, key: str, t: Tensor, const_values: np.ndarray | None) -> int:
        b = self.b
        where = f"tensor {key!r}"
        if key != t.name:
            raise EncodeError(f"{where} is named {t.name!r}; the key must be its name")
        shape = [_checked_i32(d, f"{where} shape") for d in t.shape]
        data: int | None = None
        if const_values is not None:
            data = fbwriter.byte_vector(b, encoding.encode(const_values, t.dtype))
        elif t.data is not None:
            data = fbwriter.byte_vector(b, _bytes(t.data, t, where))
        fields: list[FieldValue] = [
            ("name", "offset", b.CreateString(t.name)),
            ("shape", "offset", fbwriter.int32_vector(b, shape)),
            ("type", "u32", encoding.schema_dtype(t.dtype)),
        ]
        if data is not None:
            fields.append(("data", "offset", data))
        fields += [
            ("variable", "bool", bool(t.variable)),
            ("is_unranked", "bool", bool(t.is_unranked)),
            ("variable_name", "offset", b.CreateString(t.variable_name)),
        ]
        return fbwriter.table(b, L.TENSOR, fields)

    def _operator(self, block: Block, index: int, op: Operator) -> int:
        b = self.b
        where = f"operator {index} ({op.op})"
        value = L.OP_VALUES.get(op.op)
        if value is None or op.op in ("UNKNOWN", "RESERVED"):
            raise EncodeError(f"{where}: not an operator of the schema")
        try:
            attr_type, attr = encode_attributes(
                b, op.op, op.attributes, lambda: self._element_type(block, op)
            )
        except EncodeError as exc:
            raise EncodeError(f"{where}: {exc}") from None
        fields: list[FieldValue] = [("op", "u32", value), ("attribute_type", "u8", attr_type)]
        if attr:
            fields.append(("attribute", "offset", attr))
        fields += [
            ("inputs", "offset", fbwriter.string_vector(b, op.inputs)),
            ("outputs", "offset", fbwriter.string_vector(b, op.outputs)),
        ]
        return fbwriter.table(b, L.OPERATOR, fields)

    def _element_type(self, block: Block, op: Operator) -> DType:
        tensor = find_tensor(self.graph, block, op.inputs[0]) if op.inputs else None
        if tensor is None:
            raise EncodeError("needs the first input tensor to know the element type")
        return tensor.dtype


def _bytes(values: np.ndarray, tensor: Tensor, where: str = "") -> bytes:
    arr = encoding.coerce(values, tensor.dtype, tensor.shape, where or f"tensor {tensor.name!r}")
    return encoding.encode(arr, tensor.dtype)


def _checked_i32(value: object, what: str) -> int:
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise EncodeError(f"{what}: {value!r} is not an integer")
    if not -(1 << 31) <= int(value) < (1 << 31):
        raise EncodeError(f"{what}: {value!r} does not fit in int32")
    return int(value)

"""TOSA flatbuffer bytes -> graph IR (see :mod:`vectors.flatbuffer` for the public API).

Reading is the exact inverse of :mod:`vectors.graph_writer` for everything it writes, with
one normalisation: the data of a CONST / CONST_SHAPE output tensor comes back as the
operator's ``values`` attribute, and the tensor itself holds no data (the IR keeps each
constant in one place).
"""

from __future__ import annotations

from conformance import revisions
from conformance.dtypes import DType
from conformance.graph import Block, Graph, Operator, Region, Tensor, Version
from vectors import encoding
from vectors import layout as L
from vectors.attribute_codec import decode_attributes
from vectors.attributes import Kind, mapping
from vectors.errors import DecodeError
from vectors.fbreader import Reader, Table
from vectors.graph_writer import find_tensor

DRAFT_REVISION = revisions.DRAFT_2024.name  # the revision whose format this module reads


def read(data: bytes) -> Graph:
    """Decode a whole buffer whose file identifier was already checked."""
    root = Reader(data).root(L.GRAPH)
    version = root.table("version", L.VERSION)
    if version is None:
        raise DecodeError("TosaGraph has no version (a required field)")
    graph = Graph(
        version=Version(
            major=version.i32("_major", -1),
            minor=version.i32("_minor", -1),
            patch=version.i32("_patch", -1),
            draft=version.boolean("_draft", True),
        ),
        revision=DRAFT_REVISION,
    )
    pending: list[tuple[Block, Table]] = []
    for region_table in root.tables("regions", L.REGION):
        region = Region(region_table.string("name") or "")
        for block_table in region_table.tables("blocks", L.BLOCK):
            block = _block_with_tensors(block_table)
            region.blocks.append(block)
            pending.append((block, block_table))
        graph.regions.append(region)
    # Operators second: CLAMP/PAD attributes need their input tensor's type, which may
    # (in odd graphs) live in a block decoded later.
    for block, block_table in pending:
        try:
            for index, op_table in enumerate(block_table.tables("operators", L.OPERATOR)):
                block.operators.append(_operator(graph, block, index, op_table))
            _move_const_data(block)
        except DecodeError as exc:
            raise type(exc)(f"block {block.name!r}: {exc}") from None
    return graph


def _block_with_tensors(table: Table) -> Block:
    block = Block(
        name=table.string("name") or "",
        inputs=table.strings("inputs"),
        outputs=table.strings("outputs"),
    )
    for tensor_table in table.tables("tensors", L.TENSOR):
        try:
            tensor = _tensor(tensor_table)
        except DecodeError as exc:
            raise type(exc)(f"block {block.name!r}: {exc}") from None
        if tensor.name in block.tensors:
            raise DecodeError(f"block {block.name!r}: tensor {tensor.name!r} is defined twice")
        block.tensors[tensor.name] = tensor
    return block


def _tensor(table: Table) -> Tensor:
    name = table.string("name") or ""
    try:
        shape = table.i32s("shape") or ()
        dtype = encoding.ir_dtype(table.u32("type"))
        raw = table.raw_bytes("data")
        data = None if raw is None else encoding.decode(raw, dtype, shape)
    except DecodeError as exc:
        raise type(exc)(f"tensor {name!r}: {exc}") from None
    return Tensor(
        name=name,
        shape=shape,
        dtype=dtype,
        data=data,
        variable=table.boolean("variable"),
        is_unranked=table.boolean("is_unranked"),
        variable_name=table.string("variable_name") or "",
    )


def _operator(graph: Graph, block: Block, index: int, table: Table) -> Operator:
    value = table.u32("op")
    name = L.OP_NAMES.get(value)
    if name is None or name in ("UNKNOWN", "RESERVED"):
        shown = f"value {value}" if name is None else name
        raise DecodeError(f"operator {index}: unknown Op {shown}")
    op = Operator(name, inputs=table.strings("inputs"), outputs=table.strings("outputs"))

    def element_type() -> DType:
        tensor = find_tensor(graph, block, op.inputs[0]) if op.inputs else None
        if tensor is None:
            raise DecodeError("the first input tensor, which gives the element type, is missing")
        return tensor.dtype

    try:
        op.attributes = decode_attributes(name, table, element_type)
    except DecodeError as exc:
        raise type(exc)(f"operator {index} ({name}): {exc}") from None
    return op


def _move_const_data(block: Block) -> None:
    """CONST / CONST_SHAPE: output tensor data -> the ``values`` attribute."""
    moved: list[Tensor] = []
    for op in block.operators:
        args = [a for a in mapping(op.op).args if a.kind is Kind.OUTPUT_DATA]
        tensor = block.tensors.get(op.outputs[0]) if args and op.outputs else None
        if tensor is not None and tensor.data is not None:
            op.attributes[args[0].arg] = tensor.data
            moved.append(tensor)
    for tensor in moved:
        tensor.data = None

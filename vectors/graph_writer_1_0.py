"""Graph IR -> TOSA 1.0 or 1.1 flatbuffer bytes (see :mod:`vectors.flatbuffer` for the
public API).  The two revisions share tosa-tools 2026.8's schema; a :class:`~vectors.
layout_1_0.Layout` says which revision's file is written (its element types, the Version
it must say, and, for 1.1, the serializer tables a file of that serializer carries).

The IR is one built against the 1.0 (or 1.1) spec model: zero points, ``pad_const``, MUL's
``shift`` and RESCALE's ``multiplier``/``shift`` are input tensors, enumerated attributes
hold value names, variables are named.  The file follows the conventions Arm's
serializer and reference model use for 1.0 (docs/flatbuffer.md, "TOSA 1.0 files"):

* a constant (a tensor holding data that no operator of its block produces and that is
  no block input) is written as the output of a CONST operator, or CONST_SHAPE for a
  shape value; those operators come first in the block, in the block's tensor order;
* a CONST / CONST_SHAPE operator of the IR itself is written where it stands, its
  ``values`` as its output's data, and is marked with :data:`IR_CONST_LOCATION` so that
  reading gives it back as an operator;
* shape values (IR tensors of type ``shape``, rank 1) are TosaShape entries of the block;
* VARIABLE declares a *variable tensor* (``variable`` set, ``variable_name`` the
  variable's name, shape ``var_shape``, type ``type``, data ``initial_value``) as its
  output; VARIABLE_READ takes a variable tensor of that name as its first input and
  VARIABLE_WRITE as its first output;
* a block-scaled tensor (TOSA 1.1 ``bs32_*``) is one TosaTensor: ``type`` its value
  type, ``scale_type`` its scale type, ``block_shape`` BLOCK_SHAPE_32, a constant's
  values in ``data`` and its scales in ``scale_data`` (each encoded as a tensor of its
  own type); a file holding one requires the MXFP serialization feature
  (``compatibility.features``), as tosa-tools' serializer marks it.

Output is deterministic and independent of the installed ``flatbuffers`` package: the
buffer is built by :mod:`vectors.fbbuild`, objects in IR order, fields in slot order.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np

from conformance import dtypes
from conformance.block_tensor import (
    BlockScaled,
    TensorValue,
    is_block_scaled,
    scale_type,
    value_type,
)
from conformance.dtypes import DType
from conformance.graph import Block, Graph, Operator, Region, Tensor
from conformance.operator_table import family
from vectors import encoding
from vectors import layout_1_0 as L
from vectors.attribute_codec_1_0 import checked_int, encode_attributes, int_list
from vectors.errors import EncodeError
from vectors.fbbuild import MAX_SIZE, Builder, Value
from vectors.graph_writer import find_tensor

__all__ = ["CONST_OPS", "IR_CONST_LOCATION", "VARIABLE_OPS", "write"]

# OpLocation text of a CONST / CONST_SHAPE operator that is an operator of the IR rather
# than a constant tensor.  The location is opaque to consumers (Arm's model ignores it).
IR_CONST_LOCATION = "tosa-conformance:ir-operator"

CONST_OPS = family(("CONST", "CONST_SHAPE"))
VARIABLE_OPS = family(("VARIABLE", "VARIABLE_READ", "VARIABLE_WRITE"))


def write(graph: Graph, layout: L.Layout = L.LAYOUT_1_0) -> bytes:
    """The graph as flatbuffer bytes in ``layout``'s format (TOSA 1.0's unless told);
    raises :class:`EncodeError`."""
    v = graph.version
    major, minor = _i32(v.major, "version major"), _i32(v.minor, "version minor")
    _i32(v.patch, "version patch")
    if (major, minor) != layout.VERSION_MAJOR_MINOR:
        shown = f"{v.major}.{v.minor}.{v.patch}{' draft' if v.draft else ''}"
        want = ".".join(str(p) for p in layout.VERSION_MAJOR_MINOR)
        constant = "VERSION_" + want.replace(".", "_")
        raise EncodeError(
            f"graph version {shown} is not a TOSA {want} version (a {want} file says {want}.x "
            f"in its Version table; set Graph.version, e.g. to vectors.flatbuffer.{constant})"
        )
    return _Writer(graph, layout).write()


@dataclass
class _FileTensor:
    name: str
    shape: list[int] | None
    type: int | None
    data: bytes | None = None
    variable: bool = False
    is_unranked: bool = False
    variable_name: str = ""
    # a block-scaled tensor's scale_type and block_shape numbers, and its scales
    scale_type: int | None = None
    block_shape: int | None = None
    scale_data: bytes | None = None


@dataclass
class _FileShape:
    name: str
    rank: int
    data: bytes | None


@dataclass
class _FileOp:
    op: str
    inputs: list[str]
    outputs: list[str]
    attributes: dict[str, object] = field(default_factory=dict)
    location: str | None = None
    ir: Operator | None = None  # the IR operator, None for a constant's CONST
    index: int = -1


def _size_hint(graph: Graph) -> int:
    total = 4096
    for block in graph.blocks():
        total += 256 * (len(block.tensors) + len(block.operators))
        total += sum(t.data.nbytes for t in block.tensors.values() if t.data is not None)
        total += sum(
            t.scale_data.nbytes for t in block.tensors.values() if t.scale_data is not None
        )
        for op in block.operators:
            total += sum(v.nbytes for v in op.attributes.values() if isinstance(v, np.ndarray))
    return min(total, MAX_SIZE)


def file_regions(graph: Graph) -> list[Region]:
    """The regions as a 1.0 file holds them. TOSA 1.0 calls a COND_IF branch or a
    WHILE_LOOP body by the name of a *region* (Arm's model looks it up so), while the IR
    keeps every block of a graph in one region: each block after a region's first
    becomes a region of its own, named as the block. :func:`ir_regions` undoes it."""
    out: list[Region] = []
    for region in graph.regions:
        out.append(Region(region.name, region.blocks[:1]))
        out += [Region(block.name, [block]) for block in region.blocks[1:]]
    return out


class _Writer:
    def __init__(self, graph: Graph, layout: L.Layout) -> None:
        self.graph = graph
        self.layout = layout
        self.b = Builder(_size_hint(graph))
        self.block_scaled = any(
            is_block_scaled(t.dtype) for block in graph.blocks() for t in block.tensors.values()
        )

    def write(self) -> bytes:
        b = self.b
        lay = self.layout
        v = self.graph.version
        # Version first: the first object written ends the buffer, so cutting even one
        # byte off the file removes bytes of a table the reader checks.
        version = b.table(
            lay.VERSION,
            {
                "_major": int(v.major),
                "_minor": int(v.minor),
                "_patch": int(v.patch),
                "_draft": bool(v.draft),
            },
        )
        serializer = self._serializer_tables()
        regions = []
        for region in file_regions(self.graph):
            blocks = b.offset_vector([self._block(block) for block in region.blocks])
            regions.append(b.table(lay.REGION, {"name": b.string(region.name), "blocks": blocks}))
        root_values: dict[str, Value] = {"version": version, "regions": b.offset_vector(regions)}
        root_values.update(serializer)
        root = b.table(lay.GRAPH, root_values)
        return b.finish(root, lay.FILE_IDENTIFIER)

    def _serializer_tables(self) -> dict[str, Value]:
        """TosaGraph's software_version and compatibility, as tosa-tools' serializer of
        the vendored schema writes them (its release, an empty modifier; the MXFP
        feature when the graph holds a block-scaled tensor, no feature otherwise); none
        at all for a layout without a serializer release (TOSA 1.0)."""
        release = self.layout.SERIALIZER_RELEASE
        if release is None:
            return {}
        b = self.b
        table = self.layout.SOFTWARE_VERSION

        def software_version() -> int:
            major, minor, micro = release
            return b.table(
                table,
                {"_major": major, "_minor": minor, "_micro": micro, "_modifier": b.string("")},
            )

        compat: dict[str, Value] = {"min_reader_version": software_version()}
        if self.block_scaled:
            compat["features"] = 1 << self.layout.COMPATIBILITY_FEATURE.values["MXFP"]
        compatibility = b.table(self.layout.COMPATIBILITY, compat)
        return {"software_version": software_version(), "compatibility": compatibility}

    def _block(self, block: Block) -> int:
        b = self.b
        try:
            plan = _BlockPlan(self.graph, block, self.layout)
            tensors = [self._tensor(t) for t in plan.tensors]
            shapes = [self._shape(s) for s in plan.shapes]
            ops = [self._operator(block, op) for op in plan.ops]
        except EncodeError as exc:
            raise EncodeError(f"block {block.name!r}: {exc}") from None
        return b.table(
            self.layout.BLOCK,
            {
                "name": b.string(block.name),
                "operators": b.offset_vector(ops),
                "tensors": b.offset_vector(tensors),
                "inputs": b.string_vector(block.inputs),
                "outputs": b.string_vector(block.outputs),
                "shapes": b.offset_vector(shapes),
            },
        )

    def _tensor(self, t: _FileTensor) -> int:
        b = self.b
        values: dict[str, Value] = {"name": b.string(t.name)}
        if t.shape is not None:
            values["shape"] = b.scalar_vector("int32", t.shape)
        if t.type is not None:
            values["type"] = t.type
        if t.data is not None:
            values["data"] = b.byte_vector(t.data, _data_align(self.layout))
        if t.variable:
            values["variable"] = True
        if t.is_unranked:
            values["is_unranked"] = True
        if t.variable_name:
            values["variable_name"] = b.string(t.variable_name)
        if t.scale_type is not None:
            values["scale_type"] = t.scale_type
        if t.scale_data is not None:
            align = _data_align(self.layout, "scale_data")
            values["scale_data"] = b.byte_vector(t.scale_data, align)
        if t.block_shape is not None:
            values["block_shape"] = t.block_shape
        return b.table(self.layout.TENSOR, values)

    def _shape(self, s: _FileShape) -> int:
        b = self.b
        values: dict[str, Value] = {"name": b.string(s.name), "rank": s.rank}
        if s.data is not None:
            values["data"] = b.byte_vector(s.data, _data_align(self.layout))
        return b.table(self.layout.SHAPE, values)

    def _operator(self, block: Block, fop: _FileOp) -> int:
        b = self.b
        ir = fop.ir
        where = f"operator {fop.index} ({fop.op})" if ir is not None else f"{fop.op} of a constant"

        def element_type() -> DType:
            first = ir.inputs[0] if ir is not None and ir.inputs else None
            tensor = find_tensor(self.graph, block, first) if first is not None else None
            if tensor is None:
                raise EncodeError("needs the first input tensor to know the element type")
            return tensor.dtype

        lay = self.layout
        try:
            attr_type, attr = encode_attributes(b, fop.op, fop.attributes, element_type, lay)
        except EncodeError as exc:
            raise EncodeError(f"{where}: {exc}") from None
        values: dict[str, Value] = {"op": lay.OP.values[fop.op], "attribute_type": attr_type}
        if attr:
            values["attribute"] = attr
        values["inputs"] = b.string_vector(fop.inputs)
        values["outputs"] = b.string_vector(fop.outputs)
        if fop.location is not None:
            values["location"] = b.table(lay.LOCATION, {"text": b.string(fop.location)})
        return b.table(lay.OPERATOR, values)


def _data_align(layout: L.Layout, field: str = "data") -> int:
    return int(layout.TENSOR.field(field).metadata.get("force_align") or 1)


class _BlockPlan:
    """What one block becomes in the file: its tensors, shapes and operators."""

    def __init__(self, graph: Graph, block: Block, layout: L.Layout) -> None:
        self.graph = graph
        self.block = block
        self.layout = layout
        self.tensors: list[_FileTensor] = []
        self.shapes: list[_FileShape] = []
        self._taken = set(block.tensors)
        self._variables: dict[str, str] = {}  # variable name -> its tensor in this block
        const_data = self._const_data()
        for key, t in block.tensors.items():
            if key != t.name:
                raise EncodeError(f"tensor {key!r} is named {t.name!r}; the key must be its name")
            _check_type(t, layout)
            data = const_data.get(key)
            if data is None:
                constant = _constant(t, f"tensor {key!r}")
                if constant is not None:
                    data = _data_bytes(constant, t, f"tensor {key!r}")
            if t.dtype is dtypes.SHAPE:
                self.shapes.append(_shape_entry(t, data[0] if data else None))
            else:
                self.tensors.append(_tensor_entry(t, data, layout))
        produced = {o for op in block.operators for o in op.outputs}
        self.ops = [
            _FileOp("CONST_SHAPE" if t.dtype is dtypes.SHAPE else "CONST", [], [name])
            for name, t in block.tensors.items()
            if t.data is not None and name not in produced and name not in block.inputs
        ]
        self.ops += [self._operator(i, op) for i, op in enumerate(block.operators)]

    def _const_data(self) -> dict[str, _Data]:
        """Output tensor name -> bytes of the ``values`` of the IR's CONST operators."""
        out: dict[str, _Data] = {}
        for i, op in enumerate(self.block.operators):
            if op.op not in CONST_OPS or "values" not in op.attributes:
                continue
            where = f"operator {i} ({op.op}) attribute 'values'"
            tensor = self.block.tensors.get(op.outputs[0]) if op.outputs else None
            if tensor is None:
                raise EncodeError(f"{where}: the output tensor is not in the block")
            data = _data_bytes(op.attributes["values"], tensor, where)
            constant = _constant(tensor, where)
            held = None if constant is None else _data_bytes(constant, tensor, where)
            for other in (held, out.get(tensor.name)):
                if other is not None and other != data:
                    raise EncodeError(f"{where}: differs from tensor {tensor.name!r}'s data")
            out[tensor.name] = data
        return out

    def _operator(self, index: int, op: Operator) -> _FileOp:
        where = f"operator {index} ({op.op})"
        if op.op not in self.layout.OP.values or op.op == "UNKNOWN":
            raise EncodeError(f"{where}: not an operator of {self.layout.title}'s schema")
        attrs = dict(op.attributes)
        fop = _FileOp(op.op, list(op.inputs), list(op.outputs), attrs, ir=op, index=index)
        if op.op in CONST_OPS:
            attrs.pop("values", None)  # the output's data
            fop.location = IR_CONST_LOCATION
        elif op.op in VARIABLE_OPS:
            try:
                self._variable(fop, attrs)
            except EncodeError as exc:
                raise EncodeError(f"{where}: {exc}") from None
        return fop

    # -- variables ------------------------------------------------------------------

    def _variable(self, fop: _FileOp, attrs: dict[str, object]) -> None:
        if "name" not in attrs:
            raise EncodeError(
                "needs its 'name' attribute: TOSA 1.0 files name a variable through a "
                "variable tensor"
            )
        name = attrs.pop("name")
        if not isinstance(name, str):
            raise EncodeError(f"attribute 'name': expected a string, got {name!r}")
        if fop.op == "VARIABLE":
            fop.outputs.insert(0, self._declare(name, attrs))
        elif fop.op == "VARIABLE_READ":
            fop.inputs.insert(0, self._reference(name, fop.outputs[:1]))
        else:
            fop.outputs.insert(0, self._reference(name, fop.inputs[:1]))

    def _declare(self, name: str, attrs: dict[str, object]) -> str:
        shape, type_value = _variable_type(
            attrs.pop("var_shape", None), attrs.pop("type", None), self.layout
        )
        init = attrs.pop("initial_value", None)
        data = None
        if init is not None:
            if shape is None or type_value is None:
                raise EncodeError(
                    "attribute 'initial_value': needs the 'type' and 'var_shape' attributes "
                    "to encode it"
                )
            dt = self.layout.IR_DTYPES[type_value]
            arr = encoding.coerce(init, dt, tuple(shape), "attribute 'initial_value'")
            data = encoding.encode(arr, dt)
        tensor = self._fresh(name)
        self.tensors.append(_FileTensor(tensor, shape, type_value, data, True, False, name))
        self._variables.setdefault(name, tensor)
        return tensor

    def _reference(self, name: str, data_tensor: list[str]) -> str:
        """The variable tensor naming ``name`` in this block, declared if need be with
        the declaration's shape and type (else those of the value read or written)."""
        known = self._variables.get(name)
        if known is not None:
            return known
        shape: list[int] | None = None
        type_value: int | None = None
        decl = next(
            (
                op
                for b in self.graph.blocks()
                for op in b.operators
                if op.op == "VARIABLE" and op.attributes.get("name") == name
            ),
            None,
        )
        try:
            if decl is not None:
                shape, type_value = _variable_type(
                    decl.attributes.get("var_shape"), decl.attributes.get("type"), self.layout
                )
        except EncodeError:
            pass  # the declaration reports its own problem where it is written
        t = self.block.tensors.get(data_tensor[0]) if data_tensor else None
        if t is not None and t.dtype is not dtypes.SHAPE:
            shape = shape if shape is not None else [_i32(d, "shape") for d in t.shape]
            if type_value is None:
                type_value = self.layout.dtype_value(t.dtype)
        tensor = self._fresh(name)
        self.tensors.append(_FileTensor(tensor, shape, type_value, None, True, False, name))
        self._variables[name] = tensor
        return tensor

    def _fresh(self, base: str) -> str:
        name, k = base, 0
        while name in self._taken:
            k += 1
            name = f"{base}_{k}"
        self._taken.add(name)
        return name


def _variable_type(
    var_shape: object, var_type: object, layout: L.Layout
) -> tuple[list[int] | None, int | None]:
    shape = None
    if var_shape is not None:
        try:
            shape = int_list(var_shape)
        except EncodeError as exc:
            raise EncodeError(f"attribute 'var_shape': {exc}") from None
    type_value = None
    if var_type is not None:
        type_value = layout.var_type_value(var_type) if isinstance(var_type, str) else None
        if type_value is None:
            names = ", ".join(n for v in layout.IR_DTYPES if (n := layout.var_type_name(v)))
            raise EncodeError(f"attribute 'type': expected one of {names}, got {var_type!r}")
    return shape, type_value


def _check_type(t: Tensor, layout: L.Layout) -> None:
    """EncodeError unless the revision's files hold tensors of ``t``'s element type."""
    if t.dtype is dtypes.SHAPE or t.dtype.name in layout.DTYPE_NAMES:
        return
    if is_block_scaled(t.dtype) and layout.composite_parts(t.dtype) is not None:
        return
    what = "block-scaled " if is_block_scaled(t.dtype) else ""
    raise EncodeError(f"tensor {t.name!r}: {layout.title} files hold no {what}{t.dtype} tensors")


def _tensor_entry(t: Tensor, data: _Data | None, layout: L.Layout) -> _FileTensor:
    where = f"tensor {t.name!r}"
    shape = [_i32(d, f"{where} shape") for d in t.shape]
    entry = _FileTensor(
        t.name,
        shape,
        layout.dtype_value(t.dtype),
        None if data is None else data[0],
        bool(t.variable),
        bool(t.is_unranked),
        t.variable_name,
    )
    parts = layout.composite_parts(t.dtype) if is_block_scaled(t.dtype) else None
    if parts is not None:
        entry.type, entry.scale_type, entry.block_shape = parts
        entry.scale_data = None if data is None else data[1]
    return entry


def _shape_entry(t: Tensor, data: bytes | None) -> _FileShape:
    where = f"shape value {t.name!r}"
    if len(t.shape) != 1:
        raise EncodeError(
            f"{where} has tensor shape {list(t.shape)}; TOSA 1.0 holds shape values as "
            "TosaShape lists, so only rank-1 shape tensors can be written"
        )
    if t.variable or t.is_unranked or t.variable_name:
        raise EncodeError(f"{where} is marked variable or unranked, which a TosaShape cannot say")
    try:
        rank = checked_int(t.shape[0], "uint32")
    except EncodeError as exc:
        raise EncodeError(f"{where} length: {exc}") from None
    return _FileShape(t.name, rank, data)


# A tensor's data as the file holds it: its data bytes and, for a block-scaled tensor,
# its scale_data bytes.
_Data = tuple[bytes, bytes | None]


def _constant(t: Tensor, where: str) -> TensorValue | None:
    try:
        return t.constant()
    except ValueError as exc:
        raise EncodeError(f"{where}: {exc}") from None


def _data_bytes(values: object, tensor: Tensor, where: str) -> _Data:
    dt = tensor.dtype
    if not is_block_scaled(dt):
        if isinstance(values, BlockScaled):
            raise EncodeError(f"{where}: block-scaled data for a {dt} tensor")
        arr = encoding.coerce(values, dt, tensor.shape, where)
        return encoding.encode(arr, dt), None
    if not isinstance(values, BlockScaled) or values.dtype is not dt:
        got = values.dtype if isinstance(values, BlockScaled) else "an array"
        raise EncodeError(f"{where}: a {dt} tensor's data is its values and scales, got {got}")
    vt, st = value_type(dt), scale_type(dt)
    v = encoding.coerce(values.values, vt, tensor.shape, f"{where} values")
    s = encoding.coerce(values.scales, st, values.scales.shape, f"{where} scales")
    return encoding.encode(v, vt), encoding.encode(s, st)


def _i32(value: object, what: str) -> int:
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise EncodeError(f"{what}: {value!r} is not an integer")
    if not -(1 << 31) <= int(value) < (1 << 31):
        raise EncodeError(f"{what}: {value!r} does not fit in int32")
    return int(value)

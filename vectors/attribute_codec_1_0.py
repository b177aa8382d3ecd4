"""Operator attribute tables of TOSA 1.0 and 1.1 files, as the schema's field types say.

In both revisions the tosa.xml attribute names are the schema's field names, so the
mapping is the identity and each value is stored as its field's type asks (:class:`Kind`
in :mod:`vectors.layout_1_0`): ``int32`` and ``bool`` scalars, ``[int32]`` lists, enum
value *names* (``nan_mode="IGNORE"``, ``acc_type="INT32"``, ``block_size="BLOCK_SIZE_32"``),
strings, and ``[ubyte]`` values in the first input's element type (CLAMP
``min_val``/``max_val``).

Presence is exact both ways: every attribute the IR holds is written (even when it equals
the schema default) and only the fields present in a file are read back.  The one
exception is an attribute that the revision's tosa.xml declares and its schema has no
field for (TOSA 1.1's CAST ``input_unsigned``: tosa-tools 2026.8's ``CastAttribute`` is
empty): an optional ``bool_t`` one is written as nothing when false, which its absence
means (tosa.xml: "defaults to false"), and refused when true; any other is refused.
"""

from __future__ import annotations

import numbers
import struct
from collections.abc import Callable, Mapping

import numpy as np

from conformance import dtypes
from conformance.dtypes import DType
from vectors import encoding
from vectors import layout_1_0 as L
from vectors.errors import DecodeError, EncodeError
from vectors.fbbuild import Builder, Value
from vectors.fbreader import Table as ReadTable
from vectors.fbs_schema import SCALAR_FORMATS, SCALAR_SIZES, Field

ElementType = Callable[[], DType]  # element type of the operator's first input, on demand

_READ_FORMATS = SCALAR_FORMATS


def read_scalar(table: ReadTable, f: Field) -> int:
    """An integer (or bool, enum) field's value, the schema default 0 when absent."""
    # The checked reader only exposes a few widths by name; its generic accessor takes any.
    return table._scalar(f.name, struct.Struct(_READ_FORMATS[f.storage]), 0)


def _int_range(storage: str) -> tuple[int, int]:
    bits = 8 * SCALAR_SIZES[storage]
    if storage.startswith("u") or storage == "ubyte":
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


# ---------------------------------------------------------------------------- writing


def encode_attributes(
    b: Builder,
    op: str,
    attrs: Mapping[str, object],
    element_type: ElementType,
    layout: L.Layout = L.LAYOUT_1_0,
) -> tuple[int, int]:
    """Write ``op``'s attribute table: (union type value, table offset)."""
    table = layout.attribute_table(op)
    if table is None:
        if attrs:
            raise EncodeError(f"{layout.title} has no attribute table for {op}")
        return 0, 0
    fields = layout.attribute_fields(op)
    known = {f.name for f in fields}
    for name in sorted(set(attrs) - known):
        problem = _without_field(layout, op, name, attrs[name])
        if problem is not None:
            have = ", ".join(sorted(known)) or "none"
            raise EncodeError(
                f"{layout.title}'s {table.name} has no field for attribute {name!r} "
                f"(its fields: {have}){problem}"
            )
    values: dict[str, Value] = {}
    for af in fields:  # slot order, so the bytes do not depend on the dict's order
        if af.name in attrs:
            try:
                values[af.name] = _encode(b, af, attrs[af.name], element_type, layout)
            except EncodeError as exc:
                raise EncodeError(f"attribute {af.name!r}: {exc}") from None
    return layout.ATTRIBUTE.members[table.name], b.table(table, values)


def _without_field(layout: L.Layout, op: str, name: str, value: object) -> str | None:
    """None when attribute ``name`` of ``op``, which the schema's table has no field
    for, may be left out of the file (an optional bool_t of the revision's tosa.xml,
    false: its absence means false); else the end of the refusal's message."""
    from conformance.spec import load_revision  # the revision's own tosa.xml

    op_spec = load_revision(layout.REVISION).operators.get(op)
    arg = None
    if op_spec is not None:
        arg = next((a for a in op_spec.attributes if a.name == name), None)
    if arg is None:
        return ""
    if arg.optional and arg.element_type == "bool_t" and arg.shape.kind == "scalar":
        if isinstance(value, bool | np.bool_) and not value:
            return None
        return (
            f"; {op}'s optional {name} can only be written false, by leaving it out "
            f"(the schema of tosa-tools {_release(layout)} cannot say {value!r})"
        )
    return f"; the schema of tosa-tools {_release(layout)} cannot say {op}'s {name}"


def _release(layout: L.Layout) -> str:
    release = layout.SERIALIZER_RELEASE or L.TOSA_TOOLS_RELEASE
    return ".".join(str(p) for p in release[:2])


def _encode(
    b: Builder, af: L.AttrField, value: object, element_type: ElementType, layout: L.Layout
) -> Value:
    f = af.field
    kind = af.kind
    if kind is L.Kind.INT:
        return checked_int(value, f.storage)
    if kind is L.Kind.BOOL:
        if not isinstance(value, bool | np.bool_):
            raise EncodeError(f"expected a bool, got {value!r}")
        return bool(value)
    if kind is L.Kind.INT_LIST:
        return b.scalar_vector(f.storage, int_list(value, f.storage))
    if kind is L.Kind.ENUM:
        enum = layout.enum_of(f)
        number = L.enum_value(enum, value) if isinstance(value, str) else None
        if number is None:
            names = ", ".join(L.ir_enum_names(enum))
            raise EncodeError(f"expected one of {names}, got {value!r}")
        return number
    if kind is L.Kind.STRING:
        return b.string(_text(value))
    if kind is L.Kind.TEXT_BYTES:
        return b.byte_vector(_text(value).encode("utf-8"), _alignment(f))
    return b.byte_vector(element_bytes(value, element_type()), _alignment(f))  # ELEMENT


def _alignment(f: Field) -> int:
    align = f.metadata.get("force_align")
    return int(align) if align else 1


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise EncodeError(f"expected a string, got {value!r}")
    return value


def checked_int(value: object, storage: str = "int32") -> int:
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise EncodeError(f"expected an integer, got {value!r}")
    lo, hi = _int_range(storage)
    if not lo <= int(value) <= hi:
        raise EncodeError(f"{int(value)} does not fit in {storage}")
    return int(value)


def int_list(value: object, storage: str = "int32") -> list[int]:
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            raise EncodeError(f"expected a 1-D sequence of integers, got shape {value.shape}")
        value = value.tolist()
    if not isinstance(value, list | tuple):
        raise EncodeError(f"expected a sequence of integers, got {value!r}")
    return [checked_int(v, storage) for v in value]


def element_bytes(value: object, dtype: DType) -> bytes:
    """A scalar's bytes in ``dtype`` (the tensor data encoding), if it is exactly one."""
    if dtype is dtypes.SHAPE:
        raise EncodeError("a shape value has no element bytes")
    if dtype.is_float:
        if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
            raise EncodeError(f"expected a {dtype} number, got {value!r}")
        arr = np.asarray(float(value))
    elif dtype is dtypes.BOOL:
        # Stored as 0/1 and read back as bool, so only values that survive that are allowed.
        if not isinstance(value, bool | np.bool_ | numbers.Integral) or value not in (0, 1):
            raise EncodeError(f"expected a bool, got {value!r}")
        arr = np.asarray(bool(value))
    elif dtype.kind != "int":
        raise EncodeError(f"an attribute value in {dtype} ({dtype.kind}) cannot be written")
    else:
        if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
            raise EncodeError(f"expected a {dtype} integer, got {value!r}")
        arr = np.asarray(int(value))
        lo, hi = dtype.int_range
        if not lo <= int(value) <= hi:
            raise EncodeError(f"{int(value)} is not a {dtype} value")
    return encoding.encode(encoding.coerce(arr, dtype, (), "value"), dtype)


# ---------------------------------------------------------------------------- reading


_SCALAR_KINDS = frozenset({L.Kind.INT, L.Kind.BOOL})


def decode_attributes(
    op: str, operator: ReadTable, element_type: ElementType, layout: L.Layout = L.LAYOUT_1_0
) -> dict[str, object]:
    """The IR attributes of ``op`` from its TosaOperator table."""
    union_type = operator.u8("attribute_type")
    table = layout.attribute_table(op)
    if union_type == 0:
        # Tolerated: the operator then holds no attributes.
        return {}
    found = layout.ATTRIBUTE.names.get(union_type, f"unknown attribute type {union_type}")
    if table is None or layout.ATTRIBUTE.members[table.name] != union_type:
        expected = "no attributes" if table is None else table.name
        raise DecodeError(f"{op} operator carries {found}, expected {expected}")
    attr = operator.table("attribute", table.layout)
    if attr is None:
        raise DecodeError(f"{op} operator declares {found} but has no attribute table")
    out: dict[str, object] = {}
    for af in layout.attribute_fields(op):
        # An integer or bool at its schema default (0, false) is absent from the
        # table when the writer does not force defaults, as Arm's serializer does not:
        # absent means that default there, never a missing attribute.
        if not attr.present(af.name) and af.kind not in _SCALAR_KINDS:
            continue
        try:
            out[af.name] = _decode(attr, af, element_type, layout)
        except DecodeError as exc:
            raise DecodeError(f"{op} attribute {af.name!r}: {exc}") from None
    return out


def _decode(
    attr: ReadTable, af: L.AttrField, element_type: ElementType, layout: L.Layout
) -> object:
    f = af.field
    kind = af.kind
    if kind is L.Kind.INT:
        return read_scalar(attr, f)
    if kind is L.Kind.BOOL:
        return bool(read_scalar(attr, f))
    if kind is L.Kind.INT_LIST:
        if f.storage != "int32":
            raise DecodeError(f"[{f.storage}] lists are not read")
        return attr.i32s(f.name)
    if kind is L.Kind.ENUM:
        number = read_scalar(attr, f)
        name = L.enum_name(layout.enum_of(f), number)
        if name is None:
            names = ", ".join(L.ir_enum_names(layout.enum_of(f)))
            raise DecodeError(f"{f.type.base} value {number} is not one of {names}")
        return name
    if kind is L.Kind.STRING:
        return attr.string(f.name)
    raw = attr.raw_bytes(f.name) or b""
    if kind is L.Kind.TEXT_BYTES:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise DecodeError("bytes are not valid UTF-8") from None
    dtype = element_type()  # ELEMENT
    if dtype is dtypes.SHAPE:
        raise DecodeError("the first input is a shape value, which has no element bytes")
    value = encoding.decode(raw, dtype, ()).item()
    if dtype.is_float:
        return float(value)
    return bool(value) if dtype is dtypes.BOOL else int(value)

"""TOSA 1.0's flatbuffer layout, derived from ``conformance/tosa_spec/1.0/tosa.fbs``.

Nothing here lists slots or enum numbers: the container tables (``TosaGraph`` ...
``TosaShape``, ``Version``), the enumerations (``Op``, ``DType``, ``ResizeMode``,
``NanPropagationMode``, ``RoundingMode`` ...) and every attribute table come from the
parsed schema (:mod:`vectors.fbs_schema`).  What is spelled out is what the schema
cannot say:

* how an IR element type is named in ``DType`` (the names, never the numbers);
* the two enumerations whose tosa.xml value names differ from the schema's
  (``resize_mode_t`` NEAREST_NEIGHBOR is ``ResizeMode.NEAREST``; ``var_t`` BOOLEAN is
  ``DType.BOOL``);
* which ``[ubyte]`` attribute field holds a string (CUSTOM ``implementation_attrs``)
  rather than a value in the operator's element type (CLAMP ``min_val``/``max_val``).

An operator's attribute table is the ``Attribute`` union member whose type value equals
the operator's ``Op`` value (the schema keeps the two lists in the same order).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum as PyEnum

from conformance import dtypes, revisions
from conformance.dtypes import DType
from vectors import encoding, fbs_schema
from vectors.fbs_schema import Field, Table

REVISION = "1.0"
SCHEMA = fbs_schema.load(revisions.revision(REVISION).fbs_path)

FILE_IDENTIFIER = (SCHEMA.file_identifier or "").encode("ascii")

OP = SCHEMA.enum("Op")
DTYPE = SCHEMA.enum("DType")
ATTRIBUTE = SCHEMA.union("Attribute")
COMPATIBILITY_FEATURE = SCHEMA.enum("CompatibilityFeature")

GRAPH = SCHEMA.table("TosaGraph")
REGION = SCHEMA.table("TosaRegion")
BLOCK = SCHEMA.table("TosaBasicBlock")
OPERATOR = SCHEMA.table("TosaOperator")
TENSOR = SCHEMA.table("TosaTensor")
SHAPE = SCHEMA.table("TosaShape")
VERSION = SCHEMA.table("Version")
LOCATION = SCHEMA.table("OpLocation")
COMPATIBILITY = SCHEMA.table("SerializationCompatibility")

# IR element type -> DType name.  ``shape`` values are TosaShape entries, not tensors.
DTYPE_NAMES: dict[str, str] = {
    ir: name for ir, name in encoding.SCHEMA_NAMES.items() if ir != dtypes.SHAPE.name
}
IR_DTYPES: dict[int, DType] = {
    DTYPE.values[schema]: dtypes.BY_NAME[ir] for ir, schema in DTYPE_NAMES.items()
}

# tosa.xml value name -> schema value name, for the enums where they differ.
ENUM_RENAMES: dict[str, dict[str, str]] = {"ResizeMode": {"NEAREST_NEIGHBOR": "NEAREST"}}
# VARIABLE's ``type`` (a var_t name) is the variable tensor's DType.
VAR_TYPE_RENAMES: dict[str, str] = {"BOOLEAN": "BOOL"}

# [ubyte] attribute fields holding UTF-8 text; every other [ubyte] attribute field holds a
# value in the element type of the operator's first input.
TEXT_BYTES: frozenset[tuple[str, str]] = frozenset({("CustomAttribute", "implementation_attrs")})

# A TOSA 1.0 file says 1.0.x in its Version table; this is the vendored spec's release.
VERSION_1_0 = (1, 0, 2)


class Kind(PyEnum):
    """How an attribute value is stored, as the field's schema type says."""

    INT = "integer scalar"
    BOOL = "bool"
    INT_LIST = "integer vector"
    ENUM = "enum value name"
    STRING = "string"
    TEXT_BYTES = "string as UTF-8 [ubyte]"
    ELEMENT = "value in the first input's element type, as raw [ubyte]"


@dataclass(frozen=True)
class AttrField:
    field: Field
    kind: Kind

    @property
    def name(self) -> str:
        return self.field.name


def field_kind(table: Table, f: Field) -> Kind | None:
    """The codec for an attribute field, or None for a type no attribute uses."""
    if f.kind == "scalar":
        if f.storage == "bool":
            return Kind.BOOL
        return None if f.storage.startswith(("float", "double")) else Kind.INT
    if f.kind == "enum":
        return Kind.ENUM
    if f.kind == "string":
        return Kind.STRING
    if f.kind == "vector" and f.type.base == "ubyte":
        return Kind.TEXT_BYTES if (table.name, f.name) in TEXT_BYTES else Kind.ELEMENT
    if f.kind == "vector" and f.type.base in fbs_schema.SCALAR_SIZES and f.storage != "bool":
        return Kind.INT_LIST
    return None


def attribute_table(op: str) -> Table | None:
    """The attribute table of operator ``op`` (an ``Op`` name), or None."""
    value = OP.values.get(op)
    if value is None:
        return None
    member = ATTRIBUTE.names.get(value)
    return None if member is None else SCHEMA.table(member)


def attribute_fields(op: str) -> tuple[AttrField, ...]:
    table = attribute_table(op)
    if table is None:
        return ()
    out = []
    for f in table.fields:
        kind = field_kind(table, f)
        if kind is None:
            raise TypeError(f"{table.name}.{f.name}: type {f.type} has no attribute codec")
        out.append(AttrField(f, kind))
    return tuple(out)


def enum_of(f: Field) -> fbs_schema.Enum:
    return SCHEMA.enum(f.type.base)


def enum_value(enum: fbs_schema.Enum, name: str) -> int | None:
    """The number of an IR (tosa.xml) value name in a schema enum; UNKNOWN is no value."""
    schema_name = ENUM_RENAMES.get(enum.name, {}).get(name, name)
    if schema_name == "UNKNOWN":
        return None
    return enum.values.get(schema_name)


def enum_name(enum: fbs_schema.Enum, value: int) -> str | None:
    """The IR (tosa.xml) value name of a schema enum number, or None."""
    schema_name = enum.names.get(value)
    if schema_name is None or schema_name == "UNKNOWN":
        return None
    back = {v: k for k, v in ENUM_RENAMES.get(enum.name, {}).items()}
    return back.get(schema_name, schema_name)


def ir_enum_names(enum: fbs_schema.Enum) -> list[str]:
    """Every IR value name the enum accepts (for error messages)."""
    return [n for v in enum.values.values() if (n := enum_name(enum, v)) is not None]


def var_type_value(name: str) -> int | None:
    """The DType number of a var_t name (BOOLEAN, INT8 ...), or None."""
    value = DTYPE.values.get(VAR_TYPE_RENAMES.get(name, name))
    return value if value in IR_DTYPES else None


def var_type_name(value: int) -> str | None:
    """The var_t name of a DType number, or None."""
    if value not in IR_DTYPES:
        return None
    back = {v: k for k, v in VAR_TYPE_RENAMES.items()}
    name = DTYPE.names[value]
    return back.get(name, name)

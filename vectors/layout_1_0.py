"""The flatbuffer layouts of TOSA 1.0 and the TOSA 1.1 draft, derived from their schemas.

Both revisions use the schema of Arm's ``tosa-tools`` 2026.8 serializer, each from its
own folder (``conformance/tosa_spec/1.0/tosa.fbs``, ``conformance/tosa_spec/1.1-draft/
tosa.fbs``; the two files are the same today, and the 1.1 one may move with the draft).
A :class:`Layout` is one revision's format.  Nothing here lists slots or enum numbers:
the container tables (``TosaGraph`` ... ``TosaShape``, ``Version``), the enumerations
(``Op``, ``DType``, ``ResizeMode``, ``NanPropagationMode``, ``BlockSize`` ...) and every
attribute table come from the parsed schema (:mod:`vectors.fbs_schema`).  What is
spelled out is what the schema cannot say:

* which IR element types a revision's files hold, and how each is named in ``DType``
  (the names, never the numbers; :data:`vectors.encoding.SCHEMA_NAMES` and
  :data:`~vectors.encoding.SCHEMA_NAMES_1_1`);
* the two enumerations whose tosa.xml value names differ from the schema's
  (``resize_mode_t`` NEAREST_NEIGHBOR is ``ResizeMode.NEAREST``; ``var_t`` BOOLEAN is
  ``DType.BOOL``);
* which ``[ubyte]`` attribute field holds a string (CUSTOM ``implementation_attrs``)
  rather than a value in the operator's element type (CLAMP ``min_val``/``max_val``);
* the serialization-library release whose schema is vendored, which a 1.1 file names in
  its ``software_version`` and ``compatibility`` tables, as that serializer writes them.

An operator's attribute table is the ``Attribute`` union member whose type value equals
the operator's ``Op`` value (the schema keeps the two lists in the same order).

The module-level names (``SCHEMA``, ``OP``, ``GRAPH``, :func:`attribute_table` ...) are
TOSA 1.0's layout, :data:`LAYOUT_1_0`; :func:`layout_for` gives any revision's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum as PyEnum

from conformance import dtypes, revisions
from conformance.dtypes import DType
from vectors import encoding, fbs_schema
from vectors.fbs_schema import Field, Table

# tosa.xml value name -> schema value name, for the enums where they differ.
ENUM_RENAMES: dict[str, dict[str, str]] = {"ResizeMode": {"NEAREST_NEIGHBOR": "NEAREST"}}
# VARIABLE's ``type`` (a var_t name) is the variable tensor's DType.
VAR_TYPE_RENAMES: dict[str, str] = {"BOOLEAN": "BOOL"}

# [ubyte] attribute fields holding UTF-8 text; every other [ubyte] attribute field holds a
# value in the element type of the operator's first input.
TEXT_BYTES: frozenset[tuple[str, str]] = frozenset({("CustomAttribute", "implementation_attrs")})

# The tosa-tools release whose serializer schema (bin/tosa.fbs) conformance/tosa_spec/
# 1.1-draft/tosa.fbs is: its serializer writes this version, as (major, minor, micro)
# and an empty modifier, into every file's software_version and, as the oldest reader
# that can read the file, into compatibility.min_reader_version.
TOSA_TOOLS_RELEASE = (2026, 8, 0)


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


class Layout:
    """One revision's flatbuffer format: its schema's tables and enumerations, the IR
    element types its files hold, the Version they say and the serializer tables they
    carry.  Attribute names in capitals are the schema's objects (``L.OP``, ``L.GRAPH``),
    as the module-level names of TOSA 1.0's layout are."""

    def __init__(
        self,
        revision: str,
        schema_names: Mapping[str, str],
        *,
        serializer_release: tuple[int, int, int] | None,
    ) -> None:
        rev = revisions.revision(revision)
        self.REVISION = rev.name
        self.SCHEMA = fbs_schema.load(rev.fbs_path)
        # The Version a file of the revision says (major, minor): its target version.
        major, minor = (int(p) for p in rev.target_version.split("."))
        self.VERSION_MAJOR_MINOR = (major, minor)
        # tosa-tools' release written as software_version / min_reader_version; None
        # writes neither table (TOSA 1.0 files, byte for byte as they always were).
        self.SERIALIZER_RELEASE = serializer_release
        s = self.SCHEMA
        self.FILE_IDENTIFIER = (s.file_identifier or "").encode("ascii")
        self.OP = s.enum("Op")
        self.DTYPE = s.enum("DType")
        self.ATTRIBUTE = s.union("Attribute")
        self.COMPATIBILITY_FEATURE = s.enum("CompatibilityFeature")
        self.GRAPH = s.table("TosaGraph")
        self.REGION = s.table("TosaRegion")
        self.BLOCK = s.table("TosaBasicBlock")
        self.OPERATOR = s.table("TosaOperator")
        self.TENSOR = s.table("TosaTensor")
        self.SHAPE = s.table("TosaShape")
        self.VERSION = s.table("Version")
        self.LOCATION = s.table("OpLocation")
        self.COMPATIBILITY = s.table("SerializationCompatibility")
        self.SOFTWARE_VERSION = s.table("SoftwareVersion")
        # IR element type -> DType name.  ``shape`` values are TosaShape entries, not
        # tensors; a name the schema lacks is a type the revision's files cannot hold.
        self.DTYPE_NAMES: dict[str, str] = {
            ir: name
            for ir, name in schema_names.items()
            if ir != dtypes.SHAPE.name and name in self.DTYPE.values
        }
        self.IR_DTYPES: dict[int, DType] = {
            self.DTYPE.values[name]: dtypes.BY_NAME[ir] for ir, name in self.DTYPE_NAMES.items()
        }
        # Block-scaled composites (TOSA 1.1 bs32_*): one TosaTensor whose ``type`` is the
        # value type, ``scale_type`` the scale type and ``block_shape`` the BlockShape
        # named by the block size (BLOCK_SHAPE_32); the scales in ``scale_data``.
        # Composites whose parts the revision's files hold, by (type, scale_type,
        # block_shape) numbers.
        self.BLOCK_SHAPE = s.enum("BlockShape")
        self.COMPOSITES: dict[tuple[int, int, int], DType] = {}
        for dt in dtypes.BLOCK_SCALED:
            parts = self._composite_parts(dt)
            if parts is not None:
                self.COMPOSITES[parts] = dt

    def __repr__(self) -> str:
        return f"Layout({self.REVISION!r})"

    @property
    def title(self) -> str:
        """How messages name the format: ``TOSA 1.0``, ``TOSA 1.1-draft``."""
        return f"TOSA {self.REVISION}"

    # -- attribute tables -------------------------------------------------------------

    def attribute_table(self, op: str) -> Table | None:
        """The attribute table of operator ``op`` (an ``Op`` name), or None."""
        value = self.OP.values.get(op)
        if value is None:
            return None
        member = self.ATTRIBUTE.names.get(value)
        return None if member is None else self.SCHEMA.table(member)

    def attribute_fields(self, op: str) -> tuple[AttrField, ...]:
        table = self.attribute_table(op)
        if table is None:
            return ()
        out = []
        for f in table.fields:
            kind = field_kind(table, f)
            if kind is None:
                raise TypeError(f"{table.name}.{f.name}: type {f.type} has no attribute codec")
            out.append(AttrField(f, kind))
        return tuple(out)

    # -- enumerations -----------------------------------------------------------------

    def enum_of(self, f: Field) -> fbs_schema.Enum:
        return self.SCHEMA.enum(f.type.base)

    def var_type_value(self, name: str) -> int | None:
        """The DType number of a var_t name (BOOLEAN, INT8 ...), or None."""
        value = self.DTYPE.values.get(VAR_TYPE_RENAMES.get(name, name))
        return value if value in self.IR_DTYPES else None

    def var_type_name(self, value: int) -> str | None:
        """The var_t name of a DType number, or None."""
        if value not in self.IR_DTYPES:
            return None
        back = {v: k for k, v in VAR_TYPE_RENAMES.items()}
        name = self.DTYPE.names[value]
        return back.get(name, name)

    def dtype_value(self, dt: DType) -> int | None:
        """The DType number of an IR element type, or None when the files hold none."""
        name = self.DTYPE_NAMES.get(dt.name)
        return None if name is None else self.DTYPE.values[name]

    def _composite_parts(self, dt: DType) -> tuple[int, int, int] | None:
        value = self.dtype_value(dtypes.dtype(dt.block_value))
        scale = self.dtype_value(dtypes.dtype(dt.block_scale))
        shape = self.BLOCK_SHAPE.values.get(f"BLOCK_SHAPE_{dt.block_size}")
        if value is None or scale is None or shape is None:
            return None
        return value, scale, shape

    def composite_parts(self, dt: DType) -> tuple[int, int, int] | None:
        """A block-scaled type's (type, scale_type, block_shape) numbers in a TosaTensor,
        or None when the revision's files hold no such tensor."""
        parts = self._composite_parts(dt)
        return parts if parts is not None and parts in self.COMPOSITES else None


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


LAYOUT_1_0 = Layout(revisions.TOSA_1_0.name, encoding.SCHEMA_NAMES, serializer_release=None)
LAYOUT_1_1 = Layout(
    revisions.TOSA_1_1_DRAFT.name, encoding.SCHEMA_NAMES_1_1, serializer_release=TOSA_TOOLS_RELEASE
)
LAYOUTS: dict[str, Layout] = {lay.REVISION: lay for lay in (LAYOUT_1_0, LAYOUT_1_1)}


def layout_for(revision: str) -> Layout | None:
    """The schema-derived layout of a revision, or None (the 2024 draft's format is the
    hand layout of :mod:`vectors.layout`)."""
    return LAYOUTS.get(revision)


# TOSA 1.0's layout under the module's names (what the 1.0 code and tests read).
REVISION = LAYOUT_1_0.REVISION
SCHEMA = LAYOUT_1_0.SCHEMA
FILE_IDENTIFIER = LAYOUT_1_0.FILE_IDENTIFIER
OP = LAYOUT_1_0.OP
DTYPE = LAYOUT_1_0.DTYPE
ATTRIBUTE = LAYOUT_1_0.ATTRIBUTE
COMPATIBILITY_FEATURE = LAYOUT_1_0.COMPATIBILITY_FEATURE
GRAPH = LAYOUT_1_0.GRAPH
REGION = LAYOUT_1_0.REGION
BLOCK = LAYOUT_1_0.BLOCK
OPERATOR = LAYOUT_1_0.OPERATOR
TENSOR = LAYOUT_1_0.TENSOR
SHAPE = LAYOUT_1_0.SHAPE
VERSION = LAYOUT_1_0.VERSION
LOCATION = LAYOUT_1_0.LOCATION
COMPATIBILITY = LAYOUT_1_0.COMPATIBILITY
DTYPE_NAMES = LAYOUT_1_0.DTYPE_NAMES
IR_DTYPES = LAYOUT_1_0.IR_DTYPES
attribute_table = LAYOUT_1_0.attribute_table
attribute_fields = LAYOUT_1_0.attribute_fields
enum_of = LAYOUT_1_0.enum_of
var_type_value = LAYOUT_1_0.var_type_value
var_type_name = LAYOUT_1_0.var_type_name

# A TOSA 1.0 file says 1.0.x in its Version table; this is the vendored spec's release.
VERSION_1_0 = (1, 0, 2)

"""A small parser of FlatBuffers schema (``.fbs``) text.

It reads the subset of the IDL that TOSA's schemas use: ``namespace``, ``include``,
``attribute``, ``file_identifier``, ``file_extension``, ``root_type``, enums (with an
underlying integer type and optional explicit values), unions, and tables whose fields
have scalar, enum, string, table, union or vector types, defaults and ``(...)`` metadata.
Structs, ``rpc_service`` and explicit field ``id``\\ s are refused with a
:class:`SchemaError`, so nothing is silently misread.

The result gives what a reader or writer needs without generated code: every table's
fields in slot order (a union field ``x`` takes two slots, ``x_type`` then ``x``, as flatc
lays it out), every enum's values, every union's members with their type values.
"""

from __future__ import annotations

import functools
import re
import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from vectors.layout import SchemaTable

__all__ = [
    "SCALAR_SIZES",
    "Enum",
    "Field",
    "FieldKind",
    "Schema",
    "SchemaError",
    "Table",
    "TypeRef",
    "Union",
    "load",
    "parse",
]


class SchemaError(ValueError):
    """The text is not a schema this parser understands; the message names the line."""


# Scalar type names of the IDL (with their aliases) -> size in bytes.
# The schema's scalar types, as little-endian struct formats; their sizes follow.
SCALAR_FORMATS: dict[str, str] = {
    "bool": "<B",
    "byte": "<b",
    "ubyte": "<B",
    "int8": "<b",
    "uint8": "<B",
    "short": "<h",
    "ushort": "<H",
    "int16": "<h",
    "uint16": "<H",
    "int": "<i",
    "uint": "<I",
    "int32": "<i",
    "uint32": "<I",
    "float": "<f",
    "float32": "<f",
    "long": "<q",
    "ulong": "<Q",
    "int64": "<q",
    "uint64": "<Q",
    "double": "<d",
    "float64": "<d",
}
SCALAR_SIZES: dict[str, int] = {k: struct.calcsize(v) for k, v in SCALAR_FORMATS.items()}
_INTEGER_SCALARS = frozenset(SCALAR_SIZES) - {"bool", "float", "float32", "double", "float64"}
_UNSIGNED = frozenset({"ubyte", "uint8", "ushort", "uint16", "uint", "uint32", "ulong", "uint64"})

FieldKind = Literal["scalar", "enum", "string", "table", "union_type", "union", "vector"]


@dataclass(frozen=True)
class TypeRef:
    """A field's declared type: ``base`` is a scalar name, ``string`` or a declared type
    name; ``vector`` for ``[base]``."""

    base: str
    vector: bool = False

    def __str__(self) -> str:
        return f"[{self.base}]" if self.vector else self.base


@dataclass(frozen=True)
class Field:
    name: str
    type: TypeRef
    kind: FieldKind
    slot: int
    default: str | None = None  # the default as written (``-1``, ``true``, an enum name)
    metadata: Mapping[str, str | None] = field(default_factory=dict)
    # For enum and union_type fields (and vectors of enums): the scalar they are stored as.
    storage: str = ""

    @property
    def is_offset(self) -> bool:
        """Whether the field's inline value is an offset to another object."""
        return self.kind in ("string", "table", "union", "vector")


@dataclass(frozen=True)
class Table:
    name: str
    fields: tuple[Field, ...]  # in slot order

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"schema table {self.name} has no field {name!r}")

    def has(self, name: str) -> bool:
        return any(f.name == name for f in self.fields)

    @property
    def layout(self) -> SchemaTable:
        """The slot layout the bounds-checked reader (:mod:`vectors.fbreader`) uses."""
        return SchemaTable(self.name, tuple(f.name for f in self.fields))


@dataclass(frozen=True)
class Enum:
    name: str
    storage: str  # the underlying scalar type
    values: Mapping[str, int]  # in declaration order

    @property
    def names(self) -> dict[int, str]:
        return {v: k for k, v in self.values.items()}


@dataclass(frozen=True)
class Union:
    name: str
    members: Mapping[str, int]  # member table name -> type value (NONE = 0 is implicit)

    @property
    def names(self) -> dict[int, str]:
        return {v: k for k, v in self.members.items()}


@dataclass(frozen=True)
class Schema:
    namespace: str
    file_identifier: str | None
    file_extension: str | None
    root_type: str | None
    enums: Mapping[str, Enum]
    unions: Mapping[str, Union]
    tables: Mapping[str, Table]

    def table(self, name: str) -> Table:
        try:
            return self.tables[name]
        except KeyError:
            raise KeyError(f"the schema has no table {name!r}") from None

    def enum(self, name: str) -> Enum:
        try:
            return self.enums[name]
        except KeyError:
            raise KeyError(f"the schema has no enum {name!r}") from None

    def union(self, name: str) -> Union:
        try:
            return self.unions[name]
        except KeyError:
            raise KeyError(f"the schema has no union {name!r}") from None


# ---------------------------------------------------------------------------- lexing

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<number>[-+]?(?:0[xX][0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?))
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
  | (?P<punct>[{}()\[\]:;,=])
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    line: int


def _tokens(text: str) -> Iterator[_Token]:
    pos, line = 0, 1
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise SchemaError(f"line {line}: unexpected character {text[pos]!r}")
        kind = m.lastgroup or ""
        if kind not in ("space", "comment"):
            yield _Token(kind, m.group(), line)
        line += m.group().count("\n")
        pos = m.end()


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = list(_tokens(text))
        self.i = 0

    def _peek(self) -> _Token | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def _line(self) -> int:
        tok = self._peek()
        return tok.line if tok else (self.toks[-1].line if self.toks else 1)

    def fail(self, message: str) -> SchemaError:
        return SchemaError(f"line {self._line()}: {message}")

    def next(self, what: str) -> _Token:
        tok = self._peek()
        if tok is None:
            raise self.fail(f"expected {what}, found the end of the text")
        self.i += 1
        return tok

    def expect(self, text: str) -> None:
        tok = self.next(repr(text))
        if tok.text != text:
            self.i -= 1
            raise self.fail(f"expected {text!r}, found {tok.text!r}")

    def accept(self, text: str) -> bool:
        tok = self._peek()
        if tok is not None and tok.text == text and tok.kind in ("punct", "ident"):
            self.i += 1
            return True
        return False

    def ident(self, what: str) -> str:
        tok = self.next(what)
        if tok.kind != "ident":
            self.i -= 1
            raise self.fail(f"expected {what}, found {tok.text!r}")
        return tok.text

    def string(self, what: str) -> str:
        tok = self.next(what)
        if tok.kind != "string":
            self.i -= 1
            raise self.fail(f"expected {what} (a quoted string), found {tok.text!r}")
        return tok.text[1:-1]

    def value(self, what: str) -> str:
        tok = self.next(what)
        if tok.kind not in ("number", "ident", "string"):
            self.i -= 1
            raise self.fail(f"expected {what}, found {tok.text!r}")
        return tok.text

    def metadata(self) -> dict[str, str | None]:
        """``(key, key: value, ...)``, or nothing."""
        out: dict[str, str | None] = {}
        if not self.accept("("):
            return out
        while not self.accept(")"):
            key = self.ident("a metadata name")
            out[key] = self.value(f"the value of {key!r}") if self.accept(":") else None
            if not self.accept(","):
                self.expect(")")
                break
        return out

    def at_end(self) -> bool:
        return self._peek() is None


@dataclass
class _RawField:
    name: str
    type: TypeRef
    default: str | None
    metadata: dict[str, str | None]
    line: int


def parse(text: str) -> Schema:
    """The schema the text declares; :class:`SchemaError` naming the line otherwise."""
    p = _Parser(text)
    namespace = ""
    ident: str | None = None
    ext: str | None = None
    root: str | None = None
    enums: dict[str, Enum] = {}
    unions: dict[str, Union] = {}
    raw_tables: dict[str, list[_RawField]] = {}
    declared: set[str] = set()

    def declare(name: str) -> None:
        if name in declared:
            raise p.fail(f"{name!r} is declared twice")
        declared.add(name)

    while not p.at_end():
        word = p.ident("a declaration")
        if word == "namespace":
            namespace = p.ident("a namespace name")
            p.expect(";")
        elif word in ("include", "attribute"):
            p.string(f"the {word} name")
            p.expect(";")
        elif word == "file_identifier":
            ident = p.string("the file identifier")
            if len(ident.encode()) != 4:
                raise p.fail(f"file_identifier {ident!r} is not 4 bytes")
            p.expect(";")
        elif word == "file_extension":
            ext = p.string("the file extension")
            p.expect(";")
        elif word == "root_type":
            root = p.ident("the root type")
            p.expect(";")
        elif word == "enum":
            name = p.ident("an enum name")
            declare(name)
            enums[name] = _enum(p, name)
        elif word == "union":
            name = p.ident("a union name")
            declare(name)
            unions[name] = _union(p, name)
        elif word == "table":
            name = p.ident("a table name")
            declare(name)
            raw_tables[name] = _table_fields(p, name)
        elif word in ("struct", "rpc_service"):
            raise p.fail(f"{word} declarations are not supported by this parser")
        else:
            p.i -= 1
            raise p.fail(f"unknown declaration {word!r}")

    tables = {
        name: _resolve(name, fields, enums, unions, raw_tables)
        for name, fields in raw_tables.items()
    }
    for u in unions.values():
        for member in u.members:
            if member not in tables:
                raise SchemaError(f"union {u.name} member {member!r} is not a declared table")
    if root is not None and root not in tables:
        raise SchemaError(f"root_type {root!r} is not a declared table")
    return Schema(namespace, ident, ext, root, enums, unions, tables)


def _int(p: _Parser, text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise p.fail(f"{text!r} is not an integer") from None


def _enum(p: _Parser, name: str) -> Enum:
    p.expect(":")
    storage = p.ident(f"the underlying type of enum {name}")
    if storage not in _INTEGER_SCALARS:
        raise p.fail(f"enum {name}: underlying type {storage!r} is not an integer type")
    p.metadata()
    p.expect("{")
    values: dict[str, int] = {}
    nxt = 0
    while not p.accept("}"):
        key = p.ident(f"a value name of enum {name}")
        value = _int(p, p.value(f"the value of {name}.{key}")) if p.accept("=") else nxt
        if key in values:
            raise p.fail(f"enum {name} declares {key!r} twice")
        if values and value <= max(values.values()):
            raise p.fail(f"enum {name}: {key} = {value} does not increase")
        _check_range(p, f"enum {name}: {key}", value, storage)
        values[key] = value
        nxt = value + 1
        if not p.accept(","):
            p.expect("}")
            break
    return Enum(name, storage, values)


def _check_range(p: _Parser, what: str, value: int, storage: str) -> None:
    bits = 8 * SCALAR_SIZES[storage]
    if storage in _UNSIGNED:
        lo, hi = 0, (1 << bits) - 1
    else:
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if not lo <= value <= hi:
        raise p.fail(f"{what} = {value} does not fit {storage}")


def _union(p: _Parser, name: str) -> Union:
    p.metadata()
    p.expect("{")
    members: dict[str, int] = {}
    nxt = 1  # NONE = 0 is implicit
    while not p.accept("}"):
        member = p.ident(f"a member of union {name}")
        if p.accept(":"):  # ``Alias: Table``; the type value is the alias's, the table the type
            member = p.ident(f"the table of union {name} member {member}")
        value = _int(p, p.value(f"the value of {name}.{member}")) if p.accept("=") else nxt
        if member in members:
            raise p.fail(f"union {name} lists {member!r} twice")
        if value < 1 or value > 255 or value in members.values():
            raise p.fail(f"union {name}: {member} = {value} is not a free value in 1..255")
        members[member] = value
        nxt = value + 1
        if not p.accept(","):
            p.expect("}")
            break
    return Union(name, members)


def _table_fields(p: _Parser, name: str) -> list[_RawField]:
    p.metadata()
    p.expect("{")
    fields: list[_RawField] = []
    while not p.accept("}"):
        line = p._line()
        fname = p.ident(f"a field name of table {name}")
        p.expect(":")
        if p.accept("["):
            ftype = TypeRef(p.ident(f"the element type of {name}.{fname}"), vector=True)
            p.expect("]")
        else:
            ftype = TypeRef(p.ident(f"the type of {name}.{fname}"))
        default = p.value(f"the default of {name}.{fname}") if p.accept("=") else None
        meta = p.metadata()
        if "id" in meta:
            raise p.fail(f"{name}.{fname}: explicit field ids are not supported by this parser")
        p.expect(";")
        if any(f.name == fname for f in fields):
            raise p.fail(f"table {name} declares field {fname!r} twice")
        fields.append(_RawField(fname, ftype, default, meta, line))
    return fields


def _resolve(
    table: str,
    raw: list[_RawField],
    enums: Mapping[str, Enum],
    unions: Mapping[str, Union],
    tables: Mapping[str, list[_RawField]],
) -> Table:
    out: list[Field] = []
    for f in raw:
        where = f"line {f.line}: {table}.{f.name}"
        base = f.type.base.rsplit(".", 1)[-1]  # a namespace-qualified name
        ftype = TypeRef(base, f.type.vector)
        if base in unions:
            if f.type.vector:
                raise SchemaError(f"{where}: vectors of unions are not supported")
            if f.default is not None:
                raise SchemaError(f"{where}: a union field takes no default")
            slot = len(out)
            out.append(Field(f"{f.name}_type", ftype, "union_type", slot, None, {}, "ubyte"))
            out.append(Field(f.name, ftype, "union", slot + 1, None, f.metadata))
            continue
        if base in SCALAR_SIZES:
            kind: FieldKind = "scalar"
            storage = base
        elif base == "string":
            kind, storage = "string", ""
        elif base in enums:
            kind, storage = "enum", enums[base].storage
            if f.default is not None and not f.type.vector:
                _check_enum_default(where, enums[base], f.default)
        elif base in tables:
            kind, storage = "table", ""
        else:
            raise SchemaError(f"{where}: unknown type {f.type.base!r}")
        if f.type.vector:
            if f.default is not None:
                raise SchemaError(f"{where}: a vector field takes no default")
            kind = "vector"
        elif kind in ("string", "table") and f.default is not None:
            raise SchemaError(f"{where}: a {kind} field takes no default")
        out.append(Field(f.name, ftype, kind, len(out), f.default, f.metadata, storage))
    return Table(table, tuple(out))


def _check_enum_default(where: str, enum: Enum, default: str) -> None:
    if default in enum.values:
        return
    try:
        number = int(default, 0)
    except ValueError:
        number = None
    if number is None or number not in enum.values.values():
        raise SchemaError(f"{where}: default {default!r} is not a value of enum {enum.name}")


@functools.cache
def _load_cached(path: str, mtime_ns: int) -> Schema:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SchemaError(f"{path}: cannot read the schema ({exc})") from None
    try:
        return parse(text)
    except SchemaError as exc:
        raise SchemaError(f"{path}: {exc}") from None


def load(path: str | Path) -> Schema:
    """The schema in the file ``path`` (parsed once per file version)."""
    p = Path(path)
    try:
        mtime = p.stat().st_mtime_ns
    except OSError as exc:
        raise SchemaError(f"{p}: cannot read the schema ({exc})") from None
    return _load_cached(str(p), mtime)

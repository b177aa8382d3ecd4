"""A bounds-checked flatbuffer table reader.

The Python flatbuffers runtime has no verifier: its accessors slice ``bytes`` (which
silently truncates) and unpack at offsets that may be negative (which silently wraps), so a
corrupt or truncated file can decode into plausible garbage.  Every read here checks that
the bytes it touches lie inside the buffer and raises :class:`CorruptError` naming the
field otherwise.  Fields are addressed by slot (see :mod:`vectors.layout`).
"""

from __future__ import annotations

import struct

from vectors.errors import CorruptError
from vectors.layout import SchemaTable

_U8 = struct.Struct("<B")
_U16 = struct.Struct("<H")
_I32 = struct.Struct("<i")
_U32 = struct.Struct("<I")


class Reader:
    """The whole buffer; hands out :class:`Table` views."""

    __slots__ = ("data", "size")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.size = len(data)

    def unpack(self, fmt: struct.Struct, pos: int, what: str) -> int:
        if pos < 0 or pos + fmt.size > self.size:
            raise CorruptError(f"{what} at byte {pos} lies outside the {self.size}-byte buffer")
        value: int = fmt.unpack_from(self.data, pos)[0]
        return value

    def span(self, start: int, length: int, what: str) -> bytes:
        if start < 0 or length < 0 or start + length > self.size:
            raise CorruptError(
                f"{what} (bytes {start}..{start + length}) runs past the end of the "
                f"{self.size}-byte buffer"
            )
        return self.data[start : start + length]

    def root(self, schema: SchemaTable) -> Table:
        return self.table(self.unpack(_U32, 0, "root offset"), schema)

    def table(self, pos: int, schema: SchemaTable) -> Table:
        return Table(self, pos, schema)


class Table:
    """One table object, with its vtable resolved and checked."""

    __slots__ = ("_object_size", "_vtable", "_vtable_size", "pos", "reader", "schema")

    def __init__(self, reader: Reader, pos: int, schema: SchemaTable) -> None:
        self.reader = reader
        self.pos = pos
        self.schema = schema
        name = schema.name
        vtable = pos - reader.unpack(_I32, pos, f"{name} table")
        self._vtable_size = reader.unpack(_U16, vtable, f"{name} vtable")
        self._object_size = reader.unpack(_U16, vtable + 2, f"{name} vtable")
        if self._vtable_size < 4 or self._vtable_size % 2:
            raise CorruptError(f"{name} vtable at byte {vtable} has bad size {self._vtable_size}")
        reader.span(vtable, self._vtable_size, f"{name} vtable")
        reader.span(pos, self._object_size, f"{name} table")
        self._vtable = vtable

    def _what(self, slot: int) -> str:
        return f"{self.schema.name}.{self.schema.fields[slot]}"

    def _field(self, slot: int) -> int | None:
        """Absolute position of the field's inline value, or None when it is absent."""
        entry = 4 + 2 * slot
        if entry >= self._vtable_size:
            return None
        offset = self.reader.unpack(_U16, self._vtable + entry, self._what(slot))
        if offset == 0:
            return None
        if offset >= self._object_size:
            raise CorruptError(f"{self._what(slot)} lies outside its table")
        return self.pos + offset

    def present(self, field: str) -> bool:
        return self._field(self.schema.slot(field)) is not None

    def _scalar(self, field: str, fmt: struct.Struct, default: int) -> int:
        slot = self.schema.slot(field)
        pos = self._field(slot)
        return default if pos is None else self.reader.unpack(fmt, pos, self._what(slot))

    def u8(self, field: str, default: int = 0) -> int:
        return self._scalar(field, _U8, default)

    def i32(self, field: str, default: int = 0) -> int:
        return self._scalar(field, _I32, default)

    def u32(self, field: str, default: int = 0) -> int:
        return self._scalar(field, _U32, default)

    def boolean(self, field: str, default: bool = False) -> bool:
        return bool(self._scalar(field, _U8, int(default)))

    def _target(self, field: str) -> tuple[int, str] | None:
        """Position an offset field points at, or None when absent."""
        slot = self.schema.slot(field)
        pos = self._field(slot)
        if pos is None:
            return None
        what = self._what(slot)
        return pos + self.reader.unpack(_U32, pos, what), what

    def _vector(self, field: str, elem_size: int) -> tuple[int, int, str] | None:
        """(first element position, element count, name) of a vector field."""
        target = self._target(field)
        if target is None:
            return None
        pos, what = target
        count = self.reader.unpack(_U32, pos, f"{what} length")
        self.reader.span(pos + 4, count * elem_size, f"{what} vector")
        return pos + 4, count, what

    def table(self, field: str, schema: SchemaTable) -> Table | None:
        target = self._target(field)
        return None if target is None else self.reader.table(target[0], schema)

    def string(self, field: str) -> str | None:
        target = self._target(field)
        return None if target is None else _string_at(self.reader, *target)

    def raw_bytes(self, field: str) -> bytes | None:
        vec = self._vector(field, 1)
        if vec is None:
            return None
        start, count, what = vec
        return self.reader.span(start, count, what)

    def i32s(self, field: str) -> tuple[int, ...] | None:
        vec = self._vector(field, 4)
        if vec is None:
            return None
        start, count, what = vec
        return struct.unpack_from(f"<{count}i", self.reader.span(start, 4 * count, what))

    def tables(self, field: str, schema: SchemaTable) -> list[Table]:
        """Elements of a vector of tables; an absent vector reads as empty."""
        return [self.reader.table(p, schema) for p, _ in self._offsets(field)]

    def strings(self, field: str) -> list[str]:
        """Elements of a vector of strings; an absent vector reads as empty."""
        return [_string_at(self.reader, p, what) for p, what in self._offsets(field)]

    def _offsets(self, field: str) -> list[tuple[int, str]]:
        vec = self._vector(field, 4)
        if vec is None:
            return []
        start, count, what = vec
        out = []
        for i in range(count):
            pos = start + 4 * i
            out.append((pos + self.reader.unpack(_U32, pos, what), f"{what}[{i}]"))
        return out


def _string_at(reader: Reader, pos: int, what: str) -> str:
    length = reader.unpack(_U32, pos, f"{what} length")
    # The terminating NUL is part of the encoding; a file cut just before it is truncated.
    raw = reader.span(pos + 4, length + 1, f"{what} string")
    if raw[-1] != 0:
        raise CorruptError(f"{what} string is not NUL-terminated")
    try:
        return raw[:-1].decode("utf-8")
    except UnicodeDecodeError:
        raise CorruptError(f"{what} string is not valid UTF-8") from None

"""A deterministic flatbuffer builder that needs no ``flatbuffers`` package.

The TOSA 1.0 writer builds its buffers here rather than with ``flatbuffers.Builder``, so
that the bytes are a function of the graph alone: they cannot change with the installed
runtime's vtable sharing, padding or default-forcing rules.  The layout is the usual one
(objects are written back to front, so every ``uoffset`` points forward):

* every object is aligned, measured from the end of the buffer, to the size of its
  largest scalar; ``finish`` pads the front so the whole buffer is a multiple of the
  largest alignment used, which makes those alignments hold from the start too;
* vectors and strings start with their ``uint32`` length; strings end with a NUL; a
  ``[ubyte]`` vector can ask for a larger alignment of its elements (``force_align``);
* a table's fields are laid out largest first, ties in slot order; its vtable lists
  slots up to the last present one; identical vtables are shared (the first one written
  is reused), as every flatbuffers builder does;
* a field is present exactly when the caller passes it, whatever its value, so a
  default-valued attribute survives a round trip.

Offsets handed out are distances from the end of the buffer (stable while it grows).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence

from vectors.errors import EncodeError
from vectors.fbs_schema import SCALAR_FORMATS, SCALAR_SIZES, Field, Table

__all__ = ["MAX_SIZE", "Builder"]

MAX_SIZE = (1 << 31) - 1  # flatbuffers offsets are 32-bit; 2 GiB is the format's limit

_FORMATS = SCALAR_FORMATS

Value = int | bool | float


class Builder:
    def __init__(self, size_hint: int = 1024) -> None:
        self._buf = bytearray(max(64, size_hint))
        self._head = len(self._buf)  # the data is self._buf[self._head:]
        self._minalign = 1
        self._vtables: dict[bytes, int] = {}

    # -- raw writing --------------------------------------------------------------

    @property
    def size(self) -> int:
        return len(self._buf) - self._head

    def _reserve(self, n: int) -> None:
        if self.size + n > MAX_SIZE:
            raise EncodeError("graph is too large for a flatbuffer (2 GiB limit)")
        if n <= self._head:
            return
        used = self.size
        capacity = max(2 * len(self._buf), used + n + 64)
        grown = bytearray(capacity)
        grown[capacity - used :] = self._buf[self._head :]
        self._buf = grown
        self._head = capacity - used

    def _prepend(self, data: bytes | bytearray | memoryview) -> int:
        n = len(data)
        self._reserve(n)
        self._head -= n
        self._buf[self._head : self._head + n] = data
        return self.size

    def _pad(self, alignment: int, following: int) -> None:
        """Zero padding so that an object of ``following`` bytes written next starts at a
        multiple of ``alignment`` (counted from the end)."""
        self._minalign = max(self._minalign, alignment)
        pad = -(self.size + following) % alignment
        if pad:
            self._prepend(bytes(pad))

    def _u32(self, value: int) -> int:
        return self._prepend(struct.pack("<I", value))

    # -- objects ------------------------------------------------------------------

    def string(self, text: str) -> int:
        data = text.encode("utf-8")
        self._pad(4, len(data) + 1)
        self._prepend(data + b"\0")
        return self._u32(len(data))

    def byte_vector(self, data: bytes, alignment: int = 1) -> int:
        """A ``[ubyte]`` whose first element is aligned to ``alignment`` (a power of 2)."""
        self._pad(max(4, alignment), len(data))
        self._prepend(data)
        return self._u32(len(data))

    def scalar_vector(self, scalar: str, values: Sequence[Value]) -> int:
        size = SCALAR_SIZES[scalar]
        fmt = _FORMATS[scalar]
        try:
            data = struct.pack(f"<{len(values)}{fmt[1]}", *values)
        except struct.error as exc:
            raise EncodeError(f"{list(values)!r} cannot be stored as {scalar} ({exc})") from None
        self._pad(max(4, size), len(data))
        self._prepend(data)
        return self._u32(len(values))

    def offset_vector(self, offsets: Sequence[int]) -> int:
        self._pad(4, 4 * len(offsets))
        for target in reversed(offsets):
            # A uoffset is relative to its own position: (end - target) - (end - here).
            self._u32(self.size + 4 - target)
        return self._u32(len(offsets))

    def string_vector(self, strings: Sequence[str]) -> int:
        return self.offset_vector([self.string(s) for s in strings])

    def table(self, schema: Table, values: Mapping[str, Value]) -> int:
        """One table of ``schema``: ``values`` maps field names to scalars (enum and
        union-type fields as their numbers) or to offsets of objects already written."""
        fields: list[tuple[Field, int]] = []
        for name in values:
            f = schema.field(name)
            size = 4 if f.is_offset else SCALAR_SIZES[f.storage]
            fields.append((f, size))
        fields.sort(key=lambda fs: (-fs[1], fs[0].slot))
        # The object ends where its last field does: padding after it is not part of the
        # table, so equal tables get equal vtables wherever they land.
        start: int | None = None
        at: dict[int, int] = {}
        for f, size in fields:
            value = values[f.name]
            self._pad(size, size)
            if start is None:
                start = self.size
            if f.is_offset:
                target = int(value)
                if not 0 < target <= self.size:
                    raise EncodeError(f"{schema.name}.{f.name}: offset {target} was not written")
                self._u32(self.size + 4 - target)
            else:
                try:
                    self._prepend(struct.pack(_FORMATS[f.storage], value))
                except struct.error as exc:
                    raise EncodeError(
                        f"{schema.name}.{f.name}: {value!r} cannot be stored as {f.storage} "
                        f"({exc})"
                    ) from None
            at[f.slot] = self.size
        self._pad(4, 4)
        if start is None:
            start = self.size
        table = self._u32(0)  # the vtable offset, patched below
        object_size = table - start
        if object_size > 0xFFFF:
            raise EncodeError(f"{schema.name} table is too large ({object_size} bytes)")
        slots = max(at, default=-1) + 1
        entries = [table - at[s] if s in at else 0 for s in range(slots)]
        vtable = struct.pack(f"<HH{slots}H", 4 + 2 * slots, object_size, *entries)
        known = self._vtables.get(vtable)
        if known is None:
            known = self._prepend(vtable)  # directly before the table: always 2-aligned
            self._vtables[vtable] = known
        # soffset: table position minus vtable position, in the buffer's own direction.
        pos = len(self._buf) - table
        self._buf[pos : pos + 4] = struct.pack("<i", known - table)
        return table

    def finish(self, root: int, file_identifier: bytes) -> bytes:
        """The finished buffer: root offset, file identifier, then the objects."""
        if len(file_identifier) != 4:
            raise ValueError(f"file identifier {file_identifier!r} is not 4 bytes")
        self._pad(max(self._minalign, 4), 8)
        self._prepend(file_identifier)
        self._u32(self.size + 4 - root)
        return bytes(self._buf[self._head :])

"""Read and write graph IR as TOSA flatbuffers, in either revision's format.

``serialize``/``deserialize`` work on bytes, ``write_graph``/``read_graph`` on files.
``revision`` picks the format: ``"2024-04-draft"`` (the default; schema
vectors/schema/tosa.fbs, code in :mod:`vectors.graph_writer` / :mod:`vectors.graph_reader`),
``"1.0"`` (TOSA 1.0's own schema, conformance/tosa_spec/1.0/tosa.fbs) or ``"1.1-draft"``
(the 1.1 draft's, conformance/tosa_spec/1.1-draft/tosa.fbs; the same schema, with the 1.1
element types and tosa-tools' serializer tables), both with the code of
:mod:`vectors.graph_writer_1_0` / :mod:`vectors.graph_reader_1_0` and a
:class:`~vectors.layout_1_0.Layout` each.  :func:`format_for` gives a graph's own format
(its ``revision``).  Reading without a revision tells the formats apart by the file's
Version and serializer tables (:func:`detect_revision`).  The layouts are documented in
docs/flatbuffer.md.

Every failure is a :class:`FlatbufferError` with a one-line message that starts with the
source (a file path, or ``"<bytes>"``) and names the problem.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from conformance import revisions
from conformance.graph import Graph, Version
from vectors import graph_reader, graph_reader_1_0, graph_writer, graph_writer_1_0
from vectors.errors import CorruptError, DecodeError, EncodeError, FlatbufferError
from vectors.layout import FILE_IDENTIFIER
from vectors.layout_1_0 import LAYOUT_1_0, LAYOUT_1_1

__all__ = [
    "DEFAULT_REVISION",
    "REVISIONS",
    "VERSION_1_0",
    "VERSION_1_1",
    "FlatbufferError",
    "deserialize",
    "detect_revision",
    "format_for",
    "holds_shape_tensors",
    "read_graph",
    "serialize",
    "write_graph",
]

_HEADER_SIZE = 8  # root table offset + file identifier
_T = TypeVar("_T")

DEFAULT_REVISION = revisions.DRAFT_2024.name  # what serialize writes unless told otherwise
REVISIONS = (revisions.DRAFT_2024.name, revisions.TOSA_1_0.name, revisions.TOSA_1_1_DRAFT.name)

# The Version a TOSA 1.0 graph records: the vendored spec's release (1.0.2).  A graph
# written in the 1.0 format must say 1.0.x.
VERSION_1_0 = Version(1, 0, 2, draft=False)
# The Version of a 1.1 draft graph: the vendored tosa.xml's (1.1.0 draft), which is what
# tosa-tools 2026.8 writes too.  A graph written in the 1.1 format must say 1.1.x.
VERSION_1_1 = Version(1, 1, 0, draft=True)

_WRITERS: dict[str, Callable[[Graph], bytes]] = {
    revisions.DRAFT_2024.name: graph_writer.write,
    revisions.TOSA_1_0.name: lambda g: graph_writer_1_0.write(g, LAYOUT_1_0),
    revisions.TOSA_1_1_DRAFT.name: lambda g: graph_writer_1_0.write(g, LAYOUT_1_1),
}
_READERS: dict[str, Callable[[bytes], Graph]] = {
    revisions.DRAFT_2024.name: graph_reader.read,
    revisions.TOSA_1_0.name: lambda b: graph_reader_1_0.read(b, LAYOUT_1_0),
    revisions.TOSA_1_1_DRAFT.name: lambda b: graph_reader_1_0.read(b, LAYOUT_1_1),
}


def _revision(name: str, what: str) -> str:
    for known in REVISIONS:
        if isinstance(name, str) and name.strip().casefold() == known.casefold():
            return known
    raise FlatbufferError(
        _one_line(f"{what}: unknown revision {name!r} (known: {', '.join(REVISIONS)})")
    )


def format_for(graph: Graph) -> str:
    """The file format of the revision a graph follows: the one it records
    (``Graph.revision``, set by the builder from its spec and by the readers from the
    file); for a graph that records none, or another (a custom tosa.xml), its version
    says: TOSA 1.0's own for a 1.0.x graph, the 2024 draft's otherwise."""
    if graph.revision in _WRITERS:
        return graph.revision
    v = graph.version
    if (v.major, v.minor, v.draft) == (VERSION_1_0.major, VERSION_1_0.minor, False):
        return revisions.TOSA_1_0.name
    return DEFAULT_REVISION


def holds_shape_tensors(revision: str) -> bool:
    """Whether ``revision``'s format holds a tensor of shape_t elements as data (the 2024
    draft's: a SHAPE-typed tensor of any rank); 1.0's and 1.1's hold a shape value as a
    TosaShape list, so a tensor retyped to shape_t (CONST's wrong-type breaker) cannot be
    written.  A revision of no known format (a custom tosa.xml) is read as the draft's."""
    return _WRITERS.get(revision, _WRITERS[DEFAULT_REVISION]) is _WRITERS[DEFAULT_REVISION]


def serialize(graph: Graph, *, revision: str = DEFAULT_REVISION) -> bytes:
    """The graph as a TOSA flatbuffer in ``revision``'s format.  Deterministic: equal
    graphs give equal bytes."""
    rev = _revision(revision, "cannot serialize graph")
    try:
        return _WRITERS[rev](graph)
    except EncodeError as exc:
        raise FlatbufferError(_one_line(f"cannot serialize graph: {exc}")) from None


def detect_revision(data: bytes | bytearray | memoryview, *, source: str = "<bytes>") -> str:
    """The revision whose format a TOSA flatbuffer is in, by its Version table and
    tosa-tools' serializer tables (software_version, compatibility), which only the
    schema of 1.0 and 1.1 has: a file saying 1.0.x is ``"1.0"``; one with the serializer
    tables saying 1.1.x is ``"1.1-draft"`` (any other version with them, ``"1.0"``);
    the rest ``"2024-04-draft"``, whose graphs say 1.1.0 draft."""
    buf = _checked_header(bytes(data), source)
    return _decoding(source, lambda: graph_reader_1_0.detect_revision(buf))


def deserialize(
    data: bytes | bytearray | memoryview,
    *,
    source: str = "<bytes>",
    revision: str | None = None,
) -> Graph:
    """The graph a TOSA flatbuffer holds; ``source`` names it in error messages.  The
    format is ``revision``'s, or, when None, the one the file's Version table says."""
    rev = None if revision is None else _revision(revision, f"{source}: cannot read")
    buf = _checked_header(bytes(data), source)
    if rev is None:
        rev = _decoding(source, lambda: graph_reader_1_0.detect_revision(buf))
    reader = _READERS[rev]
    return _decoding(source, lambda: reader(buf))


def _checked_header(buf: bytes, source: str) -> bytes:
    if len(buf) < _HEADER_SIZE:
        raise FlatbufferError(
            f"{source}: not a TOSA flatbuffer ({len(buf)} bytes, shorter than the "
            f"{_HEADER_SIZE}-byte flatbuffer header)"
        )
    ident = buf[4:_HEADER_SIZE]
    if ident != FILE_IDENTIFIER:
        shown = repr(ident)[1:]  # b'ABCD' -> 'ABCD', with non-printable bytes escaped
        raise FlatbufferError(
            _one_line(
                f"{source}: not a TOSA flatbuffer (file identifier is {shown}, expected 'TOSA')"
            )
        )
    return buf


def _decoding(source: str, decode: Callable[[], _T]) -> _T:
    """``decode()``, with every failure turned into a one-line FlatbufferError."""
    try:
        return decode()
    except CorruptError as exc:
        problem = f"truncated or corrupt flatbuffer: {exc}"
    except DecodeError as exc:
        problem = str(exc)
    except (IndexError, KeyError, struct.error, OverflowError, ValueError) as exc:
        # Backstop: the checked reader should catch every malformed buffer first.
        problem = f"truncated or corrupt flatbuffer ({type(exc).__name__}: {exc})"
    raise FlatbufferError(_one_line(f"{source}: {problem}"))


def write_graph(
    path: str | os.PathLike[str], graph: Graph, *, revision: str = DEFAULT_REVISION
) -> None:
    """Serialize ``graph`` into the file ``path`` (conventionally ``*.tosa``)."""
    try:
        data = serialize(graph, revision=revision)
    except FlatbufferError as exc:
        raise FlatbufferError(_one_line(f"{os.fspath(path)}: {exc}")) from None
    Path(path).write_bytes(data)


def read_graph(path: str | os.PathLike[str], *, revision: str | None = None) -> Graph:
    """The graph in the TOSA flatbuffer file ``path`` (format as :func:`deserialize`)."""
    return deserialize(Path(path).read_bytes(), source=os.fspath(path), revision=revision)


def _one_line(message: str) -> str:
    # Names come from files and callers; keep any control characters from splitting lines.
    return message.replace("\r", "\\r").replace("\n", "\\n")

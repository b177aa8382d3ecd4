"""Read and write graph IR as TOSA flatbuffers (schema: vectors/schema/tosa.fbs).

``serialize``/``deserialize`` work on bytes, ``write_graph``/``read_graph`` on files.  The
layout of tensor data and the operator attribute mapping are documented in
docs/flatbuffer.md; the code lives in :mod:`vectors.encoding` and
:mod:`vectors.attributes`.

Every failure is a :class:`FlatbufferError` with a one-line message that starts with the
source (a file path, or ``"<bytes>"``) and names the problem.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

from conformance.graph import Graph
from vectors import graph_reader, graph_writer
from vectors.errors import CorruptError, DecodeError, EncodeError, FlatbufferError
from vectors.layout import FILE_IDENTIFIER

__all__ = ["FlatbufferError", "deserialize", "read_graph", "serialize", "write_graph"]

_HEADER_SIZE = 8  # root table offset + file identifier


def serialize(graph: Graph) -> bytes:
    """The graph as a TOSA flatbuffer.  Deterministic: equal graphs give equal bytes."""
    try:
        return graph_writer.write(graph)
    except EncodeError as exc:
        raise FlatbufferError(_one_line(f"cannot serialize graph: {exc}")) from None


def deserialize(data: bytes | bytearray | memoryview, *, source: str = "<bytes>") -> Graph:
    """The graph a TOSA flatbuffer holds; ``source`` names it in error messages."""
    buf = bytes(data)
    if len(buf) < _HEADER_SIZE:
        raise FlatbufferError(
            f"{source}: not a TOSA flatbuffer ({len(buf)} bytes, shorter than the "
            f"{_HEADER_SIZE}-byte flatbuffer header)"
        )
    ident = buf[4:_HEADER_SIZE]
    if ident != FILE_IDENTIFIER:
        shown = repr(ident)[1:]  # b'ABCD' -> 'ABCD', with non-printable bytes escaped
        raise FlatbufferError(
            f"{source}: not a TOSA flatbuffer (file identifier is {shown}, expected 'TOSA')"
        )
    try:
        return graph_reader.read(buf)
    except CorruptError as exc:
        problem = f"truncated or corrupt flatbuffer: {exc}"
    except DecodeError as exc:
        problem = str(exc)
    except (IndexError, KeyError, struct.error, OverflowError, ValueError) as exc:
        # Backstop: the checked reader should catch every malformed buffer first.
        problem = f"truncated or corrupt flatbuffer ({type(exc).__name__}: {exc})"
    raise FlatbufferError(_one_line(f"{source}: {problem}"))


def write_graph(path: str | os.PathLike[str], graph: Graph) -> None:
    """Serialize ``graph`` into the file ``path`` (conventionally ``*.tosa``)."""
    try:
        data = serialize(graph)
    except FlatbufferError as exc:
        raise FlatbufferError(f"{os.fspath(path)}: {exc}") from None
    Path(path).write_bytes(data)


def read_graph(path: str | os.PathLike[str]) -> Graph:
    """The graph in the TOSA flatbuffer file ``path``."""
    return deserialize(Path(path).read_bytes(), source=os.fspath(path))


def _one_line(message: str) -> str:
    # Names come from files and callers; keep any control characters from splitting lines.
    return message.replace("\r", "\\r").replace("\n", "\\n")

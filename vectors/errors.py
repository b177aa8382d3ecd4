"""Errors raised while writing or reading TOSA flatbuffers.

Only :class:`FlatbufferError` is public.  The two internal exceptions carry just the
problem; the entry points in :mod:`vectors.flatbuffer` know the source (a file path or
``"<bytes>"``) and turn them into one-line ``FlatbufferError`` messages, so no code deep
in the codec has to thread the source name through.
"""

from __future__ import annotations


class FlatbufferError(ValueError):
    """A graph could not be serialized, or bytes are not a readable TOSA flatbuffer."""


class EncodeError(Exception):
    """Internal: the graph holds something the schema cannot represent."""


class DecodeError(Exception):
    """Internal: the buffer holds something the IR cannot represent (an unknown Op...)."""


class CorruptError(DecodeError):
    """Internal: the buffer is not a well-formed flatbuffer (truncated, bad offsets...)."""

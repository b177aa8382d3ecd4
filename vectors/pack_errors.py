"""Errors raised while writing, reading or verifying a vector pack.

Kept apart from :mod:`vectors.pack` so that the low-level modules (npy encodings, JSON
schemas) and the command line can import them without pulling in the whole reader.
"""

from __future__ import annotations

from conformance.errors import ConformanceError


class PackError(ConformanceError, ValueError):
    """A pack, or one file of it, cannot be written or read.

    The message is one line and starts with the file it is about (``pack.json``,
    ``ADD_0001/input-0.npy``), so it can be printed as is.
    """


class NotAPackError(PackError):
    """The path is not a pack at all (missing, not a folder or zip, no ``pack.json``).

    Kept distinct from a corrupt pack because ``verify-pack`` reports the two
    differently: a corrupt pack is a list of problems (exit 1), a wrong path a usage
    error (exit 2).
    """


def one_line(message: str) -> str:
    """Messages embed names and numpy/json error text; keep them to one printed line."""
    return " ".join(message.replace("\r", "\n").split("\n"))

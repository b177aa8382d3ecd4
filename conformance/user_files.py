"""Files a user names for reading: a known-failures list, a capability manifest, a
tosa.xml and the tosa.xsd beside it.

They are read as a pack's files are (:func:`vectors.pack_source.read_regular_file`):
opened without blocking and checked with ``fstat`` before any byte is read, so a FIFO
cannot hang a command and ``/dev/zero`` cannot fill memory, and refused unread when
larger than the file size limit (``TOSA_CONFORMANCE_MAX_FILE_MIB``, 64 MiB by
default). Results files (``run --resume``, ``certify --results``, ``merge``) have their
own reader, :mod:`conformance.results_file`.
"""

from __future__ import annotations

import os
from pathlib import Path

from conformance.errors import ConformanceError
from vectors.pack_errors import PackError
from vectors.pack_source import read_regular_file


class UserFileError(ConformanceError):
    """A file the user named cannot be read; ``problem`` is the message without the path,
    for errors that add the path themselves (``SpecError``)."""

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: {problem}")


def read_user_file(path: str | os.PathLike[str], what: str) -> bytes:
    """The bytes of the regular file ``path``; UserFileError for a missing file, a FIFO,
    a device, a folder, or one above the size limit. ``what`` says what the file is
    ("a known-failures file"), for the messages."""
    label = os.fspath(path)
    try:
        data = read_regular_file(Path(path), label, what=what)
    except PackError as exc:
        # Its messages all start with the label; the problem alone is what is kept.
        raise UserFileError(label, str(exc).removeprefix(f"{label}: ")) from None
    if data is None:
        raise UserFileError(label, f"no such file (expected {what})")
    return data


def read_user_text(path: str | os.PathLike[str], what: str) -> str:
    """:func:`read_user_file` decoded as UTF-8 (UserFileError when it is not)."""
    data = read_user_file(path, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserFileError(os.fspath(path), f"not UTF-8 text (byte {exc.start})") from None

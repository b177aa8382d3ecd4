"""Files a user names for reading: a known-failures list, a capability manifest, a
tosa.xml and the tosa.xsd beside it.

They are read as a pack's files are (:func:`read_regular`, which
``vectors.pack_source`` uses for the pack's own): opened without blocking and checked
with ``fstat`` before any byte is read, so a FIFO cannot hang a command and
``/dev/zero`` cannot fill memory, and refused unread when larger than the file size
limit (``TOSA_CONFORMANCE_MAX_FILE_MIB``, 64 MiB by default). Results files
(``run --resume``, ``certify --results``, ``merge``) have their own reader,
:mod:`conformance.results_file`.  The spec model reads ``--spec`` through this module,
so it loads nothing of ``vectors`` (tests/core/test_import_contract.py).
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from conformance.atomic_file import file_kind
from conformance.errors import ConformanceError

# Limits on what one file may make this program read into memory.  A pack comes from
# someone else: a file (or zip member) declaring more is refused unread.  The
# environment variable changes the limit (in MiB) for packs with larger tensors.
MAX_FILE_ENV = "TOSA_CONFORMANCE_MAX_FILE_MIB"
DEFAULT_MAX_FILE_MIB = 64  # 8 Mi fp64 elements: far above any generated tensor


class FileReadError(ConformanceError):
    """A file that is not read: one line, starting with its label."""


def max_file_bytes() -> int:
    """The largest file of a pack (or backend result, or user file) read, in bytes."""
    raw = os.environ.get(MAX_FILE_ENV)
    if raw is None:
        return DEFAULT_MAX_FILE_MIB << 20
    try:
        mib = int(raw)
    except ValueError:
        mib = -1
    if mib < 1:
        raise FileReadError(f"{MAX_FILE_ENV}={raw!r}: must be a whole number of MiB, at least 1")
    return mib << 20


def too_big(label: str, size: int, limit: int, what: str = "a pack file") -> str:
    return (
        f"{label}: {size} bytes, more than the {limit >> 20} MiB {what} may have "
        f"(set {MAX_FILE_ENV} to raise the limit)"
    )


def _cannot(label: str, exc: OSError) -> FileReadError:
    return FileReadError(" ".join(f"{label}: cannot read: {exc.strerror or exc}".splitlines()))


def read_regular(
    path: Path, label: str, limit: int | None = None, what: str = "a pack file"
) -> bytes | None:
    """The bytes of ``path`` if it is a regular file within ``limit`` bytes; None when it
    does not exist; FileReadError for anything else (a FIFO, a device, a folder, too
    big: ``what`` names the kind of file in that message).

    Opened without blocking and checked with fstat before any read, so a FIFO cannot
    hang the reader and ``/dev/zero`` cannot fill memory.
    """
    limit = max_file_bytes() if limit is None else limit
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise _cannot(label, exc) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileReadError(f"{label}: not a regular file ({file_kind(info.st_mode)}); refused")
        if info.st_size > limit:
            raise FileReadError(too_big(label, info.st_size, limit, what))
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(info.st_size + 1)
        if len(data) != info.st_size:
            raise FileReadError(f"{label}: changed while it was read; refused")
        return data
    except OSError as exc:
        raise _cannot(label, exc) from None
    finally:
        os.close(fd)


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
        data = read_regular(Path(path), label, what=what)
    except FileReadError as exc:
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


def file_sha256(path: Path) -> str:
    """The sha256 of a file (a program a certificate names, the results it was made
    from), read in blocks."""
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()

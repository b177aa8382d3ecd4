"""Where a pack's files come from: a folder, or a zip of that folder.

Both give the same view -- paths relative to the pack root, with ``/`` separators --
so the reader and the verifier do not care which it is.  A zip may hold the pack at
its top (``pack.json``, ``ADD_0/...``) or inside one top-level folder
(``pack/pack.json``), which is what zipping the folder itself gives.
"""

from __future__ import annotations

import os
import stat
import zipfile
import zlib
from pathlib import Path
from typing import Protocol

from conformance import user_files
from conformance.atomic_file import file_kind as _kind

# The limit and its knob, where the pack reader's users have always imported them from.
from conformance.user_files import DEFAULT_MAX_FILE_MIB as DEFAULT_MAX_FILE_MIB
from conformance.user_files import MAX_FILE_ENV as MAX_FILE_ENV
from vectors.pack_errors import NotAPackError, PackError, one_line

INDEX = "pack.json"

_CHUNK = 1 << 20


def max_file_bytes() -> int:
    """The largest pack file (or backend result file) that is read, in bytes."""
    try:
        return user_files.max_file_bytes()
    except user_files.FileReadError as exc:
        raise PackError(str(exc)) from None


def _too_big(label: str, size: int, limit: int, what: str = "a pack file") -> PackError:
    return PackError(user_files.too_big(label, size, limit, what))


def read_regular_file(
    path: Path, label: str, limit: int | None = None, what: str = "a pack file"
) -> bytes | None:
    """:func:`conformance.user_files.read_regular`, with PackError for its errors."""
    try:
        return user_files.read_regular(path, label, limit, what)
    except user_files.FileReadError as exc:
        raise PackError(str(exc)) from None


class PackSource(Protocol):
    label: str  # the path as the user gave it, for messages
    # Problems of the container itself (duplicate zip members, links out of the pack).
    problems: list[str]

    def files(self) -> list[str]:
        """Every file of the pack, relative to its root, sorted."""
        ...

    def read(self, rel: str) -> bytes | None:
        """The file's bytes; None when it does not exist; PackError when unreadable."""
        ...

    def close(self) -> None: ...


class FolderSource:
    """A pack folder.  Symbolic links are followed only while they stay inside the
    pack, and only regular files are read."""

    def __init__(self, root: Path, label: str) -> None:
        self.root = root
        self.real_root = root.resolve()
        self.label = label
        self.problems: list[str] = []

    def files(self) -> list[str]:
        out = []
        for dirpath, dirs, names in os.walk(self.root):
            rel_dir = Path(dirpath).relative_to(self.root)
            # A linked folder is not walked (os.walk does not follow links); list it,
            # so that verify-pack reports it instead of passing over it.
            links = [d for d in dirs if (Path(dirpath) / d).is_symlink()]
            out += [(rel_dir / n).as_posix() for n in [*names, *links]]
        return sorted(out)

    def read(self, rel: str) -> bytes | None:
        path = self.root / rel
        if not os.path.lexists(path):
            return None
        real = path.resolve()
        if not real.is_relative_to(self.real_root):
            raise PackError(f"{rel}: a link that leaves the pack (to {real}); refused")
        return read_regular_file(real, rel)

    def close(self) -> None:
        pass


class ZipSource:
    def __init__(self, archive: zipfile.ZipFile, prefix: str, label: str) -> None:
        self.archive = archive
        self.prefix = prefix  # "" or "folder/"
        self.label = label
        self.problems = []
        self.members: dict[str, zipfile.ZipInfo] = {}
        for info in archive.infolist():
            if info.is_dir() or not info.filename.startswith(prefix):
                continue
            rel = info.filename[len(prefix) :]
            if rel in self.members:
                # zipfile would give the last copy, other tools the first: the pack would
                # read differently depending on the reader.
                self.problems.append(f"{rel}: the zip holds two members of this name")
            self.members[rel] = info

    def files(self) -> list[str]:
        return sorted(self.members)

    def read(self, rel: str) -> bytes | None:
        info = self.members.get(rel)
        if info is None:
            return None
        limit = max_file_bytes()
        # The declared size is checked first; the read is bounded too, since the
        # declaration is the zip's word only.
        if info.file_size > limit:
            raise _too_big(rel, info.file_size, limit)
        # Into a buffer of the declared size, so the member is held once: zipfile stops
        # at the declared size and checks the CRC, so a member that says less than it
        # inflates to fails there, unread beyond its word.
        buf = bytearray(info.file_size)
        view = memoryview(buf)
        size = 0
        try:
            with self.archive.open(info) as f:
                while size < len(buf):
                    chunk = f.read(min(_CHUNK, len(buf) - size))
                    if not chunk:
                        break
                    view[size : size + len(chunk)] = chunk
                    size += len(chunk)
                extra = f.read(1)
                longer = _longer_than_declared(info, f)
        except (
            zipfile.BadZipFile,
            OSError,
            EOFError,
            NotImplementedError,
            ValueError,
            RuntimeError,
            zlib.error,
        ) as exc:  # RuntimeError: an encrypted member (zipfile asks for a password);
            # zlib.error: a damaged deflate stream, which zipfile does not wrap.
            # BadZipFile covers a CRC mismatch: the zip itself is damaged at this member.
            raise PackError(one_line(f"{rel}: cannot read from the zip: {exc}")) from None
        finally:
            view.release()
        if size != len(buf) or extra or longer:
            raise PackError(f"{rel}: cannot read from the zip: the member is not its declared size")
        return bytes(buf) if len(buf) <= _CHUNK else buf  # type: ignore[return-value]

    def close(self) -> None:
        self.archive.close()


def _longer_than_declared(info: zipfile.ZipInfo, f: object) -> bool:
    """Whether a member's data goes on past its declared size: zipfile stops reading
    there (and checks the CRC of what it read), while unzip extracts all of it, so the
    pack would read differently depending on the tool."""
    if info.compress_type == zipfile.ZIP_STORED:
        return info.compress_size != info.file_size
    # zipfile's reader keeps what is left of the compressed data: none may be.
    left = getattr(f, "_compress_left", 0)
    tail = getattr(getattr(f, "_decompressor", None), "unconsumed_tail", b"")
    buffered = getattr(f, "_readbuffer", b"")[getattr(f, "_offset", 0) :]
    return bool(left > 0 or tail or buffered)


def open_source(path: str | os.PathLike[str]) -> PackSource:
    """The pack at ``path``; NotAPackError when there is none there."""
    label = os.fspath(path)
    p = Path(path)
    if p.is_dir():
        if not (p / INDEX).is_file() and not (p / INDEX).is_symlink():
            raise NotAPackError(f"{label}: not a pack (no {INDEX} in this folder)")
        return FolderSource(p, label)
    if not p.exists():
        raise NotAPackError(f"{label}: no such file or folder")
    mode = p.stat().st_mode
    if not stat.S_ISREG(mode):
        # is_zipfile would block on a FIFO and read a device forever.
        raise NotAPackError(f"{label}: not a pack ({_kind(mode)}, not a folder or a zip file)")
    if not zipfile.is_zipfile(p):
        raise NotAPackError(f"{label}: not a pack (neither a folder nor a zip file)")
    try:
        archive = zipfile.ZipFile(p)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise NotAPackError(one_line(f"{label}: not a readable zip file: {exc}")) from None
    prefix = _zip_root(archive)
    if prefix is None:
        archive.close()
        raise NotAPackError(
            f"{label}: not a pack (no {INDEX} at the top of the zip or in its one top folder)"
        )
    return ZipSource(archive, prefix, label)


def _zip_root(archive: zipfile.ZipFile) -> str | None:
    names = archive.namelist()
    if INDEX in names:
        return ""
    # Only one level down, and only one candidate: anything else is ambiguous.
    roots = {n[: -len(INDEX)] for n in names if n.endswith("/" + INDEX) and n.count("/") == 1}
    # The same folder/pack.json twice is one root: ZipSource reports the duplicate.
    return next(iter(roots)) if len(roots) == 1 else None

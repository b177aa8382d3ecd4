"""Where a pack's files come from: a folder, or a zip of that folder.

Both give the same view -- paths relative to the pack root, with ``/`` separators --
so the reader and the verifier do not care which it is.  A zip may hold the pack at
its top (``pack.json``, ``ADD_0/...``) or inside one top-level folder
(``pack/pack.json``), which is what zipping the folder itself gives.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path
from typing import Protocol

from vectors.pack_errors import NotAPackError, PackError, one_line

INDEX = "pack.json"


class PackSource(Protocol):
    label: str  # the path as the user gave it, for messages

    def files(self) -> list[str]:
        """Every file of the pack, relative to its root, sorted."""
        ...

    def read(self, rel: str) -> bytes | None:
        """The file's bytes; None when it does not exist; PackError when unreadable."""
        ...

    def close(self) -> None: ...


class FolderSource:
    def __init__(self, root: Path, label: str) -> None:
        self.root = root
        self.label = label

    def files(self) -> list[str]:
        out = []
        for dirpath, _dirs, names in os.walk(self.root):
            rel_dir = Path(dirpath).relative_to(self.root)
            out += [(rel_dir / n).as_posix() for n in names]
        return sorted(out)

    def read(self, rel: str) -> bytes | None:
        path = self.root / rel
        try:
            return path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise PackError(one_line(f"{rel}: cannot read: {exc.strerror or exc}")) from None

    def close(self) -> None:
        pass


class ZipSource:
    def __init__(self, archive: zipfile.ZipFile, prefix: str, label: str) -> None:
        self.archive = archive
        self.prefix = prefix  # "" or "folder/"
        self.label = label
        self.members = {
            info.filename[len(prefix) :]: info
            for info in archive.infolist()
            if not info.is_dir() and info.filename.startswith(prefix)
        }

    def files(self) -> list[str]:
        return sorted(self.members)

    def read(self, rel: str) -> bytes | None:
        info = self.members.get(rel)
        if info is None:
            return None
        try:
            return self.archive.read(info)
        except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError) as exc:
            # BadZipFile covers a CRC mismatch: the zip itself is damaged at this member.
            raise PackError(one_line(f"{rel}: cannot read from the zip: {exc}")) from None

    def close(self) -> None:
        self.archive.close()


def open_source(path: str | os.PathLike[str]) -> PackSource:
    """The pack at ``path``; NotAPackError when there is none there."""
    label = os.fspath(path)
    p = Path(path)
    if p.is_dir():
        if not (p / INDEX).is_file():
            raise NotAPackError(f"{label}: not a pack (no {INDEX} in this folder)")
        return FolderSource(p, label)
    if not p.exists():
        raise NotAPackError(f"{label}: no such file or folder")
    if not zipfile.is_zipfile(p):
        raise NotAPackError(f"{label}: not a pack (neither a folder nor a zip file)")
    try:
        archive = zipfile.ZipFile(p)
    except (zipfile.BadZipFile, OSError) as exc:
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
    roots = [n[: -len(INDEX)] for n in names if n.endswith("/" + INDEX) and n.count("/") == 1]
    return roots[0] if len(roots) == 1 else None

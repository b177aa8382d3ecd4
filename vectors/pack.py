"""Vector packs: write them, open them, load a vector, verify a whole pack.

A pack is one folder (also readable zipped) holding ``pack.json`` and one folder per
vector; docs/pack-format.md describes every file.  Writing::

    entries = [write_vector(out, v) for v in vectors]
    write_pack_index(out, PackMeta.create(spec, claim.to_json(), seed), entries)

Reading::

    with open_pack("pack.zip") as pack:
        for entry in pack.entries:
            vector = pack.load(entry.name)    # PackError if anything is wrong

``verify_pack(path)`` lists every problem of a pack instead of stopping at the first.
Every error is a :class:`PackError` whose one-line message starts with the file.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType
from typing import Any

from conformance.atomic_file import Lock, OutputError, write_files
from conformance.user_files import max_file_bytes, too_big
from vectors import pack_json
from vectors.pack_errors import NotAPackError, PackError
from vectors.pack_model import (
    Check,
    LoadedVector,
    PackEntry,
    PackMeta,
    Provenance,
    Requirements,
    Vector,
)
from vectors.pack_read import Fetch, read_vector
from vectors.pack_source import INDEX, PackSource, open_source
from vectors.pack_write import DESC, vector_files

__all__ = [
    "Check",
    "FolderLock",
    "LoadedVector",
    "NotAPackError",
    "Pack",
    "PackEntry",
    "PackError",
    "PackMeta",
    "Provenance",
    "Requirements",
    "Vector",
    "VerifyReport",
    "extract",
    "open_pack",
    "verify",
    "verify_pack",
    "write_pack_index",
    "write_vector",
]

PathLike = str | os.PathLike[str]


# ----------------------------------------------------------------------------- writing


def write_vector(pack_dir: PathLike, vector: Vector) -> PackEntry:
    """Write the vector's folder under ``pack_dir`` and return its pack.json entry.

    The files are built and read back in memory first, with the same checks a reader
    makes, so a vector the reader would reject is never written.  The folder is then
    swapped in whole: rewriting a vector leaves no file of the old one behind.
    """
    files = vector_files(vector)
    # A file past the read limit would make the whole pack unreadable afterwards.
    limit = max_file_bytes()
    for f, data in files.items():
        if len(data) > limit:
            raise PackError(too_big(f"{vector.name}/{f}", len(data), limit))
    entry = PackEntry(
        vector.name,
        vector.operator,
        vector.mode,
        vector.kind,
        {f: pack_json.sha256(data) for f, data in files.items()},
    )
    report = read_vector(entry, files.get)
    if report.problems:
        raise PackError(_first(report.problems))
    _replace_folder(Path(pack_dir), vector.name, files)
    return entry


def write_pack_index(
    pack_dir: PathLike,
    meta: PackMeta,
    entries: Iterable[PackEntry],
    coverage: list[dict[str, Any]] | None = None,
) -> str:
    """Write ``pack.json`` for these vectors, with the generator's per-pair record of
    coverage obligations when given; returns the pack's sha256."""
    entries = sorted(entries, key=lambda e: e.name)
    _check_names([e.name for e in entries], INDEX)
    doc = meta.to_json(entries)
    if coverage is not None:
        doc["coverage"] = sorted(coverage, key=lambda c: (c["operator"], c["mode"]))
    doc["pack_sha256"] = pack_json.sha256(pack_json.canonical(doc, INDEX))
    pack_json.validate(doc, "pack", INDEX)
    _atomic_write(Path(pack_dir) / INDEX, pack_json.dumps(doc, INDEX))
    return str(doc["pack_sha256"])


def extract(source: PathLike, names: Iterable[str], out: PathLike) -> str:
    """Copy the vectors ``names`` of the pack at ``source`` into a new pack at ``out``
    (a folder that does not exist or is empty), byte for byte, after checking their
    hashes; returns the new pack's sha256.  The new pack keeps the source's spec, claim
    and seed, records the source's sha256 in its options, and drops the per-pair
    coverage record, which described the whole source."""
    target = Path(out)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise PackError(f"{target}: exists and is not an empty folder; not writing into it")
    with open_pack(source) as pack:
        chosen = [pack.entry(n) for n in dict.fromkeys(names)]
        if not chosen:
            raise PackError(f"{pack.path}: no vector chosen; nothing to extract")
        pack.check_hashes(e.name for e in chosen)
        target.mkdir(parents=True, exist_ok=True)
        for entry in chosen:
            files = {}
            for file in entry.files:
                data = pack.source.read(f"{entry.name}/{file}")
                assert data is not None  # check_hashes saw every file
                files[file] = data
            _replace_folder(target, entry.name, files)
        meta = replace(pack.meta, options={**pack.meta.options, "extracted_from": pack.pack_sha256})
        return write_pack_index(target, meta, chosen)


def _replace_folder(pack_dir: Path, name: str, files: dict[str, bytes]) -> None:
    target = pack_dir / name
    if target.exists() and not (target.is_dir() and _is_vector_folder(target)):
        # Only ever delete what this module wrote, never a user's unrelated folder.
        raise PackError(f"{target}: exists and is not a vector folder; not overwriting it")
    tmp = pack_dir / f".{name}.tmp"
    old = pack_dir / f".{name}.old"
    for leftover in (tmp, old):  # from an interrupted earlier write
        if leftover.exists():
            shutil.rmtree(leftover)
    tmp.mkdir(parents=True)
    try:
        for fname, data in sorted(files.items()):
            (tmp / fname).write_bytes(data)
    except BaseException as exc:
        # A full disk or an interrupt: leave no half-written folder behind.
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError):
            raise _unwritable(target, exc.strerror or exc) from None
        raise
    if target.exists():
        target.rename(old)
    tmp.rename(target)
    if old.exists():
        shutil.rmtree(old)


def _is_vector_folder(path: Path) -> bool:
    return (path / DESC).is_file() or not any(path.iterdir())


def _atomic_write(path: Path, data: bytes) -> None:
    try:
        write_files({path: data})  # a reader never sees a half-written pack.json
    except OutputError as exc:
        raise _unwritable(path, exc.reason) from None


def _unwritable(path: Path, reason: object) -> PackError:
    return PackError(f"{path}: cannot write: {reason}; free space, or write the pack elsewhere")


class FolderLock(Lock):
    """An exclusive lock on a pack folder being written (``flock`` on the folder
    itself, so no lock file is left in the pack); released by :meth:`close` or when
    the process ends, however it ends."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        busy = f"{folder}: another 'generate' is writing a pack into this folder; "
        busy += "choose another folder"
        super().__init__(folder, busy, folder=True, error=PackError)


# ----------------------------------------------------------------------------- reading


@dataclass
class _Index:
    meta: PackMeta
    entries: list[PackEntry]
    pack_sha256: str
    # The generator's per-pair obligation record (None: a pack written without one).
    coverage: list[dict[str, Any]] | None = None


def _read_index(source: PackSource) -> tuple[_Index | None, list[str]]:
    """pack.json, and every problem with it; None when it cannot be used at all.
    The container's own problems (duplicate zip members) come first."""
    container = list(source.problems)
    try:
        data = source.read(INDEX)
    except PackError as exc:
        return None, [*container, str(exc)]
    if data is None:
        return None, [*container, f"{INDEX}: missing"]
    try:
        doc = pack_json.loads(data, INDEX)
    except PackError as exc:
        return None, [*container, str(exc)]
    problems = pack_json.schema_problems(doc, "pack", INDEX)
    if problems:
        return None, [*container, *problems]
    problems = container
    recorded = doc.pop("pack_sha256")
    computed = pack_json.sha256(pack_json.canonical(doc))
    if computed != recorded:
        problems.append(
            f"{INDEX}: pack_sha256 is {recorded[:16]}..., but the content hashes to "
            f"{computed[:16]}... (pack.json was changed after it was written)"
        )
    names = [v["name"] for v in doc["vectors"]]
    try:
        _check_names(names, INDEX)
    except PackError as exc:
        problems.append(str(exc))
    entries = [PackEntry.from_json(v) for v in doc["vectors"]]
    meta = PackMeta.from_json(doc)
    return _Index(meta, entries, recorded, doc.get("coverage")), problems


def _check_names(names: list[str], source: str) -> None:
    seen: dict[str, str] = {}
    for name in names:
        # Folders named "Add" and "ADD" are one folder on case-insensitive file systems.
        key = name.casefold()
        if key in seen:
            raise PackError(f"{source}: vector {name!r} is listed twice (or as {seen[key]!r})")
        seen[key] = name
    if names != sorted(names):
        raise PackError(f"{source}: vectors are not sorted by name")


class Pack:
    """An open pack.  Use as a context manager (a zipped pack holds the file open)."""

    def __init__(self, source: PackSource, index: _Index) -> None:
        self.source = source
        self.path = source.label
        self.meta = index.meta
        self.entries = index.entries
        self.pack_sha256 = index.pack_sha256
        self.coverage = index.coverage
        self._by_name = {e.name: e for e in index.entries}

    def __enter__(self) -> Pack:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self.source.close()

    @property
    def names(self) -> list[str]:
        return [e.name for e in self.entries]

    def entry(self, name: str) -> PackEntry:
        try:
            return self._by_name[name]
        except KeyError:
            raise PackError(f"{INDEX}: no vector named {name!r} in this pack") from None

    def check_hashes(self, names: Iterable[str]) -> None:
        """PackError unless every file of these vectors is there and has the sha256
        pack.json records (the pack_sha256 already covers pack.json itself)."""
        for name in names:
            for file, want in sorted(self.entry(name).files.items()):
                problem = self._hash_problem(f"{name}/{file}", want)
                if problem is not None:
                    raise PackError(
                        f"{self.path}: the pack is damaged: {problem}; "
                        "'tosa-conformance verify-pack' lists every problem"
                    )

    def _hash_problem(self, rel: str, want: str) -> str | None:
        try:
            data = self.source.read(rel)
        except PackError as exc:  # unreadable, not a regular file, too big
            return str(exc)
        if data is None:
            return f"{rel}: missing (pack.json lists it)"
        if pack_json.sha256(data) != want:
            return f"{rel}: sha256 mismatch with pack.json"
        return None

    def check(self, name: str) -> list[str]:
        """Every problem with one vector; empty when it loads."""
        return read_vector(self.entry(name), self._fetcher(name), self._level).problems

    def load(self, name: str) -> LoadedVector:
        """The vector, checked against pack.json, its schema and its graph."""
        report = read_vector(self.entry(name), self._fetcher(name), self._level)
        if report.loaded is None:
            raise PackError(_first(report.problems))
        return report.loaded

    @property
    def _level(self) -> str | None:
        level = self.meta.claim.get("level")  # the schema requires it: a string
        return level if isinstance(level, str) else None

    def _fetcher(self, name: str) -> Fetch:
        return lambda file: self.source.read(f"{name}/{file}")


def open_pack(path: PathLike) -> Pack:
    """Open a pack folder or zip; its pack.json must be intact (see verify_pack)."""
    source = open_source(path)
    index, problems = _read_index(source)
    if index is None or problems:
        source.close()
        raise PackError(_first(problems))
    return Pack(source, index)


# ----------------------------------------------------------------------------- verifying


@dataclass
class VerifyReport:
    path: str
    problems: list[str] = field(default_factory=list)
    vectors: int | None = None  # None when pack.json could not be read
    pack_sha256: str | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def verify(path: PathLike) -> VerifyReport:
    """Check every file of the pack; NotAPackError when ``path`` is not a pack."""
    source = open_source(path)
    try:
        index, problems = _read_index(source)
        report = VerifyReport(source.label, problems)
        if index is None:
            return report
        report.vectors = len(index.entries)
        report.pack_sha256 = index.pack_sha256
        pack = Pack(source, index)
        known = {INDEX}
        for entry in index.entries:
            report.problems += pack.check(entry.name)
            known |= {f"{entry.name}/{f}" for f in entry.files}
        for rel in source.files():
            if rel not in known:
                report.problems.append(f"{rel}: stray file (pack.json does not list it)")
        return report
    finally:
        source.close()


def verify_pack(path: PathLike) -> list[str]:
    """Every problem of the pack, one line each; empty when it is intact."""
    return verify(path).problems


def _first(problems: list[str]) -> str:
    more = len(problems) - 1
    return problems[0] + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else "")

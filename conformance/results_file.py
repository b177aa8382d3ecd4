"""The ``--json`` results file of ``tosa-conformance run``: JSON lines, one per vector,
after a header line that says which run they belong to.

Guarantees (docs/reliability.md):

* **One run per file.**  The file is locked (``flock``, exclusive) for the whole run;
  a second run on it is refused with one line before it touches the file.
* **Resume only what it belongs to.**  The header records the pack's sha256, the
  backend and the options that change verdicts (the timeout); ``--resume`` with any of
  them different is refused, naming the first difference.
* **No torn lines.**  A line cut short by a kill is removed before anything is
  appended; a write that fails (a full disk) is undone back to the last whole line,
  and the run stops with one line saying what to do.

Worker processes of the run must not hold the file: :data:`PRIVATE_FDS` lists the
descriptors a forked worker closes first thing (:func:`conformance.runner.pack_worker`).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from conformance.errors import ConformanceError

FORMAT = "tosa-conformance-results"
FORMAT_VERSION = 1
# Descriptors of open results files; a forked worker closes them (see the docstring).
PRIVATE_FDS: set[int] = set()


class ResultsFileError(ConformanceError):
    """The results file cannot be used: locked by another run, from another run, or
    unwritable.  One line naming the file."""


def make_header(pack_sha256: str, backend: str, options: dict[str, Any]) -> dict[str, Any]:
    """The first line of a results file."""
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "pack_sha256": pack_sha256,
        "backend": backend,
        "options": dict(sorted(options.items())),
    }


def is_header(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("format") == FORMAT


def read_lines(path: Path) -> Iterator[dict[str, Any]]:
    """Every whole JSON object line of a results file (header included); a torn or
    garbled line is skipped."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    for line in data.split(b"\n"):
        try:
            doc = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue
        if isinstance(doc, dict):
            yield doc


class ResultsFile:
    """An open, locked results file.  Use as a context manager."""

    def __init__(self, path: Path, header: dict[str, Any], *, resume: bool) -> None:
        """Lock ``path`` and make it ready to append to: emptied and given ``header``,
        or (``resume``) checked against ``header`` and cut back to its last whole line.
        :attr:`previous` holds the result documents already in it."""
        self.path = path
        self.previous: list[dict[str, Any]] = []
        self.offset = 0  # the end of the last whole line
        try:
            self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise ResultsFileError(f"{path}: cannot open for writing: {exc.strerror}") from None
        try:
            self._lock()
            PRIVATE_FDS.add(self.fd)
            if resume:
                self._resume(header)
            else:
                os.ftruncate(self.fd, 0)  # never unlink: another reader may hold the name
                self._append(header)
        except BaseException:
            self.close()
            raise

    def _lock(self) -> None:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ResultsFileError(
                f"{self.path}: another run is writing to this results file; wait for it, "
                "or give this run another --json"
            ) from None

    def _resume(self, header: dict[str, Any]) -> None:
        size = os.fstat(self.fd).st_size
        data = os.pread(self.fd, size, 0) if size else b""
        whole = data.rfind(b"\n") + 1  # the torn tail of a killed run is cut off
        if whole != len(data):
            os.ftruncate(self.fd, whole)
        self.offset = whole
        docs = []
        for line in data[:whole].split(b"\n"):
            with contextlib.suppress(json.JSONDecodeError, UnicodeDecodeError):
                doc = json.loads(line)
                if isinstance(doc, dict):
                    docs.append(doc)
        if not docs:
            self._append(header)  # nothing to resume: a new file
            return
        first = docs[0]
        if not is_header(first):
            raise ResultsFileError(
                f"{self.path}: no header line, so it cannot be checked to belong to this "
                "run; rerun without --resume"
            )
        for key in ("format_version", "pack_sha256", "backend", "options"):
            if first.get(key) != header[key]:
                raise ResultsFileError(
                    f"{self.path}: written by another run ({key} {first.get(key)!r}, this run "
                    f"{header[key]!r}); rerun without --resume, or give another --json"
                )
        self.previous = [d for d in docs[1:] if not is_header(d)]

    def _append(self, doc: dict[str, Any]) -> None:
        line = (json.dumps(doc, sort_keys=True) + "\n").encode("utf-8")
        try:
            written = os.pwrite(self.fd, line, self.offset)
            if written != len(line):
                raise OSError(28, os.strerror(28))  # a short write: the disk filled up
        except OSError as exc:
            # Undo the partial line, so that the file ends with a whole line.
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, self.offset)
            raise ResultsFileError(
                f"{self.path}: cannot write a result: {exc.strerror}; the results before it "
                "are kept: free space and rerun with --resume"
            ) from None
        self.offset += len(line)

    def append(self, result: dict[str, Any]) -> None:
        """Add one result document as a line; ResultsFileError when it cannot be written."""
        self._append(result)

    def close(self) -> None:
        if self.fd < 0:
            return
        PRIVATE_FDS.discard(self.fd)
        os.close(self.fd)  # releases the lock
        self.fd = -1

    def __enter__(self) -> ResultsFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

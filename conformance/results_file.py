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
* **Read as strictly as a pack.**  Every reader (``run --resume``, ``merge``,
  ``certify --results``) opens the file as a regular file of bounded size and parses
  each line with :func:`parse_line` and :func:`check_header` / :func:`check_result`:
  a line that is not what ``run --json`` writes is refused, naming the file and the
  line, whatever it holds (any JSON type in any field, NaN, keys given twice, numbers
  of thousands of digits, deep nesting, bytes that are not UTF-8).
* **Never in a pack.**  A results file inside a pack (or that is one) is refused
  before it is opened.

Worker processes of the run must not hold the file: :data:`PRIVATE_FDS` lists the
descriptors a forked worker closes first thing (:func:`conformance.runner.pack_worker`).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

from conformance.atomic_file import check_regular, lock_fd
from conformance.errors import ConformanceError
from vectors.pack_errors import PackError
from vectors.pack_json import strict_loads
from vectors.pack_source import INDEX, max_file_bytes, open_source, read_regular_file

FORMAT = "tosa-conformance-results"
FORMAT_VERSION = 1
# Descriptors of open results files; a forked worker closes them (see the docstring).
PRIVATE_FDS: set[int] = set()
# A results file may be as large as a pack file (TOSA_CONFORMANCE_MAX_FILE_MIB, 64 MiB
# by default): a result line is 0.5 to 5 kB, so that is over ten thousand vectors.
WHAT = "a results file"


class ResultsFileError(ConformanceError):
    """The results file cannot be used: locked by another run, from another run, or
    unwritable.  One line naming the file."""


class RecordError(ValueError):
    """A line that is not a header or a result; the message says why, the caller
    names the file and the line."""


# A result line holds tens of values (a few per output): a line of more is refused
# before it is parsed, since [[],[],...] takes 20 times its size in memory.
_MAX_VALUES = 100_000
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_SHOWN = 60  # characters of a wrong value quoted in a message


def shown(value: Any) -> str:
    """``repr(value)``, cut short: a message quotes a hostile value, never all of it."""
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def parse_line(line: bytes) -> Any:
    """One line of a results file as JSON, parsed as a pack file is
    (vectors.pack_json.strict_loads), NaN refused too; RecordError says why not."""
    bare = _STRING.sub(b"", line)  # what is left outside strings: the structure
    if bare.count(b",") + bare.count(b"[") + bare.count(b"{") > _MAX_VALUES:
        raise RecordError(f"more than {_MAX_VALUES} values in one line")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(f"not UTF-8 text (byte {exc.start})") from None
    try:
        return strict_loads(text, allow_nan=False)
    except json.JSONDecodeError as exc:
        raise RecordError(f"not a JSON line: {exc.msg} (column {exc.colno})") from None
    except ValueError as exc:  # a key twice, a number too long, NaN
        raise RecordError(f"not a results line: {exc}") from None
    except RecursionError:
        raise RecordError("not a results line: nested too deeply") from None


def _text(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")  # a lone surrogate ("\ud800") is no text to write back
    except UnicodeEncodeError:
        return False
    return True


def check_header(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` if it is a header this version reads (see :func:`is_header`)."""
    version = doc.get("format_version")
    if type(version) is not int or version != FORMAT_VERSION:
        raise RecordError(
            f"a header of format_version {shown(version)}; this tosa-conformance reads "
            f"format_version {FORMAT_VERSION}"
        )
    for key, ok in (("pack_sha256", _text), ("backend", _text), ("options", _is_dict)):
        if not ok(doc.get(key)):
            raise RecordError(f"a header whose {key} is {shown(doc.get(key))}")
    return doc


def _is_dict(value: Any) -> bool:
    return isinstance(value, dict)


def _number(value: Any, *, optional: bool = False) -> bool:
    if value is None:
        return optional
    # bool is an int to Python, never a number here; inf/NaN are not JSON.
    return type(value) in (int, float) and math.isfinite(value)


@cache
def _verdicts() -> frozenset[str]:
    from conformance.verdicts import FAILURES, INFO, PASSED, SKIPPED, XFAIL, XPASS

    return frozenset({*FAILURES, INFO, PASSED, SKIPPED, XFAIL, XPASS})


def _text_map(value: Any) -> bool:
    return isinstance(value, dict) and all(_text(k) and _text(v) for k, v in value.items())


# What each field of a result (conformance.verdicts.VectorResult.to_json) and of each of
# its outputs (OutputVerdict) may be.
_OUTPUT: dict[str, Callable[[Any], bool]] = {
    "name": _text,
    "passed": lambda v: type(v) is bool,
    "message": _text,
    "margin": lambda v: _number(v, optional=True),
    "failing": lambda v: type(v) is int and v >= 0,
    "reading": _text,
}
_RESULT: dict[str, Callable[[Any], bool]] = {
    "vector": lambda v: _text(v) and v != "",
    "operator": _text,
    "mode": _text,
    "kind": _text,
    "verdict": lambda v: _text(v) and v in _verdicts(),
    "detail": _text,
    "margin": lambda v: _number(v, optional=True),
    "outputs": lambda v: isinstance(v, list),  # each checked below
    "seconds": lambda v: _number(v) and v >= 0,
    "log": _text,
    "reading": _text,
    "denormals": _text_map,
    "known_failure": lambda v: v == "" or (_text(v) and v in _verdicts()),
    "chain": lambda v: isinstance(v, list) and all(_text(x) and x != "" for x in v),
}
_REQUIRED = ("vector", "operator", "mode", "kind", "verdict")


def _check_fields(
    doc: dict[str, Any], fields: dict[str, Callable[[Any], bool]], where: str
) -> None:
    for key, value in doc.items():
        check = fields.get(key)
        if check is None:
            raise RecordError(f"not a result record: {where}an unknown field {shown(key)}")
        if not check(value):
            raise RecordError(f"not a result record: {where}{key} is {shown(value)}")


def check_result(doc: Any) -> dict[str, Any]:
    """``doc`` if it is a result as ``run --json`` writes it: every field of its type
    (a verdict one of the verdicts), none unknown, the required ones there."""
    if not isinstance(doc, dict):
        raise RecordError(f"not a result record: {shown(doc)}")
    missing = [k for k in _REQUIRED if k not in doc]
    if missing:
        raise RecordError(f"not a result record: no {missing[0]!r}")
    _check_fields(doc, _RESULT, "")
    for k, output in enumerate(doc.get("outputs", [])):
        if not isinstance(output, dict):
            raise RecordError(f"not a result record: outputs[{k}] is {shown(output)}")
        for key in ("name", "passed", "message"):
            if key not in output:
                raise RecordError(f"not a result record: outputs[{k}] has no {key!r}")
        _check_fields(output, _OUTPUT, f"outputs[{k}].")
    return doc


def check_line(line: bytes) -> dict[str, Any]:
    """A whole line as a header or a result document; RecordError otherwise."""
    doc = parse_line(line)
    if is_header(doc):
        return check_header(doc)
    return check_result(doc)


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


def read_data(path: Path) -> bytes | None:
    """The bytes of the results file ``path`` (None when there is none): a regular file
    within the size limit (vectors.pack_source.read_regular_file), so that a FIFO or
    ``/dev/zero`` given as one is refused, not read; PackError otherwise."""
    return read_regular_file(path, str(path), max_file_bytes(), WHAT)


def read_lines(path: Path) -> Iterator[dict[str, Any]]:
    """Every header and result line of a results file; a torn or garbled line is
    skipped (what a lenient reader of a file being written needs, as tests do)."""
    for attempt in range(5):
        try:
            data = read_data(path)
            break
        except PackError:  # "changed while it was read": a run appended meanwhile
            if attempt == 4:
                raise
    for line in (data or b"").split(b"\n"):
        try:
            yield check_line(line)
        except RecordError:
            continue


# -- never in a pack: a results file, a merged one, a certificate's folder ----------------


def in_a_pack(path: Path) -> str | None:
    """Where ``path`` is if it is in a pack, for a message ("is inside the pack P", "is
    the pack P"); None when it is in none."""
    pack = pack_holding(path)
    if pack is None:
        return None
    return f"is the pack {pack}" if pack == path.resolve() else f"is inside the pack {pack}"


def pack_holding(path: Path) -> Path | None:
    """The pack ``path`` is in or is (a folder with a ``pack.json`` above it, or a zip
    pack), links followed; None when it is in none."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError):  # a loop of links: the open that follows says so
        return None
    for folder in (real, *real.parents):
        try:
            if (folder / INDEX).is_file():
                return folder
        except OSError:  # a folder this user may not look into holds no pack of theirs
            continue
    if real.is_file():
        try:
            open_source(real).close()
        except (PackError, OSError):
            return None
        return real
    return None


_NOT_RESUMED = "not what 'run --json' writes, so not resumed: rerun without --resume"


class ResultsFile:
    """An open, locked results file.  Use as a context manager."""

    def __init__(self, path: Path, header: dict[str, Any], *, resume: bool) -> None:
        """Lock ``path`` and make it ready to append to: emptied and given ``header``,
        or (``resume``) checked against ``header`` and cut back to its last whole line.
        :attr:`previous` holds the result documents already in it."""
        self.path = path
        self.previous: list[dict[str, Any]] = []
        self.offset = 0  # the end of the last whole line
        self.fd = -1
        where = in_a_pack(path)
        if where is not None:
            raise ResultsFileError(
                f"{path}: {where}; a results file is never written into a pack: give "
                "--json a path outside it"
            )
        try:
            # O_NONBLOCK: a FIFO given as the file must not block the open.
            flags = os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC
            self.fd = os.open(path, flags, 0o644)
        except OSError as exc:
            raise ResultsFileError(f"{path}: cannot open for writing: {exc.strerror}") from None
        try:
            check_regular(self.fd, path, ResultsFileError)
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
        lock_fd(
            self.fd,
            f"{self.path}: another run is writing to this results file; wait for it, "
            "or give this run another --json",
            ResultsFileError,
        )

    def _resume(self, header: dict[str, Any]) -> None:
        size = os.fstat(self.fd).st_size
        limit = max_file_bytes()
        if size > limit:
            raise ResultsFileError(
                f"{self.path}: {size} bytes, more than the {limit >> 20} MiB {WHAT} may "
                "have (set TOSA_CONFORMANCE_MAX_FILE_MIB to raise the limit)"
            )
        data = os.pread(self.fd, size, 0) if size else b""
        whole = data.rfind(b"\n") + 1  # the torn tail of a killed run is cut off
        docs = self._checked(data[:whole].split(b"\n")[:-1], header)
        if not docs:
            os.ftruncate(self.fd, 0)
            self._append(header)  # nothing to resume: a new file
            return
        # Only a file that is this run's is touched: its torn tail goes.
        if whole != len(data):
            os.ftruncate(self.fd, whole)
        self.offset = whole
        self.previous = docs[1:]

    def _checked(self, lines: list[bytes], header: dict[str, Any]) -> list[dict[str, Any]]:
        """The header and results of ``lines``, the header this run's; ResultsFileError,
        naming the line, for anything else: a file 'run --json' did not write is not
        resumed."""
        docs: list[dict[str, Any]] = []
        seen: set[str] = set()
        for number, line in enumerate(lines, 1):
            try:
                doc = parse_line(line)
                if number == 1 and not is_header(doc):
                    raise self._no_header()
                doc = check_header(doc) if is_header(doc) else check_result(doc)
            except RecordError as exc:
                raise ResultsFileError(f"{self.path}:{number}: {exc}; {_NOT_RESUMED}") from None
            if number == 1:
                self._same_run(doc, header)
            elif is_header(doc):
                raise ResultsFileError(
                    f"{self.path}:{number}: a second header: two runs in one file; "
                    f"{_NOT_RESUMED}"
                )
            elif doc["vector"] in seen:
                raise ResultsFileError(
                    f"{self.path}:{number}: vector {shown(doc['vector'])} is on an earlier "
                    f"line too; {_NOT_RESUMED}"
                )
            else:
                seen.add(doc["vector"])
            docs.append(doc)
        return docs

    def _no_header(self) -> ResultsFileError:
        return ResultsFileError(
            f"{self.path}: no header line, so it cannot be checked to belong to this run; "
            "rerun without --resume"
        )

    def _same_run(self, first: dict[str, Any], header: dict[str, Any]) -> None:
        for key in ("format_version", "pack_sha256", "backend", "options"):
            if first.get(key) != header[key]:
                raise ResultsFileError(
                    f"{self.path}: written by another run ({key} {shown(first.get(key))}, "
                    f"this run {shown(header[key])}); rerun without --resume, or give "
                    "another --json"
                )

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

"""Output files written whole or not at all, and locks that keep two writers apart.

* :func:`write_files` writes each file to ``NAME.tmp`` beside it and fsyncs it; only
  when every one is written are they renamed over the files.  A reader sees a file as
  it was or as it is now, never half of one; a write that fails (a full disk) removes
  the temporary files and leaves every file as it was.  A path that is not a regular
  file (``/dev/null``, a FIFO) is refused, never replaced.
* :class:`Lock` holds an exclusive ``flock`` on a file or a folder itself (so no lock
  file is left behind), released by :meth:`Lock.close` or when the process ends,
  however it ends.  ``run --json F`` holds one on F (conformance.results_file), so
  ``merge --json F``, which locks F too, is refused while a run writes it.

docs/reliability.md states these guarantees; tests/reliability/test_results_files.py
checks them.  Like the core modules, this one imports nothing of ``vectors``: the pack
writer uses it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from collections.abc import Mapping
from pathlib import Path

from conformance.errors import ConformanceError


class OutputError(ConformanceError):
    """An output that cannot be written, or that another command holds; one line
    naming the file.  ``reason`` is the system's word for a failed write."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message


def lock_fd(fd: int, busy: str, error: type[ConformanceError] = OutputError) -> None:
    """An exclusive flock on ``fd``, without waiting: ``error(busy)`` when another
    process holds it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise error(busy) from None


def check_regular(fd: int, label: object, error: type[ConformanceError] = OutputError) -> None:
    """Refuse what is not a regular file: a device or a FIFO is never truncated, read
    to its end or replaced."""
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        raise error(f"{label}: not a regular file ({file_kind(mode)}); refused")


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, for a message: "a FIFO", ..."""
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


class Lock:
    """An exclusive lock on ``path`` (a file, created empty when missing, or with
    ``folder`` a folder), held until :meth:`close`; ``error(busy)`` when another
    process holds it."""

    def __init__(
        self,
        path: Path,
        busy: str,
        *,
        folder: bool = False,
        error: type[ConformanceError] = OutputError,
    ) -> None:
        self.path = path
        self.created = False  # this lock made the file: remove it if nothing is written
        # O_NONBLOCK: opening a FIFO must not wait for a writer.
        flags = os.O_RDONLY | os.O_CLOEXEC | (os.O_DIRECTORY if folder else os.O_NONBLOCK)
        try:
            try:
                self.fd = os.open(path, flags)
            except FileNotFoundError:
                if folder:
                    raise
                self.fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o666)
                self.created = True
        except OSError as exc:
            raise error(f"{path}: cannot open: {exc.strerror or exc}") from None
        try:
            if not folder:
                check_regular(self.fd, path, error)
            lock_fd(self.fd, busy, error)
        except BaseException:
            self.created = False  # not this lock's to remove: another process's file
            self.close()
            raise

    def close(self, *, failed: bool = False) -> None:
        """Release the lock; with ``failed``, remove the file if this lock made it."""
        if self.fd < 0:
            return
        if failed and self.created:
            with contextlib.suppress(OSError):
                os.unlink(self.path)
        os.close(self.fd)
        self.fd = -1


def _write_new(tmp: Path, data: bytes) -> None:
    """``data`` as the new file ``tmp``, on disk (fsync) before it is renamed."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)  # left by a write that was killed; never followed if a link
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    try:
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            if n <= 0:  # a write that makes no progress: the disk is full
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            view = view[n:]
        os.fsync(fd)
    finally:
        os.close(fd)


def _sync_folder(folder: Path) -> None:
    """Make the renames in ``folder`` durable; a file system that cannot is no error."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_files(files: Mapping[Path, bytes], *, busy: str | None = None) -> None:
    """Write every file whole, or none (see the module docstring); with ``busy``, each
    target is locked while it is written, and ``OutputError(busy)`` when another process
    holds it.  OutputError, naming the file, for any failure."""
    locks: list[Lock] = []
    tmps: list[Path] = []
    done = False
    path = next(iter(files), Path())
    try:
        for path in files:
            if busy is not None:
                locks.append(Lock(path, busy))
            else:
                _refuse_irregular(path)
        for path, data in files.items():
            tmp = path.with_name(path.name + ".tmp")
            tmps.append(tmp)
            _write_new(tmp, data)
        for path, tmp in zip(files, tmps, strict=True):
            os.replace(tmp, path)
        done = True
        for folder in {p.parent for p in files}:
            _sync_folder(folder)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        full = exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
        message = f"{path}: cannot write: {reason}; the file is as it was"
        raise OutputError(message + ("; free space and rerun" if full else ""), reason) from None
    finally:
        for tmp in tmps:  # none is left, whatever stopped the write (a full disk, Ctrl-C)
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        for lock in locks:
            lock.close(failed=not done)


def _refuse_irregular(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        check_regular(fd, path)
    finally:
        os.close(fd)

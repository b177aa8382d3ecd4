"""Runs a ``command:`` program with the pack out of its reach.

Why: a program under test can look for the answers.  It found the pack through its
parent's command line (``/proc/PPID/cmdline``), copied ``expected-*.npy`` and
"passed" without computing anything.  On Linux, where unprivileged user namespaces
are allowed, each program therefore runs through util-linux ``unshare`` in new user,
mount and PID namespaces of its own:

* every path given to :func:`keep_out` (the pack the run reads) is covered: a folder
  by an empty read-only tmpfs, a file (a zipped pack) by ``/dev/null``;
* a fresh ``/proc`` shows only the sandbox's own processes: no other process's
  command line, environment, open files or memory can be read, and when the
  sandbox's first process ends the kernel kills everything the program left;
* the paths to cover reach the sandbox through a pipe, never a command line.

The program keeps the run's environment, its devices, the network and the rest of the
file system, and runs in the run's current folder unless that is inside the pack (then
in its work folder).  Where the namespaces are not allowed the program runs without
them, and :func:`status` says why; certificates record it (docs/reliability.md says
what each case proves).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

# Exit status and first word of the sandbox's own failure (never the program's).
SETUP_FAILED = 125
MARKER = "tosa-conformance-sandbox:"
_UNSHARE_OPTIONS = (
    "--user",
    "--map-root-user",
    "--mount",
    "--pid",
    "--fork",
    "--mount-proc",
    "--kill-child=SIGKILL",
)
# POSIX sh, run as the sandbox's first process.  It reads from its stdin (a pipe),
# then gives the program /dev/null: the folder to run in, the work folder, then one
# path per line to cover.  The program
# runs as its child, not by exec: a PID 1 ignores signals it has no handler for, so
# a program that raised SIGSEGV itself would survive it.  Its death by signal N comes
# back as status 128+N, which the backend reads as a crash.
_SCRIPT = f"""
fail() {{ echo "{MARKER} $1" >&2; exit {SETUP_FAILED}; }}
IFS= read -r here || fail "no folder given"
IFS= read -r work || fail "no work folder given"
while IFS= read -r p; do
  if [ -d "$p" ]; then
    mount -t tmpfs -o ro,size=4k,mode=0555 tosa-kept-out "$p" || fail "cannot cover $p"
  elif [ -e "$p" ]; then
    mount --bind /dev/null "$p" || fail "cannot cover $p"
  fi
done
exec </dev/null
cd -- "$here" 2>/dev/null || cd -- "$work" || fail "cannot enter $work"
"$@"
exit $?
"""

_KEPT_OUT: list[Path] = []


def keep_out(path: str | os.PathLike[str]) -> None:
    """Hide ``path`` (and all below it) from every program started after this call."""
    real = Path(path).resolve()
    if real not in _KEPT_OUT:
        _KEPT_OUT.append(real)


def kept_out() -> tuple[Path, ...]:
    return tuple(_KEPT_OUT)


@functools.cache
def unavailable() -> str | None:
    """Why programs cannot be sandboxed here, or None when they can (checked once)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return "util-linux unshare is not installed"
    try:
        probe = subprocess.run(
            [unshare, *_UNSHARE_OPTIONS, "sh", "-c", "mount -t tmpfs tosa-probe /tmp"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare cannot run: {exc}"
    if probe.returncode != 0:
        why = probe.stderr.decode(errors="replace").strip().splitlines()
        return f"namespaces not allowed here ({why[-1] if why else probe.returncode})"
    return None


def status(enabled: bool = True) -> str:
    """How programs run, in words for a certificate and a report."""
    if not enabled:
        return "none: turned off with --no-sandbox"
    why = unavailable()
    if why is not None:
        return f"none: {why}"
    return "namespaces: user, mount, pid; the pack covered"


@contextlib.contextmanager
def wrapped(argv: list[str], workdir: Path) -> Iterator[tuple[list[str], int]]:
    """The command line that starts ``argv`` sandboxed, and the descriptor to give it
    as stdin: ``with wrapped(argv, workdir) as (cmd, stdin): Popen(cmd, stdin=stdin)``.
    The pipe's read end is closed on leaving.
    """
    unshare = shutil.which("unshare")
    assert unshare is not None  # unavailable() said so before
    lines = [os.getcwd(), str(workdir)]
    for p in kept_out():
        if workdir == p or p in workdir.parents:
            raise RuntimeError(
                f"the work folder {workdir} is inside the pack {p}: set TMPDIR elsewhere"
            )
        lines.append(str(p))
    if any("\n" in line for line in lines):
        raise RuntimeError("a path with a line break cannot be handed to the sandbox")
    data = ("\n".join(lines) + "\n").encode()
    read_end, write_end = os.pipe()
    try:
        # Far below a pipe's buffer for any real set of paths, so this cannot block.
        os.write(write_end, data)
    finally:
        os.close(write_end)
    try:
        yield [unshare, *_UNSHARE_OPTIONS, "sh", "-c", _SCRIPT, "sh", *argv], read_end
    finally:
        os.close(read_end)


def setup_failure(code: int, log: str) -> str | None:
    """The sandbox's own complaint, when it (not the program) ended the run."""
    if code != SETUP_FAILED:
        return None
    for line in log.splitlines():
        if line.startswith(MARKER):
            return line.removeprefix(MARKER).strip()
    return None

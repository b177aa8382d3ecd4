"""What the benchmarks share: timing a command, measuring a folder, printing a table.

Run the benchmarks as scripts (``python benchmarks/NAME.py``), so that this module is
importable from the script's own folder.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

# Our claim profile -> the tosa-tools profile with the same data types. MI includes BI in
# our claim model, while tosa-pro-fp has no integer modes, so the MI rows are not the same
# set of modes: the docs say so beside the tables.
ARM_PROFILE = {"BI": "tosa-pro-int", "MI": "tosa-pro-fp"}


@dataclass
class Timed:
    """One command: wall seconds, CPU seconds of it and everything it waited for."""

    argv: list[str]
    wall: float
    cpu: float
    returncode: int
    output: str
    timed_out: bool = False


def children_cpu() -> float:
    """User + system CPU seconds of all reaped child processes so far.

    RUSAGE_CHILDREN counts a child together with the descendants it waited for, so the
    worker processes of a ``--jobs N`` run are included. It is the fair measure on a
    shared machine: wall time grows with other jobs' load, CPU time barely does.
    """
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_timed(argv: Sequence[str], cwd: Path | None = None, timeout: float | None = None) -> Timed:
    """Run ``argv`` to completion, its stdout and stderr captured together.

    After ``timeout`` seconds the command's whole process group is killed (a generator's
    workers too, not just the process we started) and the result says ``timed_out``.
    """
    cpu0 = children_cpu()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        list(argv),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=timeout is not None,
    )
    timed_out = False
    try:
        output, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
    wall = time.perf_counter() - t0
    cpu = children_cpu() - cpu0
    return Timed(list(argv), wall, cpu, proc.returncode, output, timed_out)


def tree_bytes(root: Path) -> tuple[int, int]:
    """(bytes in files, bytes allocated on disk) under ``root``.

    Both, because a suite of many small files costs far more allocated blocks than its
    byte count says; the per-vector figures use the file bytes, which do not depend on
    the file system.
    """
    size = allocated = 0
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            st = os.lstat(os.path.join(dirpath, name))
            size += st.st_size
            allocated += st.st_blocks * 512
    return size, allocated


def interpreter_bin_on_path() -> None:
    """Put this interpreter's scripts folder first on PATH, so that the tools installed
    beside it are found (and find each other by name) also when the benchmark runs as
    ``venv/bin/python benchmarks/NAME.py`` without an activated virtualenv."""
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])


def package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def pack_kinds(pack: Path) -> tuple[int, str]:
    """Vectors in a pack of ours and how many of each kind, most first: "149 error, 74 valid"."""
    doc = json.loads((pack / "pack.json").read_text(encoding="utf-8"))
    kinds = Counter(v.get("kind", "?") for v in doc["vectors"])
    what = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
    return len(doc["vectors"]), what


def machine_line() -> str:
    """Cores and load average, because every wall time below depends on them."""
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{os.cpu_count()} cores, load average {load} (1, 5, 15 min)"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table; columns whose every cell is a number are right-aligned."""

    def numeric(col: int) -> bool:
        cells = [r[col] for r in rows if r[col] not in ("", "–")]
        return bool(cells) and all(_is_number(c) for c in cells)

    align = ["---:" if numeric(i) else "---" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", ""))
    except ValueError:
        return False
    return True


def tail(text: str, lines: int = 5) -> str:
    """The last lines of a command's output, for an error message."""
    return "\n".join(text.rstrip().splitlines()[-lines:])

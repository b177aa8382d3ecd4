"""What the benchmarks share: timing a command, measuring a folder, printing a table.

Run the benchmarks as scripts (``python benchmarks/NAME.py``), so that this module is
importable from the script's own folder.
"""

from __future__ import annotations

import os
import resource
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Timed:
    """One command: wall seconds, CPU seconds of it and everything it waited for."""

    argv: list[str]
    wall: float
    cpu: float
    returncode: int
    output: str


def children_cpu() -> float:
    """User + system CPU seconds of all reaped child processes so far.

    RUSAGE_CHILDREN counts a child together with the descendants it waited for, so the
    worker processes of a ``--jobs N`` run are included. It is the fair measure on a
    shared machine: wall time grows with other jobs' load, CPU time barely does.
    """
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_timed(argv: Sequence[str], cwd: Path | None = None) -> Timed:
    """Run ``argv`` to completion, its stdout and stderr captured together."""
    cpu0 = children_cpu()
    t0 = time.perf_counter()
    proc = subprocess.run(
        list(argv),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - t0
    cpu = children_cpu() - cpu0
    return Timed(list(argv), wall, cpu, proc.returncode, proc.stdout)


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

"""What the benchmarks share: timing a command, measuring a folder, printing a table.

Run the benchmarks as scripts (``python benchmarks/NAME.py``), so that this module is
importable from the script's own folder.
"""

from __future__ import annotations

import argparse
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

OUR_TOOL = "tosa-conformance"


@dataclass(frozen=True)
class TosaRevision:
    """One TOSA revision as the benchmarks name it to each tool: our ``--tosa`` and
    profiles, and the tosa-tools ``--profile`` and ``--tosa-version`` that match them."""

    name: str  # our --tosa
    int_profile: str  # our profile of the integer modes
    fp_profile: str  # our profile of the floating-point modes
    # The 2024 draft's MI claim includes BI, so its MI rows hold integer modes that
    # tosa-pro-fp has not; 1.0's PRO-FP is floating point only, like tosa-pro-fp.
    fp_includes_int: bool
    # tosa-tools' --tosa-version (it knows 1.0.2 and 1.1.0-draft); None: its default,
    # as the 2024 draft's recorded runs had it.
    arm_version: str | None

    @property
    def ours(self) -> list[str]:
        """Our global option, given before the command on every command line."""
        return ["--tosa", self.name]

    @property
    def profiles(self) -> list[str]:
        return [self.int_profile, self.fp_profile]

    @property
    def every_mode(self) -> list[str]:
        """The profiles of a claim with every mode, integer and floating point."""
        return [self.fp_profile] if self.fp_includes_int else self.profiles

    def arm_profile(self, profile: str) -> str:
        """The tosa-tools profile with the data types of our ``profile``."""
        return {self.int_profile: "tosa-pro-int", self.fp_profile: "tosa-pro-fp"}[profile]

    @property
    def arm_version_args(self) -> list[str]:
        return [] if self.arm_version is None else ["--tosa-version", self.arm_version]


TOSA_REVISIONS = {
    r.name: r
    for r in (
        TosaRevision("1.0", "PRO-INT", "PRO-FP", False, "1.0.2"),
        TosaRevision("1.1-draft", "PRO-INT", "PRO-FP", False, "1.1.0-draft"),
        TosaRevision("2024-04-draft", "BI", "MI", True, None),
    )
}
# The tool's own default (conformance.revisions.DEFAULT_REVISION), passed explicitly so
# that $TOSA_CONFORMANCE_REVISION cannot change what a benchmark measures.
DEFAULT_TOSA = "1.0"


def add_tosa_option(ap: argparse.ArgumentParser) -> None:
    ap.add_argument(
        "--tosa",
        default=DEFAULT_TOSA,
        choices=list(TOSA_REVISIONS),
        metavar="REVISION",
        help=f"the TOSA revision of our packs: {', '.join(TOSA_REVISIONS)} "
        f"(default {DEFAULT_TOSA}); it names the profiles",
    )


def profiles_option(
    ap: argparse.ArgumentParser,
    text: str | None,
    rev: TosaRevision,
    default: Sequence[str] | None = None,
) -> list[str]:
    """Our profiles from a comma-separated option; when it is not given, ``default`` or
    else the revision's two. A name of another revision is refused with the ``--tosa``
    that has it."""
    if text is None:
        return list(default) if default is not None else rev.profiles
    profiles = [p for p in text.split(",") if p]
    for p in profiles:
        if p in rev.profiles:
            continue
        has = [r.name for r in TOSA_REVISIONS.values() if p in r.profiles]
        hint = f" ({p} is a profile of --tosa {has[0]})" if has else ""
        ap.error(f"--tosa {rev.name} has no profile {p}; choose from {rev.profiles}{hint}")
    return profiles


# A --vectors pattern that matches no name: a run of it is the fixed cost of a run. Since
# 2026-12-01 `run` stops such a run at the selection, before any worker starts, with
# this exit status (conformance.cli.options.NO_VECTORS), which is then its success.
NO_VECTOR = "(?!)"
NO_VECTORS_EXIT = 5


def run_exit_ok(argv: Sequence[str], returncode: int) -> bool:
    """A ``run`` that ended as a benchmark wants: 0, or 1 (a vector failed: a verdict, not
    a broken benchmark), or the empty selection's status for a NO_VECTOR run."""
    if "--vectors" in argv and NO_VECTOR in argv:
        return returncode == NO_VECTORS_EXIT
    return returncode in (0, 1)


def run_results(path: Path) -> list[dict[str, object]]:
    """The result lines of a ``run --json`` file, without its header line (the first,
    ``"format": "tosa-conformance-results"``, since 2026-12-01)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    docs = [json.loads(line) for line in lines if line.strip()]
    return [d for d in docs if d.get("format") != "tosa-conformance-results"]


def generate_argv(rev: TosaRevision, profiles: Sequence[str], *options: str) -> list[str]:
    """``tosa-conformance --tosa REV generate --profile P ... OPTIONS``."""
    claim = [arg for p in profiles for arg in ("--profile", p)]
    return [OUR_TOOL, *rev.ours, "generate", *claim, *options]


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

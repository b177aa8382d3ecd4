"""Builders of hostile packs and faulty backends, and the process checks, for the
fault-injection suite (docs/reliability.md).

Everything is made here, from a small generated pack: zip bombs (a member that
inflates to gigabytes from a few megabytes, honest about its size or lying), headers
declaring absurd shapes, links out of the pack, FIFOs, duplicate zip members.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from vectors import pack_json

# Each test module sets pytestmark = LINUX_ONLY: the suite reads /proc and uses prctl.
LINUX_ONLY = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the fault-injection suite reads /proc"
)

CLI = [sys.executable, "-m", "conformance.cli.main"]


def rehash(pack: Path) -> None:
    """Make pack.json agree with the files again, so only the planted fault is left."""
    index = pack / "pack.json"
    doc = json.loads(index.read_text())
    for v in doc["vectors"]:
        for file in v["files"]:
            path = pack / v["name"] / file
            if path.is_file() and not path.is_symlink():
                v["files"][file] = pack_json.sha256(path.read_bytes())
    doc.pop("pack_sha256")
    doc["pack_sha256"] = pack_json.sha256(pack_json.canonical(doc))
    index.write_bytes(pack_json.dumps(doc))


def copy_pack(pack: Path, to: Path) -> Path:
    shutil.copytree(pack, to, symlinks=True)
    return to


def first_input(pack: Path) -> Path:
    """input-0.npy of the pack's first valid vector."""
    doc = json.loads((pack / "pack.json").read_text())
    name = next(v["name"] for v in doc["vectors"] if v["kind"] == "valid")
    return pack / name / "input-0.npy"


# ----------------------------------------------------------------------------- zips


def _deflated_zeros(size: int, crc: bool) -> tuple[bytes, int]:
    """A raw deflate stream of ``size`` zero bytes, and its CRC-32 (0 unless ``crc``),
    made in O(output): with full flushes every 1 MiB block compresses to the same bytes."""
    block = 1 << 20
    zeros = bytes(block)
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    middle = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    full, rest = divmod(size, block)
    assert full >= 2
    tail = c.compress(bytes(rest)) + c.flush()
    value = 0
    big = bytes(64 << 20) if crc else b""  # the CRC of zeros, 64 MiB at a time
    left = size if crc else 0
    while left:
        n = min(left, len(big))
        value = zlib.crc32(memoryview(big)[:n], value)
        left -= n
    return head + middle * (full - 1) + tail, value


def write_zip(
    path: Path,
    members: Sequence[tuple[str, bytes]],
    bomb: tuple[str, int] | None = None,
    declared: int | None = None,
    crc: bool = True,
) -> None:
    """A zip of ``members`` (stored), plus ``bomb`` = (name, size): a deflated member of
    ``size`` zero bytes that says it is ``declared`` bytes (its true size by default).
    Names may repeat.  Written by hand, because zipfile cannot write a lying header.
    ``crc=False`` leaves the bomb's CRC 0 (quicker; a reader that checks sizes first
    never gets to the CRC)."""
    entries: list[tuple[str, bytes, int, int, int, int]] = []  # name, data, method, crc, usize
    for name, data in members:
        entries.append((name, data, 0, zlib.crc32(data), len(data), len(data)))
    if bomb is not None:
        name, size = bomb
        data, value = _deflated_zeros(size, crc)
        entries.append((name, data, 8, value, size if declared is None else declared, size))
    out = bytearray()
    central = bytearray()
    for name, data, method, checksum, usize, _true in entries:
        raw = name.encode()
        offset = len(out)
        out += struct.pack(
            "<IHHHHHIIIHH",
            0x04034B50,
            20,
            0,
            method,
            0,
            0x21,
            checksum,
            len(data),
            usize,
            len(raw),
            0,
        )
        out += raw + data
        central += struct.pack(
            "<IHHHHHHIIIHHHHHII",
            0x02014B50,
            20,
            20,
            0,
            method,
            0,
            0x21,
            checksum,
            len(data),
            usize,
            len(raw),
            0,
            0,
            0,
            0,
            0o644 << 16,
            offset,
        )
        central += raw
    start = len(out)
    out += central
    n = len(entries)
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, len(central), start, 0)
    path.write_bytes(bytes(out))


def pack_members(pack: Path) -> list[tuple[str, bytes]]:
    """The pack's files as (zip name, bytes), pack.json first."""
    files = sorted(p for p in pack.rglob("*") if p.is_file())
    files.sort(key=lambda p: p.name != "pack.json")
    return [(p.relative_to(pack).as_posix(), p.read_bytes()) for p in files]


# ----------------------------------------------------------------------------- processes


def limited(max_bytes: int) -> Callable[[], None]:
    """A preexec_fn capping the address space (RLIMIT_AS) of the command it runs."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))

    return cap


def run_cli(
    args: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    max_memory: int | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """``tosa-conformance ARGS`` in a subprocess (optionally under RLIMIT_AS)."""
    return subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        preexec_fn=limited(max_memory) if max_memory else None,
        check=False,
    )


def max_rss_of_children() -> int:
    """Peak resident set size of this process's waited-for children, in bytes."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024


def processes_with(marker: str) -> list[int]:
    """Live processes (not zombies) whose command line holds ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            stat = Path(f"/proc/{entry}/stat").read_bytes()
        except OSError:
            continue
        state = stat[stat.rfind(b")") + 2 :].split()[0]
        if marker.encode() in cmdline and state not in (b"Z", b"X"):
            found.append(int(entry))
    return found


def alive(pids: Sequence[int]) -> list[int]:
    out = []
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_bytes()
        except OSError:
            continue
        if stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X"):
            out.append(pid)
    return out


def wait_until(predicate: Callable[[], object], timeout: float = 20.0) -> bool:
    """Poll ``predicate()`` until true or ``timeout`` seconds pass (never asserted on
    time: a slow machine only waits longer)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return bool(predicate())

"""Files and options a user gives (issue 26): a FIFO, a device or a huge file named for
reading is refused with one line, a known-failures line that would backtrack for ever
is refused before any vector runs, and --shard N costs nothing whatever N is."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hostile import LINUX_ONLY, run_cli
from hypothesis import given
from hypothesis import strategies as st

from conformance.capabilities import ManifestError, load_manifest
from conformance.selection import (
    MATCH_BUDGET,
    READ_LENGTH,
    KnownFailures,
    SelectionError,
    Shard,
    name_pattern,
)
from conformance.spec import SpecError, load_revision, load_spec
from vectors.pack_source import MAX_FILE_ENV

pytestmark = LINUX_ONLY

GIB = 1 << 30


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tosa-conformance: error: "), proc.stderr
    return lines[0]


# ----------------------------------------------------------------------------- named files


def _argv(option: str, path: str, pack: Path, tmp_path: Path) -> list[str]:
    run = ["run", "--pack", str(pack), "--backend", "reference", "--quiet"]
    return {
        "--known-failures": [*run, "--known-failures", path],
        "--capabilities": [*run, "--capabilities", path],
        "certify --known-failures": [
            "certify",
            "--pack",
            str(pack),
            "--backend",
            "reference",
            "--profile",
            "BI",
            "-o",
            str(tmp_path / "cert"),
            "--quiet",
            "--known-failures",
            path,
        ],
        "capabilities show": ["capabilities", "show", path],
        "--spec": ["--spec", path, "spec", "levels"],
    }[option]


OPTIONS = [
    "--known-failures",
    "certify --known-failures",
    "--capabilities",
    "capabilities show",
    "--spec",
]


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero"])
@pytest.mark.parametrize("option", OPTIONS)
def test_a_named_fifo_or_device_is_one_line(
    small_pack: Path, tmp_path: Path, option: str, kind: str
) -> None:
    path = "/dev/zero"
    if kind == "fifo":
        path = str(tmp_path / "named.txt")
        os.mkfifo(path)
    # A hang fails by TimeoutExpired; reading /dev/zero, by MemoryError under the cap.
    argv = _argv(option, path, small_pack, tmp_path)
    proc = run_cli(argv, max_memory=int(1.5 * GIB), timeout=120)
    what = "a FIFO" if kind == "fifo" else "a character device"
    line = one_error_line(proc)
    assert f"{path}: " in line and f"not a regular file ({what}); refused" in line


def test_a_named_file_above_the_limit_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MAX_FILE_ENV, "1")
    big = tmp_path / "big"
    with big.open("wb") as f:
        f.truncate(2 << 20)  # sparse: nothing to read, only its size to see
    spec = load_revision("2024-04-draft")
    with pytest.raises(SelectionError, match="more than the 1 MiB a known-failures file may"):
        KnownFailures.read(big)
    with pytest.raises(ManifestError, match="more than the 1 MiB a capability manifest may"):
        load_manifest(str(big), spec)
    with pytest.raises(SpecError, match=f"{big}: cannot read file: 2097152 bytes, more than"):
        load_spec(big)


def test_a_named_file_that_is_missing_or_not_text(tmp_path: Path) -> None:
    with pytest.raises(SelectionError, match="nope: no such file"):
        KnownFailures.read(tmp_path / "nope")
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"ADD_\xe9\n")
    with pytest.raises(SelectionError, match=r"latin1.txt: not UTF-8 text \(byte 4\)"):
        KnownFailures.read(bad)


# ----------------------------------------------------------------------------- patterns

# Each backtracks exponentially on some name: a repetition of something that can end
# in more than one way.
EXPONENTIAL = [
    r"(a+)+$",
    r"([\w-]+)+_x",
    r"(a|a)*",
    r"(a|aa)+b",
    r"(.*)*x",
    r"(x+x+)+y",
    r"(\w+_)+\d+",
    r"(a?){30}a{30}",
    r"(?:a{1,1000}){1,1000}x",
]
# What lists hold (tests/app, docs/workflow.md), and repetitions that look nested but
# are not ambiguous: each must still be accepted.
ACCEPTED = [
    "ADD::ADD_fp16_valid_000",
    r"ADD_fp16_(?!error_).*",
    r"ADD_fp16_valid_.*",
    r"(ADD|SUB)_i32_.*",
    r"CONV2D_.*_fp16_.*_valid_.*",
    r".*_fp32_.*",
    r"(?i)add_(fp16|fp32)+_.*",
    r"ADD(_[a-z0-9]+)+",
    r"(\d+_)+x",
    r"(a|ab)*c",
    r"((ab)*c)*d",
    r"[A-Z0-9_]+::.*_\d{3}",
    r"(?=.*fp16).*valid.*",
]


@pytest.mark.parametrize("pattern", EXPONENTIAL)
def test_a_catastrophic_pattern_is_refused_when_read(pattern: str, tmp_path: Path) -> None:
    known = tmp_path / "known.txt"
    known.write_text(f"ADD_.*  # fine\n{pattern}  # ticket 9\n")
    with pytest.raises(SelectionError, match=r"known.txt:2: .* could take too long to match"):
        KnownFailures.read(known)
    with pytest.raises(SelectionError, match=r"^--exclude .* exponential in the length"):
        name_pattern(f"--exclude {pattern!r}", pattern)


@pytest.mark.parametrize("pattern", ACCEPTED)
def test_ordinary_patterns_are_accepted(pattern: str) -> None:
    assert name_pattern("x", pattern).max_length >= 100


def test_many_unbounded_repetitions_are_bounded_by_the_name_length() -> None:
    # Four '.*' in a row: fine for names of 136 characters, refused for longer ones
    # (comb(n + 4, 4) tries grow as n**4); seven: refused outright.
    four = name_pattern("--vectors '...'", ".*a.*b.*c.*d")
    assert READ_LENGTH <= four.max_length < 1000
    assert four.fullmatch("xaxbxcxd")
    with pytest.raises(SelectionError, match="cannot be matched in bounded time against a name"):
        four.fullmatch("a" * (four.max_length + 1))
    with pytest.raises(SelectionError, match="unbounded repetition"):
        name_pattern("x", ".*a.*b.*c.*d.*e.*f.*g")
    assert MATCH_BUDGET == 2 * 10**8  # what the docs and the numbers above assume


def test_a_catastrophic_known_failure_does_not_hang_run(small_pack: Path, tmp_path: Path) -> None:
    # ([\w-]+)+_x tries 2**40 ways on a 40-character name: before, run never started.
    known = tmp_path / "known.txt"
    known.write_text("([\\w-]+)+_x  # ticket 9\n")
    proc = run_cli(_argv("--known-failures", str(known), small_pack, tmp_path), timeout=120)
    assert "known.txt:1: '([\\\\w-]+)+_x' could take too long to match" in one_error_line(proc)


# ----------------------------------------------------------------------------- shards


def _take_by_scanning(shard: Shard, names: list[str], cost: dict[str, int]) -> list[str]:
    """The assignment before issue 26: a scan of every shard per vector."""
    loads = [0] * shard.count
    mine: set[str] = set()
    for name in sorted(names, key=lambda n: (-cost.get(n, 0), n)):
        k = min(range(shard.count), key=lambda i: (loads[i], i))
        loads[k] += max(1, cost.get(name, 0))
        if k == shard.index - 1:
            mine.add(name)
    return [n for n in names if n in mine]


@given(data=st.data())
def test_shard_take_assigns_as_the_scan_did(data: st.DataObject) -> None:
    # Costs missing for some names (zero), repeated names, many ties (equal costs), more
    # shards than names and shards past the last vector: all as before.
    names = data.draw(st.lists(st.text("abc_01", min_size=1, max_size=4), max_size=40), "names")
    costs = data.draw(st.lists(st.integers(0, 200_000), max_size=40), label="costs")
    cost = dict(zip(names, costs, strict=False))
    count = data.draw(st.integers(1, 60), label="count")
    index = data.draw(st.integers(1, count), label="index")
    shard = Shard(index, count)
    assert shard.take(names, cost) == _take_by_scanning(shard, names, cost)


def test_an_absurd_shard_count_works_at_once() -> None:
    names = [f"V_{i:03}" for i in range(200)]
    cost = {n: i % 7 for i, n in enumerate(names)}
    # Before: [0] * count (an OverflowError), or 50,000,000 loads scanned per vector.
    huge = Shard.parse("1/100000000000000000000")
    assert huge.take(names, cost) == ["V_006"]  # the costliest, first by name
    assert Shard(201, 10**20).take(names, cost) == []
    parts = [Shard(k, 50_000_000).take(names, cost) for k in range(1, 202)]
    assert sorted(n for p in parts for n in p) == names and all(len(p) <= 1 for p in parts)
    with pytest.raises(SelectionError, match=r"--shard '1/99999.*at most 100 digits"):
        Shard.parse("1/" + "9" * 5000)  # int() would refuse it with a ValueError


def test_run_with_an_absurd_shard_count(small_pack: Path) -> None:
    run = ["run", "--pack", str(small_pack), "--backend", "reference", "--quiet"]
    proc = run_cli([*run, "--shard", "1/100000000000000000000"], timeout=120)
    assert proc.returncode == 0 and "1 vectors: 1 passed" in proc.stdout, proc.stderr
    proc = run_cli([*run, "--shard", "1/" + "9" * 5000], timeout=120)
    assert "K and N have at most 100 digits" in one_error_line(proc)

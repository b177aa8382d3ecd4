"""A ``command:`` program that cheats or floods (issue 26, items 5 and 8): it cannot
reach the pack's answers, and nothing it writes costs more than its timeout."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from pathlib import Path

import pytest
from hostile import LINUX_ONLY, run_cli

from conformance.backends import sandbox

pytestmark = LINUX_ONLY

FAULTY = Path(__file__).parent / "faulty"
CHEAT = FAULTY / "cheat.py"
PROGRAM = FAULTY / "program.py"
NEEDS_SANDBOX = pytest.mark.skipif(
    sandbox.unavailable() is not None, reason=f"no sandbox here: {sandbox.unavailable()}"
)


def _results(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def _run(pack: Path, backend: str, tmp_path: Path, *extra: str, env: dict[str, str] | None = None):
    results = tmp_path / "r.jsonl"
    argv = ["run", "--pack", str(pack), "--backend", backend, "--jobs", "1"]
    proc = run_cli([*argv, "--json", str(results), "--quiet", *extra], env=env)
    return proc, _results(results)


def _cheat(options: str = "") -> str:
    return f"command:{options}{shlex.quote(sys.executable)} {CHEAT}"


@NEEDS_SANDBOX
def test_a_program_cannot_find_the_pack_to_copy_its_answers(
    small_pack: Path, tmp_path: Path
) -> None:
    log = tmp_path / "cheat.log"
    proc, docs = _run(small_pack, _cheat(), tmp_path, env={"TOSA_CHEAT_LOG": str(log)})
    found = [json.loads(line) for line in log.read_text().splitlines()]
    assert found and all(f == [] for f in found), found[:3]  # it looked, and saw nothing
    valid = [d for d in docs if d["kind"] == "valid"]
    assert valid and not any(d["verdict"] == "passed" for d in valid)
    errors = [d for d in docs if d["kind"] == "error"]
    assert errors and not any(d["verdict"] == "passed" for d in errors)  # not told either
    assert proc.returncode == 1


def test_without_the_sandbox_the_same_program_copies_them(small_pack: Path, tmp_path: Path) -> None:
    """What the sandbox is for: outside it, the attack works (docs/reliability.md says
    what such a certificate does not prove)."""
    log = tmp_path / "cheat.log"
    env = {"TOSA_CHEAT_LOG": str(log)}
    _, docs = _run(small_pack, _cheat("--no-sandbox "), tmp_path, env=env)
    assert any(str(small_pack) in f for f in map(json.loads, log.read_text().splitlines()))
    assert any(d["kind"] == "valid" and d["verdict"] == "passed" for d in docs)


@NEEDS_SANDBOX
def test_a_zipped_pack_is_covered_too(small_pack: Path, tmp_path: Path) -> None:
    import shutil

    zipped = Path(shutil.make_archive(str(tmp_path / "pack"), "zip", small_pack.parent, "pack"))
    code = (
        "import sys, pathlib; "
        f"data = pathlib.Path({str(zipped)!r}).read_bytes(); "
        "print('zip bytes', len(data), data[:2])"
    )
    backend = f"command:{shlex.join([sys.executable, '-c', code])}"
    _, docs = _run(zipped, backend, tmp_path)
    logs = {d["log"] for d in docs}
    assert logs and all("zip bytes 0 b''" in log for log in logs), logs


@NEEDS_SANDBOX
def test_the_program_sees_only_its_own_processes(small_pack: Path, tmp_path: Path) -> None:
    code = (
        "import os; pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit()); "
        "print('pids', pids, 'parent', os.getppid())"
    )
    backend = f"command:{shlex.join([sys.executable, '-c', code])}"
    _, docs = _run(small_pack, backend, tmp_path, "--vectors", ".*_000$")
    seen = [re.search(r"pids \[(.*)\] parent (\d+)", str(d["log"])) for d in docs]
    assert docs and all(seen), docs[0]["log"]
    # the sandbox's shell (pid 1) and the program: nothing of the run, whose pids are large
    assert all(m and m.group(2) == "1" and m.group(1).startswith("1, ") for m in seen)
    assert all(m and len(m.group(1).split(", ")) == 2 for m in seen), seen


def test_a_stdout_flood_costs_only_its_timeout(small_pack: Path, tmp_path: Path) -> None:
    """It used to fill the temp folder: now the output goes to a pipe of which the last
    64 KiB are kept, and the folder the run writes in stays small."""
    env = {"TMPDIR": str(tmp_path)}
    proc, docs = _run(
        small_pack,
        f"command:{PROGRAM} flood",
        tmp_path,
        "--vectors",
        ".*_000$",
        "--timeout",
        "2",
        env=env,
    )
    assert docs and all(d["verdict"] == "timeout" for d in docs), docs
    assert all(len(str(d["log"])) <= 70_000 for d in docs)
    used = sum(f.stat().st_size for f in tmp_path.rglob("*") if f.is_file())
    assert used < 5 << 20, used
    assert proc.returncode == 1


@pytest.mark.parametrize("mode", ["error-zero", "error-fifo"])
def test_an_error_txt_that_is_not_a_file_is_read_as_nothing(
    small_pack: Path, tmp_path: Path, mode: str
) -> None:
    _proc, docs = _run(small_pack, f"command:{PROGRAM} {mode}", tmp_path, "--timeout", "20")
    assert docs and all(d["verdict"] != "timeout" for d in docs)
    rejected = [d for d in docs if d["kind"] == "error"]
    assert rejected and all(d["verdict"] == "passed" for d in rejected)
    valid = [d for d in docs if d["kind"] == "valid"]
    assert all("wrote an empty or unreadable error.txt" in str(d["detail"]) for d in valid)


@pytest.mark.parametrize("mode", ["result-link", "result-dir", "result-fifo"])
def test_a_result_that_is_not_the_programs_own_file_is_not_read(
    small_pack: Path, tmp_path: Path, mode: str
) -> None:
    """A link to the pack's own expected file would otherwise pass every vector."""
    target = next(small_pack.glob("*_valid_*/expected-0.npy"))
    proc, docs = _run(small_pack, f"command:{PROGRAM} {mode} {target}", tmp_path)
    valid = [d for d in docs if d["kind"] == "valid"]
    assert valid and not any(d["verdict"] == "passed" for d in valid)
    assert all(d["verdict"] == "crashed" for d in valid), {d["detail"] for d in valid}
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr


def test_the_certificate_says_how_the_program_ran(small_pack: Path) -> None:
    from conformance.certify import make_certificate
    from conformance.claims import Claim
    from conformance.runner import run_pack
    from conformance.spec import active_spec

    backend = f"command:--no-sandbox {shlex.quote(sys.executable)} {CHEAT}"
    report = run_pack(small_pack, backend, vectors=".*_valid_000$")
    spec = active_spec()
    claim = Claim(("BI",), (), spec.level("8K"))
    cert = make_certificate(spec, claim, backend, "0" * 64, report).to_json()
    identity = cert["backend_identity"]
    assert identity["sandbox"] == "none: turned off with --no-sandbox"
    files = {f["path"]: f["sha256"] for f in identity["files"]}
    assert str(CHEAT) in files and len(files[str(CHEAT)]) == 64
    assert os.path.samefile(identity["argv"][0], sys.executable)
    assert identity["name"] == backend


@NEEDS_SANDBOX
def test_a_sandboxed_program_is_recorded_as_such(small_pack: Path) -> None:
    from conformance.runner import run_pack

    report = run_pack(small_pack, _cheat(), vectors=".*_valid_000$")
    assert report.backend["sandbox"] == "namespaces: user, mount, pid; the pack covered"

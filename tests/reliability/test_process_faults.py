"""Processes (issue 13, items 3, 10, 13, 14, 16): nothing a run or its backend starts
outlives it, whatever kills it; temporary folders go with their worker; a backend's
output is that vector's log."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile import CLI, LINUX_ONLY, alive, limited, processes_with, run_cli, wait_until
from interrupts import as_a_terminal_job

from conformance import process_tree

pytestmark = LINUX_ONLY

FAULTY = Path(__file__).parent / "faulty"
BACKENDS = FAULTY / "backends.py"
PROGRAM = FAULTY / "program.py"


@pytest.fixture
def marker(tmp_path: Path) -> Iterator[dict[str, str]]:
    """An environment whose backends' processes carry a unique marker; a check at the
    end that none of them is left."""
    mark = f"tosa-fault-{uuid.uuid4().hex}"
    env = {"TOSA_FAULT_MARKER": mark, "TOSA_FAULT_DIR": str(tmp_path), "TMPDIR": str(tmp_path)}
    yield env
    left = processes_with(mark)
    for pid in left:  # do not leave them to the next test either
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes left: {left}"


def start_run(
    pack: Path, backend: str, env: dict[str, str], *extra: str
) -> subprocess.Popen[bytes]:
    args = [*CLI, "run", "--pack", str(pack), "--backend", backend, "--quiet", *extra]
    return subprocess.Popen(
        args,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own group, so that a test can send it Ctrl-C
        preexec_fn=as_a_terminal_job,
    )


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "term"])
@pytest.mark.parametrize(
    "backend", [f"python:{BACKENDS}:hanger", f"command:{PROGRAM} hang"], ids=["python", "command"]
)
def test_no_process_left_after_run_is_killed(
    small_pack: Path, marker: dict[str, str], sig: int, backend: str
) -> None:
    run = start_run(small_pack, backend, marker, "--jobs", "2", "--timeout", "600")
    mark = marker["TOSA_FAULT_MARKER"]
    assert wait_until(lambda: len(processes_with(mark)) >= 2, 60), "the backends never started"
    below = process_tree.descendants(run.pid)  # workers, programs, their children
    assert len(below) >= 4
    run.send_signal(sig)
    run.wait()
    assert wait_until(lambda: not alive(below) and not processes_with(mark), 30), alive(below)
    # The workers' temporary folders went with them.
    assert not list(Path(marker["TMPDIR"]).glob("tosa-run-*"))


def test_ctrl_c_stops_workers_and_programs(small_pack: Path, marker: dict[str, str]) -> None:
    run = start_run(small_pack, f"command:{PROGRAM} hang", marker, "--jobs", "2")
    mark = marker["TOSA_FAULT_MARKER"]
    assert wait_until(lambda: len(processes_with(mark)) >= 2, 60)
    below = process_tree.descendants(run.pid)
    os.killpg(run.pid, signal.SIGINT)  # what a terminal does: the whole group
    _, err = run.communicate(timeout=60)
    assert "Traceback" not in err.decode()
    assert wait_until(lambda: not alive(below) and not processes_with(mark), 30), alive(below)


def test_a_python_backends_children_end_with_their_vector(
    small_pack: Path, marker: dict[str, str], tmp_path: Path
) -> None:
    results = tmp_path / "r.jsonl"
    proc = run_cli(
        [
            "run",
            "--pack",
            str(small_pack),
            "--backend",
            f"python:{BACKENDS}:spawner",
            "--jobs",
            "1",
            "--json",
            str(results),
            "--quiet",
        ],
        env=marker,
    )
    assert proc.returncode == 0, proc.stderr
    logs = [json.loads(x)["log"] for x in results.read_text().splitlines()[1:]]
    said = [log for log in logs if "previous child alive" in log]
    assert len(said) == len(logs) - 1  # every vector but the first
    assert all("previous child alive: False" in log for log in said), said


def test_a_helper_the_backend_holds_is_kept_until_the_end(
    small_pack: Path, marker: dict[str, str], tmp_path: Path
) -> None:
    results = tmp_path / "r.jsonl"
    proc = run_cli(
        [
            "run",
            "--pack",
            str(small_pack),
            "--backend",
            f"python:{BACKENDS}:keeper",
            "--jobs",
            "1",
            "--json",
            str(results),
            "--quiet",
        ],
        env=marker,
    )
    assert proc.returncode == 0, proc.stderr
    logs = [json.loads(x)["log"] for x in results.read_text().splitlines()[1:]]
    said = {log.strip() for log in logs if "helper" in log}
    assert len(said) == 1 and said.pop().endswith("alive: True")  # one helper, kept
    # ... and it ended with the worker (the marker fixture checks).


def test_an_orphan_in_its_own_session_ends_with_its_vector(
    small_pack: Path, marker: dict[str, str], tmp_path: Path
) -> None:
    results = tmp_path / "r.jsonl"
    proc = run_cli(
        [
            "run",
            "--pack",
            str(small_pack),
            "--backend",
            f"command:{PROGRAM} orphan",
            "--jobs",
            "1",
            "--json",
            str(results),
            "--quiet",
        ],
        env=marker,
    )
    assert proc.returncode == 1  # no results written: the valid vectors fail
    logs = [json.loads(x)["log"] for x in results.read_text().splitlines()[1:]]
    said = [log for log in logs if "previous orphan alive" in log]
    assert said and all("previous orphan alive: False" in log for log in said), said


def test_timed_out_programs_children_and_temp_folders_go(
    small_pack: Path, marker: dict[str, str], tmp_path: Path
) -> None:
    proc = run_cli(
        [
            "run",
            "--pack",
            str(small_pack),
            "--backend",
            f"command:{PROGRAM} hang",
            "--jobs",
            "2",
            "--timeout",
            "1",
            "--quiet",
        ],
        env=marker,
    )
    assert proc.returncode == 1 and "timeout" in proc.stdout
    assert not list(tmp_path.glob("tosa-run-*")), list(tmp_path.iterdir())


def test_a_huge_result_header_is_refused_unread(
    small_pack: Path, marker: dict[str, str], tmp_path: Path
) -> None:
    results = tmp_path / "r.jsonl"
    proc = subprocess.run(
        [
            *CLI,
            "run",
            "--pack",
            str(small_pack),
            "--backend",
            f"command:{PROGRAM} big-result",
            "--jobs",
            "1",
            "--json",
            str(results),
            "--quiet",
        ],
        env={**os.environ, **marker},
        capture_output=True,
        text=True,
        preexec_fn=limited(3 << 29),  # 1.5 GiB, less than one result
        check=False,
    )
    assert proc.returncode == 1 and "MemoryError" not in proc.stdout + proc.stderr
    docs = [json.loads(x) for x in results.read_text().splitlines()[1:]]
    valid = [d for d in docs if d["kind"] == "valid"]
    assert valid and all(d["verdict"] == "failed" for d in valid)
    assert all("unusable output: shape [268435456], expected" in d["detail"] for d in valid)


def test_a_python_backends_output_is_its_vectors_log(small_pack: Path, tmp_path: Path) -> None:
    results = tmp_path / "r.jsonl"
    proc = run_cli(
        [
            "run",
            "--pack",
            str(small_pack),
            "--backend",
            f"python:{BACKENDS}:printer",
            "--jobs",
            "1",
            "--json",
            str(results),
            "--quiet",
        ]
    )
    assert proc.returncode == 0
    assert "PRINTED-BY-BACKEND" not in proc.stdout + proc.stderr
    assert "WRITTEN-TO-FD-2" not in proc.stdout + proc.stderr
    for line in results.read_text().splitlines()[1:]:
        doc = json.loads(line)
        assert f"PRINTED-BY-BACKEND {doc['vector']}" in doc["log"]
        assert "WRITTEN-TO-FD-2" in doc["log"]


def test_workers_let_go_of_the_parents_socket_ends(small_pack: Path, tmp_path: Path) -> None:
    """A worker holds no parent end of any pipe (else it never sees EOF) and not the
    results file: checked on the live workers' descriptors."""
    results = tmp_path / "r.jsonl"
    run = start_run(
        small_pack,
        f"python:{BACKENDS}:hanger",
        {"TMPDIR": str(tmp_path)},
        "--jobs",
        "2",
        "--json",
        str(results),
    )
    try:
        assert wait_until(lambda: len(process_tree.descendants(run.pid)) >= 4, 60)
        workers = [p for p in process_tree.descendants(run.pid) if _parent(p) == run.pid]
        parent_fds = {_target(run.pid, fd) for fd in os.listdir(f"/proc/{run.pid}/fd")}
        for pid in workers:
            held = {_target(pid, fd) for fd in os.listdir(f"/proc/{pid}/fd")}
            assert str(results.resolve()) not in held
            sockets = {t for t in held if t.startswith("socket:")}
            # The worker's own end is not among the parent's; no end is shared.
            assert not sockets & parent_fds, (pid, sockets & parent_fds)
    finally:
        run.kill()
        run.wait()


def _parent(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_bytes()
    return int(stat[stat.rfind(b")") + 2 :].split()[1])


def _target(pid: int, fd: str) -> str:
    try:
        return os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        return ""


@pytest.mark.parametrize("factory", ["raises", "syntax"])
def test_a_broken_python_backend_is_one_line(
    tmp_path: Path, small_pack: Path, factory: str
) -> None:
    if factory == "syntax":
        broken = tmp_path / "broken.py"
        broken.write_text("def factory(_):\n    return (\n")
        spec, words = f"python:{broken}:factory", "line 2: syntax error"
    else:
        spec, words = f"python:{BACKENDS}:raises", "RuntimeError: the factory could not find"
    proc = run_cli(["run", "--pack", str(small_pack), "--backend", spec, "--quiet"])
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], proc.stderr


def test_a_backend_that_cannot_start_in_a_worker_never_exits_0(
    tmp_path: Path, small_pack: Path
) -> None:
    # Issue 26, item 1: the parent builds the backend, every forked worker fails to; the
    # run used to die on the broken pipe to the first worker and exit 0 with no output.
    spec = f"python:{BACKENDS}:main_process_only"
    results = tmp_path / "r.jsonl"
    args = ["run", "--pack", str(small_pack), "--backend", spec, "--quiet", "--json", str(results)]
    proc = run_cli([*args, "--jobs", "2"])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr and len(lines) == 1, proc.stderr
    assert "cannot start in a worker process" in lines[0]
    assert "no device in a forked process" in lines[0]


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_generate_workers_die_with_generate(tmp_path: Path, sig: signal.Signals) -> None:
    # Issue 26, item 4: killed, `generate --jobs N` left its workers running for good,
    # holding the folder lock, so a rerun into the emptied folder was refused.
    out = tmp_path / "pack"
    args = [*CLI, "generate", "--profile", "MI", "--jobs", "2", "--quiet", "-o", str(out)]
    proc = subprocess.Popen(
        args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    workers: list[int] = []

    def started() -> bool:
        workers[:] = process_tree.descendants(proc.pid)
        return len(workers) >= 2

    try:
        assert wait_until(started, timeout=120), "generate started no workers"
        os.kill(proc.pid, sig)
        proc.wait(timeout=60)
        assert wait_until(lambda: not alive(workers), timeout=60), alive(workers)
    finally:
        for pid in alive([proc.pid, *workers]):
            os.kill(pid, signal.SIGKILL)
    for p in out.iterdir():  # the rerun the issue saw refused
        if p.is_dir():
            shutil.rmtree(p)
        else:
            p.unlink()
    rerun = run_cli(["generate", "--profile", "BI", "--ops", "ADD", "--examples", "1",
                     "--no-targeted", "--no-levels", "--quiet", "-o", str(out)])  # fmt: skip
    assert rerun.returncode == 0, rerun.stderr


@pytest.mark.parametrize(
    ("factory", "detail"),
    [
        ("raise_interrupt", "the backend raised KeyboardInterrupt"),
        ("raise_exit", "the backend raised SystemExit: 3"),
        ("raise_unprintable", "the backend raised _Unprintable (its message cannot be shown)"),
    ],
)
def test_a_backend_raising_what_is_not_an_exception_is_its_vectors_crash(
    small_pack: Path, tmp_path: Path, factory: str, detail: str
) -> None:
    """D12: these printed worker tracebacks; each is that vector's crash, and the run
    goes on to the end."""
    results = tmp_path / "r.jsonl"
    backend = f"python:{BACKENDS}:{factory}"
    argv = ["run", "--pack", str(small_pack), "--backend", backend, "--jobs", "1"]
    proc = run_cli([*argv, "--json", str(results), "--quiet"])
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    docs = [json.loads(x) for x in results.read_text().splitlines()[1:]]
    assert len(docs) == 9 and all(d["verdict"] == "crashed" for d in docs)
    assert all(d["detail"] == detail for d in docs), {d["detail"] for d in docs}

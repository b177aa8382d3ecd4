"""Results files and outputs (issue 13, items 4, 5, 6, 7, 11, 12, 15): one run per
file, resume only what belongs, no torn lines, no second generate into a folder, and
one line with exit status 2 for every misuse and every unwritable output."""

from __future__ import annotations

import json
import os
import resource
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from hostile import CLI, LINUX_ONLY, copy_pack, rehash, run_cli, wait_until
from hypothesis import given
from hypothesis import strategies as st

from conformance.results_file import ResultsFile, ResultsFileError, make_header
from conformance.verdicts import read_results
from vectors.pack import FolderLock, PackError

pytestmark = LINUX_ONLY

FAULTY = Path(__file__).parent / "faulty"
BACKENDS = FAULTY / "backends.py"


def one_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def run_args(pack: Path, *extra: str, backend: str = "reference") -> list[str]:
    return ["run", "--pack", str(pack), "--backend", backend, "--quiet", "--jobs", "1", *extra]


@pytest.fixture(scope="module")
def reference_results(small_pack: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("results") / "r.jsonl"
    assert run_cli(run_args(small_pack, "--json", str(out))).returncode == 0
    return out


# ----------------------------------------------------------------------------- resume


def test_the_header_names_pack_backend_and_timeout(
    reference_results: Path, small_pack: Path
) -> None:
    header = json.loads(reference_results.read_text().splitlines()[0])
    pack_sha = json.loads((small_pack / "pack.json").read_text())["pack_sha256"]
    assert header == make_header(pack_sha, "reference", {"timeout": 60.0})


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ("backend", "backend 'reference', this run 'command:/bin/false'"),
        ("timeout", "options {'timeout': 60.0}, this run {'timeout': 5.0}"),
        ("pack", "pack_sha256"),
        ("no header", "no header line"),
    ],
)
def test_resume_refuses_another_runs_file(
    reference_results: Path, small_pack: Path, tmp_path: Path, change: str, words: str
) -> None:
    results = tmp_path / "r.jsonl"
    lines = reference_results.read_text().splitlines()
    results.write_text("\n".join(lines[1:] if change == "no header" else lines) + "\n")
    before = results.read_bytes()
    pack, backend, extra = small_pack, "reference", []
    if change == "backend":
        backend = "command:/bin/false"
    elif change == "timeout":
        extra = ["--timeout", "5"]
    elif change == "pack":
        pack = copy_pack(small_pack, tmp_path / "other")
        doc = json.loads((pack / "pack.json").read_text())
        doc["seed"] += 1  # another pack: another pack_sha256
        (pack / "pack.json").write_text(json.dumps(doc))
        rehash(pack)
    proc = run_cli(run_args(pack, "--json", str(results), "--resume", *extra, backend=backend))
    assert words in one_line(proc)
    assert results.read_bytes() == before  # refused before anything was written


@given(data=st.data())
def test_torn_last_line_is_cut_before_appending(data: st.DataObject, tmp_path_factory) -> None:
    """Any cut of the last record: resume leaves whole lines only, the record lost is
    run again, and nothing is recorded twice."""
    lines = _reference_lines()
    # How many characters of the last record (and its newline) a kill left unwritten.
    lost = data.draw(st.integers(min_value=1, max_value=len(lines[-1])), label="lost")
    results = tmp_path_factory.mktemp("torn") / "r.jsonl"
    text = "\n".join(lines) + "\n"
    results.write_text(text[: len(text) - lost])
    header = json.loads(lines[0])
    with ResultsFile(results, header, resume=True) as f:
        assert len(f.previous) == len(lines) - 2  # the torn record is not taken
        f.append(json.loads(lines[-1]))
    out = results.read_text()
    assert out.endswith("\n")
    docs = [json.loads(x) for x in out.splitlines()]  # every line whole
    names = [d["vector"] for d in docs[1:]]
    assert len(names) == len(set(names)) == len(lines) - 1


_LINES: list[str] = []


def _reference_lines() -> list[str]:
    if not _LINES:
        header = make_header("0" * 64, "reference", {"timeout": 60.0})
        record = {"operator": "ADD", "mode": "m", "kind": "valid", "verdict": "passed"}
        docs = [header] + [{**record, "vector": f"V{k}", "detail": "x" * 50} for k in range(4)]
        _LINES.extend(json.dumps(d, sort_keys=True) for d in docs)
    return _LINES


def test_resume_of_a_killed_run_repairs_the_file(
    reference_results: Path, small_pack: Path, tmp_path: Path
) -> None:
    results = tmp_path / "r.jsonl"
    text = reference_results.read_text()
    results.write_text(text[: len(text) - 40])  # the last record torn mid-line
    proc = run_cli(run_args(small_pack, "--json", str(results), "--resume"))
    assert proc.returncode == 0, proc.stderr
    lines = results.read_text().splitlines()
    docs = [json.loads(x) for x in lines]  # no glued or broken line
    assert [d["vector"] for d in docs[1:]] == [
        d["vector"] for d in map(json.loads, text.splitlines()[1:])
    ]
    assert len(read_results(results)) == len(lines) - 1


# ----------------------------------------------------------------------------- locks


def test_a_second_run_on_the_same_json_is_refused(small_pack: Path, tmp_path: Path) -> None:
    results = tmp_path / "r.jsonl"
    first = subprocess.Popen(
        [*CLI, *run_args(small_pack, "--json", str(results), backend=f"python:{BACKENDS}:slow")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "TOSA_FAULT_SLOW": "4"},  # still running when the others try
    )
    assert wait_until(lambda: results.exists() and results.stat().st_size > 0, 60)
    for extra in ([], ["--resume"]):
        second = run_cli(run_args(small_pack, "--json", str(results), *extra))
        assert "another run is writing to this results file" in one_line(second)
    assert first.wait(120) == 0
    # The first run's results are all there, once each.
    names = [r.vector for r in read_results(results)]
    n = len(json.loads((small_pack / "pack.json").read_text())["vectors"])
    assert len(names) == len(set(names)) == n


def test_results_file_lock_in_process(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    header = make_header("0" * 64, "reference", {"timeout": 1.0})
    with (
        ResultsFile(path, header, resume=False),
        pytest.raises(ResultsFileError, match="another run is writing"),
    ):
        ResultsFile(path, header, resume=True)
    with ResultsFile(path, header, resume=True) as again:  # released on close
        assert again.previous == []


def test_a_second_generate_into_the_folder_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "pack"
    lock = FolderLock(out)  # what a first generate holds while it writes
    try:
        proc = run_cli(
            [
                "generate",
                "--profile",
                "BI",
                "--ops",
                "ADD",
                "--examples",
                "1",
                "--no-targeted",
                "--no-levels",
                "--quiet",
                "-o",
                str(out),
            ]
        )
        assert "another 'generate' is writing a pack into this folder" in one_line(proc)
        with pytest.raises(PackError, match="another 'generate'"):
            FolderLock(out)
    finally:
        lock.close()
    assert not any(out.iterdir())


# ----------------------------------------------------------------------------- options


_BAD_TIMEOUTS = [
    (["--timeout", "nan"], "--timeout nan: must be a positive number"),
    (["--timeout", "inf"], "--timeout inf: must be a positive number"),
    (["--timeout", "0"], "--timeout 0.0: must be a positive number"),
]
_BAD_JOBS = [
    (["--jobs", "0"], "--jobs 0: must be at least 1"),
    (["--jobs", "-1"], "--jobs -1: must be at least 1"),
]


@pytest.mark.parametrize(
    ("command", "flags", "words"),
    [
        *((c, f, w) for c in ("run", "certify") for f, w in _BAD_TIMEOUTS + _BAD_JOBS),
        *(("generate", f, w) for f, w in _BAD_JOBS),  # generate has no --timeout
    ],
)
def test_bad_run_options_are_refused(
    small_pack: Path, tmp_path: Path, flags: list[str], words: str, command: str
) -> None:
    # Issue 26, D11/D15: certify and generate took --timeout inf/nan and --jobs 0/-1.
    args = {
        "run": ["run", "--pack", str(small_pack), "--backend", "reference"],
        "certify": ["certify", "--pack", str(small_pack), "--backend", "reference"],
        "generate": ["generate", "-o", str(tmp_path / "p")],
    }[command]
    if command != "run":
        args += ["--profile", "BI"]
    assert words in one_line(run_cli([*args, "--quiet", *flags]))


# ----------------------------------------------------------------------------- outputs


@pytest.mark.parametrize("what", ["run --json", "run --junit", "generate -o", "certify -o"])
def test_unwritable_outputs_are_one_line(small_pack: Path, tmp_path: Path, what: str) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    where = str(blocker / "out")  # a path under a regular file: nobody can write it
    args = {
        "run --json": run_args(small_pack, "--json", where),
        "run --junit": run_args(small_pack, "--junit", where),
        "generate -o": [
            "generate",
            "--profile",
            "BI",
            "--ops",
            "ADD",
            "--examples",
            "1",
            "--quiet",
            "-o",
            where,
        ],
        "certify -o": [
            "certify",
            "--pack",
            str(small_pack),
            "--backend",
            "reference",
            "--profile",
            "BI",
            "--quiet",
            "-o",
            where,
        ],
    }[what]
    line = one_line(run_cli(args))
    assert where in line or str(blocker) in line, line


def _file_size_limit(limit: int) -> Callable[[], None]:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return cap


def test_a_full_disk_during_run_keeps_whole_lines(small_pack: Path, tmp_path: Path) -> None:
    """A write that fails (RLIMIT_FSIZE: EFBIG, the same failed write as ENOSPC) stops
    the run with one line; the file ends with a whole line; --resume finishes it."""
    results = tmp_path / "r.jsonl"
    proc = subprocess.run(
        [*CLI, *run_args(small_pack, "--json", str(results))],
        capture_output=True,
        text=True,
        preexec_fn=_file_size_limit(2000),
        check=False,
    )
    line = one_line(proc)
    assert "cannot write a result" in line and "rerun with --resume" in line
    text = results.read_text()
    assert text.endswith("\n") and 0 < len(text) <= 2000
    [json.loads(x) for x in text.splitlines()]  # whole lines only
    assert run_cli(run_args(small_pack, "--json", str(results), "--resume")).returncode == 0
    n = len(json.loads((small_pack / "pack.json").read_text())["vectors"])
    assert len(read_results(results)) == n


def test_a_full_disk_during_generate_leaves_no_tmp_folder(tmp_path: Path) -> None:
    out = tmp_path / "pack"
    proc = subprocess.run(
        [
            *CLI,
            "generate",
            "--profile",
            "BI",
            "--ops",
            "ADD",
            "--examples",
            "1",
            "--no-targeted",
            "--no-levels",
            "--quiet",
            "--jobs",
            "1",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        preexec_fn=_file_size_limit(300),
        check=False,
    )
    one_line(proc)
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")], list(out.iterdir())


def test_a_disk_full_for_a_while_during_generate_is_never_a_pack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 26, item 3: each failed write used to count as a failed draw; generate exited
    # 0 with a pack that verified but lacked those vectors.
    import errno

    from conformance import generate_jobs
    from conformance.cli.main import main

    real = generate_jobs.write_vector
    calls = {"n": 0}

    def full_for_a_while(folder: Path, vector: object) -> object:
        calls["n"] += 1
        if calls["n"] in (3, 4):
            raise OSError(errno.ENOSPC, "No space left on device", str(folder / "x.npy"))
        return real(folder, vector)

    monkeypatch.setattr(generate_jobs, "write_vector", full_for_a_while)  # where jobs call it
    out = tmp_path / "pack"
    argv = ["generate", "--profile", "BI", "--ops", "ADD", "--examples", "2", "--no-targeted"]
    code = main([*argv, "--no-levels", "--quiet", "--jobs", "1", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "No space left on device" in err and "no pack.json" in err
    assert not (out / "pack.json").exists()

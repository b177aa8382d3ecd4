"""The ``command:`` backend: Arm's ``--test_desc`` convention, against fake executables.

The fakes (tests/backends/fake_backends/) are run as ``sys.executable FAKE``, so they
work even where the executable bit was lost; one test runs a fake through its shebang.
Each run selects a few vectors: a fake that computes starts the reference evaluator
(about a second) per vector.
"""

import json
import os
import shlex
import shutil
import sys
import time
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from conformance.backends import BUILTIN, BackendError, get_backend
from conformance.backends.command import (
    BackendCrash,
    CommandBackend,
    CommandTimeout,
    materialize,
    read_result,
)
from conformance.cli.main import main
from conformance.dtypes import dtype
from conformance.runner import run_pack
from conformance.verdicts import CRASHED, ERROR_EXPECTED, FAILED, INFO, PASSED, TIMEOUT
from vectors.flatbuffer import read_graph
from vectors.npy import load_array
from vectors.pack import open_pack, verify_pack

FAKES = Path(__file__).parent / "fake_backends"
# one valid and one error vector per operator, and one level vector
FEW = r"(ADD|SUB)_fp32_(valid|error)_000|ADD_fp32_rank-above_000"


def command(fake: str, *args: str) -> str:
    return "command:" + shlex.join([sys.executable, str(FAKES / fake), *args])


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pack") / "p"
    argv = ["generate", "--profile", "MI", "--ops", "ADD|SUB", "--examples", "1", "--quiet"]
    argv.append("--no-targeted")  # the calling convention, not the pack's power
    assert main([*argv, "-o", str(out), "--jobs", "1"]) == 0
    return out


def _by_name(report) -> dict:
    return {r.vector: r for r in report.results}


def _gone(marker: str, within: float = 10.0) -> bool:
    """No live process has ``marker`` (``NAME=VALUE``) in its environment."""
    deadline = time.monotonic() + within
    needle = marker.encode() + b"\0"
    while time.monotonic() < deadline:
        alive = []
        for proc in Path("/proc").iterdir():
            if proc.name.isdigit() and proc.name != str(os.getpid()):
                try:
                    if needle in (proc / "environ").read_bytes() and not _dead(
                        int(proc.name), within=0
                    ):
                        alive.append(proc.name)
                except OSError:
                    continue
        if not alive:
            return True
        time.sleep(0.1)
    return False


def _dead(pid: int, within: float = 10.0) -> bool:
    """The process is gone (a zombie counts: it runs no more)."""
    deadline = time.monotonic() + within
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        stat = Path(f"/proc/{pid}/stat")
        if stat.exists() and stat.read_text().rpartition(")")[2].split()[0] == "Z":
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def test_command_is_a_builtin_backend() -> None:
    assert "command" in BUILTIN
    backend = get_backend(command("correct.py"))
    assert isinstance(backend, CommandBackend)
    assert backend.argv == [
        str(Path(sys.executable).absolute()),
        str(FAKES / "correct.py"),
    ]


def test_a_symlinked_interpreter_is_run_through_its_link(tmp_path: Path) -> None:
    # A virtualenv's bin/python links to the base interpreter and finds the venv's
    # packages only when run through the link: the link must not be resolved away.
    link = tmp_path / "venv-python"
    link.symlink_to(Path(sys.executable).resolve())
    backend = get_backend(f"command:{link} {FAKES / 'correct.py'}")
    assert isinstance(backend, CommandBackend)
    assert backend.argv[0] == str(link)
    assert Path(backend.argv[0]).is_symlink()


# -- against the fakes, through the runner --------------------------------------------


def test_a_correct_executable_passes_every_vector(pack: Path) -> None:
    few = r"ADD_fp16_.*|(ADD|SUB)_(fp32|signed-32)_valid_000"
    report = run_pack(pack, command("correct.py"), jobs=2, vectors=few)
    assert len(report.results) == 11
    for r in report.results:
        assert r.verdict == (INFO if r.kind == "level" else PASSED), r
    # the rejections carry error.txt's text
    errors = [r for r in report.results if r.kind == "error"]
    assert errors and all("ERROR_IF" in r.detail for r in errors)
    assert verify_pack(pack) == []  # nothing was written into the pack


def test_error_txt_alone_rejects_the_graph(pack: Path) -> None:
    spec = command("correct.py", "--exit-zero-on-error")
    report = run_pack(pack, spec, vectors=r"ADD_fp32_(valid|error)_000")
    results = _by_name(report)
    assert results["ADD_fp32_error_000"].verdict == PASSED
    assert results["ADD_fp32_error_000"].detail.startswith("rejected: error: ADD")
    assert results["ADD_fp32_valid_000"].verdict == PASSED


def test_a_zipped_pack_works_too(pack: Path, tmp_path: Path) -> None:
    archive = shutil.make_archive(str(tmp_path / "p"), "zip", pack.parent, pack.name)
    report = run_pack(Path(archive), command("correct.py"), vectors=r"SUB_fp32_(valid|error)_000")
    assert [r.verdict for r in report.results] == [PASSED, PASSED]


@pytest.mark.skipif(
    not os.access(FAKES / "correct.py", os.X_OK), reason="the executable bit was lost"
)
def test_an_executable_through_its_shebang(pack: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # '#!/usr/bin/env python3' must find this interpreter, which has the project
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    report = run_pack(pack, f"command:{FAKES / 'correct.py'}", vectors="ADD_fp32_valid_000")
    assert [r.verdict for r in report.results] == [PASSED]


def test_a_segfault_is_a_crash_of_that_vector_only(pack: Path) -> None:
    report = run_pack(pack, command("segfault.py"), jobs=2, vectors=FEW)
    for r in report.results:
        if r.operator == "SUB":
            assert r.verdict == CRASHED, r
            assert "python segfault.py was killed by signal 11 (SIGSEGV)" in r.detail
        else:
            assert r.verdict in (PASSED, INFO), r


def test_a_hang_times_out_and_the_program_is_killed(
    pack: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pids = tmp_path / "pids"
    monkeypatch.setenv("FAKE_BACKEND_PIDS", str(pids))
    report = run_pack(pack, command("hang.py"), jobs=2, timeout=5, vectors=FEW)
    for r in report.results:
        if r.operator == "SUB":
            assert r.verdict == TIMEOUT and "no result after 5 s" in r.detail, r
        else:
            assert r.verdict in (PASSED, INFO), r
    hung = [int(line) for line in pids.read_text().split()]
    assert len(hung) == 2
    # The runner SIGKILLed the workers; the kernel killed their programs.  Found by
    # their environment: in a sandbox a program's own pid means nothing out here.
    assert _gone(f"FAKE_BACKEND_PIDS={pids}")


@pytest.mark.parametrize(
    ("flag", "detail"),
    [
        ("--shape", "output: unusable output: shape [7, 7], expected []"),
        ("--dtype", "output: unusable output: dtype int32 is not a floating-point type"),
    ],
)
def test_a_wrong_output_fails_the_vector(pack: Path, flag: str, detail: str) -> None:
    report = run_pack(pack, command("wrong_output.py", flag), jobs=2, vectors=FEW)
    for r in report.results:
        want = {"valid": FAILED, "error": ERROR_EXPECTED, "level": INFO}[r.kind]
        assert r.verdict == want, r
        if r.kind == "valid":
            assert r.detail == detail


def test_a_wrong_integer_dtype_fails_the_vector(pack: Path) -> None:
    report = run_pack(
        pack, command("wrong_output.py", "--dtype"), vectors="ADD_signed-32_valid_000"
    )
    (r,) = report.results
    assert r.verdict == FAILED
    assert r.detail == "output: unusable output: dtype float32, expected int32 for i32"


def test_garbage_bytes_crash_a_valid_vector(pack: Path) -> None:
    report = run_pack(pack, command("garbage.py"), jobs=2, vectors=FEW)
    for r in report.results:
        want = {"valid": CRASHED, "error": ERROR_EXPECTED, "level": INFO}[r.kind]
        assert r.verdict == want, r
        if r.kind == "valid":
            assert "UnreadableResult: result-0.npy (output 'output'): not an .npy file" in r.detail


def test_a_program_that_rejects_everything(pack: Path) -> None:
    report = run_pack(pack, command("reject_all.py"), jobs=2, vectors=FEW)
    for r in report.results:
        want = {"valid": FAILED, "error": PASSED, "level": INFO}[r.kind]
        assert r.verdict == want, r
        assert "exited with status 1: fake backend: this graph is not supported" in r.detail


def test_a_program_that_writes_nothing(pack: Path) -> None:
    report = run_pack(pack, command("no_output.py"), jobs=2, vectors=FEW)
    for r in report.results:
        want = {"valid": FAILED, "error": ERROR_EXPECTED, "level": INFO}[r.kind]
        assert r.verdict == want, r
        if r.kind == "valid":
            assert r.detail == "output: no output produced"
            assert "no_output.py wrote no result-0.npy for output 'output'" in r.log


# -- the backend alone ----------------------------------------------------------------


@pytest.fixture(scope="module")
def valid(pack: Path):
    with open_pack(pack) as p:
        return p.load("ADD_fp32_valid_000")


def _python(code: str, *args: str) -> CommandBackend:
    return CommandBackend(shlex.join([sys.executable, "-c", code, *args]))


def test_the_desc_copy_names_absolute_files_in_workdir(valid, tmp_path: Path) -> None:
    desc_path, results = materialize(valid, tmp_path)
    desc = json.loads(desc_path.read_text())
    assert desc_path == tmp_path / "desc.json"
    assert desc["tosa_file"] == str(tmp_path / "graph.tosa")
    assert read_graph(desc["tosa_file"]).main.inputs == valid.graph.main.inputs
    assert desc["ifm_name"] == ["input1", "input2"]
    for name, file in zip(desc["ifm_name"], desc["ifm_file"], strict=True):
        assert Path(file).is_absolute() and Path(file).parent == tmp_path
        assert np.array_equal(load_array(file, dtype("fp32")), valid.inputs[name])
    assert desc["inputs"][0]["file"] == desc["ifm_file"][0]
    assert desc["ofm_name"] == ["output"]
    assert desc["ofm_file"] == [str(tmp_path / "result-0.npy")] == [str(results["output"])]
    assert not results["output"].exists()
    assert desc["outputs"] == [
        {"name": "output", "dtype": "fp32", "shape": [], "file": desc["ofm_file"][0]}
    ]
    assert desc["operator"] == "ADD" and desc["requirements"] == {"level": "8K"}


def test_the_desc_copy_says_nothing_of_the_answer(pack: Path, tmp_path: Path) -> None:
    """Name, kind, rule, provenance and expected results stay out: a program told
    "this one must fail" would pass every error vector without reading the graph.
    An error vector's desc has exactly the keys of a valid one's."""
    from vectors.pack import open_pack

    with open_pack(pack) as p:
        kinds = {}
        for e in p.entries:
            kinds.setdefault(e.kind, e.name)
        assert {"valid", "error"} <= set(kinds)
        keys = set()
        for k, (kind, name) in enumerate(kinds.items()):
            work = tmp_path / f"w{k}"
            work.mkdir()
            desc_path, _ = materialize(p.load(name), work)
            text = desc_path.read_text()
            desc = json.loads(text)
            for word in ("kind", "rule", "expected", "name", "provenance", "expected_failure"):
                assert word not in desc, (kind, word)
            assert name not in text
            assert "error" not in text and "valid" not in text, text
            keys.add(frozenset(desc))
        assert len(keys) == 1


def test_fixed_arguments_come_before_the_test_desc(valid, tmp_path: Path) -> None:
    code = (
        "import pathlib, sys; "
        "(pathlib.Path(sys.argv[-1]).parent / 'error.txt').write_text(repr(sys.argv[1:]))"
    )
    result = _python(code, "--flag", "two words").run(valid, tmp_path)
    desc = str(tmp_path / "desc.json")
    assert result.rejected == repr(["--flag", "two words", "--test_desc", desc])


def test_an_empty_error_txt_still_rejects(valid, tmp_path: Path) -> None:
    code = "import pathlib, sys; (pathlib.Path(sys.argv[-1]).parent / 'error.txt').touch()"
    result = _python(code).run(valid, tmp_path)
    assert result.rejected is not None and result.rejected.endswith(
        "wrote an empty or unreadable error.txt"
    )


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("import os; os.abort()", "was killed by signal 6 (SIGABRT)"),
        # Sandboxed, the program is the child of a shell, which reports a death by
        # signal N as status 128+N: the two cannot be told apart, and both are crashes.
        (
            "print('Segmentation fault'); raise SystemExit(139)",
            "killed by signal 11 (SIGSEGV): Segmentation fault",
        ),
    ],
)
def test_death_by_a_signal_raises(valid, tmp_path: Path, code: str, message: str) -> None:
    with pytest.raises(BackendCrash, match=message.replace("(", r"\(").replace(")", r"\)")):
        _python(code).run(valid, tmp_path)


def test_its_own_timeout_kills_the_whole_process_group(
    valid, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOSA_TEST_MARKER", str(tmp_path))
    pid_file = tmp_path / "grandchild"
    code = (
        "import subprocess, sys, time; "
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); "
        f"open({str(pid_file)!r}, 'w').write(str(p.pid)); time.sleep(600)"
    )
    backend = CommandBackend(shlex.join([sys.executable, "-c", code]), timeout=3)
    with pytest.raises(CommandTimeout, match="still running after 3 s; killed"):
        backend.run(valid, tmp_path)
    assert pid_file.read_text()  # the grandchild was started, and then:
    assert _gone(f"TOSA_TEST_MARKER={tmp_path}")


def test_a_narrow_float_saved_with_ml_dtypes_is_read_as_its_type(tmp_path: Path) -> None:
    path = tmp_path / "r.npy"
    np.save(path, np.array([1.5, -2.0], ml_dtypes.bfloat16))  # plain numpy sees |V2
    arr = read_result(path, dtype("bf16"))
    assert arr.dtype == ml_dtypes.bfloat16 and arr.tolist() == [1.5, -2.0]
    path.write_bytes(np.lib.format.MAGIC_PREFIX + b"\x01\x00\x10\x00{'descr'")
    with pytest.raises(ValueError, match=r"not a readable \.npy file"):
        read_result(path, dtype("fp32"))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("command", "needs a program: command:EXECUTABLE"),
        ("command:  ", "needs a program"),
        ("command:'unterminated", "cannot split"),
        ("command:/no/such/runner", "no file /no/such/runner"),
        ("command:no-such-runner-on-path", "no-such-runner-on-path is not on PATH"),
    ],
)
def test_bad_commands(spec: str, message: str) -> None:
    with pytest.raises(BackendError, match=message):
        get_backend(spec)


def test_a_file_that_is_not_executable(tmp_path: Path) -> None:
    script = tmp_path / "runner.py"
    script.write_text("")
    with pytest.raises(BackendError, match=r"is not executable \(chmod \+x it"):
        CommandBackend(str(script))


# -- declared denormal modes ------------------------------------------------------------


def test_denormals_option_declares_modes_and_is_not_passed_on(valid, tmp_path: Path) -> None:
    code = (
        "import pathlib, sys; "
        "(pathlib.Path(sys.argv[-1]).parent / 'error.txt').write_text(repr(sys.argv[1:]))"
    )
    argv = shlex.join([sys.executable, "-c", code, "--flag"])
    backend = get_backend(f"command:--denormals=fp16=flush,fp32=supported {argv}")
    assert backend.denormals == {"fp16": "flush", "fp32": "supported"}
    desc = str(tmp_path / "desc.json")
    assert backend.run(valid, tmp_path).rejected == repr(["--flag", "--test_desc", desc])
    everything = CommandBackend(f"--denormals=flush {argv}")
    assert everything.denormals == {"bf16": "flush", "fp16": "flush", "fp32": "flush"}
    assert CommandBackend(argv).denormals == {}  # undeclared: either mode accepted


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--denormals=fp8e4m3=flush", "fp8e4m3 denormals must be supported"),
        ("--denormals=fp16=often", "expected TYPE=supported or TYPE=flush"),
        ("--denormals=", "empty denormal mode declaration"),
    ],
)
def test_bad_denormals_options(option: str, message: str) -> None:
    with pytest.raises(BackendError, match=message):
        CommandBackend(f"{option} {shlex.quote(sys.executable)}")
    with pytest.raises(BackendError, match="needs a program"):
        CommandBackend("--denormals=flush")


def test_a_program_declines_with_unsupported_txt(valid, tmp_path: Path) -> None:
    """unsupported.txt, whatever the exit status, makes the vector skipped with its
    text: never failed, never passed (a claimed pair with it is not met)."""
    from conformance.runner import run_one
    from conformance.verdicts import SKIPPED

    code = (
        "import pathlib, sys; "
        "(pathlib.Path(sys.argv[-1]).parent / 'unsupported.txt').write_text('no ADD here\\n'); "
        "sys.exit(3)"
    )
    backend = _python(code)
    result = backend.run(valid, tmp_path)
    assert result.declined is not None and result.declined.endswith("declined: no ADD here")
    assert result.rejected is None and not result.outputs
    verdict = run_one(backend, valid)
    assert verdict.verdict == SKIPPED and verdict.detail.endswith("declined: no ADD here")

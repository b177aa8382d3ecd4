"""Selection: --exclude, --known-failures (xfail/xpass), --shard, exit codes 5 and 130,
JUnit errors, and the same selection in the pytest plugin."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from hypothesis import given
from hypothesis import strategies as st
from interrupts import as_a_terminal_job

from conformance.cli.main import main
from conformance.selection import KnownFailures, SelectionError, Shard
from conformance.verdicts import XFAIL, XPASS, read_results

FLAKY = Path(__file__).parent / "data" / "flaky_backends.py"

WRONG_FP16 = Path(__file__).parent / "data" / "wrong_fp16_backend.py"


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pack") / "p"
    argv = ["generate", "--profile", "MI", "--ops", "ADD", "--examples", "2", "--quiet"]
    argv += ["--no-targeted", "--no-levels", "--no-chains"]  # a small pack of known counts
    assert main([*argv, "-o", str(out), "--jobs", "1"]) == 0
    return out


@pytest.fixture(scope="module")
def wrong_fp16() -> str:
    return f"python:{WRONG_FP16}:make"


def _run(pack: Path, backend: str, *extra: str) -> list[str]:
    return ["run", "--pack", str(pack), "--backend", backend, "--jobs", "1", "--quiet", *extra]


# -- shards ---------------------------------------------------------------------------


@given(
    costs=st.dictionaries(
        st.text("abcdef_0123", min_size=1, max_size=8), st.integers(0, 10_000), max_size=60
    ).filter(bool),
    count=st.integers(1, 7),
)
def test_shards_are_disjoint_cover_the_selection_and_balance_the_cost(
    costs: dict[str, int], count: int
) -> None:
    names = sorted(costs)
    parts = [Shard(k, count).take(names, costs) for k in range(1, count + 1)]
    assert sorted(n for part in parts for n in part) == names  # disjoint, and the whole
    assert parts == [Shard(k, count).take(names, dict(costs)) for k in range(1, count + 1)]
    loads = [sum(max(1, costs[n]) for n in part) for part in parts]
    # Largest first onto the least loaded shard: no shard exceeds another by more
    # than the largest single cost.
    assert max(loads) - min(loads) <= max(max(1, c) for c in costs.values())


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "a/b", "1-3", ""])
def test_a_bad_shard_is_refused(text: str) -> None:
    with pytest.raises(SelectionError, match="--shard"):
        Shard.parse(text)


def test_run_shards_partition_the_pack(pack: Path, tmp_path: Path) -> None:
    seen: list[str] = []
    for k in (1, 2, 3):
        out = tmp_path / f"s{k}.jsonl"
        assert main(_run(pack, "reference", "--shard", f"{k}/3", "--json", str(out))) == 0
        seen += [r.vector for r in read_results(out)]
    from vectors.pack import open_pack

    with open_pack(pack) as p:
        assert sorted(seen) == p.names


# -- known failures -------------------------------------------------------------------


def test_known_failures_file_parses_names_regexes_ids_and_reasons(tmp_path: Path) -> None:
    f = tmp_path / "known.txt"
    f.write_text("# a comment line\n\nADD::ADD_fp16_valid_000  # ticket 12\nADD_fp32_.*\n")
    known = KnownFailures.read(f)
    entry = type("E", (), {"name": "ADD_fp16_valid_000", "operator": "ADD"})
    other = type("E", (), {"name": "ADD_fp32_error_001", "operator": "ADD"})
    absent = type("E", (), {"name": "ADD_fp16_valid_001", "operator": "ADD"})
    assert known.reason(entry) == "ticket 12"
    assert known.reason(other) == ""  # listed, without a reason
    assert known.reason(absent) is None


def test_a_known_failures_line_that_is_not_a_regex_names_the_line(tmp_path: Path) -> None:
    f = tmp_path / "known.txt"
    f.write_text("ADD_fp16_valid_000\nADD_[fp16  # broken\n")
    with pytest.raises(SelectionError, match=r"known.txt:2: 'ADD_\[fp16'"):
        KnownFailures.read(f)


def test_known_failures_are_xfail_and_xpass_and_do_not_fail_the_run(
    pack: Path, wrong_fp16: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    known = tmp_path / "known.txt"
    known.write_text("ADD::ADD_fp16_valid_000  # ticket 12\nADD_fp32_valid_000  # flaky\n")
    out = tmp_path / "r.jsonl"
    assert main(_run(pack, wrong_fp16, "--json", str(out))) == 1  # without the list
    code = main(_run(pack, wrong_fp16, "--json", str(out), "--known-failures", str(known)))
    text = capsys.readouterr().out
    results = {r.vector: r for r in read_results(out)}
    assert results["ADD_fp16_valid_000"].verdict == XFAIL
    assert results["ADD_fp16_valid_000"].known_failure == "failed"
    assert results["ADD_fp32_valid_000"].verdict == XPASS
    # The other wrong fp16 vector is not listed: it still fails the run.
    assert results["ADD_fp16_valid_001"].verdict == "failed"
    assert code == 1
    assert "2 known failures (--known-failures):" in text
    known.write_text("ADD_fp16_valid_.*  # ticket 12\n")
    assert main(_run(pack, wrong_fp16, "--known-failures", str(known))) == 0


def test_a_known_failure_that_matches_no_vector_is_an_error(
    pack: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    known = tmp_path / "known.txt"
    known.write_text("ADD_fp16_valid_000\nCONV2D_.*  # fixed long ago\n")
    assert main(_run(pack, "reference", "--known-failures", str(known))) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "known.txt:2: 'CONV2D_.*' matches no vector of" in err


def test_exclude_leaves_vectors_out(pack: Path, wrong_fp16: str, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    assert main(_run(pack, wrong_fp16, "--exclude", "ADD_fp16_valid_.*", "--json", str(out))) == 0
    names = {r.vector for r in read_results(out)}
    assert names and not any(n.startswith("ADD_fp16_valid") for n in names)
    assert "ADD_fp16_error_000" in names


# -- exit codes -----------------------------------------------------------------------


def test_operators_match_in_any_case(pack: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    assert main(_run(pack, "reference", "--ops", "add", "--json", str(out))) == 0
    assert len(read_results(out)) > 0


@pytest.mark.parametrize(
    "extra",
    [
        ["--ops", "SUB"],
        ["--vectors", "nothing"],
        ["--exclude", ".*"],
    ],
)
def test_an_empty_selection_exits_5_with_one_line(
    pack: Path, extra: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_run(pack, "reference", *extra)) == 5
    err = capsys.readouterr().err.strip()
    assert err.startswith("tosa-conformance: no vectors: ") and "\n" not in err


def test_generate_with_no_operator_of_the_claim_exits_5(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # SIN is an MI operator: a BI claim requires none of its modes.
    argv = ["generate", "--profile", "BI", "--ops", "sin", "-o", str(tmp_path / "x")]
    assert main(argv) == 5
    err = capsys.readouterr().err
    words = "--ops 'sin' matches no operator that BI @ level 8K of TOSA 2024-04-draft requires"
    assert f"no vectors: {words}" in err
    assert not (tmp_path / "x").exists()


def test_version_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    from conformance import __version__

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"tosa-conformance {__version__}"


def test_ctrl_c_stops_a_run_with_one_line_and_exit_130(pack: Path, tmp_path: Path) -> None:
    results = tmp_path / "r.jsonl"
    cmd = [sys.executable, "-m", "conformance.cli.main", "run", "--pack", str(pack)]
    cmd += ["--backend", f"python:{FLAKY}:slow", "--jobs", "1", "--json", str(results)]
    # Its own process group, as a shell gives a job: Ctrl-C reaches the workers too.
    proc = subprocess.Popen(
        [*cmd, "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=as_a_terminal_job,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(read_results(results)) < 2:
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    lines = err.decode().strip().splitlines()
    assert len(lines) == 1, lines  # no traceback, from the run or its workers
    done = len(read_results(results))
    assert lines[0].startswith(f"tosa-conformance: interrupted after {done} of ")
    assert lines[0].endswith("vectors; rerun with --resume")


# -- JUnit ------------------------------------------------------------------------------


def test_junit_reports_crashes_as_errors_with_totals_and_the_log(
    pack: Path, tmp_path: Path
) -> None:
    junit = tmp_path / "r.xml"
    assert main(_run(pack, f"python:{FLAKY}:raises", "--junit", str(junit))) == 1
    root = ET.parse(junit).getroot()
    assert int(root.get("tests", "0")) > 0 and root.get("timestamp")
    assert float(root.get("time", "-1")) >= 0
    errors = root.findall(".//testcase/error")
    assert errors and all(e.get("type") == "crashed" for e in errors)
    assert int(root.get("errors", "0")) == len(errors)
    assert root.findall(".//testcase/failure") == []
    suite = root.find("testsuite")
    assert suite is not None and suite.get("timestamp") and suite.get("errors")


def test_junit_carries_the_backend_log(pack: Path, tmp_path: Path) -> None:
    from conformance.run_summary import write_junit
    from conformance.verdicts import CRASHED, RunReport, VectorResult

    r = VectorResult("v", "ADD", "fp32", "valid", CRASHED, "boom", log="compiler said no")
    t = VectorResult("w", "ADD", "fp32", "valid", "timeout", "no result after 2 s")
    junit = tmp_path / "r.xml"
    write_junit(RunReport([r, t], 0, 1.0), junit, "b")
    root = ET.parse(junit).getroot()
    assert root.findtext(".//testcase[@name='v']/system-out") == "compiler said no"
    assert root.find(".//testcase[@name='w']/error") is not None
    assert root.get("errors") == "2" and root.get("failures") == "0"


# -- the pytest plugin ------------------------------------------------------------------


def _pytest(pack: Path, backend: str, *extra: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rxX"]
    cmd += ["--tosa-pack", str(pack), "--tosa-backend", backend, *extra]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=600)


def test_the_plugin_takes_the_known_failures_file_and_pasted_ids(
    pack: Path, wrong_fp16: str, tmp_path: Path
) -> None:
    known = tmp_path / "known.txt"
    known.write_text("ADD_fp16_valid_.*  # ticket 12\nADD::ADD_fp32_valid_000\n")
    ids = ["ADD::ADD_fp16_valid_000", "ADD::ADD_fp32_valid_000", "ADD::ADD_fp32_error_000"]
    proc = _pytest(pack, wrong_fp16, "--tosa-known-failures", str(known), *ids, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # pytest shows ids relative to its rootdir, the common folder of the paths given.
    assert re.search(r"XFAIL \S*ADD::ADD_fp16_valid_000 - ticket 12", proc.stdout)
    assert re.search(r"XPASS \S*ADD::ADD_fp32_valid_000", proc.stdout)
    assert "1 passed" in proc.stdout and "1 xfailed, 1 xpassed" in proc.stdout


def test_the_plugin_refuses_a_stale_known_failure_and_excludes(
    pack: Path, wrong_fp16: str, tmp_path: Path
) -> None:
    known = tmp_path / "known.txt"
    known.write_text("SUB_.*\n")
    proc = _pytest(pack, "reference", "--tosa-known-failures", str(known), cwd=tmp_path)
    assert proc.returncode == 4 and "known.txt:1: 'SUB_.*' matches no vector" in proc.stderr
    proc = _pytest(pack, wrong_fp16, "--tosa-exclude", "ADD_fp16_valid_.*", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert "2 deselected" in proc.stdout


def test_results_on_disk_keep_the_judges_verdict(
    pack: Path, wrong_fp16: str, tmp_path: Path
) -> None:
    known = tmp_path / "known.txt"
    known.write_text("ADD_fp16_valid_000\n")
    out = tmp_path / "r.jsonl"
    main(_run(pack, wrong_fp16, "--known-failures", str(known), "--json", str(out)))
    docs = [json.loads(line) for line in out.read_text().splitlines()]
    doc = next(d for d in docs if d.get("vector") == "ADD_fp16_valid_000")
    assert doc["verdict"] == XFAIL and doc["known_failure"] == "failed"


# -- progress ---------------------------------------------------------------------------


def test_progress_writes_plain_lines_when_not_a_terminal() -> None:
    import io

    from conformance.progress import Progress

    stream = io.StringIO()
    with Progress("run", stream=stream) as progress:
        for done in range(1, 21):
            progress(done, 20, done // 10)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 11  # one a tenth of the way (and the first)
    assert lines[0].startswith("run: 1/20 vectors, elapsed 0:00, ETA ")
    assert lines[-1].startswith("run: 20/20 vectors, 2 failed, elapsed ")
    assert "ETA" not in lines[-1]


def test_progress_draws_a_bar_on_a_terminal() -> None:
    import io

    from conformance.progress import Progress


    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    with Progress("generate", stream=stream) as progress:
        for done in range(1, 6):
            progress(done, 5, 3)
    text = stream.getvalue()
    assert "generate" in text and "5/5" in text and "3 failed" in text and "ETA" in text


def test_ctrl_c_stops_generate_with_one_line_and_exit_130(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "conformance.cli.main", "generate", "--profile", "BI"]
    cmd += ["-o", str(tmp_path / "pack"), "--jobs", "2"]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        text=True,
        preexec_fn=as_a_terminal_job,
    )
    assert proc.stderr is not None
    first = proc.stderr.readline()  # the first progress line: the workers are busy
    assert first.startswith("generate: "), first
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines
    assert re.fullmatch(
        r"tosa-conformance: interrupted after \d+ of \d+ vectors; .*pack is incomplete: "
        r"remove it and rerun",
        lines[0],
    )


# -- fuzz -------------------------------------------------------------------------------


def test_fuzz_needs_a_profile_as_generate_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["fuzz", "--backend", "reference", "--ops", "ADD", "-o", str(tmp_path / "f")]
    assert main(argv) == 2
    assert "a claim needs at least one profile" in capsys.readouterr().err


def test_fuzz_with_no_pair_exits_5(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["fuzz", "--backend", "reference", "--profile", "BI", "--ops", "sin"]
    assert main([*argv, "-o", str(tmp_path / "f")]) == 5
    assert "no vectors: no (operator, mode) pair of BI" in capsys.readouterr().err


def test_fuzz_keeps_its_example_database_outside_the_findings_pack(tmp_path: Path) -> None:
    from conformance.fuzz import database_path

    assert database_path(tmp_path / "findings") == tmp_path / "findings.hypothesis"

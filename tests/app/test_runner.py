"""`tosa-conformance run`: verdicts, isolation from crashing backends, resume, reports."""

import json
import subprocess
import sys
import time
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from conformance.cli.main import main
from conformance.runner import run_pack
from conformance.verdicts import CRASHED, FAILED, PASSED, TIMEOUT, read_results

FLAKY = Path(__file__).parent / "data" / "flaky_backends.py"


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pack") / "p"
    argv = ["generate", "--profile", "MI", "--ops", "ADD", "--examples", "2", "--quiet"]
    assert main([*argv, "-o", str(out), "--jobs", "1"]) == 0
    return out


def _verdicts(report) -> dict[str, str]:
    return {r.vector: r.verdict for r in report.results}


def test_reference_passes_everything(pack: Path, tmp_path: Path) -> None:
    report = run_pack(pack, "reference", jobs=2, json_path=tmp_path / "r.jsonl")
    assert report.results and not report.failed
    assert {r.verdict for r in report.results} <= {PASSED, "info"}
    header, *lines = (tmp_path / "r.jsonl").read_text().splitlines()
    assert json.loads(header)["backend"] == "reference"  # conformance.results_file
    assert len(lines) == len(report.results)
    assert all({"vector", "verdict"} <= set(json.loads(line)) for line in lines)


@pytest.mark.parametrize(
    ("factory", "verdict", "detail"),
    [
        ("segfault", CRASHED, "killed by signal 11"),
        ("hang", TIMEOUT, "no result after 2 s"),
        ("wrong_shape", FAILED, "unusable output: shape [7, 7]"),
        ("raises", CRASHED, "RuntimeError: backend bug"),
    ],
)
def test_a_misbehaving_backend_loses_only_those_vectors(
    pack: Path, factory: str, verdict: str, detail: str
) -> None:
    # Only the hang waits for its timeout; a short one elsewhere could time out a
    # healthy vector on a loaded CI machine.
    timeout = 2 if factory == "hang" else 30
    report = run_pack(pack, f"python:{FLAKY}:{factory}", jobs=2, timeout=timeout)
    bad = {r.vector: r for r in report.results if r.vector.endswith("_001")}
    assert bad, "the pack has vectors ending in _001"
    for r in bad.values():
        if r.kind == "valid" or factory in ("segfault", "hang", "raises"):
            assert r.verdict == verdict and detail in r.detail, r
    others = [r for r in report.results if not r.vector.endswith("_001")]
    assert others and all(r.verdict in (PASSED, "info") for r in others)


def test_resume_after_a_killed_run(pack: Path, tmp_path: Path) -> None:
    results = tmp_path / "r.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "conformance.cli.main",
        "run",
        "--pack",
        str(pack),
        "--backend",
        f"python:{FLAKY}:slow",
        "--jobs",
        "1",
        "--json",
        str(results),
        "--quiet",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if results.exists() and len(results.read_text().splitlines()) >= 4:  # header + 3
            break
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    first = read_results(results)
    assert 3 <= len(first) < 24
    # The same backend: a results file of another one is refused (tests/reliability).
    report = run_pack(pack, f"python:{FLAKY}:slow", json_path=results, resume=True)
    assert report.resumed == len(first)
    assert len(report.results) == len(json.loads((pack / "pack.json").read_text())["vectors"])
    # nothing ran twice: one line per vector in the file
    names = [json.loads(line)["vector"] for line in results.read_text().splitlines()[1:]]
    assert len(names) == len(set(names))


def test_cli_exit_status_and_reports(pack: Path, tmp_path: Path, capsys) -> None:
    junit = tmp_path / "r.xml"
    code = main(
        ["run", "--pack", str(pack), "--backend", "reference", "--junit", str(junit), "--quiet"]
    )
    out = capsys.readouterr().out
    assert code == 0 and "ADD" in out and "passed" in out
    suites = ET.parse(junit).getroot()
    assert suites.find("testsuite").get("name") == "ADD"
    code = main(
        [
            "run",
            "--pack",
            str(pack),
            "--backend",
            f"python:{FLAKY}:wrong_shape",
            "--quiet",
            "--timeout",
            "5",
        ]
    )
    assert code == 1
    assert "failing vectors" in capsys.readouterr().out


def test_a_chain_vector_names_its_operators(pack: Path, tmp_path: Path, capsys) -> None:
    # Issue 24: a chain's failure named only its vector (ADD_..._chain-...), so a vendor
    # filed it against ADD; its results, JUnit test and failure line name the chain.
    junit, results = tmp_path / "r.xml", tmp_path / "r.jsonl"
    argv = ["run", "--pack", str(pack), "--backend", f"python:{FLAKY}:wrong_shape"]
    assert main([*argv, "--quiet", "--junit", str(junit), "--json", str(results)]) == 1
    out = capsys.readouterr().out
    by_name = {r.vector: r for r in read_results(results)}
    chains = {n: r for n, r in by_name.items() if "_chain-" in n}
    assert any(r.failed for r in chains.values())
    for name, r in chains.items():
        assert r.chain and r.chain[-1] == "ADD" and len(r.chain) >= 2, r.chain
        if r.failed:
            assert f"  {name} (chain {' > '.join(r.chain)}): failed: " in out
    assert all(not r.chain for n, r in by_name.items() if n not in chains)
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    for name, r in chains.items():
        prop = cases[name].find("properties/property[@name='tosa_chain']")
        assert prop is not None and prop.get("value") == r.chain_path
        if r.failed:
            message = cases[name].find("failure").get("message")
            assert message.startswith(f"chain {r.chain_path}: ")
    plain = next(n for n in cases if n not in chains)
    assert cases[plain].find("properties") is None


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--backend", "nope"], "unknown backend 'nope'"),
        (["--backend", "reference", "--resume"], "--resume needs --json"),
        (["--backend", "python:/no/such.py:f"], "no file /no/such.py"),
    ],
)
def test_bad_arguments(pack: Path, capsys, argv, message) -> None:
    code = main(["run", "--pack", str(pack), *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1


def test_not_a_pack(tmp_path: Path, capsys) -> None:
    code = main(["run", "--pack", str(tmp_path), "--backend", "reference"])
    assert code == 2 and "pack.json" in capsys.readouterr().err

"""The pytest plugin: a pack's vectors as test items, run through pytester."""

import json
from importlib.metadata import entry_points
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from conformance.cli.main import main

pytest_plugins = ["pytester"]

FLAKY = Path(__file__).parents[1] / "app" / "data" / "flaky_backends.py"

BROKEN = """
import numpy as np

from conformance.backends.base import BackendResult
from conformance.backends.reference import ReferenceBackend


class Broken(ReferenceBackend):
    '''Accepts every graph; one ulp too high on SUB fp32.'''

    def run(self, vector, workdir):
        result = super().run(vector, workdir)
        if vector.kind == "error":
            return BackendResult({})
        if vector.operator == "SUB" and vector.mode == "fp32" and result.rejected is None:
            # a value that is never the right one
            result.outputs = {
                n: np.where(v == 1, 2, 1).astype(v.dtype) for n, v in result.outputs.items()
            }
        return result


class NoFp16(ReferenceBackend):
    def unsupported(self, vector):
        return "fp16 is not implemented" if vector.mode == "fp16" else None


def broken(_):
    return Broken()


def no_fp16(_):
    return NoFp16()
"""


def _plugin() -> list[str]:
    """Load the plugin by hand unless its entry point is installed (loading it twice
    is an error); pytest-benchmark, which warns in runs under xdist, stays out."""
    value = "conformance.pytest_plugin"
    if any(ep.value == value for ep in entry_points(group="pytest11")):
        return ["-p", "no:benchmark"]
    return ["-p", "no:benchmark", "-p", value]


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pack") / "p"
    # the plugin's mechanics, not the pack's power: the small pack (no targeted vectors)
    argv = ["generate", "--profile", "MI", "--ops", "ADD|SUB", "--examples", "1", "--quiet"]
    argv += ["--no-targeted", "--no-chains"]  # a small pack of known counts
    assert main([*argv, "-o", str(out), "--jobs", "1"]) == 0
    return out


@pytest.fixture
def kinds(pack: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for v in json.loads((pack / "pack.json").read_text())["vectors"]:
        counts[v["kind"]] = counts.get(v["kind"], 0) + 1
    return counts


@pytest.fixture
def run(pytester: pytest.Pytester, pack: Path):
    def run(backend: str, *args: str, subprocess: bool = False) -> pytest.RunResult:
        argv = [*_plugin(), "--tosa-pack", str(pack), "--tosa-backend", backend, *args]
        if subprocess:
            return pytester.runpytest_subprocess(*argv)
        return pytester.runpytest(*argv)

    return run


@pytest.fixture
def broken(pytester: pytest.Pytester) -> str:
    path = pytester.makepyfile(broken_backend=BROKEN)
    return f"python:{path}"


def test_the_reference_passes_and_level_vectors_are_skipped(run, kinds) -> None:
    result = run("reference", "-rs")
    result.assert_outcomes(passed=kinds["valid"] + kinds["error"], skipped=kinds["level"])
    result.stdout.fnmatch_lines(
        [
            "tosa-conformance: pack *p (42 vectors, sha256 *), backend reference "
            "(isolated worker, 60 s per vector)",
            "SKIPPED * *p/ADD_fp16_rank-above_000:1: level vector, reported but not judged: *",
        ]
    )


def test_failures_show_the_judges_detail(run, broken) -> None:
    result = run(f"{broken}:broken", "-k", "SUB and fp32")
    # 4 error vectors accepted, 2 valid ones wrong, the level one skipped
    result.assert_outcomes(failed=6, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*_ SUB_fp32_valid_000 (SUB, fp32, valid) _*",
            "SUB_fp32_valid_000 (SUB, fp32, valid) on python:*:broken: failed",
            "  output output: FAILED, margin *, 1 failing element(s): FAIL (1 of 1 element)*",
            "run it again: tosa-conformance run --pack * --backend *broken "
            "--vectors SUB_fp32_valid_000",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "SUB_fp32_error_000 (SUB, fp32, error) on *: error-expected-but-passed",
            "  accepted a graph that breaks ERROR_IF(*)",
        ]
    )


def test_a_declined_vector_is_skipped_with_the_backends_reason(run, broken) -> None:
    result = run(f"{broken}:no_fp16", "-k", "ADD and valid", "-rs")
    result.assert_outcomes(passed=4, skipped=2)
    result.stdout.fnmatch_lines(["SKIPPED * *ADD_fp16_valid_000:1: fp16 is not implemented"])


@pytest.mark.parametrize(
    ("selection", "count"),
    [
        (["-k", "SUB"], 21),
        (["-k", "signed and not error"], 6),
        (["-m", "ADD and valid"], 6),
        (["-m", "tosa and error"], 24),
        (["-m", "level"], 6),
    ],
)
def test_keywords_and_markers_select(run, selection: list[str], count: int) -> None:
    result = run("reference", "--collect-only", "-q", "--strict-markers", *selection)
    assert result.ret == 0
    ids = [line for line in result.outlines if "::" in line]
    assert len(ids) == count


def test_node_ids_and_junit_xml(run, broken, pytester: pytest.Pytester) -> None:
    result = run("reference", "--collect-only", "-q", "-k", "ADD_fp32")
    assert "ADD::ADD_fp32_valid_000" in result.outlines
    xml = pytester.path / "report.xml"
    run(f"{broken}:broken", "-k", "fp32", f"--junitxml={xml}")
    cases = {c.get("name"): c for c in ET.parse(xml).getroot().iter("testcase")}
    assert len(cases) == 14
    assert cases["ADD_fp32_valid_000"].get("classname") == "ADD"
    assert cases["ADD_fp32_valid_000"].find("failure") is None
    failure = cases["SUB_fp32_valid_000"].find("failure")
    assert failure is not None and "output output: FAILED" in failure.get("message")
    assert cases["ADD_fp32_rank-above_000"].find("skipped") is not None
    props = {p.get("name"): p.get("value") for p in cases["SUB_fp32_valid_000"].iter("property")}
    assert props["tosa_verdict"] == "failed" and float(props["tosa_margin"]) > 1


def test_last_failed_reruns_only_the_failures(run, broken) -> None:
    first = run(f"{broken}:broken")
    first.assert_outcomes(failed=26, passed=10, skipped=6)
    again = run(f"{broken}:broken", "--lf")
    again.assert_outcomes(failed=26)
    again.stdout.fnmatch_lines(["run-last-failure: rerun previous 26 failures"])


def test_xdist(run, kinds) -> None:
    result = run("reference", "-n", "2", "-k", "ADD", subprocess=True)
    result.assert_outcomes(
        passed=(kinds["valid"] + kinds["error"]) // 2, skipped=kinds["level"] // 2
    )


def test_a_crashing_backend_fails_only_its_vectors(run) -> None:
    result = run(f"python:{FLAKY}:segfault", "-k", "ADD")
    # the flaky backends misbehave on names ending in _001: here, one error vector per mode
    result.assert_outcomes(failed=3, passed=15, skipped=3)
    result.stdout.fnmatch_lines(
        [
            "ADD_fp16_error_001 (ADD, fp16, error) on *: crashed",
            "  the backend crashed the worker (killed by signal 11)",
        ]
    )


def test_a_hanging_backend_times_out(run) -> None:
    result = run(f"python:{FLAKY}:hang", "-k", "ADD_fp32_error", "--tosa-timeout", "2")
    result.assert_outcomes(failed=1, passed=3)
    result.stdout.fnmatch_lines(["ADD_fp32_error_001 * timeout", "  no result after 2 s"])


def test_in_process_a_backend_exception_is_a_test_error(run) -> None:
    result = run(f"python:{FLAKY}:raises", "-k", "ADD_fp32_error", "--tosa-in-process")
    result.assert_outcomes(failed=1, passed=3)
    result.stdout.fnmatch_lines(["*RuntimeError: backend bug"])
    assert "isolated worker" not in result.stdout.str()


def test_with_a_pack_only_its_vectors_run_unless_asked(
    run, kinds, pytester: pytest.Pytester
) -> None:
    # Issue 24, item 5: in a project's checkout, `pytest --tosa-pack` also collected the
    # project's own tests (its testpaths) and ran for minutes.
    pytester.makepyfile(test_project="def test_project():\n    pass\n")
    pytester.makeini("[pytest]\ntestpaths = .\n")
    total = kinds["valid"] + kinds["error"]
    run("reference").assert_outcomes(passed=total, skipped=kinds["level"])
    more = run("reference", "--tosa-with-tests")
    more.assert_outcomes(passed=total + 1, skipped=kinds["level"])
    named = run("reference", "test_project.py")  # a path given: it is collected
    named.assert_outcomes(passed=total + 1, skipped=kinds["level"])


def test_without_a_pack_the_plugin_adds_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    result = pytester.runpytest(*_plugin(), "--strict-markers")
    result.assert_outcomes(passed=1)
    # the plugin is loaded (pytest names it in the header) but collects nothing itself
    assert "collected 1 item" in result.stdout.str()
    assert "tosa-conformance:" not in result.stdout.str()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tosa-backend", "reference"], "--tosa-backend needs --tosa-pack"),
        (["--tosa-pack", "PACK"], "--tosa-pack needs --tosa-backend (e.g. *)"),
        (["--tosa-pack", "nowhere", "--tosa-backend", "reference"], "--tosa-pack: *nowhere*"),
        (
            ["--tosa-pack", "PACK", "--tosa-backend", "nope"],
            "--tosa-backend: unknown backend 'nope'*",
        ),
        (
            ["--tosa-pack", "PACK", "--tosa-backend", "reference", "--tosa-timeout", "0"],
            "--tosa-timeout must be positive",
        ),
    ],
)
def test_usage_errors(pytester: pytest.Pytester, pack: Path, args: list[str], message: str) -> None:
    argv = [str(pack) if a == "PACK" else a for a in args]
    result = pytester.runpytest(*_plugin(), *argv)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {message}"])


def test_a_relative_pack_path_is_taken_from_the_invocation_folder(
    pytester: pytest.Pytester, pack: Path
) -> None:
    rel = Path("..") / pack.parent.name / pack.name
    pytester.chdir()
    if not (pytester.path / rel).exists():
        pytest.skip("the pack is not next to pytester's folder")
    result = pytester.runpytest(
        *_plugin(), "--tosa-pack", str(rel), "--tosa-backend", "reference", "-k", "SUB_fp32"
    )
    result.assert_outcomes(passed=6, skipped=1)

"""The runner's optional batch hook: vectors prepared together, judged one by one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conformance.backends.base import batch_size
from conformance.cli.main import main
from conformance.runner import run_pack
from conformance.verdicts import CRASHED, INFO, PASSED, read_results

BACKENDS = Path(__file__).parent / "batching_backends.py"


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pack") / "p"
    argv = ["generate", "--profile", "MI", "--ops", "ADD", "--examples", "2", "--quiet"]
    argv += ["--no-targeted", "--no-levels", "-o", str(out), "--jobs", "1"]
    assert main(argv) == 0
    return out


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "batches.log"
    path.touch()
    monkeypatch.setenv("TOSA_TEST_BATCH_LOG", str(path))
    return path


def _batches(log: Path) -> list[list[str]]:
    return [line.split() for line in log.read_text().splitlines()]


def test_batch_size_is_optional() -> None:
    class Plain:
        name = "plain"

    class NoPrepare:
        batch_size = 8

    class Batched:
        batch_size = 8

        def prepare(self, vectors: object, workdir: object) -> None: ...

    assert batch_size(Plain()) == 1 and batch_size(NoPrepare()) == 1
    assert batch_size(Batched()) == 8


def test_vectors_are_prepared_in_batches_and_each_is_judged(pack: Path, log: Path) -> None:
    report = run_pack(pack, f"python:{BACKENDS}:plain", jobs=2)
    assert report.results and all(r.verdict in (PASSED, INFO) for r in report.results)
    batches = _batches(log)
    # Every vector prepared exactly once, in the pack's order, four at a time.
    names = [r.vector for r in report.results]
    assert sorted(n for b in batches for n in b) == sorted(names)
    assert all(len(b) <= 4 for b in batches) and max(len(b) for b in batches) == 4
    assert len(batches) == -(-len(names) // 4)


@pytest.mark.parametrize("factory", ["dies", "hangs", "raises"])
def test_a_batch_that_cannot_be_prepared_runs_one_by_one(
    pack: Path, log: Path, factory: str
) -> None:
    timeout = 2 if factory == "hangs" else 30  # only the hang waits for it
    report = run_pack(pack, f"python:{BACKENDS}:{factory}", jobs=2, timeout=timeout)
    assert report.results and all(r.verdict in (PASSED, INFO) for r in report.results), [
        (r.vector, r.verdict, r.detail) for r in report.results if r.verdict not in (PASSED, INFO)
    ]
    # Each batch was tried once; after a death or a hang its vectors went one by one
    # (never prepared again), and all of them passed.
    batches = _batches(log)
    assert len(batches) == -(-len(report.results) // 4)
    assert sorted(n for b in batches for n in b) == sorted(r.vector for r in report.results)


def test_a_vector_that_kills_the_worker_after_preparing_is_the_only_one_lost(
    pack: Path, log: Path, tmp_path: Path
) -> None:
    # As a user runs it, in a process of its own: nothing an earlier test left in this
    # one (a patched helper, a loaded backend) reaches the workers it forks.
    results = tmp_path / "results.jsonl"
    cmd = [sys.executable, "-m", "conformance.cli.main", "run", "--pack", str(pack)]
    cmd += ["--backend", f"python:{BACKENDS}:dies_running", "--jobs", "2", "--quiet"]
    # A death is seen at once; the timeout only guards the healthy vectors of a loaded CI.
    proc = subprocess.run([*cmd, "--timeout", "30", "--json", str(results)], check=False)
    assert proc.returncode == 1
    found = read_results(results)
    bad = [r for r in found if r.vector.endswith("_001")]
    assert bad and all(r.verdict == CRASHED and "exit 4" in r.detail for r in bad)
    good = [r for r in found if not r.vector.endswith("_001")]
    assert good and all(r.verdict in (PASSED, INFO) for r in good), [
        (r.vector, r.verdict, r.detail) for r in good if r.verdict not in (PASSED, INFO)
    ]

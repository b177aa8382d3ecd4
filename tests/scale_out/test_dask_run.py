"""`run --executor`: a pack through a Dask scheduler and two workers on loopback gives
the local verdicts, every vector exactly once, even when a worker is killed mid-run."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from conformance.cli.main import main
from conformance.executors import Executor
from conformance.runner import run_pack
from conformance.verdicts import CRASHED, PASSED

pytest.importorskip("distributed", reason="Dask is the optional extra 'distributed'")

FLAKY = Path(__file__).parents[1] / "app" / "data" / "flaky_backends.py"


def _verdicts(report) -> dict[str, str]:
    return {r.vector: r.verdict for r in report.results}


def _recorded(path: Path) -> list[str]:
    """The vector of every result line (the header line has none)."""
    docs = [json.loads(line) for line in path.read_text().splitlines()]
    return [d["vector"] for d in docs if "vector" in d]


def test_same_verdicts_as_a_local_run(pack: Path, executor: Executor, tmp_path: Path) -> None:
    local = run_pack(pack, "reference", jobs=1)
    results = tmp_path / "r.jsonl"
    remote = run_pack(pack, "reference", executor=executor, json_path=results)
    assert _verdicts(remote) == _verdicts(local)
    assert sorted(_recorded(results)) == sorted(_verdicts(local))


def test_a_killed_worker_loses_no_vector_and_repeats_none(
    pack: Path, executor: Executor, client, tmp_path: Path
) -> None:
    local = run_pack(pack, "reference", jobs=1)
    pids = client.run(os.getpid)
    victim = sorted(pids.values())[0]
    killed: list[int] = []

    def kill_one(done: int, total: int, failed: int) -> None:
        if done == 3 and not killed:  # mid-run: results are in, most tasks are not
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)

    results = tmp_path / "r.jsonl"
    report = run_pack(
        pack,
        f"python:{FLAKY}:slow",  # 0.2 s a vector: the kill lands while tasks run
        executor=executor,
        json_path=results,
        progress=kill_one,
    )
    assert killed == [victim]
    assert _verdicts(report) == _verdicts(local)
    recorded = _recorded(results)
    assert len(recorded) == len(set(recorded)) == len(local.results)
    client.wait_for_workers(2, timeout=60)  # the nanny restarts it for the next tests
    assert victim not in client.run(os.getpid).values()


def test_a_crashing_backend_fails_its_vectors_not_the_workers(
    pack: Path, executor: Executor, client
) -> None:
    client.wait_for_workers(2, timeout=60)  # an earlier test's killed worker is back
    before = client.run(os.getpid)
    report = run_pack(pack, f"python:{FLAKY}:segfault", executor=executor, timeout=20)
    crashed = {r.vector: r for r in report.results if r.verdict == CRASHED}
    assert crashed and all(n.endswith("_001") for n in crashed)
    assert all("killed by signal 11" in r.detail for r in crashed.values())
    assert all(r.verdict == PASSED for r in report.results if not r.vector.endswith("_001"))
    assert client.run(os.getpid) == before  # the same Dask worker processes


def test_resume_and_junit_through_the_cli(pack: Path, executor: Executor, tmp_path: Path) -> None:
    results, junit = tmp_path / "r.jsonl", tmp_path / "r.xml"
    where = ["--executor", executor.address.replace("tcp://", "dask://")]
    base = ["run", "--pack", str(pack), "--backend", "reference", "--quiet", *where]
    assert main([*base, "--json", str(results), "--vectors", ".*_000"]) == 0
    first = _recorded(results)
    assert first and all(n.endswith("_000") for n in first)
    assert main([*base, "--json", str(results), "--resume", "--junit", str(junit)]) == 0
    recorded = _recorded(results)
    assert len(recorded) == len(set(recorded)) > len(first)
    assert junit.read_text().count("<testcase") == len(recorded)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--executor", "dask:remote"], "expected dask:local or dask://HOST:PORT"),
        (["--resources", "board=1"], "--resources needs --executor"),
        (["--executor", "dask:local", "--resources", "board"], "expected NAME=N"),
    ],
)
def test_bad_flags_are_one_line(pack: Path, argv: list[str], message: str, capsys) -> None:
    code = main(["run", "--pack", str(pack), "--backend", "reference", *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_no_scheduler_there_is_one_line(
    pack: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    from conformance.executors import dask_pool

    monkeypatch.setattr(dask_pool, "CONNECT_SECONDS", 1.0)  # nobody listens on port 9
    argv = ["run", "--pack", str(pack), "--backend", "reference", "--quiet"]
    assert main([*argv, "--executor", "dask://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert "cannot reach the Dask scheduler" in err and len(err.strip().splitlines()) == 1


def test_results_are_tracked_on_the_pools_own_loop(executor: Executor, client) -> None:
    """With another client as the process's default (a library user's, or the test's),
    the pool's futures are still awaited on its own loop: a future re-gathered after
    its worker died fails with "bound to a different event loop" otherwise."""
    from conformance.executors.dask_pool import completed, connect, release

    ours = connect(executor, 0)
    try:
        assert ours is not client and ours.loop is not client.loop
        futures = [ours.submit(abs, -n, pure=False) for n in range(3)]
        tracker = completed(ours, futures)
        assert tracker.loop is ours.loop
        assert sorted(f.result() for f in tracker) == [0, 1, 2]
    finally:
        release(ours)

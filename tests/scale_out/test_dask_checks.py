"""What a cluster must be before it gets work: reachable, of the same version, with the
pack where the workers can see it, offering the resources the tasks hold."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from conformance.cli.main import main
from conformance.executors import (
    Executor,
    ExecutorError,
    identity,
    parse_executor,
    parse_resources,
)
from conformance.executors.dask_pool import chunk_size, mismatch, verify
from conformance.runner import run_pack
from conformance.verdicts import PASSED

# The parsing and worker-check tests need no Dask; those that start a cluster skip
# themselves without it (conftest.start_cluster).

RECORDING = Path(__file__).parent / "data" / "recording_backend.py"


def test_parse_executor() -> None:
    assert parse_executor("dask:local").address == "local"
    assert parse_executor("dask://10.0.0.5:8786").address == "tcp://10.0.0.5:8786"
    assert parse_executor("tcp://h:1", "board=1,mem=2.5").resources == (
        ("board", 1.0),
        ("mem", 2.5),
    )
    for bad in ("dask", "dask://host", "http://h:1", "dask://h:port"):
        with pytest.raises(ValueError, match="expected dask:local"):
            parse_executor(bad)
    with pytest.raises(ValueError, match="NAME=N"):
        parse_resources("board=one")


@pytest.mark.parametrize(("count", "threads", "per"), [(1, 2, 1), (24, 2, 3), (10_000, 2, 16)])
def test_chunks_give_each_thread_a_few_tasks(count: int, threads: int, per: int) -> None:
    assert chunk_size(count, threads) == per


def test_a_worker_of_another_version_refuses_its_task(tmp_path: Path) -> None:
    other = {**identity(), "tosa-conformance": "0.0.0-other"}
    with pytest.raises(ExecutorError, match=r"has tosa-conformance .* this machine has"):
        verify({"identity": other, "shared": {}})
    msg = mismatch("tcp://w:1", other, identity())
    assert "\n" not in msg and "0.0.0-other" in msg


def test_a_pack_the_worker_cannot_see_is_refused(tmp_path: Path) -> None:
    gone = str(tmp_path / "nowhere")
    with pytest.raises(ExecutorError, match=r"cannot see .*nowhere: put it on storage"):
        verify({"identity": identity(), "shared": {gone: None}})
    (tmp_path / "pack.json").write_text("{}")
    with pytest.raises(ExecutorError, match="sees another"):
        verify({"identity": identity(), "shared": {str(tmp_path): "0" * 64}})


def test_the_cli_refuses_a_cluster_of_another_version(pack: Path, start_cluster, capsys) -> None:
    from distributed import Client

    with start_cluster(n_workers=1) as cluster, Client(cluster) as client:

        def pretend_another_version() -> None:
            import conformance

            conformance.__version__ = "0.0.0-other"

        client.run(pretend_another_version)
        address = cluster.scheduler_address.replace("tcp://", "dask://")
        argv = ["run", "--pack", str(pack), "--backend", "reference", "--executor", address]
        assert main(argv) == 2
    err = capsys.readouterr().err
    assert "has tosa-conformance 0.0.0-other" in err and len(err.strip().splitlines()) == 1


def test_boards_take_one_vector_at_a_time(
    pack: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, start_cluster, capsys
) -> None:
    record = tmp_path / "intervals.txt"
    monkeypatch.setenv("TOSA_TEST_RECORD", str(record))
    # One worker with two threads but one board: two vectors could run at once, the
    # board resource says they must not.
    with start_cluster(n_workers=1, threads_per_worker=2, resources={"board": 1}) as cluster:
        board = Executor(cluster.scheduler_address, (("board", 1.0),))
        report = run_pack(pack, f"python:{RECORDING}:recording", executor=board)
        assert {r.verdict for r in report.results} == {PASSED}
        intervals = sorted((float(a), float(b)) for _, a, b in (ln.split() for ln in record.open()))
        assert len(intervals) == len(report.results)
        assert all(s >= e for (_, e), (s, _) in itertools.pairwise(intervals))
        address = cluster.scheduler_address.replace("tcp://", "dask://")
        argv = ["run", "--pack", str(pack), "--backend", "reference", "--executor", address]
        assert main([*argv, "--resources", "gpu=1"]) == 2
    err = capsys.readouterr().err
    assert "no Dask worker offers the resources gpu=1" in err


def test_dask_local_starts_its_own_cluster(pack: Path, tmp_path: Path, capsys) -> None:
    pytest.importorskip("distributed", reason="Dask is the optional extra 'distributed'")
    from conformance.executors.dask_pool import _CLIENTS, close_executors

    results = tmp_path / "r.jsonl"
    argv = ["run", "--pack", str(pack), "--backend", "reference", "--quiet"]
    try:
        local = ["--executor", "dask:local", "--jobs", "2", "--json", str(results)]
        assert main([*argv, *local]) == 0
        [(_client, cluster)] = _CLIENTS.values()  # kept for the process, two workers
        assert len(cluster.workers) == 2
    finally:
        close_executors()
    assert not _CLIENTS
    lines = [ln for ln in results.read_text().splitlines() if '"vector"' in ln]
    assert len(lines) == len(run_pack(pack, "reference").results)


def test_without_dask_the_flag_says_what_to_install(
    pack: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "distributed" else real(name)
    )
    argv = ["run", "--pack", str(pack), "--backend", "reference", "--executor", "dask:local"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "pip install 'tosa-conformance[distributed]'" in err
    assert len(err.strip().splitlines()) == 1

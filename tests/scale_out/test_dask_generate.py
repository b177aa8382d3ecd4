"""`generate --executor`: the same pack, byte for byte, as on this machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.cli.main import main
from conformance.executors import Executor

pytest.importorskip("distributed", reason="Dask is the optional extra 'distributed'")


def test_the_cluster_writes_the_local_bytes(executor: Executor, tmp_path: Path, capsys) -> None:
    # Both rounds (the targeted second round too), must-fail and level vectors.
    argv = ["generate", "--profile", "MI", "--ops", "ADD", "--examples", "1", "--quiet"]
    assert main([*argv, "-o", str(tmp_path / "local"), "--jobs", "1"]) == 0
    where = executor.address.replace("tcp://", "dask://")
    assert main([*argv, "-o", str(tmp_path / "dask"), "--executor", where]) == 0
    out = capsys.readouterr().out
    shas = [line for line in out.splitlines() if line.startswith("pack sha256")]
    assert len(shas) == 2 and shas[0] == shas[1]
    # pack.json lists every file's sha256: equal indexes, and the files match them
    local, dask = (tmp_path / "local" / "pack.json"), (tmp_path / "dask" / "pack.json")
    assert local.read_bytes() == dask.read_bytes()
    assert main(["verify-pack", str(tmp_path / "dask")]) == 0

"""`fuzz --executor`: pairs spread over two workers that share the findings folder's
Hypothesis example database, so a failure found on one replays on any other."""

from __future__ import annotations

import json
import re
import unittest
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import Phase

from conformance import fuzz
from conformance.cli.main import main
from conformance.executors import Executor
from conformance.executors.fuzz_pairs import searched_here
from conformance.fuzz import database_path

pytest.importorskip("distributed", reason="Dask is the optional extra 'distributed'")

FLAKY = Path(__file__).parents[1] / "app" / "data" / "flaky_backends.py"
# ADD and SUB in BI: two pairs, both hit by the planted off-by-one on large inputs.
FUZZ = ["fuzz", "--backend", f"python:{FLAKY}:off_by_one", "--ops", "ADD|SUB", "--profile", "BI"]


def _found(out: str) -> dict[str, int]:
    """Pair -> examples tried before its finding, from the FOUND lines."""
    lines = (
        re.match(r"FOUND .*\): (\S+) \[.*\] after (\d+) examples", ln) for ln in out.splitlines()
    )
    return {m.group(1): int(m.group(2)) for m in lines if m}


def test_two_workers_share_the_example_database(
    executor: Executor, client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    findings = tmp_path / "findings"
    where = ["--executor", executor.address.replace("tcp://", "dask://")]
    assert main([*FUZZ, "--max-examples", "60", "-o", str(findings), *where]) == 1
    assert set(_found(capsys.readouterr().out)) == {"ADD", "SUB"}
    searched = client.run(searched_here)
    assert sum(bool(pairs) for pairs in searched.values()) == 2  # each worker searched one
    index = json.loads((findings / "pack.json").read_text())
    assert sorted(v["operator"] for v in index["vectors"]) == ["ADD", "SUB"]
    saved = database_path(findings)
    assert sorted(p.name for p in saved.iterdir()) == ["add-signed-32", "sub-signed-32"]
    # Again over the workers, another seed: whichever worker searches a pair finds it.
    again = [*FUZZ, "--max-examples", "5", "--seed", "7"]
    assert main([*again, "-o", str(findings), *where]) == 1
    assert set(_found(capsys.readouterr().out)) == {"ADD", "SUB"}
    # On this machine with Hypothesis's generate and shrink phases off, only the
    # database can supply a failing example: the workers' findings replay here...
    replay_only = SimpleNamespace(explicit=Phase.explicit, reuse=Phase.reuse)
    replay_only.generate = replay_only.shrink = Phase.reuse
    monkeypatch.setattr(fuzz, "Phase", replay_only)
    assert main([*again, "-o", str(findings)]) == 1
    assert set(_found(capsys.readouterr().out)) == {"ADD", "SUB"}
    # ... while without the database there is nothing to run (the control).
    with pytest.raises(unittest.SkipTest, match="run no test cases"):
        main([*again, "-o", str(tmp_path / "fresh")])


def test_findings_replay_on_the_cluster(executor: Executor, tmp_path: Path, capsys) -> None:
    findings = tmp_path / "findings"
    assert main([*FUZZ, "--ops", "ADD", "--max-examples", "60", "-o", str(findings)]) == 1
    capsys.readouterr()
    where = ["--executor", executor.address.replace("tcp://", "dask://")]
    run = ["run", "--pack", str(findings), "--backend", f"python:{FLAKY}:off_by_one"]
    assert main([*run, "--quiet", *where]) == 1
    assert "1 failing vectors" in capsys.readouterr().out

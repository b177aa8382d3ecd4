"""`tosa-conformance fuzz`: finds a planted bug, shrinks it, saves a replayable vector."""

import json
from pathlib import Path

import numpy as np
import pytest

from conformance.cli.fuzz_cmd import parse_duration
from conformance.cli.main import UsageError, main
from conformance.runner import run_pack

FLAKY = Path(__file__).parent / "data" / "flaky_backends.py"


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    out = tmp_path_factory.mktemp("fuzz") / "findings"
    code = main(
        [
            "fuzz",
            "--backend",
            f"python:{FLAKY}:off_by_one",
            "--ops",
            "ADD",
            "--profile",
            "BI",
            "--max-examples",
            "60",
            "-o",
            str(out),
        ]
    )
    return out, code


def test_finds_and_shrinks_the_planted_bug(findings) -> None:
    out, code = findings
    assert code == 1
    index = json.loads((out / "pack.json").read_text())
    assert [v["operator"] for v in index["vectors"]] == ["ADD"]
    vector = out / index["vectors"][0]["name"]
    a = np.load(vector / "input-0.npy")
    # shrunk: the smallest shape (a scalar or one element) that still shows the bug
    assert a.size == 1 and abs(int(a.reshape(-1)[0])) > 1000


def test_the_finding_replays_to_the_same_failure(findings) -> None:
    out, _ = findings
    report = run_pack(out, f"python:{FLAKY}:off_by_one")
    assert [r.verdict for r in report.results] == ["failed"]
    assert "mismatch" in report.results[0].detail
    assert not run_pack(out, "reference").failed  # the vector itself is right


def test_a_correct_backend_has_no_findings(tmp_path: Path, capsys) -> None:
    code = main(
        [
            "fuzz",
            "--backend",
            "reference",
            "--ops",
            "SUB",
            "--profile",
            "BI",
            "--max-examples",
            "10",
            "-o",
            str(tmp_path / "f"),
        ]
    )
    assert code == 0 and "0 findings" in capsys.readouterr().out
    assert not (tmp_path / "f" / "pack.json").exists()


@pytest.mark.parametrize(
    ("text", "seconds"), [("90", 90), ("90s", 90), ("10m", 600), ("1.5h", 5400)]
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


def test_bad_duration() -> None:
    with pytest.raises(UsageError, match="not a duration"):
        parse_duration("ten minutes")


@pytest.mark.parametrize(
    ("mutant", "op", "kind"),
    [
        ("argmax-last-max", "ARGMAX", "wrong-result"),
        ("gather-batch-ignored", "GATHER", "wrong-result"),
        ("intdiv-floors", "INTDIV", "wrong-result"),
        ("clamp-accepts-inverted-bounds", "CLAMP", "accepted-invalid"),
    ],
)
def test_fuzz_finds_mutants_and_the_findings_replay(
    tmp_path: Path, capsys, mutant: str, op: str, kind: str
) -> None:
    out = tmp_path / "findings"
    code = main(
        [
            "fuzz",
            "--backend",
            f"mutant:{mutant}",
            "--ops",
            op,
            "--profile",
            "BI",
            "--max-examples",
            "150",
            "-o",
            str(out),
        ]
    )
    printed = capsys.readouterr().out
    assert code == 1 and f"FOUND {kind}" in printed
    replayed = run_pack(out, f"mutant:{mutant}")
    assert replayed.results and all(r.failed for r in replayed.results)
    assert not run_pack(out, "reference").failed

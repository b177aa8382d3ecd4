"""The vulkan triage's files (docs/vulkan.md): the known-failures list of the full
default 1.0 pack, one reproducer vector per defect in docs/vulkan-defects/, and the
fuzz findings in docs/vulkan-fuzz-findings/.  Needs no SDK: it checks that the files
agree with each other and that every reproducer's expectation is our evaluator's, so a
reproducer shows a defect of the backend, not one of ours."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.cli.main import main
from conformance.selection import KnownFailures
from vectors.pack import open_pack, verify

DOCS = Path(__file__).resolve().parents[3] / "docs"
KNOWN = DOCS / "vulkan-known-failures.txt"
DEFECTS = DOCS / "vulkan-defects"
FINDINGS = DOCS / "vulkan-fuzz-findings"
GROUP = re.compile(r"^# ([a-z0-9-]+) \((converter|emulation layer[^,]*), (\d+) vectors\): ")


def groups() -> dict[str, int]:
    """Each defect's id and the count its header gives."""
    found = {}
    for line in KNOWN.read_text().splitlines():
        m = GROUP.match(line)
        if m:
            found[m.group(1)] = int(m.group(3))
    return found


def test_every_listed_vector_is_under_its_defect_and_counted() -> None:
    listed = KnownFailures.read(KNOWN).items
    by_group: dict[str, int] = {}
    for item in listed:
        by_group[item.reason] = by_group.get(item.reason, 0) + 1
    assert by_group == groups()
    assert len(by_group) == 17 and sum(by_group.values()) == 258


def test_one_reproducer_per_defect_each_listed_under_it() -> None:
    assert verify(DEFECTS).ok
    known = KnownFailures.read(KNOWN)
    with open_pack(DEFECTS) as pack:
        reasons = [known.reason(pack.entry(n)) for n in pack.names]
    assert sorted(r for r in reasons if r) == sorted(groups())


@pytest.mark.parametrize("pack", [DEFECTS, FINDINGS], ids=["defects", "fuzz-findings"])
def test_our_evaluator_passes_every_reproducer(
    pack: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert verify(pack).ok
    code = main(["--tosa", "1.0", "run", "--pack", str(pack), "--backend", "reference", "--quiet"])
    assert code == 0, capsys.readouterr().out[-2000:]

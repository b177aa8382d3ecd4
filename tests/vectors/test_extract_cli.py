"""Tests for ``tosa-conformance extract`` (conformance/cli/pack_cmd.py, vectors.pack.extract):
the chosen vectors copied byte for byte into a pack of their own, and the bad inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.cli.main import main
from vectors.pack import PackError, extract, open_pack, verify


@pytest.fixture
def source(pack: Path) -> tuple[Path, str]:
    """The conftest's pack (pack_cases.write_pack: seed 7) and its sha256."""
    with open_pack(pack) as opened:
        return pack, opened.pack_sha256


def test_the_chosen_vectors_are_a_pack_of_their_own(
    source: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, sha = source
    out = tmp_path / "out"
    assert (
        main(["extract", "--pack", str(root), "--vectors", "ADD_[a-z0-9]*_0", "-o", str(out)]) == 0
    )
    assert capsys.readouterr().out.startswith(f"{out}: 2 vectors from {root}, sha256 ")
    assert verify(out).ok
    with open_pack(out) as pack, open_pack(root) as whole:
        assert pack.names == ["ADD_bf16_0", "ADD_i32_0"]
        assert pack.meta.seed == 7 and pack.meta.claim == whole.meta.claim
        assert pack.meta.options["extracted_from"] == sha
        for name in pack.names:  # byte for byte
            for file in pack.entry(name).files:
                assert (out / name / file).read_bytes() == (root / name / file).read_bytes()


def test_a_damaged_vector_is_not_copied(source: tuple[Path, str], tmp_path: Path) -> None:
    root, _ = source
    (root / "EXP_fp32_0" / "desc.json").write_text("{}")
    with pytest.raises(PackError, match="sha256 mismatch"):
        extract(root, ["EXP_fp32_0"], tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing written before the check


@pytest.mark.parametrize(
    ("vectors", "problem"),
    [
        ("NOPE", "--vectors 'NOPE': matches no vector of "),
        ("(", "--vectors '(' is not a regular expression"),
    ],
)
def test_a_bad_choice_is_one_line_and_exit_2(
    source: tuple[Path, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    vectors: str,
    problem: str,
) -> None:
    root, _ = source
    assert (
        main(["extract", "--pack", str(root), "--vectors", vectors, "-o", str(tmp_path / "o")]) == 2
    )
    err = capsys.readouterr().err
    assert problem in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_an_output_folder_in_use_is_left_alone(
    source: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, _ = source
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    assert main(["extract", "--pack", str(root), "--vectors", "ADD_i32_0", "-o", str(out)]) == 2
    assert "exists and is not an empty folder" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["notes.txt"]

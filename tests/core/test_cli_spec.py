"""`tosa-conformance spec ...`: counts, JSON output and one-line errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.cli.main import main
from conformance.spec import default_spec_path

ALL_EXT = [
    a
    for e in (
        "EXT-INT16",
        "EXT-INT4",
        "EXT-BF16",
        "EXT-FP8E4M3",
        "EXT-FP8E5M2",
        "EXT-FFT",
        "EXT-VARIABLE",
    )
    for a in ("--extension", e)
]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("claim", "count", "operators"),
    [
        (["--profile", "BI"], 143, 64),
        (["--profile", "MI"], 264, 77),
        (["--profile", "BI", "--profile", "MI", *ALL_EXT], 410, 82),
    ],
)
def test_requirements_counts(capsys, claim, count, operators) -> None:
    code, out, _ = run(capsys, "spec", "requirements", *claim)
    assert code == 0
    assert f": {count} (operator, mode) pairs over {operators} operators" in out.splitlines()[0]
    code, out, _ = run(capsys, "spec", "requirements", *claim, "--json")
    data = json.loads(out)
    assert data["count"] == count == len(data["pairs"])
    assert data["operators"] == operators


def test_op_rescale_lists_12_modes(capsys) -> None:
    code, out, _ = run(capsys, "spec", "op", "RESCALE")
    assert code == 0 and "12 modes:" in out
    assert "erratum rescale-mul_t" in out
    data = json.loads(run(capsys, "spec", "op", "rescale", "--json")[1])
    assert len(data["modes"]) == 12
    assert data["modes"][9] == {
        "mode": "48-bit to 8-bit",
        "types": {"in_t": "i48_t", "out_t": "i8_t"},
        "requirements": [["EXT-INT16"]],
        "version_added": "1.0",
    }


def test_op_shows_ranks_at_the_level(capsys) -> None:
    out = run(capsys, "spec", "op", "ARGMAX", "--level", "none")[1]
    assert "0..31" in out
    data = json.loads(run(capsys, "spec", "op", "CONV2D", "--json")[1])
    pad = next(a for a in data["arguments"] if a["name"] == "pad")
    assert pad["element_names"] == ["pad_top", "pad_bottom", "pad_left", "pad_right"]


@pytest.mark.parametrize("what", ["ops", "profiles", "levels", "errata"])
def test_json_parses(capsys, what) -> None:
    code, out, _ = run(capsys, "spec", what, "--json")
    assert code == 0
    assert json.loads(out)


def test_ops_table(capsys) -> None:
    out = run(capsys, "spec", "ops")[1]
    assert out.rstrip().endswith("82 operators, 410 (operator, mode) pairs")
    ops = json.loads(run(capsys, "spec", "ops", "--json")[1])
    assert len(ops) == 82


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["spec", "op", "CONV"], "unknown operator 'CONV'; did you mean CONV2D"),
        (["spec", "requirements", "--profile", "XI"], "unknown profile 'XI'"),
        (["spec", "requirements"], "a claim needs at least one profile"),
        (
            ["spec", "requirements", "--profile", "BI", "--extension", "EXT-FFT"],
            "EXT-FFT extends MI",
        ),
        (["spec", "requirements", "--profile", "BI", "--level", "2K"], "unknown level '2K'"),
    ],
)
def test_usage_errors_are_one_line(capsys, argv, message) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("tosa-conformance: error: ") and message in err
    assert err.count("\n") == 1


def test_corrupt_spec_fails_with_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_text(
        default_spec_path().read_text().replace('max_rank="6"', 'max_rank="6" max_rank="7"')
    )
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli.main", "--spec", str(bad), "spec", "ops"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith(f"tosa-conformance: error: {bad}:35: malformed XML")
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_other_spec_is_used(capsys, tmp_path: Path) -> None:
    text = default_spec_path().read_text().replace('max_rank="6"', 'max_rank="5"')
    other = tmp_path / "other.xml"
    other.write_text(text)
    out = run(capsys, "--spec", str(other), "spec", "levels", "--json")[1]
    assert json.loads(out)[1]["MAX_RANK"] == 5


def test_installed_console_script_imports_our_package(tmp_path: Path) -> None:
    # Arm's tosa-tools also installs a top-level 'conformance' folder; the entry point
    # must still reach ours (docs/architecture.md, "The conformance name clash").
    import shutil

    exe = shutil.which("tosa-conformance")
    if exe is None:
        pytest.skip("tosa-conformance is not installed as a console script (pip install -e .)")
    proc = subprocess.run(
        [exe, "spec", "levels", "--json"], capture_output=True, text=True, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)[1]["name"] == "8K"


def test_arm_tools_still_find_their_conformance_modules() -> None:
    # tosa-tools puts modules in a 'conformance' folder of its own; our package extends
    # its path so that Arm's tools (tosa_verif_build_tests) keep working beside it.
    pytest.importorskip("tosa_serializer", reason="tosa-tools (the 'arm' extra) not installed")
    import importlib

    module = importlib.import_module("conformance.model_files")
    assert "site-packages" in str(module.__file__)

"""The benchmarks' ``--tosa`` option: which revision, profiles and Arm options each of
benchmarks/generate_vs_arm.py, generate_vs_arm_conformance.py, iree_backend.py,
pack_defaults.py and runner_overhead.py puts on its command lines.

The scripts are run as ``python benchmarks/NAME.py`` and import ``_timing`` from their own
folder, so the folder goes on ``sys.path`` here. Nothing below times anything: the
measurements are the scripts' business, these tests check what they would run.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from conformance import revisions
from conformance.spec import load_revision

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _script(name: str) -> ModuleType:
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    return importlib.import_module(name)


timing = _script("_timing")
REV = timing.TOSA_REVISIONS


@pytest.fixture
def tools_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """tosa-conformance found beside this interpreter, as the scripts expect it on PATH."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])
    monkeypatch.setenv("PATH", path)


def test_every_revision_of_the_tool_has_a_row_and_the_default_is_the_tools() -> None:
    assert set(REV) == set(revisions.REVISIONS)
    assert revisions.DEFAULT_REVISION == timing.DEFAULT_TOSA == "1.0"


@pytest.mark.parametrize("name", sorted(REV))
def test_profiles_and_arm_version_are_the_revisions_own(name: str) -> None:
    rev, spec = REV[name], load_revision(name)
    assert {rev.int_profile, rev.fp_profile} == set(spec.profiles)
    # The draft's MI includes BI (its introduction); 1.0's PRO-FP includes nothing.
    includes = revisions.REVISIONS[name].profile_includes.get(rev.fp_profile, ())
    assert rev.fp_includes_int == (rev.int_profile in includes)
    if rev.arm_version is not None:
        # The vendored tosa.xml says 1.0.2 (tag v1.0.2) and 1.1.0-draft.
        assert rev.arm_version == spec.version_string


def test_arm_options_per_revision() -> None:
    assert REV["1.0"].arm_version_args == ["--tosa-version", "1.0.2"]
    assert REV["1.1-draft"].arm_version_args == ["--tosa-version", "1.1.0-draft"]
    assert REV["2024-04-draft"].arm_version_args == []  # Arm's default, as recorded
    for rev in REV.values():
        assert rev.arm_profile(rev.int_profile) == "tosa-pro-int"
        assert rev.arm_profile(rev.fp_profile) == "tosa-pro-fp"
    with pytest.raises(KeyError):
        REV["1.0"].arm_profile("BI")


def test_arm_takes_the_versions_as_they_are() -> None:
    """tosa-tools promotes a version it does not list to the nearest one it does ("1.0.0"
    becomes 1.0.2 with a warning); ours must be ones it lists, so nothing is promoted."""
    tcv = pytest.importorskip("conformance.tosa_cts_versions")  # tosa-tools' module
    listed = {str(v) for v in tcv.get_supported_versions()}
    for rev in REV.values():
        if rev.arm_version is not None:
            assert rev.arm_version in listed


def test_a_claim_of_every_mode() -> None:
    assert REV["2024-04-draft"].every_mode == ["MI"]  # MI brings BI in
    assert REV["1.0"].every_mode == ["PRO-INT", "PRO-FP"]
    assert REV["1.1-draft"].every_mode == ["PRO-INT", "PRO-FP"]


def test_profiles_option(capsys: pytest.CaptureFixture[str]) -> None:
    ap = argparse.ArgumentParser(prog="bench")
    rev = REV["1.0"]
    assert timing.profiles_option(ap, None, rev) == ["PRO-INT", "PRO-FP"]
    assert timing.profiles_option(ap, None, REV["2024-04-draft"], ["MI"]) == ["MI"]
    assert timing.profiles_option(ap, "PRO-FP,", rev) == ["PRO-FP"]
    with pytest.raises(SystemExit):
        timing.profiles_option(ap, "PRO-INT,MI", rev)
    err = capsys.readouterr().err
    assert "--tosa 1.0 has no profile MI" in err and "--tosa 2024-04-draft" in err
    with pytest.raises(SystemExit):
        timing.profiles_option(ap, "XYZ", rev)
    assert "(XYZ is a profile" not in capsys.readouterr().err


def test_a_run_of_no_vector_ends_with_the_tools_empty_selection_status() -> None:
    from conformance.cli.options import NO_VECTORS

    assert timing.NO_VECTORS_EXIT == NO_VECTORS
    empty = ["tosa-conformance", "run", "--pack", "P", "--vectors", timing.NO_VECTOR]
    assert timing.run_exit_ok(empty, NO_VECTORS)
    assert not timing.run_exit_ok(empty, 0)  # the pattern selected something after all
    full = ["tosa-conformance", "run", "--pack", "P", "--json", "F"]
    assert timing.run_exit_ok(full, 0) and timing.run_exit_ok(full, 1)  # 1: a verdict
    assert not timing.run_exit_ok(full, NO_VECTORS) and not timing.run_exit_ok(full, 2)


@pytest.mark.usefixtures("tools_on_path")
def test_run_results_leave_out_the_header(tmp_path: Path) -> None:
    """What `run --json` writes: its header line, then one line per vector."""
    pack = tmp_path / "pack"
    gen = timing.generate_argv(REV["1.0"], ["PRO-INT"], "--ops", "ABS", "--examples", "1")
    subprocess.run([*gen, "--no-targeted", "-o", str(pack), "--quiet"], check=True)
    out = tmp_path / "results.jsonl"
    run = [timing.OUR_TOOL, "run", "--pack", str(pack), "--backend", "reference"]
    subprocess.run([*run, "--quiet", "--json", str(out)], check=True)
    vectors = json.loads((pack / "pack.json").read_text(encoding="utf-8"))["vectors"]
    results = timing.run_results(out)
    assert len(out.read_text(encoding="utf-8").splitlines()) == len(vectors) + 1
    assert sorted(r["vector"] for r in results) == sorted(v["name"] for v in vectors)


def test_generate_vs_arm_command_lines(tmp_path: Path) -> None:
    gva = _script("generate_vs_arm")
    ours = gva.ours_argv(REV["1.0"], "PRO-INT", ["ADD", "MUL"], 2, tmp_path)
    assert ours[:6] == ["tosa-conformance", "--tosa", "1.0", "generate", "--profile", "PRO-INT"]
    assert ours[6:8] == ["--ops", "ADD|MUL"]
    arm = gva.arm_argv(REV["1.0"], "tosa-pro-fp", "negative", ["ADD"], "none", False, tmp_path)
    assert arm[:8] == [
        "tosa_verif_build_tests",
        "--filter",
        "^(add)$",
        "--profile",
        "tosa-pro-fp",
        "--tosa-version",
        "1.0.2",
        "--extension",
    ]
    # The draft keeps its old command lines: BI, and Arm at its default version.
    draft = REV["2024-04-draft"]
    assert gva.ours_argv(draft, "BI", ["ADD"], 1, tmp_path)[1:6] == [
        "--tosa",
        "2024-04-draft",
        "generate",
        "--profile",
        "BI",
    ]
    old = gva.arm_argv(draft, "tosa-pro-int", "positive", ["ADD"], "none", True, tmp_path)
    assert "--tosa-version" not in old and old[-1] == "--lazy-data-generation"


def test_conformance_generator_command_lines(tmp_path: Path) -> None:
    gvc = _script("generate_vs_arm_conformance")
    args = argparse.Namespace(arm_output_type="binary", jobs=2, arm_ref_model=None)
    arm = gvc.arm_argv(REV["1.1-draft"], "tosa-pro-int", ["ADD"], args, tmp_path, tmp_path)
    i = arm.index("--tosa-version")
    assert arm[i - 2 : i + 2] == ["--profile", "tosa-pro-int", "--tosa-version", "1.1.0-draft"]
    ours = gvc.ours_argv(REV["1.1-draft"], "PRO-FP", ["ADD"], 999, 2, tmp_path)
    assert ours[1:6] == ["--tosa", "1.1-draft", "generate", "--profile", "PRO-FP"]
    assert ours[-2:] == ["--max-elements", "999"]
    # Operators by kind of profile, whichever the revision calls it.
    ops = argparse.Namespace(int_ops="ADD|MUL", fp_ops="MATMUL")
    assert gvc.profile_ops(REV["1.0"], "PRO-INT", ops) == ["ADD", "MUL"]
    assert gvc.profile_ops(REV["2024-04-draft"], "MI", ops) == ["MATMUL"]


def test_conformance_generator_keeps_the_drafts_option_names(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--bi-ops is still read (the recorded commands use it): the run stops at the
    profile, which 1.0 does not have, not at an unknown option."""
    gvc = _script("generate_vs_arm_conformance")
    with pytest.raises(SystemExit) as stop:
        gvc.main(["--profiles", "BI", "--bi-ops", "ADD"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "--tosa 1.0 has no profile BI" in err and "unrecognized" not in err


def test_pack_defaults_packs_per_revision(capsys: pytest.CaptureFixture[str]) -> None:
    pd = _script("pack_defaults")
    now = pd.packs(REV["1.0"])
    assert now == {
        "pro-int": ["tosa-conformance", "--tosa", "1.0", "generate", "--profile", "PRO-INT"],
        "full": [
            *["tosa-conformance", "--tosa", "1.0", "generate"],
            *["--profile", "PRO-INT", "--profile", "PRO-FP", "--extension", "all"],
        ],
    }
    assert list(pd.packs(REV["2024-04-draft"])) == ["bi", "full"]
    with pytest.raises(SystemExit):
        pd.main(["--only", "bi"])  # the draft's name, refused before anything is generated
    assert "--tosa 1.0 has no pack 'bi'" in capsys.readouterr().err


@pytest.mark.parametrize("script", ["iree_backend", "runner_overhead"])
def test_an_unknown_revision_is_refused(script: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        _script(script).main(["--tosa", "0.80"])
    assert stop.value.code == 2
    assert "invalid choice: '0.80'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("tosa", "profile"), [(None, "PRO-FP"), ("2024-04-draft", "MI"), ("1.1-draft", "PRO-FP")]
)
@pytest.mark.usefixtures("tools_on_path")
def test_generate_vs_arm_generates_the_revision_asked_for(
    tosa: str | None, profile: str, tmp_path: Path
) -> None:
    """A real run of ours (Arm's skipped): the pack is of the revision the option names,
    1.0 without it, although the test session's $TOSA_CONFORMANCE_REVISION is the draft."""
    assert os.environ.get(revisions.DEFAULT_ENV) == "2024-04-draft"  # tests/conftest.py
    out, rows = tmp_path / "out", tmp_path / "rows.json"
    argv = ["--ops", "ABS", "--profiles", profile, "--jobs", "1", "--skip-arm"]
    argv += ["--out", str(out), "--json", str(rows)] + (["--tosa", tosa] if tosa else [])
    assert _script("generate_vs_arm").main(argv) == 0
    pack = json.loads((out / f"ours-{profile}" / "pack.json").read_text(encoding="utf-8"))
    assert pack["spec"]["revision"] == (tosa or "1.0")
    doc = json.loads(rows.read_text(encoding="utf-8"))
    assert doc["tosa"] == (tosa or "1.0")
    assert [(r["tool"], r["profile"], r["ok"]) for r in doc["rows"]] == [("ours", profile, True)]
    assert doc["rows"][0]["vectors"] == len(pack["vectors"]) > 0

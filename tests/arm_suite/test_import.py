"""Tests for ``conformance.arm_suite.importer`` (and ``tosa-conformance import-arm``):
tests made by Arm's own ``tosa_verif_conformance_generator`` become a pack that our
reference and Arm's reference model both pass, Arm's inputs bit for bit."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("tosa_serializer", reason="Arm's tosa-tools (tosa_serializer) is not installed")

from conformance.arm_suite import datagen
from conformance.arm_suite.importer import ImportSummary, find_tests, import_arm
from conformance.backends.revision.elements import from_npy
from conformance.cli.main import main
from conformance.runner import run_pack
from conformance.spec import load_revision
from vectors.pack import open_pack

GENERATOR = Path(sys.executable).parent / "tosa_verif_conformance_generator"
OPERATORS = ("add", "matmul", "rescale")


def _generate(out: Path, *operators: str) -> Path:
    if not GENERATOR.exists():
        pytest.skip(f"Arm's generator is not installed ({GENERATOR})")
    argv = [str(GENERATOR), "--tosa-version", "1.0.2", "--operators", *operators]
    argv += ["--profile", "tosa-pro-int", "tosa-pro-fp", "--test-type", "both"]
    argv += ["--output-type", "binary", "--lazy-data-generation", "-j", "2"]
    argv += ["--output-dir", str(out)]
    done = subprocess.run(argv, cwd=out.parent, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return out


@pytest.fixture(scope="module")
def arm_tests(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Arm's conformance tests of ADD, MATMUL and RESCALE, both 1.0 profiles."""
    return _generate(tmp_path_factory.mktemp("armgen") / "out", *OPERATORS)


@pytest.fixture(scope="module")
def imported(
    arm_tests: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, ImportSummary]:
    pack = tmp_path_factory.mktemp("imported") / "pack"
    return pack, import_arm([arm_tests], pack, load_revision("1.0"))


def _desc(pack: Path, name: str) -> dict[str, Any]:
    return dict(json.loads((pack / name / "desc.json").read_text()))


def test_every_test_is_a_vector_or_listed(
    arm_tests: Path, imported: tuple[Path, ImportSummary]
) -> None:
    pack, summary = imported
    tests = find_tests([arm_tests])
    with open_pack(pack) as opened:
        assert len(opened.names) + len(summary.refused) == len(tests)
        kinds = {e.kind for e in opened.entries}
    assert {"valid", "error"} <= kinds
    assert sum(summary.kinds.values()) == len(tests) - len(summary.refused)
    # Every refusal says why; none is a crash of ours.
    assert all(why and "Error:" not in why for why in summary.refused.values()), summary.refused
    # Most of Arm's tests import: what does not is a handful of must-fail graphs our
    # graph model cannot hold (a wrong number of inputs), each listed.
    assert len(summary.refused) <= len(tests) // 20


def test_verify_pack_accepts_the_import(imported: tuple[Path, ImportSummary]) -> None:
    pack, _ = imported
    assert main(["verify-pack", str(pack)]) == 0


def test_provenance_names_arms_test_and_tool(imported: tuple[Path, ImportSummary]) -> None:
    pack, summary = imported
    with open_pack(pack) as opened:
        name = next(n for n in opened.names if n.startswith("add_"))
    prov = _desc(pack, name)["provenance"]
    assert prov["strategy"].startswith("arm:") and prov["imported"]["suite"] == "arm"
    assert prov["imported"]["test"].endswith(name)
    assert prov["imported"]["tosa_tools"] == datagen.tosa_tools_version() == summary.tosa_tools
    assert datagen.tosa_tools_version() not in (None, "", "unknown")


def test_inputs_are_arms_generated_values(
    arm_tests: Path, imported: tuple[Path, ImportSummary]
) -> None:
    """An input Arm's runner generates lazily is, in the pack, the same bits as Arm's
    generator library gives for it."""
    pack, _ = imported
    test = next(
        t
        for t in find_tests([arm_tests])
        if t.folder.name.startswith("matmul_") and "ERRORIF" not in t.name and "f32" in t.name
    )
    name = test.desc["ifm_name"][0]
    raw = datagen.generate(test.desc["meta"]["data_gen"], name)
    with open_pack(pack) as opened:
        vector = opened.load(test.folder.name)
    dtype = vector.graph.main.tensors[name].dtype
    ours = vector.inputs[name]
    assert np.array_equal(
        from_npy(raw, dtype, ours.shape).view(np.uint8), np.asarray(ours).view(np.uint8)
    )
    assert np.asarray(ours).std() > 0  # generated, not zeros


def test_must_fail_tests_stay_must_fail(
    arm_tests: Path, imported: tuple[Path, ImportSummary]
) -> None:
    pack, summary = imported
    failing = [t for t in find_tests([arm_tests]) if t.desc.get("expected_failure")]
    assert failing
    with open_pack(pack) as opened:
        kinds = {e.name: e.kind for e in opened.entries}
    for t in failing:
        if t.name in summary.refused:
            continue
        assert kinds[t.folder.name] == "error", t.name
        assert _desc(pack, t.folder.name)["provenance"]["imported"]["expected_failure"] is True


def test_our_reference_passes_every_imported_vector(imported: tuple[Path, ImportSummary]) -> None:
    pack, _ = imported
    report = run_pack(pack, "reference", jobs=2)
    bad = [(r.vector, r.verdict, r.detail) for r in report.results if r.failed]
    assert not bad, bad[:5]


def test_arms_model_agrees_with_our_reference(imported: tuple[Path, ImportSummary]) -> None:
    """The cross-check: Arm's reference model, judged by our reference's expectations on
    Arm's own tests, passes them all; the only vectors it is not judged on are those our
    revision-conflict table (conformance.backends.revision.conflicts) names."""
    pack, _ = imported
    try:
        report = run_pack(pack, "tosa-reference-model", jobs=2)
    except Exception as exc:  # the backend absent: say so
        pytest.skip(f"tosa-reference-model backend unavailable: {exc}")
    bad = [(r.vector, r.verdict, r.detail) for r in report.results if r.failed]
    assert not bad, bad[:5]
    passed = sum(r.verdict == "passed" for r in report.results)
    assert passed >= 0.9 * len(report.results)


def test_certify_on_the_import(imported: tuple[Path, ImportSummary], tmp_path: Path) -> None:
    """Arm's suite of three operators covers no profile claim: certify refuses it as
    a full claim, and gives the subset verdict with the import's manifest."""
    from conformance.arm_suite.importer import write_manifest

    pack, _ = imported
    claim = ["--profile", "PRO-INT", "--profile", "PRO-FP"]
    out = tmp_path / "cert"
    argv = ["certify", "--pack", str(pack), "--backend", "reference", *claim]
    assert main([*argv, "-o", str(out), "--quiet"]) == 2
    manifest = tmp_path / "arm.toml"
    assert write_manifest(pack, manifest) >= 6  # ADD, MATMUL, RESCALE modes
    assert main([*argv, "--capabilities", str(manifest), "-o", str(out), "--quiet"]) == 0
    cert = json.loads((out / "certificate.json").read_text())
    assert cert["verdict"] == "pass-subset", cert["verdict"]


def test_a_changed_arm_ulp_is_a_recorded_conflict(arm_tests: Path, tmp_path: Path) -> None:
    """Hand-checked: Arm's ADD fp32 test says ULP 0.5 (exact rounding); one edited to
    ULP 3 disagrees with our rule for ADD (0.5 ULP) and the import says so, in the
    summary and in the vector's provenance."""
    test = next(
        t
        for t in find_tests([arm_tests])
        if t.folder.name.startswith("add_")
        and "f32" in t.folder.name
        and not t.desc.get("expected_failure")
    )
    copy = tmp_path / "arm" / test.folder.name
    shutil.copytree(test.folder, copy)
    desc = json.loads((copy / "desc.json").read_text())
    tensors = desc["meta"]["compliance"]["tensors"]
    out_name = next(iter(tensors))
    assert tensors[out_name]["mode"] == "ULP" and float(tensors[out_name]["ulp_info"]["ulp"]) == 0.5
    tensors[out_name]["ulp_info"]["ulp"] = 3
    (copy / "desc.json").write_text(json.dumps(desc))
    pack = tmp_path / "pack"
    summary = import_arm([tmp_path / "arm"], pack, load_revision("1.0"))
    [(name, conflicts)] = summary.conflicts.items()
    assert conflicts == [f"{out_name}: ULP 3 in Arm's test, 0.5 in our rules"]
    assert _desc(pack, name)["provenance"]["imported"]["conflicts"] == conflicts
    assert any("ULP N in Arm's test, N in our rules" in line for line in summary.lines())


def test_a_file_outside_the_folder_is_refused_not_read(arm_tests: Path, tmp_path: Path) -> None:
    test = next(
        t
        for t in find_tests([arm_tests])
        if t.folder.name.startswith("add_") and not t.desc.get("expected_failure")
    )
    root = tmp_path / "arm"
    copy = root / test.folder.name
    shutil.copytree(test.folder, copy)
    other = root / "other"
    shutil.copytree(test.folder, other)
    desc = json.loads((copy / "desc.json").read_text())
    desc["tosa_file"] = "../other/" + desc["tosa_file"]
    (copy / "desc.json").write_text(json.dumps(desc))
    summary = import_arm([root], tmp_path / "pack", load_revision("1.0"))
    assert summary.refused == {
        test.folder.name: f"desc.json names {desc['tosa_file']!r}, "
        "which is not a file of the folder"
    }


@pytest.mark.parametrize(
    "argv_tail, message",
    [
        (["{missing}"], "not a directory of Arm tests"),
        (["{empty}"], "holds no Arm test"),
    ],
)
def test_bad_folders_are_one_line_and_exit_2(
    argv_tail: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    paths = {"missing": str(tmp_path / "missing"), "empty": str(tmp_path / "empty")}
    argv = [
        "--tosa",
        "1.0",
        "import-arm",
        *(a.format(**paths) for a in argv_tail),
        "-o",
        str(tmp_path / "p"),
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


def test_a_non_empty_output_is_refused(
    arm_tests: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "p"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    assert main(["import-arm", str(arm_tests), "-o", str(out), "--quiet"]) == 2
    assert "not an empty folder" in capsys.readouterr().err
    assert (out / "keep.txt").read_text() == "mine"


def test_an_unknown_level_is_refused(
    arm_tests: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["import-arm", str(arm_tests), "-o", str(tmp_path / "p"), "--level", "9K"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--level 9K" in err[0]


def test_the_revision_comes_from_arms_graphs(
    arm_tests: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --tosa the import is of the graphs' own revision (1.0 here, though the
    tests pin the 2024 draft as the default)."""
    one = tmp_path / "one"
    test = next(t for t in find_tests([arm_tests]) if t.folder.name.startswith("add_"))
    shutil.copytree(test.folder, one / test.folder.name)
    assert main(["import-arm", str(one), "-o", str(tmp_path / "p"), "--quiet"]) == 0
    assert "of TOSA 1.0 to" in capsys.readouterr().out

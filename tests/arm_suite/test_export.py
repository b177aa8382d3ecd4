"""Tests for ``conformance.arm_suite.export`` (and ``tosa-conformance export-arm``): a
TOSA 1.0 pack written as Arm's ``tosa_verif_run_tests`` test folders, checked with
Arm's own schema validator and runner."""

from __future__ import annotations

import argparse
import importlib
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("tosa_serializer", reason="Arm's tosa-tools (tosa_serializer) is not installed")
pytest.importorskip(
    "schemavalidation", reason="Arm's tosa-tools (schemavalidation) is not installed"
)

from pack_cases import write_pack

from conformance.arm_suite.export import OUR_DESC, ExportSummary, _closest, export_pack
from conformance.cli import export_arm_cmd
from conformance.cli.main import main
from conformance.compliance_descriptor import ComplianceDescriptor, Mode, UlpParams
from conformance.dtypes import FP16
from vectors.pack import PackError, extract, open_pack


@pytest.fixture(scope="module")
def pack10(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small TOSA 1.0 pack: ADD and MATMUL, valid, error and level vectors."""
    root = tmp_path_factory.mktemp("pack10") / "pack"
    argv = ["--tosa", "1.0", "generate", "--profile", "PRO-INT", "--profile", "PRO-FP"]
    argv += ["--ops", "ADD|MATMUL", "--examples", "1", "-o", str(root), "--quiet"]
    assert main(argv) == 0
    return root


@pytest.fixture(scope="module")
def exported(pack10: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ExportSummary]:
    out = tmp_path_factory.mktemp("arm") / "out"
    return out, export_pack(pack10, out)


def _arm(out: Path, name: str) -> dict[str, Any]:
    return dict(json.loads((out / name / "desc.json").read_text()))


def _ours(out: Path, name: str) -> dict[str, Any]:
    return dict(json.loads((out / name / OUR_DESC).read_text()))


def _first(out: Path, pattern: str) -> str:
    names = sorted(p.name for p in out.iterdir() if re.fullmatch(pattern, p.name))
    assert names, f"no exported vector matches {pattern}"
    return names[0]


def test_every_desc_is_valid_for_arms_schema(exported: tuple[Path, ExportSummary]) -> None:
    # import_module: tosa-tools has no type information
    validator = importlib.import_module("schemavalidation.schemavalidation")

    out, summary = exported
    folders = sorted(p for p in out.iterdir() if p.is_dir())
    assert len(folders) == summary.written > 0
    for folder in folders:
        desc = json.loads((folder / "desc.json").read_text())
        validator.TestDescSchemaValidator().validate_config(desc)  # raises on a problem
        assert desc["version"] == "1.2"
        assert (folder / "graph.tosa").is_file() and (folder / OUR_DESC).is_file()
        for file in desc["ifm_file"]:
            assert (folder / file).is_file()


def test_nothing_is_dropped_silently(pack10: Path, exported: tuple[Path, ExportSummary]) -> None:
    out, summary = exported
    with open_pack(pack10) as pack:
        entries = pack.entries
    written = {p.name for p in out.iterdir()}
    assert written | set(summary.left_out) == {e.name for e in entries}
    assert not written & set(summary.left_out)
    levels = {e.name for e in entries if e.kind == "level"}
    assert levels and levels <= set(summary.left_out)
    assert all("level vector" in summary.left_out[n] for n in levels)
    lines = summary.lines()
    assert lines[0].startswith(f"{out}: {summary.written} vectors of ")
    assert any(n in line for line in lines for n in levels)


def test_fp32_add_is_ulp_half_and_int_add_exact(exported: tuple[Path, ExportSummary]) -> None:
    out, _ = exported
    fp = _arm(out, _first(out, r"ADD_fp32_.*"))
    tensor = fp["meta"]["compliance"]["tensors"]["output"]
    assert tensor["mode"] == "ULP" and tensor["ulp_info"] == {"ulp": 0.5}
    assert tensor["data_type"] == "FP32"
    assert fp["test_requirements"]["profiles_supported"] == ["tosa-pro-fp"]
    assert fp["test_requirements"]["bounds_file_required"] is False
    name = _first(out, r"ADD_signed-32_(?!error).*")
    integer = _arm(out, name)
    tensor = integer["meta"]["compliance"]["tensors"]["output"]
    assert tensor["mode"] == "EXACT" and tensor["data_type"] == "INT32"
    profiles = _ours(out, name)["requirements"]["profiles"]
    assert "PRO-INT" in profiles  # TOSA 1.0: i32 ADD is in both profiles
    assert integer["test_requirements"]["profiles_supported"] == [
        "tosa-" + p.lower() for p in profiles
    ]
    assert integer["test_details"]["operator"] == "ADD"
    assert integer["test_details"]["output_types"] == ["INT32"]


@pytest.mark.parametrize(
    ("pattern", "acc_frac", "out_frac", "all_fp32"),
    [
        (r"MATMUL_fp32-with-fp32-accumulate_(?!error).*", 23, 23, True),
        (r"MATMUL_fp16-with-fp32-accumulate_(?!error).*", 23, 10, False),
    ],
)
def test_matmul_is_dot_product_with_arms_ksb(
    exported: tuple[Path, ExportSummary],
    pattern: str,
    acc_frac: int,
    out_frac: int,
    all_fp32: bool,
) -> None:
    out, _ = exported
    name = _first(out, pattern)
    ours = _ours(out, name)["expected"][0]["compliance"]["params"]
    desc = _arm(out, name)
    info = desc["meta"]["compliance"]["tensors"]["output"]
    assert info["mode"] == "DOT_PRODUCT"
    # Worked by hand from Arm's rule: ceil(KS / 2^((frac(acc) - frac(out)) / 2)).
    ksb = math.ceil(ours["ks"] / 2.0 ** ((acc_frac - out_frac) / 2))
    want = {
        "s": ours["data_set"],
        "ksb": ksb,
        "abs_bound": (6 if all_fp32 else 2) * ksb,
        # Arm's 4 * 0.4 * ksb, lifted out of reach where the rule's statistical tests do
        # not apply (fewer than MIN_DOT_PRODUCTS outputs)
        "variance_error_bound": 1.6 * ksb if math.prod(info["shape"]) >= 1000 else 1e30,
    }
    assert info["dot_product_info"]["s"] == want["s"]
    assert info["dot_product_info"]["ksb"] == want["ksb"]
    assert info["dot_product_info"]["abs_bound"] == want["abs_bound"]
    assert info["dot_product_info"]["variance_error_bound"] == pytest.approx(
        want["variance_error_bound"]
    )
    assert desc["test_requirements"]["bounds_file_required"] is True
    assert (out / name / "bound-0.npy").is_file()  # ours, copied


def test_error_vectors_keep_expected_failure(exported: tuple[Path, ExportSummary]) -> None:
    out, _ = exported
    name = _first(out, r"ADD_.*_error_.*")
    desc = _arm(out, name)
    assert desc["expected_failure"] is True
    assert desc["expected_failure_desc"] == _ours(out, name)["expected_failure_desc"]
    assert "meta" not in desc


def test_inputs_are_the_packs_values_and_our_files_are_kept(
    pack10: Path, exported: tuple[Path, ExportSummary]
) -> None:
    out, _ = exported
    name = _first(out, r"ADD_fp16_(?!error).*")
    with open_pack(pack10) as pack:
        vector = pack.load(name)
        assert (out / name / OUR_DESC).read_bytes() == (pack10 / name / "desc.json").read_bytes()
    desc = _arm(out, name)
    for tname, file in zip(desc["ifm_name"], desc["ifm_file"], strict=True):
        arr = np.load(out / name / file)
        assert arr.dtype == np.float16
        np.testing.assert_array_equal(arr, np.asarray(vector.inputs[tname]))
    assert (out / name / "expected-0.npy").read_bytes() == (
        pack10 / name / "expected-0.npy"
    ).read_bytes()


def test_a_2024_draft_pack_is_refused(tmp_path: Path) -> None:
    draft = write_pack(tmp_path / "draft")  # the tests' default revision: the 2024 draft
    with pytest.raises(PackError, match=r"draft.*2024-04-draft.*--tosa 1\.0") as info:
        export_pack(draft, tmp_path / "out")
    assert "\n" not in str(info.value)
    assert not (tmp_path / "out").exists()


def test_a_non_empty_output_folder_is_refused(pack10: Path, tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "mine.txt").write_text("keep")
    with pytest.raises(PackError, match="exists and is not an empty folder"):
        export_pack(pack10, tmp_path / "out")
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["mine.txt"]


def test_our_toward_zero_ulp_is_counted_as_an_approximation() -> None:
    d = ComplianceDescriptor(
        Mode.ULP, FP16, "CAST fp32 to fp16", UlpParams(0.5, True, toward_zero=1.0)
    )
    info = {"mode": "ULP", "data_type": "FP16", "ulp_info": {"ulp": 0.5, "ulp_lower": 1.0}}
    kept, note = _closest("CAST", d, dict(info))
    assert kept == info
    assert note is not None and note.startswith("CAST: ULP -> ULP: ")
    # An operator Arm's table gives no ULP setting: our ulp, written in Arm's mode.
    kept, note = _closest("CAST", d, {"mode": "EXACT", "data_type": "FP16"})
    assert kept["ulp_info"] == {"ulp": 0.5, "ulp_lower": 1.0}
    assert note is not None


def test_the_command_prints_the_summary(
    pack10: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = argparse.ArgumentParser()
    export_arm_cmd.register(parser.add_subparsers())
    out = tmp_path / "out"
    args = parser.parse_args(["export-arm", "--pack", str(pack10), "-o", str(out)])
    assert args.run(None, args) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith(f"{out}: ") and "left out" in printed[0]
    assert "left out:" in printed


def test_arms_runner_passes_the_exported_vectors(
    pack10: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tosa_verif_run_tests = importlib.import_module("runner.tosa_verif_run_tests")

    with open_pack(pack10) as pack:
        names = [n for n in pack.names if re.fullmatch(r"(ADD|MATMUL)_fp(16|32).*_00[01]", n)]
        names += [n for n in pack.names if re.fullmatch(r"ADD_signed-32_.*_000", n)][:3]
    small = tmp_path / "small"
    extract(pack10, names[:8], small)
    out = tmp_path / "arm"
    summary = export_pack(small, out)
    assert summary.written >= 4
    argv = ["-t", str(out), "-r", "-j", "2", "--no-color", "--xunit-file", str(tmp_path / "r.xml")]
    assert tosa_verif_run_tests.main(argv) == 0
    totals = [line for line in capsys.readouterr().out.splitlines() if line.startswith("Totals")]
    assert len(totals) == 2, totals
    for line in totals:
        counts = dict(
            (what, int(n)) for n, what in re.findall(r"(\d+) ([a-z_]+)", line.split(":", 1)[1])
        )
        bad = {k: counts[k] for k in ("unexpected_pass", "unexpected_failure", "internal_error")}
        assert bad == dict.fromkeys(bad, 0), line
    model = next(line for line in totals if "tosa_refmodel_sut_run" in line)
    assert f"{summary.written} expected_pass" in model or "expected_failure" in model

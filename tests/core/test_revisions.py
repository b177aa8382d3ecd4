"""Spec revisions: vendored data, --tosa / --spec, claims in each revision's words, packs
that record their revision and are judged by it."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conformance import dtypes, revisions
from conformance.claims import ClaimError, make_claim, required_modes
from conformance.cli.main import main
from conformance.spec import active_spec, load_revision, load_spec, spec_in_use
from strategies.case import CaseSpec, TensorDraw

V10 = load_revision("1.0")
DRAFT = load_revision("2024-04-draft")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_each_revision_is_its_own_data() -> None:
    # Counted from the two files: 1.0.2 has 75 operators and 389 modes, the draft 82 / 410.
    assert (len(V10.operators), len(V10.modes())) == (75, 389)
    assert (len(DRAFT.operators), len(DRAFT.modes())) == (82, 410)
    assert V10.revision == "1.0" and V10.version_string == "1.0.2"
    assert DRAFT.revision == "2024-04-draft"
    assert list(V10.profiles) == ["PRO-INT", "PRO-FP"]
    for rev in revisions.REVISIONS.values():
        assert rev.xml_path.is_file() and rev.xsd_path.is_file() and rev.fbs_path.is_file()
    # Arm's schema is Apache-2.0: its licence header stays.
    assert "Licensed under the Apache License" in revisions.TOSA_1_0.fbs_path.read_text()
    assert "FULLY_CONNECTED" in DRAFT.operators and "FULLY_CONNECTED" not in V10.operators


def test_scalar_attributes_read_alike_in_both_revisions() -> None:
    # 1.0 writes type="bool_t" tensor-element-type="-"; the draft type="tensor_t" ... "bool_t".
    for spec in (V10, DRAFT):
        arg = spec.operator("ARITHMETIC_RIGHT_SHIFT").argument("round")
        assert (arg.type, arg.element_type, arg.shape.kind) == ("tensor_t", "bool_t", "scalar")
    assert V10.operator("MAXIMUM").argument("nan_mode").element_type == "nan_propagation_mode_t"


def test_ctc_inputs_are_derived_and_ext_dynamic_removes_them() -> None:
    conv = V10.operator("CONV2D")
    ctc = [a.name for a in conv.inputs if a.ctc]
    assert ctc == ["input_zp", "weight_zp"]
    zp = conv.argument("input_zp")
    assert zp.is_ctc({"PRO-INT"}) and zp.is_ctc({"PRO-FP"})
    assert not zp.is_ctc({"PRO-INT", "EXT-DYNAMIC"})
    assert not any(a.ctc for a in DRAFT.operator("CONV2D").arguments)


def test_profiles_include_by_the_revisions_rule() -> None:
    # The draft's MI includes BI; TOSA 1.0's PRO-FP does not include PRO-INT.
    mi = make_claim(DRAFT, ["MI"])
    assert "BI" in mi.names and mi.revision == "2024-04-draft"
    fp = make_claim(V10, ["PRO-FP"])
    assert "PRO-INT" not in fp.names
    int_only = {m.key for m in required_modes(V10, make_claim(V10, ["PRO-INT"]))}
    fp_only = {m.key for m in required_modes(V10, fp)}
    key = ("CONV2D", "signed 8x8 with int32 accumulate")
    assert key in int_only and key not in fp_only
    assert fp.describe() == "PRO-FP @ level 8K of TOSA 1.0"


def test_a_name_of_the_other_revision_is_refused_with_the_right_one() -> None:
    with pytest.raises(ClaimError, match=r"BI is the 2024-04-draft revision's name; TOSA 1\.0"):
        make_claim(V10, ["BI"])
    with pytest.raises(ClaimError, match=r"PRO-FP is the 1\.0 revision's name; TOSA 2024-04-draft"):
        make_claim(DRAFT, ["pro-fp"])


def test_target_strings_as_executorch_and_mlir_write_them() -> None:
    t = revisions.parse_target("TOSA-1.0+INT+int16", revisions.TOSA_1_0, V10.extensions)
    assert (t.profiles, t.extensions) == (("PRO-INT",), ("EXT-INT16",))
    t = revisions.parse_target("TOSA-1.0+FP+bf16+fft", revisions.TOSA_1_0, V10.extensions)
    assert (t.profiles, t.extensions) == (("PRO-FP",), ("EXT-BF16", "EXT-FFT"))
    with pytest.raises(revisions.RevisionError, match=r"names TOSA 1\.1"):
        revisions.parse_target("TOSA-1.1+INT", revisions.TOSA_1_0, V10.extensions)
    with pytest.raises(revisions.RevisionError, match=r"unknown word 'int12'"):
        revisions.parse_target("TOSA-1.0+INT+int12", revisions.TOSA_1_0, V10.extensions)
    with pytest.raises(revisions.RevisionError, match=r"names no profile"):
        revisions.parse_target("TOSA-1.0+int16", revisions.TOSA_1_0, V10.extensions)
    with pytest.raises(revisions.RevisionError, match=r"expected TOSA-"):
        revisions.parse_target("tosa1.0", revisions.TOSA_1_0, V10.extensions)
    with pytest.raises(revisions.RevisionError, match=r"has no target strings"):
        revisions.parse_target("TOSA-1.0+INT", revisions.DRAFT_2024, DRAFT.extensions)


def test_cli_tosa_and_target(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--tosa", "1.0", "spec", "requirements", "--target", "TOSA-1.0+INT")
    assert code == 0 and "PRO-INT @ level 8K of TOSA 1.0" in out
    code, _, err = run(capsys, "--tosa", "1.5", "spec", "ops")
    assert code == 2 and err.count("\n") == 1 and "unknown TOSA revision" in err
    code, _, err = run(capsys, "--tosa", "1.0", "spec", "requirements", "--profile", "MI")
    assert code == 2 and "MI is the 2024-04-draft revision's name; TOSA 1.0 says PRO-FP" in err
    code, _, err = run(capsys, "--tosa", "1.0", "--spec", str(V10.path), "spec", "ops")
    assert code == 2 and "give one of them" in err
    # In-process commands leave the process's spec as it was.
    before = active_spec()
    assert run(capsys, "--tosa", "1.0", "spec", "ops")[0] == 0
    assert active_spec() is before


def test_the_default_revision_is_1_0(monkeypatch: pytest.MonkeyPatch) -> None:
    # The test session pins the draft ($TOSA_CONFORMANCE_REVISION); a user's default is 1.0.
    monkeypatch.delenv(revisions.DEFAULT_ENV, raising=False)
    assert revisions.default_revision() == "1.0"
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.cli.main", "spec", "profiles"],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != revisions.DEFAULT_ENV},
        check=False,
    )
    assert proc.returncode == 0 and proc.stdout.splitlines()[2].startswith("PRO-INT")
    monkeypatch.setenv(revisions.DEFAULT_ENV, "2024-04-draft")
    assert revisions.default_revision() == "2024-04-draft"
    monkeypatch.setenv(revisions.DEFAULT_ENV, "0.9")
    with pytest.raises(revisions.RevisionError, match=r"\$TOSA_CONFORMANCE_REVISION='0\.9'"):
        revisions.default_revision()


def test_spec_path_with_its_own_xsd_works_like_tosa(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the vendored 1.0 files, byte for byte those of the 1.0.2 specification
    for name in ("tosa.xml", "tosa.xsd"):
        shutil.copy(Path(V10.path).parent / name, tmp_path / name)
    code, by_path, _ = run(capsys, "--spec", str(tmp_path / "tosa.xml"), "spec", "profiles")
    assert code == 0
    _, by_name, _ = run(capsys, "--tosa", "1.0", "spec", "profiles")
    assert by_path == by_name and "PRO-INT" in by_path
    spec = load_spec(tmp_path / "tosa.xml")
    assert spec.revision == "1.0" and spec.sha256 == V10.sha256


def test_spec_path_without_xsd_uses_its_familys_schema(tmp_path: Path) -> None:
    # A 1.0 file alone is validated with the vendored 1.0 schema, not the draft's.
    shutil.copy(V10.path, tmp_path / "tosa.xml")
    assert load_spec(tmp_path / "tosa.xml").revision == "1.0"


def test_spec_path_that_is_not_xml_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "tosa.xml"
    bad.write_bytes(b"\x00\x01 not xml")
    code, _, err = run(capsys, "--spec", str(bad), "spec", "ops")
    assert code == 2 and err.count("\n") == 1 and "malformed XML" in err


def test_spec_in_use_restores_the_earlier_spec() -> None:
    before = active_spec()
    with spec_in_use(V10):
        assert load_spec() is V10
    assert active_spec() is before


def test_parameters_are_laid_out_as_the_revision_declares() -> None:
    # NEGATE i8 with zero points 3 and -5: in 1.0 they are [1]-shaped constant inputs
    # after input1, in argument order; in the draft they stay attributes.
    x = TensorDraw("input1", (2,), dtypes.I8, np.array([1, 2], np.int8))
    out = TensorDraw("output", (2,), dtypes.I8)
    case = CaseSpec("NEGATE", "signed 8", [x], [out], {"input1_zp": 3, "output_zp": -5})
    laid = case.in_revision(V10)
    assert [t.name for t in laid.inputs] == ["input1", "input1_zp", "output_zp"]
    zp = laid.tensor("input1_zp")
    assert zp.shape == (1,) and zp.const and zp.dtype is dtypes.I8 and zp.values.tolist() == [3]
    assert laid.attributes == {}
    assert case.in_revision(DRAFT) is case


def test_a_pack_records_its_revision_and_is_judged_by_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pack = tmp_path / "pack"
    code, out, err = run(
        capsys, "--tosa", "1.0", "generate", "--profile", "PRO-INT", "--ops", "ADD",
        "--examples", "1", "--no-levels", "--no-chains", "--quiet", "-o", str(pack),
    )  # fmt: skip
    assert code == 0, err
    spec_record = json.loads((pack / "pack.json").read_text())["spec"]
    assert spec_record == {"version": "1.0.2", "sha256": V10.sha256, "revision": "1.0"}
    # run takes the pack's revision without being told ...
    code, out, err = run(capsys, "run", "--pack", str(pack), "--backend", "reference", "--quiet")
    assert code == 0, out + err
    # ... and refuses a --tosa that contradicts it, in one line.
    code, _, err = run(
        capsys, "--tosa", "2024-04-draft", "run", "--pack", str(pack), "--backend", "reference"
    )
    assert code == 2 and err.count("\n") == 1
    assert "is a TOSA 1.0 pack" in err and "drop --tosa 2024-04-draft" in err

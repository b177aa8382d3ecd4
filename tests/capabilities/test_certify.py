"""Running and certifying under a manifest: unclaimed vectors are skipped with the
reason (never passed), and the certificate says "conformant on the claimed subset",
names the manifest and its sha256, and lists the unclaimed pairs.  On a tosa.xml cut
down to ADD and SUB (as tests/app/test_certify.py), so that it runs fast."""

import json
from pathlib import Path

import pytest
from lxml import etree

from conformance.capabilities import load_manifest
from conformance.cli.main import main
from conformance.runner import run_pack
from conformance.spec import default_spec_path, load_spec
from conformance.verdicts import SKIPPED

MANIFEST = """
name = "addsub"
[operators.ADD.modes]
fp32 = ["vendor_add"]
[operators.SUB.modes]
fp32 = ["vendor_sub"]
"""


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = etree.parse(str(default_spec_path())).getroot()
    for group in list(root.iter("operatorgroup")):
        for op in list(group.iter("operator")):
            if op.findtext("name") not in ("ADD", "SUB"):
                group.remove(op)
        if not len(group):
            group.getparent().remove(group)
    where = tmp_path_factory.mktemp("spec")
    (where / "tosa.xml").write_bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8"))
    (where / "addsub.toml").write_text(MANIFEST)
    return where / "tosa.xml", where / "addsub.toml"


def _certify(small, out: Path, backend: str = "reference", manifest: str | None = None) -> int:
    spec, toml = small
    return main(
        [
            "--spec",
            str(spec),
            "certify",
            "--backend",
            backend,
            "--profile",
            "MI",
            "--generate",
            "--capabilities",
            manifest or str(toml),
            "-o",
            str(out),
            "--examples",
            "1",
            "--jobs",
            "2",
            "--quiet",
        ]
    )


@pytest.fixture(scope="module")
def certified(small, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cert")
    assert _certify(small, out) == 0
    return out


def test_the_certificate_is_a_subset_certificate(small, certified: Path) -> None:
    cert = json.loads((certified / "certificate.json").read_text())
    m = load_manifest(str(small[1]), load_spec(small[0]))
    sub = cert["capabilities"]
    assert (sub["name"], sub["sha256"]) == ("addsub", m.sha256)
    # MI requires ADD and SUB in signed 32, fp16 and fp32: 6 pairs, 2 claimed
    assert (sub["claimed"], sub["required"], sub["claimed_met"]) == (2, 6, 2)
    # Issue 24, item 3: a subset pass never reads as a pass of the whole claim.
    assert sub["verdict"] == "conformant on the claimed subset"
    assert cert["verdict"] == "pass-subset"
    md = (certified / "report.md").read_text()
    assert "**Verdict: PASS (subset: 2 of 6 required pairs claimed by manifest addsub)**" in md
    assert {(u["operator"], u["mode"]) for u in sub["unclaimed"]} == {
        ("ADD", "signed 32"),
        ("ADD", "fp16"),
        ("SUB", "signed 32"),
        ("SUB", "fp16"),
    }
    statuses = {(r["operator"], r["mode"]): r["status"] for r in cert["requirements"]}
    assert statuses[("ADD", "fp16")] == "not claimed" and statuses[("ADD", "fp32")] == "met"
    assert cert["summary"]["not_claimed"] == 4
    pack = json.loads((certified / "pack" / "pack.json").read_text())
    assert pack["options"]["capabilities"]["sha256"] == m.sha256
    html = (certified / "report.html").read_text()
    assert "Claimed subset" in html and "2 of the claim's 6 required pairs" in html
    # Issue 24: the claimed pairs are the matrix, not lost among grey unclaimed cells.
    matrix = html[html.index('<table class="matrix">') :]
    assert 'class="cell not-claimed"' not in matrix and 'class="cell met"' in matrix
    assert "the 4 it does not claim are listed under Claimed subset" in html
    assert "## Claimed subset" in (certified / "report.md").read_text()


def test_run_skips_unclaimed_vectors_and_never_passes_them(small, certified: Path) -> None:
    spec = load_spec(small[0])
    only_add = small[1].with_name("add.toml")
    only_add.write_text('name = "add"\n[operators.ADD.modes]\nfp32 = ["vendor_add"]\n')
    report = run_pack(
        certified / "pack", "reference", capabilities=load_manifest(str(only_add), spec)
    )
    by_op = {}
    for r in report.results:
        by_op.setdefault(r.operator, set()).add(r.verdict)
    assert by_op["SUB"] == {SKIPPED} and SKIPPED not in by_op["ADD"]
    sub = next(r for r in report.results if r.operator == "SUB")
    assert sub.detail == "manifest add does not claim operator SUB" and not sub.failed


def test_a_failing_backend_is_not_conformant_on_the_subset(small, tmp_path: Path) -> None:
    assert _certify(small, tmp_path, backend="mutant:ftz-declared-supported") == 1
    cert = json.loads((tmp_path / "certificate.json").read_text())
    assert cert["capabilities"]["verdict"] == "not conformant on the claimed subset"


def test_a_manifest_that_claims_nothing_of_the_claim_certifies_nothing(
    small, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "bf16.toml"  # MI without EXT-BF16 requires no bf16 pair
    other.write_text('name = "none"\n[operators.ADD.modes]\nbf16 = ["x"]\n')
    assert _certify(small, tmp_path / "out", manifest=str(other)) == 2
    err = capsys.readouterr().err
    words = "manifest none claims none of the pairs MI @ level 8K of TOSA 2024-04-draft requires"
    assert words in err


def test_a_certificate_of_no_claimed_pair_does_not_pass(small) -> None:
    from conformance.certify import make_certificate
    from conformance.claims import make_claim
    from conformance.verdicts import RunReport

    spec = load_spec(small[0])
    none = small[1].with_name("none.toml")
    none.write_text('name = "none"\n[operators.ADD.modes]\nbf16 = ["x"]\n')
    m = load_manifest(str(none), spec)
    cert = make_certificate(
        spec, make_claim(spec, ["MI"]), "x", "0" * 64, RunReport([], 0, 0.0, {}), capabilities=m
    )
    assert not cert.passed and cert.subset_json()["claimed"] == 0

"""Flushing denormals on a generated pack (MI with every extension, the operators the
issue names): flushing fp16/bf16/fp32 passes every valid vector, flushing fp8 fails,
and flushing while declaring denormals supported fails.  One pack, generated once
(about two minutes on one core), then one run per mutant."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.certify import make_certificate
from conformance.claims import make_claim
from conformance.generate import generate
from conformance.generate_plan import Options
from conformance.mutation import MutantOutcome, mutation_score, score
from conformance.rejudge import FLUSH_INPUTS, FLUSH_OUTPUTS, PLAIN
from conformance.runner import run_pack
from conformance.spec import load_spec
from conformance.verdicts import PASSED

OPS = "ADD|MUL|ABS|CLAMP|MAXIMUM|CAST|CONV2D|EXP|RESHAPE"
SPEC = load_spec()
CLAIM = make_claim(SPEC, ["MI"], ["all"], "8K")


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("denormals") / "pack"
    # One example per pair plus the targeted vectors (the edge vectors hold every
    # special value, subnormals included); must-fail and level vectors do not compute.
    options = Options(ops=OPS, examples=1, negative=False, levels=False)
    generate(SPEC, CLAIM, out, options=options)
    return out


def test_flushing_fp16_bf16_fp32_passes_every_vector(pack: Path) -> None:
    report = run_pack(pack, "mutant:ftz-fp16-bf16-fp32")
    valid = [r for r in report.results if r.kind == "valid"]
    assert len(valid) > 300
    failed = [f"{r.vector}: {r.detail[:200]}" for r in report.failed]
    assert not failed, failed
    readings = {r.reading for r in valid}
    assert {PLAIN, FLUSH_OUTPUTS, FLUSH_INPUTS} <= readings
    # The vectors that needed a reading are those the plain checker fails (below).
    flushed = {r.operator for r in valid if r.reading != PLAIN}
    assert {"ABS", "RESHAPE", "CAST", "MUL"} <= flushed <= set(OPS.split("|"))
    assert all("passed with denormals flushed" in r.detail for r in valid if r.reading != PLAIN)
    cert = make_certificate(SPEC, CLAIM, "mutant:ftz-fp16-bf16-fp32", "0" * 64, report)
    modes = cert.to_json()["denormals"]
    ours = [p for p in cert.pairs if p.operator in OPS.split("|")]
    assert ours and all(p.status == "met" for p in ours)  # the pack holds only OPS
    for t in ("fp16", "bf16", "fp32"):
        assert modes[t]["declared"] is None and modes[t]["observed"] == "flush"
        assert modes[t]["vectors_flushed"] > 0
    for t in ("fp8e4m3", "fp8e5m2"):  # never flushed; its denormal results pass
        assert modes[t]["declared"] is None and modes[t]["observed"] == "supported"


def test_flushing_fp8_and_declared_supported_fail(pack: Path) -> None:
    outcomes = mutation_score(pack, mutants="ftz-fp8|ftz-declared-supported")
    by_name = {o.name: o for o in outcomes}
    assert {n: o.status for n, o in by_name.items()} == {
        "ftz-fp8": "killed",
        "ftz-declared-supported": "killed",
    }
    fp8 = by_name["ftz-fp8"].killed_by
    assert all("fp8" in r.mode for r in fp8), [r.mode for r in fp8]
    declared = by_name["ftz-declared-supported"].killed_by
    assert {"ABS", "RESHAPE", "CAST", "MUL"} <= {r.operator for r in declared}
    assert all(r.reading == PLAIN for r in declared)  # no flushing reading was allowed


def test_the_reference_needs_no_second_reading(pack: Path) -> None:
    report = run_pack(pack, "reference", ops="ABS|CAST|MUL")
    assert all(r.verdict == PASSED and r.reading == PLAIN for r in report.results)
    assert report.denormals["fp16"] == "supported"


def test_a_compliant_mutant_is_scored_apart() -> None:
    outcomes = [
        MutantOutcome("a", ("ADD",), "bug", "killed", 3, []),
        MutantOutcome("b", ("ADD",), "bug", "survived", 3, []),
        MutantOutcome("ftz", ("ADD",), "allowed", "passed", 3, []),
        MutantOutcome("ftz2", ("ADD",), "allowed", "false failure", 3, []),
        MutantOutcome("c", ("ADD",), "bug", "not applicable", 0, []),
    ]
    assert score(outcomes) == (1, 2)

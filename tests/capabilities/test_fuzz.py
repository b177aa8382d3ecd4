"""fuzz --capabilities: only the claimed pairs are searched, within the limits."""

from pathlib import Path

import pytest

from conformance.capabilities import load_manifest
from conformance.claims import make_claim
from conformance.cli.main import main
from conformance.fuzz import Fuzzer
from conformance.spec import load_spec

SPEC = load_spec()


def test_the_fuzzer_searches_the_claimed_pairs_only(tmp_path: Path) -> None:
    m = load_manifest("mobilint", SPEC)
    fuzzer = Fuzzer(
        SPEC,
        make_claim(SPEC, ["MI"]),
        "reference",
        tmp_path / "f",
        ops="ADD|SUB|CONV2D",
        capabilities=m,
    )
    try:
        assert {(p.operator, p.mode) for p in fuzzer.pairs} == {
            ("ADD", "signed 32"),
            ("ADD", "fp32"),
            ("SUB", "signed 32"),
            ("SUB", "fp32"),
            ("CONV2D", "signed 8x8 with int32 accumulate"),
            ("CONV2D", "fp32 with fp32 accumulate"),
        }
    finally:
        fuzzer.close()


def test_fuzz_refuses_a_manifest_with_an_executor(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "fuzz",
            "--backend",
            "reference",
            "--profile",
            "BI",
            "--capabilities",
            "nnapi",
            "--executor",
            "dask:local",
            "--max-examples",
            "1",
        ]
    )
    assert code == 2
    assert "--capabilities does not work with --executor yet" in capsys.readouterr().err

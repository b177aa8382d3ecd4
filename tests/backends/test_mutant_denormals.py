"""The flushing mutants (conformance.backends.mutants.denormals): what each flushes, what
it declares, and the runner's verdict on a hand-built graph."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conformance.backends.base import denormal_modes
from conformance.backends.mutants import MutantBackend, catalogue
from conformance.backends.reference import ReferenceBackend
from conformance.builder import single_operator_graph
from conformance.dtypes import BF16, FP8E4M3, FP16, FP32, dtype
from conformance.verdicts import FAILED, PASSED, judge
from reference.expectations import expect
from vectors.pack_model import Check, LoadedVector, Provenance, Requirements

NAMES = ("ftz-fp16-bf16-fp32", "ftz-fp8", "ftz-declared-supported")
CATALOGUE = catalogue()


def vector(op: str, x: Any, dt: str, out_dt: str | None = None, **attrs: Any) -> LoadedVector:
    values = np.asarray(x, dtype=np.float64).astype(dtype(dt).storage)
    graph = single_operator_graph(
        op, [("x", values.shape, dt)], [("y", values.shape, out_dt or dt)], attrs
    )
    exp = expect(graph, {"x": values})
    return LoadedVector(
        name="v",
        operator=op,
        mode="",
        kind="valid" if exp.outcome.valid else "error",
        graph=graph,
        inputs={"x": values},
        expected=dict(exp.outcome.outputs),
        checks={n: Check(c.descriptor, c.bound) for n, c in exp.checks.items()},
        requirements=Requirements((), (), "8K"),
        provenance=Provenance("test", 0, 0, ""),
    )


def run(name: str, v: LoadedVector, tmp_path: Path):
    backend = MutantBackend(name)
    result = backend.run(v, tmp_path)
    return result, judge(v, result, denormals=denormal_modes(backend))


def test_registered_with_their_declarations() -> None:
    for name in NAMES:
        assert name in CATALOGUE
    assert CATALOGUE["ftz-fp16-bf16-fp32"].effect == "compliant behaviour"
    assert denormal_modes(MutantBackend("ftz-fp16-bf16-fp32")) == {}
    assert denormal_modes(MutantBackend("ftz-declared-supported")) == {
        t: "supported" for t in (FP16, BF16, FP32)
    }
    # the other mutants declare what the reference declares: every type supported
    assert denormal_modes(MutantBackend("ftz-fp8")) == denormal_modes(ReferenceBackend())
    assert denormal_modes(MutantBackend("intdiv-floors"))[FP8E4M3] == "supported"
    assert "CAST" in CATALOGUE["ftz-fp8"].operators
    assert "ADD" not in CATALOGUE["ftz-fp8"].operators  # ADD has no fp8 mode


def test_fp16_flushing_passes_through_a_reading(tmp_path: Path) -> None:
    # fp16 ABS of [-2**-24, 2**-24, 0.5]: flushed operands give +0, +0, 0.5.
    v = vector("ABS", [-(2.0**-24), 2.0**-24, 0.5], "fp16")
    result, verdict = run("ftz-fp16-bf16-fp32", v, tmp_path)
    assert result.outputs["y"].astype(np.float64).tolist() == [0.0, 0.0, 0.5]
    assert verdict.verdict == PASSED and verdict.reading != "plain"
    _, declared = run("ftz-declared-supported", v, tmp_path)
    assert declared.verdict == FAILED and declared.reading == "plain"
    # the fp8 mutant leaves fp16 alone
    untouched, plain = run("ftz-fp8", v, tmp_path)
    assert untouched.outputs["y"].astype(np.float64).tolist() == [2.0**-24, 2.0**-24, 0.5]
    assert plain.verdict == PASSED


def test_fp8_flushing_fails(tmp_path: Path) -> None:
    # CAST fp8e4m3 -> fp16 of 2**-9 (the smallest fp8e4m3 subnormal): 2**-9 in fp16.
    v = vector("CAST", [2.0**-9, 1.0], "fp8e4m3", "fp16")
    result, verdict = run("ftz-fp8", v, tmp_path)
    assert result.outputs["y"].astype(np.float64).tolist() == [0.0, 1.0]
    assert verdict.verdict == FAILED
    # and an fp8 result: CAST fp32 -> fp8e4m3 of 2**-9 is flushed on output
    out = vector("CAST", [2.0**-9], "fp32", "fp8e4m3")
    result, verdict = run("ftz-fp8", out, tmp_path)
    assert result.outputs["y"].astype(np.float64).tolist() == [0.0]
    assert verdict.verdict == FAILED


def test_float_attributes_are_flushed_after_the_graph_is_validated(tmp_path: Path) -> None:
    # CLAMP fp32 of 1.0 to [2**-130, 2**-129]: read flushed, the bounds are [0, 0].
    v = vector("CLAMP", [1.0], "fp32", min_val=2.0**-130, max_val=2.0**-129)
    result, verdict = run("ftz-fp16-bf16-fp32", v, tmp_path)
    assert result.outputs["y"].astype(np.float64).tolist() == [0.0]
    assert verdict.verdict == PASSED, verdict.detail
    # max_val < min_val, both subnormal: an error as written, although both flush to 0
    bad = vector("CLAMP", [1.0], "fp32", min_val=2.0**-129, max_val=2.0**-130)
    assert bad.kind == "error"
    result, _ = run("ftz-fp16-bf16-fp32", bad, tmp_path)
    assert result.rejected is not None and "max_val < min_val" in result.rejected


@pytest.mark.parametrize("name", NAMES)
def test_no_subnormal_no_change(name: str, tmp_path: Path) -> None:
    v = vector("ABS", [-1.5, 0.0, -0.0], "fp32")
    ref = ReferenceBackend().run(v, tmp_path)
    mut, verdict = run(name, v, tmp_path)
    np.testing.assert_array_equal(
        mut.outputs["y"].view(np.uint32), ref.outputs["y"].view(np.uint32)
    )
    assert verdict.verdict == PASSED and verdict.reading == "plain"

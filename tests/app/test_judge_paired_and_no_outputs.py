"""The judge on TOSA 1.1's two new shapes of vector: CAST_TO_BLOCK_SCALED's values
judged with the scales the backend returned (the scales once, inside that check), and
ASSERT_EQUAL_SHAPE's graph without outputs (ran, or rejected).  Values by hand."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from conformance.backends import BackendResult
from conformance.builder import single_operator_graph
from conformance.dtypes import FP4E2M1, FP8UE8M0
from conformance.spec import load_revision, spec_in_use
from conformance.verdicts import ERROR_EXPECTED, FAILED, PASSED, judge
from reference.compliance import block_scaled
from reference.engine import to_storage
from reference.expectations import expect
from vectors.pack_model import Check, LoadedVector, Provenance, Requirements

SPEC = load_revision("1.1-draft")


@pytest.fixture(autouse=True)
def _the_1_1_spec() -> Iterator[None]:
    with spec_in_use(SPEC):
        yield


def cast_to() -> LoadedVector:
    """Block 0: [6.9, 0.1, -3, 0 ...], max 6.9, scale 2**(floor(log2(6.9 / 7)) + 1) = 1;
    block 1: [40, 0 ...], 40 / 7 = 5.7, scale 2**(2 + 1) = 8 (40 / 8 = 5 -> 4, ties to even)."""
    x = np.zeros((1, 64), np.float32)
    x[0, :3] = [6.9, 0.1, -3.0]
    x[0, 32] = 40.0
    g = single_operator_graph(
        "CAST_TO_BLOCK_SCALED",
        [("x", x.shape, "fp32")],
        [("v", (1, 64), "fp4e2m1"), ("s", (1, 2), "fp8ue8m0")],
        {"block_size": "BLOCK_SIZE_32"},
        spec=SPEC,
    )
    e = expect(g, {"x": x}, spec=SPEC)
    assert np.asarray(e.outcome.outputs["s"]).tolist() == [[1.0, 8.0]]
    return LoadedVector(
        name="cast",
        operator="CAST_TO_BLOCK_SCALED",
        mode="fp32 to fp4e2m1 with fp8ue8m0 scale",
        kind="valid",
        graph=g,
        inputs={"x": x},
        expected=dict(e.outcome.outputs),
        checks={n: Check(c.descriptor, c.bound) for n, c in e.checks.items()},
        requirements=Requirements((), (), "8K"),
        provenance=Provenance("test", 0, 0, ""),
    )


def returned(scales: list[float], values: dict[int, float] | None = None) -> dict[str, Any]:
    v = np.zeros((1, 64))
    v[0, :3] = [6.0, 0.0, -3.0]
    v[0, 32] = 4.0
    for k, value in (values or {}).items():
        v[0, k] = value
    return {
        "v": to_storage(v, FP4E2M1),
        "s": to_storage(np.array([scales]), FP8UE8M0),
    }


def test_the_right_outputs_pass_and_the_scale_is_judged_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = []
    original = block_scaled.check_scale

    def counted(*args: Any, **kwargs: Any) -> block_scaled.ScaleCheck:
        calls.append(args[0].shape)
        return original(*args, **kwargs)

    monkeypatch.setattr(block_scaled, "check_scale", counted)
    res = judge(cast_to(), BackendResult(returned([1.0, 8.0])))
    assert res.verdict == PASSED, res.detail
    assert calls == [(1, 2)]  # one check, over both blocks' scales
    v, s = res.outputs
    assert (v.name, s.name) == ("v", "s")
    assert v.message.startswith("pass (64 values in 2 blocks, scales from s)")
    assert s.message == "pass (2 blocks), judged with v"


def test_a_wrong_scale_fails_naming_its_block() -> None:
    # block 1's scale 32 for 8: one ulp of fp8ue8m0 at 8 is 8, so [0, 16]; 32 fails, and
    # the block's 32 values with it, though 1 is right for that scale (40 / 32 = 1.25 -> 1)
    res = judge(cast_to(), BackendResult(returned([1.0, 32.0], {32: 1.0})))
    assert res.verdict == FAILED
    v, s = res.outputs
    assert not v.passed and v.failing == 32
    assert v.message == (
        "FAIL (32 of 64 values in 2 blocks: 1 block scale wrong): block [0, 1] scale 2**5 "
        "(s), reference 2**3: not within 1 ulp of fp8ue8m0"
    )
    assert not s.passed and s.failing == 1
    assert s.message == "FAIL (1 of 2 blocks), judged with v"
    assert "\n" not in res.detail


def test_a_wrong_value_fails_naming_it() -> None:
    # 40 / 8 = 5 -> 4 or 6 pass (ulp 2 in [4, 8)); 2 is outside [3, 7]
    res = judge(cast_to(), BackendResult(returned([1.0, 8.0], {32: 2.0})))
    assert res.verdict == FAILED
    v, s = res.outputs
    assert s.passed and not v.passed and v.failing == 1
    assert "1 value wrong against a right scale): value at [0, 32] 2, x / scale = " in v.message
    assert "40 / 2**3 = 5: not within 1 ulp of fp4e2m1" in v.message


def test_a_missing_or_unusable_scale_output_fails_both() -> None:
    out = returned([1.0, 8.0])
    del out["s"]
    res = judge(cast_to(), BackendResult(out))
    assert res.verdict == FAILED
    assert [(o.name, o.passed, o.message) for o in res.outputs] == [
        ("v", False, "not judged: its scale output 's' is missing or unusable"),
        ("s", False, "no output produced"),
    ]
    out = returned([1.0, 8.0])
    out["s"] = np.ones((1, 3), np.float32)  # a shape the graph does not give it
    res = judge(cast_to(), BackendResult(out))
    assert res.outputs[1].message == "unusable output: shape [1, 3], expected [1, 2]"
    assert not res.outputs[0].passed


def test_a_missing_values_output_leaves_the_scales_unjudged() -> None:
    out = returned([1.0, 8.0])
    del out["v"]
    res = judge(cast_to(), BackendResult(out))
    assert res.verdict == FAILED
    assert [(o.name, o.message) for o in res.outputs] == [
        ("v", "no output produced"),
        ("s", "not judged: its values output 'v' was not judged"),
    ]


def assert_equal(kind: str, b: list[int]) -> LoadedVector:
    # allow_broadcast: [1, 3] against [4, 3] holds (input1's 1 takes any size);
    # [2, 3] against [4, 3] breaks ERROR_IF(input2[index] != 1 && input2 != input1)
    a = np.array([1 if kind == "valid" else 2, 3], np.int64)
    g = single_operator_graph(
        "ASSERT_EQUAL_SHAPE",
        [("input1", (2,), "shape"), ("input2", (2,), "shape")],
        [],
        {"allow_broadcast": True},
        constants={"input1": a, "input2": np.array(b, np.int64)},
        spec=SPEC,
    )
    return LoadedVector(
        name="assert",
        operator="ASSERT_EQUAL_SHAPE",
        mode="shape",
        kind=kind,  # type: ignore[arg-type]
        graph=g,
        inputs={},
        expected={},
        checks={},
        requirements=Requirements((), (), "8K"),
        provenance=Provenance("test", 0, 0, ""),
        rule={"clause": "input2[index] != 1 && input2[index] != input1[index]"},
    )


def test_a_graph_without_outputs_passes_when_it_runs_and_fails_when_rejected() -> None:
    valid = assert_equal("valid", [4, 3])
    ran = judge(valid, BackendResult({}))
    assert (ran.verdict, ran.detail) == (PASSED, "ran without error (the graph has no outputs)")
    refused = judge(valid, BackendResult.reject("input1[0] = 1 against 4"))
    assert refused.verdict == FAILED
    assert refused.detail == "rejected a valid graph: input1[0] = 1 against 4"


def test_a_must_fail_graph_without_outputs_must_be_rejected() -> None:
    error = assert_equal("error", [4, 3])
    assert judge(error, BackendResult.reject("no")).verdict == PASSED
    accepted = judge(error, BackendResult({}))
    assert accepted.verdict == ERROR_EXPECTED
    assert "input2[index] != 1" in accepted.detail

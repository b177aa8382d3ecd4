"""The reference rounds float64 to narrow float types once (conformance.rounding)
wherever it converts: values carried between operators, graph inputs, constants,
attributes and the reference backend's outputs.  ml_dtypes 0.5 rounds through float32,
which is wrong just off a tie; these are the cases it gets wrong."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np

from conformance.backends.base import BackendResult
from conformance.backends.reference import ReferenceBackend
from conformance.builder import GraphBuilder, single_operator_graph
from conformance.dtypes import BF16, FP8E4M3
from conformance.graph import Graph
from conformance.verdicts import PASSED, judge
from reference.engine import evaluate, to_storage
from reference.expectations import expect
from vectors.pack_model import Check, LoadedVector, Provenance, Requirements

# 2**24 + 2**16 + 1: just above the bf16 tie 2**24 + 2**16 (bf16's ulp there is 2**17),
# so it rounds up to 2**24 + 2**17.  float32 holds it as 2**24 + 2**16 exactly on the tie,
# which then goes to even, 2**24.
ABOVE_TIE = 16_842_753
ROUNDED = 16_908_288.0
DOUBLE_ROUNDED = 16_777_216.0
NEAR_ONE = 1 + 2**-8 + 2**-30  # bf16 1.0078125; through float32: 1.0


def cast_graph(in_dt: str, out_dt: str, n: int = 1) -> Graph:
    return single_operator_graph("CAST", [("x", (n,), in_dt)], [("y", (n,), out_dt)])


def test_cast_i32_to_bf16_rounds_once() -> None:
    x = np.array([ABOVE_TIE, -ABOVE_TIE], np.int32)
    outcome = evaluate(cast_graph("i32", "bf16", 2), {"x": x})
    assert outcome.kind == "valid", str(outcome)
    # The graph output is the exact value (the compliance reference) ...
    assert outcome.outputs["y"].tolist() == [ABOVE_TIE, -ABOVE_TIE]
    # ... and the value a bf16 tensor holds is the correctly rounded one.
    held = to_storage(outcome.outputs["y"], BF16)
    assert held.dtype == BF16.storage
    assert held.astype(np.float64).tolist() == [ROUNDED, -ROUNDED]


def test_value_carried_to_the_next_operator_is_rounded_once() -> None:
    b = GraphBuilder()
    blk = b.block()
    blk.input("x", (1,), "i32")
    blk.tensor("m", (1,), "bf16")
    blk.tensor("y", (1,), "fp32")
    blk.op("CAST", ["x"], ["m"])
    blk.op("CAST", ["m"], ["y"])
    blk.output("y")
    outcome = evaluate(b.build(), {"x": np.array([ABOVE_TIE], np.int32)})
    assert outcome.kind == "valid", str(outcome)
    assert outcome.outputs["y"].tolist() == [ROUNDED]


def test_float64_graph_input_constant_and_attribute_round_once() -> None:
    # A float64 graph input for a bf16 tensor is held as bf16 1.0078125.
    ident = single_operator_graph("IDENTITY", [("x", (1,), "bf16")], [("y", (1,), "bf16")])
    got = evaluate(ident, {"x": np.array([NEAR_ONE])})
    assert got.outputs["y"].tolist() == [1.0078125]
    # CONST values given as float64.
    const = single_operator_graph(
        "CONST", [], [("y", (2,), "bf16")], {"values": np.array([NEAR_ONE, -NEAR_ONE])}
    )
    assert evaluate(const, {}).outputs["y"].tolist() == [1.0078125, -1.0078125]
    # A CLAMP bound is the bf16 value the serialized graph would hold.
    clamp = single_operator_graph(
        "CLAMP",
        [("input", (1,), "bf16")],
        [("output", (1,), "bf16")],
        {"min_val": 0.0, "max_val": NEAR_ONE},
    )
    x = np.array([2.0], ml_dtypes.bfloat16)
    assert evaluate(clamp, {"input": x}).outputs["output"].tolist() == [1.0078125]


def test_fp8e4m3_constant_rounds_once_and_overflows_to_nan() -> None:
    # 1 + 2**-4 + 2**-30 is just above the tie 1 | 1.125; 464 is the tie 448 (even) |
    # 480 (the NaN code) and goes to 448; a hair above 464 rounds to 480, out of range,
    # so NaN (OCP non-saturating).  Through float32 the hairs are lost: 1.0 and 448.
    values = np.array([1 + 2**-4 + 2**-30, 464.0, 464.0 + 2**-30, -(464.0 + 2**-30)])
    const = single_operator_graph("CONST", [], [("y", (4,), "fp8e4m3")], {"values": values})
    got = evaluate(const, {}).outputs["y"].astype(np.float64)
    assert got[:2].tolist() == [1.125, 448.0] and np.isnan(got[2:]).all()
    assert to_storage(values, FP8E4M3).dtype == FP8E4M3.storage


def _vector(graph: Graph, inputs: dict[str, np.ndarray]) -> LoadedVector:
    exp = expect(graph, inputs)
    assert exp.outcome.valid, str(exp.outcome)
    return LoadedVector(
        name="cast-above-tie",
        operator="CAST",
        mode="signed 32 to bf16",
        kind="valid",
        graph=graph,
        inputs=inputs,
        expected=dict(exp.outcome.outputs),
        checks={n: Check(c.descriptor, c.bound) for n, c in exp.checks.items()},
        requirements=Requirements((), (), "8K"),
        provenance=Provenance("test", 0, 0, ""),
    )


def test_reference_backend_passes_its_own_check(tmp_path: Path) -> None:
    x = np.array([ABOVE_TIE, -ABOVE_TIE, 3, 0], np.int32)
    vector = _vector(cast_graph("i32", "bf16", 4), {"x": x})
    result = ReferenceBackend().run(vector, tmp_path)
    assert result.outputs["y"].astype(np.float64).tolist() == [ROUNDED, -ROUNDED, 3.0, 0.0]
    verdict = judge(vector, result)
    assert verdict.verdict == PASSED, verdict.detail
    # The check is what caught the double rounding: 2**24 is 65,537 away from the
    # exact value, more than half bf16's ulp (65,536 of 131,072).
    wrong = np.array([DOUBLE_ROUNDED, -DOUBLE_ROUNDED, 3.0, 0.0], ml_dtypes.bfloat16)
    assert judge(vector, BackendResult({"y": wrong})).verdict != PASSED

"""The composed bound of a float chain (reference.compliance.chain_bound), on chains
whose values are checked by hand: the reference's sequence, the same sequence in a wider
type, a fused multiply-add pass; a reassociation that cancels differently fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mutant_cases import failures, run
from targeted_cases.rewrites import chain

from conformance.backends.mutants import MutantBackend
from conformance.backends.reference import ReferenceBackend
from conformance.spec import load_spec
from reference.compliance.chain_bound import COMPOSED_RULE, composed_interval, needs_composing
from reference.expectations import expect

SPEC = load_spec()


def const(name: str, v: float, dt: str) -> tuple[str, Any, str]:
    return (name, np.array([v]), dt)


def judged(case: Any, actual: float, dt: Any) -> bool:
    e = expect(case.graph, case.inputs, spec=SPEC)
    out = case.graph.main.outputs[0]
    return bool(e.check(out, np.array([actual], dt)).passed)


def add_then_sub() -> Any:
    """fp16 ADD(1, 2**-11) > SUB(., 1)."""
    return chain(
        [1.0],
        "fp16",
        [
            ("ADD", ["prev", const("a", 2.0**-11, "fp16")], (1,), "fp16", {}),
            ("SUB", ["prev", const("b", 1.0, "fp16")], (1,), "fp16", {}),
        ],
    )


def test_the_bound_of_add_then_sub_by_hand() -> None:
    # ADD's exact result is 1 + 2**-11, allowed 0.5 ulp (2**-11) each way: its type's
    # values 1 and 1 + 2**-10.  A wider M[0] may pass on any real that rounds to one of
    # them: [1 - 2**-12, 1 + 2**-10 + 2**-11] (half the gap below 1 is 2**-12, above
    # 1 + 2**-10 it is 2**-11).  SUB 1 gives [-2**-12, 3 * 2**-11], with its own 0.5 ulp
    # at each end (2**-23 and 2**-21).  The reference (ADD rounded to even: 1) gives 0,
    # so err_bnd is the distance to the far end: 3 * 2**-11 + 2**-21.
    case = add_then_sub()
    assert needs_composing(case.graph.main)
    e = expect(case.graph, case.inputs, spec=SPEC)
    check = e.checks["t1"]
    assert check.descriptor.rule == COMPOSED_RULE
    assert check.bound is not None
    assert check.bound[0] == 3 * 2.0**-11 + 2.0**-21
    values = dict(case.inputs)
    values |= {"a": np.array([2.0**-11]), "b": np.array([1.0]), "t0": np.array([1.0])}
    values |= {"t1": np.array([0.0])}
    interval = composed_interval(case.graph.main, values, "t1")
    assert interval is not None
    assert interval[0][0] == -(2.0**-12) - 2.0**-23
    assert interval[1][0] == 3 * 2.0**-11 + 2.0**-21


def test_the_sequence_in_a_wider_type_passes_and_a_far_result_fails() -> None:
    case = add_then_sub()
    assert judged(case, 0.0, np.float16)  # the reference's fp16 sequence
    assert judged(case, 2.0**-11, np.float16)  # the same sequence in fp32
    assert not judged(case, 2.0**-9, np.float16)


def test_a_fused_multiply_add_passes() -> None:
    # fp32 MUL(1 + 2**-12, 1 + 2**-12) > SUB(., 1): the product 1 + 2**-11 + 2**-24 is
    # half an ulp (2**-24) above 1 + 2**-11, a tie broken to the even 1 + 2**-11, so the
    # reference gives 2**-11; an FMA keeps the exact product and gives 2**-11 + 2**-24.
    # Both are compliant.
    x = 1 + 2.0**-12
    case = chain(
        [x],
        "fp32",
        [
            ("MUL", ["prev", const("a", x, "fp32"), ("shift", np.int8(0), "i8")], (1,), "fp32", {}),
            ("SUB", ["prev", const("b", 1.0, "fp32")], (1,), "fp32", {}),
        ],
    )
    fma = np.float32(np.float64(x) * np.float64(x) - 1.0)
    reference = np.float32(np.float32(np.float32(x) * np.float32(x)) - np.float32(1.0))
    assert fma != reference
    assert judged(case, float(reference), np.float32)
    assert judged(case, float(fma), np.float32)


def test_a_reassociation_that_cancels_differently_fails() -> None:
    # fp32 (1e8 + -1e8) + 1 is 1 in any precision: ADD's first result is exactly 0.
    # Reassociated, -1e8 + 1 rounds to -1e8 (1 is below half an ulp, 4) and the sum is
    # 0: outside the composed bound, which is 0.5 ulp of 1.
    case = chain(
        [1e8],
        "fp32",
        [
            ("ADD", ["prev", const("a", -1e8, "fp32")], (1,), "fp32", {}),
            ("ADD", ["prev", const("b", 1.0, "fp32")], (1,), "fp32", {}),
        ],
    )
    reassociated = np.float32(1e8) + (np.float32(-1e8) + np.float32(1.0))
    assert reassociated == 0.0
    assert judged(case, 1.0, np.float32)
    assert not judged(case, float(reassociated), np.float32)


def test_exact_operators_carry_the_interval() -> None:
    # ADD(-1, 2**-11) in fp16 is -1 + 2**-11 (exact), allowed 0.5 ulp of it; ABS then
    # NEGATE: the ends fold through |.| and swap through the minus.
    case = chain(
        [-1.0],
        "fp16",
        [
            ("ADD", ["prev", const("a", 2.0**-11, "fp16")], (1,), "fp16", {}),
            ("ABS", ["prev"], (1,), "fp16", {}),
            ("NEGATE", ["prev"], (1,), "fp16", {"input1_zp": 0.0, "output_zp": 0.0}),
        ],
    )
    e = expect(case.graph, case.inputs, spec=SPEC)
    check = e.checks["t2"]
    assert check.descriptor.rule == COMPOSED_RULE
    # exact: -1 + 2**-11; its type's values within 2**-12: -1 + 2**-11 itself
    # (spacing 2**-11 below 1): passable [-1 + 2**-11 - 2**-12, -1 + 2**-11 + 2**-12]
    ref = float(e.outcome.outputs["t2"][0])
    assert ref == -(1 - 2.0**-11)
    assert check.bound is not None and check.bound[0] == 2.0**-12


def test_a_comparison_of_a_rounded_value_is_not_composed() -> None:
    case = chain(
        [1.0],
        "fp16",
        [
            ("ADD", ["prev", const("a", 2.0**-11, "fp16")], (1,), "fp16", {}),
            ("GREATER", ["prev", const("b", 1.0, "fp16")], (1,), "bool", {}),
        ],
    )
    assert needs_composing(case.graph.main)
    e = expect(case.graph, case.inputs, spec=SPEC)
    assert e.checks["t1"].descriptor.rule != COMPOSED_RULE  # the chains never draw it


@pytest.mark.parametrize("overflowing", [6e4, 65504.0])
def test_an_interval_that_reaches_infinity_is_not_composed(overflowing: float) -> None:
    case = chain(
        [overflowing],
        "fp16",
        [
            ("ADD", ["prev", const("a", 65504.0, "fp16")], (1,), "fp16", {}),
            ("SUB", ["prev", const("b", 1.0, "fp16")], (1,), "fp16", {}),
        ],
    )
    e = expect(case.graph, case.inputs, spec=SPEC)
    assert e.checks["t1"].descriptor.rule != COMPOSED_RULE


def test_a_backend_that_runs_the_pair_in_fp64_passes(tmp_path: Path) -> None:
    # chain-pairs-in-fp64 (compliant behaviour): ADD > SUB computed exactly, rounded
    # once: 2**-11 where the reference's fp16 sequence gives 0.  The composed bound
    # passes it; SUB's own 0.5 ulp around 0 would not.
    case = add_then_sub()
    ref = run(ReferenceBackend(), case, tmp_path)
    wide = run(MutantBackend("chain-pairs-in-fp64"), case, tmp_path)
    assert float(ref.outputs["t1"][0]) == 0.0
    assert float(wide.outputs["t1"][0]) == 2.0**-11
    assert not failures(case, wide) and not failures(case, ref)
    # a lone ADD: nothing to fuse, the reference's bits
    alone = chain(
        [1.0], "fp16", [("ADD", ["prev", const("a", 2.0**-11, "fp16")], (1,), "fp16", {})]
    )
    np.testing.assert_array_equal(
        run(MutantBackend("chain-pairs-in-fp64"), alone, tmp_path).outputs["t0"].view(np.uint8),
        run(ReferenceBackend(), alone, tmp_path).outputs["t0"].view(np.uint8),
    )

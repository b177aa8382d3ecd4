"""Reference evaluator, TOSA 1.1: CAST's block-scaled modes (pseudocode/operators/
CAST.tosac), and how their results are judged.

* fp to MX (out_t bs32_*): per block of 32 innermost elements, calc_block_scale of the
  block's largest magnitude (floor(log2(max / out_max)) + 1; fp8e4m3: the ceiling) and
  each value over that scale rounded to the value type, returned as one composite.
* MX to fp (in_t bs32_*): tensor_read<in_t, acc_t> with acc_t fp32 (access_elem_type):
  value times its block's scale in fp32, then round_to_nearest_float into out_t.
* The ERROR_IFs on the composite's rank and innermost dimension, for in_t and out_t,
  and the block-scaled branch's ERROR_IF(is_floating_point<in_t>()), read as its comment
  says (only a float input may be cast to a block-scaled type).
* A block-scaled result is judged as CAST_TO_BLOCK_SCALED's two outputs are
  (tosa_reference_check_scale), a cast from one as CAST_FROM_BLOCK_SCALED's
  (tosa_reference_check_from_block).

Every expected value is worked out by hand in the comment beside it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from block_helpers import composite, composite_result, exps
from reference_helpers import assert_rule

from conformance import dtypes as D
from conformance.backends.base import BackendResult
from conformance.block_tensor import BlockScaled
from conformance.builder import single_operator_graph
from conformance.compliance_descriptor import Mode
from conformance.graph import Graph
from conformance.spec import load_revision, spec_in_use
from conformance.verdicts import FAILED, PASSED, judge
from reference import compliance, mx, registry
from reference.arguments import TYPES_CLAUSE
from reference.describe.image_cast import CAST_FROM_BLOCK_RULE, CAST_TO_BLOCK_RULE
from reference.engine import Evaluator, evaluate, to_storage
from reference.expectations import Expectation, expect
from reference.ops import type_conversion as tc
from reference.outcome import ErrorIf, Outcome
from vectors.pack_model import Check, LoadedVector, Provenance, Requirements

SPEC = load_revision("1.1-draft")
FP4 = D.dtype("bs32_fp8ue8m0_fp4e2m1")
E4M3 = D.dtype("bs32_fp8ue8m0_fp8e4m3")
E5M2 = D.dtype("bs32_fp8ue8m0_fp8e5m2")
MX8 = D.dtype("bs32_fp8ue8m0_mxint8")


@pytest.fixture(autouse=True)
def _the_1_1_spec() -> Iterator[None]:
    with spec_in_use(SPEC):
        yield


def graph(in_t: D.DType, out_t: D.DType, shape: tuple[int, ...], **attrs: Any) -> Graph:
    return single_operator_graph(
        "CAST", [("x", shape, in_t)], [("y", shape, out_t)], attrs, spec=SPEC, strict=False
    )


def run(in_t: D.DType, out_t: D.DType, x: Any, **attrs: Any) -> Outcome:
    shape = tuple(x.shape)
    return evaluate(graph(in_t, out_t, shape, **attrs), {"x": x}, spec=SPEC)


def block(head: list[float], fill: float = 0.0) -> np.ndarray:
    """One block of 32 (shape [1, 32]): ``head`` then ``fill``."""
    return np.array(head + [fill] * (32 - len(head)), dtype=np.float64).reshape(1, 32)


# -------------------------------------------------------------------------- fp to MX


def test_fp32_block_to_fp4_by_hand() -> None:
    # max |x| = 12; fp4e2m1's out_max (the largest value rounding to 6) is 7:
    # floor(log2(12 / 7)) + 1 = 0 + 1, scale 2**1.  Each x / 2 rounded to fp4e2m1
    # (0, 0.5, 1, 1.5, 2, 3, 4, 6; ties to the even code):
    #   0.25 -> 0 (tie), 0.5, 0.75 -> 1 (tie), 1, 1.5, 2, 2.5 -> 2 (tie), 3, 3.5 -> 4
    #   (tie), 6, -6, -2.5 -> -2, 0.375 -> 0.5, 4.5 -> 4, 5 -> 4 (tie), 5.5 -> 6, -0.0.
    x = block([0.5, 1, 1.5, 2, 3, 4, 5, 6, 7, 12, -12, -5, 0.75, 9, 10, 11, -0.0])
    y = composite_result(run(D.FP32, FP4, x.astype(np.float32)))
    assert exps(y.scales) == [1]
    got = mx.decode(y.values, D.FP4E2M1)[0]
    want = [0, 0.5, 1, 1, 1.5, 2, 2, 3, 4, 6, -6, -2, 0.5, 4, 4, 6, -0.0]
    assert list(got[:17]) == want
    assert np.signbit(got[16]) and not np.any(got[17:])  # -0.0 keeps its sign


def test_the_scale_formula_at_its_boundaries() -> None:
    # fp4e2m1, floor + 1: max 7 -> log2(7 / 7) = 0 -> scale 2**1; max 6.9375 ->
    # floor(log2(0.991)) + 1 = -1 + 1 -> 2**0.
    two = np.concatenate([block([7.0, 1.0]), block([6.9375, 1.0])], axis=1)
    assert exps(composite_result(run(D.FP32, FP4, two.astype(np.float32))).scales) == [1, 0]
    # fp8e4m3, the ceiling (out_max 464): max 464 -> ceil(log2(1)) = 0 -> 2**0 and 464
    # rounds to 448 (the tie between 448 and 480 goes to the even code); max 465 ->
    # ceil(log2(465 / 464)) = 1 -> 2**1, and 465 / 2 = 232.5 rounds to 240 (ulp 16).
    e = np.concatenate([block([464.0]), block([465.0])], axis=1).astype(np.float32)
    y = composite_result(run(D.FP32, E4M3, e))
    assert exps(y.scales) == [0, 1]
    values = mx.decode(y.values, D.FP8E4M3)[0]
    assert (values[0], values[32]) == (448.0, 240.0)


def test_zero_nan_and_infinite_blocks() -> None:
    # All zeros: calc_block_scale gives normal_min<fp8ue8m0> = 2**-127; a NaN or an
    # infinity in a block makes its scale NaN (code 0xFF).
    x = np.concatenate([block([]), block([1.0, np.nan]), block([np.inf, 2.0])], axis=1)
    y = composite_result(run(D.FP32, FP4, x.astype(np.float32)))
    assert exps(y.scales) == [-127, None, None]
    assert not np.any(mx.decode(y.values, D.FP4E2M1)[0, :32])


def test_fp8_input_to_mxint8_by_hand() -> None:
    # fp8e4m3 input, mxint8 values: out_max = 127.5 / 64 = 1.9921875;
    # floor(log2(448 / 1.9921875)) + 1 = 7 + 1, scale 2**8.  Raw codes round(x / 256 * 64):
    # 448 -> 112 (1.75), -448 -> -112, 6 -> rint(1.5) = 2, 2 -> rint(0.5) = 0 (tie), 1 -> 0.
    x = block([448, -448, 6, 2, 1]).astype(D.FP8E4M3.storage)
    y = composite_result(run(D.FP8E4M3, MX8, x))
    assert exps(y.scales) == [8]
    assert list(y.values[0, :5].astype(int)) == [112, -112, 2, 0, 0]


# -------------------------------------------------------------------------- MX to fp


def test_fp4_block_with_scale_2_pow_3_read_into_fp32() -> None:
    # fp4e2m1 codes 0..15 are 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives (code 8 is
    # -0); times the scale 8: 0, 4, 8, 12, 16, 24, 32, 48, -0, -4, ..., -48.
    x = composite(FP4, np.tile(np.arange(16), 2).reshape(1, 32), [[3]])
    outcome = run(FP4, D.FP32, x)
    assert outcome.valid, str(outcome)
    y = np.asarray(outcome.outputs["y"])[0]
    base = [0, 4, 8, 12, 16, 24, 32, 48]
    assert list(y[:16]) == base + [-v for v in base]
    assert np.signbit(y[8]) and y[8] == 0


def test_the_read_is_an_fp32_product() -> None:
    # fp8e5m2 values with scale 2**127: 57344 * 2**127 = 1.75 * 2**142 overflows fp32
    # (acc_t) to infinity, so fp16 gets infinity and fp8e4m3 (no infinity) NaN;
    # 2**-16 (the smallest subnormal) * 2**-127 = 2**-143 is an fp32 subnormal, exact.
    big = composite(E5M2, block([57344.0, -57344.0]), [[127]])
    assert list(np.asarray(run(E5M2, D.FP16, big).outputs["y"])[0, :2]) == [np.inf, -np.inf]
    assert np.isnan(np.asarray(run(E5M2, D.FP8E4M3, big).outputs["y"])[0, :2]).all()
    tiny = composite(E5M2, block([2.0**-16]), [[-127]])
    assert np.asarray(run(E5M2, D.FP32, tiny).outputs["y"])[0, 0] == 2.0**-143


def test_a_nan_scale_makes_its_block_nan_and_mxint8_reads_raw_over_64() -> None:
    # Block 0: raw -128, 127, 64 with scale 2**-3: -2 / 8, (127 / 64) / 8, 1 / 8.
    # Block 1: the NaN scale, values 0: 0 * NaN is NaN.
    raw = np.zeros((1, 64), dtype=np.int64)
    raw[0, :3] = [-128, 127, 64]
    outcome = run(MX8, D.BF16, composite(MX8, raw, [[-3, None]]))
    y = np.asarray(outcome.outputs["y"])[0]
    assert list(y[:3]) == [-0.25, 127 / 512, 0.125]
    assert np.isnan(y[32:]).all()


# -------------------------------------------------------------------------- ERROR_IFs


def test_the_block_rules_of_in_t_and_out_t() -> None:
    rank0 = composite(FP4, np.array(1), 0)  # a rank-0 composite holds one scale
    assert_rule(run(FP4, D.FP32, rank0), "ERROR_IF", tc.BLOCK_RANK_IN_CLAUSE, "rank 0")
    off = composite(FP4, np.zeros((1, 40), dtype=int), [[0, 0]])  # 40 = a block and 8
    assert_rule(run(FP4, D.FP32, off), "ERROR_IF", tc.BLOCK_SHAPE_IN_CLAUSE, "[1, 40]")
    scalar = np.array(1.0, dtype=np.float32)
    assert_rule(run(D.FP32, FP4, scalar), "ERROR_IF", tc.BLOCK_RANK_OUT_CLAUSE, "rank 0")
    assert_rule(
        run(D.FP32, FP4, np.ones((2, 33), np.float32)),
        "ERROR_IF",
        tc.BLOCK_SHAPE_OUT_CLAUSE,
        "[2, 33]",
    )


def test_the_clauses_are_the_pseudocodes() -> None:
    assert tc.BLOCK_RANK_IN_CLAUSE == "is_block_scale<in_t>() && rank(shape) == 0"
    assert tc.BLOCK_SHAPE_OUT_CLAUSE == (
        "is_block_scale<out_t>() && shape[rank(shape)-1] % get_innermost_block_size<out_t>() != 0"
    )
    assert tc.FP_TO_BLOCK_CLAUSE == "is_floating_point<in_t>()"


def test_the_block_rules_come_before_input_unsigned() -> None:
    rank0 = composite(FP4, np.array(1), 0)
    assert_rule(run(FP4, D.FP32, rank0, input_unsigned=True), "ERROR_IF", tc.BLOCK_RANK_IN_CLAUSE)
    x = np.ones((1, 32), np.float32)
    assert_rule(run(D.FP32, FP4, x, input_unsigned=True), "ERROR_IF", tc.INPUT_UNSIGNED_CLAUSE)


def test_is_floating_point_is_read_as_its_comment_says() -> None:
    # As written, ERROR_IF(is_floating_point<in_t>()) would refuse every fp to MX mode:
    # all 30 bind a float in_t, and each casts.
    to_mx = [m for m in SPEC.operator("CAST").modes if "bs32" in m.bindings["out_t"]]
    assert len(to_mx) == 30 and all(m.dtype("in_t").is_float for m in to_mx)
    assert run(D.FP16, FP4, np.ones((1, 32), np.float16)).valid
    # An integer input, which it refuses as read, is in no mode: the type check refuses
    # the graph first ...
    refused = run(D.I8, FP4, np.ones((1, 32), np.int8))
    assert_rule(refused, "ERROR_IF", TYPES_CLAUSE, "in_t=i8")
    # ... so the rule is shown by running the operator with in_t bound to i8.
    g = graph(D.FP32, FP4, (1, 32))
    ctx = Evaluator(g, SPEC, SPEC.level("8K")).context(
        g.main, 0, {"x": np.ones((1, 32), np.float32)}
    )
    ctx.bindings["in_t"] = D.I8
    with pytest.raises(ErrorIf) as fired:
        registry.load_all()["CAST"](ctx)
    assert fired.value.rule.clause == tc.FP_TO_BLOCK_CLAUSE


# -------------------------------------------------------------------------- judging


def _stored(e: Expectation, g: Graph) -> Any:
    y = e.outcome.outputs["y"]
    return y if isinstance(y, BlockScaled) else to_storage(y, g.main.tensors["y"].dtype)


def test_a_block_scaled_result_is_judged_by_check_scale() -> None:
    # x: one block, max 12 -> reference scale 2**1 (test_fp32_block_to_fp4_by_hand).
    x = block([0.5, 1, 1.5, 2, 3, 4, 5, 6, 7, 12, -12]).astype(np.float32)
    g = graph(D.FP32, FP4, (1, 32))
    e = expect(g, {"x": x}, spec=SPEC)
    check = e.checks["y"]
    assert check.descriptor.mode is Mode.SCALED_VALUES and check.descriptor.dtype is FP4
    assert check.descriptor.rule == CAST_TO_BLOCK_RULE and check.descriptor.partner is None
    assert check.bound is not None and list(check.bound[0, :3]) == [0.5, 1.0, 1.5]
    ref = e.outcome.outputs["y"]
    assert isinstance(ref, BlockScaled)
    assert e.check("y", ref).passed
    # Scale 2**2 is one ulp of fp8ue8m0 from 2**1: with values x / 4 rounded it passes
    # (12 / 4 = 3, 7 / 4 = 1.75 -> 2 ...), as CAST_TO_BLOCK_SCALED's rule allows.
    quarter = mx.encode(x.astype(np.float64) / 4, D.FP4E2M1)
    other = BlockScaled(FP4, quarter, mx.from_bits(np.array([[129]]), D.FP8UE8M0))
    assert e.check("y", other).passed
    # Scale 2**3, two ulp away, fails the whole block; a right scale with one value
    # two fp4 steps off (12 / 2 = 6 returned as 3) fails that value only.
    far = replace(other, scales=mx.from_bits(np.array([[130]]), D.FP8UE8M0))
    assert e.check("y", far).failing_count == 32
    wrong = ref.copy()
    wrong.values[0, 9] = mx.encode(np.array(3.0), D.FP4E2M1)
    verdict = e.check("y", wrong)
    assert not verdict.passed and verdict.failing_count == 1


def test_a_cast_from_block_scaled_is_judged_by_check_from_block() -> None:
    # fp4 values times 2**3 into fp16 (exact); err_bnd = one fp16 ulp of the block
    # value times the scale, at least normal_min<fp16>: for 48 (6 * 8) that is
    # 2**2 * 2**-10 * 8 = 2**-5.
    x = composite(FP4, np.tile(np.arange(16), 2).reshape(1, 32), [[3]])
    g = graph(FP4, D.FP16, (1, 32))
    e = expect(g, {"x": x}, spec=SPEC)
    check = e.checks["y"]
    assert check.descriptor.mode is Mode.ABS_ERROR
    assert check.descriptor.rule.startswith(CAST_FROM_BLOCK_RULE)
    assert check.bound is not None and check.bound[0, 7] == 2.0**-5
    stored = _stored(e, g)
    assert e.check("y", stored).passed
    off = stored.copy()
    off[0, 7] = np.float16(48.0 + 2 * 2.0**-5)  # 48.0625: two bound widths off
    assert not e.check("y", off).passed


def test_the_runner_judges_a_cast_to_block_scaled_with_its_bound() -> None:
    x = block([0.5, 1, 1.5, 2, 3, 4, 5, 6, 7, 12, -12]).astype(np.float32)
    g = graph(D.FP32, FP4, (1, 32))
    e = expect(g, {"x": x}, spec=SPEC)
    mode = SPEC.operator("CAST").mode("fp to MX (in_t=fp32_t, out_t=bs32_fp8ue8m0_fp4e2m1_t)")
    ref = e.outcome.outputs["y"]
    assert isinstance(ref, BlockScaled)
    vector = LoadedVector(
        "CAST_bs32", "CAST", mode.mode, "valid", g, {"x": x}, {"y": ref},
        {"y": Check(e.checks["y"].descriptor, e.checks["y"].bound)},
        Requirements.for_mode(SPEC, mode, "8K"), Provenance("hand", 0, 0, "-"),
    )  # fmt: skip
    assert judge(vector, BackendResult({"y": ref.copy()})).verdict == PASSED
    far = replace(ref, scales=mx.from_bits(np.array([[130]]), D.FP8UE8M0))
    got = judge(vector, BackendResult({"y": far}))
    assert got.verdict == FAILED and got.outputs[0].failing == 32


def test_scaled_values_for_a_composite_needs_its_bound() -> None:
    params = compliance.ScaledValuesParams("y", 32)
    desc = compliance.ComplianceDescriptor(Mode.SCALED_VALUES, FP4, CAST_TO_BLOCK_RULE, params)
    assert desc.needs_bound and desc.partner is None
    ref = composite(FP4, np.zeros((1, 32), dtype=int), [[0]])
    with pytest.raises(ValueError, match="bound"):
        compliance.check(ref, desc, ref.copy())
    assert compliance.check(ref, desc, ref.copy(), np.zeros((1, 32))).passed

"""TOSA 1.1's dot product accuracy rule (chapters/introduction.adoc, "Dot product
accuracy requirements"; pseudocode/library/tosa_reference_check_dotproduct.tosac):
ABS_BOUND and VARIANCE_ERROR_BOUND by the input types and the accumulator, the
abs-input pass floored by each tensor's own normal_min, and the types recorded in the
descriptor.  The draft and 1.0 keep their rules.

Readings (proposed, see the report): "dp-mixed-either", the relaxed row (in_t fp8 /
fp6 / fp4 / mxint8 with an fp32 accumulator) and the fp32 row are met when either
operand's type is one of them; MATMUL's and MATMUL_T's 'input' is A, 'weight' B, and
their accumulator is out_t (the table's note for operators without acc_t)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest

from conformance.builder import single_operator_graph
from conformance.dtypes import BF16, FP8E4M3, FP8E5M2, FP16, FP32, DType
from conformance.spec import load_revision, spec_in_use
from reference import compliance as c
from reference.compliance import revision_rules
from reference.compliance.dot_product import abs_bound_units, variance_units
from reference.engine import to_storage
from reference.expectations import expect

V1_1 = "1.1-draft"
SPEC = load_revision(V1_1)


@contextmanager
def revision(name: str) -> Iterator[None]:
    with spec_in_use(load_revision(name)):
        yield


def params(ks: int, acc: DType, *types: DType) -> c.DotProductParams:
    return c.DotProductParams(ks=ks, data_set=-1, acc_dtype=acc, input_dtypes=types)


RULE_1_1 = revision_rules.rules_for(V1_1).dot_product.value
RULE_1_0 = revision_rules.rules_for("1.0").dot_product.value


@pytest.mark.parametrize(
    ("ks", "acc", "out", "types", "units"),
    [
        # fp8 x fp8 into fp32, KS 3 (ksb 3): 2 * max(3, min(3, 64) * 1024) = 6144.
        (3, FP32, FP32, (FP8E4M3, FP8E4M3), 6144),
        # KS 100: 2 * max(100, 64 * 1024) = 131072; KS 100000: 2 * 100000 = 200000.
        (100, FP32, FP32, (FP8E5M2, FP8E5M2), 131072),
        (100000, FP32, FP32, (FP8E5M2, FP8E4M3), 200000),
        # Mixed fp16 data, fp8 weights into fp32: relaxed by either operand's type.
        (3, FP32, FP32, (FP16, FP8E4M3), 6144),
        # fp8 with an fp16 accumulator (out_t for MATMUL): the "all other cases" row, 2 *
        # ksb = 6.
        (3, FP16, FP16, (FP8E4M3, FP8E4M3), 6),
        # fp32 inputs: 3 * 2 * ksb = 18; fp16 data with fp32 weights, the same reading.
        (3, FP32, FP32, (FP32, FP32), 18),
        (3, FP32, FP32, (FP16, FP32), 18),
        # fp32 data with fp8 weights: the relaxed row comes first in the table.
        (3, FP32, FP32, (FP32, FP8E4M3), 6144),
        # bf16 x fp16 into fp32: 2 * 3 = 6.
        (3, FP32, FP32, (BF16, FP16), 6),
    ],
)
def test_abs_bound_by_types(
    ks: int, acc: DType, out: DType, types: tuple[DType, ...], units: float
) -> None:
    p = params(ks, acc, *types)
    assert c.ksb(p, out, RULE_1_1) == ks  # acc and out of the same precision
    assert abs_bound_units(p, out, RULE_1_1) == units
    # TOSA 1.0 has one row: 2 * ksb whatever the types.
    assert abs_bound_units(p, out, RULE_1_0) == 2 * ks


def test_variance_units_by_types() -> None:
    # Relaxed: max(ksb, min(ksb, 64) * 2**20): KS 3 -> max(3, 3 * 2**20) = 3 * 2**20;
    # KS 2**21 -> max(2**21, 64 * 2**20 = 2**26) = 2**26.
    assert variance_units(params(3, FP32, FP8E4M3, FP16), FP32, RULE_1_1) == 3 << 20
    assert variance_units(params(1 << 21, FP32, FP8E4M3, FP16), FP32, RULE_1_1) == 1 << 26
    # No fp32 row for the variance: ksb.
    assert variance_units(params(3, FP32, FP32, FP32), FP32, RULE_1_1) == 3


def test_relaxed_statistics_limits() -> None:
    # T = 1000 outputs each 0.25 units high (S = 4, so the error sum counts), fp8 x fp8
    # into fp32 with KS 1: ksb 1, variance units max(1, 1 * 2**20) = 2**20.  Error-sum
    # limit sqrt(10 * 1.6 * 2**20 * 1000) = 4 * sqrt(2**20 * 1000) = 129531.9; sumsq
    # limit 1.6 * 2**20 * 1000 = 1677721600.
    n = 1000
    desc = c.ComplianceDescriptor(
        c.Mode.DOT_PRODUCT,
        FP32,
        "test",
        c.DotProductParams(ks=1, data_set=4, acc_dtype=FP32, input_dtypes=(FP8E4M3, FP8E4M3)),
    )
    # bound 1: one unit is 2**-24; 0.25 units = 2**-26 above 1.0 is not an fp32 value,
    # so use a reference that is: ref = 1 - 2**-26 with the result 1.0.
    ref = np.full(n, 1.0 - 2.0**-26)
    with revision(V1_1):
        v = c.check(ref, desc, np.ones(n, np.float32), np.ones(n))
    stats = v.dot_product
    assert stats is not None and v.passed
    assert stats.error_sum == pytest.approx(n * 0.25)
    assert stats.error_sum_limit == pytest.approx(4 * math.sqrt(2**20 * n))
    assert stats.error_sumsq_limit == pytest.approx(1.6 * 2**20 * n)
    # ABS_BOUND 2 * 1024 = 2048 = ksb * stats.abs_bound.
    assert stats.ksb * stats.abs_bound == 2048


def _matmul_t_expect(a: np.ndarray, b: np.ndarray, a_t: str, b_t: str, out_t: str):
    graph = single_operator_graph(
        "MATMUL_T",
        [("a", a.shape, a_t), ("b", b.shape, b_t), ("az", (1,), a_t), ("bz", (1,), b_t)],
        [("y", (a.shape[0], a.shape[1], b.shape[1]), out_t)],
        {},
        constants={"az": np.zeros(1, a.dtype), "bz": np.zeros(1, b.dtype)},
        spec=SPEC,
    )
    with spec_in_use(SPEC):
        return expect(graph, {"a": a, "b": b}, spec=SPEC)


def test_expect_records_the_types_and_floors_each_by_its_own() -> None:
    # MATMUL_T fp8e4m3 x fp16 into fp32 of A = [[0]], B = [[0]] (no local_bound
    # attribute: local_bound true).  1.1's abs pass reads A as max(0, normal_min<fp8e4m3>)
    # = 2**-6 and B as max(0, normal_min<fp16>) = 2**-14: the bound is 2**-20 (1.0's
    # normal_min<in_t> for both would give 2**-12).
    a = to_storage(np.zeros((1, 1, 1)), FP8E4M3)
    b = np.zeros((1, 1, 1), np.float16)
    exp = _matmul_t_expect(a, b, "fp8e4m3", "fp16", "fp32")
    chk = exp.checks["y"]
    p = chk.descriptor.params
    assert isinstance(p, c.DotProductParams)
    assert p.input_dtypes == (FP8E4M3, FP16) and p.acc_dtype is FP32 and p.ks == 1
    assert chk.bound is not None and chk.bound.tolist() == [[[2.0**-20]]]
    # ABS_BOUND 2 * max(1, 1024) = 2048 units of max(2**-20 * 2**-24, normal_min<fp32>)
    # = 2**-44: 2**-33 off the reference 0 passes, 2**-32 fails.
    with spec_in_use(SPEC):
        assert exp.check("y", np.full((1, 1, 1), 2.0**-33, np.float32)).passed
        assert not exp.check("y", np.full((1, 1, 1), 2.0**-32, np.float32)).passed


def test_descriptor_json_keeps_the_types_in_1_1_only() -> None:
    with revision(V1_1):
        desc = c.dot_product("MATMUL", FP32, FP32, ks=4, data_set=1, input_dtypes=(FP16, BF16))
    data = desc.to_json()
    assert data["params"]["input_dtypes"] == ["fp16", "bf16"]
    assert c.ComplianceDescriptor.from_json(data) == desc
    # 1.0 and the draft: the bound ignores the types, and the JSON is as it was.
    for rev in ("1.0", "2024-04-draft"):
        with revision(rev):
            old = c.dot_product("MATMUL", FP32, FP32, ks=4, data_set=1, input_dtypes=(FP16, BF16))
        assert "input_dtypes" not in old.to_json()["params"]

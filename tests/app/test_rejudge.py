"""The judge's second readings: denormals flushed (fp16/bf16/fp32 accepted, fp8 and
declared-supported types rejected) in every compliance mode, and the sign of a zero
chosen between -0 and +0.  Every value is worked by hand in the comments."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from conformance.backends import BackendError, BackendResult
from conformance.backends.base import denormal_modes
from conformance.builder import single_operator_graph
from conformance.dtypes import BF16, FP16, FP32, dtype
from conformance.graph import Graph
from conformance.rejudge import FLUSH_INPUTS, FLUSH_OUTPUTS, PLAIN, ZERO_TIES
from conformance.verdicts import FAILED, PASSED, VectorResult, judge
from reference.compliance.denormals import FLUSH, SUPPORTED, parse_modes
from reference.expectations import expect
from vectors.pack_model import Check, LoadedVector, Provenance, Requirements

SUB32 = 2.0**-130  # fp32 subnormal (normal_min 2**-126)
SUB16 = 2.0**-24  # the smallest fp16 subnormal (normal_min 2**-14)


def vector_of(graph: Graph, inputs: dict[str, np.ndarray]) -> LoadedVector:
    exp = expect(graph, inputs)
    assert exp.outcome.valid, str(exp.outcome)
    return LoadedVector(
        name="v",
        operator=graph.main.operators[-1].op,
        mode="",
        kind="valid",
        graph=graph,
        inputs=inputs,
        expected=dict(exp.outcome.outputs),
        checks={n: Check(c.descriptor, c.bound) for n, c in exp.checks.items()},
        requirements=Requirements((), (), "8K"),
        provenance=Provenance("test", 0, 0, ""),
    )


def one(
    op: str,
    inputs: list[tuple[str, Any, str]],
    out: tuple[tuple[int, ...], str],
    **attrs: Any,
) -> LoadedVector:
    values = {n: np.asarray(v, dtype=np.float64).astype(dtype(t).storage) for n, v, t in inputs}
    graph = single_operator_graph(
        op, [(n, values[n].shape, t) for n, _, t in inputs], [("y", out[0], out[1])], attrs
    )
    return vector_of(graph, values)


def verdict(vector: LoadedVector, y: Any, declared: str | None = None) -> VectorResult:
    out = vector.graph.main.tensors["y"]
    actual = np.asarray(y, dtype=np.float64).reshape(out.shape).astype(out.dtype.storage)
    modes = parse_modes(declared) if declared else None
    return judge(vector, BackendResult({"y": actual}), denormals=modes)


# -- fp16 / bf16 / fp32: flushing accepted, in every mode ---------------------------------------


def _exact() -> tuple[LoadedVector, list[float]]:
    # ABS of the fp16 subnormals -2**-24 and 2**-24 is 2**-24; flushed, +0.
    return one("ABS", [("x", [-SUB16, SUB16], "fp16")], ((2,), "fp16")), [0.0, 0.0]


def _ulp() -> tuple[LoadedVector, list[float]]:
    # ADD fp32: 2**-126 + 2**-130 = 1.0625 * 2**-126, 2**-130 (2**20 half-ulps) away from
    # the 2**-126 a backend gets with the subnormal operand read as 0.
    vec = one("ADD", [("a", [2.0**-126], "fp32"), ("b", [SUB32], "fp32")], ((1,), "fp32"))
    return vec, [2.0**-126]


def _mul_inf() -> tuple[LoadedVector, list[float]]:
    # MUL fp32: 2**-130 * -inf = -inf; with the subnormal flushed, 0 * -inf = NaN.
    vec = one(
        "MUL",
        [("a", [SUB32], "fp32"), ("b", [-np.inf], "fp32"), ("s", 0, "i8")],
        ((1,), "fp32"),
    )
    return vec, [np.nan]


def _abs_error() -> tuple[LoadedVector, list[float]]:
    # POW fp32: (2**-130) ** 0.5 = 2**-65, a normal value; flushed, 0 ** 0.5 = 0, whose
    # bound is 0 (calcAbsErrorBound of a zero result with an infinite bound value).
    vec = one("POW", [("a", [SUB32], "fp32"), ("b", [0.5], "fp32")], ((1,), "fp32"))
    return vec, [0.0]


def _reduce_product() -> tuple[LoadedVector, list[float]]:
    # REDUCE_PRODUCT fp32 of [2**-130, 2**100] is 2**-30; flushed, 0.
    vec = one("REDUCE_PRODUCT", [("x", [SUB32, 2.0**100], "fp32")], ((1,), "fp32"), axis=0)
    return vec, [0.0]


def _dot_product() -> tuple[LoadedVector, list[float]]:
    # CONV2D fp32 1x1: 2**-130 * 2**100 + 0 = 2**-30, error unit 2**-30 * 2**-24: a 0
    # is 2**24 units off.  Flushed, the product and its bound are 0, so 0 is required.
    x = np.full((1, 1, 1, 1), SUB32)
    w = np.full((1, 1, 1, 1), 2.0**100)
    vec = one(
        "CONV2D",
        [("x", x, "fp32"), ("w", w, "fp32"), ("b", [0.0], "fp32")],
        ((1, 1, 1, 1), "fp32"),
        pad=(0, 0, 0, 0),
        stride=(1, 1),
        dilation=(1, 1),
        input_zp=0.0,
        weight_zp=0.0,
        acc_type="FP32",
    )
    return vec, [0.0]


def _cast() -> tuple[LoadedVector, list[float]]:
    # CAST fp16 -> fp32 of 2**-24: a normal fp32 value, 0 when the fp16 input is flushed.
    return one("CAST", [("x", [SUB16], "fp16")], ((1,), "fp32")), [0.0]


FLUSHED = {
    "exact": _exact,
    "ulp": _ulp,
    "mul-inf": _mul_inf,
    "abs-error": _abs_error,
    "reduce-product": _reduce_product,
    "dot-product": _dot_product,
    "cast": _cast,
}


@pytest.mark.parametrize("case", sorted(FLUSHED))
def test_flushed_inputs_in_every_mode(case: str) -> None:
    vector, flushed = FLUSHED[case]()
    exact = vector.expected["y"]
    assert verdict(vector, exact).verdict == PASSED  # the reference passes plainly
    strict = verdict(vector, flushed, "supported")
    assert strict.verdict == FAILED, strict.detail  # what the plain check says
    got = verdict(vector, flushed)  # undeclared: either mode is accepted
    assert got.verdict == PASSED, got.detail
    assert got.reading in (FLUSH_INPUTS, FLUSH_OUTPUTS)
    assert "passed with denormals flushed" in got.detail
    assert FLUSH in got.denormals.values()
    assert verdict(vector, flushed, "flush").verdict == PASSED


def test_flushed_outputs_are_read_as_outputs() -> None:
    vector, flushed = _exact()
    got = verdict(vector, flushed)
    assert got.reading == FLUSH_OUTPUTS and got.outputs[0].reading == FLUSH_OUTPUTS
    assert got.denormals == {"fp16": FLUSH}


def test_flushed_zero_must_keep_the_sign() -> None:
    # RESHAPE keeps -2**-24 as is; a flush gives -0.0, never +0.0.
    vector = one("RESHAPE", [("x", [[-SUB16]], "fp16"), ("s", [1], "shape")], ((1,), "fp16"))
    assert verdict(vector, [-0.0]).verdict == PASSED
    assert verdict(vector, [0.0]).verdict == FAILED


def test_mul_flushed_to_nan_reads_the_inputs_flushed() -> None:
    vector, flushed = _mul_inf()
    got = verdict(vector, flushed)
    assert got.reading == FLUSH_INPUTS and got.denormals == {"fp32": FLUSH}
    assert verdict(vector, [-np.inf]).reading == PLAIN  # the unflushed result


def test_a_wrong_result_still_fails_every_reading() -> None:
    vector, _ = _ulp()
    got = verdict(vector, [2.0**-125])  # neither 1.0625 * 2**-126 nor 2**-126
    assert got.verdict == FAILED and got.reading == PLAIN


def test_declared_per_type() -> None:
    vector, flushed = _cast()  # the fp16 input is what was flushed
    assert verdict(vector, flushed, "fp32=supported").verdict == PASSED
    assert verdict(vector, flushed, "fp16=supported").verdict == FAILED


def test_bf16_flushing_is_accepted() -> None:
    # bf16 normal_min is 2**-126 as for fp32: ABS(2**-130) flushed is +0.
    vector = one("ABS", [("x", [SUB32], "bf16")], ((1,), "bf16"))
    assert vector.graph.main.tensors["y"].dtype is BF16
    assert verdict(vector, [0.0]).verdict == PASSED
    assert verdict(vector, [0.0], "bf16=supported").verdict == FAILED


def test_denormal_results_are_evidence_of_support() -> None:
    vector, _ = _exact()
    got = verdict(vector, [SUB16, SUB16])
    assert got.reading == PLAIN and got.denormals == {"fp16": SUPPORTED}
    vector, _ = _ulp()
    assert verdict(vector, vector.expected["y"]).denormals == {}  # no denormal result


# -- fp8: flushing rejected ---------------------------------------------------------------------


@pytest.mark.parametrize("fp8", ["fp8e4m3", "fp8e5m2"])
def test_fp8_flushing_is_rejected(fp8: str) -> None:
    t = dtype(fp8)
    sub = t.normal_min / 2  # the largest power of two below normal_min: a subnormal
    # Data movement: the subnormal must come back as it is.
    vector = one("RESHAPE", [("x", [[sub]], fp8), ("s", [1], "shape")], ((1,), fp8))
    assert verdict(vector, [0.0]).verdict == FAILED
    # CAST fp32 -> fp8 of a value that rounds to that subnormal: the ULP interval is not
    # widened below normal_min for fp8, so a flushed result fails too.
    cast = one("CAST", [("x", [sub], "fp32")], ((1,), fp8))
    assert verdict(cast, [sub]).verdict == PASSED
    assert verdict(cast, [0.0]).verdict == FAILED


def test_fp8_cannot_be_declared_flush() -> None:
    with pytest.raises(ValueError, match="fp8e4m3 denormals must be supported"):
        parse_modes("fp8e4m3=flush")
    assert set(parse_modes("flush")) == {FP16, BF16, FP32}
    with pytest.raises(ValueError, match="is not one of"):
        parse_modes("i8=flush")
    with pytest.raises(ValueError, match="expected TYPE=supported"):
        parse_modes("fp16=sometimes")


def test_a_backend_declaration_is_checked() -> None:
    class Declares:
        name = "declares"

        def __init__(self, denormals: dict[str, str]) -> None:
            self.denormals = denormals

    assert denormal_modes(Declares({"fp16": "flush", "fp32": "supported"})) == {
        FP16: FLUSH,
        FP32: SUPPORTED,
    }
    with pytest.raises(BackendError, match="backend declares: denormals"):
        denormal_modes(Declares({"fp8e5m2": "flush"}))
    assert denormal_modes(object()) == {}


# -- the sign of a zero ---------------------------------------------------------------------


def test_clamp_negative_zero_tie_accepts_either_zero() -> None:
    # CLAMP(-0.0, min_val -1, max_val 0.0): apply_max_s(-0, -1) = -0, then
    # apply_min_s(-0, +0) returns b = +0 (-0 < +0 is false).  IREE returns -0.0.
    vector = one("CLAMP", [("x", [-0.0], "fp32")], ((1,), "fp32"), min_val=-1.0, max_val=0.0)
    assert np.signbit(vector.expected["y"][0]) == np.False_
    assert verdict(vector, [0.0]).reading == PLAIN
    got = verdict(vector, [-0.0], "supported")
    assert got.verdict == PASSED and got.reading == ZERO_TIES, got.detail
    assert "not compared" in got.detail


@pytest.mark.parametrize(
    ("op", "a", "b", "expected"),
    [
        ("MAXIMUM", -0.0, 0.0, -0.0),  # a >= b: a
        ("MAXIMUM", 0.0, -0.0, 0.0),
        ("MINIMUM", -0.0, 0.0, 0.0),  # a < b is false: b
        ("MINIMUM", 0.0, -0.0, -0.0),
    ],
)
def test_maximum_minimum_zero_ties(op: str, a: float, b: float, expected: float) -> None:
    vector = one(op, [("a", [a], "fp16"), ("b", [b], "fp16")], ((1,), "fp16"))
    assert np.signbit(vector.expected["y"][0]) == np.signbit(expected)
    assert verdict(vector, [-expected], "supported").verdict == PASSED  # the other zero


def test_a_zero_of_one_sign_is_compared() -> None:
    # MAXIMUM(-0.0, -1.0): the only zero candidate is -0.0, so +0.0 is wrong.
    vector = one("MAXIMUM", [("a", [-0.0], "fp32"), ("b", [-1.0], "fp32")], ((1,), "fp32"))
    assert verdict(vector, [0.0]).verdict == FAILED


def test_reductions_and_pooling_zero_ties() -> None:
    # REDUCE_MAX over [-0, -2, +0]: the first zero (-0) is kept; +0 is a tie's other zero.
    vector = one("REDUCE_MAX", [("x", [-0.0, -2.0, 0.0], "fp32")], ((1,), "fp32"), axis=0)
    assert verdict(vector, [0.0]).verdict == PASSED
    lone = one("REDUCE_MIN", [("x", [0.0, 2.0], "fp32")], ((1,), "fp32"), axis=0)
    assert verdict(lone, [-0.0]).verdict == FAILED  # only +0 among the candidates
    # MAX_POOL2D 2x1 windows over [-0, +0, -1]: [-0, +0] ties, [+0, -1] is +0.
    x = np.array([-0.0, 0.0, -1.0]).reshape(1, 3, 1, 1)
    pool = one(
        "MAX_POOL2D",
        [("x", x, "fp32")],
        ((1, 2, 1, 1), "fp32"),
        kernel=(2, 1),
        stride=(1, 1),
        pad=(0, 0, 0, 0),
    )
    assert pool.expected["y"].reshape(-1).tolist() == [0.0, 0.0]
    assert verdict(pool, np.array([0.0, 0.0]).reshape(1, 2, 1, 1)).verdict == PASSED
    tied = np.array([0.0, -0.0]).reshape(1, 2, 1, 1)  # second window: +0 only
    assert verdict(pool, tied).verdict == FAILED
    first = np.array([-0.0, 0.0]).reshape(1, 2, 1, 1)
    assert verdict(pool, first).verdict == PASSED


@pytest.mark.parametrize(
    ("op", "x", "wrong"),
    [
        ("ABS", -0.0, -0.0),  # ABS(-0) = +0 (ABS.tosac, floating-point behavior)
        ("NEGATE", 0.0, 0.0),  # NEGATE(+0) = -0 (floating-point behavior table)
        ("NEGATE", -0.0, -0.0),  # NEGATE(-0) = +0
        ("IDENTITY", -0.0, 0.0),  # copied bit for bit
    ],
)
def test_zero_sign_defined_by_the_spec_is_compared(op: str, x: float, wrong: float) -> None:
    attrs = {"input1_zp": 0.0, "output_zp": 0.0} if op == "NEGATE" else {}
    vector = one(op, [("x", [x], "fp32")], ((1,), "fp32"), **attrs)
    assert np.signbit(vector.expected["y"][0]) != np.signbit(wrong)
    assert verdict(vector, vector.expected["y"]).verdict == PASSED
    assert verdict(vector, [wrong]).verdict == FAILED


def test_result_documents_round_trip_the_reading() -> None:
    vector, flushed = _exact()
    got = verdict(vector, flushed)
    back = VectorResult.from_json(got.to_json())
    assert back.reading == FLUSH_OUTPUTS and back.outputs[0].reading == FLUSH_OUTPUTS
    assert back.denormals == {"fp16": FLUSH}
    old = {k: v for k, v in got.to_json().items() if k not in ("reading", "denormals")}
    assert VectorResult.from_json(old).reading == PLAIN  # a result file of before
    assert FP32.name == "fp32"

"""Reference evaluator: CAST (every mode; float rounding, saturation, fp8 overflow)."""

from __future__ import annotations

from collections.abc import Sequence

import ml_dtypes
import numpy as np
import pytest

from conformance import dtypes
from conformance.builder import GraphBuilder, single_operator_graph
from conformance.graph import Graph
from conformance.spec import TypeSupport, load_spec
from reference import compliance
from reference.arguments import OUTPUTS_CLAUSE
from reference.engine import evaluate
from reference.expectations import expect
from reference.ops import type_conversion
from reference.outcome import Outcome

SPEC = load_spec()
INF, NAN = np.inf, np.nan


def cast_graph(shape: Sequence[int], in_dt: str, out_dt: str) -> Graph:
    return single_operator_graph(
        "CAST", [("x", tuple(shape), in_dt)], [("y", tuple(shape), out_dt)]
    )


def cast(x: object, in_dt: str, out_dt: str) -> Outcome:
    arr = np.asarray(x)
    if dtypes.dtype(in_dt).is_float:
        arr = arr.astype(np.float64).astype(dtypes.dtype(in_dt).storage)
    return evaluate(cast_graph(arr.shape, in_dt, out_dt), {"x": arr})


def out(outcome: Outcome) -> np.ndarray:
    assert outcome.kind == "valid", str(outcome)
    return outcome.outputs["y"]


def same(got: np.ndarray, want: Sequence[float]) -> bool:
    """Equal as IEEE values including the sign of zero, NaN matching NaN."""
    w = np.asarray(want, np.float64)
    return bool(
        np.array_equal(got, w, equal_nan=True) and (np.signbit(got) == np.signbit(w))[w == 0].all()
    )


def cast_twice(x: np.ndarray, in_dt: str, mid_dt: str, out_dt: str) -> np.ndarray:
    """CAST in -> mid -> out: the second CAST reads the first one's result as the
    engine hands it on, i.e. rounded to ``mid_dt``."""
    b = GraphBuilder()
    blk = b.block()
    blk.input("x", x.shape, in_dt)
    blk.tensor("m", x.shape, mid_dt)
    blk.tensor("y", x.shape, out_dt)
    blk.op("CAST", ["x"], ["m"])
    blk.op("CAST", ["m"], ["y"])
    blk.output("y")
    return out(evaluate(b.build(), {"x": x}))


# -- to floating point -------------------------------------------------------------------


def test_fp32_to_fp8e4m3_overflow_is_nan() -> None:
    # OCP non-saturating mode: fp8e4m3 has no infinity.  448 = 1.110b * 2**8 is the
    # largest value; the next step (480) is the NaN encoding, so the midpoint 464 is a
    # tie that rounds to even (448) and anything above it (465, 1e6, inf) is NaN.
    x = [448.0, 464.0, 465.0, 1e6, INF, -INF, -500.0, -1.5, NAN]
    want = [448.0, 464.0, NAN, NAN, NAN, NAN, NAN, -1.5, NAN]
    assert same(out(cast(x, "fp32", "fp8e4m3")), want)
    for src in ("fp16", "bf16"):
        assert same(out(cast([464.0, 480.0, -INF], src, "fp8e4m3")), [464.0, NAN, NAN])


def test_fp8e4m3_overflow_descriptor_needs_nan() -> None:
    x = np.array([420.0, 465.0, 0.3], np.float32)
    e = expect(cast_graph(x.shape, "fp32", "fp8e4m3"), {"x": x})
    f8 = ml_dtypes.float8_e4m3fn
    # 420 rounds to 416 (steps of 32 above 256); 465 must give NaN; 0.3 rounds to
    # 0.3125 (= 1.010b * 2**-2).
    assert e.check("y", np.array([416.0, NAN, 0.3125], f8)).passed
    assert not e.check("y", np.array([416.0, 448.0, 0.3125], f8)).passed  # saturated
    assert not e.check("y", np.array([NAN, NAN, 0.3125], f8)).passed  # 420 is in range
    # (The check function lets a result overflow once ref + 0.5 ulp passes 448, i.e.
    # for references above 432: there NaN, fp8e4m3's overflow, is accepted too.)
    # The tie 464 is half an ulp (16) from 448 and from 480, fp8e4m3's NaN encoding: the
    # 0.5 ulp rule accepts both, the compliance check reading NaN as the missing
    # infinity.  The engine itself rounds to even (448).
    tie = np.array([464.0], np.float32)
    e = expect(cast_graph(tie.shape, "fp32", "fp8e4m3"), {"x": tie})
    assert e.check("y", np.array([448.0], f8)).passed
    assert e.check("y", np.array([NAN], f8)).passed


def test_fp32_to_fp8e5m2_overflow_is_infinity() -> None:
    # fp8e5m2 has infinities: the reference keeps the exact value and only an
    # infinity is within the rule for it (the largest finite value is 57344).
    x = np.array([1e6, -70000.0, 57344.0], np.float32)
    e = expect(cast_graph(x.shape, "fp32", "fp8e5m2"), {"x": x})
    assert e.outcome.outputs["y"].tolist() == [1e6, -70000.0, 57344.0]
    f8 = ml_dtypes.float8_e5m2
    assert e.check("y", np.array([INF, -INF, 57344.0], f8)).passed
    assert not e.check("y", np.array([57344.0, -INF, 57344.0], f8)).passed
    # A later consumer reads the value rounded to fp8e5m2: the infinity.
    twice = cast_twice(x, "fp32", "fp8e5m2", "fp32")
    assert twice.tolist() == [INF, -INF, 57344.0]


def test_fp32_to_fp16_and_bf16_overflow_is_infinity() -> None:
    x = np.array([70000.0, -1e38, 3e38], np.float32)
    assert cast_twice(x, "fp32", "fp16", "fp32").tolist() == [INF, -INF, INF]
    # bf16 has fp32's exponent range: the values stay finite, rounded to 8 significant
    # bits (70000 = 136.7 * 2**9 -> 137 * 2**9 = 70144).
    bf = cast_twice(x, "fp32", "bf16", "fp32")
    assert np.isfinite(bf).all() and bf[0] == 70144.0


def test_bf16_and_fp16_rounding_ties_to_even() -> None:
    # bf16 keeps 7 fraction bits: between 1 and 1 + 2**-7 the midpoint 1 + 2**-8 goes to
    # the even neighbour 1.0; 1 + 3 * 2**-8 (between 1 + 2**-7 and 1 + 2**-6) to
    # 1 + 2**-6 = 1.015625.  fp16 keeps 10: 1 + 2**-11 -> 1.0, 1 + 3 * 2**-11 -> 1 + 2**-9.
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, -(1 + 2**-8)], np.float32)
    assert cast_twice(x, "fp32", "bf16", "fp32").tolist() == [1.0, 1.015625, -1.0]
    x = np.array([1 + 2**-11, 1 + 3 * 2**-11, 2049.0, 2051.0], np.float32)
    assert cast_twice(x, "fp32", "fp16", "fp32").tolist() == [1.0, 1 + 2**-9, 2048.0, 2052.0]
    # The reference for the CAST itself is the exact value: at a tie both neighbours are
    # within the 0.5 ulp the precision table allows; anything further is not.
    y = np.array([1 + 2**-8], np.float32)
    e = expect(cast_graph(y.shape, "fp32", "bf16"), {"x": y})
    assert e.outcome.outputs["y"].tolist() == [1 + 2**-8]
    bf = ml_dtypes.bfloat16
    assert e.check("y", np.array([1.0], bf)).passed
    assert e.check("y", np.array([1 + 2**-7], bf)).passed
    assert not e.check("y", np.array([1 + 2**-6], bf)).passed


def test_cast_to_float_descriptor_is_half_ulp_with_zero_sign() -> None:
    x = np.array([-1e-8, 1e-8, 0.1], np.float32)
    e = expect(cast_graph(x.shape, "fp32", "fp16"), {"x": x})
    desc = e.checks["y"].descriptor
    assert desc.mode is compliance.Mode.ULP
    assert desc.params.ulp == 0.5 and desc.params.zero_sign
    # Underflow: a zero of the correct sign.
    assert e.check("y", np.array([-0.0, 0.0, 0.1], np.float16)).passed
    assert not e.check("y", np.array([0.0, 0.0, 0.1], np.float16)).passed


def test_int_to_float_is_exact_value() -> None:
    # 2**24 + 1 is not an fp32 value; the reference is the integer itself, and the
    # engine hands on round-to-nearest-even (2**24, the even neighbour).
    x = np.array([2**24 + 1, -(2**31), 2**31 - 1, 0], np.int32)
    assert out(cast(x, "i32", "fp32")).tolist() == [2**24 + 1, -(2**31), 2**31 - 1, 0]
    assert cast_twice(x, "i32", "fp32", "i32").tolist()[0] == 2**24
    # fp16 cannot hold 70000: it overflows to infinity.
    assert cast_twice(np.array([70000, -70000], np.int32), "i32", "fp16", "fp32").tolist() == [
        INF,
        -INF,
    ]
    assert out(cast(np.array([-128, 127], np.int8), "i8", "bf16")).tolist() == [-128, 127]


def test_fp8_to_wider_float_is_exact() -> None:
    for src, f8 in (("fp8e4m3", ml_dtypes.float8_e4m3fn), ("fp8e5m2", ml_dtypes.float8_e5m2)):
        values = np.array([0.0, -0.0, 0.015625, -3.5, NAN], f8)
        for dst in ("fp16", "bf16", "fp32"):
            got = out(evaluate(cast_graph(values.shape, src, dst), {"x": values}))
            assert same(got, values.astype(np.float64).tolist())
    inf = np.array([-INF, INF], ml_dtypes.float8_e5m2)
    assert out(evaluate(cast_graph((2,), "fp8e5m2", "fp16"), {"x": inf})).tolist() == [-INF, INF]


# -- to integer ----------------------------------------------------------------------------


def test_float_to_int_rounds_ties_to_even() -> None:
    x = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.0, 3.7, -3.7]
    assert out(cast(x, "fp32", "i32")).tolist() == [0, 2, 2, 0, -2, -2, 0, 0, 4, -4]
    assert out(cast([0.5, 1.5, 2.5, -2.5], "fp16", "i8")).tolist() == [0, 2, 2, -2]
    assert out(cast([0.5, 1.5, 126.5], "bf16", "i16")).tolist() == [0, 2, 126]


def test_float_to_int_saturates() -> None:
    # 127.5 rounds (to even) to 128, then saturates to 127; -128.5 rounds to -128.
    x = [127.5, 128.0, -128.5, -129.0, 1e10, -1e10, INF, -INF]
    assert out(cast(x, "fp32", "i8")).tolist() == [127, 127, -128, -128, 127, -128, 127, -128]
    # fp32 2**31 (the nearest fp32 to INT32_MAX) saturates instead of wrapping.
    assert out(cast([2.0**31, -(2.0**31), 3e38], "fp32", "i32")).tolist() == [
        2**31 - 1,
        -(2**31),
        2**31 - 1,
    ]
    assert out(cast([65504.0, -65504.0], "fp16", "i16")).tolist() == [32767, -32768]


def test_float_nan_to_int_is_unpredictable() -> None:
    got = cast([1.0, NAN, 2.0], "fp16", "i32")
    assert got.kind == "unpredictable" and got.rule is not None
    assert got.rule.clause == type_conversion.NAN_TO_INT_CLAUSE
    assert "index [1]" in got.rule.detail


# -- bool and integer -> integer -------------------------------------------------------------


@pytest.mark.parametrize("dt", ["i8", "i16", "i32"])
def test_bool_casts(dt: str) -> None:
    assert out(cast(np.array([True, False]), "bool", dt)).tolist() == [1, 0]
    lo, hi = int(dtypes.dtype(dt).min), int(dtypes.dtype(dt).max)
    x = np.array([0, 1, -1, lo, hi], dtypes.dtype(dt).storage)
    assert out(cast(x, dt, "bool")).tolist() == [False, True, True, True, True]


def test_integer_widening_sign_extends_and_narrowing_truncates() -> None:
    assert out(cast(np.array([-128, 127], np.int8), "i8", "i32")).tolist() == [-128, 127]
    # Low 8 bits of 300 = 0x12C are 0x2C = 44; of -129 = ...0x7F: 127.
    assert out(cast(np.array([300, -129, 128], np.int16), "i16", "i8")).tolist() == [44, 127, -128]
    # 65537 = 0x10001 -> 1; 40000 = 0x9C40 -> 0x9C40 - 0x10000 = -25536.
    x = np.array([65537, 40000, -(2**31)], np.int32)
    assert out(cast(x, "i32", "i16")).tolist() == [1, -25536, 0]


def test_rank_zero_and_shape_mismatch() -> None:
    assert out(cast(np.float32(2.5), "fp32", "i8")).tolist() == 2
    graph = single_operator_graph("CAST", [("x", (2,), "i8")], [("y", (3,), "i16")])
    got = evaluate(graph, {"x": np.array([1, 2], np.int8)})
    assert got.kind == "error" and got.rule is not None and got.rule.clause == OUTPUTS_CLAUSE


# -- every mode ------------------------------------------------------------------------------

MODES = SPEC.operator("CAST").modes


def _sample(dt: dtypes.DType, rng: np.random.Generator) -> np.ndarray:
    if dt.kind == "bool":
        return rng.integers(0, 2, (2, 3)).astype(np.bool_)
    if dt.is_float:
        return rng.normal(0, 50, (2, 3)).astype(dt.storage)
    return rng.integers(int(dt.min), int(dt.max) + 1, (2, 3)).astype(dt.storage)


@pytest.mark.parametrize("mode", MODES, ids=[m.mode for m in MODES])
def test_every_mode_evaluates(mode: TypeSupport) -> None:
    in_dt, out_dt = mode.dtype("in_t"), mode.dtype("out_t")
    x = _sample(in_dt, np.random.default_rng(len(mode.mode)))
    e = expect(cast_graph(x.shape, in_dt.name, out_dt.name), {"x": x})
    assert e.outcome.kind == "valid", str(e.outcome)
    ref = e.outcome.outputs["y"]
    assert ref.shape == (2, 3)
    if out_dt.is_float:
        # The engine's rounding of the reference is a result the rule accepts.
        with np.errstate(over="ignore"):  # i32 -> fp16 overflows to infinity
            rounded = ref.astype(out_dt.storage)
        assert e.check("y", rounded).passed
    else:
        assert e.checks["y"].descriptor.mode is compliance.Mode.EXACT
        assert e.check("y", ref.astype(out_dt.storage)).passed


def test_mode_count() -> None:
    assert len(MODES) == 46

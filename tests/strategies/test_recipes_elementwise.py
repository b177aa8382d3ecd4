"""Properties of the element-wise recipes beyond validity: across a handful of draws,
the values that matter for each operator group do turn up."""

from functools import cache

import ml_dtypes
import numpy as np
import pytest

from conformance import dtypes
from conformance.spec import load_spec
from reference.engine import evaluate
from strategies.case import Case
from strategies.draw import draw_examples
from strategies.valid import valid_cases

SPEC = load_spec()
LEVEL = SPEC.level("8K")
DRAWS = 30


@cache
def drawn(op: str, mode: str, seed: int = 3) -> list[Case]:
    return draw_examples(valid_cases(SPEC, op, mode, LEVEL), DRAWS, seed)


def inputs_of(op: str, mode: str, seeds: tuple[int, ...] = (3,)) -> list[np.ndarray]:
    cases = [c for s in seeds for c in drawn(op, mode, s)]
    return [np.asarray(v) for c in cases for v in c.inputs.values()]


def output_of(case: Case) -> np.ndarray:
    outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
    assert outcome.kind == "valid", str(outcome)
    return np.asarray(outcome.outputs["output"])


@pytest.mark.parametrize(
    ("op", "mode"),
    [("EXP", "fp16"), ("MAXIMUM", "bf16"), ("SELECT", "fp32"), ("POW", "fp32"), ("SIN", "fp16")],
)
def test_float_special_values_appear(op: str, mode: str) -> None:
    # Hypothesis draws runs of near-identical examples: several seeds, not one long run.
    values = [v.astype(np.float64) for v in inputs_of(op, mode, seeds=(3, 4, 5))]
    smallest_normal = float(dtypes.dtype(mode).normal_min)  # type: ignore[arg-type]
    assert any(np.isnan(v).any() for v in values)
    assert any(np.isposinf(v).any() for v in values)
    assert any(np.isneginf(v).any() for v in values)
    assert any(((v == 0) & np.signbit(v)).any() for v in values)
    assert any(((v != 0) & (np.abs(v) < smallest_normal)).any() for v in values)


@pytest.mark.parametrize("op", ["BITWISE_AND", "BITWISE_XOR", "BITWISE_NOT", "CLZ"])
def test_full_range_integers_appear(op: str) -> None:
    mode = "signed 32"
    values = inputs_of(op, mode)
    assert any((v == np.iinfo(np.int32).min).any() for v in values)
    assert any((v == np.iinfo(np.int32).max).any() for v in values)
    # Not only the extremes: large magnitudes in the bulk as well.
    assert sum(int((np.abs(v.astype(np.int64)) > 2**24).sum()) for v in values) > 100


def test_mul_i32_shift_is_a_constant_scalar_and_results_reach_the_limits() -> None:
    shifts, near_limit = set(), 0
    for case in drawn("MUL", "signed 32"):
        t = case.graph.main.tensors["shift"]
        assert t.shape == () and t.data is not None and t.dtype is dtypes.I8
        shift = int(t.data)
        shifts.add(shift)
        out = output_of(case).astype(np.int64)
        if shift and out.size and np.abs(out).max() > 2**30:
            near_limit += 1
    assert 0 in shifts and any(0 < s < 32 for s in shifts) and any(s >= 32 for s in shifts)
    assert near_limit > 0


@pytest.mark.parametrize("mode", ["signed 8", "signed 16"])
def test_mul_narrow_types_never_shift(mode: str) -> None:
    assert all(int(c.graph.main.tensors["shift"].data) == 0 for c in drawn("MUL", mode))  # type: ignore[arg-type]


def test_intdiv_keeps_int_min_and_minus_one() -> None:
    cases = drawn("INTDIV", "signed 32")
    assert any((c.inputs["input1"] == np.iinfo(np.int32).min).any() for c in cases)
    assert any((c.inputs["input2"] == -1).any() for c in cases)


def test_shift_amounts_cover_the_type() -> None:
    cases = drawn("ARITHMETIC_RIGHT_SHIFT", "signed 8")
    assert {c.graph.main.operators[0].attributes["round"] for c in cases} == {True, False}
    amounts = np.concatenate([c.inputs["input2"].reshape(-1) for c in cases])
    assert amounts.min() == 0 and amounts.max() == 7


def test_table_i16_slopes_reach_the_limit() -> None:
    steepest = 0
    for case in drawn("TABLE", "signed 16"):
        tab = case.graph.main.tensors["table"]
        assert tab.shape == (513,) and tab.data is not None
        slopes = np.diff(tab.data.astype(np.int64))
        assert slopes.min() >= -(2**15) and slopes.max() < 2**15
        steepest = max(steepest, int(np.abs(slopes).max()))
    assert steepest >= 2**15 - 1


@pytest.mark.parametrize("mode", ["signed 8", "fp16", "bf16"])
def test_clamp_bounds_are_ordered_values_of_the_type(mode: str) -> None:
    storage = {"signed 8": np.int8, "fp16": np.float16, "bf16": ml_dtypes.bfloat16}[mode]
    attrs = [c.graph.main.operators[0].attributes for c in drawn("CLAMP", mode)]
    pairs = [(a["min_val"], a["max_val"]) for a in attrs]
    for lo, hi in pairs:
        assert lo <= hi
        for v in (lo, hi):
            assert float(np.asarray(v).astype(storage)) == v
    assert any(lo < hi for lo, hi in pairs)


def test_negate_zero_points_only_for_i8() -> None:
    zps = [c.graph.main.operators[0].attributes for c in drawn("NEGATE", "signed 8")]
    assert any(a["input1_zp"] != 0 for a in zps) and any(a["output_zp"] != 0 for a in zps)
    for mode in ("signed 16", "fp32"):
        for c in drawn("NEGATE", mode):
            attrs = c.graph.main.operators[0].attributes
            assert attrs["input1_zp"] == 0 and attrs["output_zp"] == 0


@pytest.mark.parametrize("mode", ["signed 32", "fp32"])
def test_comparisons_see_ties(mode: str) -> None:
    assert any(output_of(c).any() for c in drawn("EQUAL", mode))


def test_inputs_broadcast() -> None:
    for op, mode in (("ADD", "fp32"), ("SELECT", "signed 8")):
        shapes = [
            (c.graph.main.tensors[name].shape, c.graph.main.tensors["output"].shape)
            for c in drawn(op, mode)
            for name in c.inputs
        ]
        assert any(s != out for s, out in shapes)

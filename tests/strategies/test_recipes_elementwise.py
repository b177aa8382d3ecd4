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
from strategies.ties import case_tie_facts, tie_kinds
from strategies.valid import valid_cases
from strategies.values import special_values

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


# -- targets: ties, attributes, edges; boundaries in ordinary draws -------------------


@cache
def targeted(op: str, mode: str, target: str, seed: int = 3, count: int = 8) -> list[Case]:
    """Cases of a targeted job, each checked valid by the reference (the generator
    drops the others, so a target that made invalid ones would make no vectors)."""
    cases = draw_examples(valid_cases(SPEC, op, mode, LEVEL, target=target), count, seed)
    assert cases
    for case in cases:
        outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
        assert outcome.kind == "valid", f"{case.describe()} [{target}]: {outcome}"
    return cases


def attributes_of(case: Case) -> dict:
    return case.graph.main.operators[0].attributes


TIE_PAIRS = [
    (op, mode)
    for op in ("ADD", "SUB", "MUL", "ARITHMETIC_RIGHT_SHIFT", "INTDIV")
    for mode in (m.mode for m in SPEC.operator(op).modes)
    if tie_kinds(op, SPEC.operator(op).mode(mode))
]


@pytest.mark.parametrize(("op", "mode"), TIE_PAIRS)
def test_ties_target_lands_on_ties_and_near_ties(op: str, mode: str) -> None:
    found = [case_tie_facts(c, SPEC) for c in targeted(op, mode, "ties")]
    assert all(found), found  # every vector has some
    assert set().union(*found) == {"tie", "near-tie"}
    assert sum("tie" in f for f in found) >= len(found) // 2


def test_ties_target_arithmetic_right_shift_rounds() -> None:
    cases = targeted("ARITHMETIC_RIGHT_SHIFT", "signed 16", "ties")
    assert all(attributes_of(c)["round"] is True for c in cases)
    assert all((c.inputs["input2"] >= 1).all() for c in cases)


def test_ties_target_table_fractions_at_the_half() -> None:
    for case in targeted("TABLE", "signed 16", "ties"):
        fraction = case.inputs["input"].astype(np.int64) & 0x7F
        assert np.isin(fraction, [63, 64, 65]).all() and (fraction == 64).any()
        slopes = np.diff(case.graph.main.tensors["table"].data.astype(np.int64))  # type: ignore[union-attr]
        assert (slopes != 0).any()


@pytest.mark.parametrize("value", [True, False])
def test_round_attribute_target(value: bool) -> None:
    target = f"attr:round={str(value).lower()}"
    for mode in ("signed 8", "signed 32"):
        cases = targeted("ARITHMETIC_RIGHT_SHIFT", mode, target)
        assert all(attributes_of(c)["round"] is value for c in cases)


@pytest.mark.parametrize(
    ("klass", "check"),
    [
        ("zero", lambda v: v == 0),
        ("nonzero", lambda v: v != 0),
        ("min", lambda v: v == -128),
        ("max", lambda v: v == 127),
    ],
)
def test_negate_zero_point_targets(klass: str, check) -> None:
    for name in ("input1_zp", "output_zp"):
        cases = targeted("NEGATE", "signed 8", f"attr:{name}={klass}")
        assert all(check(attributes_of(c)[name]) for c in cases)
    # Only i8 has zero points: elsewhere the target cannot be met, and cases stay valid.
    cases = targeted("NEGATE", "signed 16", "attr:input1_zp=nonzero")
    assert all(attributes_of(c)["input1_zp"] == 0 for c in cases)


def test_add_i32_reaches_the_type_ends() -> None:
    """min and max in the operands, the other operand keeping every sum in range (the
    reference checks apply_add_s's REQUIRE on each element)."""
    lo, hi = np.iinfo(np.int32).min, np.iinfo(np.int32).max
    for op in ("ADD", "SUB"):
        cases = [c for s in (3, 4) for c in drawn(op, "signed 32", s)]
        outs = [output_of(c) for c in cases]  # valid, every one
        values = [v for c in cases for v in c.inputs.values()]
        assert any((v == lo).any() for v in values) and any((v == hi).any() for v in values)
        assert any((o == lo).any() or (o == hi).any() for o in outs)


def test_mul_i32_shift_reaches_its_ends() -> None:
    shifts = {
        int(c.graph.main.tensors["shift"].data)
        for s in (3, 4, 5)
        for c in drawn("MUL", "signed 32", s)
    }  # type: ignore[arg-type]
    assert {0, 63} <= shifts and any(1 <= s <= 31 for s in shifts)
    assert any(32 <= s <= 62 for s in shifts)


def test_shift_amounts_reach_both_ends_of_the_require() -> None:
    for op, mode, top in (
        ("ARITHMETIC_RIGHT_SHIFT", "signed 16", 15),
        ("LOGICAL_LEFT_SHIFT", "signed 8", 31),
    ):
        amounts = np.concatenate([c.inputs["input2"].reshape(-1) for c in drawn(op, mode)])
        assert {0, 1, top - 1, top} <= set(amounts.tolist())


@pytest.mark.parametrize("mode", ["fp16", "signed 8", "bf16"])
def test_select_condition_goes_both_ways(mode: str) -> None:
    mixed = 0
    for case in drawn("SELECT", mode):
        out = case.graph.main.tensors["output"].shape
        cond = np.broadcast_to(case.inputs["input1"], out)
        mixed += bool(cond.any() and not cond.all())
    assert mixed >= DRAWS * 2 // 3


@pytest.mark.parametrize(("op", "mode"), [("RSQRT", "fp32"), ("SELECT", "fp16"), ("ADD", "bf16")])
def test_edge_target_has_every_special_value(op: str, mode: str) -> None:
    """rc.values pairs the special values across the inputs (input k cycles through
    them every P**k elements): an input holds them all from P**(k+1) elements on."""
    pool = len(special_values(dtypes.dtype(mode)))
    smallest_normal = float(dtypes.dtype(mode).normal_min)  # type: ignore[arg-type]
    names = [a.name for a in SPEC.operator(op).inputs]
    checked = 0
    for case in targeted(op, mode, "edge", count=12):
        for name, values in case.inputs.items():
            v = values.astype(np.float64).reshape(-1)
            if values.dtype.kind == "b" or v.size < pool ** (names.index(name) + 1):
                continue
            checked += 1
            assert np.isnan(v).any() and np.isposinf(v).any() and np.isneginf(v).any()
            assert ((v == 0) & np.signbit(v)).any()
            assert ((v != 0) & (np.abs(v) < smallest_normal)).any()
            assert (np.abs(v) == float(dtypes.dtype(mode).normal_max)).any()  # type: ignore[arg-type]
    assert checked


def test_rsqrt_ordinary_draws_see_nan() -> None:
    values = [v.astype(np.float64) for v in inputs_of("RSQRT", "fp32", seeds=(3, 4, 5))]
    assert sum(bool(np.isnan(v).any()) for v in values) >= 10

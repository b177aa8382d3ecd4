"""The element-wise, activation and reduction recipes and breakers on TOSA 1.0: both
nan_mode values drawn (and aimed at), NaNs placed where the two modes differ, the
[1] shift and zero-point inputs, the per-type shift ranges, POW's domain, and the
must-fail cases of 1.0's new ERROR_IFs (CLAMP's NaN bound, NEGATE's zero points as
1.0 spells them)."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from conformance.spec import load_revision
from reference.engine import evaluate
from reference.ops.activation import CLAMP_NAN_BOUND_CLAUSE
from strategies.case import Case
from strategies.draw import draw_examples
from strategies.invalid import breakers_for, invalid_cases
from strategies.recipes import RecipeContext
from strategies.shapes import Budget
from strategies.valid import valid_cases

SPEC = load_revision("1.0")
DRAFT = load_revision("2024-04-draft")
LEVEL = SPEC.level("8K")
NAN_OPS = ("MAXIMUM", "MINIMUM", "CLAMP", "REDUCE_MAX", "REDUCE_MIN")


@cache
def drawn(op: str, mode: str, target: str | None = None, seed: int = 3) -> list[Case]:
    cases = draw_examples(valid_cases(SPEC, op, mode, LEVEL, target=target), 16, seed)
    assert cases
    return cases


def op_of(case: Case) -> object:
    return case.graph.main.operators[0]


def with_mode(case: Case, mode: str) -> Case:
    """The same graph with nan_mode set to ``mode``."""
    op = op_of(case)
    op.attributes["nan_mode"] = mode  # type: ignore[attr-defined]
    return case


def outputs(case: Case, mode: str) -> np.ndarray:
    outcome = evaluate(with_mode(case, mode).graph, case.inputs, spec=SPEC, level=LEVEL)
    assert outcome.kind == "valid", str(outcome)
    return np.asarray(next(iter(outcome.outputs.values())), np.float64)


@pytest.mark.parametrize("op", NAN_OPS)
def test_both_nan_modes_are_drawn_and_valid(op: str) -> None:
    seen = set()
    for case in drawn(op, "fp32"):
        seen.add(op_of(case).attributes["nan_mode"])  # type: ignore[attr-defined]
        outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
        assert outcome.kind == "valid", f"{case.describe()}: {outcome}"
    assert seen == {"PROPAGATE", "IGNORE"}


@pytest.mark.parametrize("op", NAN_OPS)
@pytest.mark.parametrize("value", ["PROPAGATE", "IGNORE"])
def test_nan_mode_targets(op: str, value: str) -> None:
    for mode in ("fp16", "signed 16" if op != "MAXIMUM" and op != "MINIMUM" else "signed 32"):
        for case in drawn(op, mode, f"attr:nan_mode={value}"):
            assert op_of(case).attributes["nan_mode"] == value  # type: ignore[attr-defined]


@pytest.mark.parametrize("op", NAN_OPS)
def test_nan_placement_makes_the_modes_differ(op: str) -> None:
    """In an IGNORE-aimed job every float case has a NaN placed; in some of them the
    two modes give different outputs, and in some (MAXIMUM, MINIMUM, REDUCE_*) IGNORE
    still gives NaN (all operands NaN there)."""
    differ = all_nan = 0
    for case in drawn(op, "bf16", "attr:nan_mode=IGNORE"):
        ignore, propagate = outputs(case, "IGNORE"), outputs(case, "PROPAGATE")
        differ += not np.array_equal(ignore, propagate, equal_nan=True)
        all_nan += bool(np.isnan(ignore).any())
    assert differ >= 4
    if op != "CLAMP":  # CLAMP ignoring NaN always gives min_val
        assert all_nan >= 1


def test_mul_shift_is_a_constant_one_element_input() -> None:
    for case in drawn("MUL", "signed 32"):
        shift = case.graph.main.tensors[op_of(case).inputs[2]]  # type: ignore[attr-defined]
        assert shift.shape == (1,) and shift.data is not None and "shift" not in case.inputs


def test_negate_zero_points_are_constant_inputs() -> None:
    for mode in ("signed 8", "fp16"):
        for case in drawn("NEGATE", mode):
            op = op_of(case)
            assert op.attributes == {}  # type: ignore[attr-defined]
            for name in op.inputs[1:]:  # type: ignore[attr-defined]
                t = case.graph.main.tensors[name]
                assert t.shape == (1,) and t.data is not None
                if mode == "fp16":
                    assert float(np.asarray(t.data).reshape(-1)[0]) == 0.0


@pytest.mark.parametrize("op", ["LOGICAL_LEFT_SHIFT", "LOGICAL_RIGHT_SHIFT"])
def test_logical_shifts_stay_in_the_type_and_reach_its_top(op: str) -> None:
    shifts = np.concatenate([c.inputs["input2"].ravel() for c in drawn(op, "signed 8")])
    assert shifts.min() >= 0 and shifts.max() == 7


def test_pow_operands_keep_the_domain() -> None:
    cases = drawn("POW", "fp32") + drawn("POW", "fp32", "edge")
    for case in cases:
        x, y = (np.asarray(case.inputs[n], np.float64) for n in ("input1", "input2"))
        assert np.isfinite(x).all() and np.isfinite(y).all() and (x >= 0).all()
    # Zero bases turn up (against positive exponents, the x == 0 rule's case).
    assert any((np.asarray(c.inputs["input1"]) == 0).any() for c in cases)


@pytest.mark.parametrize("op", ["TABLE", "COS", "SIN"])
def test_input1_is_the_name_read(op: str) -> None:
    mode = "signed 8" if op == "TABLE" else "fp32"
    assert all("input1" in c.inputs for c in drawn(op, mode))


# -- breakers ------------------------------------------------------------------------------


def clauses(op: str, mode: str, spec=SPEC) -> set[str]:
    op_spec = spec.operator(op)
    rc = RecipeContext(spec, op_spec, op_spec.mode(mode), spec.level("8K"), Budget())
    return {b.clause for b in breakers_for(op, rc)}


def test_clamp_nan_bound_breaker_only_in_1_0_float_modes() -> None:
    assert CLAMP_NAN_BOUND_CLAUSE in clauses("CLAMP", "fp16")
    assert CLAMP_NAN_BOUND_CLAUSE not in clauses("CLAMP", "signed 8")
    assert CLAMP_NAN_BOUND_CLAUSE not in clauses("CLAMP", "fp16", DRAFT)


def test_negate_zero_point_breakers_spell_the_revisions_clause() -> None:
    new = {f"!is_same<in_out_t,i8_t>() && {zp} != 0" for zp in ("input1_zp", "output_zp")}
    old = {f"in_out_t != i8_t && {zp} != 0" for zp in ("input1_zp", "output_zp")}
    assert new <= clauses("NEGATE", "fp32") and not old & clauses("NEGATE", "fp32")
    assert old <= clauses("NEGATE", "fp32", DRAFT) and not new & clauses("NEGATE", "fp32", DRAFT)
    assert not (new | old) & clauses("NEGATE", "signed 8")


@pytest.mark.parametrize(
    ("op", "mode", "clause"),
    [
        ("CLAMP", "bf16", CLAMP_NAN_BOUND_CLAUSE),
        ("CLAMP", "fp32", CLAMP_NAN_BOUND_CLAUSE),
        ("NEGATE", "signed 16", "!is_same<in_out_t,i8_t>() && input1_zp != 0"),
        ("NEGATE", "fp16", "!is_same<in_out_t,i8_t>() && output_zp != 0"),
    ],
)
def test_breakers_fail_for_their_clause(op: str, mode: str, clause: str) -> None:
    strategy = invalid_cases(SPEC, op, mode, LEVEL, clause=clause)
    for case in draw_examples(strategy, 6, 1):
        outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
        assert outcome.kind == "error" and outcome.rule is not None, str(outcome)
        assert outcome.rule.clause == clause


# -- every pair of these groups, and chains ----------------------------------------------

GROUPS = (
    "elementwise-binary",
    "elementwise-unary",
    "elementwise-ternary",
    "activation",
    "comparison",
    "reduction",
)
PAIRS = [
    pytest.param(m.operator, m.mode, id=f"{m.operator}-{m.mode}")
    for op in SPEC.operators.values()
    if op.group in GROUPS
    for m in op.modes
]


@pytest.mark.parametrize(("op", "mode"), PAIRS)
def test_1_0_valid_and_invalid_cases(op: str, mode: str) -> None:
    for case in draw_examples(valid_cases(SPEC, op, mode, LEVEL), 3, 1):
        outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
        assert outcome.kind == "valid", f"{case.describe()}: {outcome}"
    rc = RecipeContext(SPEC, SPEC.operator(op), SPEC.operator(op).mode(mode), LEVEL, Budget())
    for entry in breakers_for(op, rc):
        cases = draw_examples(invalid_cases(SPEC, op, mode, LEVEL, clause=entry.clause), 2, 2)
        assert cases or entry.optional, f"{op} [{mode}]: {entry.clause!r} never applies"
        for case in cases:
            outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
            assert outcome.kind == "error" and outcome.rule is not None, str(outcome)
            assert outcome.rule.clause == case.rule_broken, f"{case.describe()}: {outcome}"


@pytest.mark.parametrize("group", ["elementwise-unary", "elementwise-binary", "activation"])
def test_1_0_chains_take_zero_points_shifts_and_nan_mode(group: str) -> None:
    """Chains append NEGATE (zero points as [1] inputs), MUL ([1] shift), CLAMP and the
    reductions (nan_mode) as 1.0 declares them."""
    from conformance.spec import spec_in_use
    from strategies.chains import chain_cases

    pairs = [(m.operator, m.mode) for m in SPEC.modes()]
    with spec_in_use(SPEC):
        cases = draw_examples(chain_cases(SPEC, LEVEL, Budget(), pairs, group), 8, 0)
    assert cases
    for case in cases:
        outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
        assert outcome.kind == "valid", f"{case.operators}: {outcome}"

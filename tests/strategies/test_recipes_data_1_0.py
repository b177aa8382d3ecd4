"""Recipes and breakers under TOSA 1.0 for the data-layout, scatter/gather,
type-conversion (RESCALE), variable and control-flow operators: valid draws evaluate
valid, and every breaker of a mode makes an error naming the 1.0 clause it breaks."""

from __future__ import annotations

import numpy as np
import pytest

from conformance import dtypes
from conformance.spec import load_revision, spec_in_use
from reference.engine import evaluate
from reference.ops import type_conversion as tc
from strategies.case import Case
from strategies.claimed_values import claimed_enum_values, constrain_to_claim
from strategies.draw import draw_examples
from strategies.invalid import breakers_for, invalid_cases
from strategies.recipes import RecipeContext
from strategies.shapes import Budget
from strategies.valid import valid_cases

SPEC = load_revision("1.0")
LEVEL = SPEC.level("8K")


def _valid(op: str, mode: str, count: int = 6, budget: Budget | None = None) -> list[Case]:
    with spec_in_use(SPEC):
        cases = draw_examples(valid_cases(SPEC, op, mode, LEVEL, budget), count, 5)
        assert cases
        for case in cases:
            outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
            assert outcome.kind == "valid", f"{case.describe()}: {outcome}"
    return cases


def _attrs(case: Case) -> dict[str, object]:
    return case.graph.main.operators[0].attributes


PAIRS = [
    ("REVERSE", "signed 8"),
    ("GATHER", "fp16"),
    ("SCATTER", "signed 32"),
    ("RESHAPE", "signed 16"),
    ("PAD", "fp32"),
    ("RESCALE", "8-bit to 16-bit"),
    ("RESCALE", "16-bit to 8-bit"),
    ("RESCALE", "48-bit to 32-bit"),
    ("VARIABLE", "signed 8"),
    ("VARIABLE_WRITE", "fp16"),
    ("VARIABLE_READ", "fp32"),
    ("COND_IF", "All"),
    ("WHILE_LOOP", "All"),
]


@pytest.mark.parametrize(("op", "mode"), PAIRS)
def test_recipes_draw_valid_1_0_cases(op: str, mode: str) -> None:
    _valid(op, mode)


ALL_ROUNDING = ("SINGLE_ROUND", "INEXACT_ROUND", "DOUBLE_ROUND")
EVERY_EXTENSION = {"PRO-INT", "EXT-INT16", "EXT-DOUBLEROUND", "EXT-INEXACTROUND"}


def test_rescale_draws_rounding_modes_and_typed_zero_points() -> None:
    op = SPEC.operator("RESCALE")
    budget = constrain_to_claim(Budget(), SPEC, op, EVERY_EXTENSION)
    modes: set[object] = set()
    for case in _valid("RESCALE", "8-bit to 8-bit", count=30, budget=budget):
        attrs = _attrs(case)
        assert "double_round" not in attrs
        modes.add(attrs["rounding_mode"])
        # the zero points are [1] inputs of the input's / output's type
        zp = case.graph.main.tensors[case.graph.main.operators[0].inputs[3]]
        assert zp.shape == (1,) and zp.dtype is dtypes.I8
    assert modes == set(ALL_ROUNDING)


def test_rounding_modes_keep_to_the_claim() -> None:
    op = SPEC.operator("RESCALE")
    assert claimed_enum_values(SPEC, op, {"PRO-INT"}) == {"rounding_mode": ("SINGLE_ROUND",)}
    assert claimed_enum_values(SPEC, op, EVERY_EXTENSION) == {"rounding_mode": ALL_ROUNDING}
    budget = constrain_to_claim(Budget(), SPEC, op, {"PRO-INT", "EXT-DOUBLEROUND"})
    seen = {_attrs(c)["rounding_mode"] for c in _valid("RESCALE", "8-bit to 8-bit", 16, budget)}
    assert "INEXACT_ROUND" not in seen
    # A draw that knows no claim (chains, fuzzing) keeps to SINGLE_ROUND.
    assert {_attrs(c)["rounding_mode"] for c in _valid("RESCALE", "16-bit to 8-bit")} == {
        "SINGLE_ROUND"
    }
    # The draft's enumerations name no extension: nothing is restricted.
    draft = load_revision("2024-04-draft")
    assert claimed_enum_values(draft, draft.operator("RESCALE"), set()) == {}


BREAK_PAIRS = [("RESCALE", m.mode) for m in SPEC.operator("RESCALE").modes] + [
    ("PAD", "signed 8"),
    ("REVERSE", "fp32"),
    ("COND_IF", "All"),
    ("VARIABLE", "fp16"),
]


@pytest.mark.parametrize(("op", "mode"), BREAK_PAIRS)
def test_breakers_break_the_1_0_rule_they_name(op: str, mode: str) -> None:
    op_spec = SPEC.operator(op)
    rc = RecipeContext(SPEC, op_spec, op_spec.mode(mode), LEVEL, Budget())
    clauses = sorted({b.clause for b in breakers_for(op, rc)})
    assert clauses
    with spec_in_use(SPEC):
        for clause in clauses:
            drawn = draw_examples(invalid_cases(SPEC, op, mode, LEVEL, clause=clause), 2, 7)
            assert drawn, f"{op} [{mode}]: no case breaks {clause}"
            for case in drawn:
                outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
                assert outcome.kind == "error", f"{case.describe()}: {outcome}"
                assert outcome.rule is not None and outcome.rule.clause == clause


def test_rescale_1_0_breakers_cover_the_new_error_ifs() -> None:
    op_spec = SPEC.operator("RESCALE")
    found: set[str] = set()
    for m in op_spec.modes:
        rc = RecipeContext(SPEC, op_spec, m, LEVEL, Budget())
        found |= {b.clause for b in breakers_for("RESCALE", rc)}
    new = {
        tc.IN_I48_IN_UNSIGNED_CLAUSE,
        tc.IN_I32_IN_UNSIGNED_CLAUSE,
        tc.OUT_I32_OUT_UNSIGNED_CLAUSE,
        tc.DOUBLE_ROUND_CLAUSE_1_0,
        tc.IN_ZP_CLAUSE_1_0,
        tc.OUT_ZP16_CLAUSE_1_0,
    }
    assert new <= found
    # the draft's make_unsigned refusal and its double_round spelling are not 1.0's
    assert tc.MAKE_UNSIGNED_CLAUSE not in found and tc.DOUBLE_ROUND_CLAUSE not in found


def test_uint16_zero_point_is_stored_as_its_bits() -> None:
    # A uint16 zero point 32768 must reach the [1] i16 tensor as -32768 (its bits),
    # not clipped to 32767.
    seen = set()
    for case in _valid("RESCALE", "16-bit to 16-bit", count=25):
        attrs = _attrs(case)
        op = case.graph.main.operators[0]
        for k, side in ((3, "input_unsigned"), (4, "output_unsigned")):
            data = case.graph.main.tensors[op.inputs[k]].data
            assert data is not None
            if attrs[side]:
                seen.add(int(np.asarray(data).reshape(-1)[0]))
    assert seen <= {0, -32768}

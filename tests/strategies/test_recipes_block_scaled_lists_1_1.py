"""Recipes and breakers of TOSA 1.1's RESHAPE_BLOCK_SCALED and ROW_GATHER_BLOCK_SCALED:
every one of their 47 modes draws valid cases that pass their compliance check, and
breakers that trip the clause they name; edge cases hold every encoding of the value
type and the scale extremes, the NaN scale among them; ROW_GATHER_BLOCK_SCALED draws
windows of several rows for several indices; RESHAPE_BLOCK_SCALED's level cases sit at
and just above MAX_RANK; and the two mutants are caught on drawn cases."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from case_helpers import drawn_cases
from mutant_cases import Case as MutantCase
from mutant_cases import failures, run

from conformance import dtypes
from conformance.backends.mutants import MutantBackend
from conformance.backends.reference import ReferenceBackend
from conformance.spec import load_revision, spec_in_use
from reference import mx
from reference.engine import evaluate, to_storage
from reference.expectations import expect
from reference.ops import block_scaled_lists as bsl
from strategies.case import Case
from strategies.draw import draw_examples
from strategies.invalid import breakers_for, invalid_cases
from strategies.levels import is_level_case, level_cases, level_limits_for
from strategies.recipes import RecipeContext
from strategies.recipes.block_scaled import SCALE_EXTREMES
from strategies.shapes import Budget
from strategies.valid import valid_cases

V11 = load_revision("1.1-draft")
LEVEL = V11.level("8K")
OPERATORS = ("RESHAPE_BLOCK_SCALED", "ROW_GATHER_BLOCK_SCALED")
PAIRS = [
    pytest.param(op, m.mode, id=f"{op}-{m.mode}")
    for op in OPERATORS
    for m in V11.operator(op).modes
]
SCALED = [
    m.mode for m in V11.operator("RESHAPE_BLOCK_SCALED").modes if m.bindings["scale_t"] != "-"
]


def drawn(op: str, mode: str, count: int = 12, target: str | None = None) -> list[Case]:
    return drawn_cases("1.1-draft", op, mode, count, target)


def test_the_47_modes() -> None:
    # RESHAPE_BLOCK_SCALED: 10 modes of values alone, 6 with scales; ROW_GATHER_BLOCK_SCALED:
    # 11 + 8 of values alone with an i32 or i64 index (signed 64 only with i64), 6 x 2 with
    # scales
    assert len(PAIRS) == 47
    assert len(SCALED) == 6


def _members(case: Case) -> tuple[list[str], list[str]]:
    """The list members in and out, by tensor name."""
    op = case.graph.main.operators[0]
    spec = V11.operator(op.op)
    fixed = len(spec.inputs) - 1
    return op.inputs[: len(op.inputs) - fixed], list(op.outputs)


@pytest.mark.parametrize(("op", "mode"), PAIRS)
def test_valid_cases_pass_and_breakers_trip(op: str, mode: str) -> None:
    with spec_in_use(V11):
        for case in draw_examples(valid_cases(V11, op, mode, LEVEL), 2, 1):
            exp = expect(case.graph, case.inputs, spec=V11, level=LEVEL, data_set=case.data_set)
            assert exp.outcome.kind == "valid", f"{case.describe()}: {exp.outcome}"
            main = case.graph.main
            members_in, members_out = _members(case)
            scaled = V11.operator(op).mode(mode).bindings["scale_t"] != "-"
            assert len(members_in) == len(members_out) == (2 if scaled else 1)
            for name in main.outputs:
                stored = to_storage(np.asarray(exp.outcome.outputs[name]), main.tensors[name].dtype)
                verdict = exp.check(name, stored)
                assert verdict.passed, f"{case.describe()}: {verdict.message}"
        rc = RecipeContext(V11, V11.operator(op), V11.operator(op).mode(mode), LEVEL, Budget())
        for entry in breakers_for(op, rc):
            cases = draw_examples(invalid_cases(V11, op, mode, LEVEL, clause=entry.clause), 1, 2)
            assert cases or entry.optional, f"{op} [{mode}]: {entry.clause!r} never applies"
            for case in cases:
                outcome = evaluate(case.graph, case.inputs, spec=V11, level=LEVEL)
                assert outcome.kind == "error" and outcome.rule is not None, str(outcome)
                assert outcome.rule.clause == case.rule_broken, f"{case.describe()}: {outcome}"


def test_every_error_if_has_a_breaker() -> None:
    """Each ERROR_IF clause of the module is broken in some mode (the length and block
    size rules of a list of values alone and of values with scales differ)."""
    clauses = {
        b.clause
        for op in OPERATORS
        for m in V11.operator(op).modes
        for b in breakers_for(op, RecipeContext(V11, V11.operator(op), m, LEVEL, Budget()))
    }
    constants = {
        v
        for k, v in vars(bsl).items()
        if k.endswith("_CLAUSE") and k.startswith(("RESHAPE", "GATHER"))
    }
    assert len(constants) == 15 and constants <= clauses


@pytest.mark.parametrize("mode", SCALED)
@pytest.mark.parametrize("op", OPERATORS)
def test_edge_cases_hold_every_encoding_and_the_scale_extremes(op: str, mode: str) -> None:
    value_t = dtypes.dtype(V11.operator(op).mode(mode).bindings["in_out_t"])
    for case in drawn(op, mode, 2, "edge"):
        (values, scales), _ = _members(case)
        codes = mx.to_bits(np.asarray(case.inputs[values]), value_t)
        assert set(np.unique(codes)) == set(range(mx.code_count(value_t)))
        scale_codes = set(
            mx.to_bits(np.asarray(case.inputs[scales]), dtypes.FP8UE8M0).reshape(-1).tolist()
        )
        # 2**-127, 2**127, 1.0 and the NaN scale 0xFF
        assert set(SCALE_EXTREMES) <= scale_codes and mx.UE8M0_NAN in scale_codes


def _row_gather_parts(case: Case) -> tuple[np.ndarray, int]:
    main = case.graph.main
    op = main.operators[0]
    k = np.asarray(case.inputs[op.inputs[-2]])
    return k, int(np.asarray(main.tensors[op.inputs[-1]].data).reshape(-1)[0])


@pytest.mark.parametrize("mode", ["fp4e2m1 with fp8ue8m0 scale factor", "fp16 (index_t=i64_t)"])
def test_row_gather_windows_of_several_rows_for_several_indices(mode: str) -> None:
    several = 0
    for case in drawn("ROW_GATHER_BLOCK_SCALED", mode, 24):
        k, row_count = _row_gather_parts(case)
        (values, *_), _ = _members(case)
        rows = case.graph.main.tensors[values].shape[1]
        assert k.min() >= 0 and k.max() <= rows - row_count
        several += row_count > 1 and k.shape[1] > 1
    assert several >= 6


def test_row_gather_long_axis_values_alone() -> None:
    for case in drawn("ROW_GATHER_BLOCK_SCALED", "signed 8", 2, "long-axis"):
        k, row_count = _row_gather_parts(case)
        reads = (k[..., None] + np.arange(row_count)).reshape(-1)
        assert (reads >= 1 << 16).any() and (reads == (1 << 16) - 1).any()


@pytest.mark.parametrize("mode", ["mxint8 with fp8ue8m0 scale factor", "Boolean"])
def test_reshape_max_rank_level_cases(mode: str) -> None:
    assert level_limits_for(V11, "RESHAPE_BLOCK_SCALED") == ["MAX_RANK"]
    with spec_in_use(V11):
        for above in (False, True):
            strategy = level_cases(V11, "RESHAPE_BLOCK_SCALED", mode, LEVEL, above=above)
            cases = draw_examples(strategy, 2, 10)
            kept = [c for c in cases if is_level_case(c, V11, LEVEL, above=above)]
            assert kept, f"{mode}: no case {'above' if above else 'at'} MAX_RANK"
            (values, *_), _ = _members(kept[0])
            assert len(kept[0].graph.main.tensors[values].shape) == 6 + above


@pytest.mark.parametrize(
    ("name", "op", "mode"),
    [
        ("reshape-bs-scales-column-major", "RESHAPE_BLOCK_SCALED", SCALED[0]),
        (
            "reshape-bs-scales-column-major",
            "RESHAPE_BLOCK_SCALED",
            "mxint8 with fp8ue8m0 scale factor",
        ),
        ("row-gather-bs-scales-first-row", "ROW_GATHER_BLOCK_SCALED", SCALED[0]),
        (
            "row-gather-bs-scales-first-row",
            "ROW_GATHER_BLOCK_SCALED",
            "fp6e3m2 with fp8ue8m0 scale factor (index_t=i64_t)",
        ),
    ],
)
def test_mutants_are_caught_on_drawn_cases(name: str, op: str, mode: str, tmp_path: Path) -> None:
    caught = 0
    for drawn_case in drawn(op, mode, 12):
        c = MutantCase(
            drawn_case.graph, {n: np.asarray(v) for n, v in drawn_case.inputs.items()}, V11
        )
        with spec_in_use(V11):
            ref, mut = run(ReferenceBackend(), c, tmp_path), run(MutantBackend(name), c, tmp_path)
        assert ref.rejected is None and mut.rejected is None
        assert not failures(c, ref)
        caught += bool(failures(c, mut))
    assert caught >= 3, f"{name}: {caught} of 12 drawn {op} cases catch it"

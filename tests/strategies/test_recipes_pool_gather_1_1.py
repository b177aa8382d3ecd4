"""Recipes and breakers of TOSA 1.1's AVG_POOL2D_ADAPTIVE, MAX_POOL2D_ADAPTIVE and
ROW_GATHER, and of the i64_t / Boolean modes 1.1 adds to ARGMAX, GATHER and SCATTER:
every mode that does not bind a block-scaled type draws valid cases that pass their
compliance check and breakers that trip the clause they name (the block-scaled modes:
test_recipes_resize_row_gather_block_scaled_1_1.py); the level cases of the _ADAPTIVE
operators sit at and just above MAX_KERNEL and MAX_STRIDE; and each new mutant is
caught on cases the recipes draw."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from case_helpers import drawn_cases
from mutant_cases import Case as MutantCase
from mutant_cases import failures, run

from conformance.backends.mutants import MutantBackend
from conformance.backends.reference import ReferenceBackend
from conformance.dtypes import SHAPE
from conformance.spec import load_revision, spec_in_use
from reference.compliance import MIN_DOT_PRODUCTS
from reference.engine import evaluate, to_storage
from reference.expectations import expect
from reference.ops.row_gather import ROW_COUNT_CLAUSE
from reference.registry import load_all
from strategies.case import Case
from strategies.draw import draw_examples
from strategies.invalid import breakers_for, invalid_cases
from strategies.levels import is_level_case, level_cases, level_limits_for
from strategies.obligations import pair_obligations
from strategies.recipes import RecipeContext
from strategies.recipes.data_sets import KS_LONG, KS_LONG_LOW
from strategies.recipes.pool_geometry import WINDOW_BREAKERS
from strategies.shapes import Budget
from strategies.ties import tie_facts
from strategies.valid import valid_cases

V11 = load_revision("1.1-draft")
LEVEL = V11.level("8K")
ADAPTIVE = ("AVG_POOL2D_ADAPTIVE", "MAX_POOL2D_ADAPTIVE")
# The operators implemented by the modules of these groups (their 1.1 modes).
MODULES = {
    "reference.ops.adaptive_pool",
    "reference.ops.row_gather",
    "reference.ops.tensor_pool_fft",
    "reference.ops.scatter_gather",
}
OPERATORS = sorted(
    op for op in V11.operators if op in load_all() and load_all()[op].__module__ in MODULES
)
PAIRS = [
    pytest.param(m.operator, m.mode, id=f"{m.operator}-{m.mode}")
    for op in OPERATORS
    for m in V11.operator(op).modes
    # the block-scaled ones: tests/strategies/test_recipes_resize_row_gather_block_scaled_1_1.py
    if not any("bs32" in v for v in m.bindings.values())
]


def drawn(op: str, mode: str, count: int = 12, target: str | None = None) -> list[Case]:
    return drawn_cases("1.1-draft", op, mode, count, target)


def test_the_operators_and_modes() -> None:
    assert {"AVG_POOL2D_ADAPTIVE", "MAX_POOL2D_ADAPTIVE", "ROW_GATHER", "GATHER"} <= set(OPERATORS)
    names = {(op, mode) for op, mode in (p.values for p in PAIRS)}
    assert ("ARGMAX", "signed 64") in names and ("SCATTER", "Boolean (index_t=i64_t)") in names
    # ROW_GATHER: 2 x (5 + 7) Base combinations and 2 x 3 Extension ones here; the 2 x 6
    # that bind a bs32_fp8ue8m0_* composite are tested with RESIZE's
    assert sum(op == "ROW_GATHER" for op, _ in names) == 30


@pytest.mark.parametrize(("op", "mode"), PAIRS)
def test_valid_cases_pass_and_breakers_trip(op: str, mode: str) -> None:
    with spec_in_use(V11):
        for case in draw_examples(valid_cases(V11, op, mode, LEVEL), 2, 1):
            exp = expect(case.graph, case.inputs, spec=V11, level=LEVEL, data_set=case.data_set)
            assert exp.outcome.kind == "valid", f"{case.describe()}: {exp.outcome}"
            main = case.graph.main
            for name in main.outputs:
                stored = to_storage(exp.outcome.outputs[name], main.tensors[name].dtype)
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


# -- ROW_GATHER --------------------------------------------------------------------------

ROW_MODE = "Base INT (in_out_t=i16_t, index_t=i64_t)"


def _row_gather_parts(case: Case) -> tuple[np.ndarray, np.ndarray, int]:
    main = case.graph.main
    op = main.operators[0]
    values = case.inputs[op.inputs[0]]
    row_count = int(np.asarray(main.tensors[op.inputs[2]].data).reshape(-1)[0])
    return values, np.asarray(case.inputs[op.inputs[1]]), row_count


def test_row_gather_indices_stay_in_range_and_reach_both_ends() -> None:
    counts, firsts, lasts = set(), 0, 0
    for case in drawn("ROW_GATHER", ROW_MODE, 24):
        values, k, row_count = _row_gather_parts(case)
        assert case.graph.main.tensors[case.graph.main.operators[0].inputs[2]].data is not None
        last = values.shape[1] - row_count
        assert k.dtype == np.int64 and k.min() >= 0 and k.max() <= last
        counts.add(min(row_count, 2))
        firsts += bool((k == 0).any())
        lasts += bool((k == last).any())
    # row counts of 1 (GATHER's case) and more; the first row and the last start drawn
    assert counts == {1, 2} and firsts >= 4 and lasts >= 4


def test_row_gather_long_axis_windows_cross_2_to_the_16() -> None:
    for case in drawn("ROW_GATHER", "Base FP (in_out_t=fp16_t, index_t=i32_t)", 3, "long-axis"):
        values, k, row_count = _row_gather_parts(case)
        assert values.shape[1] > 1 << 16 and k.max() + row_count <= values.shape[1]
        reads = (k[..., None] + np.arange(row_count)).reshape(-1)
        assert (reads >= 1 << 16).any() and (reads == (1 << 16) - 1).any()


def test_row_count_breaker_keeps_the_output() -> None:
    with spec_in_use(V11):
        strategy = invalid_cases(V11, "ROW_GATHER", ROW_MODE, LEVEL, clause=ROW_COUNT_CLAUSE)
        cases = draw_examples(strategy, 6, 0)
    for case in cases:
        _, _, row_count = _row_gather_parts(case)
        assert row_count < 1


# -- the _ADAPTIVE operators -------------------------------------------------------------


@pytest.mark.parametrize("op", ADAPTIVE)
def test_adaptive_window_parameters_are_constant_shape_inputs(op: str) -> None:
    mode = V11.operator(op).modes[0].mode
    declared = [a.name for a in V11.operator(op).inputs]
    for case in drawn(op, mode, 8):
        main = case.graph.main
        operator = main.operators[0]
        assert len(operator.inputs) == len(declared)
        for arg, name in zip(declared, operator.inputs, strict=True):
            t = main.tensors[name]
            if arg in ("kernel", "stride", "pad"):
                assert (
                    t.dtype is SHAPE
                    and t.data is not None
                    and t.shape == (4 if arg == "pad" else 2,)
                )
            elif arg.endswith("_zp"):
                assert t.shape == (1,) and t.data is not None
        assert not {"kernel", "stride", "pad"} & set(operator.attributes)


def test_adaptive_cases_have_windows_a_framework_would_not_pool_alike() -> None:
    """Strides other than the kernel and padding are drawn: the cases where the frameworks'
    adaptive windows (IH / OH tiles) are not the pseudocode's."""
    other = 0
    for case in drawn("MAX_POOL2D_ADAPTIVE", "fp16", 16):
        ops = case.graph.main.operators[0].inputs
        k, s, p = (np.asarray(case.graph.main.tensors[n].data).tolist() for n in ops[1:4])
        other += k != s or any(p)
    assert other >= 8


def test_adaptive_breakers_are_the_window_rules_and_their_own() -> None:
    rc = RecipeContext(
        V11,
        V11.operator("AVG_POOL2D_ADAPTIVE"),
        V11.operator("AVG_POOL2D_ADAPTIVE").mode("signed 16 with int32 accumulate"),
        LEVEL,
        Budget(),
    )
    clauses = {b.clause for b in breakers_for("AVG_POOL2D_ADAPTIVE", rc)}
    assert {c for c, _ in WINDOW_BREAKERS} <= clauses
    assert "!is_same<in_out_t,i8_t>() && input_zp != 0" in clauses
    assert "in_out_t != i8_t && input_zp != 0" not in clauses  # the draft's spelling


@pytest.mark.parametrize("op", ADAPTIVE)
@pytest.mark.parametrize("limit", ["MAX_KERNEL", "MAX_STRIDE"])
def test_adaptive_level_cases(op: str, limit: str) -> None:
    # the pad case is exempt, as for the pooling operators (a pad stays below its kernel)
    assert level_limits_for(V11, op, LEVEL) == ["MAX_KERNEL", "MAX_STRIDE"]
    mode = V11.operator(op).modes[-1].mode
    with spec_in_use(V11):
        for above in (False, True):
            strategy = level_cases(V11, op, mode, LEVEL, above=above, limit=limit)
            for case in draw_examples(strategy, 2, 0):
                assert is_level_case(case, V11, LEVEL, above=above, limit=limit)


@pytest.mark.parametrize(
    ("pooling", "op"), [("AVG_POOL2D", ADAPTIVE[0]), ("MAX_POOL2D", ADAPTIVE[1])]
)
def test_adaptive_coverage_obligations_are_the_pooling_operators(pooling: str, op: str) -> None:
    """The same obligations mode for mode (NaN in the first, middle and last window rows;
    AVG's integer rounding ties; no overflow obligation for a mean), but for those of
    the operator's own rules and patterns: its ERROR_IF boundaries (the adaptive pools
    have their own clauses) and the graph rewrites (PAD folds into the fixed pools)."""
    own = ("boundary:", "rewrite:")
    with spec_in_use(V11):
        for m in V11.operator(op).modes:
            same = V11.operator(pooling).mode(m.mode)
            keys = [
                {
                    o.key
                    for o in pair_obligations(V11, LEVEL, V11.operator(name), mode).obligations
                    if not o.key.startswith(own)
                }
                for name, mode in ((pooling, same), (op, m))
            ]
            assert keys[0] == keys[1], m.mode


def test_adaptive_integer_ties_are_found_in_the_inputs() -> None:
    mode = V11.operator("AVG_POOL2D_ADAPTIVE").mode("signed 8 with int32 accumulate")
    inputs = {
        "input": np.array([1, 2, 3, 4]).reshape(1, 2, 2, 1),
        "kernel": np.array([2, 2]),
        "stride": np.array([1, 1]),
        "pad": np.zeros(4, np.int64),
        "input_zp": np.array([0]),
        "output_zp": np.array([0]),
    }
    attributes = {"acc_type": "INT32"}
    with spec_in_use(V11):
        # (1 + 2 + 3 + 4) / 4 = 2.5: a tie of the rounding
        assert tie_facts("AVG_POOL2D_ADAPTIVE", mode, inputs, attributes, {}, V11) == {"tie"}
        # 126.5 is a tie, but output_zp 100 (read from its input) puts it at 226.5,
        # clipped to 127: no tie reaches the output
        inputs["input"] = np.array([127, 127, 126, 126]).reshape(1, 2, 2, 1)
        assert tie_facts("AVG_POOL2D_ADAPTIVE", mode, inputs, attributes, {}, V11) == {"tie"}
        inputs["output_zp"] = np.array([100])
        assert tie_facts("AVG_POOL2D_ADAPTIVE", mode, inputs, attributes, {}, V11) == set()


def test_adaptive_avg_long_kernels_and_data_sets() -> None:
    """A "ks:long" job's KS (kernel_y * kernel_x, read from the kernel input) reaches
    the hundreds with MIN_DOT_PRODUCTS outputs, and Appendix A's AVG_POOL2D data sets are
    drawn (tensor_ops gives AVG_POOL2D_ADAPTIVE AVG_POOL2D's precision rule)."""
    op, mode = "AVG_POOL2D_ADAPTIVE", "fp16 with fp32 accumulate"
    with spec_in_use(V11):
        strategy = valid_cases(V11, op, mode, LEVEL, Budget(max_elements=16384), target=KS_LONG)
        long_cases = draw_examples(strategy, 2, 4)
    for case in long_cases:
        main = case.graph.main
        kernel = np.asarray(main.tensors[main.operators[0].inputs[3]].data)
        assert int(np.prod(kernel)) >= KS_LONG_LOW
        assert math.prod(main.tensors[main.outputs[0]].shape) >= MIN_DOT_PRODUCTS
    assert {c.data_set for c in drawn(op, mode, 12)} - {-1}


# -- the mutants of the new operators, on drawn cases -----------------------------------


@pytest.mark.parametrize(
    ("name", "op", "mode"),
    [
        (
            "adaptive-pool-framework-windows",
            "AVG_POOL2D_ADAPTIVE",
            "signed 8 with int32 accumulate",
        ),
        ("adaptive-pool-framework-windows", "AVG_POOL2D_ADAPTIVE", "fp32 with fp32 accumulate"),
        ("adaptive-pool-framework-windows", "MAX_POOL2D_ADAPTIVE", "bf16"),
        ("row-gather-offset-major", "ROW_GATHER", ROW_MODE),
        ("row-gather-offset-major", "ROW_GATHER", "Base FP (in_out_t=bool_t, index_t=i32_t)"),
    ],
)
def test_new_mutants_are_caught_on_drawn_cases(
    name: str, op: str, mode: str, tmp_path: Path
) -> None:
    caught = 0
    for drawn_case in drawn(op, mode, 12):
        c = MutantCase(drawn_case.graph, drawn_case.inputs, V11)
        with spec_in_use(V11):
            ref, mut = run(ReferenceBackend(), c, tmp_path), run(MutantBackend(name), c, tmp_path)
        assert ref.rejected is None and mut.rejected is None
        assert not failures(c, ref)
        caught += bool(failures(c, mut))
    assert caught >= 3, f"{name}: {caught} of 12 drawn {op} cases catch it"

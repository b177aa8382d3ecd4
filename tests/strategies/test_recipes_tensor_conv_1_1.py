"""The dot-product recipes and breakers on TOSA 1.1: every mode of MATMUL, MATMUL_T,
CONV2D, CONV3D and TRANSPOSE_CONV2D that binds no block-scaled type draws valid cases
that pass their own compliance check, with each operand in the type its declaration
binds (1.1's mixed-precision modes: in_t != weight_t, A_t != B_t; zero points typed
in_zp_t / A_zp_t); every breaker trips the ERROR_IF it names.  The modes that bind a
block-scaled type: tests/strategies/test_recipes_conv_block_scaled_1_1.py."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from conformance.dtypes import BF16, I64, dtype
from conformance.spec import TypeSupport, load_revision, spec_in_use
from reference.arguments import TYPES_CLAUSE
from reference.engine import evaluate, to_storage
from reference.expectations import expect
from reference.ops.matmul_t import BATCH_CLAUSE
from strategies.case import Case
from strategies.draw import draw_examples
from strategies.invalid import breakers_for, invalid_cases
from strategies.levels import level_limits_for
from strategies.recipes import RecipeContext
from strategies.recipes.tensor_conv import block_scaled_refusal
from strategies.shapes import Budget
from strategies.valid import valid_cases

SPEC = load_revision("1.1-draft")
LEVEL = SPEC.level("8K")
OPS = ("MATMUL", "MATMUL_T", "CONV2D", "CONV3D", "TRANSPOSE_CONV2D")
# The operand pairs whose types a mixed-precision mode sets apart.
OPERANDS = {"MATMUL": ("A", "B"), "MATMUL_T": ("A", "B")}


def _block(m: TypeSupport) -> bool:
    return any(dtype(v).kind == "block" for v in m.bindings.values())


def _modes(drawable: bool) -> list[TypeSupport]:
    return [m for op in OPS for m in SPEC.operator(op).modes if _block(m) is not drawable]


DRAWABLE = _modes(True)
BLOCK = _modes(False)


def _param(m: TypeSupport) -> object:
    return pytest.param(m.operator, m.mode, id=f"{m.operator}-{m.mode}")


@cache
def drawn(op: str, mode: str, count: int = 2, seed: int = 1) -> list[Case]:
    with spec_in_use(SPEC):
        cases = draw_examples(valid_cases(SPEC, op, mode, LEVEL), count, seed)
    assert cases, f"{op} [{mode}]: no case drawn"
    return cases


def test_the_modes_counted() -> None:
    # 14 MATMUL modes (none block-scaled); MATMUL_T: 2 integer, 1 fp16, and the three
    # type-set families' non-block combinations: 4 * 4 - 4 = 12... by the sets: S1_IN_NO_FP16
    # (4 without block) x S1_IN (5) = 20, minus the 20 with a block type on either side =
    # 4 * 4 = 12 (A from {fp8e4m3, fp8e5m2, bf16}: 3 x 4 = 12); fp16 x S1_IN_NO_FP16: 3;
    # S2_IN (5) x S2_IN (5) = 25; 2 + 1 + 12 + 3 + 25 = 43.  The convolutions: 64 each.
    counts = {op: sum(m.operator == op for m in DRAWABLE) for op in OPS}
    assert counts == {
        "MATMUL": 14,
        "MATMUL_T": 43,
        "CONV2D": 64,
        "CONV3D": 64,
        "TRANSPOSE_CONV2D": 64,
    }


def test_no_mode_binds_i64() -> None:
    # TOSA 1.1's i64 (EXT-INT64) reaches none of these operators' modes.
    for op in OPS:
        for m in SPEC.operator(op).modes:
            assert I64.spec_name not in m.bindings.values(), m.mode


@pytest.mark.parametrize(("op", "mode"), [_param(m) for m in DRAWABLE])
def test_valid_cases_are_valid_and_pass_their_own_check(op: str, mode: str) -> None:
    o = SPEC.operator(op)
    m = o.mode(mode)
    for case in drawn(op, mode):
        main = case.graph.main
        node = main.operators[0]
        assert node.op == op and case.mode == mode
        # Each operand in the type its declaration binds: in_t / weight_t, A_t / B_t,
        # and the zero points in in_zp_t / weight_zp_t, A_zp_t / B_zp_t.
        for arg, name in zip(o.inputs, node.inputs, strict=True):
            if arg.element_type in m.bindings:
                assert main.tensors[name].dtype is m.dtype(arg.element_type), (arg.name, mode)
        with spec_in_use(SPEC):
            exp = expect(case.graph, case.inputs, spec=SPEC, level=LEVEL, data_set=case.data_set)
            assert exp.outcome.valid, f"{case.describe()}: {exp.outcome}"
            for out in main.outputs:
                got = to_storage(exp.outcome.outputs[out], main.tensors[out].dtype)
                verdict = exp.check(out, got)
                assert verdict.passed, f"{case.describe()}: {verdict.message}"


def _breaker_modes() -> list[object]:
    """Per operator and XML mode (family): its first combination, and its first one
    whose operands differ in type."""
    chosen: dict[tuple[str, str], list[TypeSupport]] = {}
    for m in DRAWABLE:
        picked = chosen.setdefault((m.operator, m.family or m.mode), [])
        a, b = OPERANDS.get(m.operator, ("input", "weight"))
        op_spec = SPEC.operator(m.operator)
        mixed = m.dtype(op_spec.argument(a).element_type) is not m.dtype(
            op_spec.argument(b).element_type
        )
        if not picked or (mixed and len(picked) == 1):
            picked.append(m)
    return [_param(m) for ms in chosen.values() for m in ms]


@pytest.mark.parametrize(("op", "mode"), _breaker_modes())
def test_every_breaker_trips_its_error_if(op: str, mode: str) -> None:
    o = SPEC.operator(op)
    rc = RecipeContext(SPEC, o, o.mode(mode), LEVEL, Budget())
    with spec_in_use(SPEC):
        entries = breakers_for(op, rc)
        assert entries
        for entry in entries:
            cases = draw_examples(invalid_cases(SPEC, op, mode, LEVEL, clause=entry.clause), 2, 2)
            if not entry.optional:
                assert cases, f"{op} [{mode}]: breaker for {entry.clause!r} never applies"
            for case in cases:
                outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
                assert outcome.kind == "error", f"{case.describe()}: {outcome}"
                assert outcome.rule is not None and outcome.rule.clause == case.rule_broken, (
                    f"{case.describe()}: reference says {outcome.rule}"
                )


@pytest.mark.parametrize(
    ("op", "mode", "clauses"),
    [
        (
            "MATMUL_T",
            "Mixed precision fp with fp32 accumulate (A_t=fp16_t, B_t=fp8e4m3_t)",
            {
                BATCH_CLAUSE,
                "!is_same<A_t,i8_t>() && A_zp != 0",
                "!is_same<B_t,i8_t>() && B_zp != 0",
            },
        ),
        ("MATMUL_T", "signed 8x8 with int32 accumulate", {BATCH_CLAUSE}),
        (
            "MATMUL",
            "fp8e5m2xfp8e4m3 with fp32 accumulate",
            {"!is_same<A_t,i8_t>() && A_zp != 0", "!is_same<B_t,i8_t>() && B_zp != 0"},
        ),
        (
            "CONV2D",
            "Mixed precision fp with bf16/fp32 accumulate (in_t=bf16_t, weight_t=fp16_t, "
            "acc_t=bf16_t)",
            {
                "!is_same<in_t,i8_t>() && input_zp != 0",
                "!is_same<weight_t,i8_t>() && weight_zp != 0",
                TYPES_CLAUSE,
            },
        ),
    ],
)
def test_the_1_1_rules_have_breakers(op: str, mode: str, clauses: set[str]) -> None:
    o = SPEC.operator(op)
    rc = RecipeContext(SPEC, o, o.mode(mode), LEVEL, Budget())
    assert clauses <= {b.clause for b in breakers_for(op, rc)}
    # i8 operands may have zero points: their rules have no breaker.
    if "signed 8" in mode:
        assert not any("A_zp" in b.clause for b in breakers_for(op, rc))


def test_matmul_t_draws_b_broadcast_and_per_batch() -> None:
    seen = set()
    mode = "Mixed precision fp with fp32 accumulate (A_t=fp32_t, B_t=fp32_t)"
    for case in drawn("MATMUL_T", mode, 30, 3):
        n = case.graph.main.tensors[case.graph.main.inputs[0]].shape[0]
        a, b = (case.graph.main.tensors[t].shape for t in case.graph.main.operators[0].inputs[:2])
        assert a[2] == b[2] and b[0] in (1, a[0])
        seen.add("broadcast" if b[0] == 1 < n else "per batch" if n > 1 else "N 1")
    assert {"broadcast", "per batch"} <= seen, seen


def test_bf16_accumulator_is_named_by_acc_type() -> None:
    mode = (
        "Mixed precision fp with bf16/fp32 accumulate "
        "(in_t=fp16_t, weight_t=fp8e5m2_t, acc_t=bf16_t)"
    )
    for op in ("CONV2D", "CONV3D", "TRANSPOSE_CONV2D"):
        assert SPEC.operator(op).mode(mode).dtype("acc_t") is BF16
        for case in drawn(op, mode):
            assert case.graph.main.operators[0].attributes["acc_type"] == "BF16"


def test_acc_type_breaker_never_names_an_accumulator_of_these_types() -> None:
    # (fp16, fp16, fp16) accumulates in fp16, fp32 and (1.1) bf16: the breaker picks
    # INT32, INT48 or INT8, never BF16.
    mode = "fp16 with fp16 accumulate"
    with spec_in_use(SPEC):
        cases = draw_examples(
            invalid_cases(SPEC, "CONV2D", mode, LEVEL, clause=TYPES_CLAUSE), 20, 5
        )
    picked = {c.graph.main.operators[0].attributes.get("acc_type") for c in cases}
    assert "BF16" not in picked and picked & {"INT32", "INT48", "INT8"}


def test_drawable_modes_have_no_refusal() -> None:
    assert all(block_scaled_refusal(m) is None for m in DRAWABLE)


def test_matmul_t_has_no_level_limits_and_the_convolutions_keep_theirs() -> None:
    # tosa.xml gives MATMUL_T's arguments no levellimit (ranks 3, below MAX_RANK).
    assert level_limits_for(SPEC, "MATMUL_T", LEVEL) == []
    assert "MAX_KERNEL" in level_limits_for(SPEC, "CONV2D", LEVEL)


def test_mixed_float_values_stay_in_the_narrower_operand_type() -> None:
    # fp32 data against fp8e4m3 weights: no weight is drawn beyond fp8e4m3's range
    # (448), only its special values (NaN) stand outside the numbers.
    mode = "Mixed precision fp with fp32 accumulate (in_t=fp32_t, weight_t=fp8e4m3_t)"
    for case in drawn("CONV2D", mode, 12, 7):
        w = case.graph.main.tensors[case.graph.main.operators[0].inputs[1]]
        values = np.asarray(case.inputs.get(w.name, w.data), np.float64)
        finite = values[np.isfinite(values)]
        assert finite.size == 0 or np.abs(finite).max() <= 448.0

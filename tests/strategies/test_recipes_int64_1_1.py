"""The recipes on TOSA 1.1's 64-bit integer modes (EXT-INT64) and CAST's 1.1 modes:
every i64 mode of the element-wise, comparison, reduction, data-layout, data-node and
type-conversion groups draws valid cases (their REQUIREs kept by construction) that
pass their own check, for the ordinary, "edge" and "ties" draws; the values reach both
ends of i64 and the bits float64 cannot hold; every breaker trips its clause; the i64
mutants and CAST's input_unsigned mutant are killed by a case the recipes draw; and an
ARITHMETIC_RIGHT_SHIFT vector with round=true needs PRO-INT."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest
from mutant_cases import Case as MutantCase
from mutant_cases import failures, run

from conformance.backends.mutants import MutantBackend
from conformance.backends.reference import ReferenceBackend
from conformance.dtypes import I64, dtype
from conformance.spec import TypeSupport, load_revision, spec_in_use
from conformance.vectorize import case_to_vector
from reference.engine import evaluate, to_storage
from reference.expectations import expect
from reference.ops.type_conversion import INPUT_UNSIGNED_CLAUSE
from strategies.case import Case
from strategies.draw import draw_examples
from strategies.invalid import breakers_for, invalid_cases
from strategies.recipes import RecipeContext
from strategies.recipes import type_conversion as cast_recipes
from strategies.shapes import Budget
from strategies.valid import valid_cases
from vectors.pack_model import Provenance

SPEC = load_revision("1.1-draft")
LEVEL = SPEC.level("8K")
GROUPS = {
    "elementwise-binary",
    "elementwise-unary",
    "elementwise-ternary",
    "comparison",
    "reduction",
    "data-layout",
    "data-node",
    "type-conversion",
}
MAX, MIN = I64.int_range.max, I64.int_range.min


def _i64_modes() -> list[TypeSupport]:
    out = []
    for name in SPEC.operators:
        op = SPEC.operator(name)
        if op.group not in GROUPS or name.endswith("_BLOCK_SCALED"):
            continue
        out += [m for m in op.modes if "i64_t" in m.bindings.values()]
    return out


I64_MODES = _i64_modes()


def _param(m: TypeSupport) -> object:
    return pytest.param(m.operator, m.mode, id=f"{m.operator}-{m.mode}")


@cache
def drawn(
    op: str, mode: str, target: str | None = None, count: int = 6, seed: int = 3
) -> list[Case]:
    with spec_in_use(SPEC):
        cases = draw_examples(valid_cases(SPEC, op, mode, LEVEL, target=target), count, seed)
    assert cases, f"{op} [{mode}]: no case drawn"
    return cases


def test_the_i64_modes_counted() -> None:
    # 12 binary (ADD ... SUB), 4 unary (ABS, BITWISE_NOT, CLZ, NEGATE), SELECT, 3
    # comparisons, 3 reductions, 7 data-layout (CONCAT, PAD, RESHAPE, REVERSE, SLICE,
    # TILE, TRANSPOSE), CONST and IDENTITY, 4 CASTs (bool / i32 to i64, i64 to bool / i32)
    by_op: dict[str, int] = {}
    for m in I64_MODES:
        by_op[m.operator] = by_op.get(m.operator, 0) + 1
    assert len(I64_MODES) == 12 + 4 + 1 + 3 + 3 + 7 + 2 + 4, sorted(by_op)
    assert by_op["CAST"] == 4


@pytest.mark.parametrize("target", [None, "edge", "ties"])
@pytest.mark.parametrize(("op", "mode"), [_param(m) for m in I64_MODES])
def test_i64_cases_are_valid_and_pass_their_own_check(
    op: str, mode: str, target: str | None
) -> None:
    for case in drawn(op, mode, target):
        main = case.graph.main
        with spec_in_use(SPEC):
            exp = expect(case.graph, case.inputs, spec=SPEC, level=LEVEL, data_set=case.data_set)
            assert exp.outcome.valid, f"{case.describe()}: {exp.outcome}"
            for out in main.outputs:
                got = to_storage(exp.outcome.outputs[out], main.tensors[out].dtype)
                assert exp.check(out, got).passed, case.describe()


def _values(op: str, mode: str, count: int = 30) -> np.ndarray:
    arrays = [
        np.asarray(v).astype(np.int64).reshape(-1)
        for target in (None, "edge")
        for case in drawn(op, mode, target, count)
        for name, v in case.inputs.items()
        if case.graph.main.tensors[name].dtype is I64
    ]
    return np.concatenate(arrays)


@pytest.mark.parametrize(
    "op", ["ADD", "SUB", "MUL", "MAXIMUM", "BITWISE_XOR", "INTDIV", "ABS", "NEGATE", "REDUCE_SUM"]
)
def test_values_reach_the_ends_of_i64(op: str) -> None:
    mode = "signed 64"
    v = _values(op, mode)
    # beyond float64's exact integers, on both sides
    assert (v > 1 << 53).any() and (v < -(1 << 53)).any(), op
    # INT64_MIN: not where its REQUIRE rules it out (ABS and NEGATE of INT64_MIN)
    if op in ("ABS", "NEGATE"):
        assert MIN + 1 in v and MIN not in v, op
    elif op in ("ADD", "SUB", "MUL", "INTDIV", "REDUCE_SUM"):
        # these recipes place the ends themselves (or, for REDUCE_SUM, start a line there)
        assert MAX in v and MIN in v, op
    else:  # the ends come with the special values drawn or placed ("edge")
        assert MAX in v or MIN in v, op


def test_add_sub_results_reach_the_ends() -> None:
    for op in ("ADD", "SUB"):
        outs = []
        for target in (None, "edge"):
            for case in drawn(op, "signed 64", target, 30):
                with spec_in_use(SPEC):
                    o = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
                outs.append(np.asarray(o.outputs[case.graph.main.outputs[0]]).reshape(-1))
        results = np.concatenate(outs).astype(np.int64)
        assert MAX in results and MIN in results, op


def test_reduce_sum_running_sums_reach_the_ends() -> None:
    # the running-sum regime: some reduced line starts at INT64_MAX or INT64_MIN
    firsts = []
    for case in drawn("REDUCE_SUM", "signed 64", None, 30):
        axis = int(case.graph.main.operators[0].attributes["axis"])
        x = np.asarray(case.inputs[case.graph.main.inputs[0]]).astype(np.int64)
        firsts.append(np.take(x, 0, axis=axis).reshape(-1))
    first = np.concatenate(firsts)
    assert MAX in first and MIN in first


def test_clz_counts_cover_every_length() -> None:
    counts = set()
    for case in drawn("CLZ", "signed 64", None, 30):
        with spec_in_use(SPEC):
            o = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
        counts |= set(np.asarray(o.outputs[case.graph.main.outputs[0]]).reshape(-1).tolist())
    assert set(range(65)) <= counts


def test_shift_amounts_reach_63() -> None:
    for op in ("LOGICAL_LEFT_SHIFT", "LOGICAL_RIGHT_SHIFT", "ARITHMETIC_RIGHT_SHIFT"):
        shifts = np.concatenate(
            [
                np.asarray(c.inputs[c.graph.main.inputs[1]]).reshape(-1)
                for c in drawn(op, "signed 64", None, 30)
            ]
        )
        assert 63 in shifts and 0 in shifts and shifts.max() <= 63, op


def _breaker_params() -> list[object]:
    # RESHAPE's breakers are left out: with these seeds their draws hit a Hypothesis
    # InvalidArgument on 1.0's modes too (not a 1.1 matter; the pack's own seeds work).
    return [_param(m) for m in I64_MODES if m.operator != "RESHAPE"] + [
        _param(m) for m in SPEC.operator("CAST").modes if "bs32" not in str(m.bindings.values())
    ][::7]


@pytest.mark.parametrize(("op", "mode"), _breaker_params())
def test_every_breaker_trips_its_error_if(op: str, mode: str) -> None:
    o = SPEC.operator(op)
    rc = RecipeContext(SPEC, o, o.mode(mode), LEVEL, Budget())
    with spec_in_use(SPEC):
        for entry in breakers_for(op, rc):
            cases = draw_examples(invalid_cases(SPEC, op, mode, LEVEL, clause=entry.clause), 2, 4)
            if not entry.optional:
                assert cases, f"{op} [{mode}]: breaker for {entry.clause!r} never applies"
            for case in cases:
                outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
                assert outcome.kind == "error", f"{case.describe()}: {outcome}"
                assert outcome.rule is not None and outcome.rule.clause == case.rule_broken


def test_input_unsigned_breaker_applies_to_non_integer_inputs_only() -> None:
    op = SPEC.operator("CAST")
    for mode in ("fp16/fp32 to signed (in_t=fp32_t, out_t=i8_t)", "bool to fp32"):
        rc = RecipeContext(SPEC, op, op.mode(mode), LEVEL, Budget())
        (entry,) = [b for b in breakers_for("CAST", rc) if b.clause == INPUT_UNSIGNED_CLAUSE]
        # TOSA 1.1's flatbuffer schema has no input_unsigned field: no vector can hold it
        assert not entry.can_pack(rc)
    rc = RecipeContext(SPEC, op, op.mode("to signed 64 (in_t=i32_t)"), LEVEL, Budget())
    assert INPUT_UNSIGNED_CLAUSE not in {b.clause for b in breakers_for("CAST", rc)}


# -- the mutants, killed by drawn cases ---------------------------------------------------


def _killed(name: str, cases: list[Case], tmp_path: Path) -> bool:
    for case in cases:
        c = MutantCase(case.graph, case.inputs, SPEC)
        ref = run(ReferenceBackend(), c, tmp_path)
        assert ref.rejected is None and not failures(c, ref)
        mut = run(MutantBackend(name), c, tmp_path)
        if mut.rejected is not None or failures(c, mut):
            return True
    return False


@pytest.mark.parametrize(
    ("name", "op", "mode"),
    [
        ("mul-i64-low-32-bits", "MUL", "signed 64"),
        ("clz-i64-counts-32-bits", "CLZ", "signed 64"),
        ("reduce-sum-i64-in-float64", "REDUCE_SUM", "signed 64"),
        ("clz-zero-gives-31", "CLZ", "signed 64"),
    ],
)
def test_i64_mutants_are_killed_by_drawn_cases(
    name: str, op: str, mode: str, tmp_path: Path
) -> None:
    assert _killed(name, drawn(op, mode, None, 6), tmp_path), name


def test_cast_input_unsigned_mutant_is_killed_where_the_format_holds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The recipe draws input_unsigned only where the revision's format can write it; a
    # format that could (as a later tosa.fbs will) makes it draw the case that kills.
    monkeypatch.setattr(cast_recipes, "format_writes", lambda rc, attribute: True)
    mode = "to signed 64 (in_t=i32_t)"
    with spec_in_use(SPEC):
        cases = draw_examples(valid_cases(SPEC, "CAST", mode, LEVEL), 8, 5)
    assert any(c.graph.main.operators[0].attributes.get("input_unsigned") for c in cases)
    assert _killed("cast-input-unsigned-ignored", cases, tmp_path)


def test_cast_draws_no_input_unsigned_the_format_cannot_write() -> None:
    for case in drawn("CAST", "to signed 64 (in_t=i32_t)", None, 12):
        assert "input_unsigned" not in case.graph.main.operators[0].attributes


# -- ARITHMETIC_RIGHT_SHIFT's round needs PRO-INT -----------------------------------------


def test_ars_round_vectors_need_pro_int() -> None:
    seen = set()
    for case in drawn("ARITHMETIC_RIGHT_SHIFT", "signed 64", None, 12):
        rnd = bool(case.graph.main.operators[0].attributes.get("round"))
        vector = case_to_vector(
            case, SPEC, LEVEL, name="v", kind="valid", provenance=Provenance("test", 0, 0, "")
        )
        assert vector is not None
        assert vector.requirements.extensions == ("EXT-INT64",)
        # ERROR_IF(round && !PRO-INT): only a PRO-INT implementation gives the rounded
        # result; a PRO-FP + EXT-INT64 one must fail the graph, so the vector is not its
        assert vector.requirements.profiles == (("PRO-INT",) if rnd else ())
        seen.add(rnd)
    assert seen == {True, False}


def test_cast_modes_of_1_1_draw_their_types() -> None:
    for mode in ("bool to fp32", "fp32 to bool", "signed 64 to bool/i32 (out_t=i32_t)"):
        m = SPEC.operator("CAST").mode(mode)
        for case in drawn("CAST", mode):
            t = case.graph.main.tensors
            assert t[case.graph.main.inputs[0]].dtype is dtype(m.bindings["in_t"])
            assert t[case.graph.main.outputs[0]].dtype is dtype(m.bindings["out_t"])

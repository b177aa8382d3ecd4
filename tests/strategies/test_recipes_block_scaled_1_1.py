"""The block-scaled operators' recipes and breakers on the TOSA 1.1 draft: every mode
draws valid cases that the reference evaluates and that pass their precision rule,
every breaker trips its own ERROR_IF, the edge values are placed, and every mutant of
conformance/backends/mutants/block_scaled.py is killed by a drawn case."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from conformance import dtypes
from conformance.backends.mutants import MutantBackend, catalogue
from conformance.spec import load_revision, spec_in_use
from reference import mx
from reference.compliance.block_scaled import check_scale
from reference.engine import evaluate, to_storage
from reference.expectations import expect
from strategies.case import Case
from strategies.draw import draw_examples
from strategies.invalid import breakers_for, invalid_cases
from strategies.recipes import RecipeContext
from strategies.shapes import Budget
from strategies.valid import valid_cases
from vectors.pack_model import LoadedVector, Provenance, Requirements

SPEC = load_revision("1.1-draft")
LEVEL = SPEC.level("8K")
OPS = (
    "CAST_TO_BLOCK_SCALED",
    "CAST_FROM_BLOCK_SCALED",
    "MATMUL_T_BLOCK_SCALED",
    "CONV2D_BLOCK_SCALED",
)
MODES = [(op, m.mode) for op in OPS for m in SPEC.operator(op).modes]


@pytest.fixture(autouse=True)
def _spec() -> Iterator[None]:
    with spec_in_use(SPEC):
        yield


def cases(op: str, mode: str, count: int, seed: int, target: str | None = None) -> list[Case]:
    return draw_examples(valid_cases(SPEC, op, mode, LEVEL, target=target), count, seed)


def _io(case: Case) -> tuple[np.ndarray, dtypes.DType, list[str]]:
    main = case.graph.main
    first = main.inputs[0]
    return case.inputs[first], main.tensors[first].dtype, list(main.outputs)


def failures(case: Case, outputs: dict[str, np.ndarray]) -> list[str]:
    """The precision-rule failures of ``outputs`` (as stored) against the reference:
    CAST_TO_BLOCK_SCALED's two outputs together, the others per output."""
    main = case.graph.main
    if main.operators[0].op == "CAST_TO_BLOCK_SCALED":
        ref = evaluate(case.graph, case.inputs, spec=SPEC)
        x, in_t, (v, s) = _io(case)
        vt, st = main.tensors[v].dtype, main.tensors[s].dtype
        r = check_scale(
            mx.decode(outputs[s], st), mx.decode(outputs[v], vt), ref.outputs[s],
            mx.decode(x, in_t), vt, mx.BLOCK_SIZE,
        )  # fmt: skip
        return [] if r.passed else [f"{int((~r.ok).sum())} values fail tosa_reference_check_scale"]
    exp = expect(case.graph, case.inputs, spec=SPEC, data_set=case.data_set)
    verdicts = {n: exp.check(n, outputs[n]) for n in main.outputs}
    return [f"{n}: {v.message}" for n, v in verdicts.items() if not v.passed]


def reference_outputs(case: Case) -> dict[str, np.ndarray]:
    out = evaluate(case.graph, case.inputs, spec=SPEC)
    assert out.valid, str(out)
    main = case.graph.main
    return {n: to_storage(v, main.tensors[n].dtype) for n, v in out.outputs.items()}


@pytest.mark.parametrize(("op", "mode"), MODES)
def test_valid_cases_evaluate_and_pass_their_rule(op: str, mode: str) -> None:
    for case in cases(op, mode, 4, 1):
        assert not failures(case, reference_outputs(case)), case


@pytest.mark.parametrize(("op", "mode"), MODES[::5])
def test_breakers_trip_their_clause(op: str, mode: str) -> None:
    o = SPEC.operator(op)
    rc = RecipeContext(SPEC, o, o.mode(mode), LEVEL, Budget())
    clauses = sorted({b.clause for b in breakers_for(op, rc)})
    assert len(clauses) >= 4
    for clause in clauses:
        for case in draw_examples(invalid_cases(SPEC, op, mode, LEVEL, clause=clause), 2, 3):
            out = evaluate(case.graph, case.inputs, spec=SPEC)
            assert out.kind == "error" and out.rule is not None, (clause, str(out))
            assert out.rule.clause == clause, str(out)


@pytest.mark.parametrize("value", ["fp4e2m1", "fp6e2m3", "fp6e3m2", "mxint8", "fp8e5m2"])
def test_cast_from_holds_every_encoding_under_an_ordinary_scale(value: str) -> None:
    mode = f"{value} with fp8ue8m0 scale to fp32"
    dt = dtypes.dtype(value)
    for case in cases("CAST_FROM_BLOCK_SCALED", mode, 5, 2):
        data, scale = (case.inputs[n] for n in case.graph.main.inputs)
        codes = mx.to_bits(data, dt).reshape(-1)
        blocks = mx.decode(scale, dtypes.FP8UE8M0).reshape(-1)
        finite = np.repeat(np.isfinite(blocks), mx.BLOCK_SIZE)
        # every one of the 16 / 64 / 256 encodings, in a block with a finite scale
        assert len(np.unique(codes[finite])) == mx.code_count(dt), case
        if dt is dtypes.MXINT8:
            assert {-128, 127} <= set(data.reshape(-1).tolist())


def test_cast_from_edge_cases_hold_the_scale_extremes() -> None:
    for case in cases(
        "CAST_FROM_BLOCK_SCALED", "fp4e2m1 with fp8ue8m0 scale to bf16", 4, 3, "edge"
    ):
        scale = case.inputs[case.graph.main.inputs[1]]
        assert {0x00, 0x7F, 0xFE, 0xFF} <= set(
            mx.to_bits(scale, dtypes.FP8UE8M0).reshape(-1).tolist()
        )


def test_cast_to_edge_cases_reach_the_scale_extremes() -> None:
    seen: set[float] = set()
    nan = zero_block = 0
    for mode in ("fp32 to mxint8 with fp8ue8m0 scale", "bf16 to fp4e2m1 with fp8ue8m0 scale"):
        for case in cases("CAST_TO_BLOCK_SCALED", mode, 4, 4, "edge"):
            x, in_t, (_, s) = _io(case)
            scale = evaluate(case.graph, case.inputs, spec=SPEC).outputs[s]
            seen |= set(scale[np.isfinite(scale)].tolist())
            nan += int(np.isnan(scale).any())
            zero_block += int((mx.block_max_abs(mx.decode(x, in_t)) == 0).any())
    assert 2.0**-127 in seen and 2.0**127 in seen  # the clip at both ends (mxint8: fp32's max)
    assert nan == 8 and zero_block == 8


@pytest.mark.parametrize(
    ("op", "mode"),
    [
        ("CAST_TO_BLOCK_SCALED", "fp32 to fp4e2m1 with fp8ue8m0 scale"),
        ("CAST_FROM_BLOCK_SCALED", "mxint8 with fp8ue8m0 scale to bf16"),
    ],
)
def test_large_jobs_reach_the_large_input_obligation(op: str, mode: str) -> None:
    # The generator's budget for a "large" job: CAST_FROM's two inputs get half the aim
    # each (32,769), and its scales are a 32nd of the data, so the data must take
    # ceil(2 * 32769 * 32 / 33) = 63,553 elements, 1,986 blocks
    from conformance.generate_jobs import job_budget
    from conformance.generate_plan import Job
    from strategies.obligations import LARGE_INPUT

    budget = job_budget(Job(op, mode, "valid", 0, target="large"), SPEC, None)
    drawn = draw_examples(valid_cases(SPEC, op, mode, LEVEL, budget, target="large"), 2, 3)
    for case in drawn:
        total = sum(case.inputs[n].size for n in case.graph.main.inputs)
        assert total >= LARGE_INPUT, (op, total)


def test_dot_product_free_values_hold_mxint8_bounds() -> None:
    mode = "Scaled mxint8 with fp8ue8m0 scale and fp32 accumulate"
    found = 0
    for case in cases("MATMUL_T_BLOCK_SCALED", mode, 6, 5, "edge"):
        a = case.inputs[case.graph.main.inputs[0]]
        found += {-128, 127} <= set(a.reshape(-1).tolist())
    assert found == 6


# -- every mutant is killed by a case the recipes make ---------------------------------------

MUTANTS = sorted(n for n, m in catalogue().items() if m.operators and m.operators[0] in OPS)
# The mode to draw in, and the target that places the values the bug shows on.
WHERE = {
    "block-scale-emax-forgotten": ("fp32 to fp6e3m2 with fp8ue8m0 scale", None),
    "block-scale-zero-block-nan": ("bf16 to fp8e4m3 with fp8ue8m0 scale", "edge"),
    "block-scale-nan-as-exponent": ("mxint8 with fp8ue8m0 scale to bf16", "edge"),
    "block-value-subnormals-as-zero": ("fp4e2m1 with fp8ue8m0 scale to fp32", None),
    "block-scale-first-block-only": (
        "Scaled fp4e2m1 with fp8ue8m0 scale and fp32 accumulate",
        None,
    ),
    "block-weight-scale-tap-zero": ("fp6e2m3 with fp8ue8m0 scale factor", None),
}


def _vector(case: Case) -> LoadedVector:
    return LoadedVector(
        name="case",
        operator=case.operator,
        mode=case.mode,
        kind="valid",
        graph=case.graph,
        inputs=case.inputs,
        expected={},
        checks={},
        requirements=Requirements((), (), "8K"),
        provenance=Provenance("test", 0, 0, ""),
    )


def test_every_mutant_has_a_place() -> None:
    assert set(MUTANTS) == set(WHERE) and len(MUTANTS) >= len(OPS)
    assert {catalogue()[n].operators[0] for n in MUTANTS} == set(OPS)


@pytest.mark.parametrize("name", MUTANTS)
def test_mutant_is_killed_by_a_drawn_case(name: str) -> None:
    m = catalogue()[name]
    mode, target = WHERE[name]
    killed = 0
    drawn = cases(m.operators[0], mode, 8, 6, target)
    for case in drawn:
        with tempfile.TemporaryDirectory() as tmp:
            result = MutantBackend(name).run(_vector(case), Path(tmp))
        assert result.rejected is None, result.rejected
        killed += bool(failures(case, result.outputs))
    assert killed >= 2, f"{name}: {killed} of {len(drawn)} drawn cases kill it"


def test_edge_fill_keeps_nan_weight_scales_out_of_padded_convolutions() -> None:
    # Reading v11-mx-conv-padded-nan-scale: a NaN weight scale reaches a padded output
    # (0 * NaN), which no vector may depend on.  The edge fill (strategies.fill) places
    # the missing value classes one by one; it must refuse fp8ue8m0's NaN in
    # weight_scale of a padded case, and allow it in an unpadded one.
    from strategies.fill import refusal

    mode = SPEC.operator("CONV2D_BLOCK_SCALED").modes[0].mode
    drawn = cases("CONV2D_BLOCK_SCALED", mode, 12, 0)
    padded = [c for c in drawn if np.any(c.graph.main.tensors["pad"].data > 0)]
    flat = [c for c in drawn if not np.any(c.graph.main.tensors["pad"].data > 0)]
    assert padded and flat
    why = refusal(padded[0], "CONV2D_BLOCK_SCALED", "weight_scale", "nan")
    assert why is not None and "v11-mx-conv-padded-nan-scale" in why
    assert refusal(flat[0], "CONV2D_BLOCK_SCALED", "weight_scale", "nan") is None
    assert refusal(padded[0], "CONV2D_BLOCK_SCALED", "input_scale", "nan") is None

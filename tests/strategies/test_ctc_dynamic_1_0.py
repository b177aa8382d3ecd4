"""TOSA 1.0's compile-time constants and EXT-DYNAMIC (chapters/operators.adoc, "Compile
Time Constant"; tosa.xml ``<ctc>`` / ``<ctc_remove>``): in a conformant graph a CTC
input is fed by a CONST; EXT-DYNAMIC frees it, so a claim of it must take zero points,
``pad_const``, RESCALE's multiplier and shift, MUL's shift and TABLE's table as graph
inputs.  The "dynamic" vectors test that, and only claims of EXT-DYNAMIC count them."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.claim_scope import CLAIM_SKIP, beyond_claim
from conformance.claims import make_claim
from conformance.generate_plan import Options, plan
from conformance.spec import load_revision
from conformance.vectorize import case_to_vector
from reference.engine import evaluate
from strategies.case import DYNAMIC_TARGET, ctc_freeing, freeable_ctc
from strategies.draw import draw_examples
from strategies.valid import valid_cases
from vectors.pack_model import Provenance

SPEC = load_revision("1.0")
DRAFT = load_revision("2024-04-draft")
LEVEL = SPEC.level("8K")


def test_the_extension_that_frees_ctc_inputs_comes_from_the_xml() -> None:
    assert ctc_freeing(SPEC) == {"EXT-DYNAMIC"}
    assert ctc_freeing(DRAFT) == frozenset()  # the draft has no CTC rules


@pytest.mark.parametrize(
    ("op", "freed"),
    [
        ("CONV2D", ["input_zp", "weight_zp"]),
        ("RESCALE", ["multiplier", "shift", "input_zp", "output_zp"]),
        ("PAD", ["pad_const"]),  # padding is a shape_t: never a graph input
        ("TABLE", ["table"]),
        ("ADD", []),
    ],
)
def test_which_inputs_are_freed(op: str, freed: list[str]) -> None:
    assert freeable_ctc(SPEC, op) == freed


def _dynamic(op: str, mode: str):
    cases = draw_examples(valid_cases(SPEC, op, mode, LEVEL, target=DYNAMIC_TARGET), 3, 0)
    assert cases
    return cases


def test_a_dynamic_case_feeds_its_zero_points_from_graph_inputs() -> None:
    for case in _dynamic("NEGATE", "signed 8"):
        main = case.graph.main
        assert main.inputs == ["input1", "input1_zp", "output_zp"]
        assert [o.op for o in main.operators] == ["NEGATE"]  # no CONST feeds them
        assert evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL).kind == "valid"


def test_dynamic_zero_points_are_used_as_given() -> None:
    """NEGATE i8, by hand: -(5 - 3) + (-2) = -4, and -(-128 - 3) + (-2) = 129 -> 127."""
    case = _dynamic("NEGATE", "signed 8")[0]
    main = case.graph.main
    shape = main.tensors["input1"].shape
    x = np.full(shape, 5, np.int8)
    x.reshape(-1)[0] = -128
    inputs = {
        "input1": x,
        "input1_zp": np.array([3], np.int8),
        "output_zp": np.array([-2], np.int8),
    }
    outcome = evaluate(case.graph, inputs, spec=SPEC, level=LEVEL)
    assert outcome.kind == "valid", outcome
    got = np.asarray(next(iter(outcome.outputs.values()))).reshape(-1)
    assert got[0] == 127 and all(got[1:] == -4)


def test_a_dynamic_vector_requires_ext_dynamic_and_a_constant_one_does_not() -> None:
    def vector(target: str | None):
        case = draw_examples(
            valid_cases(SPEC, "CONV2D", "signed 8x8 with int32 accumulate", LEVEL, target=target),
            1,
            0,
        )[0]
        provenance = Provenance("test", 0, 0, "")
        made = case_to_vector(case, SPEC, LEVEL, name="x", kind="valid", provenance=provenance)
        assert made is not None
        return made

    assert vector(DYNAMIC_TARGET).requirements.extensions == ("EXT-DYNAMIC",)
    assert vector(None).requirements.extensions == ()


def _dynamic_jobs(extensions: list[str], spec=SPEC, profile: str = "PRO-INT") -> list[str]:
    claim = make_claim(spec, [profile], extensions)
    jobs = plan(spec, claim, Options(ops="NEGATE|ADD|RESCALE", chains=False)).jobs
    return sorted({f"{j.operator} [{j.mode}]" for j in jobs if j.target == DYNAMIC_TARGET})


def test_dynamic_jobs_come_with_a_claim_of_ext_dynamic_only() -> None:
    assert _dynamic_jobs([]) == []
    with_it = _dynamic_jobs(["EXT-DYNAMIC"])
    assert "NEGATE [signed 8]" in with_it and not any(p.startswith("ADD") for p in with_it)
    assert any(p.startswith("RESCALE") for p in with_it)
    assert _dynamic_jobs(["all"], DRAFT, "BI") == []


class _Source:
    def __init__(self, descs: dict[str, bytes]) -> None:
        self.descs = descs

    def read(self, rel: str) -> bytes | None:
        return self.descs.get(rel.removesuffix("/desc.json"))


class _Pack:
    def __init__(self, requirements: dict[str, dict[str, object]]) -> None:
        import json

        self.source = _Source(
            {n: json.dumps({"requirements": r}).encode() for n, r in requirements.items()}
        )


def test_a_vector_that_needs_more_than_the_claim_is_left_out() -> None:
    pack = _Pack(
        {
            "dyn": {"profiles": ["PRO-INT"], "extensions": ["EXT-DYNAMIC"], "level": "8K"},
            "plain": {"profiles": ["PRO-INT"], "extensions": [], "level": "8K"},
            "fp": {"profiles": ["PRO-FP"], "extensions": [], "level": "8K"},
        }
    )
    claim = make_claim(SPEC, ["PRO-INT"])
    assert beyond_claim(claim, pack, ["dyn", "plain", "fp"]) == {
        "dyn": f"{CLAIM_SKIP}needs EXT-DYNAMIC",
        "fp": f"{CLAIM_SKIP}needs PRO-FP",
    }
    assert beyond_claim(make_claim(SPEC, ["PRO-INT"], ["EXT-DYNAMIC"]), pack, ["dyn"]) == {}


def test_a_result_outside_the_claim_counts_neither_for_nor_against_a_pair() -> None:
    from conformance.certify import make_certificate
    from conformance.verdicts import FAILED, PASSED, SKIPPED, RunReport, VectorResult

    claim = make_claim(SPEC, ["PRO-INT"])
    mode = "signed 8"
    ok = VectorResult("NEGATE_signed-8_valid_000", "NEGATE", mode, "valid", PASSED, "")
    beyond = VectorResult(
        "NEGATE_signed-8_dynamic_000", "NEGATE", mode, "valid", SKIPPED, f"{CLAIM_SKIP}x"
    )
    pairs = make_certificate(SPEC, claim, "x", "0" * 64, RunReport([ok, beyond], 0, 0.0)).pairs
    pair = next(p for p in pairs if (p.operator, p.mode) == ("NEGATE", mode))
    assert (pair.run, pair.skipped, pair.declined, pair.passed) == (1, 0, 0, 1)
    # the same vector run and failed, in a claim of EXT-DYNAMIC, fails the pair
    failed = VectorResult(beyond.vector, "NEGATE", mode, "valid", FAILED, "output: FAIL")
    claim = make_claim(SPEC, ["PRO-INT"], ["EXT-DYNAMIC"])
    pairs = make_certificate(SPEC, claim, "x", "0" * 64, RunReport([ok, failed], 0, 0.0)).pairs
    assert next(p for p in pairs if (p.operator, p.mode) == ("NEGATE", mode)).failed == 1

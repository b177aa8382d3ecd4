"""CONST in TOSA 1.1: mxint8 values (fixed-point codes, value = code / 64) drawn and
evaluated; the wrong-type breaker, which only the 2024 draft's format can write; and a
block-scaled mode's rank 0, which no valid vector can have."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from conformance import dtypes
from conformance.spec import load_revision
from reference.arguments import TYPES_CLAUSE
from reference.engine import evaluate
from strategies.draw import draw_examples
from strategies.invalid import breakers_for
from strategies.obligations import BLOCK_RANK_0, pair_obligations
from strategies.valid import valid_cases
from strategies.values import ValueRange, special_values, tensor_values
from vectors.flatbuffer import holds_shape_tensors

SPEC = load_revision("1.1-draft")
K8 = SPEC.level("8K")


def test_mxint8_special_values_are_codes() -> None:
    # Codes over 64: -128 = -2.0 (the least), -127 = -1.984375, -64 = -1.0, -1 = -1/64,
    # 0, 1 = 1/64, 64 = 1.0, 127 = 1.984375 (the greatest).
    assert special_values(dtypes.MXINT8) == [-128, -127, -64, -1, 0, 1, 64, 127]


def test_mxint8_values_keep_a_range_given_in_values() -> None:
    # low -1.0, high 0.5: codes -64 .. 32 (0.5 * 64), specials outside dropped.
    draws = draw_examples(
        tensor_values(dtypes.MXINT8, (64,), ValueRange(low=-1.0, high=0.5)), 20, 3
    )
    assert draws
    for arr in draws:
        assert arr.dtype == np.int8
        assert int(arr.min()) >= -64 and int(arr.max()) <= 32


def test_const_mxint8_cases_evaluate() -> None:
    cases = draw_examples(valid_cases(SPEC, "CONST", "mxint8", K8), 3, 1)
    assert cases
    for case in cases:
        outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=K8)
        (out,) = outcome.outputs.values()
        values = case.graph.main.operators[0].attributes["values"]
        assert np.array_equal(np.asarray(out), np.asarray(values))


def test_const_wrong_type_breaker_is_written_only_where_the_format_holds_shapes() -> None:
    (entry,) = [
        b for b in breakers_for("CONST") if b.clause == TYPES_CLAUSE and b.operator == "CONST"
    ]
    for revision, writable in (("2024-04-draft", True), ("1.0", False), ("1.1-draft", False)):
        assert holds_shape_tensors(revision) is writable
        rc = SimpleNamespace(spec=SimpleNamespace(revision=revision))
        assert entry.can_pack(rc) is writable  # type: ignore[arg-type]


def test_block_scaled_modes_have_no_rank_0_obligation() -> None:
    op = SPEC.operator("CONST")
    mx = pair_obligations(SPEC, K8, op, op.mode("MX (out_t=bs32_fp8ue8m0_fp4e2m1_t)"))
    assert "shape:rank=0" not in mx.obligation_keys()
    assert mx.not_applicable["shape:rank=0"] == BLOCK_RANK_0
    assert "shape:rank=1" in mx.obligation_keys()
    plain = pair_obligations(SPEC, K8, op, op.mode("mxint8"))
    assert "shape:rank=0" in plain.obligation_keys()

"""CAST's recipe on TOSA 1.1's 60 block-scaled modes (30 fp to MX, 30 MX to fp): none
is refused; valid cases hold whole blocks, keep CAST_TO_BLOCK_SCALED's special blocks
in a narrow input's range and most scales of a block-scaled input in the output's;
they pass their own compliance check; each new ERROR_IF (the composite's rank 0 and its
innermost dimension off the block grid, for in_t and for out_t) is tripped by its
breaker; a vector of each direction packs and passes the reference; and a block-scaled
input's ties count in the value type's bits."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from breaker_helpers import assert_breakers_trip

from conformance import dtypes as D
from conformance.backends.reference import ReferenceBackend
from conformance.block_tensor import BlockScaled, TensorValue, is_block_scaled, value_type
from conformance.claims import full_claim
from conformance.spec import TypeSupport, load_revision, spec_in_use
from conformance.vectorize import case_to_vector
from conformance.verdicts import PASSED, judge
from reference import mx
from reference.engine import to_storage
from reference.expectations import expect
from reference.ops import type_conversion as tc
from strategies.case import Case
from strategies.draw import draw_examples
from strategies.invalid import breakers_for
from strategies.recipes import RecipeContext
from strategies.shapes import Budget
from strategies.ties import cast_rounds, tie_facts
from strategies.valid import BLOCK_SCALED_OPERATORS, unbuildable_reason, valid_cases
from vectors.pack import open_pack, write_pack_index, write_vector
from vectors.pack_model import PackMeta, Provenance

SPEC = load_revision("1.1-draft")
LEVEL = SPEC.level("8K")
CAST = SPEC.operator("CAST")
BLOCK = [m for m in CAST.modes if any("bs32" in v for v in m.bindings.values())]
TO_MX = [m for m in BLOCK if "bs32" in m.bindings["out_t"]]
FROM_MX = [m for m in BLOCK if "bs32" in m.bindings["in_t"]]


def _mode(in_t: str, out_t: str) -> TypeSupport:
    return next(m for m in BLOCK if m.bindings["in_t"] == in_t and m.bindings["out_t"] == out_t)


def _bs(value: str) -> str:
    return f"bs32_fp8ue8m0_{value}_t"


# Every input type of fp to MX and every value and output type of MX to fp at least once.
SAMPLE = [
    _mode("fp8e4m3_t", _bs("fp4e2m1")),
    _mode("fp8e5m2_t", _bs("mxint8")),
    _mode("fp16_t", _bs("fp8e4m3")),
    _mode("bf16_t", _bs("fp6e2m3")),
    _mode("fp32_t", _bs("fp6e3m2")),
    _mode("fp32_t", _bs("fp8e5m2")),
    _mode(_bs("fp4e2m1"), "fp32_t"),
    _mode(_bs("fp6e2m3"), "fp8e5m2_t"),
    _mode(_bs("fp6e3m2"), "bf16_t"),
    _mode(_bs("fp8e4m3"), "fp8e4m3_t"),
    _mode(_bs("fp8e5m2"), "fp16_t"),
    _mode(_bs("mxint8"), "fp8e4m3_t"),
]
# The rules each direction's breakers must trip.
BLOCK_RULES = {
    "in_t": {tc.BLOCK_RANK_IN_CLAUSE, tc.BLOCK_SHAPE_IN_CLAUSE},
    "out_t": {tc.BLOCK_RANK_OUT_CLAUSE, tc.BLOCK_SHAPE_OUT_CLAUSE},
}


def _param(m: TypeSupport) -> object:
    return pytest.param(m.mode, id=m.mode.split("(")[1].rstrip(")"))


@cache
def drawn(mode: str, count: int = 4, seed: int = 1, target: str | None = None) -> list[Case]:
    with spec_in_use(SPEC):
        cases = draw_examples(valid_cases(SPEC, "CAST", mode, LEVEL, target=target), count, seed)
    assert cases, f"CAST [{mode}]: no case drawn"
    return cases


def test_the_60_modes_are_buildable() -> None:
    assert len(BLOCK) == 60 and len(TO_MX) == len(FROM_MX) == 30
    assert "CAST" in BLOCK_SCALED_OPERATORS
    assert all(unbuildable_reason(m) is None for m in BLOCK)


@pytest.mark.parametrize("mode", [_param(m) for m in SAMPLE])
def test_valid_cases_hold_whole_blocks_and_pass_their_own_check(mode: str) -> None:
    m = CAST.mode(mode)
    bs_var = "out_t" if m.mode in {t.mode for t in TO_MX} else "in_t"
    for case in drawn(mode):
        main = case.graph.main
        x = main.tensors[main.inputs[0]]
        assert x.shape and x.shape[-1] % 32 == 0, x.shape
        value = case.inputs[main.inputs[0]]
        assert isinstance(value, BlockScaled) == (bs_var == "in_t")
        with spec_in_use(SPEC):
            exp = expect(case.graph, case.inputs, spec=SPEC, level=LEVEL)
            assert exp.outcome.valid, f"{case.describe()}: {exp.outcome}"
            out = main.outputs[0]
            result = exp.outcome.outputs[out]
            if bs_var == "out_t":
                assert isinstance(result, BlockScaled) and result.dtype is m.dtype("out_t")
                got: TensorValue = result
            else:
                got = to_storage(np.asarray(result), main.tensors[out].dtype)
            verdict = exp.check(out, got)
            assert verdict.passed, f"{case.describe()}: {verdict.message}"


def test_a_narrow_input_keeps_its_special_blocks_in_range() -> None:
    # fp8e4m3 in (largest 448): an edge case holds an all-zero block (scale 2**-127), a
    # NaN block (its infinity block is NaN too: fp8e4m3 has none) and finite values up
    # to near 448, with no other block lost to an overflow of the folding.
    m = _mode("fp8e4m3_t", _bs("fp4e2m1"))
    for case in drawn(m.mode, 3, 2, "edge"):
        given = case.inputs[case.graph.main.inputs[0]]
        assert isinstance(given, np.ndarray)
        x = given.astype(np.float64)
        blocks = mx.block_view(x, 32).reshape(-1, 32)
        special = ~np.isfinite(blocks).all(axis=1)
        assert 1 <= special.sum() <= 2, special.sum()  # the nan and inf blocks
        assert (np.abs(blocks) == 0).all(axis=1).any()  # the zero block
        finite = np.abs(blocks[np.isfinite(blocks)])
        assert 112 <= finite.max() <= 448


def test_a_block_scaled_input_mostly_has_scales_in_the_outputs_range() -> None:
    # mxint8 (values below 2) into fp8e4m3 (exponents -6 .. 8, 3 fraction bits): in-range
    # scales run from 2**(-6 - 3 - 1) to 2**(8 - 1); 2**-127, 2**127 and NaN stay extremes.
    m = _mode(_bs("mxint8"), "fp8e4m3_t")
    inside = 0
    cases = drawn(m.mode, 8, 3)
    for case in cases:
        value = case.inputs[case.graph.main.inputs[0]]
        assert isinstance(value, BlockScaled)
        codes = value.scales.view(np.uint8).astype(int) - mx.UE8M0_BIAS
        ordinary = codes[~np.isin(codes + mx.UE8M0_BIAS, [0x00, 0xFE, 0xFF])]
        inside += bool(((ordinary >= -10) & (ordinary <= 7)).all())
    assert inside >= len(cases) // 2, inside


@pytest.mark.parametrize("mode", [_param(m) for m in SAMPLE])
def test_every_breaker_trips_its_error_if(mode: str) -> None:
    m = CAST.mode(mode)
    rc = RecipeContext(SPEC, CAST, m, LEVEL, Budget())
    var = "out_t" if is_block_scaled(m.dtype("out_t")) else "in_t"
    with spec_in_use(SPEC):
        seen = assert_breakers_trip(SPEC, "CAST", mode, LEVEL, breakers_for("CAST", rc))
    assert BLOCK_RULES[var] <= seen, sorted(BLOCK_RULES[var] - seen)
    other = "in_t" if var == "out_t" else "out_t"
    assert not BLOCK_RULES[other] & seen  # the other direction's rules do not apply


@pytest.mark.parametrize(
    "mode",
    [
        _param(_mode("fp16_t", _bs("fp4e2m1"))),  # values packed two to a byte
        _param(_mode(_bs("fp4e2m1"), "fp16_t")),
        _param(_mode("fp8e5m2_t", _bs("mxint8"))),
        _param(_mode(_bs("fp8e4m3"), "fp8e5m2_t")),
    ],
)
def test_a_vector_packs_and_passes_the_reference(mode: str, tmp_path: Path) -> None:
    with spec_in_use(SPEC):
        case = drawn(mode)[0]
        vector = case_to_vector(
            case, SPEC, LEVEL, name="CAST_bs32", kind="valid", provenance=Provenance("t", 0, 0, "-")
        )
        assert vector is not None
        entry = write_vector(tmp_path, vector)
        write_pack_index(tmp_path, PackMeta.create(SPEC, full_claim(SPEC).to_json(), 0), [entry])
        with open_pack(tmp_path) as pack:
            loaded = pack.load("CAST_bs32")
        result = ReferenceBackend().run(loaded, tmp_path)
        verdict = judge(loaded, result)
    assert verdict.verdict == PASSED, verdict.detail


def test_a_block_scaled_inputs_ties_count_its_value_types_bits() -> None:
    # fp8e4m3 values (4 significant bits) round into fp8e5m2 (3); fp4e2m1 (2) into
    # anything, and fp8e5m2 into fp8e4m3, are exact outside the subnormals.
    e4m3, e5m2, fp4 = (D.dtype(_bs(v)) for v in ("fp8e4m3", "fp8e5m2", "fp4e2m1"))
    assert cast_rounds(e4m3, D.FP8E5M2) and not cast_rounds(e5m2, D.FP8E4M3)
    assert not cast_rounds(fp4, D.FP32) and value_type(e4m3) is D.FP8E4M3
    # 1.125 * 2**2 = 4.5 lies half-way between fp8e5m2's 4 and 5: a tie; the other
    # values, 1 * 2**2, are exact.
    values = np.full((1, 32), 1.0, dtype=np.float64)
    values[0, 0] = 1.125
    scale = mx.from_bits(np.array([[129]]), D.FP8UE8M0)
    x = BlockScaled.of(e4m3, values.astype(D.FP8E4M3.storage), scale)
    mode = _mode(_bs("fp8e4m3"), "fp8e5m2_t")
    inputs: dict[str, Any] = {"input": x}  # as vector_facts passes a composite
    assert "tie" in tie_facts("CAST", mode, inputs, {}, {}, SPEC)

"""The block-scaled modes (TOSA 1.1 bs32_*) of CONCAT, CONST, DIM, IDENTITY, RESHAPE,
REVERSE, SLICE, TILE and TRANSPOSE: every mode draws valid cases of whole blocks, the
values cover every encoding of the value type and the scales their extremes, every
breaker trips its own ERROR_IF (the block rules each have one), each case makes a pack
vector the reference passes, and the other block-scaled modes stay unbuildable with a
reason naming the operator."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from breaker_helpers import assert_breakers_trip

from conformance.backends.reference import ReferenceBackend
from conformance.block_tensor import BlockScaled, is_block_scaled
from conformance.claims import full_claim
from conformance.dtypes import dtype
from conformance.spec import load_revision, spec_in_use
from conformance.vectorize import case_to_vector
from conformance.verdicts import PASSED, judge
from reference import mx
from reference.engine import evaluate
from reference.ops import data_layout as dl
from reference.ops import data_nodes as dn
from reference.ops.shape import DIM_BLOCK_SIZE_CLAUSE
from strategies.case import Case
from strategies.draw import draw_examples
from strategies.invalid import breakers_for
from strategies.recipes import RecipeContext
from strategies.shapes import Budget
from strategies.valid import BLOCK_SCALED_OPERATORS, unbuildable_reason, valid_cases
from vectors.pack import open_pack, write_pack_index, write_vector
from vectors.pack_model import PackMeta, Provenance

SPEC = load_revision("1.1-draft")
LEVEL = SPEC.level("8K")
# The operators that move elements (value and scale together); the dot-product
# operators' block-scaled modes: tests/strategies/test_recipes_conv_block_scaled_1_1.py.
OPS = ["CONCAT", "CONST", "DIM", "IDENTITY", "RESHAPE", "REVERSE", "SLICE", "TILE", "TRANSPOSE"]


def _block_modes(op: str) -> list[str]:
    return [
        m.mode for m in SPEC.operator(op).modes if any("bs32" in v for v in m.bindings.values())
    ]


MODES = [pytest.param(op, m, id=f"{op}-{m[-25:]}") for op in OPS for m in _block_modes(op)]
# The block rules each operator's pseudocode states, and the breaker of each (DIM's and
# CONST's rank-0 rules are unreachable through a declared rank >= 1 and packable values).
BLOCK_RULES = {
    "CONCAT": {dl.BLOCK_SHAPE_CLAUSE, dl.CONCAT_BLOCK_INPUT_CLAUSE},
    "CONST": {dn.CONST_BLOCK_RANK_CLAUSE, dn.CONST_BLOCK_SHAPE_CLAUSE},
    "DIM": {DIM_BLOCK_SIZE_CLAUSE},
    "IDENTITY": {dn.IDENTITY_BLOCK_RANK_CLAUSE, dn.IDENTITY_BLOCK_SHAPE_CLAUSE},
    "RESHAPE": {
        dl.BLOCK_RANK1_CLAUSE, dl.BLOCK_RANK_CLAUSE, dl.BLOCK_SHAPE1_CLAUSE, dl.BLOCK_SHAPE_CLAUSE,
    },
    "REVERSE": {dl.BLOCK_SHAPE_CLAUSE},
    "SLICE": {dl.BLOCK_SHAPE1_CLAUSE, dl.BLOCK_SHAPE_CLAUSE, dl.SLICE_BLOCK_START_CLAUSE},
    "TILE": {dl.BLOCK_SHAPE1_CLAUSE},
    "TRANSPOSE": {dl.BLOCK_SHAPE1_CLAUSE, dl.TRANSPOSE_BLOCK_PERMS_CLAUSE},
}  # fmt: skip


@pytest.fixture(autouse=True)
def _spec() -> Iterator[None]:
    with spec_in_use(SPEC):
        yield


@cache
def drawn(op: str, mode: str, target: str | None = None) -> list[Case]:
    with spec_in_use(SPEC):
        return draw_examples(valid_cases(SPEC, op, mode, LEVEL, target=target), 8, 3)


def composites(case: Case) -> list[BlockScaled]:
    main = case.graph.main
    found = [v for v in case.inputs.values() if isinstance(v, BlockScaled)]
    found += [
        v for op in main.operators for v in op.attributes.values() if isinstance(v, BlockScaled)
    ]
    return found


@pytest.mark.parametrize(("op", "mode"), MODES)
def test_valid_cases_hold_whole_blocks_and_are_valid(op: str, mode: str) -> None:
    assert unbuildable_reason(SPEC.operator(op).mode(mode)) is None
    cases = drawn(op, mode)
    assert cases
    for case in cases:
        outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
        assert outcome.kind == "valid", f"{case.describe()}: {outcome}"
        for t in case.graph.main.tensors.values():
            if is_block_scaled(t.dtype):
                assert t.shape and t.shape[-1] % 32 == 0, (t.name, t.shape)
        assert composites(case), "a block-scaled case holds a (values, scales) pair"


@pytest.mark.parametrize("op", ["CONST", "IDENTITY", "REVERSE"])
def test_every_encoding_and_the_scale_extremes_are_drawn(op: str) -> None:
    for mode in _block_modes(op):
        vt = dtype(SPEC.operator(op).mode(mode).bindings.get("in_out_t", "") or
                   SPEC.operator(op).mode(mode).bindings["out_t"]).block_value  # fmt: skip
        codes: set[int] = set()
        scales: set[int] = set()
        for case in drawn(op, mode, "edge"):
            for pair in composites(case):
                codes |= set(mx.to_bits(pair.values, dtype(vt)).reshape(-1).tolist())
                scales |= set(pair.scales.view(np.uint8).reshape(-1).tolist())
        assert codes == set(range(mx.code_count(dtype(vt)))), (mode, sorted(codes))
        # 2**-127, 2**127, 1.0 and the NaN scale
        assert {0x00, 0xFE, 0x7F, 0xFF} <= scales, (mode, sorted(scales))


@pytest.mark.parametrize(("op", "mode"), MODES)
def test_breakers_break_the_rule_they_name(op: str, mode: str) -> None:
    rc = RecipeContext(SPEC, SPEC.operator(op), SPEC.operator(op).mode(mode), LEVEL, Budget())
    seen = assert_breakers_trip(SPEC, op, mode, LEVEL, breakers_for(op, rc), examples=3)
    missing = BLOCK_RULES[op] - seen
    assert not missing, f"{op} [{mode}]: no breaker trips {sorted(missing)}"


@pytest.mark.parametrize("op", sorted(BLOCK_SCALED_OPERATORS))
def test_a_vector_of_each_operator_packs_and_passes_the_reference(op: str, tmp_path: Path) -> None:
    mode = _block_modes(op)[4]  # fp4e2m1: values packed two to a byte in the graph
    case = drawn(op, mode)[0]
    vector = case_to_vector(
        case, SPEC, LEVEL, name=f"{op}_bs32", kind="valid", provenance=Provenance("t", 0, 0, "-")
    )
    assert vector is not None
    entry = write_vector(tmp_path, vector)
    write_pack_index(tmp_path, PackMeta.create(SPEC, full_claim(SPEC).to_json(), 0), [entry])
    with open_pack(tmp_path) as pack:
        loaded = pack.load(f"{op}_bs32")
    result = ReferenceBackend().run(loaded, tmp_path)
    assert judge(loaded, result).verdict == PASSED


def test_other_block_scaled_modes_say_what_is_missing() -> None:
    bound = [m for m in SPEC.modes() if "bs32" in str(m.bindings)]
    for m in bound:
        reason = unbuildable_reason(m)
        if m.operator in BLOCK_SCALED_OPERATORS:
            assert reason is None, (m.operator, m.mode)
        else:
            assert reason == (
                "it binds a block-scaled type (bs32_*), and the reference has no "
                f"block-scaled {m.operator} yet"
            )
    # the modes that bind no composite are never refused for one
    assert all(unbuildable_reason(m) is None for m in SPEC.modes() if m not in bound)

"""The RESIZE and ROW_GATHER recipes on TOSA 1.1's block-scaled modes (6 of RESIZE,
nearest neighbour, and 12 of ROW_GATHER): none is refused; valid cases hold the
composite as a BlockScaled pair with C a whole number of blocks and pass their own
(exact) compliance check; every breaker trips the rule it names, the block-size and
mode rules each with one; the long-axis ROW_GATHER case reaches K past 2**16."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

import numpy as np
import pytest
from breaker_helpers import assert_breakers_trip

from conformance.block_tensor import BlockScaled, is_block_scaled
from conformance.dtypes import dtype
from conformance.spec import TypeSupport, load_revision, spec_in_use
from conformance.vectorize import case_to_vector
from reference.engine import evaluate
from reference.expectations import expect
from reference.ops.image import BLOCK_IN_CLAUSE, BLOCK_MODE_CLAUSE
from reference.ops.row_gather import BLOCK_CLAUSE
from strategies.case import Case
from strategies.draw import draw_examples
from strategies.invalid import breakers_for
from strategies.obligations import vector_facts
from strategies.recipes import RecipeContext
from strategies.recipes.scatter_gather import WIDE_K
from strategies.shapes import Budget
from strategies.valid import unbuildable_reason, valid_cases
from vectors.pack_model import Provenance

SPEC = load_revision("1.1-draft")
LEVEL = SPEC.level("8K")
OPS = ("RESIZE", "ROW_GATHER")
DATA = {"RESIZE": "input", "ROW_GATHER": "values"}
# The block rules each operator's pseudocode states that a vector can reach (RESIZE's
# out_t rule holds only where its in_t rule, checked first, has fired).
BLOCK_RULES = {"RESIZE": {BLOCK_IN_CLAUSE, BLOCK_MODE_CLAUSE}, "ROW_GATHER": {BLOCK_CLAUSE}}


def _block(m: TypeSupport) -> bool:
    return any(dtype(v).kind == "block" for v in m.bindings.values() if v != "-")


BLOCK = [m for op in OPS for m in SPEC.operator(op).modes if _block(m)]
MODES = [pytest.param(m.operator, m.mode, id=f"{m.operator}-{m.mode[-40:]}") for m in BLOCK]


@pytest.fixture(autouse=True)
def _spec() -> Iterator[None]:
    with spec_in_use(SPEC):
        yield


@cache
def drawn(op: str, mode: str, target: str | None = None, count: int = 4) -> list[Case]:
    with spec_in_use(SPEC):
        return draw_examples(valid_cases(SPEC, op, mode, LEVEL, target=target), count, 3)


def test_the_block_scaled_modes_counted_and_none_refused() -> None:
    # modes.txt: 6 RESIZE (one per value type) and 12 ROW_GATHER (6 x index_t i32, i64).
    assert sum(m.operator == "RESIZE" for m in BLOCK) == 6
    assert sum(m.operator == "ROW_GATHER" for m in BLOCK) == 12
    assert all(unbuildable_reason(m) is None for m in BLOCK)


@pytest.mark.parametrize(("op", "mode"), MODES)
def test_valid_cases_hold_whole_blocks_and_pass_their_own_check(op: str, mode: str) -> None:
    dt = SPEC.operator(op).mode(mode).dtype("in_t" if op == "RESIZE" else "in_out_t")
    cases = drawn(op, mode)
    assert cases, f"{op} [{mode}]: no case drawn"
    for case in cases:
        main = case.graph.main
        node = main.operators[0]
        if op == "RESIZE":
            assert node.attributes["mode"] == "NEAREST_NEIGHBOR"
        x = case.inputs[node.inputs[0]]
        assert isinstance(x, BlockScaled) and x.dtype is dt
        assert x.shape[-1] % 32 == 0 and x.scales.shape[-1] == x.shape[-1] // 32
        exp = expect(case.graph, case.inputs, spec=SPEC, level=LEVEL, data_set=case.data_set)
        assert exp.outcome.valid, f"{case.describe()}: {exp.outcome}"
        for out in main.outputs:
            assert is_block_scaled(main.tensors[out].dtype)
            result = exp.outcome.outputs[out]
            assert isinstance(result, BlockScaled)
            assert exp.checks[out].descriptor.mode.name == "EXACT"
            verdict = exp.check(out, result.copy())
            assert verdict.passed, f"{case.describe()}: {verdict.message}"


@pytest.mark.parametrize(("op", "mode"), MODES)
def test_every_breaker_trips_its_error_if(op: str, mode: str) -> None:
    o = SPEC.operator(op)
    rc = RecipeContext(SPEC, o, o.mode(mode), LEVEL, Budget())
    entries = breakers_for(op, rc)
    clauses = {e.clause for e in entries}
    assert BLOCK_RULES[op] <= clauses
    # The integer rows' "mode of another row" breaker is not one of theirs.
    assert op != "RESIZE" or all(e.fn.__name__ != "mode_of_another_row" for e in entries)
    seen = assert_breakers_trip(SPEC, op, mode, LEVEL, entries, examples=1)
    missing = BLOCK_RULES[op] - seen
    assert not missing, f"{op} [{mode}]: no breaker trips {sorted(missing)}"


def test_the_long_axis_row_gather_of_composites_indexes_past_2_16() -> None:
    # A long-axis job's budget (conformance.generate): room for K = WIDE_K rows of C = 1;
    # a composite row is one block (32 elements), so its values are 32 times that.
    mode = next(m.mode for m in BLOCK if m.operator == "ROW_GATHER")
    budget = Budget(max_elements=2 * 32769, max_dim=2048, min_elements=32769)
    with spec_in_use(SPEC):
        strategy = valid_cases(SPEC, "ROW_GATHER", mode, LEVEL, target="long-axis", budget=budget)
        cases = draw_examples(strategy, 1, 0)
    assert cases
    case = cases[0]
    node = case.graph.main.operators[0]
    values = case.inputs[node.inputs[0]]
    assert isinstance(values, BlockScaled) and values.shape == (1, WIDE_K, 32)
    k = np.asarray(case.inputs[node.inputs[1]])
    assert k.max() >= 1 << 16
    outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
    assert outcome.valid, str(outcome)


def test_the_facts_of_a_composite_vector_are_read() -> None:
    # The obligations read the composite input as a (values, scales) pair: its shape for
    # RESIZE's half-way positions (round:tie), no array conversion of the pair.
    mode = next(m.mode for m in BLOCK if m.operator == "RESIZE")
    case = drawn("RESIZE", mode, "ties", 1)[0]
    vector = case_to_vector(
        case, SPEC, LEVEL, name="RESIZE_bs32", kind="valid", provenance=Provenance("t", 0, 0, "-")
    )
    assert vector is not None
    facts = vector_facts(SPEC, vector, LEVEL)
    assert {"round:tie", "attr:mode=NEAREST_NEIGHBOR", "shape:rank=4"} <= facts


def test_an_edge_row_gather_has_room_for_the_index_classes() -> None:
    # Three index classes are placed one to a position (strategies.fill), and a single
    # index would share row_count's one position: an edge case has four indices.
    mode = next(m.mode for m in BLOCK if m.operator == "ROW_GATHER")
    for case in drawn("ROW_GATHER", mode, "edge", 3):
        node = case.graph.main.operators[0]
        assert np.asarray(case.inputs[node.inputs[1]]).shape[1] >= 4

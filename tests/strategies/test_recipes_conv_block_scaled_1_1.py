"""The dot-product recipes on TOSA 1.1's block-scaled modes of CONV2D, CONV3D,
TRANSPOSE_CONV2D and MATMUL_T: none is refused; valid cases hold each composite
operand as a BlockScaled pair with IC (C) a whole number of blocks and pass their own
compliance check; the breakers trip the block-size ERROR_IFs they name; an edge case
places the scale extremes (2**127, 2**-127, NaN) in the weight's blocks."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from breaker_helpers import assert_breakers_trip

from conformance.block_tensor import BlockScaled, is_block_scaled
from conformance.dtypes import dtype
from conformance.spec import TypeSupport, load_revision, spec_in_use
from reference import mx
from reference.engine import to_storage
from reference.expectations import expect
from reference.ops.tensor_conv import block_clause
from strategies.case import Case
from strategies.draw import draw_examples
from strategies.invalid import breakers_for
from strategies.recipes import RecipeContext
from strategies.recipes.tensor_conv import block_scaled_refusal
from strategies.shapes import Budget
from strategies.valid import unbuildable_reason, valid_cases

SPEC = load_revision("1.1-draft")
LEVEL = SPEC.level("8K")
OPS = ("CONV2D", "CONV3D", "TRANSPOSE_CONV2D", "MATMUL_T")
OPERANDS = {"MATMUL_T": ("A", "B")}


def _block(m: TypeSupport) -> bool:
    return any(dtype(v).kind == "block" for v in m.bindings.values() if v != "-")


BLOCK = [m for op in OPS for m in SPEC.operator(op).modes if _block(m)]


def _pick(op: str, data: str | None, weight: str | None, acc: str = "fp32") -> TypeSupport:
    """The first block-scaled mode of ``op`` whose data / weight types contain the given
    names (None: not block-scaled) and whose accumulator (MATMUL_T: out_t) is ``acc``."""
    a, b = OPERANDS.get(op, ("input", "weight"))
    o = SPEC.operator(op)
    for m in BLOCK:
        if m.operator != op:
            continue
        ta = m.dtype(o.argument(a).element_type)
        tb = m.dtype(o.argument(b).element_type)
        acc_t = m.dtype("out_t" if op == "MATMUL_T" else "acc_t")
        ok_a = (data is None and not is_block_scaled(ta)) or (data is not None and data in ta.name)
        ok_b = (weight is None and not is_block_scaled(tb)) or (
            weight is not None and weight in tb.name
        )
        if ok_a and ok_b and acc_t.name == acc and "bs32" in ta.name + tb.name:
            return m
    raise LookupError(f"{op}: no mode {data} x {weight} into {acc}")


SAMPLE = [
    _pick("CONV2D", None, "fp4e2m1"),
    _pick("CONV2D", "mxint8", "fp8e4m3", "bf16"),
    _pick("CONV3D", "fp6e3m2", None),
    _pick("TRANSPOSE_CONV2D", "fp8e5m2", "fp6e2m3"),
    _pick("MATMUL_T", "fp4e2m1", "fp4e2m1"),
    _pick("MATMUL_T", None, "mxint8", "bf16"),
]


def _param(m: TypeSupport) -> object:
    return pytest.param(m.operator, m.mode, id=f"{m.operator}-{m.mode}")


def held(case: Case, name: str) -> object:
    """A tensor's contents: a graph input's value, or a constant's (values and scales)."""
    if name in case.inputs:
        return case.inputs[name]
    t = case.graph.main.tensors[name]
    if is_block_scaled(t.dtype):
        assert t.data is not None and t.scale_data is not None
        return BlockScaled(t.dtype, t.data, t.scale_data)
    return t.data


@cache
def drawn(
    op: str, mode: str, count: int = 3, seed: int = 1, target: str | None = None
) -> list[Case]:
    with spec_in_use(SPEC):
        cases = draw_examples(valid_cases(SPEC, op, mode, LEVEL, target=target), count, seed)
    assert cases, f"{op} [{mode}]: no case drawn"
    return cases


def test_the_block_scaled_modes_counted_and_none_refused() -> None:
    # 264 block-scaled modes per convolution and 180 of MATMUL_T (the brief's count,
    # from modes.txt): 3 * 264 + 180 = 972.
    assert len(BLOCK) == 972
    assert sum(m.operator == "MATMUL_T" for m in BLOCK) == 180
    assert all(unbuildable_reason(m) is None and block_scaled_refusal(m) is None for m in BLOCK)


@pytest.mark.parametrize(("op", "mode"), [_param(m) for m in SAMPLE])
def test_valid_cases_hold_whole_blocks_and_pass_their_own_check(op: str, mode: str) -> None:
    o = SPEC.operator(op)
    m = o.mode(mode)
    a, b = OPERANDS.get(op, ("input", "weight"))
    for case in drawn(op, mode):
        main = case.graph.main
        node = main.operators[0]
        composites = 0
        for arg, name in zip(o.inputs, node.inputs, strict=True):
            dt = m.dtype(arg.element_type) if arg.element_type in m.bindings else None
            if arg.name in (a, b) and dt is not None and is_block_scaled(dt):
                composites += 1
                value = held(case, name)
                assert isinstance(value, BlockScaled) and value.dtype is dt
                assert value.shape[-1] % 32 == 0 and value.scales.shape[-1] == value.shape[-1] // 32
        assert composites >= 1
        with spec_in_use(SPEC):
            exp = expect(case.graph, case.inputs, spec=SPEC, level=LEVEL, data_set=case.data_set)
            assert exp.outcome.valid, f"{case.describe()}: {exp.outcome}"
            for out in main.outputs:
                result = exp.outcome.outputs[out]
                assert isinstance(result, np.ndarray)  # the four write plain outputs
                got = to_storage(result, main.tensors[out].dtype)
                verdict = exp.check(out, got)
                assert verdict.passed, f"{case.describe()}: {verdict.message}"


@pytest.mark.parametrize(("op", "mode"), [_param(m) for m in SAMPLE])
def test_every_breaker_trips_its_error_if(op: str, mode: str) -> None:
    o = SPEC.operator(op)
    m = o.mode(mode)
    rc = RecipeContext(SPEC, o, m, LEVEL, Budget())
    a, b = OPERANDS.get(op, ("input", "weight"))
    axis = "C" if op == "MATMUL_T" else "IC"
    first = o.argument(a).element_type
    var = first if is_block_scaled(m.dtype(first)) else o.argument(b).element_type
    with spec_in_use(SPEC):
        entries = breakers_for(op, rc)
        assert block_clause(var, axis) in {e.clause for e in entries}
        assert_breakers_trip(SPEC, op, mode, LEVEL, entries, examples=1)


def test_edge_cases_place_the_scale_extremes_in_the_weight() -> None:
    # MATMUL_T fp4 x fp4: an edge case (S = -1) puts 2**-127 (0x00), 2**127 (0xFE), 1.0
    # and NaN (0xFF) scales in B's blocks where it has four or more.
    m = SAMPLE[4]
    seen: set[int] = set()
    for case in drawn(m.operator, m.mode, 6, 4, "edge"):
        name = case.graph.main.operators[0].inputs[1]
        b = held(case, name)
        assert isinstance(b, BlockScaled)
        seen |= set(np.unique(mx.to_bits(b.scales, dtype("fp8ue8m0"))).tolist())
    assert {0x00, 0xFE, 0xFF} <= seen, sorted(seen)

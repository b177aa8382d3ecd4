"""Chains of operators: every drawn graph is valid, names its last operator and mode,
and can be turned into a vector (the reference describes how to check its output)."""

import numpy as np
import pytest

from conformance.builder import check_operator
from conformance.spec import load_spec
from reference.compliance.chain_bound import COMPOSED_RULE, needs_composing
from reference.engine import evaluate
from reference.expectations import expect
from strategies.chains import chain_cases, chain_starts
from strategies.draw import draw_examples
from strategies.graphs import deterministic, first_modes, graph_cases
from strategies.shapes import Budget

SPEC = load_spec()
LEVEL = SPEC.level("8K")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_chains_are_valid(seed: int) -> None:
    cases = draw_examples(graph_cases(SPEC, LEVEL), 10, seed)
    assert len(cases) == 10
    for case in cases:
        assert 2 <= len(case.operators) <= 5, case.strategy
        assert case.operator == case.operators[-1]
        assert case.mode in [m.mode for m in SPEC.operator(case.operator).modes]
        assert len(case.graph.main.operators) == len(case.operators)
        outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
        assert outcome.kind == "valid", f"{case.strategy}: {outcome}"
        expect(case.graph, case.inputs, spec=SPEC, level=LEVEL)  # a rule for its output
        # A float result feeding a later operator must have one right value.
        for op in case.graph.main.operators[:-1]:
            t = case.graph.main.tensors[op.outputs[0]]
            assert not t.dtype.is_float or deterministic(op.op), case.strategy


def test_chains_keep_to_the_operators_given() -> None:
    ops = {"ADD", "SUB", "ABS", "IDENTITY", "CAST", "GREATER", "SELECT"}
    cases = draw_examples(graph_cases(SPEC, LEVEL, ops=ops, length=(3, 4)), 10, 4)
    assert cases
    for case in cases:
        assert set(case.operators) <= ops and 3 <= len(case.operators) <= 4
        outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
        assert outcome.kind == "valid", f"{case.strategy}: {outcome}"


def test_chains_start_from_single_operator_recipes() -> None:
    firsts = {m.operator for m in first_modes(SPEC)}
    assert {"ADD", "ABS", "RESHAPE"} <= firsts
    assert not firsts & {"COND_IF", "WHILE_LOOP", "VARIABLE_READ", "CUSTOM"}
    # EXP's results are within ulps, not exact: it may only end a chain
    assert first_modes(SPEC, frozenset({"EXP"})) == []
    # fp32 ADD rounds (reading chain-intermediate-precision): its float modes start
    # chains whose bound is composed (reference.compliance.chain_bound), as MUL's; a
    # CAST between floats rounds and is not composed; ABS is exact in every type
    assert {m.mode for m in first_modes(SPEC, frozenset({"ADD"}))} == {
        "signed 32",
        "fp16",
        "bf16",
        "fp32",
    }
    assert not [m for m in first_modes(SPEC, frozenset({"CAST"})) if m.mode == "fp32 to fp16"]
    assert "fp32" in {m.mode for m in first_modes(SPEC, frozenset({"ABS"}))}


BI_PAIRS = frozenset(
    (m.operator, m.mode)
    for m in SPEC.modes()
    if m.mode
    in ("signed 8", "signed 16", "signed 32", "boolean", "signed 8x8 with int32 accumulate")
)


def _modes(case) -> set[tuple[str, str]]:
    main = case.graph.main
    out = set()
    for op in main.operators:
        mode, _ = check_operator(SPEC, op, main.tensors)
        assert mode is not None, case.strategy
        out.add((op.op, mode.mode))
    return out


@pytest.mark.parametrize("group", ["data-layout", "elementwise-binary", "tensor", "comparison"])
def test_chains_keep_to_the_pairs_and_group_given(group: str) -> None:
    cases = draw_examples(graph_cases(SPEC, LEVEL, pairs=BI_PAIRS, group=group), 8, 2)
    assert len(cases) == 8
    for case in cases:
        assert SPEC.operator(case.operators[0]).group == group, case.strategy
        assert _modes(case) <= BI_PAIRS, case.strategy  # no fp32 ADD in an integer claim
        outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
        assert outcome.kind == "valid", f"{case.strategy}: {outcome}"


def test_a_begun_chain_is_a_transpose_that_moves_elements_then_a_reshape() -> None:
    cases = draw_examples(chain_cases(SPEC, LEVEL, Budget(), BI_PAIRS, "TRANSPOSE>RESHAPE"), 8, 3)
    assert len(cases) == 8
    for case in cases:
        assert case.operators == ["TRANSPOSE", "RESHAPE"] and case.operator == "RESHAPE"
        transpose, reshape = case.graph.main.operators
        assert reshape.inputs[0] == transpose.outputs[0]
        shape = case.graph.main.tensors[transpose.inputs[0]].shape
        moved = [a for a in transpose.attributes["perms"] if shape[a] > 1]
        assert moved != sorted(moved), case  # folding the transpose away would show
        assert evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL).kind == "valid"


def test_chain_starts_are_groups_that_can_grow_and_the_folded_pairs() -> None:
    def starts(ops: set[str]) -> list[str]:
        return chain_starts(SPEC, [p for p in BI_PAIRS if p[0] in ops])

    assert starts({"ADD", "SUB"}) == ["elementwise-binary"]
    assert starts({"TRANSPOSE", "RESHAPE"}) == ["data-layout", "TRANSPOSE>RESHAPE"]
    assert starts({"RESCALE"}) == [] and starts({"CONCAT"}) == []  # nothing takes their output
    every = chain_starts(SPEC, BI_PAIRS)
    assert {"tensor", "data-layout", "elementwise-binary"} <= set(every)
    assert "control-flow" not in every


@pytest.mark.parametrize("conv", ["CONV2D", "DEPTHWISE_CONV2D", "CONV3D"])
def test_pad_then_convolution_pads_spatial_axes_with_another_value(conv: str) -> None:
    cases = draw_examples(chain_cases(SPEC, LEVEL, Budget(), BI_PAIRS, f"PAD>{conv}"), 6, 1)
    assert len(cases) == 6
    for case in cases:
        assert case.operators == ["PAD", conv] and case.operator == conv
        assert _modes(case) <= BI_PAIRS
        pad, op = case.graph.main.operators
        assert op.inputs[0] == pad.outputs[0]
        padding = np.asarray(case.graph.main.tensors[pad.inputs[1]].data).reshape(-1, 2)
        assert not padding[0].any() and not padding[-1].any() and padding.any()  # N, C: not
        assert pad.attributes["pad_const"] != op.attributes["input_zp"]  # a fold shows
        outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
        assert outcome.kind == "valid", f"{case.strategy}: {outcome}"
        expect(case.graph, case.inputs, spec=SPEC, level=LEVEL)


def test_float_pad_const_is_not_zero() -> None:
    pairs = frozenset(
        (m.operator, m.mode) for m in SPEC.modes() if "fp" in m.mode or "bf" in m.mode
    )
    for case in draw_examples(chain_cases(SPEC, LEVEL, Budget(), pairs, "PAD>CONV2D"), 6, 2):
        pad = case.graph.main.operators[0]
        assert case.graph.main.tensors[pad.inputs[0]].dtype.is_float
        assert 0.5 <= abs(pad.attributes["pad_const"]) <= 4


def test_a_rounding_float_result_feeds_only_a_composed_chain() -> None:
    # fp16 ADD(1, 2**-11): a tie between 1 and 1 + 2**-10, rounded to even, is 1; an
    # implementation that runs the sequence in fp32 (compliant: introduction, operator
    # sequence rule) keeps 1 + 2**-11.  SUB(x, 1) then gives 0 or 2**-11 = 4.88e-4, far
    # apart, so no rule applied to the reference's rounded ADD could judge both: such a
    # chain is judged by its composed bound (tests/reference/test_chain_bound.py).
    one, half_ulp = np.float16(1.0), np.float16(2.0**-11)
    assert np.float16(one + half_ulp) == one
    assert np.float32(one) + np.float32(half_ulp) - np.float32(1.0) == np.float32(2.0**-11)
    assert not deterministic("ADD") and not deterministic("MUL") and not deterministic("CAST")
    assert deterministic("ABS") and deterministic("RESHAPE") and deterministic("GREATER")
    # the chains drawn: a float result but the last is exact, or the output's bound is
    # composed through every operator after it (never a comparison of a rounded value)
    ops = {"ADD", "MUL", "ABS", "RESHAPE", "GREATER", "CAST"}
    floats = {(m.operator, m.mode) for m in SPEC.modes() if m.operator in ops}
    floats = {p for p in floats if p[1] in ("fp16", "fp32") or p[0] == "CAST"}
    cases = draw_examples(graph_cases(SPEC, LEVEL, pairs=floats), 30, 5)
    composed = 0
    for case in cases:
        main = case.graph.main
        if needs_composing(main):
            out = main.outputs[0]
            check = expect(case.graph, case.inputs, spec=SPEC, level=LEVEL).checks[out]
            assert check.descriptor.rule == COMPOSED_RULE, case.strategy
            composed += 1
            continue
        for op in main.operators[:-1]:
            t = main.tensors[op.outputs[0]]
            assert not t.dtype.is_float or op.op in ("ABS", "RESHAPE"), case.strategy
    assert composed and composed < len(cases)


def test_pad_convolution_chains_leave_out_block_scaled_modes() -> None:
    # A PAD > CONV2D chain holds the convolution's weight as an array: a bs32 weight
    # (TOSA 1.1) cannot be one, so those modes start no such chain.
    from conformance.spec import load_revision
    from strategies.chains import _pad_modes
    from strategies.valid import binds_block_scaled

    v11 = load_revision("1.1-draft")
    modes = _pad_modes(v11, None, "CONV2D")
    assert modes and not any(binds_block_scaled(m) for m in modes)
    assert any(binds_block_scaled(m) for m in v11.operator("CONV2D").modes)

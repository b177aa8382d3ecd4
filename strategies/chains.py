"""Chains of operators for a pack (:func:`chain_starts`, :func:`chain_cases`): from
each operator group of a claim, and pairs of operators a graph rewrite may fold wrongly
(TRANSPOSE -> RESHAPE, PAD -> convolution).  The chains themselves are
:mod:`strategies.graphs`."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from hypothesis import reject
from hypothesis import strategies as st

from conformance.dtypes import DType
from conformance.spec import Level, Spec, TypeSupport
from reference.engine import evaluate
from strategies.case import Case, CaseSpec, TensorDraw, shape_tensor
from strategies.graphs import (
    Chain,
    Step,
    build_chain,
    can_grow,
    first_modes,
    graph_cases,
    output_type,
    renamed,
)
from strategies.recipes import RecipeContext, load_all
from strategies.shapes import Budget
from strategies.valid import binds_block_scaled

# -- PAD -> convolution ------------------------------------------------------------------
#
# A graph rewrite folds a PAD of the spatial axes into the convolution that takes its
# output (its own pad attribute), which is only right when pad_const is the value the
# convolution's padding stands for: input_zp (0 for floats).  The chain is a drawn
# convolution whose input is cut back by a border that a PAD with another pad_const
# puts back, so the convolution's shapes stay those its recipe drew.

def padded_convolutions(spec: Spec) -> list[str]:
    """The operators a PAD folds into: those with a ``weight`` input and a ``pad``
    attribute (CONV2D, DEPTHWISE_CONV2D, CONV3D; not TRANSPOSE_CONV2D, whose out_pad
    adds to the output), read from the revision's tosa.xml."""
    return [
        op.name
        for op in spec.operators.values()
        if any(a.name == "weight" for a in op.inputs)
        and any(a.name == "pad" for a in op.attributes)
    ]


def _pad_const(draw: st.DrawFn, dt: DType, zp: int) -> int | float:
    """A value of ``dt`` other than ``zp``; a float of 0.5 to 4 in magnitude, so that
    the border it makes is past the convolution's error bound."""
    if dt.is_int:
        lo, hi = dt.int_range
        v = draw(st.integers(lo, hi), label="pad_const")
        return v if v != zp else (zp + 1 if zp < hi else zp - 1)
    magnitude = draw(st.floats(0.5, 4), label="pad_const magnitude")
    sign = -1.0 if draw(st.booleans(), label="pad_const negative") else 1.0
    return float(np.float64(sign * magnitude).astype(dt.storage))


def _pad_conv_modes(
    spec: Spec, pairs: frozenset[tuple[str, str]] | None, conv: str
) -> list[TypeSupport]:
    """The modes of ``conv`` whose input type a PAD mode takes, both among ``pairs``;
    not TOSA 1.1's block-scaled ones (the chain's graph holds its weight as an array)."""
    pad_modes = {m.dtype("in_out_t"): m for m in spec.operator("PAD").modes}
    return [
        m
        for m in spec.operator(conv).modes
        if m.dtype("in_t") in pad_modes
        and not binds_block_scaled(m)
        and (pairs is None or {(conv, m.mode), ("PAD", pad_modes[m.dtype("in_t")].mode)} <= pairs)
    ]


def _pad_conv_cases(
    spec: Spec,
    level: Level,
    budget: Budget,
    pairs: frozenset[tuple[str, str]] | None,
    conv: str,
    turn: float = 0.0,
) -> st.SearchStrategy[Case]:
    op_spec = spec.operator(conv)
    pad_modes = {m.dtype("in_out_t"): m for m in spec.operator("PAD").modes}
    modes = _pad_conv_modes(spec, pairs, conv)
    if not modes:
        raise LookupError(f"no mode of PAD -> {conv} among the pairs given")
    k = int(turn * len(modes)) % len(modes)  # as graph_cases' turn
    modes = modes[k:] + modes[:k]
    recipe = load_all()[op_spec.name]

    @st.composite
    def draw_case(draw: st.DrawFn) -> Case:
        m = draw(st.sampled_from(modes), label="convolution mode")
        drawn = recipe(draw, RecipeContext(spec, op_spec, m, level, budget))
        assert isinstance(drawn, CaseSpec)
        # Laid out as the revision declares it: 1.0's zero points are operands too.
        conv_case = renamed(drawn, "op1_").in_revision(spec)
        x, *operands = conv_case.inputs
        padding, cut = [0, 0], [slice(None)]  # N: never padded (nor C, below)
        for i, d in enumerate(x.shape[1:-1], start=1):
            before = draw(st.integers(0, min(2, d - 1)), label=f"pad before axis {i}")
            after = draw(st.integers(0, min(2, d - 1 - before)), label=f"pad after axis {i}")
            padding += [before, after]
            cut.append(slice(before, d - after))
        if not any(padding):
            reject()  # every spatial axis of length 1: no border to cut
        padding += [0, 0]
        assert x.values is not None
        inner = np.ascontiguousarray(x.values[tuple(cut)])
        zp = _input_zp(conv_case) if x.dtype.is_int else 0
        pad = CaseSpec(
            "PAD",
            pad_modes[x.dtype].mode,
            [
                TensorDraw("op0_input1", inner.shape, x.dtype, inner),
                shape_tensor("op0_padding", padding),
            ],
            [TensorDraw(x.name, x.shape, x.dtype)],
            {"pad_const": _pad_const(draw, x.dtype, zp)},
        )
        out = conv_case.outputs[0]
        step = Step(conv, [t.name for t in conv_case.inputs], operands, out, conv_case.attributes)
        case = build_chain(spec, pad, [step])
        if evaluate(case.graph, case.inputs, spec=spec, level=level).kind != "valid":
            reject()  # a pad_const past what the accumulator holds
        return case

    return draw_case()


# -- chains for a pack -----------------------------------------------------------------

def folded_pairs(spec: Spec) -> list[tuple[str, ...]]:
    """Chains that begin with a pair of operators a graph rewrite may fold wrongly (a
    TRANSPOSE -> RESHAPE folded into one RESHAPE, a PAD into a convolution), ending
    there: a vector is checked, and a mutant run, by its last operator."""
    return [("TRANSPOSE", "RESHAPE"), *(("PAD", conv) for conv in padded_convolutions(spec))]


def chain_starts(spec: Spec, pairs: Iterable[tuple[str, str]]) -> list[str]:
    """Where a pack's chains start, within ``pairs`` (a claim's): each operator group a
    chain can start in, then each of :func:`folded_pairs` whose operators are all in
    ``pairs``
    (spelt "A>B")."""
    wanted = frozenset(pairs)
    level = next(iter(spec.levels.values()))  # the modes alone decide where a chain grows
    ch = Chain(spec, level, Budget(), frozenset(o for o, _ in wanted), wanted)
    firsts = [
        m
        for m in first_modes(spec, ch.ops, wanted)
        if can_grow(ch, output_type(spec.operator(m.operator), m))
    ]
    groups = sorted({spec.operator(m.operator).group for m in firsts})
    ops = {o for o, _ in wanted}
    starts = {m.operator for m in firsts}
    folds = [
        p
        for p in folded_pairs(spec)
        if set(p) <= ops
        and (_pad_conv_modes(spec, wanted, p[1]) if p[0] == "PAD" else p[0] in starts)
    ]
    return groups + [">".join(p) for p in folds]


def _input_zp(case: CaseSpec) -> int:
    """The convolution's input zero point: an attribute (the draft) or the value of its
    [1] input (TOSA 1.0)."""
    if "input_zp" in case.attributes:
        return int(case.attributes["input_zp"])
    for t in case.inputs:
        if t.name.endswith("input_zp") and t.values is not None:
            return int(np.asarray(t.values).reshape(-1)[0])
    return 0


def chain_cases(
    spec: Spec,
    level: Level,
    budget: Budget,
    pairs: Iterable[tuple[str, str]],
    start: str,
    turn: float = 0.0,
) -> st.SearchStrategy[Case]:
    """The chains of a start :func:`chain_starts` names: 2-5 operators from an operator
    group, or exactly the operators of "A>B"; ``turn`` as :func:`graph_cases`'."""
    if ">" in start:
        begin = tuple(start.split(">"))
        if begin[0] == "PAD":
            return _pad_conv_cases(spec, level, budget, frozenset(pairs), begin[1], turn)
        return graph_cases(
            spec, level, budget, pairs=pairs, begin=begin, length=(2, len(begin)), turn=turn
        )
    return graph_cases(spec, level, budget, pairs=pairs, group=start, turn=turn)

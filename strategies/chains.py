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
from conformance.graph import Block, Operator
from conformance.operator_table import family
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

# -- PAD -> convolution or pool ----------------------------------------------------------
#
# A graph rewrite folds a PAD of the spatial axes into the operator that takes its
# output (its own pad attribute).  For a convolution that is only right when pad_const
# is the value the convolution's padding stands for: input_zp (0 for floats).  For a
# pool it is never quite right: AVG_POOL2D leaves its own padding out of the divisor,
# MAX_POOL2D out of the maximum, where PAD's border counts.  The chain is a drawn
# consumer whose input is cut back by a border that a PAD puts back, so its shapes stay
# those its recipe drew.

POOLS = family(("AVG_POOL2D", "MAX_POOL2D"))


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


def _above(dt: DType, x: np.ndarray) -> int | float:
    """A pad_const above every element of ``x``: what a max pool's own padding is not."""
    if dt.is_int:
        return dt.int_range[1]
    top = float(np.nanmax(np.abs(x.astype(np.float64)))) if x.size else 0.0
    return float(np.float64(min(2 * top + 1, dt.fp.normal_max)).astype(dt.storage))


def _pad_modes(
    spec: Spec, pairs: frozenset[tuple[str, str]] | None, consumer: str
) -> list[TypeSupport]:
    """The modes of ``consumer`` whose input type a PAD mode takes, both among ``pairs``;
    not TOSA 1.1's block-scaled ones (the chain's graph holds its weight as an array)."""
    pad_modes = {m.dtype("in_out_t"): m for m in spec.operator("PAD").modes}
    return [
        m
        for m in spec.operator(consumer).modes
        if (dt := _input_type(m)) in pad_modes
        and not binds_block_scaled(m)
        and (pairs is None or {(consumer, m.mode), ("PAD", pad_modes[dt].mode)} <= pairs)
    ]


def _input_type(m: TypeSupport) -> DType:
    return m.dtype("in_t" if "in_t" in m.bindings else "in_out_t")


def pool_fold_legal(padding: list[int], pool: Operator) -> bool:
    """Whether PAD's ``padding`` (N, H, W, C pairs) fits ``pool``'s own pad: N and C
    unpadded, each side's pad plus PAD's below the kernel (the pool's ERROR_IF), so a
    compiler could fold it."""
    if len(padding) != 8 or any(padding[:2]) or any(padding[6:]):
        return False
    pad = [int(v) for v in pool.attributes["pad"]]
    kernel = [int(v) for v in pool.attributes["kernel"]]
    return all(pad[i] + padding[2 + i] < kernel[i // 2] for i in range(4))


def pad_then_cases(
    spec: Spec,
    level: Level,
    budget: Budget,
    pairs: frozenset[tuple[str, str]] | None,
    consumer: str,
    turn: float = 0.0,
) -> st.SearchStrategy[Case]:
    op_spec = spec.operator(consumer)
    pad_modes = {m.dtype("in_out_t"): m for m in spec.operator("PAD").modes}
    modes = _pad_modes(spec, pairs, consumer)
    if not modes:
        raise LookupError(f"no mode of PAD -> {consumer} among the pairs given")
    k = int(turn * len(modes)) % len(modes)  # as graph_cases' turn
    modes = modes[k:] + modes[:k]
    recipe = load_all()[op_spec.name]
    pool = consumer in POOLS

    @st.composite
    def draw_case(draw: st.DrawFn) -> Case:
        m = draw(st.sampled_from(modes), label=f"{consumer.lower()} mode")
        drawn = recipe(draw, RecipeContext(spec, op_spec, m, level, budget))
        assert isinstance(drawn, CaseSpec)
        # Laid out as the revision declares it: 1.0's zero points are operands too.
        case = renamed(drawn, "op1_").in_revision(spec)
        x, *operands = case.inputs
        # A pool's fold is legal only while its pad and PAD's stay below the kernel.
        room = [2, 2] * (len(x.shape) - 2)
        if pool:
            pad, kernel = case.attributes["pad"], case.attributes["kernel"]
            room = [max(0, int(kernel[i // 2]) - 1 - int(pad[i])) for i in range(4)]
        padding, cut = [0, 0], [slice(None)]  # N: never padded (nor C, below)
        for i, d in enumerate(x.shape[1:-1], start=1):
            top = min(room[2 * i - 2], d - 1)
            before = draw(st.integers(0, top), label=f"pad before axis {i}")
            top = min(room[2 * i - 1], d - 1 - before)
            after = draw(st.integers(0, top), label=f"pad after axis {i}")
            padding += [before, after]
            cut.append(slice(before, d - after))
        if not any(padding):
            reject()  # every spatial axis of length 1 (or no room): no border to cut
        padding += [0, 0]
        assert x.values is not None
        inner = np.ascontiguousarray(x.values[tuple(cut)])
        zp = _input_zp(case) if x.dtype.is_int else 0
        if consumer == "AVG_POOL2D":
            value: int | float = zp  # the one a fold could take: only the divisor differs
        elif consumer == "MAX_POOL2D":
            value = _above(x.dtype, inner)
        else:
            value = _pad_const(draw, x.dtype, zp)
        pad = CaseSpec(
            "PAD",
            pad_modes[x.dtype].mode,
            [
                TensorDraw("op0_input1", inner.shape, x.dtype, inner),
                shape_tensor("op0_padding", padding),
            ],
            [TensorDraw(x.name, x.shape, x.dtype)],
            {"pad_const": value},
        )
        out = case.outputs[0]
        step = Step(consumer, [t.name for t in case.inputs], operands, out, case.attributes)
        chain = build_chain(spec, pad, [step])
        if evaluate(chain.graph, chain.inputs, spec=spec, level=level).kind != "valid":
            reject()  # a pad_const past what the accumulator holds
        return chain

    return draw_case()


def conv_input_zp(case: Case, block: Block, op: Operator) -> int:
    """A convolution's (or pool's) input zero point in a built graph: an attribute (the
    draft) or its constant [1] input (TOSA 1.0); 0 where it has none."""
    if "input_zp" in op.attributes:
        return int(op.attributes["input_zp"])
    for name in op.inputs[1:]:
        if name.endswith("input_zp"):
            data = block.tensors[name].data
            v = case.inputs.get(name, data)
            if v is not None:
                return int(np.asarray(v).reshape(-1)[0])
    return 0


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
        if set(p) <= ops and (_pad_modes(spec, wanted, p[1]) if p[0] == "PAD" else p[0] in starts)
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
    mode: str = "",
    index: int = 0,
) -> st.SearchStrategy[Case]:
    """The chains of a start :func:`chain_starts` names: 2-5 operators from an operator
    group, or exactly the operators of "A>B"; ``turn`` as :func:`graph_cases`'.  A start
    "rewrite:KEY" is a chain of that graph rewrite ending in ``mode`` of its last
    operator (strategies.rewrites), ``index`` the job's (it picks the variant)."""
    if start.startswith("rewrite:"):
        from strategies.rewrites import rewrite_cases  # it builds on this module

        key = start.removeprefix("rewrite:")
        return rewrite_cases(spec, level, budget, pairs, key, mode, index)
    if ">" in start:
        begin = tuple(start.split(">"))
        if begin[0] == "PAD":
            return pad_then_cases(spec, level, budget, frozenset(pairs), begin[1], turn)
        return graph_cases(
            spec, level, budget, pairs=pairs, begin=begin, length=(2, len(begin)), turn=turn
        )
    return graph_cases(spec, level, budget, pairs=pairs, group=start, turn=turn)

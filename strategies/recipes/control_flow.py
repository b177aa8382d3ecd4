"""Recipes for COND_IF and WHILE_LOOP, and their error cases.

Both build whole graphs: the main block holds the operator under test, other blocks
its branches (COND_IF) or its condition and body (WHILE_LOOP).  Blocks compute with a
few simple operators (IDENTITY, ABS, ADD/SUB/MUL with a constant, BITWISE_NOT,
LOGICAL_NOT, REVERSE ...) on tensors of every ordinary element type, and may hold the
next control-flow operator, down to the level's MAX_NESTING (the innermost one at
depth MAX_NESTING - 1; one more is the nesting ERROR_IF).  Loop bodies may also hold
a COND_IF on the counter (its branch switches between iterations) and swap two
carried tensors of one signature (a permuted carry).  The block operators are
exact or correctly rounded, so a control-flow output has one right answer.

The rules a case breaks are the ones reference/ops/control_flow.py reports, one per
error case, always on the outermost operator (the one under test).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from conformance import dtypes
from conformance.builder import BlockBuilder, GraphBuilder
from conformance.dtypes import BOOL, I32_MAX, I32_MIN, DType
from conformance.graph import Graph
from conformance.operator_table import OperatorTable
from reference.arguments import INPUTS_CLAUSE, TYPES_CLAUSE
from reference.ops.control_flow import (
    BODY_INPUT_CLAUSE,
    BODY_OUTPUT_CLAUSE,
    COND_GRAPH_SIZE_CLAUSE,
    COND_GRAPH_TYPE_CLAUSE,
    COND_INPUT_CLAUSE,
    CONDITION_SIZE_CLAUSE,
    ELSE_INPUT_CLAUSE,
    ELSE_OUTPUT_CLAUSE,
    LOOP_LIST_CLAUSE,
    NESTING_CLAUSE,
    THEN_INPUT_CLAUSE,
    THEN_OUTPUT_CLAUSE,
)
from strategies.case import Case
from strategies.graph_breakers import graph_breaks
from strategies.recipes import RecipeContext, recipe
from strategies.recipes.control_flow_blocks import (
    Sig,
    block_op,
    data_range,
)
from strategies.shapes import Budget, shapes

DATA_TYPES: tuple[DType, ...] = (
    dtypes.BOOL,
    dtypes.I8,
    dtypes.I16,
    dtypes.I32,
    dtypes.FP16,
    dtypes.BF16,
    dtypes.FP32,
)
NEST_CAP = 8  # deepest nesting drawn: level 'none' allows 256, too deep for a test
SMALL = Budget(max_elements=64, max_dim=8)  # the blocks are under test, not bulk data


def max_rank(rc: RecipeContext) -> int:
    return int(rc.level["MAX_RANK"])


def draw_sigs(draw: st.DrawFn, rc: RecipeContext, lo: int, hi: int, label: str) -> list[Sig]:
    count = draw(st.integers(lo, hi), label=f"{label}: count")
    return [
        Sig(
            draw(shapes(0, max_rank(rc), SMALL, label=f"{label} {k}: shape")),
            draw(st.sampled_from(DATA_TYPES), label=f"{label} {k}: type"),
        )
        for k in range(count)
    ]


def unit_shape(draw: st.DrawFn, lo: int, hi: int, label: str) -> tuple[int, ...]:
    """A shape of one element (every dimension 1) and rank in [lo, hi]."""
    return (1,) * draw(st.integers(lo, hi), label=f"{label}: rank")


def values_for(draw: st.DrawFn, rc: RecipeContext, sig: Sig, label: str) -> np.ndarray:
    return rc.values(draw, sig.dtype, sig.shape, data_range(sig.dtype), label)


# -- breaking a tensor list ------------------------------------------------------------


def other_shape(draw: st.DrawFn, shape: tuple[int, ...], rank_max: int) -> tuple[int, ...]:
    """A different shape: one dimension larger, or a rank more (or less at the limit)."""
    grow = draw(st.booleans(), label="change a dimension")
    if shape and grow:
        k = draw(st.integers(0, len(shape) - 1), label="dimension changed")
        return tuple(d + 1 if i == k else d for i, d in enumerate(shape))
    return (1, *shape) if len(shape) < rank_max else shape[1:]


def other_sig(draw: st.DrawFn, sig: Sig, rank_max: int) -> Sig:
    if draw(st.booleans(), label="change the type (else the shape)"):
        others = [d for d in DATA_TYPES if d is not sig.dtype]
        return Sig(sig.shape, draw(st.sampled_from(others), label="new type"))
    return Sig(other_shape(draw, sig.shape, rank_max), sig.dtype)


def broken_sigs(
    draw: st.DrawFn, rc: RecipeContext, sigs: Sequence[Sig], changeable: Sequence[int]
) -> list[Sig]:
    """``sigs`` with one more tensor, or one of the ``changeable`` ones retyped,
    reshaped or (the last one) dropped."""
    out = list(sigs)
    kinds = ["extra", *(["change", "drop"] if changeable else [])]
    kind = draw(st.sampled_from(kinds), label="list broken by")
    if kind == "extra":
        out.extend(draw_sigs(draw, rc, 1, 1, "extra tensor"))
    elif kind == "drop" and changeable[-1] == len(out) - 1:
        out.pop()
    else:
        k = draw(st.sampled_from(list(changeable)), label="tensor changed")
        out[k] = other_sig(draw, out[k], max_rank(rc))
    return out


def _cast_targets(rc: RecipeContext, dt: DType) -> list[DType]:
    modes = rc.spec.operator("CAST").modes
    return [m.dtype("out_t") for m in modes if m.dtype("in_t") is dt]


def break_outputs(
    draw: st.DrawFn, rc: RecipeContext, b: BlockBuilder, outs: list[str], sigs: list[Sig]
) -> list[str]:
    """A block's outputs made to disagree with the list they are compared with: one
    more (a copy), one fewer, one CAST to another type or RESHAPEd to another rank."""
    kinds = ["extra", *(["drop", "cast", "reshape"] if outs else [])]
    kind = draw(st.sampled_from(kinds), label="outputs broken by")
    if kind == "extra":
        if not outs:
            return [b.tensor("extra", (1,), BOOL, data=np.array([True]))]
        k = draw(st.integers(0, len(outs) - 1), label="output copied")
        b.tensor("extra", sigs[k].shape, sigs[k].dtype)
        b.op("IDENTITY", [outs[k]], ["extra"])
        return [*outs, "extra"]
    if kind == "drop":
        return outs[:-1]
    k = draw(st.integers(0, len(outs) - 1), label="output changed")
    sig = sigs[k]
    if kind == "cast" or not sig.shape:  # RESHAPE takes rank 1 and more
        target = draw(st.sampled_from(_cast_targets(rc, sig.dtype)), label="cast to")
        b.tensor("broken", sig.shape, target)
        b.op("CAST", [outs[k]], ["broken"])
    else:
        shape = (1, *sig.shape) if len(sig.shape) < max_rank(rc) else (int(np.prod(sig.shape)),)
        b.tensor("broken", shape, sig.dtype)
        size = b.tensor("broken_shape", (len(shape),), dtypes.SHAPE, data=np.array(shape, np.int64))
        b.op("RESHAPE", [outs[k], size], ["broken"])
    return [*outs[:k], "broken", *outs[k + 1 :]]


def make_case(rc: RecipeContext, g: GraphBuilder, inputs: dict[str, np.ndarray]) -> Case:
    graph: Graph = g.build()
    return Case(
        graph=graph,
        inputs=inputs,
        operator=rc.name,
        mode=rc.mode.mode,
        strategy=f"recipe:{rc.name}",
        # every operator in the graph, once, in the order they first appear
        operators=list(dict.fromkeys(op.op for block in graph.blocks() for op in block.operators)),
    )


def error_case(case: Case, clause: str) -> Case:
    case.kind = "error"
    case.rule_broken = clause
    case.strategy = f"{case.strategy} / breaks: {clause}"
    return case


def nesting_depth(draw: st.DrawFn, rc: RecipeContext, fault: str | None) -> int:
    """How many control-flow operators nest (1: no nesting), 0 when the case cannot be
    drawn: the nesting error needs MAX_NESTING + 1 of them, past NEST_CAP at some
    levels.  Other error cases break the outermost operator alone."""
    limit = int(rc.level["MAX_NESTING"])
    if fault == "nesting":
        return limit + 1 if limit + 1 <= NEST_CAP else 0
    if fault is None:
        return draw(st.integers(1, min(limit, NEST_CAP)), label="nesting depth")
    return 1


# -- COND_IF ---------------------------------------------------------------------------


@dataclass
class CondPlan:
    """A nest of COND_IFs: ``conds[k]`` is the condition shape of the COND_IF at depth k;
    each passes the conditions of the deeper ones and the data tensors into its branches,
    and one branch (``nest_then[k]``: the then branch) holds the next COND_IF."""

    conds: list[tuple[int, ...]]
    nest_then: list[bool]
    data: list[Sig]
    outs: list[int]  # output k of every COND_IF is computed from data[outs[k]]
    fault: str | None = None  # the rule the outermost COND_IF breaks


def _branch_body(
    draw: st.DrawFn, b: BlockBuilder, plan: CondPlan, data: list[str], sigs: list[Sig]
) -> list[str]:
    """A branch without a deeper COND_IF: output k from data[outs[k]] (a constant of
    the output's type when a broken input list dropped that tensor)."""
    outs = []
    for k, j in enumerate(plan.outs):
        name = f"out{k}"
        if j < len(data):
            block_op(draw, b, data[j], name, sigs[j], f"{b.name}.{k}")
        else:
            sig = plan.data[j]
            b.tensor(name, sig.shape, sig.dtype, data=np.zeros(sig.shape, sig.dtype.storage))
        outs.append(name)
    return outs


def _add_cond_if(
    draw: st.DrawFn,
    rc: RecipeContext,
    g: GraphBuilder,
    b: BlockBuilder,
    plan: CondPlan,
    depth: int,
    ins: list[str],
    in_sigs: list[Sig],
) -> list[str]:
    """Add the COND_IF at ``depth`` to ``b``, reading ``ins`` (its condition first);
    returns its output tensors."""
    fault = plan.fault if depth == 0 else None
    n_conds = len(plan.conds) - depth - 1  # deeper conditions passed into the branches
    list_sigs = in_sigs[1:]
    blocks = {}
    for branch in ("then", "else"):
        bb = g.block(f"{branch}{depth or ''}")
        blocks[branch] = bb.name
        sigs = list_sigs
        if fault == f"{branch}_in":
            sigs = broken_sigs(draw, rc, sigs, range(n_conds, len(sigs)))
        names = [bb.input(f"in{k}", s.shape, s.dtype) for k, s in enumerate(sigs)]
        if n_conds and plan.nest_then[depth] == (branch == "then"):
            outs = _add_cond_if(draw, rc, g, bb, plan, depth + 1, names, sigs)
        else:
            outs = _branch_body(draw, bb, plan, names[n_conds:], sigs[n_conds:])
        if fault == f"{branch}_out":
            out_sigs = [plan.data[j] for j in plan.outs]
            outs = break_outputs(draw, rc, bb, outs, out_sigs)
        for name in outs:
            bb.output(name)
    results = []
    for k, j in enumerate(plan.outs):
        sig = plan.data[j]
        results.append(b.tensor(f"y{depth}_{k}", sig.shape, sig.dtype))
    b.op("COND_IF", ins, results, then_graph=blocks["then"], else_graph=blocks["else"])
    return results


def cond_if_case(
    draw: st.DrawFn,
    rc: RecipeContext,
    fault: str | None = None,
    *,
    depth: int | None = None,
    reach: bool = False,
    lists: int | None = None,
) -> Case | None:
    """A case, valid or breaking ``fault``.  ``depth`` fixes how many operators nest;
    with ``reach`` (always for the nesting error) the innermost one runs; ``lists``
    fixes the length of the outermost operator's input_list and output_list (the
    deeper ones' lists are at most as long: level cases of MAX_TENSOR_LIST_SIZE)."""
    depth = depth or nesting_depth(draw, rc, fault)
    reach = reach or fault == "nesting"
    if depth == 0:
        return None
    lo, hi = rc.rank_range("condition")
    conds = [unit_shape(draw, lo, hi, f"condition {k}") for k in range(depth)]
    nest_then = [draw(st.booleans(), label=f"nest in then {k}") for k in range(depth - 1)]
    if lists is None:
        data = draw_sigs(draw, rc, 1, 3, "data")
        n_out = draw(st.integers(1, 3), label="outputs")
    else:  # input_list: the deeper operators' conditions, then the data
        if lists < depth:
            raise ValueError(f"a list of {lists} cannot carry {depth - 1} conditions and data")
        data = draw_sigs(draw, rc, lists - depth + 1, lists - depth + 1, "data")
        n_out = lists
    outs = [draw(st.integers(0, len(data) - 1), label=f"output {k} from") for k in range(n_out)]
    plan = CondPlan(conds, nest_then, data, outs, fault)

    g = GraphBuilder(rc.spec, strict=fault is None)
    main = g.block("main")
    inputs: dict[str, np.ndarray] = {}
    cond_sigs = [Sig(s, BOOL) for s in conds]
    first = cond_sigs[0]
    if fault == "cond_size":
        shape = list(unit_shape(draw, 1, hi, "condition"))
        shape[draw(st.integers(0, len(shape) - 1), label="long dimension")] = 2
        first = Sig(tuple(shape), BOOL)
    elif fault == "cond_type":
        others = [d for d in DATA_TYPES if d is not BOOL]
        first = Sig(first.shape, draw(st.sampled_from(others), label="condition type"))
    elif fault == "cond_rank":
        first = Sig((), BOOL)
    cond_sigs[0] = first
    for k, sig in enumerate(cond_sigs):
        main.input(f"c{k}", sig.shape, sig.dtype)
        if reach and k < depth - 1:
            value: np.ndarray = np.full(sig.shape, nest_then[k])  # reach the innermost
        else:
            value = values_for(draw, rc, sig, f"c{k}")
        inputs[f"c{k}"] = value.astype(sig.dtype.storage)
    for k, sig in enumerate(data):
        main.input(f"x{k}", sig.shape, sig.dtype)
        inputs[f"x{k}"] = values_for(draw, rc, sig, f"x{k}")
    names = [f"c{k}" for k in range(depth)] + [f"x{k}" for k in range(len(data))]
    for name in _add_cond_if(draw, rc, g, main, plan, 0, names, cond_sigs + data):
        main.output(name)
    return make_case(rc, g, inputs)


@recipe("COND_IF")
def cond_if(draw: st.DrawFn, rc: RecipeContext) -> Case:
    # Some COND_IFs run in a loop body, once an iteration, their branch switching.
    loop = int(rc.level["MAX_NESTING"]) >= 2 and draw(st.integers(0, 2), label="in a loop") == 0
    case = while_loop_case(draw, rc, switch=True) if loop else cond_if_case(draw, rc)
    assert case is not None
    return case


def _register_fault(
    op: str,
    make: Callable[..., Case | None],
    fault: str,
    clause: str,
    *,
    optional: bool = False,
    applies: Callable[[RecipeContext], bool] | None = None,
) -> None:
    """A breaker of ``op`` that builds its case with ``make(draw, rc, fault)``."""

    @graph_breaks(op, clause=clause, optional=optional, applies=applies)
    def breaker(draw: st.DrawFn, rc: RecipeContext) -> Case | None:
        case = make(draw, rc, fault)
        return None if case is None else error_case(case, clause)


def _register_cond_if(
    fault: str,
    clause: str,
    *,
    optional: bool = False,
    applies: Callable[[RecipeContext], bool] | None = None,
) -> None:
    _register_fault("COND_IF", cond_if_case, fault, clause, optional=optional, applies=applies)


def _condition_has_rank(rc: RecipeContext) -> bool:
    """Whether the condition is declared with rank 1 and more (the draft; TOSA 1.0
    allows rank 0, so a rank-0 condition breaks nothing there)."""
    return rc.rank_range("condition")[0] >= 1


_register_cond_if("nesting", NESTING_CLAUSE, optional=True)
for _branch, _in, _out in (
    ("then", THEN_INPUT_CLAUSE, THEN_OUTPUT_CLAUSE),
    ("else", ELSE_INPUT_CLAUSE, ELSE_OUTPUT_CLAUSE),
):
    _register_cond_if(f"{_branch}_in", _in)
    _register_cond_if(f"{_branch}_out", _out)
_register_cond_if("cond_size", CONDITION_SIZE_CLAUSE)
_register_cond_if("cond_type", TYPES_CLAUSE)
_register_cond_if("cond_rank", INPUTS_CLAUSE, applies=_condition_has_rank)


# -- WHILE_LOOP ------------------------------------------------------------------------


@dataclass
class LoopPlan:
    """A nest of WHILE_LOOPs over ``[counter, limit?, data...]``: the loop at depth k
    runs ``iterations[k]`` times (counter += 1 while limit > counter) and its body holds
    the loop at depth k + 1, which works on the body's new data."""

    counters: list[tuple[int, ...]]  # counter (and limit) shape per depth
    limit_in_list: list[bool]  # the limit travels in the tensor list (else a constant)
    iterations: list[int]
    data: list[Sig]
    fault: str | None = None
    switch: bool = False  # the outermost body holds a COND_IF on the counter


def _state_sigs(plan: LoopPlan, depth: int) -> list[Sig]:
    counter = Sig(plan.counters[depth], dtypes.I32)
    return [counter] * (1 + plan.limit_in_list[depth]) + plan.data


def _cond_block(
    draw: st.DrawFn, rc: RecipeContext, g: GraphBuilder, plan: LoopPlan, depth: int, limit: int
) -> str:
    fault = plan.fault if depth == 0 else None
    sigs = _state_sigs(plan, depth)
    lead = 1 + plan.limit_in_list[depth]
    if fault == "cond_in":
        sigs = broken_sigs(draw, rc, sigs, range(lead, len(sigs)))
    cb = g.block(f"cond{depth or ''}")
    names = [cb.input(f"in{k}", s.shape, s.dtype) for k, s in enumerate(sigs)]
    shape = plan.counters[depth]
    if plan.limit_in_list[depth]:
        bound = names[1]
    else:
        bound = cb.tensor("limit", shape, dtypes.I32, data=np.full(shape, limit, np.int32))
    if fault == "cond_type":  # the counter itself: one i32 element
        cb.output(names[0])
        return cb.name
    if fault == "cond_size" and shape and draw(st.booleans(), label="two elements (else two)"):
        # the limit broadcast along a dimension of 2: a condition of two elements
        shape = (2, *shape[1:])
        bound = cb.tensor("wide", shape, dtypes.I32, data=np.full(shape, limit, np.int32))
    cb.tensor("go", shape, BOOL)
    cb.op("GREATER", [bound, names[0]], ["go"])
    cb.output("go")
    if fault == "cond_size" and shape == plan.counters[depth]:  # two outputs
        cb.tensor("stop", shape, BOOL)
        cb.op("LOGICAL_NOT", ["go"], ["stop"])
        cb.output("stop")
    return cb.name


def _changed(b: BlockBuilder, src: str, dst: str, sig: Sig) -> None:
    """``dst``: ``src`` changed in (almost) every element - NOT for booleans and
    integers, + 1 for floating point (only inf, NaN and huge values stay)."""
    b.tensor(dst, sig.shape, sig.dtype)
    if sig.dtype is BOOL:
        b.op("LOGICAL_NOT", [src], [dst])
    elif sig.dtype.is_int:
        b.op("BITWISE_NOT", [src], [dst])
    else:
        ones = (1,) * len(sig.shape)
        one = b.tensor(f"{dst}_k", ones, sig.dtype, data=np.ones(ones).astype(sig.dtype.storage))
        b.op("ADD", [src, one], [dst])


def _counter_cond_if(
    draw: st.DrawFn,
    g: GraphBuilder,
    b: BlockBuilder,
    counter: tuple[str, tuple[int, ...], int, int],
    x: str,
    sig: Sig,
) -> str:
    """COND_IF(limit - m > counter, x) in a loop body: the then branch passes x, the
    else branch changes it, and the branch taken switches for the last m iterations,
    so one COND_IF runs with both conditions in one execution.  ``counter``: its
    tensor, shape, limit and the loop's iterations."""
    name, shape, limit, n = counter
    m = draw(st.integers(1, max(1, n - 1)), label=f"{b.name}: iterations in else")
    at = np.full(shape, max(I32_MIN, limit - m), np.int32)
    b.tensor("turn", shape, BOOL)
    b.op("GREATER", [b.tensor("turn_at", shape, dtypes.I32, data=at), name], ["turn"])
    then, other = g.block(f"{b.name}_then"), g.block(f"{b.name}_else")
    for bb in (then, other):
        bb.input("x", sig.shape, sig.dtype)
    then.output("x")
    _changed(other, "x", "y", sig)
    other.output("y")
    b.tensor("chosen", sig.shape, sig.dtype)
    b.op("COND_IF", ["turn", x], ["chosen"], then_graph=then.name, else_graph=other.name)
    return "chosen"


def _swapped_pair(draw: st.DrawFn, sigs: list[Sig], label: str) -> tuple[int, int] | None:
    """Two carried tensors (p < q) of one signature the body swaps - p from q's input,
    q from p's input passed through unchanged - or None when no two are alike: a
    permuted carry shows a loop that updates its carried tensors in place."""
    pairs = [(p, q) for q in range(len(sigs)) for p in range(q) if sigs[p] == sigs[q]]
    if not pairs:
        return None
    return draw(st.sampled_from(pairs), label=f"{label}: tensors swapped")


def _body_block(
    draw: st.DrawFn, rc: RecipeContext, g: GraphBuilder, plan: LoopPlan, depth: int, limit: int
) -> str:
    fault = plan.fault if depth == 0 else None
    sigs = _state_sigs(plan, depth)
    lead = 1 + plan.limit_in_list[depth]
    if fault == "body_in":
        sigs = broken_sigs(draw, rc, sigs, range(lead, len(sigs)))
    bb = g.block(f"body{depth or ''}")
    names = [bb.input(f"in{k}", s.shape, s.dtype) for k, s in enumerate(sigs)]
    shape = plan.counters[depth]
    one = bb.tensor("one", shape, dtypes.I32, data=np.ones(shape, np.int32))
    bb.tensor("next", shape, dtypes.I32)
    bb.op("ADD", [names[0], one], ["next"])
    outs = ["next"]
    if lead == 2:
        outs.append(names[1])  # the limit passes through unchanged
    swap = None if plan.fault else _swapped_pair(draw, sigs[lead:], bb.name)
    data = []
    for k in range(len(names) - lead):
        j = lead + (swap[1] if swap and k == swap[0] else k)
        block_op(draw, bb, names[j], f"d{k}", sigs[j], f"{bb.name}.{k}")
        data.append(f"d{k}")
    # The COND_IF nests one deeper; its condition has rank 1 and more (as the counter).
    room = depth + 2 <= int(rc.level["MAX_NESTING"]) and bool(shape)
    switch = plan.switch and depth == 0
    if data and room and not plan.fault and (switch or draw(st.integers(0, 3), label="IF") < 3):
        k = draw(st.integers(0, len(data) - 1), label=f"{bb.name}: COND_IF data")
        counter = (names[0], shape, limit, plan.iterations[depth])
        data[k] = _counter_cond_if(draw, g, bb, counter, data[k], sigs[lead + k])
    if depth + 1 < len(plan.iterations):
        inner = _add_while(draw, rc, g, bb, plan, depth + 1, None, data)
        data = inner[1 + plan.limit_in_list[depth + 1] :]
    if swap:
        data[swap[1]] = names[lead + swap[0]]
    outs += data
    if fault == "body_out":
        outs = break_outputs(draw, rc, bb, outs, sigs)
    for name in outs:
        bb.output(name)
    return bb.name


def _add_while(
    draw: st.DrawFn,
    rc: RecipeContext,
    g: GraphBuilder,
    b: BlockBuilder,
    plan: LoopPlan,
    depth: int,
    counter: tuple[str, str | None, int] | None,
    data: list[str],
) -> list[str]:
    """Add the WHILE_LOOP at ``depth`` to ``b``: ``counter`` names its counter and limit
    tensors in ``b`` (and the limit's value), or None for constants counting from 0."""
    shape = plan.counters[depth]
    if counter is None:
        n = plan.iterations[depth]
        start = b.tensor(f"c{depth}", shape, dtypes.I32, data=np.zeros(shape, np.int32))
        lim = None
        if plan.limit_in_list[depth]:
            lim = b.tensor(f"lim{depth}", shape, dtypes.I32, data=np.full(shape, n, np.int32))
        counter = (start, lim, n)
    start, lim, limit = counter
    ins = [start, *([lim] if lim else []), *data]
    cond = _cond_block(draw, rc, g, plan, depth, limit)
    body = _body_block(draw, rc, g, plan, depth, limit)
    out_sigs = _state_sigs(plan, depth)
    if plan.fault == "in_out" and depth == 0:
        out_sigs = broken_sigs(draw, rc, out_sigs, range(len(ins) - len(data), len(out_sigs)))
    outs = [b.tensor(f"w{depth}_{k}", s.shape, s.dtype) for k, s in enumerate(out_sigs)]
    b.op("WHILE_LOOP", ins, outs, cond_graph=cond, body_graph=body)
    return outs


def while_loop_case(
    draw: st.DrawFn,
    rc: RecipeContext,
    fault: str | None = None,
    *,
    depth: int | None = None,
    reach: bool = False,
    lists: int | None = None,
    switch: bool = False,
) -> Case | None:
    """A case, valid or breaking ``fault``.  ``depth`` fixes how many operators nest;
    with ``reach`` (always for the nesting error) the innermost one runs; ``lists``
    fixes the length of every loop's input_list and output_list (level cases of
    MAX_TENSOR_LIST_SIZE); with ``switch`` the outermost loop runs 2 or more times and
    its body holds a COND_IF whose branch switches."""
    depth = depth or nesting_depth(draw, rc, fault)
    reach = reach or fault == "nesting"
    if depth == 0:
        return None
    rank = max_rank(rc)
    counters = [unit_shape(draw, int(switch), rank, f"counter {k}") for k in range(depth)]
    aimed = rc.target_rank  # the outer loop's condition (its counter's shape) at a rank
    if aimed is not None and int(switch) <= aimed <= rank:
        counters[0] = (1,) * aimed
    in_list = [draw(st.booleans(), label=f"limit in the list {k}") for k in range(depth)]
    if lists is not None:  # every loop carries the same data: the same list length
        in_list = [in_list[0]] * depth
    # Up to 10 iterations of the outer loop (none when the limit is already passed),
    # 0-2 of the inner ones, whose product grows with the depth; every loop runs when
    # the nesting error must be reached.  Long lists run each body once or twice: the
    # list, not the arithmetic, is under test.
    fewest = 2 if switch else 1 if reach else -2
    first = draw(st.integers(fewest, 10 if lists is None else 2), label="iterations")
    inner = [
        draw(st.integers(int(reach), 2 if k < 3 and lists is None else 1), label=f"iterations {k}")
        for k in range(1, depth)
    ]
    if lists is None:
        data = draw_sigs(draw, rc, int(switch), 3, "data")
        if fault is None and first > 0:
            # a second tensor of one signature: a pair the bodies swap
            data = data or draw_sigs(draw, rc, 1, 1, "paired data")
            k = draw(st.integers(0, len(data) - 1), label="tensor paired")
            data.insert(draw(st.integers(0, len(data)), label="pair at"), data[k])
    else:  # the list: the counter, the limit when it travels in the list, the data
        n_data = lists - 1 - in_list[0]
        if n_data < 0:
            raise ValueError(f"a list of {lists} cannot carry a loop's counter and limit")
        data = draw_sigs(draw, rc, n_data, n_data, "data")
    plan = LoopPlan(counters, in_list, [first, *inner], data, fault, switch)

    g = GraphBuilder(rc.spec, strict=fault is None)
    main = g.block("main")
    inputs: dict[str, np.ndarray] = {}
    shape = counters[0]
    start = draw(st.integers(I32_MIN, I32_MAX - 16), label="counter start")
    stop = max(I32_MIN, start + first)  # zero iterations when first <= 0
    main.input("counter", shape, dtypes.I32)
    inputs["counter"] = np.full(shape, start, np.int32)
    lim: str | None = None
    if in_list[0]:
        lim = main.input("limit", shape, dtypes.I32)
        inputs["limit"] = np.full(shape, stop, np.int32)
    names = []
    for k, sig in enumerate(data):
        names.append(main.input(f"x{k}", sig.shape, sig.dtype))
        inputs[f"x{k}"] = values_for(draw, rc, sig, f"x{k}")
    outs = _add_while(draw, rc, g, main, plan, 0, ("counter", lim, stop), names)
    for name in outs:
        main.output(name)
    return make_case(rc, g, inputs)


@recipe("WHILE_LOOP")
def while_loop(draw: st.DrawFn, rc: RecipeContext) -> Case:
    case = while_loop_case(draw, rc)
    assert case is not None
    return case


def _register_while(fault: str, clause: str, *, optional: bool = False) -> None:
    _register_fault("WHILE_LOOP", while_loop_case, fault, clause, optional=optional)


_register_while("nesting", NESTING_CLAUSE, optional=True)
_register_while("in_out", LOOP_LIST_CLAUSE)
_register_while("cond_in", COND_INPUT_CLAUSE)
_register_while("body_in", BODY_INPUT_CLAUSE)
_register_while("body_out", BODY_OUTPUT_CLAUSE)
_register_while("cond_size", COND_GRAPH_SIZE_CLAUSE)
_register_while("cond_type", COND_GRAPH_TYPE_CLAUSE)


# The case builders by operator, for the level cases (strategies/level_limits.py): a
# nest MAX_NESTING deep whose lists are MAX_TENSOR_LIST_SIZE long, or one longer.
CASE_BUILDERS: OperatorTable[Callable[..., Case | None]] = OperatorTable(
    {
        "COND_IF": cond_if_case,
        "WHILE_LOOP": while_loop_case,
    }
)

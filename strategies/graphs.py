"""Cases that are whole graphs: chains of 2-5 operators (:func:`graph_cases`).

The error cases of the graph-building recipes are in :mod:`strategies.graph_breakers`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from hypothesis import reject
from hypothesis import strategies as st

from conformance import dtypes
from conformance.builder import GraphBuilder, GraphError, check_operator
from conformance.dtypes import DType
from conformance.operator_table import family
from conformance.spec import Level, Spec, TypeSupport
from reference import compliance
from reference.compliance import chain_bound
from reference.engine import EvaluationError, evaluate, to_storage
from reference.expectations import expect
from strategies.case import Case, CaseSpec, TensorDraw, resized, shape_tensor
from strategies.graph_breakers import builds_graphs
from strategies.recipes import RecipeContext, load_all
from strategies.shapes import Budget
from strategies.values import ValueRange, tensor_values

# -- chains of operators ---------------------------------------------------------------
#
# A chain starts with a one-operator case drawn by that operator's recipe and appends
# operators that take the previous output: element-wise operators of its type, layout
# changes, reductions, and type changes (CAST, MUL i8/i16 -> i32, comparisons -> bool,
# SELECT, ARGMAX).  Each appended operator is evaluated on the values it will really
# see, so integer operands are drawn in the range that keeps its REQUIREs (no overflow)
# and a choice that still fails is replaced by another kind of operator.
#
# A vector checks the graph's output by the rule of the operator that produces it, on
# the reference's values of that operator's inputs.  That is only right when every
# floating-point result before it is the same in every compliant implementation.  The
# introduction's operator sequence rule lets each operator of a sequence run in a
# higher-precision type, its result rounded to the operator's type only to be judged:
# fp16 ADD > SUB computed in fp32 is compliant.  So a float result that rounds may feed
# a later operator only where the chain's bound is composed through every operator
# after it (reference.compliance.chain_bound: ADD, SUB and MUL, then exact element-wise
# and data-movement operators); other rounding ones (a CAST between floats, EXP ...)
# only end a chain, and exact ones (data movement, ABS, NEGATE, MAXIMUM, comparisons
# ...) feed any later operator (reading chain-intermediate-precision).


@dataclass
class Current:
    """The tensor the next operator of a chain takes, with the values it holds."""

    name: str
    shape: tuple[int, ...]
    dtype: DType
    values: np.ndarray


@dataclass
class Step:
    """One operator appended to a chain: ``inputs`` name its operands in order (the
    current tensor among them); ``operands`` are the tensors the step adds."""

    op: str
    inputs: list[str]
    operands: list[TensorDraw]
    output: TensorDraw
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Chain:
    spec: Spec
    level: Level
    budget: Budget
    ops: frozenset[str] | None  # the operators a chain may hold (None: any)
    pairs: frozenset[tuple[str, str]] | None = None  # its (operator, mode)s (None: any)

    def allows(self, m: TypeSupport) -> bool:
        return self.pairs is None or (m.operator, m.mode) in self.pairs

    def mode(self, op: str, var: str, dt: DType) -> TypeSupport | None:
        """The first mode of ``op`` that binds ``var`` to ``dt``, if ``op`` may be used."""
        if op not in self.spec.operators or (self.ops is not None and op not in self.ops):
            return None
        for m in self.spec.operator(op).modes:
            if m.bindings.get(var) not in (None, "-") and m.dtype(var) is dt and self.allows(m):
                return m
        return None

    @property
    def max_rank(self) -> int:
        return int(self.level["MAX_RANK"])


CHAINABLE = frozenset(
    {
        dtypes.BOOL,
        dtypes.I8,
        dtypes.I16,
        dtypes.I32,
        dtypes.FP8E4M3,
        dtypes.FP8E5M2,
        dtypes.FP16,
        dtypes.BF16,
        dtypes.FP32,
    }
)
UNARY = family(("ABS", "NEGATE", "BITWISE_NOT", "LOGICAL_NOT", "CEIL", "FLOOR", "CLZ", "IDENTITY"))
UNARY_LAST = family(("EXP", "LOG", "RECIPROCAL", "RSQRT", "SIN", "COS", "TANH", "SIGMOID", "ERF"))
SHIFTS = family(("ARITHMETIC_RIGHT_SHIFT", "LOGICAL_LEFT_SHIFT", "LOGICAL_RIGHT_SHIFT"))
BINARY = family(
    (
        "ADD",
        "SUB",
        "MUL",
        "MAXIMUM",
        "MINIMUM",
        "BITWISE_AND",
        "BITWISE_OR",
        "BITWISE_XOR",
        "LOGICAL_AND",
        "LOGICAL_OR",
        "LOGICAL_XOR",
        *SHIFTS,
        "INTDIV",
        "POW",
        "EQUAL",
        "GREATER",
        "GREATER_EQUAL",
    )
)
REDUCE = family(("REDUCE_MAX", "REDUCE_MIN", "REDUCE_ANY", "REDUCE_ALL", "REDUCE_SUM", "ARGMAX"))
LAYOUT = family(("RESHAPE", "TRANSPOSE", "REVERSE", "SLICE", "TILE"))
GLUE_OPS = family((*UNARY, *UNARY_LAST, *BINARY, *REDUCE, *LAYOUT, "SELECT", "CLAMP"))


def deterministic(op: str) -> bool:
    """Whether ``op``'s floating-point results are exact (one value in any precision
    an implementation computes them in), so a later operator may take them."""
    return (
        op in compliance.EXACT_OPERATORS
        or op in compliance.DATA_MOVEMENT_OPERATORS
        or op in compliance.COMPARISON_OPERATORS
    )


def feeds_on(op: str) -> bool:
    """Whether ``op``'s float result may feed a later operator: an exact one, or one of
    the rounding operators whose bound a chain composes (reference.compliance.
    chain_bound; the chain is kept only if every operator after it composes too)."""
    return deterministic(op) or op in chain_bound.ROUNDING


def composes(case: Case, spec: Spec, level: Level) -> bool:
    """Whether a chain whose rounding results feed later operators has a composed
    bound for its output (a comparison or a CAST of a rounded value has none)."""
    main = case.graph.main
    if not chain_bound.needs_composing(main):
        return True
    out = main.outputs[0]
    check = expect(case.graph, case.inputs, spec=spec, level=level).checks.get(out)
    return check is not None and check.descriptor.rule == chain_bound.COMPOSED_RULE


def _out_type(mode: TypeSupport) -> DType:
    return mode.dtype("out_t" if "out_t" in mode.bindings else "in_out_t")


def _find_mode(ch: Chain, op: str, dt: DType) -> TypeSupport | None:
    return ch.mode(op, "in_out_t", dt) or ch.mode(op, "in_t", dt)


def can_grow(ch: Chain, dt: DType | None) -> bool:
    """Whether some operator of the chain may take a ``dt`` tensor (CAST among them)."""
    if dt is None:
        return False
    return any(_find_mode(ch, op, dt) for op in GLUE_OPS) or bool(ch.mode("CAST", "in_t", dt))


def _operand(
    draw: st.DrawFn, name: str, shape: tuple[int, ...], dt: DType, r: ValueRange | None = None
) -> TensorDraw:
    return TensorDraw(name, shape, dt, draw(tensor_values(dt, shape, r, label=name)))


def _broadcast_to(draw: st.DrawFn, shape: tuple[int, ...], label: str) -> tuple[int, ...]:
    """A shape TOSA broadcasts to ``shape``: each dimension its own or 1."""
    return tuple(
        d if draw(st.booleans(), label=f"{label}: dim {i} kept") else 1 for i, d in enumerate(shape)
    )


def _int_operand_range(op: str, dt: DType, cur: Current, first: bool) -> ValueRange | None:
    """Values of the other operand of ``op`` that keep its REQUIREs for every value of
    ``cur`` (None: any value of the type)."""
    lo, hi = dt.int_range
    v = cur.values.astype(np.int64)
    cmin, cmax = (int(v.min()), int(v.max())) if v.size else (0, 0)
    if op == "ADD":
        return ValueRange(low=lo - cmin, high=hi - cmax)
    if op == "SUB":
        if first:  # cur - x
            return ValueRange(low=cmax - hi, high=cmin - lo)
        return ValueRange(low=lo + cmax, high=hi + cmin)  # x - cur
    if op == "MUL" and dt is dtypes.I32:
        k = hi // max(abs(cmin), abs(cmax), 1)
        return ValueRange(low=-k, high=k)
    if op == "ARITHMETIC_RIGHT_SHIFT":
        return ValueRange(low=0, high=dt.bits - 1)
    if op in SHIFTS:
        return ValueRange(low=0, high=31)
    if op == "INTDIV":
        return ValueRange(nonzero=True)
    return None


Glue = Callable[[st.DrawFn, Chain, Current, str, bool], "Step | None"]


def _unary(draw: st.DrawFn, ch: Chain, cur: Current, p: str, last: bool) -> Step | None:
    names = [op for op in (*UNARY, *(UNARY_LAST if last else ())) if _find_mode(ch, op, cur.dtype)]
    if not names:
        return None
    op = draw(st.sampled_from(names), label=f"{p}unary")
    attributes: dict[str, Any] = {}
    if op == "NEGATE":
        zero = 0.0 if cur.dtype.is_float else 0
        attributes = {"input1_zp": zero, "output_zp": zero}
    out = TensorDraw(f"{p}out", cur.shape, cur.dtype)
    return Step(op, [cur.name], [], out, attributes)


def _binary(draw: st.DrawFn, ch: Chain, cur: Current, p: str, last: bool) -> Step | None:
    """cur (op) x or x (op) cur, x a graph input of a shape that broadcasts to cur's."""
    dt = cur.dtype
    names = [op for op in BINARY if _find_mode(ch, op, dt) and (last or op != "POW")]
    if not names:
        return None
    op = draw(st.sampled_from(names), label=f"{p}binary")
    mode = _find_mode(ch, op, dt)
    assert mode is not None
    # the shifts and INTDIV keep cur as the value shifted or divided
    first = op in (*SHIFTS, "INTDIV") or draw(st.booleans(), label=f"{p}current first")
    r = _int_operand_range(op, dt, cur, first) if dt.is_int else None
    x = _operand(draw, f"{p}x", _broadcast_to(draw, cur.shape, f"{p}x"), dt, r)
    inputs = [cur.name, x.name] if first else [x.name, cur.name]
    operands = [x]
    attributes: dict[str, Any] = {}
    if op == "MUL":
        shift = TensorDraw(f"{p}shift", (), dtypes.I8, np.array(0, np.int8), const=True)
        inputs.append(shift.name)
        operands.append(shift)
    if op == "ARITHMETIC_RIGHT_SHIFT":
        attributes["round"] = draw(st.booleans(), label=f"{p}round")
    out = TensorDraw(f"{p}out", cur.shape, _out_type(mode))
    return Step(op, inputs, operands, out, attributes)


def _clamp(draw: st.DrawFn, ch: Chain, cur: Current, p: str, last: bool) -> Step | None:
    dt = cur.dtype
    if not _find_mode(ch, "CLAMP", dt):
        return None
    bounds: list[int] | list[float]
    if dt.is_int:
        bound = st.integers(*dt.int_range)
        bounds = sorted(draw(st.tuples(bound, bound), label=f"{p}bounds"))
    else:  # finite bounds of the type: a NaN bound is a REQUIRE failure
        pair = draw(st.tuples(st.floats(-1000, 1000), st.floats(-1000, 1000)), label=f"{p}bounds")
        bounds = sorted(float(np.float64(v).astype(dt.storage)) for v in pair)
    out = TensorDraw(f"{p}out", cur.shape, dt)
    return Step("CLAMP", [cur.name], [], out, {"min_val": bounds[0], "max_val": bounds[1]})


def _cast(draw: st.DrawFn, ch: Chain, cur: Current, p: str, last: bool) -> Step | None:
    if ch.ops is not None and "CAST" not in ch.ops:
        return None
    cast = ch.spec.operator("CAST").modes
    modes = [m for m in cast if m.dtype("in_t") is cur.dtype and ch.allows(m)]
    targets = [m.dtype("out_t") for m in modes if m.dtype("out_t") in CHAINABLE]
    if not targets:
        return None
    target = draw(st.sampled_from(targets), label=f"{p}cast to")
    return Step("CAST", [cur.name], [], TensorDraw(f"{p}out", cur.shape, target))


def _select(draw: st.DrawFn, ch: Chain, cur: Current, p: str, last: bool) -> Step | None:
    """SELECT(cur, a, b) for a bool cur; else SELECT(c, cur, x) or SELECT(c, x, cur)."""
    if cur.dtype is dtypes.BOOL:
        modes = [
            m
            for m in ch.spec.operator("SELECT").modes
            if ch.mode("SELECT", "in_out_t", m.dtype("in_out_t"))
        ]
        if not modes:
            return None
        dt = draw(st.sampled_from([m.dtype("in_out_t") for m in modes]), label=f"{p}type")
        a = _operand(draw, f"{p}a", _broadcast_to(draw, cur.shape, f"{p}a"), dt)
        b = _operand(draw, f"{p}b", _broadcast_to(draw, cur.shape, f"{p}b"), dt)
        out = TensorDraw(f"{p}out", cur.shape, dt)
        return Step("SELECT", [cur.name, a.name, b.name], [a, b], out)
    if not ch.mode("SELECT", "in_out_t", cur.dtype):
        return None
    c = _operand(draw, f"{p}c", _broadcast_to(draw, cur.shape, f"{p}c"), dtypes.BOOL)
    x = _operand(draw, f"{p}x", _broadcast_to(draw, cur.shape, f"{p}x"), cur.dtype)
    pair = (
        [cur.name, x.name] if draw(st.booleans(), label=f"{p}current first") else [x.name, cur.name]
    )
    return Step("SELECT", [c.name, *pair], [c, x], TensorDraw(f"{p}out", cur.shape, cur.dtype))


def _reduce(draw: st.DrawFn, ch: Chain, cur: Current, p: str, last: bool) -> Step | None:
    if not cur.shape:
        return None
    names = [op for op in REDUCE if _find_mode(ch, op, cur.dtype)]
    if not names:
        return None
    op = draw(st.sampled_from(names), label=f"{p}reduction")
    mode = _find_mode(ch, op, cur.dtype)
    assert mode is not None
    axis = draw(st.integers(0, len(cur.shape) - 1), label=f"{p}axis")
    if op == "ARGMAX":
        shape = cur.shape[:axis] + cur.shape[axis + 1 :]
    else:
        shape = tuple(1 if i == axis else d for i, d in enumerate(cur.shape))
    out = TensorDraw(f"{p}out", shape, _out_type(mode))
    return Step(op, [cur.name], [], out, {"axis": axis})


def refactor(
    draw: st.DrawFn, size: int, max_rank: int, label: str, min_rank: int = 1
) -> tuple[int, ...]:
    """A shape of ``size`` elements: its prime factors spread over a drawn rank."""
    factors, n, f = [], size, 2
    while n > 1:
        while n % f == 0:
            factors.append(f)
            n //= f
        f += 1
    rank = draw(st.integers(min_rank, max_rank), label=f"{label}: rank")
    dims = [1] * rank
    for f in factors:
        dims[draw(st.integers(0, rank - 1), label=f"{label}: factor {f}")] *= f
    return tuple(dims)


def _layout(draw: st.DrawFn, ch: Chain, cur: Current, p: str, last: bool) -> Step | None:
    if not cur.shape:
        return None
    names = [op for op in LAYOUT if ch.mode(op, "in_out_t", cur.dtype)]
    if not names:
        return None
    op = draw(st.sampled_from(names), label=f"{p}layout")
    shape, rank = cur.shape, len(cur.shape)
    operands: list[TensorDraw] = []
    attributes: dict[str, Any] = {}
    if op == "RESHAPE":
        new = refactor(draw, int(np.prod(shape)), ch.max_rank, f"{p}shape")
        operands = [shape_tensor(f"{p}shape", list(new))]
    elif op == "TRANSPOSE":
        perms = tuple(draw(st.permutations(range(rank)), label=f"{p}perms"))
        new = tuple(shape[i] for i in perms)
        attributes["perms"] = perms
    elif op == "REVERSE":
        new = shape
        attributes["axis"] = draw(st.integers(0, rank - 1), label=f"{p}axis")
    elif op == "SLICE":
        start = [draw(st.integers(0, d - 1), label=f"{p}start {i}") for i, d in enumerate(shape)]
        new = tuple(
            draw(st.integers(1, d - s), label=f"{p}size {i}")
            for i, (d, s) in enumerate(zip(shape, start, strict=True))
        )
        operands = [shape_tensor(f"{p}start", start), shape_tensor(f"{p}size", list(new))]
    else:  # TILE, within the element budget
        room = ch.budget.max_elements // max(1, int(np.prod(shape)))
        multiples = []
        for i in range(rank):
            m = draw(st.integers(1, max(1, min(3, room))), label=f"{p}multiple {i}")
            room //= m
            multiples.append(m)
        new = tuple(d * m for d, m in zip(shape, multiples, strict=True))
        operands = [shape_tensor(f"{p}multiples", multiples)]
    inputs = [cur.name, *(t.name for t in operands)]
    return Step(op, inputs, operands, TensorDraw(f"{p}out", new, cur.dtype), attributes)


# Kinds of operator to append, weighted roughly by how many operators each offers; the
# first kind of a drawn order is tried first, the others if it has nothing valid.
GLUES: tuple[Glue, ...] = (
    *[_binary] * 4,
    *[_unary] * 2,
    *[_layout] * 2,
    _reduce,
    _cast,
    _select,
    _clamp,
)


def _run_step(ch: Chain, cur: Current, step: Step) -> np.ndarray | None:
    """The values ``step`` computes from ``cur`` as the next operator reads them, or
    None when the reference does not find the step valid."""
    g = GraphBuilder(ch.spec, strict=False)
    main = g.block()
    main.input(cur.name, cur.shape, cur.dtype)
    inputs = {cur.name: cur.values}
    for t in step.operands:
        if t.const:
            main.tensor(t.name, t.shape, t.dtype, data=t.values)
        else:
            main.input(t.name, t.shape, t.dtype)
            inputs[t.name] = t.values  # type: ignore[assignment]
    out = step.output
    main.tensor(out.name, out.shape, out.dtype)
    try:
        main.op(step.op, step.inputs, [out.name], **step.attributes)
        main.output(out.name)
        outcome = evaluate(g.build(), inputs, spec=ch.spec, level=ch.level)
    except (GraphError, EvaluationError):
        return None
    value = outcome.outputs.get(out.name)
    if outcome.kind != "valid" or g.problems or not isinstance(value, np.ndarray):
        return None  # (a block-scaled result: chains carry arrays)
    return to_storage(value, out.dtype)


def _next_step(
    draw: st.DrawFn, ch: Chain, cur: Current, k: int, last: bool
) -> tuple[Step, Current] | None:
    """An operator that takes ``cur`` and is valid on its values, with its result."""
    order = draw(st.permutations(GLUES), label=f"op{k}: kinds tried")
    for glue in dict.fromkeys(order):  # each kind once, in the order drawn
        step = glue(draw, ch, cur, f"op{k}_", last)
        step = step and in_revision_step(ch.spec, step)
        if step is None or not (last or not step.output.dtype.is_float or feeds_on(step.op)):
            continue
        values = _run_step(ch, cur, step)
        if values is not None:
            out = step.output
            return step, Current(out.name, out.shape, out.dtype, values)
    return None


def output_type(op_spec: Any, mode: TypeSupport) -> DType | None:
    arg = op_spec.outputs[0]
    try:
        if arg.element_type in mode.bindings:
            return mode.dtype(arg.element_type)
        return dtypes.dtype(arg.element_type)
    except KeyError:
        return None


def first_modes(
    spec: Spec,
    ops: frozenset[str] | None = None,
    pairs: frozenset[tuple[str, str]] | None = None,
) -> list[TypeSupport]:
    """The (operator, mode) pairs a chain may start with: a single-operator recipe, one
    tensor output of a type the chain operators take, and a float result only where it
    has one right value or its bound composes (:func:`feeds_on`)."""
    recipes = load_all()
    out = []
    for m in spec.modes():
        op_spec = spec.operator(m.operator)
        name = op_spec.name
        if name not in recipes or builds_graphs(name) or (ops is not None and name not in ops):
            continue
        if pairs is not None and (name, m.mode) not in pairs:
            continue
        outs = op_spec.outputs
        if len(outs) != 1 or outs[0].is_list or outs[0].type != "tensor_t":
            continue
        dt = output_type(op_spec, m)
        if dt in CHAINABLE and not (dt is not None and dt.is_float and not feeds_on(name)):
            out.append(m)
    return out


def renamed(spec: CaseSpec, prefix: str) -> CaseSpec:
    out = replace(spec)
    out.inputs = [replace(t, name=prefix + t.name) for t in spec.inputs]
    out.outputs = [replace(t, name=prefix + t.name) for t in spec.outputs]
    return out


def in_revision_step(spec: Spec, step: Step) -> Step:
    """``step`` laid out as ``spec``'s revision declares the operator, as
    CaseSpec.in_revision does for a recipe's case: a parameter the glue gives as an
    attribute that the revision declares an input (TOSA 1.0's zero points) becomes a
    constant [1] tensor of the output's type in argument order, a rank-0 operand
    declared [1] (MUL's shift) takes that shape, and a declared ``nan_mode`` the glue
    does not choose is PROPAGATE, the spec's stated default."""
    op_spec = spec.operator(step.op)
    attributes = dict(step.attributes)
    inputs, operands = list(step.inputs), list(step.operands)
    for k, arg in enumerate(op_spec.inputs):
        if arg.name in attributes and k <= len(inputs):
            value = np.full((1,), attributes.pop(arg.name))
            dt = step.output.dtype
            t = TensorDraw(f"{step.output.name}_{arg.name}", (1,), dt, value.astype(dt.storage))
            inputs.insert(k, t.name)
            operands.append(replace(t, const=True))
        elif arg.shape.kind == "dims" and arg.shape.text.replace(" ", "") == "[1]":
            for i, t in enumerate(operands):
                if k < len(inputs) and t.name == inputs[k] and t.shape == ():
                    operands[i] = replace(t, shape=(1,), values=resized(t.values, (1,)))
    if any(a.name == "nan_mode" for a in op_spec.attributes):
        attributes.setdefault("nan_mode", "PROPAGATE")
    return replace(step, inputs=inputs, operands=operands, attributes=attributes)


def build_chain(spec: Spec, first: CaseSpec, steps: list[Step]) -> Case:
    first = first.in_revision(spec)  # its parameters as the revision declares them
    g = GraphBuilder(spec)
    main = g.block()
    inputs: dict[str, np.ndarray] = {}

    def add(t: TensorDraw) -> None:
        if t.name in main.block.tensors:
            return  # a tensor an operator takes twice
        if t.const:
            main.tensor(t.name, t.shape, t.dtype, data=t.values)
        else:
            main.input(t.name, t.shape, t.dtype)
            assert t.values is not None
            inputs[t.name] = t.values

    for t in first.inputs:
        add(t)
    for t in first.outputs:
        main.tensor(t.name, t.shape, t.dtype)
    main.op(
        first.operator,
        [t.name for t in first.inputs],
        [t.name for t in first.outputs],
        **first.attributes,
    )
    last = main.block.operators[-1]
    for step in steps:
        for t in step.operands:
            add(t)
        main.tensor(step.output.name, step.output.shape, step.output.dtype)
        last = main.op(step.op, step.inputs, [step.output.name], **step.attributes)
    main.output(last.outputs[0])
    graph = g.build()
    mode, _ = check_operator(spec, last, graph.main.tensors)
    assert mode is not None
    names = [first.operator, *(s.op for s in steps)]
    return Case(
        graph=graph,
        inputs=inputs,
        operator=last.op,
        mode=mode.mode,
        strategy="graph:" + ">".join(names),
        operators=names,
    )


def _moves_elements(case: Case, index: int) -> bool:
    """Whether the TRANSPOSE at ``index`` of the chain changes the elements' order: it
    moves two axes longer than 1 past each other (a rewrite dropping it shows)."""
    main = case.graph.main
    op = main.operators[index]
    shape = main.tensors[op.inputs[0]].shape
    long_axes = [a for a in op.attributes["perms"] if shape[a] > 1]
    return long_axes != sorted(long_axes)


def graph_cases(
    spec: Spec,
    level: Level,
    budget: Budget | None = None,
    ops: Iterable[str] | None = None,
    length: tuple[int, int] = (2, 5),
    *,
    pairs: Iterable[tuple[str, str]] | None = None,
    group: str | None = None,
    begin: tuple[str, ...] = (),
    turn: float = 0.0,
) -> st.SearchStrategy[Case]:
    """Valid graphs of ``length`` operators in a chain, each taking the previous one's
    output.  ``ops`` limits the operators a chain may hold (its first operator, drawn by
    that operator's recipe, and every one appended), ``pairs`` their (operator, mode)s
    (a claim's); a chain that cannot grow to the minimum length with them is rejected.
    ``group`` is the operator group the first operator is of; ``begin`` the operators
    the chain starts with, in order (a TRANSPOSE among them moves elements).  ``turn``
    (0 to 1) turns the list of first operators round by that share: Hypothesis's first
    draws pick its first entry, so chains of other turns start apart.  The Case names
    the last operator and its mode; ``operators`` lists every operator in chain order."""
    allowed = frozenset(o.upper() for o in ops) if ops is not None else None
    wanted = frozenset(pairs) if pairs is not None else None
    if wanted is not None:
        claimed = frozenset(o for o, _ in wanted)
        allowed = claimed if allowed is None else claimed & allowed
    ch = Chain(spec, level, budget or Budget(), allowed, wanted)
    firsts = [
        m
        for m in first_modes(spec, allowed, wanted)
        if (group is None or spec.operator(m.operator).group == group)
        and (not begin or m.operator == begin[0])
        and can_grow(ch, output_type(spec.operator(m.operator), m))
    ]
    if not firsts:
        raise LookupError(
            "no operator can start a chain"
            + (f" among {sorted(allowed)}" if allowed else "")
            + (f" in group {group}" if group else "")
            + (f" as {'>'.join(begin)}" if begin else "")
        )
    length = (max(length[0], len(begin)), max(length[1], len(begin)))
    turned = int(turn * len(firsts)) % len(firsts)
    firsts = firsts[turned:] + firsts[:turned]
    recipes = load_all()

    @st.composite
    def draw_case(draw: st.DrawFn) -> Case:
        n = draw(st.integers(*length), label="operators")
        m = draw(st.sampled_from(firsts), label="first operator")
        op_spec = spec.operator(m.operator)
        drawn = recipes[op_spec.name](draw, RecipeContext(spec, op_spec, m, level, ch.budget))
        if not isinstance(drawn, CaseSpec) or drawn.kind != "valid":
            reject()
        assert isinstance(drawn, CaseSpec)
        first = renamed(drawn.in_revision(spec), "op0_")  # in_revision matches by name
        case = first.build(spec)
        outcome = evaluate(case.graph, case.inputs, spec=spec, level=level)
        value = outcome.outputs.get(first.outputs[0].name)
        if outcome.kind != "valid" or not isinstance(value, np.ndarray):
            reject()  # a recipe's rare miss (or a block-scaled result: chains carry arrays)
        assert isinstance(value, np.ndarray)
        out = first.outputs[0]
        cur = Current(out.name, out.shape, out.dtype, to_storage(value, out.dtype))
        steps: list[Step] = []
        for k in range(1, n):
            # a step of ``begin``: its operator only, each kind of glue tried for it
            only = replace(ch, ops=frozenset({begin[k]})) if k < len(begin) else ch
            found = _next_step(draw, only, cur, k, last=k == n - 1)
            if found is None:
                break
            step, cur = found
            steps.append(step)
        if len(steps) + 1 < length[0]:
            reject()
        chain = build_chain(spec, first, steps)
        main = chain.graph.main
        for op in main.operators:  # a step's mode follows all its types: the claim's?
            mode, _ = check_operator(spec, op, main.tensors)
            if wanted is not None and (mode is None or (op.op, mode.mode) not in wanted):
                reject()
        if any(op == "TRANSPOSE" and not _moves_elements(chain, i) for i, op in enumerate(begin)):
            reject()
        if not composes(chain, spec, level):
            reject()
        return chain

    return draw_case()

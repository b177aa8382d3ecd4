"""Boundary obligations: must-fail vectors at the first value past a relational ERROR_IF.

A breaker rarely breaks a clause at its edge: ``axis < 0 || axis >= rank(shape1)``
broken with axis 7 of a rank-3 tensor passes a backend that tests ``axis > rank``.
So a broken case whose clause is *relational* (:func:`boundary_atoms`) is moved to its
boundary (:func:`snapped`): when exactly one integer parameter differs from the
valid case it was made from (an attribute element, an element of a small constant
shape_t or zero-point input), the reference finds the value nearest the valid one
that still breaks the clause.  The reference is the judge, so the boundary is the
spec's, wherever the clause puts it.

Each (operator, mode) pair owes, per relational clause its breakers can break,
``boundary:<clause>:past`` (a must-fail vector one step from leaving the clause) and,
for orderings and ``!=``, ``boundary:<clause>:at`` (a valid vector one step from
breaking it).  Facts are read from the written vectors with the reference
(:func:`boundary_facts`, :func:`at_boundary_facts`), never from a flag.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from hypothesis import reject
from hypothesis import strategies as st

from conformance.conditions import ORDERINGS, Atom, relational_atoms
from conformance.expressions import names_in
from conformance.graph import Graph
from conformance.spec import Argument, Level, OperatorSpec, Spec, TypeSupport
from reference.engine import EvaluationError, Evaluator, evaluate
from reference.outcome import Outcome
from strategies.case import Case
from strategies.obligations import GRAPH_OPERATORS, Obligation, arg_dtype
from strategies.shapes import Budget

PREFIX = "boundary:"
MAX_EVALUATIONS = 20  # reference runs one snap may spend
SMALL_TENSOR = 16  # elements of a constant input that counts as a parameter
I32 = (-(2**31), 2**31 - 1)  # the range of the i32_t attributes
NO_STEP = (
    "no one-step change of a parameter the clause names leaves it (the breaker moves "
    "more than one element, or no parameter)"
)


def past_key(clause: str) -> str:
    return f"{PREFIX}{clause}:past"


def at_key(clause: str) -> str:
    return f"{PREFIX}{clause}:at"


def target_clause(target: str | None) -> str | None:
    """The clause of a ``boundary:<clause>`` job target (None: another target)."""
    if target is None or not target.startswith(PREFIX):
        return None
    return target.removeprefix(PREFIX)


# -- which clauses are relational ------------------------------------------------------


def _integer_parameters(op_spec: OperatorSpec, mode: TypeSupport) -> dict[str, Argument]:
    """The parameters whose values are integers in ``mode``, by argument name and by
    element name (``pad_top`` of ``pad``): attributes, shape_t inputs, zero points."""
    args = [*op_spec.attributes, *(a for a in op_spec.inputs if _is_parameter_input(a))]
    out: dict[str, Argument] = {}
    for a in args:
        dt = arg_dtype(mode, a)
        if dt is not None and dt.kind in ("int", "shape"):
            out |= {n: a for n in (a.name, *a.element_names)}
    return out


def _is_parameter_input(arg: Argument) -> bool:
    return arg.type == "shape_t" or arg.name.endswith("_zp")


def _output_names(op_spec: OperatorSpec) -> set[str]:
    """Names an output's declared shape binds (OH, shape): an atom over them checks the
    output's shape, which its breakers change, not a parameter."""
    out: set[str] = set()
    for a in op_spec.outputs:
        out |= a.shape.names() | ({a.shape.name} if a.shape.name else set())
    return out


def boundary_atoms(op_spec: OperatorSpec, mode: TypeSupport, clause: str) -> list[Atom]:
    """The atoms of ``clause`` that compare an integer parameter of ``mode``; empty
    when the clause does not parse (:mod:`conformance.conditions`) or names none."""
    params = _integer_parameters(op_spec, mode)
    outputs = _output_names(op_spec)
    return [
        a for a in relational_atoms(clause) if a.names() & params.keys() and not a.names() & outputs
    ]


def has_at(atoms: list[Atom]) -> bool:
    """Whether the boundary has a valid side one step away: an ordering, or ``!=``
    (whose valid side is the equal value)."""
    return any(a.op in ORDERINGS or a.op == "!=" for a in atoms)


def boundary_obligations(
    spec: Spec, level: Level, op_spec: OperatorSpec, mode: TypeSupport
) -> tuple[list[Obligation], dict[str, str]]:
    """The boundary obligations of (operator, mode): per relational clause a packable
    breaker of the pair can break, ``:past`` and (orderings, ``!=``) ``:at``.  Parsing
    only: nothing is evaluated at planning time."""
    from strategies.invalid import breakers_for
    from strategies.recipes import RecipeContext

    if op_spec.name in GRAPH_OPERATORS:
        return [], {}
    rc = RecipeContext(spec, op_spec, mode, level, Budget())
    # As the plan does: the clauses of the breakers whose cases can be written.
    packable = [b for b in breakers_for(op_spec.name, rc) if _can_pack(b, rc)]
    clauses = dict.fromkeys(b.clause for b in packable)
    obs: list[Obligation] = []
    for clause in clauses:
        atoms = boundary_atoms(op_spec, mode, clause)
        if not atoms:
            continue
        what = f"a must-fail vector one step past ERROR_IF({clause})"
        obs.append(Obligation(past_key(clause), None, what))
        if has_at(atoms):
            what = f"a valid vector one step short of ERROR_IF({clause})"
            obs.append(Obligation(at_key(clause), f"{PREFIX}{clause}", what))
    return obs, {}


def _can_pack(entry: Any, rc: Any) -> bool:
    can_pack = getattr(entry, "can_pack", None)  # graph breakers have none
    return can_pack is None or bool(can_pack(rc))


# -- integer parameters of a single-operator graph -------------------------------------


@dataclass(frozen=True)
class Element:
    """One integer of a parameter: an attribute (``index`` None for a scalar) or an
    element of a constant input tensor."""

    where: str  # "attr" | "tensor"
    name: str  # the attribute's name, or the tensor's
    index: int | None
    names: frozenset[str]  # the argument's name and the element's, as clauses name them
    bounds: tuple[int, int]  # the values its type holds


def integer_elements(spec: Spec, graph: Graph) -> dict[Element, int]:
    """The integer parameter elements of a single-operator graph, with their values."""
    from conformance.builder import map_operands

    block = graph.main
    if len(block.operators) != 1:
        return {}
    op = block.operators[0]
    op_spec = spec.operator(op.op)
    out: dict[Element, int] = {}
    for arg in op_spec.attributes:
        v = op.attributes.get(arg.name)
        a = np.asarray(v) if v is not None and not isinstance(v, bool | str) else None
        if a is None or a.dtype.kind not in "iu":
            continue
        out |= _elements("attr", arg.name, arg, a, I32)
    try:
        operands = map_operands(op_spec, op)
    except Exception:  # a broken graph whose operands do not fit: no parameters to read
        return out
    for arg in op_spec.inputs:
        if not _is_parameter_input(arg):
            continue
        for tname in operands.inputs.get(arg.name, []):
            t = block.tensors[tname]
            if t.data is None or t.data.size > SMALL_TENSOR or t.data.dtype.kind not in "iu":
                continue
            info = np.iinfo(t.data.dtype)
            out |= _elements("tensor", tname, arg, t.data, (int(info.min), int(info.max)))
    return out


def _elements(
    where: str, name: str, arg: Argument, a: np.ndarray, bounds: tuple[int, int]
) -> dict[Element, int]:
    if a.ndim == 0:
        return {Element(where, name, None, frozenset({arg.name}), bounds): int(a)}
    flat = a.reshape(-1)
    out = {}
    for k in range(flat.size):  # a few elements: kernel, pad, a shape_t
        named = {arg.name} | ({arg.element_names[k]} if k < len(arg.element_names) else set())
        out[Element(where, name, k, frozenset(named), bounds)] = int(flat[k])
    return out


def with_element(graph: Graph, element: Element, value: int) -> Graph:
    """A copy of ``graph`` with ``element`` set to ``value``."""
    g = copy.deepcopy(graph)
    block = g.main
    if element.where == "tensor":
        t = block.tensors[element.name]
        assert t.data is not None
        data = t.data.copy()
        data.reshape(-1)[element.index or 0] = value
        block.tensors[element.name] = replace(t, data=data)
        return g
    op = block.operators[0]
    old = op.attributes[element.name]
    if element.index is None:
        op.attributes[element.name] = value
    elif isinstance(old, np.ndarray):
        new = old.copy()
        new.reshape(-1)[element.index] = value
        op.attributes[element.name] = new
    else:
        items = list(old)
        items[element.index] = value
        op.attributes[element.name] = type(old)(items)
    return g


# -- the reference's judgement ---------------------------------------------------------


def _outcome(spec: Spec, level: Level, graph: Graph, inputs: Mapping[str, Any]) -> Outcome:
    return evaluate(graph, inputs, spec=spec, level=level)


def reports(outcome: Outcome, clause: str) -> bool:
    """Whether the reference refused the graph by ``clause``."""
    return not outcome.valid and outcome.rule is not None and outcome.rule.clause == clause


def first_past(
    valid: int, broken: int, breaks: Callable[[int], bool], budget: int = MAX_EVALUATIONS
) -> int:
    """The value nearest ``valid`` from which ``breaks`` holds, searching the integers
    between ``valid`` (where it does not) and ``broken`` (where it does): galloping out
    from ``valid`` (boundaries sit near it; a broken axis may be 2**31 - 1), then
    bisecting.  Within ``budget`` calls; the nearest found so far when it runs out."""
    step = 1 if broken > valid else -1
    lo, hi = valid, broken
    d = 1
    while budget > 0 and abs(hi - lo) > 1:
        x = lo + step * d
        if (x - hi) * step >= 0:
            break
        budget -= 1
        if breaks(x):
            hi = x
            break
        lo, d = x, d * 2
    while budget > 0 and abs(hi - lo) > 1:
        mid = lo + (hi - lo) // 2
        budget -= 1
        if breaks(mid):
            hi = mid
        else:
            lo = mid
    return hi


def snapped(spec: Spec, level: Level, valid: Case, bad: Case, clause: str) -> Case:
    """``bad`` (``valid`` with ``clause`` broken) with a changed integer parameter at the
    first value past the boundary: the one that changed, or where the breaker changed
    several (CLAMP's swapped bounds), the first of them that breaks the clause only
    together with the others, walked back alone; ``bad`` itself when the clause is not
    relational or none can be."""
    op_spec = spec.operator(bad.operator)
    if not boundary_atoms(op_spec, op_spec.mode(bad.mode), clause):
        return bad
    before, after = integer_elements(spec, valid.graph), integer_elements(spec, bad.graph)
    if before.keys() != after.keys():
        return bad
    for e in [e for e, v in after.items() if v != before[e]]:

        def breaks(x: int, e: Element = e) -> bool:
            moved = with_element(bad.graph, e, x)
            return reports(_outcome(spec, level, moved, bad.inputs), clause)

        if breaks(before[e]):
            continue  # the others break the clause alone: no boundary of this one
        value = first_past(before[e], after[e], breaks)
        # (a breaker that broke it at the boundary already still needs the refit)
        moved = bad if value == after[e] else replace(bad, graph=with_element(bad.graph, e, value))
        return refitted(spec, level, moved, clause)
    return bad


# -- the output shape that only the clause breaks ----------------------------------------

REFIT_SPAN = 32  # sizes tried either side of the declared one, after the rule's hints


def _skipped(spec: Spec, level: Level, case: Case, clause: str) -> Outcome | None:
    """The reference's outcome with ``clause`` unchecked: what a backend whose check of
    it is off by one does next (None: the operator cannot compute then)."""
    from conformance.backends.mutants import skipping_error_if

    ev = Evaluator(case.graph, spec, level)
    name = case.graph.main.operators[0].op
    original = ev.ops[name]
    ev.ops = {**ev.ops, name: lambda ctx: original(skipping_error_if(ctx, clause))}  # its own
    try:
        with np.errstate(all="ignore"):
            return ev.run(case.inputs)
    except Exception:  # with a rule unchecked, the implementation may fail anyhow (asserts)
        return None


def _shape_rule(spec: Spec, case: Case, outcome: Outcome | None) -> bool:
    """Whether ``outcome`` refuses the graph by a rule of the output's shape (a clause
    over OH, OW ...: the breaker's output shape, made for another value)."""
    if outcome is None or outcome.valid or outcome.rule is None:
        return False
    names = _output_names(spec.operator(case.operator)) - {"shape"}
    return any(re.search(rf"\b{re.escape(n)}\b", outcome.rule.clause) for n in names)


def _with_output_dim(case: Case, axis: int, size: int) -> Case:
    g = copy.deepcopy(case.graph)
    out = g.main.operators[0].outputs[0]
    t = g.main.tensors[out]
    shape = tuple(size if i == axis else d for i, d in enumerate(t.shape))
    g.main.tensors[out] = replace(t, shape=shape)
    return replace(case, graph=g)


def _named_axis(spec: Spec, case: Case, outcome: Outcome) -> int | None:
    """The output axis whose declared dimension (``OH`` of ``[N,OH,OW,C]``) the
    outcome's rule names."""
    assert outcome.rule is not None
    arg = spec.operator(case.operator).outputs[0]
    for axis, dim in enumerate(arg.shape.dims):
        if any(re.search(rf"\b{re.escape(n)}\b", outcome.rule.clause) for n in names_in(dim)):
            return axis
    return None


def refitted(spec: Spec, level: Level, case: Case, clause: str) -> Case:
    """``case`` with its output shape refitted to the snapped parameter, so that the
    clause is the only rule it breaks: a pad moved to its kernel changes OH, and a
    backend whose pad check is off by one would still refuse the old OH by the shape
    rule.  With the clause unchecked (what such a backend does next), the output axis
    the shape rule names is moved to a size it accepts (those the rule's detail names
    first, then the nearest within REFIT_SPAN), axis after axis; ``case`` itself when
    no shape rule fires or none fits."""
    ops = case.graph.main.operators
    if len(ops) != 1 or not ops[0].outputs or not spec.operator(case.operator).outputs:
        return case  # (ASSERT_EQUAL_SHAPE has no output to refit)
    current = case
    out = ops[0].outputs[0]
    for _ in range(len(case.graph.main.tensors[out].shape)):
        outcome = _skipped(spec, level, current, clause)
        if outcome is None or not _shape_rule(spec, current, outcome):
            break
        axis = _named_axis(spec, current, outcome)
        shape = current.graph.main.tensors[out].shape
        if axis is None or axis >= len(shape):  # (a rank the declaration does not have)
            return case
        d = shape[axis]
        # The numbers the rule's detail names first ("OH 4, expected 5"): a guess the
        # reference then judges; the nearest sizes after.
        hinted = [int(v) for v in re.findall(r"\d+", outcome.rule.detail if outcome.rule else "")]
        near = sorted(range(max(1, d - REFIT_SPAN), d + REFIT_SPAN + 1), key=lambda v: abs(v - d))
        sizes = [v for v in dict.fromkeys([*hinted, *near]) if v >= 1 and v != d]
        rule = outcome.rule.clause if outcome.rule else ""
        for size in sizes:
            trial = _with_output_dim(current, axis, size)
            after = _skipped(spec, level, trial, clause)
            if after is None or after.rule is None or after.rule.clause != rule:
                current = trial  # that axis's rule holds now
                break
        else:
            return case
    if current is case:
        return case
    if _shape_rule(spec, current, _skipped(spec, level, current, clause)):
        return case
    try:
        still = reports(_outcome(spec, level, current.graph, current.inputs), clause)
    except EvaluationError:  # a shape no rule checks: keep the old
        still = False
    return current if still else case


# -- facts: read from a vector with the reference --------------------------------------


@dataclass(frozen=True)
class Step:
    """A one-step change of one parameter element, and what the reference said of it."""

    element: Element
    value: int
    outcome: Outcome
    graph: Graph


def _named_elements(spec: Spec, graph: Graph, atoms: list[Atom]) -> dict[Element, int]:
    names = set().union(*(a.names() for a in atoms))
    return {e: v for e, v in integer_elements(spec, graph).items() if e.names & names}


def _step(spec: Spec, level: Level, vector: Any, element: Element, value: int) -> Step | None:
    """``vector`` with ``element`` at ``value``, judged; None outside its type."""
    if not element.bounds[0] <= value <= element.bounds[1]:
        return None
    g = with_element(vector.graph, element, value)
    return Step(element, value, _outcome(spec, level, g, vector.inputs), g)


def leaving_step(
    spec: Spec, level: Level, vector: Any, clause: str, atoms: list[Atom]
) -> Step | None:
    """The one-step change of a parameter the clause names after which the reference
    no longer reports ``clause`` for ``vector`` (which it must report), the other step
    of that element staying in it.  When both steps leave, the one that does by another
    rule checked first (a scale stepped to 0 before the offset it bounds) proves
    nothing: both must then be valid (a point, as ``x == 0``)."""
    if not reports(_outcome(spec, level, vector.graph, vector.inputs), clause):
        return None
    for e, v in _named_elements(spec, vector.graph, atoms).items():
        steps = [s for s in (_step(spec, level, vector, e, v + d) for d in (-1, 1)) if s]
        leave = [s for s in steps if not reports(s.outcome, clause)]
        one_way = len(leave) == 1 and len(steps) == 2
        if one_way or (leave and all(s.outcome.valid for s in leave)):
            return leave[0]
    return None


def boundary_facts(
    spec: Spec, level: Level, vector: Any, clause: str
) -> tuple[set[str], dict[str, str]]:
    """The boundary obligations a must-fail vector of ``clause`` meets, and why it
    misses the others: ``:past`` when one step of a parameter leaves the clause; for
    ``:at``, the rule the reference reports at that neighbour when it is not valid (a
    valid neighbour is a valid vector's to show: :func:`boundary_cases`)."""
    op_spec = spec.operator(vector.operator)
    atoms = boundary_atoms(op_spec, op_spec.mode(vector.mode), clause)
    if not atoms:
        return set(), {}
    step = leaving_step(spec, level, vector, clause, atoms)
    if step is None:
        return set(), {past_key(clause): NO_STEP}
    rule = step.outcome.rule
    if has_at(atoms) and not step.outcome.valid and rule is not None:
        why = f"{rule.kind} {rule.clause}: another rule fires at the boundary of {clause}"
        return {past_key(clause)}, {at_key(clause): why}
    return {past_key(clause)}, {}


def at_boundary_facts(spec: Spec, level: Level, vector: Any, target: str | None) -> set[str]:
    """``boundary:<clause>:at`` for a valid vector of a ``boundary:<clause>`` job when
    one step of a parameter the clause names makes the reference report it."""
    clause = target_clause(target)
    if clause is None:
        return set()
    op_spec = spec.operator(vector.operator)
    atoms = boundary_atoms(op_spec, op_spec.mode(vector.mode), clause)
    if not atoms or not _outcome(spec, level, vector.graph, vector.inputs).valid:
        return set()
    for e, v in _named_elements(spec, vector.graph, atoms).items():
        for d in (-1, 1):
            if (step := _step(spec, level, vector, e, v + d)) and reports(step.outcome, clause):
                return {at_key(clause)}
    return set()


def boundary_cases(
    spec: Spec, operator: str, mode: str, level: Level, budget: Budget, clause: str
) -> st.SearchStrategy[Case]:
    """Valid cases one step short of ``clause``: a snapped must-fail case of it, moved
    one step back to where the reference accepts it (rejected where that neighbour
    breaks another rule)."""
    from strategies.invalid import invalid_cases

    op_spec = spec.operator(operator)
    atoms = boundary_atoms(op_spec, op_spec.mode(mode), clause)

    def neighbour(bad: Case) -> Case:
        step = leaving_step(spec, level, bad, clause, atoms) if atoms else None
        if step is None or not step.outcome.valid:
            reject()
        assert step is not None
        strategy = f"{bad.strategy} / one step short of it"
        return replace(bad, graph=step.graph, kind="valid", rule_broken=None, strategy=strategy)

    return invalid_cases(spec, operator, mode, level, budget, clause=clause).map(neighbour)

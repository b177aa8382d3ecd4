"""Invalid cases: a valid case with exactly one rule broken, labelled with the rule.

A *breaker* takes a valid :class:`CaseSpec` and returns a copy that breaks one ERROR_IF
clause (or None when that clause cannot be broken from this case, e.g. a zero-point
rule in a float mode).  The label is the clause text the reference reports, so a
test can check that the reference fails the case for exactly that reason.

Operator-specific breakers live beside the recipes (``@breaks("CONV2D", clause)``);
the generic ones here apply to every operator: a type combination no mode supports,
and an output shape that does not fit the argument's declaration.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from hypothesis import strategies as st

from conformance import dtypes
from conformance.spec import Level, Spec
from reference.arguments import OUTPUTS_CLAUSE, TYPES_CLAUSE
from strategies.case import Case, CaseSpec, TensorDraw
from strategies.recipes import RecipeContext, load_all
from strategies.shapes import Budget

TYPE_CLAUSE = TYPES_CLAUSE

Breaker = Callable[[st.DrawFn, RecipeContext, CaseSpec], CaseSpec | None]


@dataclass(frozen=True)
class BreakerEntry:
    operator: str  # "*" for every operator
    clause: str
    fn: Breaker
    optional: bool = False  # may legitimately not apply to some modes (e.g. int-only rules)
    applies: Callable[[RecipeContext], bool] | None = None  # static test, for generic ones
    # Whether its cases can be written as vectors (False: the flatbuffer cannot hold the
    # broken value, e.g. CONST values of another shape than the output); such breakers
    # still test the reference, but generate plans no vectors for them.
    packable: Callable[[RecipeContext], bool] | None = None

    def can_pack(self, rc: RecipeContext) -> bool:
        return self.packable is None or self.packable(rc)


BREAKERS: list[BreakerEntry] = []


def breaks(
    *operators: str,
    clause: str,
    optional: bool = False,
    applies: Callable[[RecipeContext], bool] | None = None,
    packable: Callable[[RecipeContext], bool] | None = None,
) -> Callable[[Breaker], Breaker]:
    """Register a breaker; ``optional`` when some modes of the operator cannot break the
    clause (the breaker then returns None for them)."""

    def register(fn: Breaker) -> Breaker:
        for op in operators:
            BREAKERS.append(BreakerEntry(op, clause, fn, optional, applies, packable))
        return fn

    return register


def breakers_for(operator: str, rc: RecipeContext | None = None) -> list[BreakerEntry]:
    """The breakers of ``operator``; with a context, only those that can apply to it."""
    load_all()  # recipe modules register their breakers too
    from strategies.graph_breakers import builds_graphs, graph_breakers_for

    if builds_graphs(operator):  # its recipe builds whole graphs: its own error cases
        return graph_breakers_for(operator)  # type: ignore[return-value]
    return [
        b
        for b in BREAKERS
        if b.operator in (operator, "*") and (rc is None or b.applies is None or b.applies(rc))
    ]


def broken(spec: CaseSpec, clause: str) -> CaseSpec:
    """A deep copy of ``spec`` labelled as breaking ``clause``."""
    out = copy.deepcopy(spec)
    out.kind = "error"
    out.rule_broken = clause
    out.strategy = f"{spec.strategy} / breaks: {clause}"
    return out


_RETYPES = (dtypes.I8, dtypes.I16, dtypes.I32, dtypes.FP16, dtypes.BF16, dtypes.FP32)


def _retypable(rc: RecipeContext) -> bool:
    """Some single tensor argument has a type variable whose modes leave out one of the
    types the breaker tries, so retyping it can leave every mode."""
    for arg in rc.op_spec.inputs + rc.op_spec.outputs:
        et = arg.element_type
        if arg.is_list or arg.type != "tensor_t" or et not in rc.mode.bindings:
            continue
        types = {m.bindings.get(et) for m in rc.op_spec.modes}
        if any(t.spec_name not in types for t in _RETYPES):
            return True
    return False


@breaks("*", clause=TYPE_CLAUSE, applies=_retypable)
def unsupported_type(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """Give one typed tensor an element type that no mode pairs with the others."""
    candidates = []
    for i, t in enumerate(spec.inputs + spec.outputs):
        if t.dtype is dtypes.SHAPE:
            continue
        for other in _RETYPES:
            if other is not t.dtype:
                candidates.append((i, other))
    if not candidates:
        return None
    # Try candidates in a drawn order until one no mode supports.
    from conformance.builder import bind_types, find_mode

    order = draw(st.permutations(range(len(candidates))), label="retyped tensor")
    n_in = len(spec.inputs)
    for k in order:
        i, other = candidates[k]
        out = broken(spec, TYPE_CLAUSE)
        tensors = out.inputs + out.outputs
        t = tensors[i]
        new = TensorDraw(t.name, t.shape, other, None if t.values is None else t.values, t.const)
        if new.values is not None:
            with np.errstate(invalid="ignore", over="ignore"):
                new.values = new.values.astype(other.storage)
        if i < n_in:
            out.inputs[i] = new
        else:
            out.outputs[i - n_in] = new
        case = out.build(rc.spec)
        op = case.graph.main.operators[0]
        bound, problems = bind_types(rc.op_spec, op, case.graph.main.tensors)
        if problems or find_mode(rc.op_spec, bound, op.attributes) is None:
            return out
    return None


def _tied_outputs(rc: RecipeContext) -> list[int]:
    """Outputs whose declared shape ties them to an input (the same shape name, or
    dimension names the inputs bind), so a wrong shape breaks the argument rule."""
    input_names = {a.shape.name for a in rc.op_spec.inputs if a.shape.kind == "named"}
    input_dims = set().union(*(a.shape.names() for a in rc.op_spec.inputs))
    tied = []
    for k, arg in enumerate(rc.op_spec.outputs):
        if arg.is_list or arg.type != "tensor_t":
            continue
        if (arg.shape.kind == "named" and arg.shape.name in input_names) or (
            arg.shape.kind == "dims" and arg.shape.names() <= input_dims
        ):
            tied.append(k)
    return tied


@breaks("*", clause=OUTPUTS_CLAUSE, applies=lambda rc: bool(_tied_outputs(rc)))
def wrong_output_shape(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """Add one to a dimension of an output whose declared shape ties it to an input."""
    for k in _tied_outputs(rc):
        t = spec.outputs[k]
        if not t.shape:
            continue
        dim = draw(st.integers(0, len(t.shape) - 1), label="dimension made wrong")
        out = broken(spec, OUTPUTS_CLAUSE)
        shape = list(t.shape)
        shape[dim] += 1
        out.outputs[k] = replace(t, shape=tuple(shape))
        return out
    return None


def invalid_cases(
    spec: Spec,
    operator: str,
    mode: str,
    level: Level,
    budget: Budget | None = None,
    clause: str | None = None,
) -> st.SearchStrategy[Case]:
    """Cases that break one rule of ``operator`` (optionally a given clause)."""
    recipes = load_all()
    op_spec = spec.operator(operator)
    from strategies.graph_breakers import builds_graphs, graph_invalid_cases

    if builds_graphs(op_spec.name):
        return graph_invalid_cases(spec, op_spec.name, mode, level, budget, clause)
    rc = RecipeContext(spec, op_spec, op_spec.mode(mode), level, budget or Budget())
    fn = recipes[op_spec.name]
    entries = [b for b in breakers_for(op_spec.name, rc) if clause is None or b.clause == clause]
    if not entries:
        raise LookupError(f"no breaker for {op_spec.name} {clause or ''}".strip())

    @st.composite
    def draw_case(draw: st.DrawFn) -> Case:
        valid = fn(draw, rc)
        if not isinstance(valid, CaseSpec):
            raise TypeError(f"{op_spec.name}'s recipe builds graphs; break them in its module")
        entry = draw(st.sampled_from(entries), label="rule broken")
        bad = entry.fn(draw, rc, valid)
        if bad is None:
            from hypothesis import reject

            reject()
        assert bad is not None
        return bad.build(spec)

    return draw_case()

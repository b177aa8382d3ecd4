"""Invalid cases: a valid case with exactly one rule broken, labelled with the rule.

A *breaker* takes a valid :class:`CaseSpec` and returns a copy that breaks one ERROR_IF
clause (or None when that clause cannot be broken from this case, e.g. a zero-point
rule in a float mode).  The label is the clause text the reference reports, so a
test can check that the reference fails the case for exactly that reason.

Operator-specific breakers live beside the recipes (``@breaks("CONV2D", clause)``);
the generic ones here apply to every operator: a type combination no mode supports,
and an output shape that does not fit the argument's declaration.  The breaker
factories here are shared by several recipe modules, which register what they make
for their own operators: a rank-0 tensor (:func:`scalar_breaker`), a retyping no mode
accepts (:func:`retype_breaker`), and the broadcast_shape() breakers
(:func:`register_broadcast_breakers`); :func:`other_rank` and :func:`bad_axis` are
the pieces they and the recipe modules' own breakers draw from.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from hypothesis import strategies as st

from conformance import dtypes
from conformance.dtypes import DType
from conformance.spec import Level, Spec
from reference.arguments import ATTRIBUTES_CLAUSE, OUTPUTS_CLAUSE, TYPES_CLAUSE
from reference.broadcast import DIM_CLAUSE, RANK_CLAUSE
from strategies.case import Case, CaseSpec, TensorDraw
from strategies.recipes import RecipeContext, load_all
from strategies.shapes import Budget

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
        entries = graph_breakers_for(operator)
        return [b for b in entries if rc is None or b.applies is None or b.applies(rc)]  # type: ignore[misc]
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


def one_element_off(
    draw: st.DrawFn,
    spec: CaseSpec,
    names: Sequence[str],
    values_of: Callable[[CaseSpec, str], list[int]],
) -> CaseSpec:
    """``spec`` with one of the list attributes ``names`` one element longer (its last
    repeated) or shorter: the generic "attributes do not meet the requirement of the
    operator's arguments" rule, for attributes of a fixed length (pad, stride, kernel)."""
    out = broken(spec, ATTRIBUTES_CLAUSE)
    name = draw(st.sampled_from(list(names)), label="attribute")
    vals = values_of(spec, name)
    if draw(st.booleans(), label="one more element"):
        vals.append(vals[-1])
    else:
        vals.pop()
    out.attributes[name] = tuple(vals)
    return out


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


@breaks("*", clause=TYPES_CLAUSE, applies=_retypable)
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
        out = broken(spec, TYPES_CLAUSE)
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


# -- breaker factories and pieces the recipe modules share ------------------------------


def other_rank(shape: tuple[int, ...], max_rank: int) -> tuple[int, ...]:
    """A shape of another rank that stays within 1..max_rank where it can (a rank-0
    shape or a rank above the level would break a different rule): one more trailing
    1, or one dimension fewer at the top rank."""
    if len(shape) < max_rank:
        return (*shape, 1)
    return shape[:-1]


def bad_axis(draw: st.DrawFn, rank: int) -> int:
    """An i32 axis outside 0..rank-1."""
    return draw(
        st.one_of(st.integers(-(2**31), -1), st.integers(rank, 2**31 - 1)), label="bad axis"
    )


def scalar_breaker(name: str, clause: str) -> Breaker:
    """A breaker making tensor ``name`` rank 0, for arguments declared with rank >= 1."""

    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
        out = broken(spec, clause)
        out.reshape_tensor(name, ())
        return out

    fn.__name__ = f"scalar_{name}"
    return fn


def retype_breaker(choices: Sequence[tuple[str, DType]]) -> Breaker:
    """A type-combination breaker for operators the generic one cannot break (a single
    bound tensor whose every retyping is some other mode, or shape_t tensors): retype
    one (tensor, type) pair that no mode accepts."""

    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
        names = {t.name for t in spec.inputs + spec.outputs}
        present = [(n, dt) for n, dt in choices if n in names]
        if not present:
            return None
        name, dt = draw(st.sampled_from(present), label="retyped tensor")
        out = broken(spec, TYPES_CLAUSE)
        out.retype_tensor(name, dt)
        return out

    return fn


def _broadcast_inputs(rc: RecipeContext) -> list[int]:
    """Inputs shaped by a shape name other than the output's (shape1, shape2, ...)."""
    out_name = rc.op_spec.outputs[0].shape.name
    return [
        i
        for i, a in enumerate(rc.op_spec.inputs)
        if a.shape.kind == "named" and a.shape.name != out_name
    ]


def register_broadcast_breakers(operators: tuple[str, ...], clause: str) -> None:
    """Breakers for broadcast_shape()'s two clauses and the operator's own
    ``shape != broadcast_shape(...)`` (labelled ``clause``), for the operators built
    on broadcast_shape (element-wise binary, comparison, SELECT)."""

    @breaks(*operators, clause=clause)
    def wrong_output(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        """The inputs broadcast fine, but not to the declared output shape."""
        out = broken(spec, clause)
        t = out.outputs[0]
        shape = list(t.shape)
        if len(shape) > 0 and draw(st.booleans(), label="output dimension or rank wrong"):
            dim = draw(st.integers(0, len(shape) - 1), label="dimension made wrong")
            shape[dim] += draw(st.integers(1, 3), label="added to it")
        elif len(shape) < rc.level["MAX_RANK"]:
            shape.insert(0, 1)  # a leading 1 numpy would accept, TOSA does not
        else:
            shape.pop(0)
        out.outputs[0] = replace(t, shape=tuple(shape))
        return out

    @breaks(*operators, clause=RANK_CLAUSE)
    def rank_mismatch(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        """One input one rank short or long (numpy would broadcast it, TOSA does not)."""
        out = broken(spec, RANK_CLAUSE)
        k = draw(st.sampled_from(_broadcast_inputs(rc)), label="input of the wrong rank")
        t = out.inputs[k]
        assert t.values is not None
        if t.shape and (len(t.shape) >= rc.level["MAX_RANK"] or draw(st.booleans())):
            out.inputs[k] = replace(t, shape=t.shape[1:], values=np.asarray(t.values[0]))
        else:
            shape = (1, *t.shape)
            out.inputs[k] = replace(t, shape=shape, values=t.values.reshape(shape))
        return out

    @breaks(*operators, clause=DIM_CLAUSE)
    def dim_mismatch(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        """Two inputs with different sizes above 1 in one dimension."""
        out = broken(spec, DIM_CLAUSE)
        ks = _broadcast_inputs(rc)
        if not out.outputs[0].shape:  # rank 0: lift every operand to rank 1 first
            out.outputs[0] = replace(out.outputs[0], shape=(1,))
            for k in ks:
                out.reshape_tensor(out.inputs[k].name, (1,))
        rank = len(out.outputs[0].shape)
        dim = draw(st.integers(0, rank - 1), label="dimension made incompatible")
        pair = draw(st.permutations(ks), label="inputs made incompatible")[:2]
        a = max(2, out.outputs[0].shape[dim])
        b = a + draw(st.integers(1, 3), label="size difference")
        for k in ks:
            size = a if k == pair[0] else b if k == pair[1] else 1
            shape = list(out.inputs[k].shape)
            shape[dim] = size
            out.reshape_tensor(out.inputs[k].name, tuple(shape))
        return out


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
        return _at_boundary(spec, level, valid, bad, entry.clause)

    return draw_case()


def _at_boundary(spec: Spec, level: Level, valid: CaseSpec, bad: CaseSpec, clause: str) -> Case:
    """The broken case, its one changed integer parameter moved to the first value past
    the clause's boundary when the clause is relational (strategies.boundaries)."""
    from strategies.boundaries import boundary_atoms, snapped

    case = bad.build(spec)
    op_spec = spec.operator(bad.operator)
    if not boundary_atoms(op_spec, op_spec.mode(bad.mode), clause):
        return case
    return snapped(spec, level, valid.build(spec), case, clause)

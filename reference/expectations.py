"""What a vector expects of each graph output: the reference result, the compliance
descriptor that applies to it, and the bound tensor the descriptor needs.

The descriptor follows the operator that produces the output (its rule in the
precision table, its dot-product constants); the bound comes from that operator's
inputs: the abs-input pass for dot products, ``abs_error_bound_tensor`` for the
ABS_ERROR operators.  A chain whose rounding results feed later operators is judged by
its composed bound instead (reference.compliance.chain_bound).  Operators whose rule
needs parameters register a describer with :func:`describes` (modules under
``reference/describe/``); every other operator gets ``compliance.for_operator``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from conformance.block_tensor import BlockScaled, TensorValue, scale_type, value_type
from conformance.builder import OperandMap
from conformance.dtypes import DType, is_float_storage
from conformance.graph import Block, Graph, Operator
from conformance.operator_table import OperatorTable, family
from conformance.spec import Level, Spec, TypeSupport, load_spec
from reference import compliance, mx
from reference.compliance import ComplianceDescriptor, chain_bound, revision_rules
from reference.engine import Evaluator
from reference.outcome import Outcome


class NotDescribable(ValueError):
    """No compliance rule of the spec covers this output (e.g. floating-point results of
    arithmetic inside control-flow blocks)."""


@dataclass
class OutputCheck:
    descriptor: ComplianceDescriptor
    bound: np.ndarray | None = None


@dataclass
class Expectation:
    outcome: Outcome
    checks: dict[str, OutputCheck] = field(default_factory=dict)

    def check(self, name: str, actual: TensorValue) -> compliance.Verdict:
        c = self.checks[name]
        return compliance.check(self.outcome.outputs[name], c.descriptor, actual, c.bound)


@dataclass
class DescribeContext:
    """What a describer sees: the operator, its operand values as stored, the output
    being described, and the means to rerun the operator for the abs-input pass."""

    evaluator: Evaluator
    block: Block
    index: int
    operator: Operator
    operands: OperandMap
    mode: TypeSupport | None
    values: Mapping[str, np.ndarray]  # by tensor name
    output_arg: str  # the output argument being described, e.g. "output_real"
    dtype: DType  # its element type
    data_set: int  # Appendix A data set the inputs were drawn from, or -1

    @property
    def spec(self) -> Spec:
        return self.evaluator.spec

    @property
    def block_graph(self) -> Graph:
        return self.evaluator.graph

    def arg(self, name: str) -> np.ndarray:
        return np.asarray(self.values[self.operands.inputs[name][0]])

    def attr(self, name: str, default: Any = None) -> Any:
        return self.operator.attributes.get(name, default)

    def type_of(self, var: str) -> DType:
        assert self.mode is not None
        return self.mode.dtype(var)

    def abs_pass(self, data_args: Sequence[str], *, local_bound: bool) -> np.ndarray:
        """The operator rerun in fp64 on the absolute values of its inputs: the
        dot-product rule's per-element bound for this output.

        ``data_args`` name the inputs that play the rule's 'input' (the ones replaced
        by their largest magnitude when ``local_bound`` is false); every other input
        (weights, bias) keeps its own absolute value.
        """
        data = [self.arg(a) for a in data_args]
        prepared = compliance.dot_product_bound_inputs(data, None, local_bound=local_bound)
        # TOSA 1.0 reads weight and bias magnitudes as at least normal_min<in_t> too
        # (1.1: normal_min of their own types, typed_bounds); zero points are no factor
        # of the dot product and keep their values.
        floor = compliance.abs_floor(data[0])
        own_floor = revision_rules.current().dot_product.value.typed_bounds
        values = dict(self.values)
        for a, arr in zip(data_args, prepared.inputs, strict=True):
            values[self.operands.inputs[a][0]] = arr
        for a, names in self.operands.inputs.items():
            if a in data_args:
                continue
            for n in names:
                v = np.asarray(values[n])
                if is_float_storage(v.dtype):
                    values[n] = np.abs(v.astype(np.float64))
                    if floor and not a.endswith("_zp"):
                        at_least = compliance.abs_floor(v) if own_floor else floor
                        values[n] = np.maximum(values[n], at_least)
        ctx = self.evaluator.context(self.block, self.index, values)
        with np.errstate(invalid="ignore", over="ignore"):
            results = self.evaluator.call(ctx)
        out = results[self.output_arg]
        bound = np.asarray(out[0] if isinstance(out, list) else out, dtype=np.float64)
        # inf * 0 in the abs pass (an infinite input, made the peak of every input when
        # local_bound is false, meeting a zero weight) is an unbounded term, not "no
        # bound": the output then has no accuracy limit, as for any overflowing bound.
        return np.where(np.isnan(bound), np.inf, bound)


Describer = Callable[[DescribeContext], OutputCheck]
DESCRIBERS: OperatorTable[Describer] = OperatorTable()


# Operators whose describer also describes integer outputs (RESCALE's INEXACT_ROUND);
# the others' integer outputs are exact.
INTEGER_DESCRIBERS: set[str] = family(set())


def describes(*names: str, integer_outputs: bool = False) -> Callable[[Describer], Describer]:
    def register(fn: Describer) -> Describer:
        for name in names:
            if name in DESCRIBERS:
                raise RuntimeError(f"{name} has two describers")
            DESCRIBERS[name] = fn
            if integer_outputs:
                INTEGER_DESCRIBERS.add(name)
        return fn

    return register


def _load_describers() -> None:
    import reference.describe  # noqa: F401 - imported for its registrations


def expect(
    graph: Graph,
    inputs: Mapping[str, Any],
    *,
    spec: Spec | None = None,
    level: Level | str = "8K",
    data_set: int = -1,
    make_evaluator: Callable[[Graph, Spec, Level], Evaluator] = Evaluator,
) -> Expectation:
    """Evaluate ``graph`` and describe how each of its outputs is to be checked.

    ``make_evaluator`` builds the evaluator (an Evaluator subclass such as
    ``reference.flushing.FlushingEvaluator`` gives another reading of the same graph).
    """
    _load_describers()
    spec = spec or load_spec()
    lv = spec.level(level) if isinstance(level, str) else level
    evaluator = make_evaluator(graph, spec, lv)
    outcome = evaluator.run(inputs)
    expectation = Expectation(outcome)
    if not outcome.valid:
        return expectation
    main = graph.main
    producers = {o: i for i, op in enumerate(main.operators) for o in op.outputs}
    # Describers read arrays: a block-scaled operand is given as the fp64 values of its
    # elements (value * scale, exact), which the abs-input pass takes as read.
    arrays = {n: element_values(v) for n, v in evaluator.main_values.items()}
    for name in main.outputs:
        t = main.tensors[name]
        index = producers.get(name)
        if index is None:  # a graph input passed straight through
            expectation.checks[name] = OutputCheck(compliance.exact(t.dtype, "graph input"))
            continue
        ctx = evaluator.context(main, index, evaluator.main_values)
        output_arg = next(a for a, ns in ctx.operands.outputs.items() if name in ns)
        dctx = DescribeContext(
            evaluator,
            main,
            index,
            main.operators[index],
            ctx.operands,
            ctx.mode,
            arrays,
            output_arg,
            t.dtype,
            data_set,
        )
        expectation.checks[name] = describe(dctx)
        if t.dtype.is_float and chain_bound.needs_composing(main):
            composed = _composed(main, arrays, name, outcome.outputs[name], t.dtype)
            expectation.checks[name] = composed or expectation.checks[name]
    return expectation


def _composed(
    block: Block, values: Mapping[str, np.ndarray], name: str, reference: Any, dt: DType
) -> OutputCheck | None:
    """A chain whose rounding results feed later operators: the composed bound
    (reference.compliance.chain_bound), where it is composed."""
    interval = chain_bound.composed_interval(block, values, name)
    if interval is None:
        return None
    bound = chain_bound.composed_error_bound(interval, np.asarray(reference, np.float64))
    descriptor = compliance.abs_error(
        dt, chain_bound.COMPOSED_RULE, magnitude=compliance.Magnitude.BOUND
    )
    return OutputCheck(descriptor, bound)


def element_values(v: TensorValue) -> np.ndarray:
    """An array as it is; a block-scaled tensor's elements, scale times value, in fp64
    (exact: a value has at most 8 significant bits and the scale is a power of two;
    a NaN scale gives its block NaN)."""
    if not isinstance(v, BlockScaled):
        return v
    values = mx.decode(v.values, value_type(v.dtype))
    with np.errstate(invalid="ignore"):
        return values * mx.decode(v.element_scales(), scale_type(v.dtype))


def describe(ctx: DescribeContext) -> OutputCheck:
    name = ctx.operator.op
    dtype = ctx.dtype
    if name in DESCRIBERS and (dtype.is_float or name in INTEGER_DESCRIBERS):
        return DESCRIBERS[name](ctx)
    if dtype.is_float and name in compliance.abs_error_operators():
        first = "input" if "input" in ctx.operands.inputs else "input1"
        x = ctx.arg(first)
        y = ctx.arg("input2") if name == "POW" else None
        if y is not None:
            x, y = np.broadcast_arrays(x, y)
        ref = np.asarray(ctx.values[ctx.operands.outputs[ctx.output_arg][0]], np.float64)
        bound = compliance.abs_error_bound_tensor(name, x, y, out=dtype, ref=ref)
        return OutputCheck(compliance.abs_error_for(name, dtype), bound)
    return OutputCheck(compliance.for_operator(name, dtype))

"""What a vector expects of each graph output: the reference result, the compliance
descriptor that applies to it, and the bound tensor the descriptor needs.

The descriptor follows the operator that produces the output (its rule in the
precision table, its dot-product constants); the bound comes from that operator's
inputs: the abs-input pass for dot products, ``abs_error_bound_tensor`` for the
ABS_ERROR operators.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from conformance.builder import map_operands
from conformance.dtypes import DType
from conformance.graph import Graph, Operator
from conformance.spec import Level, Spec, load_spec
from reference import compliance
from reference.compliance import ComplianceDescriptor
from reference.engine import Evaluator
from reference.outcome import Outcome


@dataclass
class OutputCheck:
    descriptor: ComplianceDescriptor
    bound: np.ndarray | None = None


@dataclass
class Expectation:
    outcome: Outcome
    checks: dict[str, OutputCheck] = field(default_factory=dict)

    def check(self, name: str, actual: np.ndarray) -> compliance.Verdict:
        c = self.checks[name]
        return compliance.check(self.outcome.outputs[name], c.descriptor, actual, c.bound)


def expect(
    graph: Graph,
    inputs: Mapping[str, Any],
    *,
    spec: Spec | None = None,
    level: Level | str = "8K",
    data_set: int = -1,
) -> Expectation:
    """Evaluate ``graph`` and describe how each of its outputs is to be checked."""
    spec = spec or load_spec()
    lv = spec.level(level) if isinstance(level, str) else level
    evaluator = Evaluator(graph, spec, lv)
    outcome = evaluator.run(inputs)
    expectation = Expectation(outcome)
    if not outcome.valid:
        return expectation
    main = graph.main
    producers = {o: op for op in main.operators for o in op.outputs}
    for name in main.outputs:
        t = main.tensors[name]
        op = producers.get(name)
        if op is None:  # a graph input passed straight through
            expectation.checks[name] = OutputCheck(compliance.exact(t.dtype, "graph input"))
            continue
        values = {n: evaluator.main_values[n] for n in op.inputs}
        expectation.checks[name] = _describe(spec, op, values, t.dtype, data_set)
    return expectation


def _describe(
    spec: Spec, op: Operator, values: Mapping[str, np.ndarray], dtype: DType, data_set: int
) -> OutputCheck:
    name = op.op
    operands = map_operands(spec.operator(name), op)

    def arg(a: str) -> np.ndarray:
        return np.asarray(values[operands.inputs[a][0]])

    if not dtype.is_float or name not in _PARAMETRISED:
        if dtype.is_float and name in compliance.ABS_ERROR_OPERATORS:
            first = "input" if "input" in operands.inputs else "input1"
            y = arg("input2") if name == "POW" else None
            x = arg(first)
            if y is not None:
                x, y = np.broadcast_arrays(x, y)
            bound = compliance.abs_error_bound_tensor(name, x, y)
            return OutputCheck(compliance.abs_error_for(name, dtype), bound)
        return OutputCheck(compliance.for_operator(name, dtype))
    return _PARAMETRISED[name](spec, op, arg, dtype, data_set)


def _reduce_sum(
    spec: Spec, op: Operator, arg: Callable[[str], np.ndarray], dtype: DType, data_set: int
) -> OutputCheck:
    # REDUCE_SUM is a dot product of the reduced axis with a vector of ones (Appendix A);
    # it has no local_bound attribute, so the abs pass is per element.
    x = arg("input")
    axis = int(op.attributes["axis"])
    acc = spec.operator("REDUCE_SUM").mode(_mode_name(spec, op, dtype)).dtype("acc_t")
    desc = compliance.dot_product(
        "REDUCE_SUM", dtype, acc, ks=int(x.shape[axis]), data_set=data_set
    )
    bound = np.sum(np.abs(x.astype(np.float64)), axis=axis, keepdims=True)
    return OutputCheck(desc, bound)


def _reduce_product(
    spec: Spec, op: Operator, arg: Callable[[str], np.ndarray], dtype: DType, data_set: int
) -> OutputCheck:
    x = arg("input")
    n = int(x.shape[int(op.attributes["axis"])])
    return OutputCheck(compliance.reduce_product(dtype, n))


def _mode_name(spec: Spec, op: Operator, dtype: DType) -> str:
    for m in spec.operator(op.op).modes:
        if m.bindings.get("in_out_t") == dtype.spec_name:
            return m.mode
    raise KeyError(f"{op.op} has no mode for {dtype}")


_PARAMETRISED: dict[str, Callable[..., OutputCheck]] = {
    "REDUCE_SUM": _reduce_sum,
    "REDUCE_PRODUCT": _reduce_product,
}

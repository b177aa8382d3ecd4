"""The graph as a backend that flushes denormals computes it.

:class:`FlushingEvaluator` is the reference evaluator whose operators read their
fp16/bf16/fp32 operands with subnormals flushed to a zero of the same sign: the input
tensors (graph inputs, constants and intermediate results alike) and the float
attributes typed by a tensor type variable (CLAMP's min_val / max_val, PAD's
pad_const).  Everything else is the reference: the result is computed in fp64 from
the flushed operands, and :func:`flushed_expectation` describes it with the same
compliance rules, so the bounds (the abs-input pass of a dot product, RESIZE's
max(abs(input)), the ABS_ERROR bound tensors) come from the flushed operands too.

The flush rewrites the evaluator's own value tables, so that the describers, which
read an operator's operands from them, see what the operator saw.  It never writes
into an array: callers' inputs are untouched.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from conformance.block_tensor import TensorValue
from conformance.dtypes import DType
from conformance.graph import Block, Graph
from conformance.spec import Level, Spec
from reference.compliance.denormals import flush
from reference.context import OpContext
from reference.engine import Evaluator, to_storage
from reference.expectations import Expectation, expect


class FlushingEvaluator(Evaluator):
    """The reference evaluator with the operands of type ``types`` flushed.

    With ``intermediate_only`` only tensors that an operator of the same block produced
    are flushed (graph inputs, constants and attributes keep their subnormals): a
    backend that flushes its results but reads its inputs as given.  ``flushed`` lists
    the types whose values actually changed.
    """

    def __init__(
        self,
        graph: Graph,
        spec: Spec,
        level: Level,
        types: frozenset[DType],
        *,
        intermediate_only: bool = False,
    ) -> None:
        super().__init__(graph, spec, level)
        self.types = types
        self.intermediate_only = intermediate_only
        self.flushed: set[DType] = set()
        self._produced: dict[str, frozenset[str]] = {}

    def context(
        self, block: Block, index: int, values: Mapping[str, TensorValue], depth: int = 0
    ) -> OpContext:
        if not isinstance(values, dict):
            values = dict(values)
        produced = self._produced_by(block) if self.intermediate_only else None
        for name in block.operators[index].inputs:
            t = block.tensors.get(name)
            if t is None or t.dtype not in self.types or name not in values:
                continue
            if produced is not None and name not in produced:
                continue
            held = values[name]
            if not isinstance(held, np.ndarray):
                continue  # a block-scaled pair: none of the flushed types
            flushed = flush(held, t.dtype)
            if flushed is not held:
                values[name] = flushed
                self.flushed.add(t.dtype)
        ctx = super().context(block, index, values, depth)
        if not self.intermediate_only:
            attributes = flushed_attributes(ctx, self.types)
            if attributes:
                self.flushed.update(dt for _, dt in attributes.values())
                changed = {n: v for n, (v, _) in attributes.items()}
                ctx.operator = dataclasses.replace(
                    ctx.operator, attributes={**ctx.operator.attributes, **changed}
                )
        return ctx

    def _produced_by(self, block: Block) -> frozenset[str]:
        if block.name not in self._produced:
            self._produced[block.name] = frozenset(n for op in block.operators for n in op.outputs)
        return self._produced[block.name]


def flushed_attributes(ctx: OpContext, types: frozenset[DType]) -> dict[str, tuple[Any, DType]]:
    """The operator's float attributes whose element type is a type variable bound to
    one of ``types`` and that hold a subnormal (rounded to the type first, as the
    operator reads them): name -> (flushed value, type)."""
    out: dict[str, tuple[Any, DType]] = {}
    for arg in ctx.op_spec.arguments:
        if arg.category != "attribute" or arg.name not in ctx.operator.attributes:
            continue
        try:
            dt = ctx.dtype(arg.element_type)
        except KeyError:
            continue  # an enum, a shape or a concrete integer type
        if dt not in types:
            continue
        raw = np.asarray(ctx.operator.attributes[arg.name])
        if raw.dtype.kind not in "fiu":
            continue
        stored = to_storage(raw.astype(np.float64), dt)
        flushed = flush(stored, dt)
        if flushed is stored:
            continue
        wide = flushed.astype(np.float64)
        out[arg.name] = (float(wide) if wide.ndim == 0 else wide.tolist(), dt)
    return out


def flushed_expectation(
    graph: Graph,
    inputs: Mapping[str, Any],
    types: frozenset[DType],
    *,
    spec: Spec | None = None,
    level: Level | str = "8K",
    data_set: int = -1,
    intermediate_only: bool = False,
) -> tuple[Expectation, FlushingEvaluator]:
    """:func:`reference.expectations.expect` for a backend that flushes ``types``; the
    evaluator is returned too, for its ``flushed`` types and its operand tables."""
    made: list[FlushingEvaluator] = []

    def make(g: Graph, s: Spec, lv: Level) -> Evaluator:
        made.append(FlushingEvaluator(g, s, lv, types, intermediate_only=intermediate_only))
        return made[-1]

    expectation = expect(
        graph, inputs, spec=spec, level=level, data_set=data_set, make_evaluator=make
    )
    return expectation, made[0]

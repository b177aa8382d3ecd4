"""Evaluate a graph block by block and return the spec's outcome.

Order of checks for each operator, so that "unpredictable overrides error" holds as
far as it can be known: its LEVEL_CHECKs first (unpredictable), then type support
(error), then the operator's own pseudocode, which raises ERROR_IF / REQUIRE in the
order the pseudocode states them.  After an error the graph's data is undefined, so
evaluation stops there; a REQUIRE that only later data could have failed is not
looked for (generators never mix the two in one vector).

Floating-point outputs are computed in fp64 from the inputs as stored; the value a
later operator reads is that result rounded to the tensor's type, while the graph's
outputs are returned in fp64, as the compliance rules compare against them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from conformance.block_tensor import BlockScaled, TensorValue, is_block_scaled
from conformance.builder import bind_types, check_attributes, find_mode, map_operands
from conformance.dtypes import DType
from conformance.graph import Block, Graph, Tensor
from conformance.rounding import round_to
from conformance.spec import Level, Spec, load_spec
from reference import registry
from reference.arguments import TYPES_CLAUSE, check_arguments
from reference.context import OpContext
from reference.levels import level_violations
from reference.outcome import ErrorIf, Outcome, Rule, Unpredictable


class EvaluationError(RuntimeError):
    """The evaluator itself cannot go on (missing implementation, bad graph inputs)."""


def to_storage(values: np.ndarray, dt: DType) -> np.ndarray:
    """Hold values in the tensor type's storage, rounding floats to nearest even."""
    arr = np.asarray(values)
    if dt.is_float and arr.dtype != dt.storage:
        # Round once, directly: ml_dtypes' float64 -> bf16/fp8 casts go through float32
        # and can round twice (see conformance.rounding).
        return round_to(dt, arr)
    return arr.astype(dt.storage, copy=False)


def held(value: Any, dt: DType, what: str = "value") -> TensorValue:
    """``value`` as a tensor of type ``dt`` holds it: :func:`to_storage` for an array,
    each part in its storage for a block-scaled composite (a :class:`BlockScaled` of
    that type; the only value such a tensor can have)."""
    if is_block_scaled(dt):
        if not isinstance(value, BlockScaled) or value.dtype is not dt:
            got = value.dtype if isinstance(value, BlockScaled) else "an array"
            raise EvaluationError(f"{what}: a {dt} tensor holds values and scales, got {got}")
        try:
            return BlockScaled.of(dt, value.values, value.scales)
        except ValueError as exc:
            raise EvaluationError(f"{what}: {exc}") from None
    if isinstance(value, BlockScaled):
        raise EvaluationError(f"{what}: a {dt} tensor cannot hold the composite {value.dtype}")
    return to_storage(value, dt)


def _check_input(t: Tensor, value: Any) -> TensorValue:
    if is_block_scaled(t.dtype) or isinstance(value, BlockScaled):
        composite = held(value, t.dtype, f"input {t.name!r}")
        if composite.shape != t.shape:
            raise EvaluationError(
                f"input {t.name!r}: shape {list(composite.shape)} does not match {list(t.shape)}"
            )
        return composite
    arr = np.asarray(value)
    if tuple(arr.shape) != t.shape:
        raise EvaluationError(
            f"input {t.name!r}: shape {list(arr.shape)} does not match {list(t.shape)}"
        )
    if t.dtype.is_int and arr.size and not np.all(t.dtype.in_range(arr.astype(np.int64))):
        raise EvaluationError(f"input {t.name!r}: values outside the range of {t.dtype}")
    return to_storage(arr, t.dtype)


class Evaluator:
    def __init__(self, graph: Graph, spec: Spec, level: Level) -> None:
        self.graph = graph
        self.spec = spec
        self.level = level
        self.ops = registry.load_all()
        self.state: dict[str, Any] = {}  # graph-wide state, e.g. variable tensors
        # Every tensor value of the entry block, as stored (kept for compliance bounds,
        # which need an operator's inputs).
        self.main_values: dict[str, TensorValue] = {}

    def run(self, inputs: Mapping[str, Any]) -> Outcome:
        main = self.graph.main
        missing = [n for n in main.inputs if n not in inputs]
        if missing:
            raise EvaluationError(f"no value given for graph input(s) {', '.join(missing)}")
        try:
            # Signalling NaNs in the inputs widen to quiet ones in every operator that
            # computes in fp64; numpy's "invalid value" warning about that is noise.
            with np.errstate(invalid="ignore"):
                values = [_check_input(main.tensors[n], inputs[n]) for n in main.inputs]
                outputs, exact = self.run_block(main, values, depth=0)
        except Unpredictable as fired:
            return Outcome("unpredictable", rule=fired.rule)
        except ErrorIf as fired:
            return Outcome("error", rule=fired.rule)
        result = {n: exact.get(n, v) for n, v in zip(main.outputs, outputs, strict=True)}
        return Outcome("valid", result)

    def run_block(
        self, block: Block, inputs: list[TensorValue], depth: int
    ) -> tuple[list[TensorValue], dict[str, np.ndarray]]:
        if len(inputs) != len(block.inputs):
            raise ErrorIf(
                Rule(
                    "ERROR_IF",
                    block.name,
                    "tensor_list_shape(input_list) != tosa_input_shape(graph)",
                    f"block {block.name!r} takes {len(block.inputs)} inputs, got {len(inputs)}",
                )
            )
        values: dict[str, TensorValue] = {}
        exact: dict[str, np.ndarray] = {}
        if depth == 0:
            self.main_values = values
        for name, t in block.tensors.items():
            try:
                constant = t.constant()
            except ValueError as exc:
                raise EvaluationError(str(exc)) from None
            if constant is not None:
                values[name] = held(constant, t.dtype, f"constant {name!r}")
        for name, v in zip(block.inputs, inputs, strict=True):
            values[name] = v
        for index in range(len(block.operators)):
            self._run_operator(block, index, values, exact, depth)
        return [values[n] for n in block.outputs], exact

    def context(
        self, block: Block, index: int, values: Mapping[str, TensorValue], depth: int = 0
    ) -> OpContext:
        """Check operator ``index`` of ``block`` (level, attributes, types, argument
        shapes) and make the context its implementation runs in."""
        operator = block.operators[index]
        name = operator.op

        def fail(clause: str, detail: str) -> ErrorIf:
            return ErrorIf(Rule("ERROR_IF", name, clause, detail, index))

        try:
            op_spec = self.spec.operator(name)
        except KeyError:
            raise fail("operator is defined by the specification", f"unknown {name}") from None
        try:
            operands = map_operands(op_spec, operator)
        except ValueError as exc:
            raise fail("operand count", str(exc)) from None
        for n in [*operator.inputs]:
            if n not in values:
                raise EvaluationError(f"{name} (operator {index}) reads {n!r} before it is set")
        violations = level_violations(
            op_spec, operands, block.tensors, operator.attributes, values, self.level
        )
        if violations:
            raise Unpredictable(Rule("LEVEL_CHECK", name, violations[0], "", index))
        attr_problems = check_attributes(op_spec, operator.attributes, self.spec.enums)
        if attr_problems:
            raise fail("attributes as declared by the specification", attr_problems[0])
        bindings, type_problems = bind_types(op_spec, operator, block.tensors)
        mode = find_mode(op_spec, bindings, operator.attributes) if not type_problems else None
        if type_problems or (mode is None and op_spec.modes):
            got = ", ".join(f"{k}={v}" for k, v in sorted(bindings.items()))
            detail = type_problems[0] if type_problems else f"no mode supports {got}"
            raise fail(TYPES_CLAUSE, detail)

        def run_nested(block_name: str, args: list[np.ndarray]) -> list[np.ndarray]:
            nested = self.graph.block(block_name)
            outs, exact = self.run_block(nested, list(args), depth + 1)
            # fp64 results of the nested block's operators, so that compliance compares
            # control-flow outputs against the exact values too
            results = [exact.get(n, v) for n, v in zip(nested.outputs, outs, strict=True)]
            arrays = [v for v in results if isinstance(v, np.ndarray)]
            if len(arrays) != len(results):
                raise EvaluationError(
                    f"block {block_name!r} returns a block-scaled tensor: the reference's "
                    "control flow has no block-scaled tensors yet"
                )
            return arrays

        ctx = OpContext(
            op_spec,
            operator,
            mode,
            bindings,
            operands,
            block,
            values,
            self.level,
            index,
            run_nested,
            self.state,
            depth,
            self.graph,
            self.spec.revision,
        )
        # The arguments' declared shapes and fixed ranks hold for every operator
        # (tosa_execute_graph's argument checks), before its own pseudocode runs.
        check_arguments(ctx)
        return ctx

    def call(self, ctx: OpContext) -> dict[str, Any]:
        """Run the operator's implementation: its outputs by argument name, floats in fp64."""
        fn = self.ops.get(ctx.name)
        if fn is None:
            raise EvaluationError(f"the reference evaluator does not implement {ctx.name} yet")
        return fn(ctx)

    def _run_operator(
        self,
        block: Block,
        index: int,
        values: dict[str, TensorValue],
        exact: dict[str, np.ndarray],
        depth: int,
    ) -> None:
        ctx = self.context(block, index, values, depth)
        results = self.call(ctx)
        name = ctx.name
        for arg_name, names in ctx.operands.outputs.items():
            produced = results.get(arg_name)
            if produced is None:
                raise EvaluationError(f"{name} produced no value for output {arg_name!r}")
            arrays = produced if isinstance(produced, list) else [produced]
            for tensor_name, value in zip(names, arrays, strict=True):
                t = block.tensors[tensor_name]
                if is_block_scaled(t.dtype) or isinstance(value, BlockScaled):
                    composite = held(value, t.dtype, f"{name} (operator {index}) output")
                    if composite.shape != t.shape:
                        raise EvaluationError(
                            f"{name} (operator {index}) computed shape {list(composite.shape)} "
                            f"for {tensor_name!r}, declared {list(t.shape)}: missing ERROR_IF check"
                        )
                    values[tensor_name] = composite
                    continue
                arr = np.asarray(value)
                if tuple(arr.shape) != t.shape:
                    raise EvaluationError(
                        f"{name} (operator {index}) computed shape {list(arr.shape)} for "
                        f"{tensor_name!r}, declared {list(t.shape)}: missing ERROR_IF check"
                    )
                if t.dtype.is_float:
                    with np.errstate(invalid="ignore"):  # signalling NaNs widen quietly
                        exact[tensor_name] = arr.astype(np.float64)
                values[tensor_name] = to_storage(arr, t.dtype)


def evaluate(
    graph: Graph,
    inputs: Mapping[str, Any],
    *,
    spec: Spec | None = None,
    level: Level | str = "8K",
) -> Outcome:
    """Evaluate ``graph`` on ``inputs`` (by graph input name) at ``level``."""
    spec = spec or load_spec()
    lv = spec.level(level) if isinstance(level, str) else level
    return Evaluator(graph, spec, lv).run(inputs)

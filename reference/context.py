"""What an operator implementation sees: its operands by spec argument name, its
attributes, its mode and the rule helpers (ERROR_IF, REQUIRE)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from conformance.block_tensor import BlockScaled, TensorValue
from conformance.builder import OperandMap
from conformance.dtypes import DType
from conformance.graph import Block, Graph, Operator, Tensor
from conformance.spec import Level, OperatorSpec, TypeSupport
from reference.outcome import ErrorIf, Rule, Unpredictable


class OpContext:
    def __init__(
        self,
        op_spec: OperatorSpec,
        operator: Operator,
        mode: TypeSupport | None,
        bindings: Mapping[str, DType],
        operands: OperandMap,
        block: Block,
        values: Mapping[str, TensorValue],
        level: Level,
        index: int,
        run_block: Callable[[str, list[np.ndarray]], list[np.ndarray]] | None = None,
        state: dict[str, Any] | None = None,
        depth: int = 0,
        graph: Graph | None = None,
        revision: str = "",
    ) -> None:
        self.op_spec = op_spec
        self.operator = operator
        self.mode = mode
        self.bindings = dict(bindings)
        self.operands = operands
        self.block = block
        self.values = values
        self.level = level
        self.index = index
        self._run_block = run_block
        self.state = state if state is not None else {}  # graph-wide (variables)
        self.depth = depth  # control-flow nesting depth of this operator's block
        self.graph = graph
        # The spec revision's name (conformance.revisions): for the few pseudocode rules
        # that changed between revisions without a trace in tosa.xml's declarations.
        self.revision = revision

    # -- operands ---------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.operator.op

    @property
    def attrs(self) -> dict[str, Any]:
        return self.operator.attributes

    def attr(self, name: str, default: Any = None) -> Any:
        """An attribute, or a parameter the revision passes as a one-element input
        tensor (TOSA 1.0's zero points, ``pad_const``): its single value."""
        if name in self.operator.attributes:
            return self.operator.attributes[name]
        names = self.operands.inputs.get(name)
        if names and len(names) == 1 and names[0] in self.values:
            value = np.asarray(self._array(names[0]))
            return value.reshape(-1)[0].item() if value.size == 1 else value
        return default

    def arg(self, name: str) -> np.ndarray:
        """The value of a single input argument (an array: see :meth:`value` for an
        argument that may be block-scaled)."""
        return self._array(self._single(name))

    def arg_list(self, name: str) -> list[np.ndarray]:
        return [self._array(n) for n in self.operands.inputs[name]]

    def value(self, name: str) -> TensorValue:
        """The value of a single input argument: an array, or the (values, scales)
        pair of a block-scaled tensor."""
        return self.values[self._single(name)]

    def value_list(self, name: str) -> list[TensorValue]:
        return [self.values[n] for n in self.operands.inputs[name]]

    def _single(self, name: str) -> str:
        names = self.operands.inputs[name]
        if len(names) != 1:
            raise KeyError(f"{self.name} input {name!r} is a list; use arg_list")
        return names[0]

    def _array(self, tensor: str) -> np.ndarray:
        v = self.values[tensor]
        if isinstance(v, BlockScaled):
            # An implementation that reads arrays only has no block-scaled form.
            raise TypeError(
                f"{self.name}: tensor {tensor!r} is block-scaled ({v.dtype}); the reference "
                f"has no block-scaled {self.name} yet"
            )
        return v

    def input_tensor(self, name: str) -> Tensor:
        return self.block.tensors[self.operands.inputs[name][0]]

    def input_tensors(self, name: str) -> list[Tensor]:
        return [self.block.tensors[n] for n in self.operands.inputs[name]]

    def output_tensor(self, name: str = "output") -> Tensor:
        return self.block.tensors[self.operands.outputs[name][0]]

    def output_tensors(self, name: str) -> list[Tensor]:
        return [self.block.tensors[n] for n in self.operands.outputs[name]]

    def out_shape(self, name: str = "output") -> tuple[int, ...]:
        return self.output_tensor(name).shape

    def dtype(self, var: str) -> DType:
        """The element type bound to a type variable (``in_out_t``, ``acc_t`` ...)."""
        if var in self.bindings:
            return self.bindings[var]
        if self.mode is not None and var in self.mode.bindings:
            return self.mode.dtype(var)
        raise KeyError(f"{self.name}: type {var} is not bound")

    # -- rules --------------------------------------------------------------------
    def _rule(self, kind: str, clause: str, detail: str) -> Rule:
        return Rule(kind, self.name, clause, detail, self.index)  # type: ignore[arg-type]

    def error_if(self, condition: bool | np.ndarray, clause: str, detail: str = "") -> None:
        """ERROR_IF(condition); an array condition fires when any element holds."""
        if bool(np.any(condition)):
            raise ErrorIf(self._rule("ERROR_IF", clause, detail))

    def require(self, condition: bool | np.ndarray, clause: str, detail: str = "") -> None:
        """REQUIRE(condition): every element must hold, else the graph is unpredictable."""
        if not bool(np.all(condition)):
            raise Unpredictable(self._rule("REQUIRE", clause, detail))

    def level_check(self, condition: bool, clause: str, detail: str = "") -> None:
        if not condition:
            raise Unpredictable(self._rule("LEVEL_CHECK", clause, detail))

    # -- control flow ---------------------------------------------------------------
    def graph_block(self, name: str) -> Block:
        """A block of the graph by name (COND_IF / WHILE_LOOP check their declarations)."""
        if self.graph is None:
            raise KeyError(f"no graph to look up block {name!r} in")
        return self.graph.block(name)

    def run_block(self, name: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
        """Evaluate a block of the graph (COND_IF / WHILE_LOOP bodies) one level deeper."""
        if self._run_block is None:
            raise RuntimeError("this context cannot run blocks")
        return self._run_block(name, inputs)

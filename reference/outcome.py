"""The three results the spec defines for a graph: valid, error, unpredictable."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from conformance.block_tensor import TensorValue

RuleKind = Literal["ERROR_IF", "REQUIRE", "LEVEL_CHECK"]


@dataclass(frozen=True)
class Rule:
    """The spec clause that decided an outcome."""

    kind: RuleKind
    operator: str  # operator name, e.g. "ADD"
    clause: str  # the condition as the pseudocode states it, e.g. "shift < 0 || shift > 31"
    detail: str = ""  # what made it fire: tensor/attribute names and values
    index: int | None = None  # position of the operator in its block

    def __str__(self) -> str:
        where = f"{self.operator}" + (f" (operator {self.index})" if self.index is not None else "")
        text = f"{where}: {self.kind}({self.clause})"
        return f"{text}: {self.detail}" if self.detail else text

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "operator": self.operator,
            "clause": self.clause,
            "detail": self.detail,
            "index": self.index,
        }


class RuleFired(Exception):  # an outcome of the graph, not an error of this program
    def __init__(self, rule: Rule) -> None:
        super().__init__(str(rule))
        self.rule = rule


class ErrorIf(RuleFired):
    """An ERROR_IF condition held: the graph is in error (unless unpredictable)."""


class Unpredictable(RuleFired):
    """A REQUIRE or LEVEL_CHECK failed: the graph's result is unpredictable."""


@dataclass
class Outcome:
    kind: Literal["valid", "error", "unpredictable"]
    # Graph outputs by tensor name: floating-point values in fp64 (the exact result of
    # the operator on its rounded inputs), everything else in the tensor's storage type;
    # a block-scaled output as its (values, scales) pair.
    outputs: dict[str, TensorValue] = field(default_factory=dict)
    rule: Rule | None = None

    @property
    def valid(self) -> bool:
        return self.kind == "valid"

    def __str__(self) -> str:
        return self.kind if self.rule is None else f"{self.kind}: {self.rule}"

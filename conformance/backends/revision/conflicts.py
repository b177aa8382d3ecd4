"""Vectors the later revision judges differently, found from the graph and its values.

Some graphs translate fine but mean something else in the revision tosa-tools
implements: a rule was added, relaxed or tightened.  Comparing the model's answer with
ours would then measure the revision gap, not the model, so such vectors are skipped
with the reason given here (each rule is also a row of the table in
:mod:`conformance.backends.revision.revisions`).

Values are known for the entry block's inputs and for constant tensors; rules that need
values do not fire where they are unknown (inside control-flow bodies).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from conformance.graph import Block, Graph, Operator
from conformance.operator_table import OperatorTable

Rule = Callable[[Block, Operator, Mapping[str, np.ndarray]], str | None]
RULES: OperatorTable[list[Rule]] = OperatorTable()
# Rules about values (REQUIREs): they concern valid vectors only; a must-fail graph is
# rejected by an ERROR_IF before any value is looked at, and level vectors are not judged.
VALUE_RULES: OperatorTable[list[Rule]] = OperatorTable()


def _rule(*ops: str, values: bool = False) -> Callable[[Rule], Rule]:
    def deco(fn: Rule) -> Rule:
        for op in ops:
            (VALUE_RULES if values else RULES).setdefault(op, []).append(fn)
        return fn

    return deco


def find_conflict(
    graph: Graph, inputs: Mapping[str, np.ndarray], kind: str, max_nesting: int | None = None
) -> str | None:
    """The reason this vector (of kind valid / error / level) means something else in
    the later revision, else None.  ``max_nesting``: the vector's level's MAX_NESTING."""
    if max_nesting is not None and nesting_depth(graph) >= max_nesting:
        return (
            f"control flow nested {nesting_depth(graph) + 1} deep: our revision fails it "
            f"(ERROR_IF(tosa_nesting_depth >= MAX_NESTING), MAX_NESTING={max_nesting}); "
            "tosa-tools 2026.8 runs it without complaint (it does not check the depth)"
        )
    tables = [RULES, VALUE_RULES] if kind == "valid" else [RULES]
    for block in graph.blocks():
        values: dict[str, np.ndarray] = {
            n: t.data for n, t in block.tensors.items() if t.data is not None
        }
        if block is graph.main:
            values.update({n: np.asarray(v) for n, v in inputs.items()})
        for op in block.operators:
            for table in tables:
                for rule in table.get(op.op, ()):
                    reason = rule(block, op, values)
                    if reason:
                        return reason
    return None


_CONTROL_FLOW = OperatorTable(
    {
        "COND_IF": ("then_graph", "else_graph"),
        "WHILE_LOOP": ("cond_graph", "body_graph"),
    }
)


def nesting_depth(graph: Graph) -> int:
    """The deepest tosa_nesting_depth at which a control-flow operator runs (the entry
    block is depth 0), or -1 without control flow; as our reference counts it."""
    blocks = {b.name: b for b in graph.blocks()}

    def deepest(block: Block, depth: int, seen: frozenset[str]) -> int:
        worst = -1
        for op in block.operators:
            for attr in _CONTROL_FLOW.get(op.op, ()):
                worst = max(worst, depth)
                name = str(op.attributes.get(attr, ""))
                if name in blocks and name not in seen:
                    worst = max(worst, deepest(blocks[name], depth + 1, seen | {name}))
        return worst

    return deepest(graph.main, 0, frozenset({graph.main.name}))


@_rule("COND_IF")
def _cond_rank0(block: Block, op: Operator, values: Mapping[str, np.ndarray]) -> str | None:
    cond = block.tensors.get(op.inputs[0]) if op.inputs else None
    if cond is not None and cond.rank == 0:
        return (
            "COND_IF with a rank-0 condition breaks our revision's rank >= 1 rule; the later "
            "revision takes a rank-0 condition"
        )
    return None


@_rule("CONCAT")
def _concat_rank0(block: Block, op: Operator, values: Mapping[str, np.ndarray]) -> str | None:
    if any(block.tensors[n].rank == 0 for n in op.inputs if n in block.tensors):
        return (
            "CONCAT of rank-0 tensors into a vector is valid in our revision (inputs of rank "
            "0, output of rank max(1, rank)); tosa-tools requires inputs and output of one rank"
        )
    return None


@_rule("CONCAT_SHAPE")
def _concat_shape_empty(block: Block, op: Operator, values: Mapping[str, np.ndarray]) -> str | None:
    if not op.inputs:
        return (
            "CONCAT_SHAPE of an empty list is valid in our revision; tosa-tools requires at "
            "least one input"
        )
    if any(n in block.tensors and block.tensors[n].size == 0 for n in op.inputs):
        return (
            "CONCAT_SHAPE of an empty shape (the shape of a rank-0 tensor) is valid in our "
            "revision; tosa-tools rejects rank-0 shapes"
        )
    return None


@_rule("RESHAPE")
def _reshape_rank0(block: Block, op: Operator, values: Mapping[str, np.ndarray]) -> str | None:
    names = [*op.inputs[:1], *op.outputs]
    if any(n in block.tensors and block.tensors[n].rank == 0 for n in names):
        return (
            "RESHAPE to or from rank 0 breaks our revision's rank >= 1 rule; the later "
            "revision allows rank-0 tensors"
        )
    return None


@_rule("LOGICAL_LEFT_SHIFT", "LOGICAL_RIGHT_SHIFT", values=True)
def _shift_range(block: Block, op: Operator, values: Mapping[str, np.ndarray]) -> str | None:
    if len(op.inputs) != 2 or op.inputs[1] not in values:
        return None
    bits = block.tensors[op.inputs[0]].dtype.bits
    amounts = np.asarray(values[op.inputs[1]]).astype(np.int64)
    if bits < 32 and amounts.size and int(amounts.max()) > bits - 1:
        return (
            f"{op.op} by more than {bits - 1} on {bits}-bit values: our revision defines "
            "shifts up to 31 for every type; the later revision REQUIREs "
            f"shift <= {bits - 1} (unpredictable)"
        )
    return None


@_rule("POW", values=True)
def _pow_domain(block: Block, op: Operator, values: Mapping[str, np.ndarray]) -> str | None:
    if len(op.inputs) != 2 or not all(n in values for n in op.inputs):
        return None
    try:
        x, y = np.broadcast_arrays(*(np.asarray(values[n]).astype(np.float64) for n in op.inputs))
    except ValueError:
        return None
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        return (
            "POW with a non-finite input: our revision defines the result (IEEE pow); the "
            "later revision REQUIREs finite inputs (unpredictable)"
        )
    if bool(np.any(x < 0)) or bool(np.any((x == 0) & (y <= 0))):
        return (
            "POW with a negative base, or a zero base and a non-positive exponent: our "
            "reference gives a result (NaN for a negative base and non-integral exponent, "
            "inf/1 for a zero base); the later revision REQUIREs x >= 0 and not "
            "(x == 0 and y <= 0) (unpredictable)"
        )
    return None

"""COND_IF and WHILE_LOOP outputs: the rule of what the blocks compute.

The precision rules are per operator; for a value that comes out of a block, possibly
after many loop iterations, the spec gives no bound of its own.  When every operator
in the blocks the operator runs (and the blocks they run) only moves or selects
values, the output must be exact; otherwise there is no rule to check against, and
the case is not describable (generators then draw another case).
"""

from __future__ import annotations

from conformance.operator_table import family
from reference import compliance
from reference.expectations import DescribeContext, NotDescribable, OutputCheck, describes

_EXACT = family(compliance.EXACT_OPERATORS | compliance.DATA_MOVEMENT_OPERATORS | {"CONST"})
_BLOCK_ATTRIBUTES = ("then_graph", "else_graph", "cond_graph", "body_graph")


def _block_operators(ctx: DescribeContext, names: list[str], seen: set[str]) -> set[str]:
    graph = ctx.block_graph
    ops: set[str] = set()
    for name in names:
        if name in seen:
            continue
        seen.add(name)
        for op in graph.block(name).operators:
            ops.add(op.op)
            nested = [op.attributes[a] for a in _BLOCK_ATTRIBUTES if a in op.attributes]
            ops |= _block_operators(ctx, nested, seen)
    return ops


@describes("COND_IF", "WHILE_LOOP")
def control_flow(ctx: DescribeContext) -> OutputCheck:
    blocks = [ctx.attr(a) for a in _BLOCK_ATTRIBUTES if ctx.attr(a) is not None]
    used = _block_operators(ctx, blocks, set())
    inexact = sorted(used - _EXACT - {"COND_IF", "WHILE_LOOP"} - compliance.COMPARISON_OPERATORS)
    if inexact:
        raise NotDescribable(
            f"{ctx.operator.op} output {ctx.output_arg!r} is computed by {', '.join(inexact)} "
            "inside its blocks; the spec bounds no such sequence"
        )
    return OutputCheck(compliance.for_operator("IDENTITY", ctx.dtype))

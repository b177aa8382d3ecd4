"""A freedom of the operator sequence rule (introduction, "Operator sequence precision
requirement"), as a mutant that must pass: each M[k] may compute A[k] in a wider type,
its result rounded to A[k]'s only to be judged.  ``chain-pairs-in-fp64`` computes an
ADD, SUB or MUL whose operand another float ADD, SUB or MUL produced from that
producer's operands, exactly, and rounds once: as a backend that fuses the pair, or
runs fp16 graphs in fp32, does.  A pack whose chains fail it judges a compliant
backend wrong (reference/compliance/chain_bound.py composes their bound)."""

from __future__ import annotations

import numpy as np

from conformance.backends.mutants import Result, mutant
from conformance.graph import Operator
from conformance.operator_table import OperatorTable
from reference.compliance.chain_bound import ROUNDING
from reference.context import OpContext
from reference.engine import to_storage
from reference.registry import OpFunction

_EXACT = OperatorTable({"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply})


def _wide(ctx: OpContext, name: str) -> np.ndarray:
    """A float operand in fp64: exact where a float ADD, SUB or MUL of the block made it
    (recomputed from that operator's own operands), else as stored."""
    producer: Operator | None = next((o for o in ctx.block.operators if name in o.outputs), None)
    value = np.asarray(ctx.values[name]).astype(np.float64)
    if producer is None or producer.op not in ROUNDING:
        return value
    a, b = (np.asarray(ctx.values[n]).astype(np.float64) for n in producer.inputs[:2])
    with np.errstate(all="ignore"):
        return np.asarray(_EXACT[producer.op](a, b), np.float64)


@mutant(
    "chain-pairs-in-fp64",
    ["ADD", "SUB", "MUL"],
    "a float ADD, SUB or MUL whose operand another float ADD, SUB or MUL made",
    "the pair is computed in fp64 and rounded once to the output type (a fused pair, or "
    "an fp16 graph run in fp32): compliant by the operator sequence rule",
    "nothing: every vector must pass (a float chain judged by its last operator's rule "
    "alone would fail it)",
    effect="compliant behaviour",
    breaks="introduction, Operator sequence precision requirement: each M[k] implements "
    "A[k] with same or higher precision datatypes (a freedom, not a bug)",
)
def _pairs_in_fp64(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)
    out = ctx.output_tensor().dtype
    names = ctx.operator.inputs[:2]
    if not out.is_float or not any(
        (p := next((o for o in ctx.block.operators if n in o.outputs), None)) is not None
        and p.op in ROUNDING
        for n in names
    ):
        return result
    a, b = (_wide(ctx, n) for n in names)
    with np.errstate(all="ignore"):
        exact = _EXACT[ctx.operator.op](a, b)
    return {"output": to_storage(np.broadcast_to(exact, ctx.out_shape()), out)}

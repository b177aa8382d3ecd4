"""TOSA broadcasting, checked as the spec's ``broadcast_shape`` helper checks it.

TOSA's rule is stricter than numpy's: ranks must be equal (no implicit leading 1s)
and each pair of dimensions must be equal or one of them 1.  Once the output shape has
been checked against the broadcast shape, reading an input at an output index
(``apply_broadcast``) is exactly what ``numpy.broadcast_to`` does, so element-wise
operators compute on whole broadcast views instead of per index.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from reference.context import OpContext

Shape = tuple[int, ...]

# Clauses of the library helper broadcast_shape(), in the order it checks them.
RANK_CLAUSE = "rank(shape1) != rank(shape2)"
DIM_CLAUSE = "shape2[i] != 1 && shape2[i] != shape[i]"


class BroadcastMismatch(Exception):
    """broadcast_shape() hit one of its ERROR_IFs."""

    def __init__(self, clause: str, detail: str) -> None:
        super().__init__(f"{clause}: {detail}")
        self.clause = clause
        self.detail = detail


def broadcast_shape(shape1: Sequence[int], shape2: Sequence[int]) -> Shape:
    """The shape two operands broadcast to, or BroadcastMismatch naming the clause."""
    s1, s2 = tuple(int(d) for d in shape1), tuple(int(d) for d in shape2)
    if len(s1) != len(s2):
        raise BroadcastMismatch(RANK_CLAUSE, f"ranks {len(s1)} and {len(s2)}")
    out = list(s1)
    for i, (d1, d2) in enumerate(zip(s1, s2, strict=True)):
        if d1 == 1:
            out[i] = d2
        elif d2 != 1 and d2 != d1:
            raise BroadcastMismatch(DIM_CLAUSE, f"dimension {i}: {d1} and {d2}")
    return tuple(out)


def check_broadcast(ctx: OpContext, clause: str, *inputs: str, output: str = "output") -> Shape:
    """ERROR_IF(shape != broadcast_shape(...)) for the named inputs, folded left to right
    as the pseudocode nests it (SELECT: broadcast_shape(broadcast_shape(s1, s2), s3)).

    ``clause`` is the operator's own condition; a mismatch found inside
    broadcast_shape() reports that helper's clause instead, as it fires first.
    """
    shapes = [ctx.input_tensor(name).shape for name in inputs]
    shape = shapes[0]
    for other in shapes[1:]:
        try:
            shape = broadcast_shape(shape, other)
        except BroadcastMismatch as exc:
            ctx.error_if(True, exc.clause, f"{', '.join(inputs)} {_fmt(shapes)}: {exc.detail}")
    out = ctx.out_shape(output)
    ctx.error_if(out != shape, clause, f"{output} is {list(out)}, broadcast shape {list(shape)}")
    return out


def check_same_shape(ctx: OpContext, input_name: str, output: str = "output") -> Shape:
    """Unary operators name one shape for input and output in their argument table; the
    pseudocode has no explicit ERROR_IF for it, so the condition is stated here."""
    in_shape = ctx.input_tensor(input_name).shape
    out = ctx.out_shape(output)
    ctx.error_if(
        in_shape != out,
        f"shape({output}) != shape({input_name})",
        f"{input_name} is {list(in_shape)}, {output} is {list(out)}",
    )
    return out


def apply_broadcast(value: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """A read-only view of ``value`` at every index of ``shape`` (size-1 axes repeat)."""
    return np.broadcast_to(np.asarray(value), tuple(shape))


def _fmt(shapes: Sequence[Shape]) -> str:
    return " and ".join(str(list(s)) for s in shapes)

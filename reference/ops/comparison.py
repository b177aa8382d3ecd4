"""EQUAL, GREATER, GREATER_EQUAL: false whenever either operand is NaN.

Floats compare as float64 values, so -0.0 == +0.0 and infinities of one sign are
equal, as the spec's comparison accuracy rule requires.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from reference import arithmetic as ar
from reference.broadcast import apply_broadcast, check_broadcast
from reference.context import OpContext
from reference.ops.elementwise_binary import BROADCAST
from reference.registry import implements

Result = dict[str, np.ndarray | list[np.ndarray]]


def _compare(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[[OpContext], Result]:
    def run(ctx: OpContext) -> Result:
        shape = check_broadcast(ctx, BROADCAST, "input1", "input2")
        a = apply_broadcast(ctx.arg("input1"), shape)
        b = apply_broadcast(ctx.arg("input2"), shape)
        if not ctx.dtype("in_t").is_float:
            return {"output": fn(ar.as_int(a), ar.as_int(b))}
        fa, fb = ar.as_float(a), ar.as_float(b)
        # IEEE comparisons with NaN are already false; stated so as not to rely on it.
        return {"output": fn(fa, fb) & ~(np.isnan(fa) | np.isnan(fb))}

    return run


implements("EQUAL")(_compare(np.equal))
implements("GREATER")(_compare(np.greater))
implements("GREATER_EQUAL")(_compare(np.greater_equal))

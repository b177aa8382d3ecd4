"""CUSTOM: an implementation-defined operator.

The spec gives CUSTOM no pseudocode beyond "implementation defined behavior" and no
ERROR_IF of its own (its operands are only checked as every operator's are, by the
engine: string attributes, list lengths against MAX_TENSOR_LIST_SIZE).  The reference
cannot know what a custom operator computes, so it stops with an EvaluationError;
conformance vectors never contain CUSTOM (custom.adoc: not tested by the suite).
"""

from __future__ import annotations

import numpy as np

from reference.context import OpContext
from reference.engine import EvaluationError
from reference.registry import implements

# Why no vector can test CUSTOM: the one statement of it, which every place that leaves
# CUSTOM out (recipes, breakers, compliance, mutants, backends, certificates) gives.
UNTESTABLE = (
    "CUSTOM is implementation defined: the spec leaves what it computes to the "
    "implementation, so there is no expected result to evaluate, check or certify"
)


@implements("CUSTOM")
def custom(ctx: OpContext) -> dict[str, np.ndarray | list[np.ndarray]]:
    name = f"{ctx.attr('domain_name')}::{ctx.attr('operator_name')}"
    raise EvaluationError(
        f"CUSTOM operator {name!r} cannot be evaluated by the reference (operator "
        f"{ctx.index}): {UNTESTABLE}"
    )

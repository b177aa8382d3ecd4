"""CUSTOM has no recipe, on purpose.

Its behaviour is implementation defined: the reference evaluator stops with an
EvaluationError on any CUSTOM operator (reference/ops/custom.py), so no valid vector
can carry an expected result, and the spec states no ERROR_IF of its own to break (the
checks every operator gets - string attributes, tensor-list lengths against the
MAX_TENSOR_LIST_SIZE level limit - are a generic type/attribute matter and a level
check).  custom.adoc also leaves CUSTOM out of the conformance suite.  Registering
nothing here keeps ``strategies.valid.has_recipe("CUSTOM")`` false, so the generator
lists the pair as having no recipe instead of failing on it.
"""

from __future__ import annotations

from reference.ops.custom import UNTESTABLE as NO_RECIPE

__all__ = ["NO_RECIPE"]

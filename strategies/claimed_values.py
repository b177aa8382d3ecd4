"""Enumeration values a claim may use.

Some enumeration values need an extension of their own (TOSA 1.0's rounding_mode_t:
INEXACT_ROUND needs EXT-INEXACTROUND, DOUBLE_ROUND EXT-DOUBLEROUND; the XML's
``<enumval extension=...>``).  A job's draws keep to the values its claim has, through
the same attribute restrictions a capability manifest makes (``Budget.attributes``,
read by ``RecipeContext.allowed``).  Revisions whose enumerations name no extension
restrict nothing.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from conformance.spec import OperatorSpec, Spec
from strategies.shapes import Budget


def claimed_enum_values(
    spec: Spec, op_spec: OperatorSpec, claimed: Collection[str]
) -> dict[str, tuple[str, ...]]:
    """For each enumeration attribute of the operator with a value that needs an
    extension: the values the claim may use (all of them where it has every one).
    Recipes draw such values only where a job says so (RecipeContext.allowed): a
    draw that knows no claim (chains, fuzzing) keeps to the values without one."""
    out: dict[str, tuple[str, ...]] = {}
    for arg in op_spec.attributes:
        enum = spec.enums.get(arg.element_type)
        if enum is None:
            continue
        if not any(v.extension for v in enum.values):
            continue
        out[arg.name] = tuple(
            v.name for v in enum.values if not v.extension or v.extension in claimed
        )
    return out


def constrain_to_claim(
    budget: Budget, spec: Spec, op_spec: OperatorSpec, claimed: Collection[str]
) -> Budget:
    """``budget`` whose attribute restrictions also keep to the claim's values (those a
    manifest already restricts keep the values both allow)."""
    limits = claimed_enum_values(spec, op_spec, claimed)
    if not limits:
        return budget
    attrs = dict(budget.attributes)
    for name, allowed in limits.items():
        before = attrs.get(name)
        attrs[name] = allowed if before is None else tuple(v for v in before if v in allowed)
    return replace(budget, attributes=tuple(sorted(attrs.items())))

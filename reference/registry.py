"""Operator implementations register here by tosa.xml operator name."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from conformance.operator_table import OperatorTable

if TYPE_CHECKING:
    from reference.context import OpContext

# An implementation takes the context and returns its outputs by argument name
# (``{"output": array}``; list outputs map to a list of arrays).
OpFunction = Callable[["OpContext"], dict[str, "np.ndarray | list[np.ndarray]"]]

OPERATORS: OperatorTable[OpFunction] = OperatorTable()


def implements(*names: str) -> Callable[[OpFunction], OpFunction]:
    def register(fn: OpFunction) -> OpFunction:
        for name in names:
            if name in OPERATORS:
                raise RuntimeError(f"operator {name} is implemented twice")
            OPERATORS[name] = fn
        return fn

    return register


def load_all() -> dict[str, OpFunction]:
    """Import every operator module so that they register (done once, lazily)."""
    import reference.ops  # noqa: F401 - imported for its registrations

    return OPERATORS


# Seams: the reference helpers that mutants patch or call (``HelperPatch(owner,
# "name", ...)`` in conformance.backends.mutants).  They are public API: a third-party
# mutant may patch them, so renaming one or changing its signature is a breaking change.
SEAMS: dict[str, Callable[..., object]] = {}

_Seam = TypeVar("_Seam", bound=Callable[..., object])


def seam(fn: _Seam) -> _Seam:
    """Register ``fn`` (a module function, or a method) as a seam, under its module
    (without ``reference.ops.``) and qualified name: ``"tensor_conv.conv_axes"``."""
    key = f"{fn.__module__.removeprefix('reference.ops.')}.{fn.__qualname__}"
    if key in SEAMS:
        raise RuntimeError(f"seam {key} is registered twice")
    SEAMS[key] = fn
    return fn

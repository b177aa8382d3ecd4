"""The hand-made cases for the value- and shape-driven mutants (those that name a spec
rule), all of them, one module per mutant group (``conformance.backends.mutants.<group>``,
where the mutant is registered).

Each module defines ``CASES``: per mutant, the graphs where its bug shows and graphs of
its operators where it cannot; tests/backends/test_mutants_targeted.py runs them all
(its ``CASES`` is ``collected()``).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from mutant_cases import Case

Build = Callable[[], Case]
Cases = dict[str, tuple[Sequence[Build], Sequence[Build]]]


def collected() -> Cases:
    """Every module's ``CASES``, merged (a mutant in two modules is an error)."""
    out: Cases = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        twice = set(out) & set(module.CASES)
        assert not twice, f"{info.name}: cases for {sorted(twice)} are given twice"
        out.update(module.CASES)
    return out


def counter_condition(cond: Any, limit: int) -> None:
    """The condition block of a counted WHILE_LOOP (its inputs already declared, the
    counter ``i`` among them): go while ``limit > i``."""
    cond.tensor("limit", (1,), "i32", data=np.array([limit], np.int32))
    cond.tensor("go", (1,), "bool")
    cond.op("GREATER", ["limit", "i"], ["go"])
    cond.output("go")

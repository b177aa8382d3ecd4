"""The one type for facts kept by operator name, so that the operator index finds them.

A newcomer who adds an operator must touch every table that names operators; a table
the index does not know fails silently when forgotten.  So every module-level table
keyed by operator names is either an :class:`OperatorTable` (name -> fact, filled by a
literal or by ``@TABLE.register("NAME", ...)``) or a :func:`family` (a tuple or set of
operator names that share a treatment).  Both record where they were made in
:data:`INDEX`, which ``conformance/sources.py`` walks for ``spec op NAME --sources``;
tests/core/test_sources.py fails on a module-level table of operator names that is
neither.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

_T = TypeVar("_T")
_F = TypeVar("_F", bound=Callable[..., Any])
_C = TypeVar("_C", bound=Collection[str])


@dataclass(frozen=True)
class Indexed:
    """A table, the module that made it and the line of the call that made it (the
    module-level assignment that names it covers that line)."""

    module: str
    line: int
    table: Collection[str]


INDEX: list[Indexed] = []


def _record(table: Collection[str]) -> None:
    frame = sys._getframe(2)  # the caller of OperatorTable() or family()
    INDEX.append(Indexed(frame.f_globals.get("__name__", "?"), frame.f_lineno, table))


class OperatorTable(dict[str, _T]):
    """A dict keyed by operator name, recorded in :data:`INDEX`."""

    def __init__(self, entries: Mapping[str, _T] | Iterable[tuple[str, _T]] = (), /) -> None:
        super().__init__(entries)
        _record(self)

    def register(self, *names: str) -> Callable[[_F], _F]:
        """A decorator that files the function under each of ``names`` (an operator is
        filed once: a second registration is a mistake, not an override)."""

        def put(fn: _F) -> _F:
            for name in names:
                if name in self:
                    raise RuntimeError(f"operator {name} is registered twice")
                self[name] = fn  # type: ignore[assignment]
            return fn

        return put


def family(names: _C) -> _C:
    """``names`` unchanged (a tuple, set or frozenset of operator names), recorded in
    :data:`INDEX` as one family of operators that share a treatment."""
    _record(names)
    return names

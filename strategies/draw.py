"""Drawing examples from a strategy deterministically, outside a test.

``generate`` must give the same pack for the same seed.  Hypothesis replays the same
sequence of examples for a given ``@seed`` (and version), with the database and
shrinking off, so examples are collected by running a throw-away ``@given`` function.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from hypothesis.internal.cache import LRUCache

T = TypeVar("T")


@contextlib.contextmanager
def own_constants() -> Iterator[None]:
    """Draws that do not depend on which of the process's modules count as local.

    Hypothesis now and then draws a constant it found in the source of the "local"
    modules loaded in the process (this project's under an editable install, none under
    a normal one, plus whatever else was imported first), and caches what it found.  A
    pack must be the same bytes however the project was installed and wherever its jobs
    ran, so inside this block Hypothesis sees no local constants and keeps a cache of
    its own; its global constants, which come with its version, stay."""
    from hypothesis.internal.conjecture import providers
    from hypothesis.internal.constants_ast import Constants

    saved = providers._get_local_constants, providers.CONSTANTS_CACHE
    providers._get_local_constants = Constants  # an empty set of constants
    providers.CONSTANTS_CACHE = _CONSTANTS_CACHE
    try:
        yield
    finally:
        providers._get_local_constants, providers.CONSTANTS_CACHE = saved


_CONSTANTS_CACHE: LRUCache[Any, Any] = LRUCache(1024)  # global constants only: the same anywhere


def draw_examples(strategy: st.SearchStrategy[T], count: int, seed_value: int) -> list[T]:
    """Up to ``count`` examples of ``strategy``, the same ones for the same seed.

    Fewer come back when Hypothesis cannot find that many distinct examples (tiny
    search spaces), none when every draw is rejected."""
    examples: list[T] = []

    @settings(
        database=None,
        max_examples=count,
        phases=[Phase.generate],
        deadline=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
    )
    @seed(seed_value)
    @given(strategy)
    def collect(example: T) -> None:
        examples.append(example)

    # Unsatisfiable: the strategy rejects everything here (a rule this case cannot break).
    with contextlib.suppress(Unsatisfiable), own_constants():
        collect()
    return examples[:count]


R = TypeVar("R")


class _Found(Exception):
    def __init__(self, value: object) -> None:
        super().__init__("found")
        self.value = value


def first_accepted(
    strategy: st.SearchStrategy[T],
    accept: Callable[[T], R | None],
    seed_value: int,
    max_tries: int = 8,
) -> R | None:
    """The first ``accept(example)`` that is not None, trying at most ``max_tries``
    examples in the seed's order; None when none is accepted."""
    kept: list[R] = []

    @settings(
        database=None,
        max_examples=max_tries,
        phases=[Phase.generate],
        deadline=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet,
    )
    @seed(seed_value)
    @given(strategy)
    def search(example: T) -> None:
        # Hypothesis runs a failing example once more to report it: the accepted one
        # is kept from the first run, not accepted (written, evaluated) twice.
        if kept:
            raise _Found(kept[0])
        result = accept(example)
        if result is not None:
            kept.append(result)
            raise _Found(result)

    try:
        with own_constants():
            search()
    except _Found as found:
        return found.value  # type: ignore[return-value]
    except Unsatisfiable:
        return None
    return None

"""The ``mutant:NAME`` backends: the reference evaluator with one realistic bug injected.

Running a pack against every mutant measures the suite: a mutant the pack does not
fail is a bug a real implementation could have and still pass.  ``available_mutants()``
lists them; the catalogue is this package's modules, one per ``reference/ops`` group
(plus ``denormals``, ``levels``, ``boundaries``, ``rewrites`` and ``sequences`` for bugs
that span groups: flushing, level limits, off-by-one rule checks, graph rewrites, the
operator sequence rule), each registering with
:func:`mutant`, and docs/mutants.md describes them.  This module is the public API
third parties write mutants with.

A :class:`Mutant` changes the evaluator in two ways, both only while its backend runs:

* ``wrap``: a function ``(original, ctx) -> outputs`` that replaces the implementation of
  each operator in ``operators``.  It goes into the operator table of the one
  :class:`~reference.engine.Evaluator` the backend makes, never into
  ``reference.registry.OPERATORS``, so nothing else in the process sees it.  Wrappers
  usually call the original (so every ERROR_IF and REQUIRE still holds) and damage its
  result, or call it on an altered context (:func:`with_attrs`, :func:`with_values`,
  :func:`skipping_error_if`).
* ``helpers``: :class:`HelperPatch` replacements of a function inside a reference
  module (a helper such as ``tensor_conv.conv_axes``), for bugs that live in
  the middle of an operator.  They are installed with ``unittest.mock.patch.object``
  for the duration of ``run`` and restored afterwards; while installed, a call from any
  other thread still reaches the original, and mutant runs are serialised by a lock.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import importlib
import pkgutil
import sys
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, Literal
from unittest import mock

import numpy as np

from conformance.backends.base import BackendError, BackendResult
from conformance.backends.reference import REFERENCE_DENORMALS, as_result
from conformance.block_tensor import is_block_scaled
from conformance.graph import Graph
from conformance.spec import Spec, load_spec
from reference.context import OpContext
from reference.engine import Evaluator
from reference.engine import held as held  # public: mutant authors convert outputs with it
from reference.registry import OpFunction
from vectors.pack_model import LoadedVector

__all__ = [
    "SPEC_RULES",
    "Effect",
    "HelperPatch",
    "Mutant",
    "MutantBackend",
    "Result",
    "Wrapper",
    "available_mutants",
    "catalogue",
    "defined_at",
    "get_mutant",
    "helpers_installed",
    "mutant",
    "skipping_error_if",
    "with_attrs",
    "with_inputs",
    "with_values",
    "wraps",
]

Result = dict[str, np.ndarray | list[np.ndarray]]
Wrapper = Callable[[OpFunction, OpContext], Result]
# "compliant behaviour": not a bug but a freedom the spec grants (flushing fp16 /
# bf16 / fp32 denormals); a pack must pass such a mutant, and failing it is a false
# failure of the pack (conformance.mutation).
Effect = Literal[
    "wrong result", "accepts invalid graph", "rejects valid graph", "compliant behaviour"
]


@dataclass(frozen=True)
class HelperPatch:
    """Replace ``owner.attribute`` (a module function or a class's method) by
    ``replace(original)`` while the mutant runs."""

    owner: object
    attribute: str
    replace: Callable[[Callable[..., Any]], Callable[..., Any]]


@dataclass(frozen=True)
class Mutant:
    name: str
    operators: tuple[str, ...]  # operators whose results it can change
    modes: str  # the modes / attribute values where the bug shows
    bug: str  # the real-world bug it models, one line
    catches: str  # what kind of vector should fail it
    effect: Effect = "wrong result"
    wrap: Wrapper | None = None
    helpers: tuple[HelperPatch, ...] = ()
    # Declared denormal modes (type name -> "supported" / "flush"); None declares the
    # reference's (every type supported), {} declares nothing.
    denormals: Mapping[str, str] | None = None
    # Whether the wrapper handles TOSA 1.1's block-scaled composites (ctx.value gives a
    # (values, scales) pair).  One that does not is the reference on an operator with a
    # composite operand: its bug is in the array path, and a wrapper that crashed on a
    # composite would count as a kill it never made.
    composites: bool = False

    def operator_table(self, base: Mapping[str, OpFunction]) -> dict[str, OpFunction]:
        """``base`` with this mutant's operators wrapped."""
        table = dict(base)
        if self.wrap is None:
            return table
        for name in self.operators:
            if name in base:
                if self.composites:
                    table[name] = functools.partial(self.wrap, base[name])
                else:
                    table[name] = functools.partial(_arrays_only, self.wrap, base[name])
        return table

    def touches(self, graph: Graph) -> bool:
        """Whether ``graph`` has an operator this mutant can change (a vector without
        one gives the reference's result)."""
        return any(op.op in self.operators for b in graph.blocks() for op in b.operators)


def _arrays_only(wrap: Wrapper, original: OpFunction, ctx: OpContext) -> Result:
    """``wrap`` on an operator whose operands are all arrays; the original otherwise."""
    names = [
        n for ns in (*ctx.operands.inputs.values(), *ctx.operands.outputs.values()) for n in ns
    ]
    if any(is_block_scaled(ctx.block.tensors[n].dtype) for n in names if n in ctx.block.tensors):
        return original(ctx)
    return wrap(original, ctx)


# -- helper patches: installed for one run, visible only to the running thread ---------


class _Owner:
    """The thread running a mutant (at most one at a time, under ``lock``)."""

    lock = threading.Lock()
    thread: int | None = None


def _guarded(original: Callable[..., Any], mutated: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def dispatch(*args: Any, **kwargs: Any) -> Any:
        fn = mutated if _Owner.thread == threading.get_ident() else original
        return fn(*args, **kwargs)

    return dispatch


@contextmanager
def helpers_installed(patches: tuple[HelperPatch, ...]) -> Iterator[None]:
    """Install ``patches`` for the calling thread; everything is restored on exit."""
    if not patches:
        yield  # nothing global to touch, so no need to wait for other mutant runs
        return
    with _Owner.lock, ExitStack() as stack:
        for p in patches:
            original = getattr(p.owner, p.attribute)  # AttributeError: helper renamed
            guarded = _guarded(original, p.replace(original))
            stack.enter_context(mock.patch.object(p.owner, p.attribute, guarded))
        _Owner.thread = threading.get_ident()
        try:
            yield
        finally:
            _Owner.thread = None


# -- altered contexts ------------------------------------------------------------------


def with_attrs(ctx: OpContext, **changes: Any) -> OpContext:
    """The context with some operator attributes replaced (the graph is untouched)."""
    altered = copy.copy(ctx)
    attributes = {**ctx.operator.attributes, **changes}
    altered.operator = dataclasses.replace(ctx.operator, attributes=attributes)
    return altered


def with_values(ctx: OpContext, changes: Mapping[str, np.ndarray]) -> OpContext:
    """The context with the values of some tensors (by tensor name) replaced."""
    altered = copy.copy(ctx)
    altered.values = {**ctx.values, **changes}
    return altered


def with_inputs(ctx: OpContext, **changes: np.ndarray) -> OpContext:
    """The context with some single input arguments (by argument name) replaced."""
    return with_values(ctx, {ctx.operands.inputs[a][0]: v for a, v in changes.items()})


def skipping_error_if(ctx: OpContext, *clauses: str) -> OpContext:
    """The context whose ``error_if`` ignores the given clauses: an implementation that
    forgot those checks (and then computes whatever its code computes)."""
    altered = copy.copy(ctx)
    check = ctx.error_if

    def error_if(condition: bool | np.ndarray, clause: str, detail: str = "") -> None:
        if clause not in clauses:
            check(condition, clause, detail)

    setattr(altered, "error_if", error_if)  # noqa: B010 - an instance attribute shadows the method
    return altered


# -- the catalogue: one registration style ---------------------------------------------

Operators = Iterable[str] | Callable[[Spec], Iterable[str]]
_BUILDERS: dict[str, Callable[[Spec], Mutant]] = {}
# Mutant name -> the part of the spec its bug breaks (pseudocode file and clause, or
# the chapter's rule).  Every mutant added beside the stronger packs names one.
SPEC_RULES: dict[str, str] = {}
# Built per spec (by its sha256): an operator family resolved against one revision is
# not another's (1.0 has no FULLY_CONNECTED, the draft no rank-0 RESHAPE).
_CATALOGUES: dict[str, dict[str, Mutant]] = {}
_IMPORTED: list[bool] = []
# Mutant name -> (file, line) of its @mutant: where `spec op NAME --sources` points.
_DEFINED_AT: dict[str, tuple[str, int]] = {}
_NOT_CATALOGUE = {"tools"}  # the package's modules that register no mutants


def mutant(
    name: str,
    operators: Operators,
    modes: str,
    bug: str,
    catches: str,
    effect: Effect = "wrong result",
    *,
    breaks: str = "",
    patch: tuple[object, str] | None = None,
    helpers: tuple[HelperPatch, ...] = (),
    denormals: Mapping[str, str] | None = None,
    composites: bool = False,
    stacklevel: int = 1,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as mutant ``name``.

    Without ``patch`` it is the mutant's ``wrap``, ``(original, ctx) -> outputs``; with
    ``patch=(owner, attribute)`` it is the ``replace`` of a :class:`HelperPatch` of
    ``owner.attribute``, ``original -> replacement`` (``helpers`` adds more patches).
    ``operators`` is a list of names, or a function of the spec model for families
    tosa.xml defines (resolved when the catalogue is first built, not at import).
    ``breaks`` names the part of the spec the bug breaks.  The caller's line is where
    ``spec op NAME --sources`` points; a helper that registers for its callers passes
    ``stacklevel=2`` to record their line instead (as ``warnings.warn`` does).
    ``composites``: the wrapper handles TOSA 1.1's block-scaled operands (else the
    reference runs where an operand is one).

    >>> @mutant("abs-is-identity", ["ABS"], "all", "ABS returns its input",
    ...         "ABS vectors with negative inputs")
    ... def _abs_identity(original, ctx):
    ...     return {"output": ctx.arg("input1")}
    """
    return _mutant(
        sys._getframe(stacklevel),
        name,
        operators,
        modes,
        bug,
        catches,
        effect,
        breaks=breaks,
        patch=patch,
        helpers=helpers,
        denormals=denormals,
        composites=composites,
    )


def _mutant(
    caller: FrameType,
    name: str,
    operators: Operators,
    modes: str,
    bug: str,
    catches: str,
    effect: Effect = "wrong result",
    *,
    breaks: str = "",
    patch: tuple[object, str] | None = None,
    helpers: tuple[HelperPatch, ...] = (),
    denormals: Mapping[str, str] | None = None,
    composites: bool = False,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    where = (caller.f_code.co_filename, caller.f_lineno)

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        if name in _BUILDERS:
            raise RuntimeError(f"mutant {name} is defined twice")
        patches = helpers if patch is None else (HelperPatch(*patch, fn), *helpers)
        wrap = fn if patch is None else None

        def build(spec: Spec) -> Mutant:
            names = operators(spec) if callable(operators) else operators
            return Mutant(
                name,
                tuple(names),
                modes,
                bug,
                catches,
                effect,
                wrap,
                patches,
                denormals,
                composites,
            )

        _BUILDERS[name] = build
        _DEFINED_AT[name] = where
        if breaks:
            SPEC_RULES[name] = breaks
        return fn

    return register


def wraps(
    name: str,
    operators: Operators,
    modes: str,
    bug: str,
    catches: str,
    effect: Effect = "wrong result",
    *,
    breaks: str = "",
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Deprecated: the old name of :func:`mutant` (for wrappers), kept for third-party
    mutants written against it."""
    warnings.warn(
        "conformance.backends.mutants.wraps is deprecated; use @mutant",
        DeprecationWarning,
        stacklevel=2,
    )
    return _mutant(sys._getframe(1), name, operators, modes, bug, catches, effect, breaks=breaks)


def catalogue() -> dict[str, Mutant]:
    """Every registered mutant by name; the catalogue modules are imported, and the
    operator families resolved against the spec model, on the first call."""
    if not _IMPORTED:
        for module in pkgutil.iter_modules(__path__):
            if module.name not in _NOT_CATALOGUE:
                importlib.import_module(f"{__name__}.{module.name}")
        _IMPORTED.append(True)
    spec = load_spec()
    built = _CATALOGUES.setdefault(spec.sha256, {})
    if len(built) != len(_BUILDERS):  # new registrations (a third party's too)
        for name, build in _BUILDERS.items():
            if name not in built:
                built[name] = build(spec)
    return built


def _forget(name: str) -> None:
    """Drop a registration (tests register mutants of their own and take them back)."""
    _BUILDERS.pop(name, None)
    for built in _CATALOGUES.values():
        built.pop(name, None)


def defined_at(name: str) -> tuple[str, int]:
    """The file and line of mutant ``name``'s registration (KeyError: no such mutant)."""
    catalogue()
    return _DEFINED_AT[name]


def _catalogue() -> dict[str, Mutant]:  # the name conformance.mutation used
    return catalogue()


# -- the backend -----------------------------------------------------------------------


def available_mutants() -> dict[str, str]:
    """Every mutant name with the bug it models."""
    return {name: m.bug for name, m in sorted(catalogue().items())}


def get_mutant(name: str) -> Mutant:
    mutants = catalogue()
    if name not in mutants:
        known = ", ".join(sorted(mutants))
        raise BackendError(f"unknown mutant {name!r}; known: {known}")
    return mutants[name]


class MutantBackend:
    """``mutant:NAME``: behaves exactly like the ``reference`` backend except for the
    one bug of mutant NAME."""

    def __init__(self, argument: str | None = None) -> None:
        if not argument:
            known = ", ".join(sorted(catalogue()))
            raise BackendError(f"the mutant backend needs a name, mutant:NAME; known: {known}")
        self.mutant = get_mutant(argument)
        self.name = f"mutant:{argument}"
        self.spec = load_spec()
        declared = self.mutant.denormals
        self.denormals = dict(REFERENCE_DENORMALS if declared is None else declared)

    def unsupported(self, vector: LoadedVector) -> str | None:
        return None  # as the reference: a mutant must not hide behind skips

    def run(self, vector: LoadedVector, workdir: Path) -> BackendResult:
        # The reference backend's run, with the mutant's operator table and helpers.
        level = self.spec.level(vector.requirements.level)
        evaluator = Evaluator(vector.graph, self.spec, level)
        evaluator.ops = self.mutant.operator_table(evaluator.ops)
        with helpers_installed(self.mutant.helpers):
            outcome = evaluator.run(vector.inputs)
        return as_result(vector, outcome)

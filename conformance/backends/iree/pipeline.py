"""One vector through the front of the pipeline, and many compiled as one module.

For each vector (:func:`front`): the flatbuffer of the Arm translation, tosa-opt's MLIR,
this backend's entry function around it, then one ``check`` by the compiler (parse,
verify, TOSA conversions).  A vector refused there is rejected at that stage, alone:
those checks cost milliseconds, so a batch never has to be bisected for them.

The vectors that pass are compiled together (:func:`build`), one module of one entry
function per vector.  When that compile fails, the batch is split in halves and each
half compiled again, down to the single vectors that fail: those are rejected at the
``lowering`` stage with the compiler's words, every other vector runs.  The compiler's
errors usually give the line of the failing operation, so the vectors they point at are
set apart first (each then compiled alone, to get its own words), and the halving is
left for errors without a usable location.

A failed module costs its compile and a second compile of its other members, and
failures come by mode (a type IREE cannot lower fails for nearly every vector of it).
So once a vector of an (operator, mode) pair has failed to lower, the process compiles
later vectors of that pair alone (:class:`Suspects`): a vector that fails alone fails
early and costs less than the module it would break, and one that passes costs a
little more than its share of a module.  Verdicts do not change: every vector is still
compiled, and a vector's own compile decides.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from conformance.backends.iree.compiler import Answer, CompilerClient
from conformance.backends.iree.elements import embedded as is_embedded
from conformance.backends.iree.mlir import (
    Embedded,
    deserialize,
    entry_name,
    module,
    owners,
    program,
    split_module,
)
from conformance.backends.iree.runtime import Runtime
from conformance.backends.iree.stages import LOWERING, RUNTIME, VERIFY, Rejection
from conformance.backends.revision.translate import ArmGraph
from conformance.graph import Tensor
from vectors.pack_model import LoadedVector


@dataclass
class Member:
    """A vector ready to share a module: its functions and its runtime arguments."""

    vector: LoadedVector
    program: str
    args: list[np.ndarray]
    outputs: list[Tensor]
    alone: bool
    entry: str


@dataclass
class Prepared:
    """A vector after preparation: a loaded entry function to call, or a rejection."""

    vector: LoadedVector
    rejection: Rejection | None = None
    loaded: Any = None
    entry: str = ""
    args: list[np.ndarray] = field(default_factory=list)
    outputs: list[Tensor] = field(default_factory=list)
    log: str = ""


def front(
    vector: LoadedVector,
    arm: ArmGraph,
    k: int,
    tosa_opt: str,
    compiler: CompilerClient,
    workdir: Path,
) -> Member | Rejection:
    """Vector ``vector`` (translated: ``arm``) as batch member ``k``, or its rejection."""
    text = deserialize(tosa_opt, arm.flatbuffer, workdir)
    if isinstance(text, Rejection):
        return text
    graph = split_module(text)
    if len(graph.inputs) != len(arm.inputs) or len(graph.results) != len(arm.outputs):
        raise ValueError(
            f"tosa-opt's function has {len(graph.inputs)} arguments and {len(graph.results)} "
            f"results; the graph has {len(arm.inputs)} inputs and {len(arm.outputs)} outputs"
        )
    embedded, args = [], []
    for pos, (t, value) in enumerate(zip(arm.inputs, arm.input_values, strict=True)):
        if is_embedded(t.dtype):
            embedded.append(Embedded(pos, value, t.dtype))
        else:
            args.append(np.require(value, requirements="C"))  # keeps rank 0
    functions = program(k, graph, embedded)
    answer = compiler.check(module([functions]))
    if not answer.ok:
        return rejection(answer)
    return Member(vector, functions, args, list(arm.outputs), graph.alone, entry_name(k))


def rejection(answer: Answer) -> Rejection:
    stage = VERIFY if answer.step == VERIFY else LOWERING
    return Rejection(stage, answer.message, answer.log)


class Suspects:
    """The (operator, mode) pairs with a vector that failed to lower in this process."""

    def __init__(self) -> None:
        self.pairs: set[tuple[str, str]] = set()

    def __contains__(self, member: Member) -> bool:
        return (member.vector.operator, member.vector.mode) in self.pairs

    def learn(self, prepared: Prepared) -> None:
        if prepared.rejection is not None and prepared.rejection.stage == LOWERING:
            self.pairs.add((prepared.vector.operator, prepared.vector.mode))


def build(
    members: Sequence[Member],
    compiler: CompilerClient,
    runtime: Runtime,
    suspects: Suspects | None = None,
) -> list[Prepared]:
    """Compile and load ``members``, sharing modules; bisect what does not compile.

    Members of a pair in ``suspects`` are compiled alone; the lowering failures found
    are added to it."""
    out: list[Prepared] = []
    apart = [m.alone or (suspects is not None and m in suspects) for m in members]
    groups = [[m] for m, alone in zip(members, apart, strict=True) if alone]
    shared = [m for m, alone in zip(members, apart, strict=True) if not alone]
    if shared:
        groups.append(shared)
    for group in groups:
        _build(group, compiler, runtime, out.append)
    if suspects is not None:
        for prepared in out:
            suspects.learn(prepared)
    return out


def _build(
    group: Sequence[Member],
    compiler: CompilerClient,
    runtime: Runtime,
    emit: Callable[[Prepared], None],
) -> None:
    answer = compiler.compile(module([m.program for m in group]))
    if answer.ok:
        try:
            loaded = runtime.load(answer.vmfb)
        except (RuntimeError, ValueError) as exc:
            if len(group) == 1:
                emit(Prepared(group[0].vector, Rejection(RUNTIME, f"loading the module: {exc}")))
                return
        else:
            for m in group:
                emit(Prepared(m.vector, None, loaded, m.entry, m.args, m.outputs, answer.log))
            return
    if len(group) == 1:
        emit(Prepared(group[0].vector, rejection(answer), log=answer.log))
        return
    # The errors' locations usually name the failing vectors: compile the others again,
    # and each named one alone (it gets its own diagnostics, or compiles after all).
    named = owners([m.program for m in group], answer.diagnostics)
    if named and len(named) < len(group):
        _build([m for k, m in enumerate(group) if k not in named], compiler, runtime, emit)
        for k in sorted(named):
            _build([group[k]], compiler, runtime, emit)
        return
    half = len(group) // 2
    _build(group[:half], compiler, runtime, emit)
    _build(group[half:], compiler, runtime, emit)

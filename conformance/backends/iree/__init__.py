"""The ``iree`` backend: IREE, the MLIR compiler TOSA producers target, on the CPU.

Each vector goes the way a TOSA producer's graph goes into IREE (docs/iree.md):

1. the Arm backend's translation to the later spec revision (:mod:`..arm.translate`),
   with its skip rules: the revision MLIR's TOSA dialect implements is that one (a 1.0
   or 1.1 vector's own file needs none; what IREE lacks of 1.1 is skipped,
   :mod:`.tosa_1_1`);
2. a TOSA flatbuffer, read by tosa-opt into TOSA MLIR (generic form, :mod:`.mlir`);
3. IREE's compiler, in process (:mod:`.compile_server`), for llvm-cpu;
4. IREE's runtime on ``local-task`` (:mod:`.runtime`); results in their storage types.

A refusal names its stage (:mod:`.stages`).  The runner hands this backend batches of
vectors (:meth:`IreeBackend.prepare`): they are compiled into one module, which is where
most of the time goes otherwise (:mod:`.pipeline`).

Argument: ``iree`` (batches of :data:`BATCH_SIZE`) or ``iree:N``, batches of N
(``iree:1`` compiles every vector alone).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

from conformance.backends.base import BackendError, BackendResult
from conformance.backends.iree.compiler import CompilerClient
from conformance.backends.iree.elements import embedded, from_runtime
from conformance.backends.iree.mlir import find_tosa_opt
from conformance.backends.iree.pipeline import Member, Prepared, Suspects, build, front
from conformance.backends.iree.runtime import Runtime
from conformance.backends.iree.stages import RUNTIME, Rejection
from conformance.backends.iree.tosa_1_1 import not_lowered_1_1
from conformance.backends.revision.flatbuffer import later_graph
from conformance.backends.revision.native import is_native
from conformance.backends.revision.revisions import SKIPPED_OPERATORS
from conformance.backends.revision.translate import ArmGraph, why_untranslatable
from conformance.dtypes import SHAPE
from conformance.operator_table import OperatorTable
from conformance.spec import load_spec
from reference.ops.custom import UNTESTABLE
from vectors.pack_model import LoadedVector

__all__ = ["BATCH_SIZE", "IreeBackend", "unavailable"]

INSTALL_HINT = "pip install -e '.[iree]'"
# Vectors per module.  A module's fixed cost is ~0.15 s of CPU; beyond ~24 simple
# vectors IREE's whole-program passes grow faster than the module (45 ADD vectors cost
# 0.21 s each, 8 or 24 cost 0.135 s), and a batch that fails costs a recompile of it.
BATCH_SIZE = 16
# Python modules the backend needs, and the distribution that provides each.
REQUIRED = (
    ("iree.compiler", "iree-base-compiler"),
    ("iree.runtime", "iree-base-runtime"),
    ("tosa_serializer", "tosa-tools"),
)

# Why operators the Arm translation leaves out are skipped here (its reasons speak of
# Arm's model).
_NOT_TRANSLATED: OperatorTable[str] = OperatorTable({"CUSTOM": UNTESTABLE})
_VARIABLES = (
    "{op}: the translation to the later revision writes no variable operators (Arm's "
    "model cannot run them, so the Arm backend never needed them)"
)


def unavailable() -> str | None:
    """Why the backend cannot be made on this machine, else None (nothing is imported)."""
    for module, dist in REQUIRED:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            return f"{dist} is not installed; {INSTALL_HINT}"
    if find_tosa_opt() is None:
        return f"tosa-tools' tosa-opt executable was not found; {INSTALL_HINT}"
    return None


class IreeBackend:
    name = "iree"

    def __init__(self, argument: str | None = None) -> None:
        if argument in (None, ""):
            self.batch_size = BATCH_SIZE
        elif argument.isdigit() and int(argument) >= 1:
            self.batch_size = int(argument)
        else:
            raise BackendError(f"iree takes a batch size N >= 1 (iree:N), not {argument!r}")
        reason = unavailable()
        if reason:
            raise BackendError(f"the iree backend is unavailable: {reason}")
        from conformance.backends.revision.translate import load_serializer

        self.ts = load_serializer()
        self.tosa_opt = find_tosa_opt() or "tosa-opt"
        self.spec = load_spec()
        # Both made at their first use in a process, never here (fork safety).
        self.compiler = CompilerClient()
        self.runtime = Runtime()
        self._translated: dict[str, tuple[LoadedVector, ArmGraph | str]] = {}
        self._prepared: dict[str, Prepared] = {}
        self._next = 0  # batch member numbers, unique within this process's modules
        self.suspects = Suspects()  # pairs compiled vector by vector from now on

    # -- what is run -------------------------------------------------------------------

    def _translate(self, vector: LoadedVector) -> ArmGraph | str:
        """The translation, or why the vector is skipped."""
        hit = self._translated.get(vector.name)
        if hit is not None and hit[0] is vector:
            return hit[1]
        result: ArmGraph | str | None = self._skip_reason(vector)
        if result is None:
            result = later_graph(
                vector, embed=embedded, ts=self.ts, max_nesting=self._max_nesting(vector)
            )
        assert result is not None  # a reason, a translation or its conflict
        self._translated[vector.name] = (vector, result)
        return result

    def _skip_reason(self, vector: LoadedVector) -> str | None:
        for block in vector.graph.blocks():
            for op in block.operators:
                if op.op in SKIPPED_OPERATORS:
                    return _NOT_TRANSLATED.get(op.op) or _VARIABLES.format(op=op.op)
        reason = None if is_native(vector.graph) else why_untranslatable(vector.graph)
        if reason:
            return reason
        reason = not_lowered_1_1(vector.graph)  # what IREE lacks of TOSA 1.1
        if reason:
            return reason
        main = vector.graph.main
        shapes = [n for n in main.outputs if main.tensors[n].dtype is SHAPE]
        if shapes:
            return (
                f"graph output {shapes[0]!r} is a shape value: in the later revision shape "
                "values exist at compile time only, and an IREE function cannot return one"
            )
        return None

    def _max_nesting(self, vector: LoadedVector) -> int | None:
        try:
            return int(self.spec.level(vector.requirements.level)["MAX_NESTING"])
        except (KeyError, ValueError):
            return None

    def unsupported(self, vector: LoadedVector) -> str | None:
        result = self._translate(vector)
        return result if isinstance(result, str) else None

    # -- batches -----------------------------------------------------------------------

    def prepare(self, vectors: Sequence[LoadedVector], workdir: Path) -> None:
        """Compile ``vectors`` (those this backend runs) as few modules, ahead of run()."""
        # What earlier batches left (skipped vectors are never run) is dropped here, so
        # a worker holds one batch's vectors and modules at a time.
        ids = {id(v) for v in vectors}
        self._translated = {n: e for n, e in self._translated.items() if id(e[0]) in ids}
        self._prepared = {n: p for n, p in self._prepared.items() if id(p.vector) in ids}
        members: list[Member] = []
        for vector in vectors:
            arm = self._translate(vector)
            if isinstance(arm, str):
                continue
            k, self._next = self._next, self._next + 1
            made = front(vector, arm, k, self.tosa_opt, self.compiler, workdir)
            if isinstance(made, Rejection):
                self._prepared[vector.name] = Prepared(vector, made, log=made.log)
            else:
                members.append(made)
        for prepared in build(members, self.compiler, self.runtime, self.suspects):
            self._prepared[prepared.vector.name] = prepared

    def run(self, vector: LoadedVector, workdir: Path) -> BackendResult:
        prepared = self._prepared.pop(vector.name, None)
        if prepared is None or prepared.vector is not vector:
            self.prepare([vector], workdir)
            prepared = self._prepared.pop(vector.name, None)
        self._translated.pop(vector.name, None)
        if prepared is None:  # unsupported() said so already; keep run() total
            raise BackendError(f"{vector.name}: {self.unsupported(vector) or 'not prepared'}")
        if prepared.rejection is not None:
            return BackendResult.reject(prepared.rejection.text(vector.kind), prepared.log)
        try:
            results = self.runtime.call(prepared.loaded, prepared.entry, prepared.args)
        except (RuntimeError, ValueError) as exc:
            failure = Rejection(RUNTIME, str(exc))
            return BackendResult.reject(failure.text(vector.kind), prepared.log)
        if len(results) != len(prepared.outputs):
            raise BackendError(
                f"{vector.name}: IREE returned {len(results)} results for "
                f"{len(prepared.outputs)} outputs"
            )
        outputs = {
            t.name: from_runtime(r, t) for t, r in zip(prepared.outputs, results, strict=True)
        }
        return BackendResult(outputs, None, prepared.log)

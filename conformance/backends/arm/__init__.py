"""The ``tosa-reference-model`` backend: Arm's C++ reference model from ``tosa-tools``.

A TOSA 1.0 or 1.1 draft vector runs as it is (:mod:`..revision.native`; what the 2026.8
model lacks of the 1.1 draft is skipped, :func:`..revision.revisions.skipped_1_1`). A
vector of the 2024 draft follows an earlier revision than the one tosa-tools
implements, so its graph is translated (:mod:`..revision.translate`,
:mod:`..revision.operators`; the differences are the table in
:mod:`..revision.revisions` and docs/arm-reference-model.md), vectors the later revision
judges differently are skipped (:mod:`..revision.conflicts`): the translation lives in
``conformance/backends/revision/``, shared with every backend that takes a TOSA
flatbuffer (iree, vulkan).  The rest run in process, or with the
``tosa_reference_model`` executable where the binding cannot cope
(:func:`needs_executable`, :mod:`.run`).

Argument: ``tosa-reference-model`` (choose per graph), ``tosa-reference-model:cli``
(always the executable; slower, a cross-check of the binding) or
``tosa-reference-model:inprocess`` (never the executable; graphs that need it are skipped).
"""

from __future__ import annotations

from pathlib import Path

from conformance import dtypes
from conformance.backends.arm.run import (
    ModelRun,
    find_executable,
    load_model,
    run_cli,
    run_in_process,
)
from conformance.backends.base import BackendError, BackendResult
from conformance.backends.revision.conflicts import find_conflict
from conformance.backends.revision.elements import crosses_binding, returned_by_binding
from conformance.backends.revision.emitter import Untranslatable
from conformance.backends.revision.native import is_native, native, why_not_run
from conformance.backends.revision.translate import (
    ArmGraph,
    load_serializer,
    translate,
    why_untranslatable,
)
from conformance.block_tensor import arrays
from conformance.graph import Graph
from conformance.operator_table import family
from conformance.spec import load_spec
from vectors.pack_model import LoadedVector

__all__ = ["ArmBackend"]

INSTALL_HINT = "install tosa-tools: pip install -e '.[arm]'"
CLI_TIMEOUT = 600.0  # seconds; the runner's own per-vector timeout usually fires first


class ArmBackend:
    name = "tosa-reference-model"

    def __init__(self, argument: str | None = None) -> None:
        if argument not in (None, "", "auto", "cli", "inprocess"):
            raise BackendError(
                f"tosa-reference-model takes 'auto', 'cli' or 'inprocess', not {argument!r}"
            )
        self.mode = argument or "auto"
        try:
            self.ts = load_serializer()
            self.model = load_model()
        except ImportError as exc:
            raise BackendError(f"tosa-tools is not importable ({exc}); {INSTALL_HINT}") from None
        self.executable = find_executable()
        self.spec = load_spec()
        if self.mode == "cli" and self.executable is None:
            raise BackendError(f"no tosa_reference_model executable on PATH; {INSTALL_HINT}")
        # The last translation, for run() after unsupported(); the vector itself is kept
        # (not its id(), which a later vector may reuse once this one is freed).
        self._cache: tuple[LoadedVector, bool, ArmGraph] | None = None

    def _uses_cli(self, vector: LoadedVector) -> bool:
        if self.mode != "auto":
            return self.mode == "cli"
        # A 1.0 file holds a CONST operator for each constant (a zero point, a shift):
        # an ERROR_IF then fails after them, and the 2026.8 binding crashes (SIGSEGV)
        # collecting the outputs, as needs_executable says of graphs of several operators.
        if is_native(vector.graph) and vector.kind == "error":
            return True
        return needs_executable(vector.graph)

    def _translate(self, vector: LoadedVector, cli: bool) -> ArmGraph:
        if self._cache and self._cache[0] is vector and self._cache[1] == cli:
            return self._cache[2]
        # The executable gets every input as a constant; the binding only those it
        # cannot take (INT4 / INT48).
        embed = (lambda dt: True) if cli else (lambda dt: not crosses_binding(dt))
        if is_native(vector.graph):  # a TOSA 1.0 / 1.1 vector: the model reads it as it is
            arm = native(vector.graph, vector.inputs, embed=embed)
        else:
            arm = translate(vector.graph, arrays(vector.inputs), embed=embed, ts=self.ts)
        self._cache = (vector, cli, arm)
        return arm

    def unsupported(self, vector: LoadedVector) -> str | None:
        own = is_native(vector.graph)
        reason = why_not_run(vector.graph) if own else why_untranslatable(vector.graph)
        if reason:
            return reason
        cli = self._uses_cli(vector)
        if cli and self.executable is None:
            return (
                "the graph needs the tosa_reference_model executable (outputs the binding "
                "cannot return, or several operators), and it is not on PATH"
            )
        if cli and self.mode == "inprocess":
            return (
                "the graph needs the tosa_reference_model executable (outputs the binding "
                "cannot return, or several operators) and the backend argument is 'inprocess'"
            )
        try:
            self._translate(vector, cli)
        except Untranslatable as exc:
            return str(exc)
        if own:  # the revision the model implements: no revision conflict to skip
            return None
        inputs = arrays(vector.inputs)  # the 2024 draft's graphs: no block-scaled tensor
        return find_conflict(vector.graph, inputs, vector.kind, self._max_nesting(vector))

    def _max_nesting(self, vector: LoadedVector) -> int | None:
        try:
            return int(self.spec.level(vector.requirements.level)["MAX_NESTING"])
        except (KeyError, ValueError):
            return None

    def run(self, vector: LoadedVector, workdir: Path) -> BackendResult:
        cli = self._uses_cli(vector)
        try:
            arm = self._translate(vector, cli)
        except Untranslatable as exc:  # unsupported() said so already; keep run() total
            raise BackendError(f"{vector.name}: {exc}") from None
        level = vector.requirements.level
        if cli:
            assert self.executable is not None
            result = run_cli(arm, level, workdir, self.executable, CLI_TIMEOUT)
        else:
            result = run_in_process(arm, level, workdir, self.model)
        return _as_backend_result(result)


def needs_executable(graph: Graph) -> bool:
    """Whether ``graph`` must run through the executable rather than the binding.

    Three reasons: outputs the binding cannot return (INT4 / INT48 / SHAPE, and TOSA
    1.1's FP4E2M1 / FP6E2M3 / FP6E3M2 / FP8UE8M0); tensors
    with a zero dimension (the model refuses them, but the 2026.8 binding crashes with
    SIGSEGV doing so when the tensor is a constant); graphs of more than one operator
    (CONST aside; the FULLY_CONNECTED rewrite counts as several): an ERROR_IF failing
    during evaluation leaves later outputs unevaluated, and the binding then crashes
    collecting them.  The executable reports the ERROR status in every case.
    """
    main = graph.main
    if any(not returned_by_binding(main.tensors[n].dtype) for n in main.outputs):
        return True
    for block in graph.blocks():
        if any(0 in t.shape and t.dtype is not dtypes.SHAPE for t in block.tensors.values()):
            return True
    ops = [op.op for b in graph.blocks() for op in b.operators if op.op not in _CONSTS]
    return len(ops) > 1 or "FULLY_CONNECTED" in ops


_CONSTS = family(("CONST", "CONST_SHAPE"))


def _as_backend_result(result: ModelRun) -> BackendResult:
    if result.status == "error":
        return BackendResult.reject(result.message, result.log)
    if result.status == "unpredictable":
        # The model found a REQUIRE failing: the spec leaves the result unpredictable.
        return BackendResult.reject(f"unpredictable: {result.message}", result.log)
    return BackendResult(result.outputs, None, result.log)

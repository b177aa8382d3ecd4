"""The ``vulkan`` backend: TOSA graphs on a Vulkan device, through Arm's ML SDK for Vulkan.

A device that exposes ``VK_ARM_data_graph`` with the TOSA instruction set runs a SPIR-V
graph of TOSA instructions; that is how a Vulkan device claims TOSA conformance.  Each
vector goes the way a Vulkan application's network goes (docs/vulkan.md):

1. its graph as a TOSA flatbuffer: a 1.0 vector's own, a 2024 draft vector's through
   the Arm translation (:mod:`..revision.flatbuffer`);
2. the model converter: TOSA flatbuffer to VGF (SPIR-V graphs and their bindings);
3. a scenario, one per batch of vectors, built through the scenario runner's Python
   API: a tensor per binding, a dispatch per graph (:mod:`.pipeline`);
4. the scenario run on the device, with the emulation layers for ``VK_ARM_tensors``
   and ``VK_ARM_data_graph`` (any Vulkan device will do; lavapipe is a CPU one);
5. outputs read back in their storage types (:mod:`.formats`).

A refusal names its stage: ``convert``, ``pipeline`` or ``dispatch``.  A vector is
skipped only when the device does not claim what it needs (:mod:`.instructions`): an
operator with no instruction in ``TOSA.001000.1``, the 1.1 draft, a type with no
Vulkan tensor format.

Argument: comma-separated ``N`` or ``batch=N`` (vectors per scenario, default
:data:`BATCH_SIZE`), and ``device=NAME`` (a Vulkan driver by its manifest's name, such
as ``lvp`` for lavapipe, or the manifest's path; ``tosa-conformance backends`` lists
them).  Without a device the loader's first device runs.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from importlib import import_module
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from conformance.backends.base import BackendError, BackendResult
from conformance.backends.revision.flatbuffer import later_graph
from conformance.backends.revision.native import is_native
from conformance.backends.revision.revisions import SKIPPED_OPERATORS
from conformance.backends.revision.translate import ArmGraph, load_serializer, why_untranslatable
from conformance.backends.vulkan import environment
from conformance.backends.vulkan.environment import Device, find_device
from conformance.backends.vulkan.formats import element, format_of
from conformance.backends.vulkan.instructions import INSTRUCTION_SET, missing_instruction
from conformance.backends.vulkan.pipeline import (
    ConverterCrash,
    Member,
    Outcome,
    Refusal,
    convert,
    run_batch,
)
from conformance.backends.vulkan.scenario import bindings
from conformance.dtypes import DType
from conformance.spec import load_revision, load_spec
from vectors.flatbuffer import format_for
from vectors.pack_model import LoadedVector

if TYPE_CHECKING:
    from conformance.backends.vulkan.claim import DeviceClaim

__all__ = ["BATCH_SIZE", "VulkanBackend", "unavailable"]

# Vectors per scenario: its fixed cost (instance, device: ~0.3 s) shared 16 ways is
# 0.02 s a vector, and a batch that fails costs a few more scenarios to halve it.
BATCH_SIZE = 16
_EMBEDDED = frozenset({"shape"})  # shape values exist at compile time only in 1.0


def unavailable() -> str | None:
    """Why the backend cannot be made on this machine, else None (nothing is imported)."""
    return environment.missing()


def _embedded(dt: DType) -> bool:
    return dt.name in _EMBEDDED


def parse_argument(argument: str | None) -> tuple[int, str | None]:
    """(batch size, device choice) from ``N``, ``batch=N``, ``device=NAME``."""
    batch, device = BATCH_SIZE, None
    for part in (argument or "").split(","):
        key, sep, value = part.strip().partition("=")
        if not key:
            continue
        if not sep and key.isdigit():
            key, value = "batch", key
        if key == "batch" and value.isdigit() and int(value) >= 1:
            batch = int(value)
        elif key == "device" and value:
            device = value
        else:
            raise BackendError(
                f"vulkan takes batch=N (N >= 1) and device=NAME, comma-separated, not {part!r}"
            )
    return batch, device


class VulkanBackend:
    name = "vulkan"

    def __init__(self, argument: str | None = None) -> None:
        self.batch_size, choice = parse_argument(argument)
        reason = unavailable()
        if reason:
            raise BackendError(f"the vulkan backend is unavailable: {reason}")
        try:
            self.device: Device | None = find_device(choice) if choice else None
        except ValueError as exc:
            raise BackendError(f"vulkan: {exc}") from None
        self.converter = environment.converter()
        self.spec = load_spec()
        self.tosa_1_0 = load_revision("1.0")
        self.ts = load_serializer()
        # The layers' manifests live as long as the backend; the environment must be
        # in place before the scenario runner's module loads the Vulkan loader.
        self._layers = tempfile.TemporaryDirectory(prefix="tosa-vulkan-layers-")
        os.environ.update(environment.layer_environment(Path(self._layers.name), self.device))
        self._runner: ModuleType | None = None
        self._graphs: dict[str, tuple[LoadedVector, ArmGraph | str]] = {}
        self._outcomes: dict[str, tuple[LoadedVector, Outcome]] = {}
        self._next = 0

    @property
    def runner(self) -> ModuleType:
        if self._runner is None:  # at its first use in a process (fork safety)
            self._runner = import_module("scenario_runner_py")
        return self._runner

    @property
    def claim(self) -> DeviceClaim | str:
        """What the device reports of TOSA (:mod:`.claim`), or why it reports nothing."""
        from conformance.backends.vulkan.claim import device_claim  # its child imports us

        return device_claim(str(self.device.manifest) if self.device else None)

    def identity(self) -> dict[str, Any]:
        from conformance.backends.vulkan.claim import DeviceClaim

        claim = self.claim
        return {
            "sdk": environment.sdk_versions(),
            "device": str(self.device.manifest) if self.device else "the loader's first device",
            "instruction_set": INSTRUCTION_SET,
            "device_claim": claim.to_json() if isinstance(claim, DeviceClaim) else claim,
            "batch_size": self.batch_size,
        }

    # -- what is run -------------------------------------------------------------------

    def _graph(self, vector: LoadedVector) -> ArmGraph | str:
        """The flatbuffer the converter gets, or why the vector is skipped."""
        hit = self._graphs.get(vector.name)
        if hit is not None and hit[0] is vector:
            return hit[1]
        result: ArmGraph | str | None = self._skip_reason(vector)
        if result is None:
            result = later_graph(
                vector, embed=_embedded, ts=self.ts, max_nesting=self._max_nesting(vector)
            )
        assert result is not None  # a reason or the graph
        self._graphs[vector.name] = (vector, result)
        return result

    def _max_nesting(self, vector: LoadedVector) -> int | None:
        try:
            return int(self.spec.level(vector.requirements.level)["MAX_NESTING"])
        except (KeyError, ValueError):
            return None

    def _skip_reason(self, vector: LoadedVector) -> str | None:
        graph = vector.graph
        if format_for(graph) == "1.1-draft":
            return (
                f"the device's instruction set {INSTRUCTION_SET} is TOSA 1.0: it claims "
                "nothing of the 1.1 draft"
            )
        operators = {op.op for block in graph.blocks() for op in block.operators}
        # A draft graph's operators that 1.0 lacks (FULLY_CONNECTED, DIM) are the
        # translation's to write in 1.0's; the instruction set is asked of 1.0's.
        op = missing_instruction(operators & set(self.tosa_1_0.operators), self.converter)
        if op is not None:
            return (
                f"the device does not claim {op}: the instruction set {INSTRUCTION_SET} "
                f"of this SDK's converter has no {op} instruction"
            )
        unclaimed = self._unclaimed(vector)
        if unclaimed is not None:
            return unclaimed
        if not is_native(graph):
            skipped = sorted(operators & set(SKIPPED_OPERATORS))
            reason = SKIPPED_OPERATORS[skipped[0]] if skipped else why_untranslatable(graph)
            if reason:
                return reason
        main = graph.main
        for name in [*main.inputs, *main.outputs]:
            t = main.tensors[name]
            if format_of(t.dtype) is None and not (name in main.inputs and _embedded(t.dtype)):
                return f"graph tensor {name!r} is {t.dtype}: Vulkan has no tensor format of it"
        return None

    def _unclaimed(self, vector: LoadedVector) -> str | None:
        """The vector's profile or first extension the device's TOSA report leaves out; None when
        the report names no TOSA profile (the emulation layer's names one profile
        'Emulation Layer'), since it then says nothing either way."""
        from conformance.backends.vulkan.claim import DeviceClaim

        claim = self.claim
        if not isinstance(claim, DeviceClaim) or not claim.names_tosa():
            return None
        wanted = vector.requirements.profiles  # any one of them will do
        if wanted and not set(wanted) & set(claim.profiles):
            return (
                f"the device does not claim {' or '.join(wanted)} "
                f"(its TOSA report: {claim.summary()})"
            )
        for ext in vector.requirements.extensions:
            if ext not in claim.extensions:
                return f"the device does not claim {ext} (its TOSA report: {claim.summary()})"
        return None

    def unsupported(self, vector: LoadedVector) -> str | None:
        result = self._graph(vector)
        return result if isinstance(result, str) else None

    # -- batches -----------------------------------------------------------------------

    def prepare(self, vectors: Sequence[LoadedVector], workdir: Path) -> None:
        """Convert ``vectors`` and run them as few scenarios, ahead of run()."""
        ids = {id(v) for v in vectors}
        self._graphs = {n: e for n, e in self._graphs.items() if id(e[0]) in ids}
        self._outcomes = {n: e for n, e in self._outcomes.items() if id(e[0]) in ids}
        members = []
        for vector in vectors:
            graph = self._graph(vector)
            if isinstance(graph, str):
                continue
            k, self._next = self._next, self._next + 1
            try:
                made = convert(self.converter, graph.flatbuffer, workdir, f"v{k}")
            except ConverterCrash as exc:
                self._outcomes[vector.name] = (vector, Outcome(crash=exc))
                continue
            if isinstance(made, Refusal):
                self._outcomes[vector.name] = (vector, Outcome({}, made))
                continue
            layout = bindings(made)
            try:
                for b in layout:
                    element(b.vk_format)
            except ValueError as exc:
                self._outcomes[vector.name] = (vector, Outcome(declined=str(exc)))
                continue
            members.append(
                Member(vector, made, layout, graph.inputs, graph.input_values, graph.outputs)
            )
        for member, outcome in zip(members, run_batch(members, self.runner), strict=True):
            self._outcomes[member.vector.name] = (member.vector, outcome)

    def run(self, vector: LoadedVector, workdir: Path) -> BackendResult:
        hit = self._outcomes.pop(vector.name, None)
        if hit is None or hit[0] is not vector:
            self.prepare([vector], workdir)
            hit = self._outcomes.pop(vector.name, None)
        self._graphs.pop(vector.name, None)
        if hit is None:  # unsupported() said so already; keep run() total
            raise BackendError(f"{vector.name}: {self.unsupported(vector) or 'not prepared'}")
        outcome = hit[1]
        if outcome.crash is not None:
            # printed here, it is the vector's log; raised, the runner records a crash
            print(outcome.crash.output)
            raise outcome.crash
        if outcome.declined is not None:
            return BackendResult.decline(outcome.declined, outcome.log)
        if outcome.refusal is not None:
            return BackendResult.reject(outcome.refusal.text(vector.kind), outcome.log)
        return BackendResult(outcome.outputs, None, outcome.log)

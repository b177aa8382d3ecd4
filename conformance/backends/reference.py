"""The ``reference`` backend: this project's evaluator.  It must pass every vector."""

from __future__ import annotations

from pathlib import Path

from conformance.backends.base import BackendResult
from conformance.spec import load_spec
from reference.compliance.denormals import SUPPORTED, format_modes, parse_modes
from reference.engine import Evaluator, held
from reference.outcome import Outcome
from vectors.pack_model import LoadedVector

# The reference computes in fp64 from the operands as stored: it supports denormals
# of every type, and declares so, so that it is judged without flushing readings.
REFERENCE_DENORMALS: dict[str, str] = format_modes(parse_modes(SUPPORTED))


class ReferenceBackend:
    name = "reference"
    denormals = REFERENCE_DENORMALS

    def __init__(self, argument: str | None = None) -> None:
        self.spec = load_spec()

    def unsupported(self, vector: LoadedVector) -> str | None:
        return None

    def run(self, vector: LoadedVector, workdir: Path) -> BackendResult:
        level = self.spec.level(vector.requirements.level)
        outcome = Evaluator(vector.graph, self.spec, level).run(vector.inputs)
        return as_result(vector, outcome)


def as_result(vector: LoadedVector, outcome: Outcome) -> BackendResult:
    """What the reference hands back for an evaluation of ``vector``: a rejection for an
    error or an unpredictable graph, else the outputs in their own types.  Mutants use
    it too, so that a mutant differs from the reference by its bug alone."""
    if outcome.kind == "error":
        return BackendResult.reject(str(outcome.rule))
    if outcome.kind == "unpredictable":
        # An implementation may do anything here; the reference reports it.
        return BackendResult.reject(f"unpredictable: {outcome.rule}")
    main = vector.graph.main
    # Like any implementation, the reference hands back values of the output type.
    outputs = {n: held(v, main.tensors[n].dtype) for n, v in outcome.outputs.items()}
    return BackendResult(outputs)

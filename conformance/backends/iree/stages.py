"""The stages of the IREE pipeline that can refuse a graph, and how a refusal reads.

Every rejection names its stage, first thing in the result's detail
(:mod:`conformance.backends.stages`):

* ``deserialize``: tosa-opt could not turn the flatbuffer into MLIR;
* ``verify``: IREE's parser and the TOSA dialect's verifiers refused the module;
* ``lowering``: the verified module did not compile (a conversion failed, or the
  compiler crashed);
* ``runtime``: the compiled function failed when it was called.

Only ``deserialize`` and ``verify`` check the graph: a must-fail vector refused by the
others says :data:`NO_VERIFIER`.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.backends.stages import MESSAGE_LIMIT, NO_VERIFIER, Stages

__all__ = [
    "CHECKING", "DESERIALIZE", "LOWERING", "MESSAGE_LIMIT", "NO_VERIFIER", "RUNTIME",
    "STAGES", "VERIFY", "Rejection", "stage_of",
]  # fmt: skip

DESERIALIZE = "deserialize"
VERIFY = "verify"
LOWERING = "lowering"
RUNTIME = "runtime"
PIPELINE = Stages((DESERIALIZE, VERIFY, LOWERING, RUNTIME), frozenset({DESERIALIZE, VERIFY}))
STAGES = PIPELINE.names
CHECKING = PIPELINE.checking


@dataclass(frozen=True)
class Rejection:
    stage: str
    message: str  # the first diagnostic, in the tool's words
    log: str = ""  # everything the tool printed

    def __post_init__(self) -> None:
        PIPELINE.check(self.stage)

    def text(self, kind: str) -> str:
        """The rejection message for a vector of ``kind`` (valid / error / level)."""
        return PIPELINE.text(self.stage, self.message, kind)


def stage_of(detail: str) -> str | None:
    """The stage a result's detail names (``rejected: verify: ...``), else None."""
    return PIPELINE.stage_of(detail)

"""The stages of the IREE pipeline that can refuse a graph, and how a refusal reads.

Every rejection names its stage, first thing in the result's detail:

* ``deserialize``: tosa-opt could not turn the flatbuffer into MLIR;
* ``verify``: IREE's parser and the TOSA dialect's verifiers refused the module;
* ``lowering``: the verified module did not compile (a conversion failed, or the
  compiler crashed);
* ``runtime``: the compiled function failed when it was called.

The runner judges a rejection as it judges any: a valid vector that is rejected has
failed ("rejected a valid graph: lowering: ..."), never skipped.  A must-fail vector is
rejected, and so passes, at whatever stage; but when only ``lowering`` or ``runtime``
refused it, no check of the graph did: the compiler happened to fail on it.  Such a
rejection says so (:data:`NO_VERIFIER`), so that reports can tell it from a verifier's.
"""

from __future__ import annotations

from dataclasses import dataclass

DESERIALIZE = "deserialize"
VERIFY = "verify"
LOWERING = "lowering"
RUNTIME = "runtime"
STAGES = (DESERIALIZE, VERIFY, LOWERING, RUNTIME)

# Stages that check the graph; a refusal by the others is a failure that happened to
# stop a must-fail graph.
CHECKING = frozenset({DESERIALIZE, VERIFY})
NO_VERIFIER = "no verifier refused it"

MESSAGE_LIMIT = 600  # characters of the tool's own words kept in the detail


@dataclass(frozen=True)
class Rejection:
    stage: str
    message: str  # the first diagnostic, in the tool's words
    log: str = ""  # everything the tool printed

    def __post_init__(self) -> None:
        if self.stage not in STAGES:
            raise ValueError(f"unknown stage {self.stage!r}; stages: {', '.join(STAGES)}")

    def text(self, kind: str) -> str:
        """The rejection message for a vector of ``kind`` (valid / error / level)."""
        message = " ".join(self.message.split())[:MESSAGE_LIMIT] or "no diagnostic"
        if kind == "error" and self.stage not in CHECKING:
            return f"{self.stage} ({NO_VERIFIER}): {message}"
        return f"{self.stage}: {message}"


def stage_of(detail: str) -> str | None:
    """The stage a result's detail names (``rejected: verify: ...``), else None."""
    for prefix in ("rejected a valid graph: ", "rejected: "):
        if detail.startswith(prefix):
            head = detail[len(prefix) :].split(":", 1)[0]
            stage = head.split(" (", 1)[0]
            return stage if stage in STAGES else None
    return None

"""The stages of a compiling backend's pipeline, and how a refusal names its stage.

A backend that compiles a graph before it runs it (``iree``, ``vulkan``) refuses it at
some stage, and the result's detail says which, first thing: ``rejected: verify: ...``.
Each such backend declares its stages in order, and which of them check the graph.

The runner judges a rejection as it judges any: a valid vector that is rejected has
failed, never skipped.  A must-fail vector is rejected, and so passes, at whatever
stage; but when only a stage that does not check the graph refused it (a lowering, a
dispatch), no check did: the tool happened to fail on it.  Such a rejection says so
(:data:`NO_VERIFIER`), so that reports can tell it from a verifier's.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MESSAGE_LIMIT", "NO_VERIFIER", "Stages"]

NO_VERIFIER = "no verifier refused it"
MESSAGE_LIMIT = 600  # characters of the tool's own words kept in the detail


@dataclass(frozen=True)
class Stages:
    """A pipeline's stages, in order, and those of them that check the graph."""

    names: tuple[str, ...]
    checking: frozenset[str]

    def __post_init__(self) -> None:
        if not self.checking <= set(self.names):
            raise ValueError(f"checking stages {sorted(self.checking)} are not all stages")

    def check(self, stage: str) -> None:
        if stage not in self.names:
            raise ValueError(f"unknown stage {stage!r}; stages: {', '.join(self.names)}")

    def text(self, stage: str, message: str, kind: str) -> str:
        """The rejection message at ``stage`` for a vector of ``kind`` (valid / error /
        level)."""
        words = " ".join(message.split())[:MESSAGE_LIMIT] or "no diagnostic"
        if kind == "error" and stage not in self.checking:
            return f"{stage} ({NO_VERIFIER}): {words}"
        return f"{stage}: {words}"

    def stage_of(self, detail: str) -> str | None:
        """The stage a result's detail names (``rejected: verify: ...``), else None."""
        for prefix in ("rejected a valid graph: ", "rejected: "):
            if detail.startswith(prefix):
                head = detail[len(prefix) :].split(":", 1)[0]
                stage = head.split(" (", 1)[0]
                return stage if stage in self.names else None
        return None

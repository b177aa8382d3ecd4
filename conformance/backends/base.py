"""The backend protocol: what the runner asks of an implementation under test.

A backend receives one vector (its graph, input values and requirements) and returns
the values of the graph's outputs, or says it rejected the graph.  It may decline a
vector it does not support (an operator, mode or type it does not implement): the
runner records that as *skipped* with the backend's reason, never as passed.

Backends are named ``NAME`` or ``NAME:ARGUMENT`` (``command:./my-runner``,
``mutant:rescale-round-half-up``).  Built-in ones are listed in :mod:`conformance.backends`;
third parties register a factory under the entry-point group
``tosa_conformance.backends``: ``factory(argument: str | None) -> Backend``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from vectors.pack_model import LoadedVector


class BackendError(Exception):
    """A backend that cannot be created or used at all (missing tool, bad argument).

    Problems with one vector are results, not exceptions."""


@dataclass
class BackendResult:
    """What a backend did with one vector.

    ``outputs`` maps graph output names to arrays in the tensor's storage dtype (or any
    dtype the runner can convert exactly); ``rejected`` is the backend's message when it
    refused the graph (the right answer for a must-fail vector).
    """

    outputs: dict[str, np.ndarray] = field(default_factory=dict)
    rejected: str | None = None
    log: str = ""  # anything the backend printed, kept for the report

    @classmethod
    def reject(cls, message: str, log: str = "") -> BackendResult:
        return cls({}, message or "rejected", log)


@runtime_checkable
class Backend(Protocol):
    name: str

    def unsupported(self, vector: LoadedVector) -> str | None:
        """None when the backend runs this vector, else why not (the vector is skipped)."""
        ...

    def run(self, vector: LoadedVector, workdir: Path) -> BackendResult:
        """Run the vector; ``workdir`` is an empty folder the backend may use."""
        ...

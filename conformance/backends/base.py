"""The backend protocol: what the runner asks of an implementation under test.

A backend receives one vector (its graph, input values and requirements) and returns
the values of the graph's outputs, or says it rejected the graph.  It may decline a
vector it does not support (an operator, mode or type it does not implement): the
runner records that as *skipped* with the backend's reason, never as passed.

Backends are named ``NAME`` or ``NAME:ARGUMENT`` (``command:./my-runner``,
``mutant:rescale-round-half-up``).  Built-in ones are listed in :mod:`conformance.backends`;
third parties register a factory under the entry-point group
``tosa_conformance.backends``: ``factory(argument: str | None) -> Backend``.

A backend may also declare how it treats denormals, per type, in an optional
attribute ``denormals``: a mapping of type names (``"fp16"``, ``"bf16"``, ``"fp32"``,
``"fp8e4m3"``, ``"fp8e5m2"``) to ``"supported"`` or ``"flush"``.  A type it leaves out
may be either, and the runner records which it observed; a declared mode is held to
(a backend declaring ``supported`` that flushes fails).  fp8 types cannot be declared
``flush``: the spec requires their denormals.  docs/backends.md, "Denormals".

Processes a backend starts end with the vector they were started for: after each
vector the runner's worker kills every process below it (docs/reliability.md), except
children the backend still holds a ``subprocess.Popen`` of (a helper kept from one
vector to the next, such as a compiler server).  A backend that keeps processes some
other way sets the class attribute ``keeps_processes = True``; its processes then end
with the worker instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from conformance.block_tensor import TensorValue
from conformance.dtypes import DType
from conformance.errors import ConformanceError
from reference.compliance.denormals import DenormalMode, declared_modes
from vectors.pack_model import LoadedVector


class BackendError(ConformanceError):
    """A backend that cannot be created or used at all (missing tool, bad argument).

    Problems with one vector are results, not exceptions."""


@dataclass
class BackendResult:
    """What a backend did with one vector.

    ``outputs`` maps graph output names to arrays in the tensor's storage dtype (or any
    dtype the runner can convert exactly), a block-scaled output to a
    :class:`~conformance.block_tensor.BlockScaled` (its values and scales);
    ``rejected`` is the backend's message when it refused the graph (the right answer
    for a must-fail vector); ``declined`` says why the backend does not implement what
    the graph needs, found only once it ran (a program's ``unsupported.txt``): the
    vector is skipped, as by unsupported(), and a claimed pair with a declined vector
    is not met.
    """

    outputs: Mapping[str, TensorValue] = field(default_factory=dict)
    rejected: str | None = None
    log: str = ""  # anything the backend printed, kept for the report
    declined: str | None = None

    @classmethod
    def reject(cls, message: str, log: str = "") -> BackendResult:
        return cls({}, message or "rejected", log)

    @classmethod
    def decline(cls, reason: str, log: str = "") -> BackendResult:
        return cls({}, None, log, reason or "declined")


@runtime_checkable
class Backend(Protocol):
    name: str

    def unsupported(self, vector: LoadedVector) -> str | None:
        """None when the backend runs this vector, else why not (the vector is skipped)."""
        ...

    def run(self, vector: LoadedVector, workdir: Path) -> BackendResult:
        """Run the vector; ``workdir`` is an empty folder the backend may use."""
        ...


def capabilities_of(backend: object) -> str | None:
    """The capability manifest a backend (or its factory class) names in its optional
    ``capabilities`` attribute: a built-in manifest's name or a manifest file, the one
    to run and certify it with (``--capabilities``).  None: it names none."""
    manifest = getattr(backend, "capabilities", None)
    if manifest is not None and (not isinstance(manifest, str) or not manifest):
        raise BackendError(f"backend capabilities must be a manifest name, not {manifest!r}")
    return manifest


def denormal_modes(backend: object) -> dict[DType, DenormalMode]:
    """The denormal modes ``backend`` declares (its optional ``denormals`` attribute),
    keyed by type; empty when it declares none.  BackendError for a declaration that
    is not one (an unknown type or mode, fp8 flushing)."""
    raw = getattr(backend, "denormals", None)
    try:
        return declared_modes(raw)
    except (ValueError, AttributeError, TypeError) as exc:
        name = getattr(backend, "name", type(backend).__name__)
        raise BackendError(f"backend {name}: denormals {raw!r}: {exc}") from None


def identity_of(backend: object) -> dict[str, Any]:
    """What a certificate records of the backend: its optional ``identity()`` (a
    program's files and their sha256, how it was run), else its name.  A backend whose
    identity() fails is recorded with the reason, never left out silently."""
    name = getattr(backend, "name", type(backend).__name__)
    method = getattr(backend, "identity", None)
    if method is None:
        return {"name": name}
    try:
        found = dict(method())
    except Exception as exc:  # a third-party backend's bug must not lose the run
        return {"name": name, "identity_error": f"{type(exc).__name__}: {exc}"[:300]}
    return {"name": name, **found}


# -- batches (optional) ------------------------------------------------------------------
#
# A backend whose work per vector is cheaper done for many vectors at once (a compiler
# that builds one module for many graphs) may define ``batch_size: int`` (> 1) and
# ``prepare(vectors, workdir) -> None``.  ``tosa-conformance run`` then sends each worker
# up to ``batch_size`` vectors at a time: the worker calls ``prepare`` with all of them,
# then ``unsupported`` and ``run`` for each, one by one, as for any backend.  ``prepare``
# only gets ahead of ``run``: ``run`` must work for a vector that was never prepared
# (the pytest plugin and ``fuzz`` send vectors one at a time), an exception from
# ``prepare`` is ignored (each vector then runs as if not prepared), and when the worker
# dies or overruns its time while preparing (the run's timeout per 16 vectors, at least
# one timeout), the vectors of the batch are sent again one at a time.


@runtime_checkable
class BatchBackend(Backend, Protocol):
    """A :class:`Backend` that prepares many vectors at once (see above)."""

    batch_size: int

    def prepare(self, vectors: list[LoadedVector], workdir: Path) -> None: ...


def batch_size(backend: object) -> int:
    """How many vectors ``backend`` wants to prepare at once (1: no batches)."""
    size = getattr(backend, "batch_size", 1)
    if not callable(getattr(backend, "prepare", None)) or not isinstance(size, int):
        return 1
    return max(1, size)

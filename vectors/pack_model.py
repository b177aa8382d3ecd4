"""The data a vector pack holds, as Python objects (the files are in docs/pack-format.md).

A generator fills a :class:`Vector` per test and hands it to ``vectors.pack.write_vector``;
``Pack.load`` gives it back as a :class:`LoadedVector`.  ``pack.json`` is described by
:class:`PackMeta` (what the whole pack was made from) and one :class:`PackEntry` per
vector (its folder's files and their hashes).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import numpy as np

from conformance.block_tensor import TensorValue
from conformance.compliance_descriptor import ComplianceDescriptor
from conformance.graph import Graph
from conformance.revisions import revision_commit
from conformance.spec import Spec, TypeSupport

VectorKind = Literal["valid", "error", "level"]
KINDS: tuple[VectorKind, ...] = ("valid", "error", "level")
FORMAT = "tosa-conformance-pack"
FORMAT_VERSION = 1


class Check(NamedTuple):
    """How one output is checked: the descriptor (None: not checked) and the per-element
    bound tensor the descriptor needs (ABS_ERROR, DOT_PRODUCT), else None."""

    descriptor: ComplianceDescriptor | None
    bound: np.ndarray | None = None


@dataclass(frozen=True)
class Requirements:
    """What a claim needs for a vector to apply.

    Same reading as Arm's ``profiles_supported`` / ``extensions_required``: any one of
    ``profiles`` (an empty list: the extensions decide alone), all of ``extensions``,
    at ``level``.
    """

    profiles: tuple[str, ...]
    extensions: tuple[str, ...]
    level: str

    @classmethod
    def for_mode(cls, spec: Spec, mode: TypeSupport, level: str) -> Requirements:
        """Flatten a mode's alternatives (``op_profile`` entries) into this form.

        Every tosa.xml mode so far fits it: alternatives differ only in one profile
        name (BI | MI) and share their extensions.  A mode that does not fit raises
        ValueError rather than being written with a requirement it does not have.
        """
        alternatives = [sorted(req) for req in mode.requirements]
        profiles = [[n for n in alt if n in spec.profiles] for alt in alternatives]
        extensions = [tuple(n for n in alt if n not in spec.profiles) for alt in alternatives]
        fits = len(set(extensions)) == 1 and (
            all(len(p) == 1 for p in profiles) or (len(profiles) == 1 and not profiles[0])
        )
        if not fits:
            raise ValueError(
                f"{mode.operator} {mode.mode!r}: requirements {alternatives} cannot be written "
                "as any-of profiles + all-of extensions"
            )
        return cls(tuple(p for ps in profiles for p in ps), extensions[0], level)

    def missing(self, names: frozenset[str] | set[str]) -> list[str]:
        """What a claim of ``names`` lacks for this vector to apply, in this class's
        reading (one of the profiles, every extension); empty when it applies."""
        lacking = (
            [] if not self.profiles or set(self.profiles) & names else [" or ".join(self.profiles)]
        )
        return lacking + sorted(set(self.extensions) - names)

    def to_json(self) -> dict[str, Any]:
        return {
            "profiles": list(self.profiles),
            "extensions": list(self.extensions),
            "level": self.level,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Requirements:
        return cls(tuple(data["profiles"]), tuple(data["extensions"]), data["level"])


CHAIN_STRATEGY = "graph:"  # a chain vector's strategy: "graph:CONV2D>BITWISE_AND>RESHAPE"


@dataclass(frozen=True)
class Provenance:
    """Where a vector comes from, and the one command that writes it again."""

    strategy: str
    seed: int
    index: int
    regenerate: str
    rule_broken: str | None = None
    # A vector imported from another suite (conformance.arm_suite.importer): that
    # suite's test name, tool version, own verdict and compliance, and every conflict
    # between them and our rules.  None for a vector this program generated.
    imported: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "strategy": self.strategy,
            "seed": self.seed,
            "index": self.index,
            "regenerate": self.regenerate,
            "rule_broken": self.rule_broken,
        }
        if self.imported is not None:
            out["imported"] = self.imported
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Provenance:
        return cls(
            data["strategy"],
            data["seed"],
            data["index"],
            data["regenerate"],
            data["rule_broken"],
            data.get("imported"),
        )

    @property
    def chain(self) -> list[str]:
        """A chain vector's operators in graph order (its strategy reads
        ``graph:CONV2D>BITWISE_AND>RESHAPE``, with `` / ...`` notes after it); empty for
        any other vector."""
        if not self.strategy.startswith(CHAIN_STRATEGY):
            return []
        path = self.strategy.removeprefix(CHAIN_STRATEGY).split(" / ")[0]
        return [o.strip() for o in path.split(">") if o.strip()]


@dataclass(eq=False)  # arrays have no truth value, so field-wise == would raise
class Vector:
    """One test vector, as a generator makes it.

    ``inputs`` holds one array per input of the graph's entry block, in the tensor's
    storage dtype (the tensor's DType is taken from the graph).  ``expected`` holds one
    array per output for ``kind == "valid"`` and none otherwise: float64 for
    floating-point outputs, the storage dtype for the rest.  A block-scaled input or
    output (TOSA 1.1 ``bs32_*``) is a :class:`~conformance.block_tensor.BlockScaled`:
    its values and scales, each in its type's storage.  ``checks`` gives the
    compliance descriptor and bound per output; an output not in it is not checked.
    ``rule`` is ``reference.outcome.Rule.to_json()`` for error and level vectors.
    """

    name: str
    operator: str
    mode: str  # exactly as in tosa.xml, e.g. "signed 32"
    kind: VectorKind
    graph: Graph
    inputs: Mapping[str, TensorValue]
    expected: Mapping[str, TensorValue]
    checks: dict[str, Check]
    requirements: Requirements
    provenance: Provenance
    rule: dict[str, Any] | None = None
    data_set: int = -1


@dataclass(eq=False)
class LoadedVector(Vector):
    """A vector read back from a pack, with what a runner needs beyond :class:`Vector`."""

    desc: dict[str, Any] = field(default_factory=dict)  # desc.json as read
    result_files: dict[str, str] = field(default_factory=dict)  # output -> result-K.npy

    @property
    def expected_failure(self) -> bool:
        return self.kind == "error"


@dataclass(frozen=True)
class PackEntry:
    """A vector's line in ``pack.json``: its folder's files and their sha256."""

    name: str
    operator: str
    mode: str
    kind: VectorKind
    files: dict[str, str]  # file name in the vector folder -> sha256 hex

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "operator": self.operator,
            "mode": self.mode,
            "kind": self.kind,
            "files": dict(sorted(self.files.items())),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PackEntry:
        return cls(data["name"], data["operator"], data["mode"], data["kind"], dict(data["files"]))


@dataclass(frozen=True)
class PackMeta:
    """What a whole pack was made from; no timestamps or paths, so it is reproducible."""

    generator_name: str
    generator_version: str
    spec_version: str
    spec_sha256: str
    seed: int
    claim: dict[str, Any]  # conformance.claims.Claim.to_json()
    options: dict[str, Any] = field(default_factory=dict)
    # conformance.revisions name; "" in packs written before revisions were recorded
    spec_revision: str = ""

    @classmethod
    def create(
        cls, spec: Spec, claim: dict[str, Any], seed: int, options: dict[str, Any] | None = None
    ) -> PackMeta:
        """Meta for a pack this program generates from ``spec``."""
        from conformance import __version__

        return cls(
            "tosa-conformance",
            __version__,
            spec.version_string,
            spec.sha256,
            seed,
            claim,
            dict(options or {}),
            spec.revision,
        )

    def to_json(self, entries: Iterable[PackEntry]) -> dict[str, Any]:
        """pack.json without ``pack_sha256``: the part the hash is taken over."""
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "generator": {"name": self.generator_name, "version": self.generator_version},
            "spec": {
                "version": self.spec_version,
                "sha256": self.spec_sha256,
                **({"revision": self.spec_revision} if self.spec_revision else {}),
                **({"commit": commit} if (commit := revision_commit(self.spec_revision)) else {}),
            },
            "seed": self.seed,
            "claim": self.claim,
            "options": self.options,
            "vectors": [e.to_json() for e in sorted(entries, key=lambda e: e.name)],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PackMeta:
        return cls(
            data["generator"]["name"],
            data["generator"]["version"],
            data["spec"]["version"],
            data["spec"]["sha256"],
            data["seed"],
            data["claim"],
            data["options"],
            data["spec"].get("revision", ""),
        )

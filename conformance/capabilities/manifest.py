"""Capability manifests: what a backend implements of TOSA, as TOML.

A manifest claims (operator, mode) pairs, each with the target operation(s) it maps
to, and the limits the backend's graphs keep to: ranks, the batch of activations,
element types and attribute values.  It is checked twice: against schema.json (its
form) and against the spec model (every operator, mode, element type and attribute
it names exists).  Every problem is one line naming the file, the key and what is
wrong.  See docs/capabilities.md.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from conformance.claims import ClaimError
from conformance.spec import Spec, TypeSupport
from conformance.user_files import UserFileError, read_user_text

SCHEMA_PATH = Path(__file__).parent / "schema.json"


class ManifestError(ClaimError):
    """A manifest that cannot be read, or names what the spec does not have."""


@dataclass(frozen=True)
class Limits:
    """What generation keeps to for one operator: the rank range, the batch of
    activations, and the values allowed per attribute (None: no restriction)."""

    min_rank: int = 0
    max_rank: int | None = None
    max_batch: int | None = None
    attributes: tuple[tuple[str, tuple[Any, ...]], ...] = ()

    def allowed(self, name: str) -> tuple[Any, ...] | None:
        return next((v for n, v in self.attributes if n == name), None)


@dataclass(frozen=True)
class Manifest:
    name: str
    origin: str  # the file, or "built-in NAME"
    data: Mapping[str, Any]  # the validated document

    @property
    def sha256(self) -> str:
        """Of the canonical JSON of the document: the same for a built-in manifest and
        the TOML file `capabilities show` prints of it."""
        text = json.dumps(self.data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    @property
    def source(self) -> str:
        """What ``--capabilities`` takes to load it again: the name or the file."""
        return self.origin.removeprefix("built-in ")

    @property
    def max_rank(self) -> int | None:
        value = self.data.get("max_rank")
        return None if value is None else int(value)

    @property
    def max_batch(self) -> int | None:
        value = self.data.get("max_batch")
        return None if value is None else int(value)

    @property
    def element_types(self) -> frozenset[str] | None:
        types = self.data.get("element_types")
        return None if types is None else frozenset(types)

    @property
    def operators(self) -> Mapping[str, Mapping[str, Any]]:
        ops: Mapping[str, Mapping[str, Any]] = self.data["operators"]
        return ops

    def targets(self, operator: str, mode: str) -> list[str]:
        """The target operation(s) the pair maps to; empty when it is not claimed."""
        entry = self.operators.get(operator)
        if entry is None:
            return []
        return list(entry["modes"].get(mode, []))

    def unclaimed_reason(self, mode: TypeSupport) -> str | None:
        """None when the manifest claims the pair, else why not."""
        entry = self.operators.get(mode.operator)
        if entry is None:
            return f"manifest {self.name} does not claim operator {mode.operator}"
        if mode.mode not in entry["modes"]:
            return f"manifest {self.name} does not claim {mode.operator} [{mode.mode}]"
        allowed = self.element_types
        if allowed is not None:
            outside = sorted(t for t in _bound_types(mode) if t not in allowed)
            if outside:
                return f"manifest {self.name} holds no {', '.join(outside)}"
        return None

    def claims(self, mode: TypeSupport) -> bool:
        return self.unclaimed_reason(mode) is None

    def limits(self, operator: str) -> Limits:
        entry = self.operators.get(operator, {})
        hi = entry.get("max_rank", self.max_rank)
        if hi is not None and self.max_rank is not None:
            hi = min(hi, self.max_rank)
        attrs = tuple(
            (name, tuple(_frozen(v) for v in values))
            for name, values in sorted(entry.get("attributes", {}).items())
        )
        return Limits(int(entry.get("min_rank", 0)), hi, self.max_batch, attrs)

    def constrain(self, budget: Any, operator: str) -> Any:
        """``budget`` (strategies.shapes.Budget) with this manifest's limits for the
        operator: the rank range, the batch, the attribute values."""
        from dataclasses import replace

        lim = self.limits(operator)
        return replace(
            budget,
            min_rank=lim.min_rank,
            max_rank=lim.max_rank,
            max_batch=lim.max_batch,
            attributes=lim.attributes,
        )

    def to_json(self) -> dict[str, Any]:
        """What a pack or certificate records of the manifest."""
        return {"name": self.name, "sha256": self.sha256, "origin": self.origin}

    def to_toml(self) -> str:
        return to_toml(self.data)


def _frozen(value: Any) -> Any:
    return tuple(_frozen(v) for v in value) if isinstance(value, list | tuple) else value


def _bound_types(mode: TypeSupport) -> set[str]:
    """The element types a mode binds (TABLE_SIZE's number is not one)."""
    return {t for t in mode.bindings.values() if t.endswith("_t")}


@cache
def _schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return schema


def _key(path: Any) -> str:
    parts = [str(p) for p in path]
    return ".".join(parts) if parts else "(top level)"


def from_data(data: Mapping[str, Any], origin: str, spec: Spec) -> Manifest:
    """Validate a manifest document (form, then names) and build the Manifest."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(_schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        raise ManifestError(f"{origin}: {_key(e.absolute_path)}: {e.message}")
    _check_names(data, origin, spec)
    return Manifest(str(data["name"]), origin, data)


def _check_names(data: Mapping[str, Any], origin: str, spec: Spec) -> None:
    from conformance import dtypes

    for i, t in enumerate(data.get("element_types", [])):
        try:
            dtypes.dtype(t)
        except KeyError:
            raise ManifestError(
                f"{origin}: element_types.{i}: {t!r} is not a TOSA element type"
            ) from None
    for op, entry in data["operators"].items():
        if op not in spec.operators:
            raise ManifestError(f"{origin}: operators.{op}: no such TOSA operator")
        op_spec = spec.operator(op)
        known = [m.mode for m in op_spec.modes]
        for mode in entry["modes"]:
            if mode not in known:
                raise ManifestError(
                    f"{origin}: operators.{op}.modes.{mode}: {op} has no mode {mode!r} "
                    f"(its modes: {', '.join(known)})"
                )
        attrs = {a.name for a in op_spec.attributes} | {a.name for a in op_spec.inputs}
        for name in entry.get("attributes", {}):
            if name not in attrs:
                raise ManifestError(
                    f"{origin}: operators.{op}.attributes.{name}: {op} has no argument {name!r}"
                )
        lo, hi = entry.get("min_rank", 0), entry.get("max_rank")
        if hi is not None and lo > hi:
            raise ManifestError(f"{origin}: operators.{op}.min_rank: {lo} is above max_rank {hi}")
    for name, comp in data.get("composites", {}).items():
        for i, op in enumerate(comp["subgraph"]):
            if op not in spec.operators:
                raise ManifestError(
                    f"{origin}: composites.{name}.subgraph.{i}: no such TOSA operator {op!r}"
                )


def load_file(path: Path, spec: Spec) -> Manifest:
    try:
        # Not read_text: a FIFO would hang the command, /dev/zero fill its memory.
        text = read_user_text(path, "a capability manifest")
    except UserFileError as exc:
        raise ManifestError(str(exc)) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{path}: not TOML: {exc}") from None
    return from_data(data, str(path), spec)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"no TOML form for {v!r}")


def _toml_key(k: str) -> str:
    bare = k.replace("_", "").replace("-", "").isalnum() and k.isascii()
    return k if bare else json.dumps(k)


def to_toml(data: Mapping[str, Any], prefix: str = "") -> str:
    """The TOML text of a manifest document (plain values first, then sub-tables), so
    that ``tomllib.loads(to_toml(d)) == d``."""
    lines: list[str] = []
    tables = []
    for k, v in data.items():
        if isinstance(v, Mapping):
            tables.append((k, v))
        else:
            lines.append(f"{_toml_key(k)} = {_toml_value(v)}")
    out = "\n".join(lines)
    for k, v in tables:
        name = f"{prefix}.{_toml_key(k)}" if prefix else _toml_key(k)
        body = to_toml(v, name)
        has_values = any(not isinstance(x, Mapping) for x in v.values())
        head = f"[{name}]\n" if has_values or not v else ""
        out += ("\n\n" if out else "") + head + body
    return out.strip("\n") + ("\n" if not prefix else "")

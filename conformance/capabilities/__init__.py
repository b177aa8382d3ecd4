"""Capability manifests: the part of TOSA a backend implements (docs/capabilities.md).

``load_manifest("nnapi")`` or ``load_manifest("path/to/manifest.toml")``; the built-in
manifests are derived at load time from the vendored files in data/.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.capabilities.manifest import Limits, Manifest, ManifestError, from_data, load_file
from conformance.spec import Spec

__all__ = ["BUILTIN", "Limits", "Manifest", "ManifestError", "builtin_names", "load_manifest"]


def _nnapi(spec: Spec) -> dict[str, Any]:
    from conformance.capabilities.nnapi import nnapi_data

    return nnapi_data(spec)


def _mobilint(spec: Spec) -> dict[str, Any]:
    from conformance.capabilities.mobilint import mobilint_data

    return mobilint_data(spec)


BUILTIN: dict[str, tuple[Callable[[Spec], dict[str, Any]], str]] = {
    "nnapi": (_nnapi, "Android NNAPI, derived from OperationType.aidl"),
    "mobilint": (_mobilint, "Mobilint NPU, from its IR operation list (NHWC, batch 1)"),
}


def builtin_names() -> list[str]:
    return sorted(BUILTIN)


_cache: dict[tuple[str, str], Manifest] = {}


def load_manifest(source: str, spec: Spec) -> Manifest:
    """A built-in manifest by name, else a TOML file; ManifestError (one line naming
    the file, the key and the problem) when it is neither or is malformed."""
    key = (source, spec.path)
    if key in _cache:
        return _cache[key]
    if source in BUILTIN:
        manifest = from_data(BUILTIN[source][0](spec), f"built-in {source}", spec)
    else:
        path = Path(source)
        if not path.exists():
            raise ManifestError(
                f"--capabilities {source!r}: no such file and no built-in manifest of that "
                f"name (built-in: {', '.join(builtin_names())})"
            )
        manifest = load_file(path, spec)
    _cache[key] = manifest
    return manifest

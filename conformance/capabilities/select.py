"""Which vectors of a pack a capability manifest leaves out of a run, and why.

A vector is skipped when the manifest does not claim its (operator, mode) pair, or,
for a pack not generated under this very manifest (pack.json ``options.capabilities``
names another sha256, or none), when its graph is outside the manifest's limits (a
rank-5 tensor for a backend that claims rank <= 4).  Skipped vectors get the verdict
``skipped`` with the reason, never ``passed``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from conformance.capabilities.check import violations
from conformance.capabilities.manifest import Manifest
from conformance.spec import Spec


def generated_under(manifest: Manifest, pack: Any) -> bool:
    recorded = pack.meta.options.get("capabilities") or {}
    return bool(recorded.get("sha256") == manifest.sha256)


# How a skip the manifest decides begins: the certificate tells these (outside the subset
# certified) from vectors a backend declines (which leave a claimed pair not met).
MANIFEST_SKIP = ("manifest ", "outside the manifest: ")


def skipped_vectors(
    manifest: Manifest, pack: Any, names: Iterable[str], spec: Spec
) -> dict[str, str]:
    """vector name -> why the manifest leaves it out, for each of ``names`` it does."""
    check_graphs = not generated_under(manifest, pack)
    out: dict[str, str] = {}
    for name in names:
        entry = pack.entry(name)
        try:
            mode = spec.operator(entry.operator).mode(entry.mode)
        except KeyError:
            out[name] = (
                f"manifest {manifest.name}: {entry.operator} [{entry.mode}] is not in the spec"
            )
            continue
        why = manifest.unclaimed_reason(mode)
        if why is None and check_graphs and entry.kind == "valid":
            outside = violations(manifest, pack.load(name).graph, spec)
            why = f"{MANIFEST_SKIP[1]}{outside[0]}" if outside else None
        if why is not None:
            out[name] = why
    return out

"""A converted graph's bindings, and the scenario that runs it.

The model converter writes a VGF whose model sequence binds each graph input and
output to a descriptor binding (:func:`bindings`, read with the VGF library's
``vgf_dump``).  The scenario runner takes a JSON description of the resources and the
dispatch (:func:`scenario_json`): that is the reproducer a vector's log and
docs/vulkan.md give, runnable with ``scenario-runner --scenario FILE`` alone.  The
backend itself builds the same scenario in process, through the runner's Python API
(:mod:`.pipeline`).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, NamedTuple

from conformance.backends.vulkan.environment import vgf_dump

__all__ = ["Binding", "bindings", "parse_bindings", "scenario_json"]

DUMP_TIMEOUT = 60  # seconds


class Binding(NamedTuple):
    role: str  # "input" or "output"
    position: int  # the graph input's / output's position
    binding: int  # the descriptor binding in set 0
    vk_format: str  # the tensor's format, as the VGF declares it
    shape: tuple[int, ...]  # and its shape (the translation may write [N,1,1,C] for [N,C])


def parse_bindings(dump: dict[str, Any]) -> list[Binding]:
    """The bindings of a VGF's model sequence (``vgf_dump``'s JSON), inputs first, each
    with the format of its resource."""
    seq = dump.get("model_sequence")
    resources = dump.get("resources")
    if not isinstance(seq, dict) or not isinstance(resources, list):
        raise ValueError("the VGF has no model sequence")
    out = []
    for role, key in (("input", "inputs"), ("output", "outputs")):
        for entry in seq.get(key, []):
            resource = resources[int(entry["mrt_index"])]
            out.append(
                Binding(
                    role,
                    int(entry["index"]),
                    int(entry["binding"]),
                    resource["vk_format"],
                    tuple(int(d) for d in resource["shape"]),
                )
            )
    return out


def bindings(vgf: Path) -> list[Binding]:
    """The bindings of the VGF at ``vgf`` (its dump is written beside it)."""
    dump = vgf.with_suffix(".vgf.json")
    proc = subprocess.run(
        [str(vgf_dump()), "--input", str(vgf), "--output", str(dump)],
        capture_output=True,
        text=True,
        timeout=DUMP_TIMEOUT,
    )
    if proc.returncode != 0 or not dump.is_file():
        raise ValueError(f"vgf_dump could not read {vgf.name}: {proc.stderr.strip()[-300:]}")
    return parse_bindings(json.loads(dump.read_text()))


def scenario_json(
    vgf: str,
    layout: list[Binding],
    sources: list[str],
    results: list[str],
) -> dict[str, Any]:
    """The scenario runner's JSON for one graph: ``vgf`` dispatched once, input ``k``
    read from ``sources[k]`` (a ``.npy`` of its Vulkan format), output ``k`` written
    to ``results[k]``."""
    resources: list[dict[str, Any]] = [{"graph": {"uid": "graph", "src": vgf}}]
    binds = []
    for b in layout:
        uid = f"{b.role}_{b.position}"
        tensor: dict[str, Any] = {
            "uid": uid,
            "dims": list(b.shape),
            "format": b.vk_format,
        }
        if b.role == "input":
            tensor.update(shader_access="readonly", src=sources[b.position])
        else:
            tensor.update(shader_access="writeonly", dst=results[b.position])
        resources.append({"tensor": tensor})
        binds.append({"id": b.binding, "set": 0, "resource_ref": uid})
    command = {"dispatch_vgf": {"graph_ref": "graph", "bindings": binds}}
    return {"commands": [command], "resources": resources}

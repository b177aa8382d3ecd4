"""A vector as the ML SDK's own tools take it: the reproducers of docs/vulkan.md.

    python -m conformance.backends.vulkan.repro PACK VECTOR OUT_FOLDER

writes ``OUT_FOLDER/VECTOR.tosa`` (the flatbuffer the backend gives the converter),
``VECTOR.vgf``, the inputs in their Vulkan formats (``input-K.npy``; bf16 and fp8 as
their bit patterns) and ``scenario.json``, and prints the environment and the
``model-converter`` and ``scenario-runner`` commands that show what the backend saw,
without this project.  The runner writes ``output-K.npy`` into OUT_FOLDER.
"""

from __future__ import annotations

import json
import shlex
import sys
import tempfile
from pathlib import Path

import numpy as np

from conformance.backends.vulkan import VulkanBackend
from conformance.backends.vulkan.environment import converter, layer_environment, scenario_runner
from conformance.backends.vulkan.formats import to_device
from conformance.backends.vulkan.pipeline import Refusal, convert
from conformance.backends.vulkan.scenario import bindings, scenario_json
from vectors.pack import open_pack


def write(pack: Path, name: str, out: Path) -> list[str]:
    """Write the reproducer; the shell lines that run it."""
    vector = open_pack(pack).load(name)
    backend = VulkanBackend("1")
    graph = backend._graph(vector)
    if isinstance(graph, str):
        raise SystemExit(f"{name} is skipped by the vulkan backend: {graph}")
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    vgf = convert(converter(), graph.flatbuffer, out, name)
    tosa = out / f"{name}.tosa"
    lines = [
        shlex.join(
            [str(converter()), "--input", str(tosa), "--output", str(tosa.with_suffix(".vgf"))]
        )
    ]
    if isinstance(vgf, Refusal):
        print(f"# the converter refuses it: {vgf.message}", file=sys.stderr)
        return lines
    layout = bindings(vgf)
    sources, results = [], []
    for k, (t, value) in enumerate(zip(graph.inputs, graph.input_values, strict=True)):
        vk = next(b.vk_format for b in layout if b.role == "input" and b.position == k)
        path = out / f"input-{k}.npy"
        np.save(path, to_device(value, t.dtype, vk))
        sources.append(path.name)
    results = [f"output-{k}.npy" for k in range(len(graph.outputs))]
    scenario = out / "scenario.json"
    doc = scenario_json(vgf.name, layout, sources, results)
    scenario.write_text(json.dumps(doc, indent=1) + "\n")
    layers = Path(tempfile.gettempdir()) / "tosa-vulkan-layers"
    env = layer_environment(layers, backend.device)
    lines[:0] = [f"export {k}={shlex.quote(v)}" for k, v in env.items()]
    lines.append(
        shlex.join([str(scenario_runner()), "--scenario", str(scenario), "--output", str(out)])
    )
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    for line in write(Path(argv[0]), argv[1], Path(argv[2])):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

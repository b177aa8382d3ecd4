"""A vector's program as IREE's own tools take it: the triage of docs/iree.md.

    python -m conformance.backends.iree.repro PACK VECTOR OUT_FOLDER

writes ``OUT_FOLDER/VECTOR.mlir`` (the module the backend compiles for that vector
alone: tosa-opt's graph and the entry function ``@v0``) with the inputs the entry takes
(``input-K.npy``, or ``input-K.bin`` raw bytes for bf16 / fp8, which numpy's format
cannot name), and prints the ``iree-compile`` and ``iree-run-module`` commands that
show what the backend saw, without this project.
"""

from __future__ import annotations

import shlex
import sys
import tempfile
from pathlib import Path

import numpy as np

from conformance.backends.iree import IreeBackend
from conformance.backends.iree.compiler import FLAGS
from conformance.backends.iree.elements import MLIR_ELEMENT, embedded
from conformance.backends.iree.mlir import Embedded, deserialize, module, program, split_module
from conformance.backends.iree.runtime import DRIVER
from conformance.backends.iree.stages import Rejection
from conformance.graph import Tensor
from vectors.pack import open_pack

_RAW = ("bf16", "fp8e4m3", "fp8e5m2")


def write(pack: Path, name: str, out: Path) -> list[list[str]]:
    """Write the program and its inputs; the commands that compile and run it."""
    vector = open_pack(pack).load(name)
    backend = IreeBackend("1")
    arm = backend._translate(vector)
    if isinstance(arm, str):
        raise SystemExit(f"{name} is skipped by the iree backend: {arm}")
    with tempfile.TemporaryDirectory() as tmp:
        text = deserialize(backend.tosa_opt, arm.flatbuffer, Path(tmp))
    if isinstance(text, Rejection):
        raise SystemExit(f"{name}: tosa-opt refuses the graph: {text.message}")
    graph = split_module(text)
    held, inputs = [], []
    for pos, (t, value) in enumerate(zip(arm.inputs, arm.input_values, strict=True)):
        if embedded(t.dtype):
            held.append(Embedded(pos, value, t.dtype))
        else:
            inputs.append((t, np.asarray(value)))
    out.mkdir(parents=True, exist_ok=True)
    mlir, vmfb = out / f"{name}.mlir", out / f"{name}.vmfb"
    mlir.write_text(module([program(0, graph, held)]))
    run = ["iree-run-module", f"--module={vmfb}", f"--device={DRIVER}", "--function=v0"]
    for k, (t, value) in enumerate(inputs):
        run.append(f"--input={_input(out, k, t, value)}")
    return [["iree-compile", str(mlir), *FLAGS, "-o", str(vmfb)], run]


def _input(out: Path, k: int, t: Tensor, value: np.ndarray) -> str:
    if t.dtype.name in _RAW:
        path = out / f"input-{k}.bin"
        path.write_bytes(np.ascontiguousarray(value).tobytes())
        dims = "".join(f"{d}x" for d in t.shape)
        return f"{dims}{MLIR_ELEMENT[t.dtype.name]}=@{path}"
    path = out / f"input-{k}.npy"
    np.save(path, value)
    return f"@{path}"


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    for cmd in write(Path(argv[0]), argv[1], Path(argv[2])):
        print(shlex.join(cmd))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Shared by the fake executables: the ``--test_desc`` convention of the command backend.

Kept free of numpy at import time, so the fakes that need no arrays start quickly.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

# The repository root, so that the fakes run from a checkout that is not installed.
ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def read_desc(argv: list[str]) -> tuple[dict[str, Any], list[str]]:
    """desc.json named by ``--test_desc``, and the other arguments."""
    rest = list(argv)
    i = rest.index("--test_desc")
    path = rest[i + 1]
    del rest[i : i + 2]
    return json.loads(Path(path).read_text(encoding="utf-8")), rest


def workdir(desc: dict[str, Any]) -> Path:
    return Path(desc["tosa_file"]).parent


def reject(desc: dict[str, Any], message: str, exit_status: int) -> None:
    (workdir(desc) / "error.txt").write_text(message + "\n", encoding="utf-8")
    sys.exit(exit_status)


def run_reference(desc: dict[str, Any], *, error_exit_status: int = 2) -> None:
    """What a correct implementation does: the outputs, or error.txt for a graph that
    breaks a rule (exit status 2, as Arm's reference model's "Graph result: ERROR")."""
    from reference.engine import evaluate, to_storage
    from vectors.flatbuffer import read_graph
    from vectors.npy import load_array, save_array

    graph = read_graph(desc["tosa_file"])
    main = graph.main
    inputs = {
        name: load_array(path, main.tensors[name].dtype, main.tensors[name].shape)
        for name, path in zip(desc["ifm_name"], desc["ifm_file"], strict=True)
    }
    level = desc.get("requirements", {}).get("level", "8K")
    outcome = evaluate(graph, inputs, level=level)
    if outcome.kind != "valid":
        reject(desc, f"{outcome.kind}: {outcome.rule}", error_exit_status)
    for name, path in zip(desc["ofm_name"], desc["ofm_file"], strict=True):
        dtype = main.tensors[name].dtype
        save_array(path, to_storage(outcome.outputs[name], dtype), dtype)

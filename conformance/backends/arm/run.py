"""Running a translated graph on Arm's reference model.

Two ways, same result:

* in process, through ``tosa_reference_model.run(flatbuffer, inputs)`` (tens of
  microseconds per small graph);
* the native ``tosa_reference_model`` executable with ``--test_desc`` (a few
  milliseconds: process start) for the graphs the binding cannot cope with (see
  ``needs_executable`` in the package).  Every input is then embedded in the graph as
  a constant, so only outputs travel through ``.npy`` files.

Both report the graph status the model computes: VALID, ERROR (an ERROR_IF failed, or
the graph did not pass the model's validation) or UNPREDICTABLE (a REQUIRE failed).
The model prints its diagnostics through C stdio; the in-process runner points file
descriptors 1 and 2 at a file in the work folder while it runs, so they reach the log.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import import_module, metadata
from pathlib import Path
from typing import Any, Literal

import numpy as np

from conformance.backends.revision.elements import binding_input, from_binding, from_npy
from conformance.backends.revision.translate import ArmGraph
from conformance.block_tensor import (
    BlockScaled,
    TensorValue,
    is_block_scaled,
    scale_shape,
    scale_type,
    value_type,
)
from conformance.graph import Tensor

Status = Literal["valid", "error", "unpredictable"]

# The model attaches gdb to itself to print a backtrace on SIGABRT unless told not to.
os.environ.setdefault("TOSA_MODEL_NO_BACKTRACE", "1")

LEVELS = {"8K": "EIGHTK", "none": "NONE", "NONE": "NONE"}
_CLI_STATUS: dict[int, Status] = {0: "valid", 1: "unpredictable", 2: "error"}


@dataclass
class ModelRun:
    status: Status
    outputs: dict[str, TensorValue] = field(default_factory=dict)
    message: str = ""  # the model's own words on why, for error / unpredictable
    log: str = ""


def model_level(level: str) -> str:
    return LEVELS.get(level, "NONE")


def find_executable() -> str | None:
    """The native ``tosa_reference_model`` binary of the installed tosa-tools wheel.

    The wheel's console script of that name is a Python shim (behind a pyenv shim,
    perhaps) that looks the binary up and runs it: a few hundred milliseconds per call
    that running the binary directly saves.  PATH is the fallback."""
    try:
        dist = metadata.distribution("tosa-tools")
    except metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        native = Path(str(dist.locate_file(Path("bin") / "tosa_reference_model")))
        if native.is_file() and os.access(native, os.X_OK):
            return str(native)
    return shutil.which("tosa_reference_model")


def load_model() -> Any:
    """Arm's in-process model module (ImportError when tosa-tools is missing)."""
    return import_module("tosa_reference_model")


_LIBC = ctypes.CDLL(None)


@contextlib.contextmanager
def _stdio_to(path: Path) -> Iterator[None]:
    """Point the process's file descriptors 1 and 2 at ``path`` (the model prints to both)."""
    with open(path, "wb") as sink:
        saved = [os.dup(1), os.dup(2)]
        try:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            yield
        finally:
            # The model prints through C stdio, which buffers stdout when it is not a
            # terminal: flush it into the file before the descriptors go back.
            _LIBC.fflush(None)
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


_NOISE = ("WARNING AT", "An error occurred", "Unable to initialize", "Graph result:", "Failed to")


def _gist(log: str) -> str:
    """The model's diagnosis in one line.  It prints a failing ERROR_IF / REQUIRE as
    "<check> fails AT <file>:<line> <function>(): (<condition>)" followed by a line of
    explanation; the graph-level SUBGRAPH_ERROR_IF that follows says less, so an
    operator's own check, or its "validation error" line, is preferred."""
    lines = [ln.strip() for ln in log.splitlines() if ln.strip()]

    def explained(k: int) -> str:
        check, _, rest = lines[k].partition(" fails AT ")
        where = rest.split(" ", 1)[0].rsplit("/", 1)[-1]
        nxt = lines[k + 1] if k + 1 < len(lines) else ""
        why = "" if " fails AT " in nxt or nxt.startswith(_NOISE) else nxt
        return f"{why} [{check} at {where}]".strip()[:400]

    fails = [k for k, ln in enumerate(lines) if " fails AT " in ln]
    for k in fails:
        if not lines[k].startswith("SUBGRAPH_"):
            return explained(k)
    for line in lines:
        if "validation error" in line.lower():
            return line[:400]
    if fails:
        return explained(fails[0])
    for line in lines:
        if not line.startswith(_NOISE):
            return line[:400]
    return ""


def run_in_process(arm: ArmGraph, level: str, workdir: Path, model: Any = None) -> ModelRun:
    model = model or load_model()
    inputs = [binding_input(v, t.dtype) for t, v in zip(arm.inputs, arm.input_values, strict=True)]
    debug, captured = workdir / "model-debug.log", workdir / "model-stderr.log"
    failure: Exception | None = None
    with _stdio_to(captured):
        try:
            raw, status = model.run(
                arm.flatbuffer, inputs, debug_filename=str(debug), tosa_level=model_level(level)
            )
        except ValueError as exc:
            failure = exc
    log = _read(captured) + _read(debug)
    if failure is not None:
        if "Invalid TOSA graph" not in str(failure):
            # Inputs the binding refused: a fault of this backend, not the graph's.
            raise RuntimeError(f"the model refused the inputs: {failure}; {_gist(log)}")
        # The graph did not initialise: it failed the model's validation (ERROR_IFs).
        return ModelRun("error", message=_gist(log) or str(failure), log=log)
    name = status.name
    if name == "TOSA_ERROR":
        return ModelRun("error", message=_gist(log) or "graph status ERROR", log=log)
    if name == "TOSA_UNPREDICTABLE":
        return ModelRun(
            "unpredictable", message=_gist(log) or "graph status UNPREDICTABLE", log=log
        )
    outputs: dict[str, TensorValue] = {
        t.name: from_binding(r, t.dtype, t.shape) for t, r in zip(arm.outputs, raw, strict=True)
    }
    return ModelRun("valid", outputs, log=log)


def run_cli(arm: ArmGraph, level: str, workdir: Path, executable: str, timeout: float) -> ModelRun:
    """Run with the executable; ``arm`` must have every input embedded (no inputs)."""
    if arm.inputs:
        raise ValueError("the command-line path expects every input embedded as a constant")
    (workdir / "graph.tosa").write_bytes(arm.flatbuffer)
    files = [f"output-{k}.npy" for k in range(len(arm.outputs))]
    desc = {
        "tosa_file": "graph.tosa",
        "ifm_name": [],
        "ifm_file": [],
        "ofm_name": [t.name for t in arm.outputs],
        "ofm_file": files,
        "expected_failure": False,
    }
    (workdir / "desc.json").write_text(json.dumps(desc))
    cmd = [
        executable,
        "--test_desc",
        str(workdir / "desc.json"),
        "--tosa_level",
        model_level(level),
    ]
    proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=timeout)
    log = proc.stdout + proc.stderr
    status = _CLI_STATUS.get(proc.returncode)
    if status is None:
        # A signal or an unknown code: the model broke, which is no rejection.
        raise RuntimeError(f"{executable} exited with {proc.returncode}: {_gist(log)}")
    if status != "valid":
        return ModelRun(status, message=_gist(log) or f"graph status {status.upper()}", log=log)
    outputs = {t.name: _read_output(workdir, f, t) for t, f in zip(arm.outputs, files, strict=True)}
    return ModelRun("valid", outputs, log=log)


def _read_output(workdir: Path, file: str, t: Tensor) -> TensorValue:
    """An output file of the executable; a block-scaled output is two: ``file`` (its
    values) and the same name with ``_scale`` (its scales)."""
    values = np.load(workdir / file, allow_pickle=False)
    if not is_block_scaled(t.dtype):
        return from_npy(values, t.dtype, t.shape)
    scales = np.load(workdir / file.replace(".npy", "_scale.npy"), allow_pickle=False)
    s_shape = scale_shape(t.shape, t.dtype.block_size)
    return BlockScaled(
        t.dtype,
        from_npy(values, value_type(t.dtype), t.shape),
        from_npy(scales, scale_type(t.dtype), s_shape),
    )

"""Graphs through the model converter, and many of them run as one scenario.

Each vector's flatbuffer is converted on its own (:func:`convert`): the converter
legalizes the TOSA graph to SPIR-V graphs, and refuses what it cannot (stage
``convert``).  Its crash is not a refusal: :class:`ConverterCrash`, which the runner
records as ``crashed``.

Most of a scenario's cost is fixed: creating the Vulkan instance and device, about
0.3 s, against a few tens of milliseconds per graph pipeline and milliseconds per
dispatch.  So the VGFs of a batch share one scenario (:func:`run_batch`): a resource
set and a dispatch per graph, one build, one run.  When the build fails (stage
``pipeline``: the device did not create a graph pipeline) or the run does (stage
``dispatch``), the batch is halved and each half run again, down to the single graphs
that fail; every other graph gets its results.  A failure that is the device's
start-up flake (``Cannot find queue index``, about once in 1,000 runs) is retried once,
and the retry is written in the log of every graph it concerned.
"""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import numpy as np

from conformance.backends.stages import Stages
from conformance.backends.vulkan.formats import element, from_device, to_device
from conformance.backends.vulkan.scenario import Binding
from conformance.graph import Tensor
from vectors.pack_model import LoadedVector

__all__ = [
    "CONVERT", "DISPATCH", "PIPELINE", "STAGES", "ConverterCrash", "Member", "Outcome",
    "Refusal", "convert", "run_batch",
]  # fmt: skip

CONVERT = "convert"
PIPELINE = "pipeline"
DISPATCH = "dispatch"
# Only the converter checks the graph against TOSA (its legalization verifies every
# operator); the device creating a pipeline or dispatching one checks nothing of TOSA's.
STAGES = Stages((CONVERT, PIPELINE, DISPATCH), frozenset({CONVERT}))
CONVERT_TIMEOUT = 300  # seconds; the runner's own timeout per vector bounds it anyway
FLAKE = "Cannot find queue index"


class ConverterCrash(RuntimeError):
    """The converter died (a signal, an abort): a crash, never a refusal.  ``output``
    is everything it printed."""

    def __init__(self, message: str, output: str = "") -> None:
        super().__init__(message)
        self.output = output


@dataclass(frozen=True)
class Refusal:
    stage: str
    message: str  # the first diagnostic, in the tool's words

    def __post_init__(self) -> None:
        STAGES.check(self.stage)

    def text(self, kind: str) -> str:
        return STAGES.text(self.stage, self.message, kind)


@dataclass
class Member:
    """A converted graph ready to share a scenario."""

    vector: LoadedVector
    vgf: Path
    layout: list[Binding]
    inputs: list[Tensor]
    values: list[np.ndarray]
    outputs: list[Tensor]
    log: str = ""


@dataclass
class Outcome:
    """What the device did with one member: its outputs, or a refusal."""

    outputs: dict[str, np.ndarray] = field(default_factory=dict)
    refusal: Refusal | None = None
    log: str = ""
    declined: str | None = None  # the VGF binds a format this backend cannot read
    crash: ConverterCrash | None = None


def _first_error(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for line in lines:
        if "error" in line.lower():
            return line.split("error: ", 1)[-1]
    return lines[-1] if lines else ""


def _signal_of(code: int) -> str | None:
    if code < 0:
        number = -code
    elif code > 128 and (code - 128) in {int(s) for s in signal.valid_signals()}:
        number = code - 128
    else:
        return None
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    return f"was killed by signal {number} ({name})"


def convert(converter: Path, flatbuffer: bytes, workdir: Path, stem: str) -> Path | Refusal:
    """The VGF of ``flatbuffer`` (written in ``workdir``), or the converter's refusal;
    ConverterCrash when it dies."""
    tosa = workdir / f"{stem}.tosa"
    vgf = workdir / f"{stem}.vgf"
    tosa.write_bytes(flatbuffer)
    try:
        proc = subprocess.run(
            [str(converter), "--input", str(tosa), "--output", str(vgf)],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=CONVERT_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        raise ConverterCrash(f"model-converter ran past {CONVERT_TIMEOUT} s") from None
    printed = (proc.stdout + proc.stderr).strip()
    crash = _signal_of(proc.returncode)
    if crash is not None:
        raise ConverterCrash(f"model-converter {crash}: {_first_error(printed)[:300]}", printed)
    if proc.returncode != 0 or not vgf.is_file():
        return Refusal(CONVERT, _first_error(printed) or f"exit status {proc.returncode}")
    return vgf


# -- one scenario for many graphs ----------------------------------------------------


def run_batch(members: Sequence[Member], runner: ModuleType) -> list[Outcome]:
    """Every member's outcome, in order; ``runner`` is ``scenario_runner_py``."""
    out: dict[int, Outcome] = {}
    _run(list(enumerate(members)), runner, out.__setitem__, retried=False)
    return [out[k] for k in range(len(members))]


def _run(
    group: list[tuple[int, Member]],
    runner: ModuleType,
    emit: Callable[[int, Outcome], None],
    *,
    retried: bool,
    note: str = "",
) -> None:
    stage, results, error = _attempt([m for _, m in group], runner)
    if results is not None:
        for (k, m), outputs in zip(group, results, strict=True):
            emit(k, Outcome(outputs, None, m.log + note))
        return
    if FLAKE in error and not retried:
        again = f"retried once after the device's start-up failure ({FLAKE})\n"
        _run(group, runner, emit, retried=True, note=note + again)
        return
    if len(group) == 1:
        k, m = group[0]
        emit(k, Outcome({}, Refusal(stage, error), m.log + note))
        return
    half = len(group) // 2
    _run(group[:half], runner, emit, retried=retried, note=note)
    _run(group[half:], runner, emit, retried=retried, note=note)


def _attempt(
    members: list[Member], runner: ModuleType
) -> tuple[str, list[dict[str, np.ndarray]] | None, str]:
    """(the stage reached, every member's outputs or None, the error's words)."""
    builder = runner.ScenarioBuilder()
    plans = []
    for m in members:
        info = runner.VgfInfo()
        info.load_source(str(m.vgf))
        command = runner.DispatchVgfData(builder.add_vgf(info))
        binds, uploads, downloads = [], [], []
        for b in m.layout:
            t = (m.inputs if b.role == "input" else m.outputs)[b.position]
            fmt = getattr(runner.Format, element(b.vk_format).runner)
            tid = builder.add_tensor(list(b.shape), fmt, debug_name=f"{b.role}_{b.position}")
            binds.append(runner.TypedBinding(0, b.binding, tid, runner.DescriptorType.TensorArm))
            if b.role == "input":
                value = to_device(m.values[b.position], t.dtype, b.vk_format)
                uploads.append((tid, value.reshape(b.shape)))
            else:
                downloads.append((tid, t, b.vk_format))
        command.bindings = binds
        builder.add_dispatch_vgf(command)
        plans.append((uploads, downloads))
    try:
        scenario = builder.build()
    except Exception as exc:  # the SDK raises RuntimeError; any failure is the stage's
        return PIPELINE, None, _words(exc)
    try:
        for uploads, _ in plans:
            for tid, data in uploads:
                scenario.upload(tid, data)
        scenario.run()
        results = []
        for _, downloads in plans:
            results.append(
                {t.name: from_device(scenario.download(tid), t, vk) for tid, t, vk in downloads}
            )
    except Exception as exc:
        return DISPATCH, None, _words(exc)
    return DISPATCH, results, ""


def _words(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__

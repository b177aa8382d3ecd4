"""The worker's end of the compiler helper (:mod:`.compile_server`).

The helper is started at the first request made in a process, never before: the
runner forks its workers from a process that has made a backend, and each worker makes
its own helper (a new interpreter, so nothing of the compiler is ever forked).  It is
made to die with the worker (``PR_SET_PDEATHSIG``), so a worker killed for a timeout
leaves no compiler behind.  When the helper dies during a request, the answer says the
compiler crashed, with the end of what it printed, and the next request starts a new one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from multiprocessing.util import Finalize
from typing import IO, Any

from conformance.backends.command import _die_with_parent
from conformance.backends.iree.compile_server import read_message, write_message
from conformance.backends.iree.stages import LOWERING, VERIFY

# llvm-cpu for this machine's CPU (the code runs where it is compiled), from TOSA input.
# Constant evaluation is off: it JIT-compiles every constant subexpression (weights
# given as constants, zero-point arithmetic) in a nested compile, about a fifth of the
# compile time of a batch; without it, the same kernels run at load time instead.
FLAGS = (
    "--iree-input-type=tosa",
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=host",
    "--iree-opt-const-eval=false",
)
CRASH_TAIL = 4000  # characters of a crashed helper's output kept


@dataclass
class Answer:
    step: str  # "ok", VERIFY or LOWERING
    vmfb: bytes = b""
    diagnostics: list[str] = field(default_factory=list)
    crashed: bool = False

    @property
    def ok(self) -> bool:
        return self.step == "ok"

    @property
    def message(self) -> str:
        """The first error among the diagnostics (the one that names the cause)."""
        errors = [d for d in self.diagnostics if d.startswith("error")]
        first = (errors or self.diagnostics or ["the compiler gave no diagnostic"])[0]
        return first.removeprefix("error: ")

    @property
    def log(self) -> str:
        return "\n".join(self.diagnostics)


class CompilerClient:
    def __init__(self, flags: tuple[str, ...] = FLAGS) -> None:
        self.flags = flags
        self._pid: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None

    def _helper(self) -> subprocess.Popen[bytes]:
        if self._pid != os.getpid():
            # Made in another process (the runner's, before it forked this worker): that
            # helper is the other process's child; leave it alone and start ours.
            self._proc, self._stderr, self._pid = None, None, os.getpid()
        if self._proc is None or self._proc.poll() is not None:
            # Kept open as long as the helper runs: its output, read after a crash.
            self._stderr = tempfile.TemporaryFile(prefix="tosa-iree-compiler-")  # noqa: SIM115
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "conformance.backends.iree.compile_server", *self.flags],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                preexec_fn=_die_with_parent(),  # only a prctl call: safe after fork
            )
            # A runner worker ends with os._exit, past atexit: multiprocessing's exit
            # finalizers still run, and waiting there for the helper counts its CPU time
            # as the worker's (benchmarks read it).
            Finalize(self, CompilerClient.close, args=(self,), exitpriority=10)
        return self._proc

    def request(self, kind: str, text: str) -> Answer:
        proc = self._helper()
        assert proc.stdin is not None and proc.stdout is not None and self._stderr is not None
        start = self._stderr.seek(0, os.SEEK_END)
        reply: Any = None
        try:
            write_message(proc.stdin, (kind, text))
            reply = read_message(proc.stdout)
        except (BrokenPipeError, OSError):
            reply = None
        if reply is None:
            return self._crashed(proc, start, kind)
        step, vmfb, diagnostics = reply
        printed = []
        if step != "ok":
            # Some tools the compiler runs print their errors instead of emitting
            # diagnostics (the linker's "undefined symbol"): they come first.
            self._stderr.seek(start)
            text = self._stderr.read().decode("utf-8", "replace")
            printed = [f"error: {ln.strip()}" for ln in text.splitlines() if "error:" in ln]
        return Answer(step, vmfb, [*printed[:5], *diagnostics])

    def _crashed(self, proc: subprocess.Popen[bytes], start: int, kind: str) -> Answer:
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        assert self._stderr is not None
        self._stderr.seek(start)
        printed = self._stderr.read().decode("utf-8", "replace")[-CRASH_TAIL:]
        why = f"killed by signal {-code}" if code < 0 else f"exited with status {code}"
        lines = [ln for ln in printed.splitlines() if ln.strip()]
        cause = next((ln for ln in lines if "error" in ln.lower() or "assert" in ln.lower()), "")
        message = f"error: the compiler crashed ({why}){': ' + cause if cause else ''}"
        self._proc = None
        # A crash while parsing is as unlikely as it would be odd; a check or compile
        # request that crashes is counted against the lowering.
        return Answer(LOWERING, b"", [message, printed], crashed=True)

    def check(self, text: str) -> Answer:
        """Parse and verify, then run the TOSA conversions (IREE's input phase)."""
        return self.request("check", text)

    def compile(self, text: str) -> Answer:
        return self.request("compile", text)

    def close(self) -> None:
        if self._proc is not None and self._pid == os.getpid():
            if self._proc.stdin is not None:
                self._proc.stdin.close()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
        self._proc = None


__all__ = ["FLAGS", "LOWERING", "VERIFY", "Answer", "CompilerClient"]

"""The ``command:EXECUTABLE [ARG...]`` backend: an implementation that is a program.

The program is called the way Arm's ``tosa_reference_model`` is::

    EXECUTABLE [ARG...] --test_desc WORKDIR/desc.json

``command:--denormals=MODES EXECUTABLE ...`` declares the program's denormal modes
(``flush``, ``supported``, or per type ``fp16=flush,fp32=supported``);
``command:--no-sandbox EXECUTABLE ...`` runs it outside the sandbox
(conformance.backends.sandbox).  These options are the backend's own and are not
passed to the program.

``desc.json`` says what the program needs to run the graph and nothing of the answer:
the graph, input and result files (absolute paths into ``WORKDIR``, where the graph
and the inputs are written first, from the loaded vector, so zipped packs work too),
each input's and output's type and shape, the operator, mode and level.  Not the
vector's name, kind, rule or expected results: a program told "this one must fail"
could pass every error vector without reading the graph.  The program writes one
``.npy`` per ``ofm_file``, or rejects the graph by exiting non-zero or writing
``WORKDIR/error.txt``.  A block-scaled tensor (TOSA 1.1 ``bs32_*``) is two files, as
Arm's tools have it: ``input-K.npy`` its values and ``input-K_scale.npy`` its scales;
for such an output the program writes the ``ofm_file`` and the same name with
``_scale``.  docs/backends.md is the full convention; how each outcome is read is in
:meth:`CommandBackend.run`.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from conformance.backends import sandbox
from conformance.backends.base import BackendError, BackendResult
from conformance.block_tensor import (
    BlockScaled,
    TensorValue,
    is_block_scaled,
    scale_shape,
    scale_type,
    value_type,
)
from conformance.dtypes import DType
from conformance.graph import Tensor
from conformance.user_files import file_sha256
from reference.compliance.denormals import format_modes, parse_modes
from vectors.flatbuffer import format_for, serialize
from vectors.npy import array_from, read_header, save_array
from vectors.pack_errors import PackError, one_line
from vectors.pack_model import LoadedVector
from vectors.pack_source import max_file_bytes

DESC_FILE = "desc.json"
# Leading options of the backend itself (never passed to the program).
DENORMALS_OPTION = "--denormals="
NO_SANDBOX_OPTION = "--no-sandbox"
GRAPH_FILE = "graph.tosa"
ERROR_FILE = "error.txt"
UNSUPPORTED_FILE = "unsupported.txt"  # the program does not implement what the graph needs
# The runner kills a worker long before this; it only bounds a program run without it
# (the pytest plugin's --tosa-in-process, a script calling run() directly).
DEFAULT_TIMEOUT = 3600.0
_LOG_TAIL = 64 * 1024  # bytes of the log kept: enough for a report, bounded for a chatty tool
_ERROR_BYTES = 4096  # of error.txt: its first line is the message
# After the program has exited, how long output still arriving (from something it
# left running outside its process group) is read before it is ignored.
_DRAIN_SECONDS = 1.0
# Narrow float types whose raw bytes ml_dtypes' np.save writes as an opaque void dtype.
_RAW_NARROW = frozenset(
    {"bf16", "fp8e4m3", "fp8e5m2", "fp4e2m1", "fp6e2m3", "fp6e3m2", "fp8ue8m0"}
)
_NPY_HEAD = 10000 + 12  # numpy's longest header, with its magic and length


class BackendCrash(RuntimeError):
    """The program died by a signal: the runner records the vector as crashed."""


class CommandTimeout(RuntimeError):
    """The program outlived the backend's own timeout and was killed."""


class UnreadableResult(RuntimeError):
    """A result file of a valid vector exists but is not a readable ``.npy``."""


class CommandBackend:
    """Runs one vector per program invocation; see the module docstring."""

    def __init__(self, argument: str | None, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        if argument is None or not argument.strip():
            raise BackendError("the command backend needs a program: command:EXECUTABLE [ARG...]")
        try:
            argv = shlex.split(argument)
        except ValueError as exc:
            raise BackendError(f"command backend: cannot split {argument!r}: {exc}") from None
        self.denormals: dict[str, str] = {}
        self.sandboxed = True
        while argv and (argv[0].startswith(DENORMALS_OPTION) or argv[0] == NO_SANDBOX_OPTION):
            option = argv.pop(0)
            if option == NO_SANDBOX_OPTION:
                self.sandboxed = False
                continue
            try:
                modes = parse_modes(option.removeprefix(DENORMALS_OPTION))
            except ValueError as exc:
                raise BackendError(f"command backend: {DENORMALS_OPTION}: {exc}") from None
            self.denormals.update(format_modes(modes))
        if not argv:
            raise BackendError("the command backend needs a program: command:EXECUTABLE [ARG...]")
        self.argv = [_resolve(argv[0]), *argv[1:]]
        self.name = f"command:{argument}"
        self.timeout = timeout
        # For messages: "python3 runner.py", not the interpreter alone, nor full paths.
        label = " ".join(Path(a).name if os.sep in a else a for a in argv)
        self._program = label if len(label) <= 80 else label[:77] + "..."

    def unsupported(self, vector: LoadedVector) -> str | None:
        return None  # a program has no way to decline before it runs

    def identity(self) -> dict[str, object]:
        """What a certificate records of the program: the files it names (with their
        sha256, so that a later run can be matched to the same build) and how it ran."""
        files = []
        for arg in self.argv:
            path = Path(arg)
            with contextlib.suppress(OSError):
                if path.is_file() and path.stat().st_size <= 1 << 30:
                    files.append({"path": str(path), "sha256": file_sha256(path)})
        return {
            "argv": list(self.argv),
            "files": files,
            "sandbox": sandbox.status(self.sandboxed),
        }

    def run(self, vector: LoadedVector, workdir: Path) -> BackendResult:
        """Run the program on the vector and read what it did.

        * killed by a signal (or exit status 128+N, a shell's report of signal N):
          :class:`BackendCrash`, so the runner records ``crashed``;
        * ``unsupported.txt`` written (whatever the exit status): the program does not
          implement what the graph needs; the vector is skipped with its text as the reason;
        * exit status other than 0, or ``error.txt`` written: the graph is rejected,
          with error.txt's text (else the exit status) as the message;
        * exit status 0: the outputs.  A missing result file leaves that output out (the
          runner reports "no output produced"); an unreadable one raises
          :class:`UnreadableResult` for a valid vector and is left out otherwise, since
          only a valid vector's outputs are compared.
        """
        workdir = Path(workdir).resolve()
        desc_path, results = materialize(vector, workdir)
        code, log = self._execute(desc_path, workdir)
        crash = _signal_of(code, sandboxed=self.sandboxed and sandbox.unavailable() is None)
        if crash is not None:
            raise BackendCrash(f"{self._program} {crash}{_last_line(log)}")
        unsupported = workdir / UNSUPPORTED_FILE
        if os.path.lexists(unsupported):
            why = _read_message(unsupported) or "no reason given"
            return BackendResult.decline(f"{self._program} declined: {why}", log)
        error = workdir / ERROR_FILE
        if os.path.lexists(error):
            message = _read_message(error) or (
                f"{self._program} wrote an empty or unreadable {ERROR_FILE}"
            )
            return BackendResult.reject(message, log)
        if code != 0:
            message = f"{self._program} exited with status {code}{_last_line(log)}"
            return BackendResult.reject(message, log)
        main = vector.graph.main
        outputs: dict[str, TensorValue] = {}
        problems: list[str] = []
        notes: list[str] = []
        for name, path in results.items():
            if not path.exists():
                notes.append(f"[{self._program} wrote no {path.name} for output {name!r}]")
                continue
            try:
                t = main.tensors[name]
                outputs[name] = _read_tensor_result(path, t)
            except ValueError as exc:
                problems.append(f"{path.name} (output {name!r}): {exc}")
        if problems and vector.kind == "valid":
            raise UnreadableResult("; ".join(problems))
        log = "\n".join([log, *notes, *problems]) if notes or problems else log
        return BackendResult(outputs, None, log)

    def _execute(self, desc_path: Path, workdir: Path) -> tuple[int, str]:
        """Run the program to its end; (exit status, the tail of its output).

        Its stdout and stderr go to a pipe of which only the last 64 KiB are kept, so a
        program that floods its output costs time (its timeout bounds it), never disk or
        memory.
        """
        argv = [*self.argv, "--test_desc", str(desc_path)]
        with contextlib.ExitStack() as stack:
            stdin: int = subprocess.DEVNULL
            if self.sandboxed and sandbox.unavailable() is None:
                argv, stdin = stack.enter_context(sandbox.wrapped(argv, workdir))
            read_end, write_end = os.pipe()
            stack.callback(os.close, read_end)
            try:
                # Own session, so that the whole process group (the program and anything
                # it started) can be killed.
                proc = subprocess.Popen(
                    # In the caller's folder, so that relative ARGs mean what they say.
                    argv,
                    stdin=stdin,
                    stdout=write_end,
                    stderr=write_end,
                    start_new_session=True,
                    preexec_fn=_die_with_parent(),  # only a prctl call: safe after fork
                )
            finally:
                os.close(write_end)
            try:
                log = _read_until_exit(proc, read_end, time.monotonic() + self.timeout)
                if log is None:
                    raise CommandTimeout(
                        f"{self._program} still running after {self.timeout:g} s; killed"
                    )
            finally:
                # Also after a normal exit: leftovers of the program must not outlive the
                # vector (a real daemon leaves the session with setsid and is spared,
                # unless it is sandboxed: then it dies with the sandbox).
                _kill_group(proc)
        code = proc.returncode
        text = log.decode("utf-8", errors="replace")
        failure = sandbox.setup_failure(code, text)
        if failure is not None:
            raise RuntimeError(f"the sandbox for {self._program} could not start: {failure}")
        return code, text


def _read_until_exit(proc: subprocess.Popen[bytes], fd: int, deadline: float) -> bytes | None:
    """The last bytes written to ``fd`` until the program exits; None at ``deadline``."""
    tail = bytearray()
    exited_at: float | None = None
    while True:
        now = time.monotonic()
        if exited_at is None and proc.poll() is not None:
            exited_at = now
        if exited_at is not None and now - exited_at > _DRAIN_SECONDS:
            break  # something the program left behind still holds the pipe
        if exited_at is None and now >= deadline:
            return None
        wait = 0.05 if exited_at is not None else min(0.5, deadline - now)
        ready, _, _ = select.select([fd], [], [], max(0.0, wait))
        if not ready:
            continue
        chunk = os.read(fd, _LOG_TAIL)
        if not chunk:  # every writer is gone
            if proc.poll() is None:
                remaining = deadline - time.monotonic()
                try:
                    proc.wait(timeout=max(0.0, remaining))
                except subprocess.TimeoutExpired:
                    return None
            break
        tail += chunk
        if len(tail) > _LOG_TAIL:
            del tail[: len(tail) - _LOG_TAIL]
    return bytes(tail)


def materialize(vector: LoadedVector, workdir: Path) -> tuple[Path, dict[str, Path]]:
    """Write graph.tosa, the inputs and desc.json into ``workdir``.

    Returns the desc.json path and, per graph output, the result file the program is
    to write.  What desc.json holds, and why no more, is in the module docstring.
    """
    main = vector.graph.main
    graph_path = workdir / GRAPH_FILE
    graph_path.write_bytes(serialize(vector.graph, revision=format_for(vector.graph)))
    inputs: dict[str, str] = {}
    for k, name in enumerate(main.inputs):
        path = workdir / f"input-{k}.npy"
        value, dt = vector.inputs[name], main.tensors[name].dtype
        if isinstance(value, BlockScaled):  # values and scales, Arm's _scale beside them
            save_array(path, value.values, value_type(dt))
            save_array(_scale_path(path), value.scales, scale_type(dt))
        else:
            save_array(path, value, dt)
        inputs[name] = str(path)
    # Numbered, never the pack's own names: those could say which outputs are compared.
    results = {name: workdir / f"result-{k}.npy" for k, name in enumerate(main.outputs)}

    def tensor(name: str, file: str | None) -> dict[str, Any]:
        t = main.tensors[name]
        return {"name": name, "dtype": t.dtype.name, "shape": list(t.shape), "file": file}

    level = vector.desc.get("requirements", {}).get("level")
    desc: dict[str, Any] = {
        "format_version": vector.desc.get("format_version"),
        "operator": vector.operator,
        "mode": vector.mode,
        "requirements": {"level": level},
        "tosa_file": str(graph_path),
        "ifm_name": list(main.inputs),
        "ifm_file": list(inputs.values()),
        "ofm_name": list(main.outputs),
        "ofm_file": [str(p) for p in results.values()],
        "inputs": [tensor(n, inputs[n]) for n in main.inputs],
        "outputs": [tensor(n, str(results[n])) for n in main.outputs],
    }
    desc_path = workdir / DESC_FILE
    desc_path.write_text(json.dumps(desc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return desc_path, results


def _scale_path(path: Path) -> Path:
    return path.with_name(f"{path.stem}_scale{path.suffix}")


def _read_tensor_result(path: Path, t: Tensor) -> TensorValue:
    """An output's result: one file, or a block-scaled output's values and scales."""
    if not is_block_scaled(t.dtype):
        return read_result(path, t.dtype, tuple(t.shape))
    spath = _scale_path(path)
    if not spath.exists():
        raise ValueError(f"no {spath.name} beside it: a {t.dtype} output is two files")
    values = read_result(path, value_type(t.dtype), tuple(t.shape))
    s_shape = scale_shape(tuple(t.shape), t.dtype.block_size)
    scales = read_result(spath, scale_type(t.dtype), s_shape)
    try:
        return BlockScaled.of(t.dtype, values, scales)
    except ValueError as exc:
        raise ValueError(f"{path.name} and {spath.name}: {exc}") from None


def read_result(path: Path, dtype: DType, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """A result file as written; ValueError when it is not a readable ``.npy``.

    Only a regular file within the pack file size limit is read, and its header is
    checked first: for a result declaring another shape than ``shape`` (when given),
    the data is not read (a zero-strided stand-in of that shape is returned), so a
    2 GiB result for a scalar output costs nothing.  The dtype is
    left to the runner, which accepts any dtype that converts to the output's type
    exactly and reports the rest.  One help: a bf16/fp8 array (or one of TOSA 1.1's
    fp4/fp6/fp8ue8m0) saved with ml_dtypes comes back from plain numpy as raw bytes
    (``|V2``, ``|V1``), viewed here as the type.
    """
    label = path.name
    try:
        # Without blocking: a program may leave a FIFO where its result should be.
        fd = _open_own(path)
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise ValueError("not a regular file")
            head = f.read(_NPY_HEAD)
            header = read_header(head, info.st_size, label)
            if shape is not None and header.shape != tuple(shape):
                # Not read: a stand-in of the declared shape that takes no memory, so
                # the runner reports the wrong shape as it does for any backend.
                return np.broadcast_to(np.zeros((), dtype.storage), header.shape)
            if info.st_size > max_file_bytes():
                raise ValueError(f"{info.st_size} bytes, more than the file size limit")
            data = head + f.read()
    except PackError as exc:
        raise ValueError(str(exc).removeprefix(f"{label}: ")) from None
    except OSError as exc:
        raise ValueError(f"cannot read: {exc.strerror or exc}") from None
    arr = array_from(data, header)
    if (
        arr.dtype.kind == "V"
        and arr.dtype.names is None
        and dtype.name in _RAW_NARROW
        and arr.dtype.itemsize == np.dtype(dtype.storage).itemsize
    ):
        return arr.view(dtype.storage)
    return arr


def _resolve(program: str) -> str:
    """The program as an absolute path; BackendError when it cannot be run.  Symbolic
    links are kept as the user named them: a virtualenv's ``bin/python`` is a link to
    the base interpreter, and only through the link does it find the venv's packages."""
    if os.sep in program or (os.altsep and os.altsep in program):
        path = Path(program).expanduser().absolute()
        if not path.is_file():
            raise BackendError(f"command backend: no file {program}")
    else:
        found = shutil.which(program)
        if found is None:
            raise BackendError(f"command backend: {program} is not on PATH")
        path = Path(found).absolute()
    if not os.access(path, os.X_OK):
        raise BackendError(
            f"command backend: {program} is not executable "
            f"(chmod +x it, or name its interpreter: command:python3 {program})"
        )
    return str(path)


def _signal_of(code: int, *, sandboxed: bool = False) -> str | None:
    """How the program died, when it died by a signal."""
    if code < 0:
        return f"was killed by signal {-code} ({_signal_name(-code)})"
    if sandboxed and code > 128 and (code - 128) in {int(s) for s in signal.valid_signals()}:
        # The sandbox's shell reports its child's death by signal N this way.
        return f"was killed by signal {code - 128} ({_signal_name(code - 128)})"
    # A shell script that runs the program without exec reports its death this way;
    # read as a rejection, a crash would pass every must-fail vector.
    if code > 128 and (code - 128) in {int(s) for s in signal.valid_signals()}:
        n = code - 128
        return f"exited with status {code}: killed by signal {n} ({_signal_name(n)})"
    return None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _die_with_parent() -> Callable[[], None] | None:
    """On Linux, a pre-exec hook making the kernel kill the program when the process
    that started it dies: a runner worker killed for a timeout (SIGKILL, so no Python
    cleanup runs) must not leave its program running."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1
    parent = os.getpid()

    def hook() -> None:
        prctl(pr_set_pdeathsig, int(signal.SIGKILL))
        if os.getppid() != parent:  # the parent died before the prctl took effect
            os.kill(os.getpid(), signal.SIGKILL)

    return hook


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.returncode is None:
        proc.wait()


def _last_line(log: str) -> str:
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    return f": {lines[-1][:200]}" if lines else ""


def _open_own(path: Path) -> int:
    """A file the program wrote in its work folder, opened for reading.  Without
    blocking (a FIFO) and without following a final symbolic link: a result that is a
    link to the pack's expected file must not be read as the program's own."""
    return os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW)


def _read_message(path: Path) -> str:
    """error.txt's first line, from its first few KiB; "" when it is not a regular file
    of the program's (a link to /dev/zero, a FIFO, a folder) or cannot be read."""
    try:
        fd = _open_own(path)
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as f:
        try:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return ""
            data = f.read(_ERROR_BYTES)
        except OSError:
            return ""
    return one_line(data.decode("utf-8", errors="replace")).strip()

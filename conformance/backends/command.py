"""The ``command:EXECUTABLE [ARG...]`` backend: an implementation that is a program.

The program is called the way Arm's ``tosa_reference_model`` is::

    EXECUTABLE [ARG...] --test_desc WORKDIR/desc.json

``command:--denormals=MODES EXECUTABLE ...`` declares the program's denormal modes
(``flush``, ``supported``, or per type ``fp16=flush,fp32=supported``); the option is
the backend's own and is not passed to the program.

``desc.json`` is a copy of the vector's, with ``tosa_file``, ``ifm_file`` and
``ofm_file`` made absolute paths into ``WORKDIR``, where the graph and the inputs are
written first (from the loaded vector, so zipped packs work too).  The program writes
one ``.npy`` per ``ofm_file``, or rejects the graph by exiting non-zero or writing
``WORKDIR/error.txt``.  docs/backends.md is the full convention; how each outcome is
read is in :meth:`CommandBackend.run`.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shlex
import shutil
import signal
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from conformance.backends.base import BackendError, BackendResult
from conformance.dtypes import DType
from reference.compliance.denormals import format_modes, parse_modes
from vectors.flatbuffer import format_for, serialize
from vectors.npy import array_from, read_header, save_array
from vectors.pack_errors import PackError, one_line
from vectors.pack_model import LoadedVector
from vectors.pack_source import max_file_bytes

DESC_FILE = "desc.json"
# Leading option of the backend itself (never passed to the program).
DENORMALS_OPTION = "--denormals="
GRAPH_FILE = "graph.tosa"
ERROR_FILE = "error.txt"
LOG_FILE = "backend-output.log"  # the program's stdout and stderr, interleaved
# The runner kills a worker long before this; it only bounds a program run without it
# (the pytest plugin's --tosa-in-process, a script calling run() directly).
DEFAULT_TIMEOUT = 3600.0
_LOG_TAIL = 64 * 1024  # bytes of the log kept: enough for a report, bounded for a chatty tool
# Narrow float types whose raw bytes ml_dtypes' np.save writes as an opaque void dtype.
_RAW_NARROW = frozenset({"bf16", "fp8e4m3", "fp8e5m2"})
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
        while argv and argv[0].startswith(DENORMALS_OPTION):
            try:
                modes = parse_modes(argv.pop(0).removeprefix(DENORMALS_OPTION))
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

    def run(self, vector: LoadedVector, workdir: Path) -> BackendResult:
        """Run the program on the vector and read what it did.

        * killed by a signal (or exit status 128+N, a shell's report of signal N):
          :class:`BackendCrash`, so the runner records ``crashed``;
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
        crash = _signal_of(code)
        if crash is not None:
            raise BackendCrash(f"{self._program} {crash}{_last_line(log)}")
        error = workdir / ERROR_FILE
        if error.exists():
            message = _read_message(error) or f"{self._program} wrote an empty {ERROR_FILE}"
            return BackendResult.reject(message, log)
        if code != 0:
            message = f"{self._program} exited with status {code}{_last_line(log)}"
            return BackendResult.reject(message, log)
        main = vector.graph.main
        outputs: dict[str, np.ndarray] = {}
        problems: list[str] = []
        notes: list[str] = []
        for name, path in results.items():
            if not path.exists():
                notes.append(f"[{self._program} wrote no {path.name} for output {name!r}]")
                continue
            try:
                t = main.tensors[name]
                outputs[name] = read_result(path, t.dtype, tuple(t.shape))
            except ValueError as exc:
                problems.append(f"{path.name} (output {name!r}): {exc}")
        if problems and vector.kind == "valid":
            raise UnreadableResult("; ".join(problems))
        log = "\n".join([log, *notes, *problems]) if notes or problems else log
        return BackendResult(outputs, None, log)

    def _execute(self, desc_path: Path, workdir: Path) -> tuple[int, str]:
        """Run the program to its end; (exit status, the tail of its output)."""
        log_path = workdir / LOG_FILE
        with log_path.open("wb") as log:
            # Own session, so that the whole process group (the program and anything it
            # started) can be killed; the pipe-free log file cannot fill up and block it.
            proc = subprocess.Popen(
                # In the caller's folder, so that relative ARGs mean what they say.
                [*self.argv, "--test_desc", str(desc_path)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent(),  # only a prctl call: safe after fork
            )
            try:
                code = proc.wait(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                raise CommandTimeout(
                    f"{self._program} still running after {self.timeout:g} s; killed"
                ) from None
            finally:
                # Also after a normal exit: leftovers of the program must not outlive the
                # vector (a real daemon leaves the session with setsid and is spared).
                _kill_group(proc)
        return code, _tail(log_path)


def materialize(vector: LoadedVector, workdir: Path) -> tuple[Path, dict[str, Path]]:
    """Write graph.tosa, the inputs and desc.json into ``workdir``.

    Returns the desc.json path and, per graph output, the result file the program is
    to write.  The copy of desc.json keeps every field of the vector's, with the file
    entries made absolute; ``expected[].file`` and ``bound_file`` become null, because
    the expected results are not given to the program under test.
    """
    main = vector.graph.main
    graph_path = workdir / GRAPH_FILE
    graph_path.write_bytes(serialize(vector.graph, revision=format_for(vector.graph)))
    inputs: dict[str, str] = {}
    for k, name in enumerate(main.inputs):
        path = workdir / f"input-{k}.npy"
        save_array(path, vector.inputs[name], main.tensors[name].dtype)
        inputs[name] = str(path)
    results = {
        name: workdir / vector.result_files.get(name, f"result-{k}.npy")
        for k, name in enumerate(main.outputs)
    }
    desc = dict(vector.desc)
    desc.update(
        tosa_file=str(graph_path),
        ifm_name=list(main.inputs),
        ifm_file=list(inputs.values()),
        ofm_name=list(main.outputs),
        ofm_file=[str(p) for p in results.values()],
    )
    desc.setdefault("expected_failure", vector.kind == "error")
    if "inputs" in desc:
        desc["inputs"] = [{**i, "file": inputs.get(i["name"])} for i in desc["inputs"]]
    if "expected" in desc:
        desc["expected"] = [{**e, "file": None, "bound_file": None} for e in desc["expected"]]
    desc_path = workdir / DESC_FILE
    desc_path.write_text(json.dumps(desc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return desc_path, results


def read_result(path: Path, dtype: DType, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """A result file as written; ValueError when it is not a readable ``.npy``.

    Only a regular file within the pack file size limit is read, and its header is
    checked first: for a result declaring another shape than ``shape`` (when given),
    the data is not read (a zero-strided stand-in of that shape is returned), so a
    2 GiB result for a scalar output costs nothing.  The dtype is
    left to the runner, which accepts any dtype that converts to the output's type
    exactly and reports the rest.  One help: a bf16/fp8 array saved with ml_dtypes
    comes back from plain numpy as raw bytes (``|V2``), viewed here as the type.
    """
    label = path.name
    try:
        # Without blocking: a program may leave a FIFO where its result should be.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
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


def _signal_of(code: int) -> str | None:
    """How the program died, when it died by a signal."""
    if code < 0:
        return f"was killed by signal {-code} ({_signal_name(-code)})"
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


def _tail(path: Path) -> str:
    with path.open("rb") as f:
        f.seek(0, os.SEEK_END)
        f.seek(max(0, f.tell() - _LOG_TAIL))
        return f.read().decode("utf-8", errors="replace")


def _last_line(log: str) -> str:
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    return f": {lines[-1][:200]}" if lines else ""


def _read_message(path: Path) -> str:
    try:
        return one_line(path.read_text(encoding="utf-8", errors="replace")).strip()
    except OSError:
        return ""

"""The IREE compiler, in process, in a helper process of its own.

``python -m conformance.backends.iree.compile_server FLAG...`` reads requests from
stdin and answers on stdout (:mod:`.compiler` is the other end).  It holds one
``iree.compiler`` session (the compiler's C embedding API: no ``iree-compile`` process
per module), made at the first request.  The helper exists so that a compiler crash
(a segfault or an abort in a conversion) ends this process only: the worker reports
the graph as rejected by the lowering, and starts another helper.

A request is ``(kind, mlir_text)``:

* ``check``: parse and verify the module, then lower it to IREE's ``input`` phase (the
  TOSA conversions); the answer names the step that failed;
* ``compile``: the whole pipeline to a VM flatbuffer for llvm-cpu.

An answer is ``(step, payload, diagnostics)``: step ``"ok"`` with the flatbuffer (or
empty bytes), else ``"verify"`` or ``"lowering"`` with the compiler's diagnostics.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import struct
import sys
from typing import IO, Any

_LENGTH = struct.Struct("<Q")
SEVERITY = {0: "note", 1: "warning", 2: "error", 3: "remark"}


def write_message(stream: IO[bytes], obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_LENGTH.pack(len(data)) + data)
    stream.flush()


def read_message(stream: IO[bytes]) -> Any:
    """The next message, or None at the end of the stream (the other side is gone)."""
    head = stream.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        return None
    (size,) = _LENGTH.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        return None
    return pickle.loads(data)


_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p)


class Compiler:
    def __init__(self, flags: list[str]) -> None:
        from iree.compiler.api import Output, Session, Source, ctypes_dl

        self._output, self._source = Output, Source
        lib = ctypes_dl._dylib  # the embedding API calls the Python wrapper leaves out
        lib.ireeCompilerInvocationSetCompileToPhase.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        lib.ireeCompilerInvocationSetCompileToPhase.restype = None
        lib.ireeCompilerInvocationEnableCallbackDiagnostics.argtypes = [
            ctypes.c_void_p,
            ctypes.c_int,
            _CALLBACK,
            ctypes.c_void_p,
        ]
        lib.ireeCompilerInvocationEnableCallbackDiagnostics.restype = None
        self._lib = lib
        # One thread per compile: the runner runs a compiler per worker, by default one
        # worker per core, and MLIR's thread pool on top of that costs ~10 % more CPU for the same
        # module (measured on batches of 16: 2.5 s against 2.8 s) and gains no time.
        # It is a global option of the process (a session does not take it); ctypes_dl
        # declared the call's signature.
        args = [b"tosa-conformance", b"--mlir-disable-threading"]
        argv = (ctypes.c_char_p * len(args))(*args)
        lib.ireeCompilerSetupGlobalCL(len(args), argv, b"tosa-conformance", False)
        self._diagnostics: list[str] = []
        self._callback = _CALLBACK(self._collect)  # kept alive as long as the session
        self.session = Session()
        self.session.set_flags(*flags)

    def _collect(self, severity: int, message: bytes, size: int, _user: Any) -> None:
        text = ctypes.string_at(message, size).decode("utf-8", "replace")
        self._diagnostics.append(f"{SEVERITY.get(severity, 'error')}: {text}")

    def handle(self, kind: str, text: str) -> tuple[str, bytes, list[str]]:
        self._diagnostics = []
        inv = self.session.invocation()
        try:
            self._lib.ireeCompilerInvocationEnableCallbackDiagnostics(
                inv._inv_p, 0, self._callback, None
            )
            source = self._source.wrap_buffer(self.session, text.encode() + b"\0")
            if not inv.parse_source(source):
                return "verify", b"", self._diagnostics
            if kind == "check":
                self._lib.ireeCompilerInvocationSetCompileToPhase(inv._inv_p, b"input")
            if not inv.execute():
                return "lowering", b"", self._diagnostics
            if kind == "check":
                return "ok", b"", self._diagnostics
            out = self._output.open_membuffer()
            try:
                inv.output_vm_bytecode(out)
                return "ok", bytes(out.map_memory()), self._diagnostics
            except ValueError as exc:
                return "lowering", b"", [*self._diagnostics, f"error: {exc}"]
            finally:
                out.close()
        finally:
            inv.close()


def main(flags: list[str]) -> int:
    requests = sys.stdin.buffer
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever the compiler prints must not corrupt the answers
    compiler: Compiler | None = None
    while True:
        request = read_message(requests)
        if request is None:
            return 0
        kind, text = request
        compiler = compiler or Compiler(flags)
        write_message(answers, compiler.handle(kind, text))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

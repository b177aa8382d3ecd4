"""IREE's runtime, made in the process that uses it.

A runtime device (``local-task``: a task executor with worker threads) made before a
fork is useless in the child, whose threads were not copied, and calls into it hang.
The runner forks its workers from a process that has made the backend, so the device is
made at the first call in each process, never in ``__init__``, and made again when the
process is not the one that made it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

DRIVER = "local-task"


class Runtime:
    def __init__(self, driver: str = DRIVER) -> None:
        self.driver = driver
        self._pid: int | None = None
        self._config: Any = None

    def _ready(self) -> Any:
        if self._pid != os.getpid():
            import iree.runtime as rt

            self._config = rt.Config(self.driver)
            self._pid = os.getpid()
        return self._config

    def load(self, vmfb: bytes) -> Any:
        """The compiled module's functions (``loaded[name](*args)``); a context per module,
        so that modules of several batches never share a name."""
        import iree.runtime as rt

        config = self._ready()
        context = rt.SystemContext(config=config)
        context.add_vm_module(rt.VmModule.copy_buffer(context.instance, vmfb))
        return context.modules.module

    def call(self, loaded: Any, entry: str, args: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Call ``entry``; its results as host arrays, in order."""
        raw = loaded[entry](*(np.require(a, requirements="C") for a in args))
        if raw is None:
            return []
        results = list(raw) if isinstance(raw, list | tuple) else [raw]
        return [np.asarray(r.to_host() if hasattr(r, "to_host") else r) for r in results]

"""The worker-side helper: ``python -m conformance.executors.helper``.

A Dask task of :class:`conformance.executors.dask_pool.DaskPool` hands its vectors to
this process, which runs them in an ordinary :class:`conformance.executors.local.IsolatedPool` of
one worker: the backend runs in a child that may crash or hang, and only its vector
fails.  The protocol is JSON lines: on stdin a configuration line
(``{"target", "args", "timeout"}``), then one line per task (``{"tasks", "entries"}``);
on the protocol channel, a ``{"result": ...}`` line per vector, then ``{"done": true}``.
:func:`map_main` runs generate's jobs instead.  The pickles there
pass only between a Dask worker and the subprocess it started, as multiprocessing's do.
"""

from __future__ import annotations

import json
import os
import sys
from types import SimpleNamespace
from typing import Any, TextIO


def _channel() -> TextIO:
    """The protocol channel: this process's stdout, kept apart; the backends and
    anything they print write to stderr instead, so they cannot corrupt it."""
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return channel


def _message(task: list[Any]) -> tuple[str, Any]:
    from conformance.executors.local import Batch

    name, message = task
    if isinstance(message, dict):
        names = tuple(message["batch"])
        return names[0], Batch(names, names)
    return name, message


MAP_COMMAND = "from conformance.executors.helper import map_main; map_main()"


def map_main() -> int:
    """The ``--map`` helper (started as ``python -c MAP_COMMAND``): pickled
    ``(target, items, common)`` requests in, pickled ``[target(item, common) ...]``
    out.  Generate's jobs run here, where no Dask thread shares the process; what a
    seed draws does not depend on the modules loaded (``strategies.draw.own_constants``)."""
    import pickle

    from conformance.executors.dask_pool import _resolve

    channel = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    while True:
        try:
            target, items, common = pickle.load(sys.stdin.buffer)
        except EOFError:
            return 0
        fn = _resolve(target)
        pickle.dump([fn(item, common) for item in items], channel)
        channel.flush()


def main() -> int:
    from conformance.executors.dask_pool import _resolve
    from conformance.executors.local import IsolatedPool

    channel = _channel()
    config = json.loads(sys.stdin.readline())
    target = _resolve(config["target"])
    pool = IsolatedPool(target, tuple(config["args"]), 1, float(config["timeout"]))

    def emit(doc: dict[str, Any]) -> None:
        channel.write(json.dumps(doc) + "\n")
        channel.flush()

    try:
        for line in sys.stdin:
            request = json.loads(line)
            entries = {
                name: SimpleNamespace(operator=op, mode=mode, kind=kind)
                for name, (op, mode, kind) in request["entries"].items()
            }
            tasks = [_message(t) for t in request["tasks"]]
            pool.run(tasks, entries, lambda r: emit({"result": r.to_json()}))
            emit({"done": True})
    except BrokenPipeError:  # the Dask worker went away: nobody wants the results
        return 0
    finally:
        pool.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

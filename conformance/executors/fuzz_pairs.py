"""Fuzz searches as Dask tasks: ``fuzz --executor``.

Each (operator, mode) pair of a round is one task.  A worker runs the pair's search in a
subprocess (``python -m conformance.executors.fuzz_pairs``; Dask workers are daemons and
the search needs a pool of its own), with the findings folder on shared storage: its
Hypothesis example databases (``FINDINGS/.hypothesis/PAIR``) are then one database for
every worker and for later local runs, so a failure found anywhere is replayed first
wherever that pair is searched next.  The finding's vector is written there too, and
the client writes the findings pack's index as a local run does.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conformance.executors import Executor, ExecutorError, identity
from conformance.executors.dask_pool import (
    _check,
    _distributed,
    _where,
    completed,
    connect,
    release,
    verify,
)

if TYPE_CHECKING:
    from conformance.fuzz import Finding, Fuzzer
    from conformance.spec import TypeSupport

_SEARCHED: list[tuple[str, str]] = []  # the pairs this worker process searched


def searched_here() -> list[tuple[str, str]]:
    """The (operator, mode) pairs searched on this worker (``client.run`` asks it)."""
    return list(_SEARCHED)


def search_round(
    fuzzer: Fuzzer,
    executor: Executor,
    order: list[TypeSupport],
    max_examples: int,
    end: float,
    on_pair: Callable[[TypeSupport], None] | None = None,
) -> Iterator[Finding]:
    """One round of :meth:`conformance.fuzz.Fuzzer.run`: every pair of ``order`` searched
    on the workers until ``end`` (this machine's monotonic clock); the findings, as they
    come, recorded in ``fuzzer`` as a local search records them."""
    from conformance.fuzz import Finding
    from vectors.pack_model import PackEntry

    _distributed()  # a clear error first, when Dask is missing
    if fuzzer.spec.sha256 != identity()["tosa.xml sha256"]:
        raise ExecutorError("fuzz --executor: the workers fuzz the vendored tosa.xml, not --spec")
    if getattr(fuzzer, "capabilities", None) is not None:  # the workers' searches lack it
        raise ExecutorError("fuzz --executor: --capabilities is not supported on Dask yet")
    client = connect(executor, min(len(order), os.cpu_count() or 1))
    fuzzer.out.mkdir(parents=True, exist_ok=True)
    out = fuzzer.out.resolve()
    check = _check([out])
    # The workers' clocks: a deadline in wall-clock seconds (docs/scale-out.md).
    deadline = None if math.isinf(end) else time.time() + (end - time.monotonic())
    base = {
        "claim": fuzzer.claim.to_json(),
        "backend": fuzzer.backend,
        "out": str(out),
        "seed": fuzzer.seed,
        "timeout": fuzzer.timeout,
        "invalid": fuzzer.invalid,
        "max_examples": max_examples,
        "deadline": deadline,
    }
    token = uuid.uuid4().hex[:12]
    futures = []
    for i, mode in enumerate(order):
        if on_pair is not None:
            on_pair(mode)
        request = {**base, "operator": mode.operator, "mode": mode.mode}
        futures.append(
            client.submit(
                search_pair,
                check,
                request,
                key=f"tosa-fuzz-{token}-{i}",
                pure=False,
                resources=executor.task_resources,
            )
        )
    try:
        for future in completed(client, futures):
            try:
                result = future.result()
            except ExecutorError:
                raise
            except Exception as exc:
                raise ExecutorError(
                    f"--executor {executor.describe()}: a search failed on a worker: "
                    f"{type(exc).__name__}: {exc}"
                ) from None
            fuzzer.examples += result["examples"]
            if result["finding"] is None:
                continue
            entry = PackEntry.from_json(result["entry"])
            fuzzer.entries = [e for e in fuzzer.entries if e.name != entry.name] + [entry]
            finding = Finding(**result["finding"])
            fuzzer.findings.append(finding)
            yield finding
    finally:
        pending = [f for f in futures if not f.done()]
        if pending:
            with contextlib.suppress(Exception):
                client.cancel(pending)
        release(client)


def search_pair(check: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    """A Dask task: one pair's search, in a subprocess of this worker."""
    verify(check)
    proc = subprocess.run(
        [sys.executable, "-m", "conformance.executors.fuzz_pairs"],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        check=False,
    )
    pair = f"{request['operator']} [{request['mode']}]"
    if proc.returncode != 0 or not proc.stdout.strip():
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise ExecutorError(f"{_where()}: the search of {pair} failed: {last}")
    _SEARCHED.append((request["operator"], request["mode"]))
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    """The subprocess: read the request on stdin, search, print the result line."""
    from conformance.claims import make_claim
    from conformance.executors.helper import _channel
    from conformance.fuzz import Fuzzer
    from conformance.spec import load_spec

    channel = _channel()
    request = json.loads(sys.stdin.read())
    spec = load_spec()
    c = request["claim"]
    claim = make_claim(spec, c["profiles"], c["extensions"], c["level"])
    fuzzer = Fuzzer(
        spec,
        claim,
        request["backend"],
        Path(request["out"]),
        ops=re.escape(request["operator"]),
        seed_value=request["seed"],
        timeout=request["timeout"],
        invalid=request["invalid"],
    )
    try:
        key = (request["operator"], request["mode"])
        mode = next(m for m in fuzzer.pairs if m.key == key)
        deadline = request["deadline"]
        end = math.inf if deadline is None else time.monotonic() + deadline - time.time()
        finding = fuzzer.search(mode, request["max_examples"], end)
    finally:
        fuzzer.close()
    doc = {
        "examples": fuzzer.examples,
        "finding": asdict(finding) if finding is not None else None,
        "entry": fuzzer.entries[-1].to_json() if finding is not None else None,
    }
    channel.write(json.dumps(doc) + "\n")
    channel.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())

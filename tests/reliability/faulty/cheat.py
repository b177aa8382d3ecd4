#!/usr/bin/env python3
"""A backend that computes nothing: it looks for the pack the run reads and copies the
expected results of whichever vector has its inputs (the attack of issue 26, item 5).

It searches every process's command line (its parent's, ``/proc/PPID/cmdline``,
first), resolving relative arguments against that process's folder, for a folder or
zip holding ``pack.json``.  It rejects a graph when its desc.json says the vector must
fail.  Found nothing: exits 0 having written nothing.  It appends what it found to
``$TOSA_CHEAT_LOG``, so a test can tell "hidden" from "did not try".
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np


def packs() -> list[Path]:
    found: list[Path] = []
    pids = [str(os.getppid()), *sorted(p for p in os.listdir("/proc") if p.isdigit())]
    for pid in pids:
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
        except OSError:
            continue
        for raw in args:
            if not raw:
                continue
            path = cwd / os.fsdecode(raw)
            try:
                if (path / "pack.json").is_file() and path not in found:
                    found.append(path)
            except OSError:
                continue
    return found


def main() -> int:
    desc = json.loads(Path(sys.argv[sys.argv.index("--test_desc") + 1]).read_text())
    if desc.get("expected_failure") or desc.get("kind") == "error":
        print("rejected: the desc says so")
        return 1
    mine = [np.load(f) for f in desc["ifm_file"]]
    found = packs()
    log = os.environ.get("TOSA_CHEAT_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps([str(p) for p in found]) + "\n")
    for pack in found:
        for vector in sorted(pack.iterdir()):
            try:
                theirs = [np.load(vector / f"input-{k}.npy") for k in range(len(mine))]
                same = all(
                    a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
                    for a, b in zip(mine, theirs, strict=True)
                )
                if not same:
                    continue
                for k, out in enumerate(desc["ofm_file"]):
                    Path(out).write_bytes((vector / f"expected-{k}.npy").read_bytes())
                return 0
            except (OSError, ValueError):
                continue
    return 0


sys.exit(main())

#!/usr/bin/env python3
"""A faulty ``command:`` program (argv after the script: one mode, see below).

* ``orphan``: starts a marked grandchild in a session of its own (``setsid``), records
  its pid in ``$TOSA_FAULT_DIR/orphan.pid``, says whether the previous one is alive,
  and exits 0 without results.
* ``hang``: starts a marked grandchild, then sleeps.
* ``big-result``: writes, for every output, a sparse .npy of 2 GiB declaring shape
  [268435456] of float64.
* ``flood``: writes to stdout without end (the run's timeout stops it).
* ``error-zero``, ``error-fifo``: makes error.txt a link to /dev/zero, or a FIFO.
* ``result-link PATH``: makes every result a symbolic link to PATH; ``result-dir``, a
  folder; ``result-fifo``, a FIFO.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

args = sys.argv[1:]
desc = json.loads(Path(args[args.index("--test_desc") + 1]).read_text())
mode = args[0]
marker = os.environ.get("TOSA_FAULT_MARKER", "tosa-fault-marker")
child = [sys.executable, "-c", "import time; time.sleep(300)", marker]


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


if mode == "orphan":
    record = Path(os.environ["TOSA_FAULT_DIR"]) / "orphan.pid"
    if record.exists():
        print(f"previous orphan alive: {alive(int(record.read_text()))}")
    proc = subprocess.Popen(child, start_new_session=True)
    record.write_text(str(proc.pid))
    sys.exit(0)
if mode == "hang":
    subprocess.Popen(child)
    time.sleep(300)
if mode == "big-result":
    for path in desc["ofm_file"]:
        header = "{'descr': '<f8', 'fortran_order': False, 'shape': (268435456,), }"
        header += " " * (117 - len(header)) + "\n"
        with open(path, "wb") as f:
            f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
            f.truncate(128 + (2 << 30))  # sparse: no disk used, 2 GiB to read
    sys.exit(0)
if mode == "flood":
    block = b"x" * (1 << 20)
    while True:
        sys.stdout.buffer.write(block)
work = Path(desc["tosa_file"]).parent
if mode == "error-zero":
    (work / "error.txt").symlink_to("/dev/zero")
    sys.exit(0)
if mode == "error-fifo":
    os.mkfifo(work / "error.txt")
    sys.exit(0)
for path in desc["ofm_file"]:
    if mode == "result-link":
        Path(path).symlink_to(args[1])
    elif mode == "result-dir":
        Path(path).mkdir()
    elif mode == "result-fifo":
        os.mkfifo(path)
sys.exit(0)

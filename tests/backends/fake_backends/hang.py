#!/usr/bin/env python3
"""Hangs on every SUB vector (after appending its pid to $FAKE_BACKEND_PIDS, so a test
can check it was killed); correct on the others."""

import os
import sys
import time

from _fake import read_desc, run_reference

desc, _ = read_desc(sys.argv[1:])
if desc["operator"] == "SUB":
    pids = os.environ.get("FAKE_BACKEND_PIDS")
    if pids:
        with open(pids, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")
    while True:
        time.sleep(60)
run_reference(desc)

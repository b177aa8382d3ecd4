#!/usr/bin/env python3
"""Dies of SIGSEGV on every SUB vector; correct on the others."""

import os
import signal
import sys

from _fake import read_desc, run_reference

desc, _ = read_desc(sys.argv[1:])
if desc["operator"] == "SUB":
    os.kill(os.getpid(), signal.SIGSEGV)
run_reference(desc)

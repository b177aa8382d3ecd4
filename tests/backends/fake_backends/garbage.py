#!/usr/bin/env python3
"""Writes bytes that are no .npy file to every result file, and exits 0."""

import sys

from _fake import read_desc

desc, _ = read_desc(sys.argv[1:])
for path in desc["ofm_file"]:
    with open(path, "wb") as f:
        f.write(b"\x00\xffnot a numpy file\n" * 3)

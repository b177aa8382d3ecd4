#!/usr/bin/env python3
"""Rejects every graph: a message on stderr, exit status 1, no error.txt."""

import sys

print("fake backend: this graph is not supported", file=sys.stderr)
sys.exit(1)

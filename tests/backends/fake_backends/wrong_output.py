#!/usr/bin/env python3
"""Writes every output with a wrong shape (``--shape``: [7, 7]) or a wrong dtype
(``--dtype``: int32 for floating-point outputs, float32 for the others)."""

import sys

import numpy as np
from _fake import read_desc

from vectors.flatbuffer import read_graph

desc, args = read_desc(sys.argv[1:])
main = read_graph(desc["tosa_file"]).main
for name, path in zip(desc["ofm_name"], desc["ofm_file"], strict=True):
    t = main.tensors[name]
    if "--shape" in args:
        out = np.zeros((7, 7), np.dtype(t.dtype.storage))
    elif t.dtype.is_float:
        out = np.zeros(t.shape, np.int32)
    else:
        out = np.full(t.shape, 0.5, np.float32)
    np.save(path, out)

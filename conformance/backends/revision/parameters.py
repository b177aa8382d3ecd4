"""A graph's parameters laid out as another revision declares them.

TOSA 1.0 passes zero points, ``pad_const`` and MUL's ``shift`` as constant ``[1]``
input tensors where the 2024 draft had attributes (and a rank-0 ``shift``). A backend
written against the draft's layout reads a 1.0 graph after
:func:`parameters_as_attributes`; which arguments move is read from the two revisions'
declarations, not listed here.
"""

from __future__ import annotations

import copy

import numpy as np

from conformance.builder import map_operands
from conformance.graph import Graph
from conformance.spec import Spec

__all__ = ["parameters_as_attributes"]


def parameters_as_attributes(graph: Graph, own: Spec, target: Spec) -> Graph:
    """A copy of ``graph`` (built against ``own``) in which every constant input that
    ``target`` declares as an attribute is that attribute, holding its single value, and
    every ``[1]`` constant that ``target`` declares rank 0 has rank 0."""
    g = copy.deepcopy(graph)
    for block in g.blocks():
        for op in block.operators:
            mine, theirs = own.operators.get(op.op), target.operators.get(op.op)
            if mine is None or theirs is None:
                continue
            try:
                operands = map_operands(mine, op)
            except Exception:  # a must-fail graph's odd operands: left as they are
                continue
            attributes = {a.name for a in theirs.attributes}
            inputs = {a.name: a for a in theirs.inputs}
            moved: list[str] = []
            for name, tensors in operands.inputs.items():
                if len(tensors) != 1 or tensors[0] not in block.tensors:
                    continue
                t = block.tensors[tensors[0]]
                if t.data is None or t.data.size != 1:
                    continue
                if name in attributes:
                    op.attributes[name] = t.data.reshape(-1)[0].item()
                    moved.append(tensors[0])
                elif name in inputs and inputs[name].shape.kind == "scalar" and t.shape == (1,):
                    t.shape, t.data = (), np.asarray(t.data).reshape(())
            for tensor in moved:
                op.inputs.remove(tensor)
    return g

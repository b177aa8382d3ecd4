"""A TOSA 1.0 pack's graph for Arm's model, as it is: no translation.

A vector of the 1.0 revision already follows the specification tosa-tools implements,
so its graph is written in 1.0's own flatbuffer format (:mod:`vectors.flatbuffer`) and
handed to the model unchanged. The one change is the binding's: graph inputs of a type
it cannot pass (INT4, INT48), or every input for the executable, are embedded as
constants holding the vector's values.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping

import numpy as np

from conformance.backends.arm.emitter import Untranslatable
from conformance.backends.arm.revisions import SKIPPED_OPERATORS
from conformance.backends.arm.translate import ArmGraph
from conformance.dtypes import DType
from conformance.graph import Graph
from vectors.flatbuffer import FlatbufferError, format_for, serialize

__all__ = ["is_native", "native", "why_not_run"]


def why_not_run(graph: Graph) -> str | None:
    """What the model cannot run in any revision (its operator factory has no VARIABLE):
    the skip reason, else None."""
    for block in graph.blocks():
        for op in block.operators:
            if op.op in SKIPPED_OPERATORS:
                return SKIPPED_OPERATORS[op.op]
    return None


def is_native(graph: Graph) -> bool:
    """Whether the graph follows TOSA 1.0, so that Arm's model reads it as it is."""
    return format_for(graph) == "1.0"


def native(
    graph: Graph,
    inputs: Mapping[str, np.ndarray],
    *,
    embed: Callable[[DType], bool] = lambda dt: False,
) -> ArmGraph:
    """The model's graph and inputs for a 1.0 vector; Untranslatable with the reason
    when the graph cannot be written (a value the format cannot hold)."""
    g = copy.deepcopy(graph)
    main = g.main
    kept = []
    for name in list(main.inputs):
        if name not in inputs:
            raise Untranslatable(f"the vector gives no value for graph input {name!r}")
        t = main.tensors[name]
        if embed(t.dtype):
            t.data = np.asarray(inputs[name])
            main.inputs.remove(name)
        else:
            kept.append(t)
    try:
        data = serialize(g, revision="1.0")
    except FlatbufferError as exc:
        raise Untranslatable(str(exc)) from None
    outputs = [main.tensors[n] for n in main.outputs]
    return ArmGraph(data, kept, [np.asarray(inputs[t.name]) for t in kept], outputs)

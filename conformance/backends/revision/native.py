"""A TOSA 1.0 or 1.1 pack's graph for Arm's model, as it is: no translation.

A vector of the 1.0 revision, or of the 1.1 draft, already follows a specification
tosa-tools 2026.8 implements (its serializer's schema is theirs), so its graph is written
in its revision's own flatbuffer format (:mod:`vectors.flatbuffer`, ``format_for``) and
handed to the model unchanged. The one change is the binding's: graph inputs of a type
it cannot pass (INT4, INT48), or every input for the executable, are embedded as
constants holding the vector's values.  What the 2026.8 model does not implement of the
1.1 draft is skipped, by operator and by type (:data:`~.revisions.SKIPPED_1_1`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping

import numpy as np

from conformance.backends.revision.emitter import Untranslatable
from conformance.backends.revision.revisions import SKIPPED_OPERATORS, skipped_1_1
from conformance.backends.revision.translate import ArmGraph
from conformance.block_tensor import BlockScaled, TensorValue, arrays
from conformance.dtypes import DType
from conformance.graph import Graph
from vectors.flatbuffer import FlatbufferError, format_for, serialize

__all__ = ["NATIVE_FORMATS", "is_native", "native", "why_not_run"]

# The flatbuffer formats tosa-tools 2026.8 reads as they are: TOSA 1.0's and the 1.1
# draft's (one schema, theirs).
NATIVE_FORMATS = ("1.0", "1.1-draft")


def why_not_run(graph: Graph) -> str | None:
    """What the model cannot run: an operator of no revision (its operator factory has
    no VARIABLE), or, in a 1.1 graph, an operator or type of the 1.1 draft that the 2026.8
    model does not implement. The skip reason, else None."""
    for block in graph.blocks():
        for op in block.operators:
            if op.op in SKIPPED_OPERATORS:
                return SKIPPED_OPERATORS[op.op]
    if format_for(graph) == "1.1-draft":
        return skipped_1_1(graph)
    return None


def is_native(graph: Graph) -> bool:
    """Whether the graph follows TOSA 1.0 or the 1.1 draft, so that Arm's model reads
    it as it is."""
    return format_for(graph) in NATIVE_FORMATS


def native(
    graph: Graph,
    inputs: Mapping[str, TensorValue],
    *,
    embed: Callable[[DType], bool] = lambda dt: False,
) -> ArmGraph:
    """The model's graph and inputs for a 1.0 or 1.1 vector; Untranslatable with the
    reason when the graph cannot be written (a value the format cannot hold)."""
    g = copy.deepcopy(graph)
    main = g.main
    kept = []
    for name in list(main.inputs):
        if name not in inputs:
            raise Untranslatable(f"the vector gives no value for graph input {name!r}")
        t = main.tensors[name]
        value = inputs[name]
        if embed(t.dtype) or isinstance(value, BlockScaled):
            t.set_constant(value if isinstance(value, BlockScaled) else np.asarray(value))
            main.inputs.remove(name)
        else:
            kept.append(t)
    try:
        data = serialize(g, revision=format_for(g))
    except FlatbufferError as exc:
        raise Untranslatable(str(exc)) from None
    outputs = [main.tensors[n] for n in main.outputs]
    values = arrays({t.name: inputs[t.name] for t in kept}, "graph input")
    return ArmGraph(data, kept, [np.asarray(values[t.name]) for t in kept], outputs)

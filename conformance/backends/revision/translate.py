"""Our graph IR -> a TOSA flatbuffer in the format tosa-tools 2026.8 reads.

The graph is rebuilt with Arm's own serializer (``tosa_serializer``, the compiled one
Arm's test generator uses), by enumeration *names*, so the renumbered Op / DType /
Attribute enumerations of the later schema never have to be known here.  Operator
translation is in :mod:`conformance.backends.revision.operators`.

Layout: the entry block becomes region ``main`` / block ``main``; every other block
(COND_IF / WHILE_LOOP bodies) becomes a region of its own holding one block of the same
name, which is how the later revision names control-flow graphs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import import_module
from types import ModuleType
from typing import Any

import numpy as np

from conformance.backends.revision.emitter import BlockEmitter, Untranslatable
from conformance.backends.revision.operators import TRANSLATORS, convert_values, tensor_overrides
from conformance.backends.revision.revisions import SKIPPED_OPERATORS
from conformance.dtypes import DType
from conformance.graph import Block, Graph, Tensor

__all__ = ["ArmGraph", "Untranslatable", "load_serializer", "translate", "why_untranslatable"]

MAIN = "main"


@dataclass
class ArmGraph:
    flatbuffer: bytes
    inputs: list[Tensor]  # the Arm graph's inputs, in order, as it declares them
    input_values: list[np.ndarray]  # their values, in the storage of the declared type
    outputs: list[Tensor]  # our output tensors (names, types, shapes), in order


def load_serializer() -> ModuleType:
    """Arm's compiled serializer module (ImportError when tosa-tools is missing)."""
    return import_module("tosa_serializer")


def why_untranslatable(graph: Graph) -> str | None:
    """The static reason no inputs could make this graph runnable, else None."""
    for block in graph.blocks():
        for op in block.operators:
            if op.op in SKIPPED_OPERATORS:
                return SKIPPED_OPERATORS[op.op]
            if op.op not in TRANSLATORS:
                return f"no translation of {op.op} to the tosa-tools revision"
    return None


def translate(
    graph: Graph,
    inputs: Mapping[str, np.ndarray],
    *,
    embed: Callable[[DType], bool] = lambda dt: False,
    ts: Any = None,
) -> ArmGraph:
    """Rebuild ``graph`` for tosa-tools.  Entry-block inputs whose type ``embed`` selects
    are written as constants holding their values from ``inputs`` (for types the
    in-process model cannot take).  Raises :class:`Untranslatable` with the reason."""
    reason = why_untranslatable(graph)
    if reason:
        raise Untranslatable(reason)
    ts = ts or load_serializer()
    blocks = list(graph.blocks())
    main = graph.main
    regions = _region_names(blocks, main)
    ser = ts.TosaSerializer("")
    result = ArmGraph(b"", [], [], [main.tensors[n] for n in main.outputs])
    for block in blocks:
        if block is not main:
            ser.startRegion(regions[block.name], None)
            ser.addBasicBlock(regions[block.name])
        arm_block = ser.currRegion.currBasicBlock
        em = BlockEmitter(ts, arm_block, block.tensors, regions)
        _write_block(em, block, inputs if block is main else None, embed, result)
    result.flatbuffer = bytes(ser.serialize())
    return result


def _region_names(blocks: list[Block], main: Block) -> dict[str, str]:
    names = {main.name: MAIN}
    taken = {MAIN}
    for b in blocks:
        if b is main:
            continue
        name, k = b.name, 0
        while name in taken:
            k += 1
            name = f"{b.name}_{k}"
        names[b.name] = name
        taken.add(name)
    return names


def _write_block(
    em: BlockEmitter,
    block: Block,
    values: Mapping[str, np.ndarray] | None,
    embed: Callable[[DType], bool],
    result: ArmGraph,
) -> None:
    ours = block.tensors
    theirs = {**ours, **tensor_overrides(block)}
    em.tensors.update(theirs)
    for name in block.inputs:
        t = theirs[name]
        if values is None:  # a nested block: its inputs come from the calling operator
            em.declare(t)
            em.block.addInput(name)
            continue
        if name not in values:
            raise Untranslatable(f"the vector gives no value for graph input {name!r}")
        value = convert_values(values[name], ours[name], t)
        if embed(t.dtype):
            em.constant(t, value)
        else:
            em.declare(t)
            em.block.addInput(name)
            result.inputs.append(t)
            result.input_values.append(value)
    produced = {o for op in block.operators for o in op.outputs}
    for name, t in ours.items():
        if t.data is not None and name not in produced and name not in block.inputs:
            em.constant(theirs[name], convert_values(t.data, t, theirs[name]))
    for op in block.operators:
        TRANSLATORS[op.op](em, op)
    for t in theirs.values():
        em.declare(t)
    for name in block.outputs:
        em.block.addOutput(name)

"""A vector's graph as a flatbuffer of the revision that Arm's tools and MLIR speak.

A TOSA 1.0 or 1.1 vector's graph is written as it is (:func:`~.native.native`); a
2024 draft vector's goes through the Arm translation (:func:`~.translate.translate`),
and a draft vector that means something else in the later revision is named by its
conflict (:func:`~.conflicts.find_conflict`).  Backends that take a TOSA
flatbuffer (``iree``, ``vulkan``) share this step, so that they skip the same vectors
for the same reasons.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

from conformance.backends.revision.conflicts import find_conflict
from conformance.backends.revision.emitter import Untranslatable
from conformance.backends.revision.native import is_native, native
from conformance.backends.revision.translate import ArmGraph, translate
from conformance.block_tensor import arrays
from conformance.dtypes import DType
from vectors.pack_model import LoadedVector

__all__ = ["later_graph"]


def later_graph(
    vector: LoadedVector,
    *,
    embed: Callable[[DType], bool],
    ts: ModuleType,
    max_nesting: int | None,
) -> ArmGraph | str:
    """The flatbuffer and bindings of ``vector``, or why it cannot be written.

    ``embed`` says which graph input types become constants holding the vector's
    values; ``ts`` is Arm's serializer (the translation writes with it); ``max_nesting``
    is the vector's level's MAX_NESTING (a draft conflict depends on it)."""
    own = is_native(vector.graph)
    try:
        if own:
            return native(vector.graph, vector.inputs, embed=embed)
        inputs = arrays(vector.inputs)  # the 2024 draft's: no block-scaled tensor
        made = translate(vector.graph, inputs, embed=embed, ts=ts)
    except Untranslatable as exc:
        return str(exc)
    return find_conflict(vector.graph, inputs, vector.kind, max_nesting) or made

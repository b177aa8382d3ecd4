"""What IREE 3.13 cannot run of the TOSA 1.1 draft: skipped, with the reason, not crashed.

A 1.1 vector's own file goes to tosa-opt (tosa-tools 2026.8 reads it) and IREE compiles
the TOSA MLIR, as a 1.0 vector's does.  Measured on a 1.1 pack (`generate --tosa
1.1-draft`, one vector per mode), IREE runs i64 throughout, fp8ue8m0 tensors,
MAX_POOL2D_ADAPTIVE, AVG_POOL2D_ADAPTIVE and ROW_GATHER; what it cannot run is:

* ``MATMUL_T``, ``ASSERT_EQUAL_SHAPE`` and the block-scaled operators: its
  TOSA-to-linalg lowering has no pattern for them ("failed to legalize operation
  'tosa.matmul_t'", ``'tosa.assert_equal_shape'``,
  ``'tosa.cast_from_block_scaled'``, ``conv2d_block_scaled``, ``matmul_t_block_scaled``,
  ``cast_to_block_scaled``); the block-scaled operators are the ones whose modes bind a
  ``scale_t`` in tosa.xml;
* tensors of fp4e2m1, fp6e2m3 and fp6e3m2, which its stream dialect cannot size
  ("'tensor<f4E2M1FN>' does not have integral number of total bytes", "unsupported
  pattern type 'f6E2M3FN' with too large/non-byte-aligned bit width"), and of mxint8
  (``!tosa.mxint8``), on which its compiler crashes (signal 11).

Other refusals stay results: a valid vector IREE rejects has failed (IREE's TOSA dialect
does not give ROW_GATHER an i64 value with i32 indices, for one).
"""

from __future__ import annotations

import functools

from conformance.graph import Graph
from conformance.operator_table import family

__all__ = ["NOT_LOWERED", "UNSIZED_TYPES", "not_lowered_1_1"]

# Operators of the 1.1 draft IREE 3.13 does not lower, besides the block-scaled ones.
NOT_LOWERED = family(frozenset({"MATMUL_T", "ASSERT_EQUAL_SHAPE"}))

# Element types IREE 3.13 cannot hold, with what it says.
UNSIZED_TYPES: dict[str, str] = {
    "fp4e2m1": "IREE 3.13's stream dialect cannot size a 4-bit float tensor",
    "fp6e2m3": "IREE 3.13's stream dialect cannot size a 6-bit float tensor",
    "fp6e3m2": "IREE 3.13's stream dialect cannot size a 6-bit float tensor",
    "mxint8": "IREE 3.13's compiler crashes (signal 11) on !tosa.mxint8 tensors",
}


@functools.cache
def _block_scaled_operators() -> frozenset[str]:
    """The 1.1 draft's operators whose modes bind a scale type (the block-scaled ones)."""
    from conformance.spec import load_revision

    spec = load_revision("1.1-draft")
    return frozenset(
        name
        for name, op in spec.operators.items()
        if any(m.bindings.get("scale_t", "-") != "-" for m in op.modes)
    )


def not_lowered_1_1(graph: Graph) -> str | None:
    """Why IREE cannot run a graph holding an operator or element type of TOSA 1.1 it
    does not implement, else None."""
    for block in graph.blocks():
        for op in block.operators:
            if op.op in NOT_LOWERED or op.op in _block_scaled_operators():
                return (
                    f"IREE 3.13 does not lower {op.op} (a TOSA 1.1 operator): tosa."
                    f"{op.op.lower()} fails to legalize"
                )
        for t in block.tensors.values():
            why = UNSIZED_TYPES.get(t.dtype.name)
            if why is not None:
                return f"tensor {t.name!r} is {t.dtype}, a TOSA 1.1 type: {why}"
            if t.dtype.kind == "block":
                return (
                    f"tensor {t.name!r} is {t.dtype}, a block-scaled TOSA 1.1 type: this "
                    "backend passes no block-scaled tensors (values and scales) to IREE"
                )
    return None

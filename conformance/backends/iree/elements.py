"""Element types between this project's storage, TOSA MLIR and IREE's runtime.

IREE's Python runtime takes and returns numpy arrays, ml_dtypes' included, so bf16 and
fp8 cross it as ``ml_dtypes.bfloat16`` / ``float8_e4m3fn`` / ``float8_e5m2`` arrays, our
storage dtypes.  ``i48`` crosses it as ``int64``: IREE widens i48 to i64 throughout,
its function signatures included.  Two of our types have no numpy dtype there:

* ``i4`` graph inputs are embedded in the program as constants (behind an
  optimization barrier, see :mod:`.mlir`), and ``i4`` results are widened
  (sign-extended to ``i8``) inside the program before they are returned;
* ``shape`` inputs are embedded too, as ``CONST_SHAPE``: in the revision MLIR's TOSA
  dialect implements, shape values exist at compile time only, so folding them is their
  meaning.  A ``shape`` *result* cannot leave an IREE function at all (the runtime has
  no shape type), so such a vector is skipped.

i48 inputs are not embedded: IREE gives a negative i48 constant the wrong value (it
zero-extends the 48-bit pattern when it widens the constant to i64; docs/iree.md),
which would fail every vector with a negative i48 input for a reason of our making.
"""

from __future__ import annotations

import numpy as np

from conformance.dtypes import DType
from conformance.graph import Tensor

# Our type name -> the MLIR element type of MLIR's TOSA dialect (integers are signless).
MLIR_ELEMENT: dict[str, str] = {
    "bool": "i1",
    "i4": "i4",
    "i8": "i8",
    "i16": "i16",
    "i32": "i32",
    "i48": "i48",
    "fp8e4m3": "f8E4M3FN",
    "fp8e5m2": "f8E5M2",
    "fp16": "f16",
    "bf16": "bf16",
    "fp32": "f32",
    # TOSA 1.1 (tosa-opt's names; IREE runs i64 and f8E8M0FNU, and cannot hold the
    # others: :mod:`.tosa_1_1` skips them)
    "i64": "i64",
    "fp4e2m1": "f4E2M1FN",
    "fp6e2m3": "f6E2M3FN",
    "fp6e3m2": "f6E3M2FN",
    "fp8ue8m0": "f8E8M0FNU",
    "mxint8": "!tosa.mxint8",
}
# The block-scaled composites (bs32_...) have no element type: the graph IR holds no
# block-scaled tensor yet, and the 1.1 file writes one as two (values and scales).

# Results the runtime cannot carry, and the type they are widened to before returning.
WIDENED: dict[str, str] = {"i4": "i8"}

# Inputs the program holds as constants rather than taking at run time.
EMBEDDED = frozenset({"i4", "shape"})


def embedded(dt: DType) -> bool:
    """Whether a graph input of this type is embedded as a constant."""
    return dt.name in EMBEDDED


def barrier_held(dt: DType) -> bool:
    """Whether an embedded input is hidden from constant folding (i4 data, not shapes)."""
    return dt.name in WIDENED


def tensor_type(t: Tensor, element: str | None = None) -> str:
    """The MLIR ranked tensor type of ``t`` (``tensor<2x3xi8>``; ``tensor<f32>`` at rank 0)."""
    elem = element or MLIR_ELEMENT[t.dtype.name]
    dims = "".join(f"{d}x" for d in t.shape)
    return f"tensor<{dims}{elem}>"


def returned_type(t: Tensor) -> str:
    """The type a result of ``t``'s type has when the program returns it."""
    return tensor_type(t, WIDENED.get(t.dtype.name))


def dense_literal(values: np.ndarray, dt: DType) -> str:
    """An MLIR ``dense<...>`` literal of integer values (i4 constants)."""
    arr = np.asarray(values).astype(np.int64)
    if not dt.is_int:
        raise ValueError(f"dense literals are written for integer types only, not {dt}")
    if arr.size and not np.all(dt.in_range(arr)):
        raise ValueError(f"values outside {dt}")
    if arr.ndim == 0:
        return f"dense<{int(arr)}>"
    if arr.size and np.all(arr == arr.flat[0]):
        return f"dense<{int(arr.flat[0])}>"  # a splat: any shape
    # Nested lists, like numpy's tolist(): the nesting MLIR's parser checks against the shape.
    return "dense<" + str(arr.tolist()).replace(" ", "") + ">"


def from_runtime(raw: np.ndarray, t: Tensor) -> np.ndarray:
    """A result array in our storage dtype for ``t``, exactly; narrowing a widened result
    checks that every value fits the narrow type."""
    arr = np.asarray(raw)
    want = np.dtype(t.dtype.storage)
    if tuple(arr.shape) != t.shape:
        # IREE returns the shape the compiled signature has, which is the translation's
        # declaration: FULLY_CONNECTED [N,OC] is written as CONV2D's [N,1,1,OC].
        if arr.size != int(np.prod(t.shape, dtype=np.int64)):
            raise ValueError(
                f"IREE returned shape {list(arr.shape)} for {t.name!r}, {list(t.shape)}"
            )
        arr = arr.reshape(t.shape)
    if t.dtype.is_int:
        wide = arr.astype(np.int64)
        if wide.size and not np.all(t.dtype.in_range(wide)):
            # An i4 result widened to i8 may hold -8, which int4_t excludes: hand back the
            # wide values, so that the runner's judge reports a value outside the type.
            return wide
        return wide.astype(want)
    if arr.dtype == want:
        return arr
    raise ValueError(f"IREE returned {arr.dtype} for {t.name!r}, a {t.dtype} tensor")

"""Writing one block of Arm's graph: tensors, shapes, constants and operators.

A thin layer over ``tosa_serializer``'s basic block that keeps our tensor names, knows
our element types, and makes the constant tensors the later revision wants as inputs
(zero points, pad values) under names no tensor of the block uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from conformance import dtypes
from conformance.backends.revision.elements import arm_dtype, const_data
from conformance.dtypes import DType
from conformance.graph import Tensor


class Untranslatable(Exception):
    """The vector cannot be written in the later revision; the message says why."""


class BlockEmitter:
    def __init__(
        self, ts: Any, block: Any, tensors: dict[str, Tensor], regions: dict[str, str]
    ) -> None:
        self.ts = ts
        self.block = block
        self.regions = regions  # our block name -> the Arm region holding it
        self.ours = tensors  # the block's tensors as our graph declares them
        # ... and as the Arm graph declares them (after any retyping/reshaping).
        self.tensors = dict(tensors)
        self._declared: set[str] = set()
        self.const_values: dict[str, np.ndarray] = {}  # constants declared so far
        self._taken: set[str] = set(tensors)

    # -- tensors ------------------------------------------------------------------

    def dtype(self, name: str) -> DType:
        return self.tensor(name).dtype

    def shape(self, name: str) -> tuple[int, ...]:
        return self.tensor(name).shape

    def tensor(self, name: str) -> Tensor:
        try:
            return self.tensors[name]
        except KeyError:
            raise Untranslatable(f"operator refers to unknown tensor {name!r}") from None

    def declare(self, t: Tensor, data: np.ndarray | None = None) -> None:
        """Declare ``t`` in the block (once); ``data`` makes it a constant's contents."""
        if t.name in self._declared:
            return
        if data is not None and t.dtype.is_int:
            wide = np.asarray(data).astype(np.int64)
            if wide.size and not np.all(t.dtype.in_range(wide)):
                raise Untranslatable(
                    f"constant {t.name!r} holds values outside {t.dtype}; the later revision "
                    f"keeps constants as the contents of a {t.dtype} tensor"
                )
        self._declared.add(t.name)
        self.tensors[t.name] = t
        payload = None if data is None else const_data(np.asarray(data).reshape(t.shape), t.dtype)
        if t.dtype is dtypes.SHAPE:
            if len(t.shape) != 1:
                raise Untranslatable(
                    f"shape tensor {t.name!r} has shape {list(t.shape)}; the later revision "
                    "holds shape values only as rank-1 lists"
                )
            self.block.addShape(t.name, t.shape[0], payload)
        else:
            self.block.addTensor(t.name, list(t.shape), arm_dtype(self.ts, t.dtype), payload)

    def fresh(self, base: str) -> str:
        """A tensor name not used in the block, derived from ``base``."""
        name, k = base, 0
        while name in self._taken:
            k += 1
            name = f"{base}_{k}"
        self._taken.add(name)
        return name

    def const(self, base: str, values: Any, dt: DType, shape: Sequence[int]) -> str:
        """A new constant tensor (with its CONST / CONST_SHAPE operator); its name."""
        name = self.fresh(base)
        self.constant(Tensor(name, tuple(shape), dt), np.asarray(values))
        return name

    def constant(self, t: Tensor, values: np.ndarray) -> None:
        """Declare ``t`` holding ``values`` and the operator that produces it."""
        self.declare(t, values)
        self.const_values[t.name] = np.asarray(values)
        op = "CONST_SHAPE" if t.dtype is dtypes.SHAPE else "CONST"
        self.op(op, [], [t.name])

    def intermediate(self, base: str, shape: Sequence[int], dt: DType) -> str:
        name = self.fresh(base)
        self.declare(Tensor(name, tuple(shape), dt))
        return name

    # -- operators ----------------------------------------------------------------

    def op(self, name: str, inputs: Sequence[str], outputs: Sequence[str], *args: Any) -> None:
        """Add operator ``name`` (Arm's Op name) with its attribute built from ``args``,
        in the order Arm's attribute builder for that operator takes them."""
        op = getattr(self.ts.Op, name)
        attr = self.ts.TosaSerializerAttribute()
        attr.setAttribute(op, *args)
        self.block.addOperator(op, list(inputs), list(outputs), attr)

    def region_name(self, block: str) -> str:
        """The Arm region a control-flow attribute names for our block ``block``."""
        try:
            return self.regions[block]
        except KeyError:
            raise Untranslatable(f"no block named {block!r} in the graph") from None

"""Shapes and contents of block-scaled composite tensors (TOSA 1.1 ``bs32_*``) for the
recipes of the operators that move them (CONCAT, CONST, DIM, IDENTITY, RESHAPE,
REVERSE, SLICE, TILE, TRANSPOSE).

* **Shapes**: the innermost dimension a whole number of blocks (32 * k), rank at least
  1 (every such operator's ERROR_IFs), the rest within the element budget.
* **Values**: every encoding of the value type (16 of fp4e2m1, 64 of fp6, 256 of fp8 and
  mxint8: NaN, infinity, -0.0, subnormals, mxint8's -128 and 127), placed at random
  where the tensor holds that many, random encodings elsewhere.  An operator that
  moves elements keeps each one, so every encoding is a valid input.
* **Scales**: encodings around 1.0 (0x7F) within a drawn number of binades, and, in
  blocks of their own, the extremes 2**-127 (0x00), 2**127 (0xFE), 1.0 and the NaN
  scale (0xFF), which a copy carries like any other (always for an ``edge`` target,
  else when drawn).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from hypothesis import strategies as st

from conformance.block_tensor import BlockScaled, scale_shape, scale_type, value_type
from conformance.dtypes import DType
from reference import mx
from strategies.shapes import Budget, shapes

# The scale encodings placed in blocks of their own: 2**-127, 2**127, 1.0 and NaN.
SCALE_EXTREMES = (0x00, 0xFE, mx.UE8M0_BIAS, mx.UE8M0_NAN)


@st.composite
def blocked_shapes(
    draw: st.DrawFn,
    rank_min: int,
    rank_max: int,
    budget: Budget,
    block_size: int,
    *,
    label: str = "shape",
) -> tuple[int, ...]:
    """A shape of rank in [max(1, rank_min), rank_max] whose innermost dimension is a
    multiple of ``block_size``, within the budget (the innermost dimension at least
    one block, and at most max_dim rounded up to a block)."""
    lo = max(1, rank_min)
    rank = draw(st.integers(lo, max(lo, rank_max)), label=f"{label}: rank")
    most = max(1, min(-(-budget.max_dim // block_size), budget.max_elements // block_size))
    k = draw(st.integers(1, most), label=f"{label}: blocks")
    inner = block_size * k
    if rank == 1:
        return (inner,)
    rest = replace(
        budget,
        max_elements=max(1, budget.max_elements // inner),
        min_elements=max(1, -(-budget.min_elements // inner)),
        max_batch=None,
    )
    lead = draw(shapes(rank - 1, rank - 1, rest, label=label))
    return (*lead, inner)


def every_code(rng: np.random.Generator, count: int, size: int) -> np.ndarray:
    """``size`` codes of a type of ``count`` encodings: each of them at least once where
    ``size`` holds them all, in random places; random codes elsewhere."""
    head = np.arange(min(count, size))
    codes = np.concatenate([head, rng.integers(0, count, size - head.size)])
    return rng.permutation(codes)


@st.composite
def block_scaled_values(
    draw: st.DrawFn,
    dt: DType,
    shape: tuple[int, ...],
    *,
    label: str = "values",
    extremes: bool | None = None,
) -> BlockScaled:
    """Contents of a block-scaled tensor of ``dt`` and ``shape`` (module text);
    ``extremes``: place the scale extremes (None: drawn)."""
    vt, st_ = value_type(dt), scale_type(dt)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label=f"{label}: seed"))
    size = math.prod(shape)
    codes = every_code(rng, mx.code_count(vt), size).reshape(shape)
    s_shape = scale_shape(shape, dt.block_size)
    blocks = math.prod(s_shape)
    spread = draw(st.integers(0, 126), label=f"{label}: scale binades")
    scales = mx.UE8M0_BIAS + rng.integers(-spread, spread + 1, blocks)
    if extremes is None:
        extremes = draw(st.booleans(), label=f"{label}: scale extremes")
    if extremes:
        spots = rng.permutation(blocks)[: len(SCALE_EXTREMES)]
        scales[spots] = SCALE_EXTREMES[: len(spots)]
    return BlockScaled(dt, mx.from_bits(codes, vt), mx.from_bits(scales.reshape(s_shape), st_))


def scales_for(scales: np.ndarray | None, dt: DType, shape: tuple[int, ...]) -> np.ndarray:
    """Scales for a block-scaled tensor whose shape or type a breaker changed: the old
    ones cycled into the new scale shape, or scales of 1.0 where there were none."""
    s_shape = scale_shape(shape, dt.block_size)
    if scales is None or scales.size == 0:
        return mx.from_bits(np.full(s_shape, mx.UE8M0_BIAS), scale_type(dt))
    return np.resize(scales.reshape(-1), math.prod(s_shape)).reshape(s_shape)

"""Recipe and breakers for ROW_GATHER (TOSA 1.1).

Each of the W indices of a batch names the first of ``row_count`` consecutive rows of
the [N, K, C] values; the output stacks them, [N, W * row_count, C].  Validity is in
the values: ``REQUIRE(0 <= k && (k+row_count) <= K)``, so every index is drawn in
[0, K - row_count], with both ends placed where a drawn mask says (the first row, and
the last start whose rows still fit: where bounds are got wrong).  Indices may repeat
and windows overlap: a gather reads, it never writes twice.  ``row_count`` is drawn 1
(GATHER's case), small, or up to K (one window of every row), and is the [1] i32_t
constant input tosa.xml declares.  A long-axis job gathers from K past 2**16 with
windows that start just below 2**16 and cross it.

Its modes are type-set combinations (in_out_t of Base INT, Base FP, Extension with
index_t i32_t or i64_t).  The Extension modes that bind a block-scaled composite
(bs32_fp8ue8m0_*_t) draw C a whole number of blocks, values and scales from
:mod:`strategies.block_tensors`; their long-axis case keeps K past 2**16 with C one
block, 32 times the job's element budget, as no smaller composite has such a K.

Breakers: ``row_count < 1`` (0, negatives, i32's minimum), an output whose rows are not
W * row_count (W alone: row_count ignored), indices or row_count of the wrong shape,
and for the block-scaled modes C off the block grid; the type rule is the generic
retyping breaker's.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import strategies as st

from conformance import dtypes
from conformance.block_tensor import is_block_scaled
from conformance.dtypes import I32_MIN
from reference.arguments import INPUTS_CLAUSE, OUTPUTS_CLAUSE
from reference.ops.row_gather import BLOCK_CLAUSE, ROW_COUNT_CLAUSE
from strategies.block_tensors import blocked_shapes
from strategies.case import CaseSpec, TensorDraw
from strategies.invalid import breaks, broken
from strategies.recipes import RecipeContext, recipe
from strategies.recipes.scatter_gather import WIDE_K, WIDE_W, index_rng, indices_tensor, wide
from strategies.shapes import shapes


def row_count_tensor(row_count: int) -> TensorDraw:
    """``row_count`` as tosa.xml declares it: a constant [1] tensor of i32_t."""
    return TensorDraw(
        "row_count", (1,), dtypes.I32, np.array([row_count], dtype=np.int32), const=True
    )


def block_of(rc: RecipeContext) -> int:
    """The block size of a block-scaled in_out_t, 0 for the other modes."""
    dt = rc.dtype("in_out_t")
    return dt.block_size if is_block_scaled(dt) else 0


def _wide_starts(rng: np.random.Generator, row_count: int) -> np.ndarray:
    """Starts of windows in a WIDE_K-row tensor: both ends, and windows that begin at
    2**15, just below 2**16 (so that they cross it), at 2**16; the rest at random."""
    last = WIDE_K - row_count
    width = WIDE_W // row_count
    fixed = np.array([0, 1 << 15, (1 << 16) - row_count + 1, (1 << 16) - 1, 1 << 16, last])
    fixed = np.unique(np.clip(fixed, 0, last))
    rest = rng.integers(0, last + 1, size=max(0, width - fixed.size))
    return rng.permutation(np.concatenate([fixed, rest])[:width]).reshape(1, -1)


@recipe("ROW_GATHER")
def row_gather(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    bs = block_of(rc)
    if wide(rc):
        row_count = draw(st.integers(1, 4), label="row_count")
        starts = _wide_starts(index_rng(draw), row_count)
        c = max(1, bs)  # a composite's row is one block at least
        inputs = [
            rc.tensor(draw, "values", dt, (1, WIDE_K, c)),
            indices_tensor(rc, starts),
            row_count_tensor(row_count),
        ]
        out = TensorDraw("output", (1, starts.shape[1] * row_count, c), dt)
        return rc.spec_of(inputs, [out])
    # A quarter of the budget for the values leaves the output room for several windows
    # per batch (a large job's values take the whole of it).
    room = rc.budget
    if rc.target != "large":
        quarter = max(1, room.max_elements // 4)
        room = replace(room, max_elements=quarter, min_elements=min(room.min_elements, quarter))
    if bs:
        n, k, c = draw(blocked_shapes(3, 3, room, bs, label="values [N,K,C]"))
    else:
        n, k, c = draw(shapes(3, 3, room, label="values [N,K,C]"))
    # 1 (GATHER's case), a few rows, or up to K (one window over every row).
    kind = draw(st.sampled_from(["one", "few", "any"]), label="row_count kind")
    row_count = 1
    if kind == "few":
        row_count = draw(st.integers(min(2, k), min(4, k)), label="row_count")
    elif kind == "any":
        row_count = draw(st.integers(1, k), label="row_count")
    # The output holds N * W * row_count * C elements, row_count * W rows at most max_dim;
    # n * k * c fits the budget and row_count <= k, so W = 1 always does.  W is mostly
    # above 1: each index's rows must land after the previous index's.  An edge case has
    # four where it can: its value classes (strategies.fill) are placed one to a position
    # of the indices, three of them, and row_count's one position is shared with indices
    # of one element.
    w_max = max(
        1,
        min(rc.budget.max_dim // row_count, rc.budget.max_elements // (n * c * row_count)),
    )
    edge = rc.target == "edge"
    several = w_max > 1 and (draw(st.integers(0, 3), label="W above 1") > 0 or edge)
    w = draw(st.integers(min(4, w_max) if edge else 2, w_max), label="W") if several else 1
    rng = index_rng(draw)
    last = k - row_count  # the last start whose rows all lie in the tensor
    indices = rng.integers(0, last + 1, size=(n, w))
    ends = draw(st.sampled_from(["none", "first", "last", "both"]), label="indices: ends")
    if ends in ("first", "both"):
        indices[:, 0] = 0
    if ends in ("last", "both"):
        indices[:, -1] = last
    inputs = [
        rc.tensor(draw, "values", dt, (n, k, c)),
        indices_tensor(rc, indices),
        row_count_tensor(row_count),
    ]
    return rc.spec_of(inputs, [TensorDraw("output", (n, w * row_count, c), dt)])


def _row_count(spec: CaseSpec) -> int:
    return int(np.asarray(spec.tensor("row_count").values).reshape(-1)[0])


@breaks("ROW_GATHER", clause=ROW_COUNT_CLAUSE)
def row_count_below_one(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """row_count 0, a small negative or i32's minimum; the output keeps its shape (the
    rule is checked before the shape that needs a row count)."""
    out = broken(spec, ROW_COUNT_CLAUSE)
    bad = draw(
        st.one_of(st.sampled_from([0, -1, I32_MIN]), st.integers(I32_MIN, 0)), label="row_count"
    )
    out.replace_tensor("row_count", values=np.array([bad], dtype=np.int32))
    return out


@breaks("ROW_GATHER", clause=OUTPUTS_CLAUSE)
def output_rows(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """An output whose second dimension is not W * row_count: W (row_count ignored,
    GATHER's shape), one row more or fewer, one window more; or another N or C."""
    out = broken(spec, OUTPUTS_CLAUSE)
    n, rows, c = spec.outputs[0].shape
    row_count = _row_count(spec)
    width = rows // row_count
    how = draw(st.sampled_from(["W", "+1", "-1", "+window", "N", "C"]), label="output made wrong")
    if how == "W" and row_count > 1:
        rows = width
    elif how == "-1" and rows > 1:
        rows -= 1
    elif how == "+window":
        rows += row_count
    elif how == "N":
        n += 1
    elif how == "C":
        c += 1
    else:
        rows += 1
    out.reshape_tensor("output", (n, rows, c))
    return out


@breaks("ROW_GATHER", clause=INPUTS_CLAUSE)
def input_shapes(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """indices with another N (its added rows repeat earlier ones, so they stay in
    range), or a row_count of two values or of rank 2 (declared [1])."""
    out = broken(spec, INPUTS_CLAUSE)
    which = draw(st.sampled_from(["indices", "row_count"]), label="input made wrong")
    if which == "indices":
        n, w = spec.tensor("indices").shape
        out.reshape_tensor("indices", (n + 1, w))
    else:
        shape = draw(st.sampled_from([(2,), (1, 1)]), label="row_count shape")
        out.reshape_tensor("row_count", shape)
    return out


@breaks("ROW_GATHER", clause=BLOCK_CLAUSE, applies=lambda rc: block_of(rc) > 0)
def channels_off_block(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """C off the block grid by 1 to block - 1 either way, the values' and the output's
    alike (the argument check ties them)."""
    bs = block_of(rc)
    n, k, c = spec.tensor("values").shape
    delta = draw(st.integers(1, bs - 1), label="C off the block grid by")
    c = c - delta if c > delta else c + delta
    out = broken(spec, BLOCK_CLAUSE)
    out.reshape_tensor("values", (n, k, c))
    o = spec.outputs[0]
    out.replace_tensor(o.name, shape=(*o.shape[:2], c))
    return out

"""Recipes and breakers for GATHER and SCATTER.

The index tensor is typed as tosa.xml declares it: size_t in the draft (held as
int64, dtype SHAPE), index_t in TOSA 1.0 (each mode binds it, to i32_t) and 1.1 (i32_t
or, with EXT-INT64, i64_t; 1.1 adds Boolean and i64_t values too, which the value draws
cover as they are).  ROW_GATHER (TOSA 1.1) is strategies/recipes/row_gather.py, on the
helpers here.  Its values
are where validity is decided: every index must lie in [0, K) (a REQUIRE), and
SCATTER may write each position of a batch at most once (a REQUIRE too), so each
SCATTER batch takes W distinct positions.  Both REQUIREs make a graph unpredictable
rather than in error, so they have no breakers; the ERROR_IFs are the
argument shapes ([N,K,C], [N,W], [N,W,C] must agree).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from reference.arguments import INPUTS_CLAUSE
from strategies.case import CaseSpec, TensorDraw
from strategies.invalid import breaks, broken
from strategies.recipes import RecipeContext, recipe
from strategies.shapes import shapes


def indices_tensor(rc: RecipeContext, values: np.ndarray) -> TensorDraw:
    # The draft types the indices size_t (int64 storage), TOSA 1.0 index_t (i32_t),
    # TOSA 1.1 index_t i32_t or i64_t (each mode binds it).
    dt = rc.arg_dtype("indices")
    return TensorDraw("indices", values.shape, dt, values.astype(dt.storage))


def index_rng(draw: st.DrawFn) -> np.random.Generator:
    return np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="indices: seed"))


# The long-axis case indexes past 2**16 rows (N = C = 1): a kernel that keeps an index in
# 16 bits reads or writes the wrong row.
WIDE_K = 65538  # rows 0 ... 2**16 + 1: 2**16 is not the last one
WIDE_W = 256


def _wide_indices(rng: np.random.Generator) -> np.ndarray:
    """WIDE_W distinct rows of a WIDE_K-row tensor: both ends, 2**16 - 1, 2**16 and
    2**15, the rest at random (a [1, W] tensor)."""
    fixed = np.array([0, 1 << 15, (1 << 16) - 1, 1 << 16, WIDE_K - 1])
    rest = np.setdiff1d(rng.permutation(WIDE_K)[: 2 * WIDE_W], fixed)[: WIDE_W - fixed.size]
    return rng.permutation(np.concatenate([fixed, rest])).reshape(1, WIDE_W)


def wide(rc: RecipeContext) -> bool:
    return rc.target == "long-axis" and rc.budget.max_elements >= WIDE_K


@recipe("GATHER")
def gather(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    if wide(rc):
        indices = _wide_indices(index_rng(draw))
        inputs = [rc.tensor(draw, "values", dt, (1, WIDE_K, 1)), indices_tensor(rc, indices)]
        return rc.spec_of(inputs, [TensorDraw("output", (1, WIDE_W, 1), dt)])
    n, k, c = draw(shapes(3, 3, rc.budget, label="values [N,K,C]"))
    w_max = max(1, min(rc.budget.max_dim, rc.budget.max_elements // (n * c)))
    w = draw(st.integers(1, w_max), label="W")
    rng = index_rng(draw)
    # Uniform indices, with the ends of the range placed where a drawn mask says:
    # reading row 0 and row K-1 is where bounds are got wrong.
    indices = rng.integers(0, k, size=(n, w))
    ends = draw(st.sampled_from(["none", "first", "last", "both"]), label="indices: ends")
    if ends in ("first", "both"):
        indices[:, 0] = 0
    if ends in ("last", "both"):
        indices[:, -1] = k - 1
    inputs = [rc.tensor(draw, "values", dt, (n, k, c)), indices_tensor(rc, indices)]
    return rc.spec_of(inputs, [TensorDraw("output", (n, w, c), dt)])


@recipe("SCATTER")
def scatter(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    if wide(rc):
        indices = _wide_indices(index_rng(draw))
        inputs = [
            rc.tensor(draw, "values_in", dt, (1, WIDE_K, 1)),
            indices_tensor(rc, indices),
            rc.tensor(draw, "input", dt, (1, WIDE_W, 1)),
        ]
        return rc.spec_of(inputs, [TensorDraw("values_out", (1, WIDE_K, 1), dt)])
    n, k, c = draw(shapes(3, 3, rc.budget, label="values_in [N,K,C]"))
    # At most K distinct positions per batch: W <= K, and N*W*C fits as N*K*C does.
    # A large case writes every row (W = K): both inputs then are full size.
    w = k if rc.target == "large" else draw(st.integers(1, k), label="W")
    rng = index_rng(draw)
    indices = np.stack([rng.permutation(k)[:w] for _ in range(n)])
    inputs = [
        rc.tensor(draw, "values_in", dt, (n, k, c)),
        indices_tensor(rc, indices),
        rc.tensor(draw, "input", dt, (n, w, c)),
    ]
    return rc.spec_of(inputs, [TensorDraw("values_out", (n, k, c), dt)])


@breaks("GATHER", "SCATTER", clause=INPUTS_CLAUSE)
def index_shape(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """An input whose dimensions disagree with the others': indices with another N
    (values kept in range), or for SCATTER an input with another C."""
    out = broken(spec, INPUTS_CLAUSE)
    names = ["indices", "input"] if spec.operator == "SCATTER" else ["indices"]
    name = draw(st.sampled_from(names), label="mismatched input")
    t = out.tensor(name)
    # Indices: one more batch; SCATTER's input: one more channel.
    dim = 0 if name == "indices" else 2
    shape = tuple(d + 1 if i == dim else d for i, d in enumerate(t.shape))
    out.reshape_tensor(name, shape)  # the added rows repeat earlier ones: indices stay in range
    return out

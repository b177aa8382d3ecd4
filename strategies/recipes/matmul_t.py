"""The recipe and breakers of MATMUL_T (TOSA 1.1): A [N,H,C] times the transpose of
B [D,W,C], D = N or 1 (B broadcast).

The case is MATMUL's (``matmul_case`` in strategies/recipes/tensor_conv.py, which
draws the sizes, zero points and values, Appendix A's data sets included) with B laid
out [D, W, C].  Its breakers: the batch rule ``D != N && D != 1`` here; the
zero-point rules, one per zero point, in strategies/recipes/tensor_zero_points.py; the
shared contraction C (a declaration) with MATMUL's in tensor_conv; a type no mode
lists, and an output of another shape, by the generic breakers.  The block-size rules
(C a multiple of a block-scaled A_t's or B_t's block) belong to the modes that bind a
block-scaled type, which are refused (``block_scaled_refusal``).

MATMUL_T has no level limit of its own: tosa.xml gives its arguments none, and its
ranks are 3 (below every level's MAX_RANK).
"""

from __future__ import annotations

from hypothesis import strategies as st

from reference.ops.matmul_t import BATCH_CLAUSE
from strategies.case import CaseSpec
from strategies.invalid import breaks, broken
from strategies.recipes import RecipeContext, recipe
from strategies.recipes.tensor_conv import drawable, matmul_case


@recipe("MATMUL_T")
def matmul_t(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    return matmul_case(draw, rc, transposed=True)


@breaks("MATMUL_T", clause=BATCH_CLAUSE, applies=drawable)
def b_batches(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """B with D neither 1 nor N: one more or fewer matrices than A's N (never 1), or
    any count from 2 to N + 3 but N; its values are the drawn ones, cycled."""
    out = broken(spec, BATCH_CLAUSE)
    n = spec.tensor("A").shape[0]
    _, w, c = spec.tensor("B").shape
    wrong = [d for d in range(2, n + 4) if d != n]
    d = draw(st.sampled_from(wrong), label="D")
    out.reshape_tensor("B", (d, w, c))
    return out

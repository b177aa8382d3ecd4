"""Reference evaluator, TOSA 1.1: the block-scaled (bs32_fp8ue8m0_*_t) modes of RESIZE
(nearest neighbour only) and ROW_GATHER.

Both move each element with its block's scale (tensor_read_value_scale /
tensor_write_value_scale).  RESIZE's ERROR_IFs ask C to be whole blocks and the mode
to be NEAREST_NEIGHBOR; ROW_GATHER's ask C to be whole blocks, and its REQUIRE on the
index range is that of the other modes.  Their outputs are judged exact, values and
scales.  Every expected value is worked out by hand in the comment beside it."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from block_helpers import composite as pair
from block_helpers import composite_result as result
from block_helpers import exps
from reference_helpers import assert_rule

from conformance import dtypes as D
from conformance.block_tensor import BlockScaled
from conformance.builder import single_operator_graph
from conformance.graph import Graph
from conformance.spec import load_revision, spec_in_use
from reference import compliance, mx
from reference.engine import evaluate
from reference.expectations import expect
from reference.ops.image import BLOCK_IN_CLAUSE, BLOCK_MODE_CLAUSE, OH_CLAUSE
from reference.ops.row_gather import BLOCK_CLAUSE, ROW_COUNT_CLAUSE, ROW_RANGE_CLAUSE
from reference.outcome import Outcome

SPEC = load_revision("1.1-draft")
FP4 = D.dtype("bs32_fp8ue8m0_fp4e2m1")
E5M2 = D.dtype("bs32_fp8ue8m0_fp8e5m2")
MX8 = D.dtype("bs32_fp8ue8m0_mxint8")
NEAREST = "NEAREST_NEIGHBOR"


@pytest.fixture(autouse=True)
def _the_1_1_spec() -> Iterator[None]:
    with spec_in_use(SPEC):
        yield


# --------------------------------------------------------------------------------- RESIZE


def resize_graph(
    dt: D.DType,
    in_shape: tuple[int, ...],
    out_shape: tuple[int, ...],
    scale: list[int],
    offset: list[int],
    border: list[int],
    mode: str = NEAREST,
) -> Graph:
    shapes = {"scale": scale, "offset": offset, "border": border}
    inputs = [("x", in_shape, dt), *((n, (len(v),), D.SHAPE) for n, v in shapes.items())]
    return single_operator_graph(
        "RESIZE", inputs, [("y", out_shape, dt)], {"mode": mode}, spec=SPEC,
        constants={n: np.array(v, np.int64) for n, v in shapes.items()}, strict=False,
    )  # fmt: skip


# A 2x upscale in both axes with half-pixel centres: scale 4/2, offset -1, border 1,
# OH = ((2 - 1) * 4 + 1 + 1) / 2 + 1 = 4.  Row oy: y = 2 * oy - 1, iy = floor(y / 4),
# ry = y - 4 * iy; oy = 0: y = -1, iy = -1, ry = 3, 2 * 3 >= 4 takes iy1 = 0;
# oy = 1: y = 1, ry = 1 takes iy0 = 0; oy = 2: y = 3, ry = 3 takes iy1 = 1;
# oy = 3: y = 5, iy = 1, ry = 1 takes iy0 = 1.  Rows (and columns) [0, 0, 1, 1].
UPSCALE = ([4, 2, 4, 2], [-1, -1], [1, 1])  # scale, offset, border


def test_nearest_upscale_moves_each_value_with_its_blocks_scale() -> None:
    # [1, 2, 2, 32] fp4e2m1; pixel (iy, ix) holds code 1 + 2 * iy + ix (0.5, 1, 1.5, 2)
    # at even c and that code + 8 (its negative) at odd c; the scales are a chequer
    # board, 2**-3 where iy + ix is even, 2**5 where it is odd.
    base = 1 + 2 * np.arange(2)[:, None] + np.arange(2)[None, :]
    codes = base[None, :, :, None] + 8 * (np.arange(32) % 2)[None, None, None, :]
    x = pair(FP4, codes, [[[[-3], [5]], [[5], [-3]]]])
    graph = resize_graph(FP4, (1, 2, 2, 32), (1, 4, 4, 32), *UPSCALE)
    y = result(evaluate(graph, {"x": x}, spec=SPEC))
    # Output pixel (oy, ox) is input pixel (oy // 2, ox // 2): its codes and its scale.
    assert exps(y.scales) == [
        -3, -3, 5, 5,
        -3, -3, 5, 5,
        5, 5, -3, -3,
        5, 5, -3, -3,
    ]  # fmt: skip
    out = mx.to_bits(y.values, D.FP4E2M1)
    assert out[0, :, :, 0].tolist() == [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]]
    assert out[0, 3, 0, 1] == 3 + 8 and out[0, 1, 3, 31] == 2 + 8  # c is kept
    # As numbers: output (3, 0) is input (1, 0), 1.5 * 2**5 = 48 at c = 0, -48 at c = 1;
    # output (0, 2) is input (0, 1), 1 * 2**5 = 32.
    got = y.values.astype(np.float64) * mx.decode(y.element_scales(), D.FP8UE8M0)
    assert got[0, 3, 0, :2].tolist() == [48.0, -48.0] and got[0, 0, 2, 0] == 32.0


def test_each_output_block_takes_the_scale_of_the_same_block_of_its_source() -> None:
    # [1, 1, 1, 64] fp8e5m2 with blocks scaled 2**-127 and NaN, upscaled to [1, 2, 2, 64]
    # (scale 2/1, offset 0, border 1: OH = (0 * 2 + 1) / 1 + 1 = 2, every output pixel
    # reads the one input pixel).  Every pixel keeps block 0's 2**-127 and block 1's
    # NaN: a block's scale goes with the block's place along C.
    x = pair(E5M2, np.linspace(-2, 2, 64).reshape(1, 1, 1, 64), [[[[-127, None]]]])
    graph = resize_graph(E5M2, (1, 1, 1, 64), (1, 2, 2, 64), [2, 1, 2, 1], [0, 0], [1, 1])
    y = result(evaluate(graph, {"x": x}, spec=SPEC))
    assert exps(y.scales) == [-127, None] * 4
    assert np.array_equal(y.values.view(np.uint8)[0, 1, 1], x.values.view(np.uint8)[0, 0, 0])


def test_a_composite_resize_is_judged_exact_on_values_and_scales() -> None:
    codes = np.tile(np.arange(16), 8).reshape(1, 2, 2, 32)
    x = pair(FP4, codes, [[[[0], [1]], [[2], [3]]]])
    graph = resize_graph(FP4, (1, 2, 2, 32), (1, 4, 4, 32), *UPSCALE)
    exp = expect(graph, {"x": x}, spec=SPEC)
    ref = exp.outcome.outputs["y"]
    assert isinstance(ref, BlockScaled)
    check = exp.checks["y"]
    assert check.descriptor.mode is compliance.Mode.EXACT and check.descriptor.dtype is FP4
    assert exp.check("y", ref.copy()).passed
    wrong = ref.copy()
    wrong.scales[0, 0, 0, 0] = mx.from_bits(np.array(mx.UE8M0_BIAS + 1), D.FP8UE8M0)
    verdict = exp.check("y", wrong)
    assert not verdict.passed and verdict.failing_count == 32  # one block's 32 elements


def test_resize_composite_channels_must_be_whole_blocks() -> None:
    x = pair(FP4, np.zeros((1, 2, 2, 48), int), np.zeros((1, 2, 2, 2), int))  # 48 = 1.5 blocks
    graph = resize_graph(FP4, (1, 2, 2, 48), (1, 4, 4, 48), *UPSCALE)
    assert_rule(evaluate(graph, {"x": x}, spec=SPEC), "ERROR_IF", BLOCK_IN_CLAUSE, "C 48")
    # The shape rules come first: a wrong OH with C = 48 is an OH error.
    graph = resize_graph(FP4, (1, 2, 2, 48), (1, 5, 4, 48), *UPSCALE)
    assert_rule(evaluate(graph, {"x": x}, spec=SPEC), "ERROR_IF", OH_CLAUSE)


def test_resize_composite_is_nearest_neighbour_only() -> None:
    x = pair(MX8, np.zeros((1, 2, 2, 32), np.int8), np.zeros((1, 2, 2, 1), int))
    graph = resize_graph(MX8, (1, 2, 2, 32), (1, 4, 4, 32), *UPSCALE, mode="BILINEAR")
    # The row's words ("... nearest neighbor") do not make it the types rule.
    outcome = evaluate(graph, {"x": x}, spec=SPEC)
    assert_rule(outcome, "ERROR_IF", BLOCK_MODE_CLAUSE, "mode BILINEAR")
    # C off the block grid is checked before the mode.
    x48 = pair(MX8, np.zeros((1, 2, 2, 48), np.int8), np.zeros((1, 2, 2, 2), int))
    graph = resize_graph(MX8, (1, 2, 2, 48), (1, 4, 4, 48), *UPSCALE, mode="BILINEAR")
    assert_rule(evaluate(graph, {"x": x48}, spec=SPEC), "ERROR_IF", BLOCK_IN_CLAUSE)


# ----------------------------------------------------------------------------- ROW_GATHER


def row_gather(
    x: BlockScaled,
    indices: list[list[int]],
    row_count: int,
    out_shape: tuple[int, ...] | None = None,
) -> Outcome:
    k = np.array(indices, np.int32)
    n, _, c = x.shape
    shape = out_shape or (n, k.shape[1] * max(row_count, 1), c)
    graph = single_operator_graph(
        "ROW_GATHER",
        [("v", x.shape, x.dtype), ("k", k.shape, D.I32), ("r", (1,), D.I32)],
        [("y", shape, x.dtype)], spec=SPEC,
        constants={"r": np.array([row_count], np.int32)}, strict=False,
    )  # fmt: skip
    return evaluate(graph, {"v": x, "k": k}, spec=SPEC)


def test_row_gather_moves_composite_rows_with_their_scales() -> None:
    # values [1, 3, 64] mxint8: row r holds 10 * r + c // 32 (its two blocks differ);
    # row r's blocks are scaled 2**(2r) and 2**(2r + 1).  Indices [1, 0], row_count 2:
    # index 0 (k = 1) writes rows 1, 2 to output rows 0, 1; index 1 (k = 0) writes rows
    # 0, 1 to output rows 2, 3.
    rows = 10 * np.arange(3)[:, None] + np.arange(64)[None, :] // 32
    x = pair(MX8, rows.reshape(1, 3, 64), [[[0, 1], [2, 3], [4, 5]]])
    y = result(row_gather(x, [[1, 0]], 2))
    assert y.shape == (1, 4, 64)
    assert exps(y.scales) == [2, 3, 4, 5, 0, 1, 2, 3]
    assert y.values[0, :, 0].tolist() == [10, 20, 0, 10]
    assert y.values[0, :, 63].tolist() == [11, 21, 1, 11]
    # As numbers: output row 1 is values row 2, 20 * 2**4 at c = 0, 21 * 2**5 at c = 63,
    # each times mxint8's 2**-6.
    got = mx.decode(y.values, D.MXINT8) * mx.decode(y.element_scales(), D.FP8UE8M0)
    assert got[0, 1, [0, 63]].tolist() == [20 * 2**4 / 64, 21 * 2**5 / 64]


def test_row_gather_of_composites_per_batch() -> None:
    # Two batches of two one-block rows, scales 2**-127 / NaN (batch 0) and 1 / 2**127
    # (batch 1); index 1 in batch 0, 0 in batch 1, row_count 1: each batch its own rows.
    x = pair(FP4, np.arange(128).reshape(2, 2, 32) % 16, [[[-127], [None]], [[0], [127]]])
    y = result(row_gather(x, [[1], [0]], 1))
    assert exps(y.scales) == [None, 0]
    codes = mx.to_bits(y.values, D.FP4E2M1)
    assert codes[0, 0, :3].tolist() == [0, 1, 2] and codes[1, 0, 31] == 15


def test_row_gather_composite_rules() -> None:
    x48 = pair(FP4, np.zeros((1, 3, 48), int), np.zeros((1, 3, 2), int))
    assert_rule(row_gather(x48, [[0]], 1), "ERROR_IF", BLOCK_CLAUSE, "C 48, block size 32")
    # row_count < 1 is the pseudocode's first statement: before the block rule.
    assert_rule(row_gather(x48, [[0]], 0, (1, 1, 48)), "ERROR_IF", ROW_COUNT_CLAUSE)
    # The REQUIRE on the index range is the other modes': k = 2 with 2 rows of K = 3.
    x = pair(FP4, np.zeros((1, 3, 32), int), np.zeros((1, 3, 1), int))
    outcome = row_gather(x, [[0, 2]], 2)
    assert_rule(outcome, "REQUIRE", ROW_RANGE_CLAUSE, "indices[0,1] = 2, row_count 2, K = 3")


def test_a_composite_row_gather_is_judged_exact() -> None:
    desc = compliance.for_operator("ROW_GATHER", MX8)
    assert desc.mode is compliance.Mode.EXACT and desc.dtype is MX8
    x = pair(MX8, np.arange(96).reshape(1, 3, 32), [[[1], [2], [3]]])
    y = result(row_gather(x, [[2, 0]], 1))
    assert compliance.check(y, desc, y.copy()).passed
    swapped = BlockScaled(MX8, y.values, np.flip(y.scales, axis=1).copy())
    verdict = compliance.check(y, desc, swapped)
    assert not verdict.passed and verdict.failing_count == 64

"""Reference evaluator, TOSA 1.1: RESHAPE_BLOCK_SCALED and ROW_GATHER_BLOCK_SCALED,
whose data arguments are tensor lists of values and (optionally) their fp8ue8m0 scales.

Every expected value is worked out by hand from RESHAPE_BLOCK_SCALED.tosac and
ROW_GATHER_BLOCK_SCALED.tosac in the comment beside it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from reference_helpers import assert_rule

from conformance import dtypes
from conformance.builder import bind_types, find_mode, single_operator_graph
from conformance.spec import load_revision, spec_in_use
from reference import mx
from reference.arguments import INPUTS_CLAUSE, OUTPUTS_CLAUSE, TYPES_CLAUSE
from reference.compliance import DATA_MOVEMENT_OPERATORS, Mode, for_operator
from reference.engine import evaluate
from reference.ops import block_scaled_lists as bsl
from reference.ops.row_gather import ROW_COUNT_CLAUSE, ROW_RANGE_CLAUSE
from reference.outcome import Outcome

V11 = load_revision("1.1-draft")
LEVEL = V11.level("8K")
FP4 = dtypes.FP4E2M1
UE8M0 = dtypes.FP8UE8M0

Tensor = tuple[str, Any, str]  # (name, value, type)


def run(
    op: str,
    inputs: Sequence[Tensor],
    outputs: Sequence[tuple[str, Sequence[int], str]],
    constants: Sequence[Tensor] = (),
    block_size: str = "BLOCK_SIZE_32",
    level: Any = LEVEL,
) -> Outcome:
    """One operator: ``inputs`` are graph inputs, ``constants`` constant tensors, all in
    argument order (the list members first)."""
    held = [(n, np.asarray(v).astype(dtypes.dtype(dt).storage), dt) for n, v, dt in inputs]
    consts = [(n, np.asarray(v).astype(dtypes.dtype(dt).storage), dt) for n, v, dt in constants]
    with spec_in_use(V11):
        graph = single_operator_graph(
            op,
            [(n, v.shape, dt) for n, v, dt in [*held, *consts]],
            [(n, tuple(s), dt) for n, s, dt in outputs],
            {"block_size": block_size},
            constants={n: v for n, v, _ in consts},
            spec=V11,
            strict=False,
        )
        return evaluate(graph, {n: v for n, v, _ in held}, spec=V11, level=level)


def codes(outcome: Outcome, name: str, dt: dtypes.DType) -> list[Any]:
    """A valid outcome's output as its encodings (fp64 values back in storage)."""
    assert outcome.kind == "valid", str(outcome)
    value = np.asarray(outcome.outputs[name]).astype(dt.storage)
    return list(mx.to_bits(value, dt).tolist())


def fp4_codes(shape: tuple[int, ...]) -> np.ndarray:
    """fp4e2m1 values whose encodings count 0, 1, ..., 15, 0, 1 ... in row-major order."""
    return mx.from_bits(np.arange(int(np.prod(shape))).reshape(shape) % 16, FP4)


def ue8m0(c: Any) -> np.ndarray:
    return mx.from_bits(np.asarray(c), UE8M0)


# -- RESHAPE_BLOCK_SCALED ----------------------------------------------------------------


def reshape(
    values: np.ndarray,
    scales: np.ndarray | None,
    new: Sequence[int],
    out: Sequence[tuple[int, ...]] | None = None,
    value_t: str = "fp4e2m1",
    block_size: str = "BLOCK_SIZE_32",
) -> Outcome:
    inputs: list[Tensor] = [("v", values, value_t)]
    if scales is not None:
        inputs.append(("s", scales, "fp8ue8m0"))
    if out is None:
        out = [tuple(new)] + ([(*new[:-1], new[-1] // 32)] if scales is not None else [])
    outputs = [("ov", out[0], value_t)] + [("os", s, "fp8ue8m0") for s in out[1:]]
    return run(
        "RESHAPE_BLOCK_SCALED",
        inputs,
        outputs,
        constants=[("shape", np.array(list(new)), "shape")],
        block_size=block_size,
    )


SCALES_2X2 = ue8m0([[0x70, 0x71], [0x72, 0x73]])


def test_reshape_2x64_to_4x32_by_hand() -> None:
    # [2, 64] fp4e2m1 with scales [2, 2] (one per 32 values) to [4, 32]: the values in
    # row-major order, the new value row r is old row r // 2, columns (r % 2) * 32 ..;
    # the new scale shape is [4, 32 / 32] = [4, 1] and the scales keep their row-major
    # order: 0x70, 0x71, 0x72, 0x73 (output block r is old block r).
    # The value at row-major offset o has the encoding 4 * (o // 32) + o % 4: block b
    # (offsets 32b .. 32b + 31) cycles through 4b .. 4b + 3.
    o = np.arange(128)
    v = mx.from_bits((4 * (o // 32) + o % 4).reshape(2, 64), FP4)
    out = reshape(v, SCALES_2X2, [4, 32])
    values = codes(out, "ov", FP4)
    # new row r is block r: old [0, 0:32], [0, 32:64], [1, 0:32], [1, 32:64]
    assert [row[:5] for row in values] == [
        [0, 1, 2, 3, 0],
        [4, 5, 6, 7, 4],
        [8, 9, 10, 11, 8],
        [12, 13, 14, 15, 12],
    ]
    assert codes(out, "os", UE8M0) == [[0x70], [0x71], [0x72], [0x73]]


def test_reshape_scales_follow_their_blocks_and_nan_is_kept() -> None:
    # [1, 4, 32] with scales [1, 4, 1] = [NaN, 2**127, 2**-127, 1.0] to [2, 64]: scales
    # [2, 2], row-major: [[NaN, 2**127], [2**-127, 1.0]]; the NaN scale 0xFF is moved,
    # not interpreted.
    s = ue8m0([[[0xFF], [0xFE], [0x00], [0x7F]]])
    out = reshape(fp4_codes((1, 4, 32)), s, [2, 64])
    assert codes(out, "os", UE8M0) == [[0xFF, 0xFE], [0x00, 0x7F]]


def test_reshape_values_alone() -> None:
    # i8 [2, 3] (0 .. 5) to [3, 2]: [[0, 1], [2, 3], [4, 5]]; BLOCK_SIZE_1, one tensor.
    out = reshape(np.arange(6).reshape(2, 3), None, [3, 2], value_t="i8", block_size="BLOCK_SIZE_1")
    assert out.kind == "valid" and np.asarray(out.outputs["ov"]).tolist() == [
        [0, 1],
        [2, 3],
        [4, 5],
    ]
    # rank 0 is allowed without scales: [1] to []
    out = reshape(np.array([7]), None, [], value_t="i8", block_size="BLOCK_SIZE_1")
    assert out.kind == "valid" and np.asarray(out.outputs["ov"]).tolist() == 7


@pytest.mark.parametrize(
    ("case", "clause"),
    [
        # block_size 32 for fp8e4m3 values alone (the mode "fp8e4m3")
        (dict(scales=None, value_t="fp8e4m3"), bsl.RESHAPE_ONE_BLOCK_CLAUSE),
        # block_size 1 for values and scales
        (dict(block_size="BLOCK_SIZE_1"), bsl.RESHAPE_TWO_BLOCK_CLAUSE),
        # [4, 16]: 64 values, not 128
        (dict(new=[4, 16], out=[(4, 16), (4, 0)]), bsl.RESHAPE_SIZE_CLAUSE),
        # scales [1, 2, 2] of rank 3 against values of rank 2
        (dict(scales=ue8m0(np.full((1, 2, 2), 0x7F))), bsl.RESHAPE_SCALE_RANK_CLAUSE),
        # [8, 16]: the count is kept, 16 is no multiple of 32
        (dict(new=[8, 16], out=[(8, 16), (8, 0)]), bsl.RESHAPE_NEW_BLOCK_CLAUSE),
        # scales [2, 3]: 64 / 32 is 2 blocks per row, not 3
        (dict(scales=ue8m0(np.full((2, 3), 0x7F))), bsl.RESHAPE_SCALE_LAST_CLAUSE),
        # scales [3, 2]: 6 scales, the new shape [4, 32] has 4 blocks
        (dict(scales=ue8m0(np.full((3, 2), 0x7F))), bsl.RESHAPE_SCALE_SIZE_CLAUSE),
        # the output scales [2, 2] (the input's shape kept), the reshape writes [4, 1]
        (dict(out=[(4, 32), (2, 2)]), OUTPUTS_CLAUSE),
        # the output values [128]
        (dict(out=[(128,), (4, 1)]), OUTPUTS_CLAUSE),
    ],
)
def test_reshape_error_ifs(case: dict[str, Any], clause: str) -> None:
    args: dict[str, Any] = {"values": fp4_codes((2, 64)), "scales": SCALES_2X2, "new": [4, 32]}
    args |= case
    assert_rule(reshape(**args), "ERROR_IF", clause)


def test_reshape_innermost_off_block_and_rank_0() -> None:
    # values [8, 16] (128 values, like [4, 32]) with scales [1, 4]: 16 % 32 != 0
    out = reshape(fp4_codes((8, 16)), ue8m0(np.full((1, 4), 0x7F)), [4, 32])
    assert_rule(out, "ERROR_IF", bsl.RESHAPE_IN_BLOCK_CLAUSE)
    # one value of rank 0 to [1]: the counts agree (1 = 1), rank 0 is refused
    out = reshape(fp4_codes(()), ue8m0(0x7F), [1], out=[(1,), (1,)])
    assert_rule(out, "ERROR_IF", bsl.RESHAPE_RANK0_CLAUSE)


def test_reshape_list_lengths() -> None:
    v, s = fp4_codes((2, 64)), SCALES_2X2
    shape = [("shape", np.array([4, 32]), "shape")]
    # three members in: the third binds no type, the length rule fires first
    out = run(
        "RESHAPE_BLOCK_SCALED",
        [("v", v, "fp4e2m1"), ("s", s, "fp8ue8m0"), ("x", s, "fp8ue8m0")],
        [("ov", (4, 32), "fp4e2m1"), ("os", (4, 1), "fp8ue8m0")],
        constants=shape,
    )
    assert_rule(out, "ERROR_IF", bsl.RESHAPE_LEN_CLAUSE, "3 tensors")
    # values and scales in, the values alone out
    out = run(
        "RESHAPE_BLOCK_SCALED",
        [("v", v, "fp4e2m1"), ("s", s, "fp8ue8m0")],
        [("ov", (4, 32), "fp4e2m1")],
        constants=shape,
    )
    assert_rule(out, "ERROR_IF", bsl.RESHAPE_OUT_LEN_CLAUSE, "input holds 2 tensors, output 1")


def test_a_list_binds_its_mode() -> None:
    op = V11.operator("RESHAPE_BLOCK_SCALED")
    assert (
        op.argument("input").is_scaled_list and op.argument("input").scale_element_type == "scale_t"
    )
    # fp8e4m3 has a mode of values alone and one with fp8ue8m0 scales: the list's length
    # chooses
    alone = [("v", (2, 32), "fp8e4m3")]
    with_scales = [*alone, ("s", (2, 1), "fp8ue8m0")]
    for members, mode in (
        (alone, "fp8e4m3"),
        (with_scales, "fp8e4m3 with fp8ue8m0 scale factor"),
    ):
        outs = [(f"o{n}", s, dt) for n, s, dt in members]
        graph = single_operator_graph(
            "RESHAPE_BLOCK_SCALED",
            [*members, ("shape", (2,), "shape")],
            outs,
            {"block_size": "BLOCK_SIZE_32"},
            constants={"shape": np.array([2, 32])},
            spec=V11,
            strict=False,
        )
        operator = graph.main.operators[0]
        bound, problems = bind_types(op, operator, graph.main.tensors)
        assert not problems
        found = find_mode(op, bound, operator.attributes)
        assert found is not None and found.mode == mode
    # fp4e2m1 values alone: its only mode has scales, so no mode binds
    out = reshape(fp4_codes((2, 64)), None, [4, 32], block_size="BLOCK_SIZE_1")
    assert_rule(out, "ERROR_IF", TYPES_CLAUSE)
    # i8 values with scales: no i8 mode has a scale type
    out = reshape(np.zeros((2, 64)), SCALES_2X2, [4, 32], value_t="i8")
    assert_rule(out, "ERROR_IF", TYPES_CLAUSE)


def test_reshape_rank_is_level_checked() -> None:
    # rank(value_shape1) <= MAX_RANK: a rank-7 input at 8K (MAX_RANK 6) is unpredictable
    blocks = (1,) * 6 + (1,)
    out = reshape(fp4_codes((*blocks[:-1], 32)), ue8m0(np.full(blocks, 0x7F)), [32])
    assert_rule(out, "LEVEL_CHECK", "rank(value_shape1) <= MAX_RANK (7 > 6)")


# -- ROW_GATHER_BLOCK_SCALED -------------------------------------------------------------


def row_gather(
    values: np.ndarray,
    scales: np.ndarray | None,
    indices: Any,
    row_count: int,
    out: Sequence[tuple[int, ...]] | None = None,
    value_t: str = "fp4e2m1",
    block_size: str = "BLOCK_SIZE_32",
    index_t: str = "i32",
) -> Outcome:
    k = np.asarray(indices)
    n, c = values.shape[0], values.shape[-1]
    rows = k.shape[1] * max(row_count, 0)
    inputs: list[Tensor] = [("v", values, value_t)]
    if scales is not None:
        inputs.append(("s", scales, "fp8ue8m0"))
    if out is None:
        out = [(n, rows, c)] + ([(n, rows, c // 32)] if scales is not None else [])
    outputs = [("ov", out[0], value_t)] + [("os", s, "fp8ue8m0") for s in out[1:]]
    return run(
        "ROW_GATHER_BLOCK_SCALED",
        [*inputs, ("k", k, index_t)],
        outputs,
        constants=[("r", np.array([row_count]), "i32")],
        block_size=block_size,
    )


# [1, 5, 64] values (row r: encodings 4 * r + (c // 16) % 4 ...) with two scales per row,
# row r's scales 0x70 + 2r, 0x71 + 2r.
VALUES_5 = mx.from_bits((np.arange(5)[:, None] * 4 + np.arange(64)[None, :] // 16) % 16, FP4)[None]
SCALES_5 = ue8m0((0x70 + np.arange(10)).reshape(1, 5, 2))


def test_row_gather_row_count_2_by_hand() -> None:
    # indices [3, 0] with row_count 2: index 0 (k = 3) takes rows 3, 4 to output rows 0,
    # 1; index 1 (k = 0) rows 0, 1 to output rows 2, 3.  The scales take the same rows:
    # row 3's are 0x76, 0x77, row 4's 0x78, 0x79, row 0's 0x70, 0x71, row 1's 0x72, 0x73.
    out = row_gather(VALUES_5, SCALES_5, [[3, 0]], 2)
    assert codes(out, "os", UE8M0) == [[[0x76, 0x77], [0x78, 0x79], [0x70, 0x71], [0x72, 0x73]]]
    # row r's first value is 4r % 16: rows 3, 4, 0, 1 give 12, 0, 0, 4
    assert [row[0] for row in codes(out, "ov", FP4)[0]] == [12, 0, 0, 4]


def test_row_gather_values_alone_and_i64_indices() -> None:
    # i16 [1, 4, 3] (0 .. 11), index 2 with row_count 2: rows 2, 3 = [6 7 8], [9 10 11]
    v = np.arange(12).reshape(1, 4, 3)
    out = row_gather(v, None, [[2, 1]], 2, value_t="i16", block_size="BLOCK_SIZE_1", index_t="i64")
    assert out.kind == "valid", str(out)
    assert np.asarray(out.outputs["ov"]).tolist() == [
        [[6, 7, 8], [9, 10, 11], [3, 4, 5], [6, 7, 8]]
    ]


@pytest.mark.parametrize(
    ("case", "clause"),
    [
        # C = 48 is not a multiple of 32 (the scales of its two partial blocks given)
        (dict(values=VALUES_5[:, :, :48], out=[(1, 4, 48), (1, 4, 2)]), bsl.GATHER_C_CLAUSE),
        (dict(block_size="BLOCK_SIZE_1"), bsl.GATHER_TWO_BLOCK_CLAUSE),
        (dict(row_count=0, out=[(1, 0, 64), (1, 0, 2)]), ROW_COUNT_CLAUSE),
        # scales [1, 5, 1]: [N, K, C/block_size] is [1, 5, 2]
        (dict(scales=SCALES_5[:, :, :1]), INPUTS_CLAUSE),
        # the output rows W = 2, not W * row_count = 4
        (dict(out=[(1, 2, 64), (1, 2, 2)]), OUTPUTS_CLAUSE),
        # the values list's rank: [1, 1, 5, 64] (erratum row_gather_block_scaled-rank: 3)
        (
            dict(values=VALUES_5[None], scales=SCALES_5[None], out=[(1, 4, 64), (1, 4, 2)]),
            INPUTS_CLAUSE,
        ),
    ],
)
def test_row_gather_error_ifs(case: dict[str, Any], clause: str) -> None:
    args: dict[str, Any] = {"values": VALUES_5, "scales": SCALES_5, "indices": [[3, 0]]}
    args |= {"row_count": 2} | case
    assert_rule(row_gather(**args), "ERROR_IF", clause)


def test_row_gather_values_alone_block_size_and_list_length() -> None:
    v = np.zeros((1, 4, 32))
    out = row_gather(v, None, [[0]], 1, value_t="i8", block_size="BLOCK_SIZE_32")
    assert_rule(out, "ERROR_IF", bsl.GATHER_ONE_BLOCK_CLAUSE)
    three = run(
        "ROW_GATHER_BLOCK_SCALED",
        [
            ("v", VALUES_5, "fp4e2m1"),
            ("s", SCALES_5, "fp8ue8m0"),
            ("x", SCALES_5, "fp8ue8m0"),
            ("k", np.array([[0]]), "i32"),
        ],
        [("ov", (1, 1, 64), "fp4e2m1"), ("os", (1, 1, 2), "fp8ue8m0")],
        constants=[("r", np.array([1]), "i32")],
    )
    assert_rule(three, "ERROR_IF", bsl.GATHER_LEN_CLAUSE, "3 tensors")


def test_row_gather_rows_out_of_range_are_unpredictable() -> None:
    # k = 4 with row_count 2 reads rows 4 and 5 of K = 5: REQUIRE(k + row_count <= K)
    assert_rule(row_gather(VALUES_5, SCALES_5, [[4]], 2), "REQUIRE", ROW_RANGE_CLAUSE)
    # an i64 index near 2**63 does not wrap past the check
    out = row_gather(VALUES_5, SCALES_5, [[2**63 - 1]], 2, index_t="i64")
    assert_rule(out, "REQUIRE", ROW_RANGE_CLAUSE)


# -- compliance --------------------------------------------------------------------------


def test_values_and_scales_are_checked_exactly() -> None:
    assert {"RESHAPE_BLOCK_SCALED", "ROW_GATHER_BLOCK_SCALED"} <= DATA_MOVEMENT_OPERATORS
    for op in ("RESHAPE_BLOCK_SCALED", "ROW_GATHER_BLOCK_SCALED"):
        # float values and scales: equal, NaN for NaN (the NaN scale included)
        for dt in (FP4, dtypes.FP6E3M2, UE8M0, dtypes.FP8E5M2):
            assert for_operator(op, dt).mode is Mode.EXACT_NAN
        assert for_operator(op, dtypes.MXINT8).mode is Mode.EXACT  # fixed point: equal

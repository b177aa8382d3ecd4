"""The block-scaled modes (TOSA 1.1 bs32_*) of the operators that move elements:
CONCAT, CONST, IDENTITY, RESHAPE, REVERSE, SLICE, TILE, TRANSPOSE.  Each value moves
with its block's scale (tensor_read_value_scale / tensor_write_value_scale), and the
ERROR_IFs keep blocks whole.  Values worked by hand; and the judge of such an output:
exact on values and scales."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from block_helpers import composite_result as result
from block_helpers import exps
from reference_helpers import assert_rule

from conformance import dtypes as D
from conformance.backends.base import BackendResult
from conformance.block_tensor import BlockScaled
from conformance.builder import single_operator_graph
from conformance.spec import load_revision, spec_in_use
from conformance.verdicts import FAILED, PASSED, judge
from reference import compliance, mx
from reference.engine import evaluate
from reference.ops.data_layout import (
    BLOCK_RANK1_CLAUSE,
    BLOCK_SHAPE1_CLAUSE,
    BLOCK_SHAPE_CLAUSE,
    CONCAT_BLOCK_INPUT_CLAUSE,
    SLICE_BLOCK_START_CLAUSE,
    TRANSPOSE_BLOCK_PERMS_CLAUSE,
)
from reference.ops.data_nodes import (
    CONST_BLOCK_SHAPE_CLAUSE,
    IDENTITY_BLOCK_RANK_CLAUSE,
    IDENTITY_BLOCK_SHAPE_CLAUSE,
)
from reference.outcome import Outcome
from vectors.pack_model import Check, LoadedVector, Provenance, Requirements

SPEC = load_revision("1.1-draft")
FP4 = D.dtype("bs32_fp8ue8m0_fp4e2m1")
E4M3 = D.dtype("bs32_fp8ue8m0_fp8e4m3")
MX8 = D.dtype("bs32_fp8ue8m0_mxint8")
SHAPE = D.SHAPE


@pytest.fixture(autouse=True)
def _the_1_1_spec() -> Iterator[None]:
    with spec_in_use(SPEC):
        yield


def pair(dt: D.DType, values: np.ndarray, exponents: Any) -> BlockScaled:
    """A composite of ``values`` (as the value type holds them) whose scales are
    2**exponents (None: the NaN scale), shaped as the values' blocks."""
    e = np.array(exponents, dtype=object)
    codes = np.where(e == None, mx.UE8M0_NAN, np.where(e == None, 0, e) + mx.UE8M0_BIAS)  # noqa: E711
    vt = D.dtype(dt.block_value)
    held = mx.from_bits(values, vt) if values.dtype.kind in "iu" and vt.kind != "fixed" else values
    return BlockScaled.of(dt, held.astype(vt.storage), mx.from_bits(codes.astype(int), D.FP8UE8M0))


def run(
    op: str,
    inputs: list[tuple[str, tuple[int, ...], D.DType]],
    out_shape: tuple[int, ...],
    values: dict[str, Any],
    attrs: dict[str, Any] | None = None,
    constants: dict[str, Any] | None = None,
    out_dt: D.DType | None = None,
) -> Outcome:
    dt = out_dt or inputs[0][2]
    graph = single_operator_graph(
        op, inputs, [("y", out_shape, dt)], attrs or {}, spec=SPEC, constants=constants,
        strict=False,
    )  # fmt: skip
    return evaluate(graph, values, spec=SPEC)


def fp4(codes: list[int] | np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    return np.asarray(codes).reshape(shape)


# -------------------------------------------------------------------------------- REVERSE


def test_reverse_along_the_innermost_axis_swaps_the_blocks_scales() -> None:
    # 1 x 64 fp4e2m1: codes 0..15 four times, scales [2**-3, 2**5].  Reversed, element
    # i takes element 63 - i: output block 0 holds input block 1's values in reverse
    # and so its scale: values [15, 14, ..., 0, 15, ...], scales [2**5, 2**-3].
    x = pair(FP4, fp4(np.tile(np.arange(16), 4), (1, 64)), [[-3, 5]])
    y = result(run("REVERSE", [("x", (1, 64), FP4)], (1, 64), {"x": x}, {"axis": 1}))
    assert list(mx.to_bits(y.values, D.FP4E2M1)[0, :17]) == [*range(15, -1, -1), 15]
    assert exps(y.scales) == [5, -3]


def test_reverse_along_an_outer_axis_moves_rows_and_their_scales() -> None:
    x = pair(FP4, fp4(np.repeat([1, 2], 32), (2, 32)), [[-127], [None]])  # NaN scale row 1
    y = result(run("REVERSE", [("x", (2, 32), FP4)], (2, 32), {"x": x}, {"axis": 0}))
    assert list(mx.to_bits(y.values, D.FP4E2M1)[:, 0]) == [2, 1]
    assert exps(y.scales) == [None, -127]


def test_reverse_needs_whole_blocks() -> None:
    x = pair(FP4, fp4([0] * 40, (1, 40)), [[0, 0]])  # 40 = one block and 8
    outcome = run("REVERSE", [("x", (1, 40), FP4)], (1, 40), {"x": x}, {"axis": 0})
    assert_rule(outcome, "error", BLOCK_SHAPE_CLAUSE, "block size 32")


# ------------------------------------------------------------------ CONCAT, SLICE, TILE


def test_concat_along_the_innermost_axis_appends_blocks() -> None:
    # [1, 32] (scale 2**1) then [1, 64] (scales 2**2, 2**3): [1, 96], scales 1, 2, 3
    a = pair(E4M3, np.full((1, 32), 0.5, np.float32), [[1]])
    b = pair(E4M3, np.full((1, 64), -2.0, np.float32), [[2, 3]])
    inputs = [("a", (1, 32), E4M3), ("b", (1, 64), E4M3)]
    y = result(run("CONCAT", inputs, (1, 96), {"a": a, "b": b}, {"axis": 1}))
    assert exps(y.scales) == [1, 2, 3]
    assert y.values.astype(float)[0, 31] == 0.5 and y.values.astype(float)[0, 32] == -2.0


def test_concat_rules_of_whole_blocks() -> None:
    a = pair(E4M3, np.zeros((1, 33), np.float32), [[0, 0]])
    b = pair(E4M3, np.zeros((1, 31), np.float32), [[0]])
    inputs = [("a", (1, 33), E4M3), ("b", (1, 31), E4M3)]
    # 33 + 31 = 64: the output is whole, input 0 is not (the rule inside the loop)
    outcome = run("CONCAT", inputs, (1, 64), {"a": a, "b": b}, {"axis": 1})
    assert_rule(outcome, "error", CONCAT_BLOCK_INPUT_CLAUSE, "input 0 [1, 33]")
    # along axis 0 an output of 33 columns: the output's rule comes first
    inputs = [("a", (1, 33), E4M3), ("b", (1, 33), E4M3)]
    outcome = run("CONCAT", inputs, (2, 33), {"a": a, "b": a.copy()}, {"axis": 0})
    assert_rule(outcome, "error", BLOCK_SHAPE_CLAUSE, "output [2, 33]")


def slice_of(start: list[int], size: list[int]) -> Outcome:
    x = pair(FP4, fp4(np.arange(96) % 16, (1, 96)), [[-1, 0, 1]])
    return run(
        "SLICE", [("x", (1, 96), FP4), ("start", (2,), SHAPE), ("size", (2,), SHAPE)],
        tuple(size), {"x": x},
        constants={"start": np.array(start, np.int64), "size": np.array(size, np.int64)},
    )  # fmt: skip


def test_slice_takes_whole_blocks_from_a_block_boundary() -> None:
    # elements 32..95: blocks 1 and 2, scales 2**0 and 2**1; values 32 % 16 = 0 first
    y = result(slice_of([0, 32], [1, 64]))
    assert exps(y.scales) == [0, 1]
    assert mx.to_bits(y.values, D.FP4E2M1)[0, 0] == 0
    assert_rule(slice_of([0, 16], [1, 64]), "error", SLICE_BLOCK_START_CLAUSE, "start [0, 16]")
    assert_rule(slice_of([0, 0], [1, 48]), "error", BLOCK_SHAPE_CLAUSE, "output [1, 48]")


def test_tile_repeats_blocks_and_scales() -> None:
    x = pair(MX8, np.arange(-16, 16, dtype=np.int8).reshape(1, 32), [[7]])
    graph_inputs = [("x", (1, 32), MX8), ("multiples", (2,), SHAPE)]
    outcome = run(
        "TILE", graph_inputs, (2, 64), {"x": x}, constants={"multiples": np.array([2, 2])}
    )
    y = result(outcome)
    assert exps(y.scales) == [7, 7, 7, 7]  # [2, 64]: two blocks a row, two rows
    assert y.values[1, 32] == -16 and y.values[0, 63] == 15
    bad = pair(MX8, np.zeros((1, 16), np.int8), [[0]])
    outcome = run("TILE", [("x", (1, 16), MX8), ("multiples", (2,), SHAPE)], (1, 32),
                  {"x": bad}, constants={"multiples": np.array([1, 2])})  # fmt: skip
    assert_rule(outcome, "error", BLOCK_SHAPE1_CLAUSE, "input1 [1, 16]")


# --------------------------------------------------------------------- TRANSPOSE, RESHAPE


def test_transpose_keeps_the_innermost_axis() -> None:
    # [2, 3, 32] with scale exponents e[i][j] = 3i + j; perms (1, 0, 2) -> [3, 2, 32]
    # and the scales transposed alike: out[j][i] = 3i + j
    x = pair(FP4, fp4(np.zeros(192, int), (2, 3, 32)), [[[0], [1], [2]], [[3], [4], [5]]])
    y = result(run("TRANSPOSE", [("x", (2, 3, 32), FP4)], (3, 2, 32), {"x": x},
                   {"perms": (1, 0, 2)}))  # fmt: skip
    assert exps(y.scales) == [0, 3, 1, 4, 2, 5]
    # moving the innermost axis would split blocks: an error once the shapes agree
    outcome = run("TRANSPOSE", [("x", (2, 3, 32), FP4)], (32, 3, 2), {"x": x}, {"perms": (2, 1, 0)})
    assert_rule(outcome, "error", TRANSPOSE_BLOCK_PERMS_CLAUSE, "perms [2, 1, 0]")


def reshape(x: BlockScaled, shape: tuple[int, ...]) -> Outcome:
    return run(
        "RESHAPE", [("x", x.shape, x.dtype), ("shape", (len(shape),), SHAPE)], shape,
        {"x": x}, constants={"shape": np.array(shape, np.int64)},
    )  # fmt: skip


def test_reshape_keeps_the_blocks_in_row_major_order() -> None:
    x = pair(FP4, fp4(np.arange(128) % 16, (2, 64)), [[1, 2], [3, 4]])
    assert exps(result(reshape(x, (4, 32))).scales) == [1, 2, 3, 4]  # one block a row
    assert result(reshape(x, (128,))).scales.shape == (4,)
    assert_rule(reshape(x, (8, 16)), "error", BLOCK_SHAPE_CLAUSE, "output [8, 16]")
    one = pair(FP4, fp4([3], ()), None)  # rank 0 (one scale): a must-fail input
    assert_rule(reshape(one, (1,)), "error", BLOCK_RANK1_CLAUSE)


# ------------------------------------------------------------------------ CONST, IDENTITY


def test_identity_and_const_pass_values_and_scales() -> None:
    x = pair(E4M3, np.array([[np.nan, -0.0] * 16], np.float32), [[None]])
    y = result(run("IDENTITY", [("x", (1, 32), E4M3)], (1, 32), {"x": x}))
    assert y.same(x)
    c = result(run("CONST", [], (1, 32), {}, {"values": x}, out_dt=E4M3))
    assert c.same(x)
    odd = pair(E4M3, np.zeros((1, 31), np.float32), [[0]])
    outcome = run("CONST", [], (1, 31), {}, {"values": odd}, out_dt=E4M3)
    assert_rule(outcome, "error", CONST_BLOCK_SHAPE_CLAUSE, "shape [1, 31]")
    outcome = run("IDENTITY", [("x", (1, 31), E4M3)], (1, 31), {"x": odd})
    assert_rule(outcome, "error", IDENTITY_BLOCK_SHAPE_CLAUSE)
    scalar = pair(E4M3, np.array(1.0, np.float32), 0)
    assert_rule(run("IDENTITY", [("x", (), E4M3)], (), {"x": scalar}), "error",
                IDENTITY_BLOCK_RANK_CLAUSE)  # fmt: skip


def test_a_composite_input_must_be_values_and_scales() -> None:
    graph = single_operator_graph(
        "IDENTITY", [("x", (1, 32), FP4)], [("y", (1, 32), FP4)], spec=SPEC
    )
    with pytest.raises(Exception, match="holds values and scales, got an array"):
        evaluate(graph, {"x": np.zeros((1, 32), D.FP4E2M1.storage)}, spec=SPEC)


# --------------------------------------------------------------------------------- judging


def test_the_judge_is_exact_on_values_and_scales() -> None:
    ref = pair(E4M3, np.array([[np.nan, -0.0] * 32], np.float32), [[None, 3]])
    desc = compliance.for_operator("REVERSE", E4M3)
    assert desc.mode is compliance.Mode.EXACT and desc.dtype is E4M3
    assert compliance.check(ref, desc, ref.copy()).passed  # NaN value and NaN scale match
    zero = ref.copy()
    zero.values[0, 1] = np.float32(0.0).astype(zero.values.dtype)  # +0 for -0
    v = compliance.check(ref, desc, zero)
    assert not v.passed and v.failing_count == 1
    assert "FAIL (1 of 64 elements in 2 blocks): mismatch at [0, 1]" in v.message
    scale = ref.copy()
    scale.scales[0, 1] = mx.from_bits(np.array(mx.UE8M0_BIAS + 4), D.FP8UE8M0)
    v = compliance.check(ref, desc, scale)
    # one wrong scale fails its block's 32 elements: each holds another number
    assert not v.passed and v.failing_count == 32
    assert "1 of 2 scales wrong" in v.message and "x scale 8, got" in v.message
    with pytest.raises(ValueError, match="values and scales, got ndarray"):
        compliance.check(ref, desc, ref.values)


def _vector(expected: BlockScaled) -> LoadedVector:
    graph = single_operator_graph(
        "IDENTITY", [("x", (1, 64), E4M3)], [("y", (1, 64), E4M3)], spec=SPEC
    )
    mode = SPEC.operator("IDENTITY").mode("MX (in_out_t=bs32_fp8ue8m0_fp8e4m3_t)")
    return LoadedVector(
        "IDENTITY_bs32", "IDENTITY", mode.mode, "valid", graph, {"x": expected},
        {"y": expected}, {"y": Check(compliance.for_operator("IDENTITY", E4M3))},
        Requirements.for_mode(SPEC, mode, "8K"), Provenance("hand", 0, 0, "-"),
    )  # fmt: skip


def test_the_runner_judges_a_composite_output() -> None:
    ref = pair(E4M3, np.linspace(-4, 4, 64, dtype=np.float32).reshape(1, 64), [[0, -2]])
    vector = _vector(ref)
    assert judge(vector, BackendResult({"y": ref.copy()})).verdict == PASSED
    wrong = replace(ref, scales=np.flip(ref.scales, axis=1).copy())  # the blocks' scales swapped
    got = judge(vector, BackendResult({"y": wrong}))
    assert got.verdict == FAILED and got.outputs[0].failing == 64
    got = judge(vector, BackendResult({"y": ref.values}))  # the values alone
    assert got.verdict == FAILED and "unusable output" in got.outputs[0].message

"""Reference evaluator, TOSA 1.1's MATMUL_T (pseudocode/operators/MATMUL_T.tosac) and
the 1.1 typing of MATMUL and the convolutions: A [N,H,C] times the transpose of
B [D,W,C], D = N or 1; zero points checked per operand (A_t, B_t), in_zp_t /
weight_zp_t and A_zp_t / B_zp_t tied to their operand's type by the mode; the
mixed-precision modes, each operand read in its own type; CONV2D's bf16 accumulator.

Every expected value is worked out by hand from the 1.1 pseudocode in the comment
beside it."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
from reference_helpers import assert_rule, run_with_constants, valid

from conformance.dtypes import dtype
from conformance.spec import load_revision
from reference.arguments import INPUTS_CLAUSE, TYPES_CLAUSE
from reference.ops.matmul_t import BATCH_CLAUSE
from reference.ops.tensor_conv import (
    MATMUL_ZP_CLAUSE,
    MATMUL_ZP_INPUT_CLAUSE,
    matmul_zero_point_rules,
    zero_point_type_var,
)

SPEC = load_revision("1.1-draft")
V1_0 = load_revision("1.0")
DRAFT = load_revision("2024-04-draft")
A_ZP_CLAUSE = "!is_same<A_t,i8_t>() && A_zp != 0"
B_ZP_CLAUSE = "!is_same<B_t,i8_t>() && B_zp != 0"

run = functools.partial(run_with_constants, spec=SPEC)


def arr(values: Any, dt: str) -> np.ndarray:
    return np.asarray(values, dtype=np.float64).astype(dtype(dt).storage)


def matmul_t(
    a: Any,
    b: Any,
    types: tuple[str, str, str] = ("i8", "i8", "i32"),
    a_zp: float = 0,
    b_zp: float = 0,
    out: tuple[int, ...] | None = None,
    op: str = "MATMUL_T",
) -> Any:
    """MATMUL_T (or MATMUL) of A and B in types (A_t, B_t, out_t), zero points as the
    [1] constant inputs 1.1 declares (typed A_zp_t = A_t, B_zp_t = B_t)."""
    a_t, b_t, out_t = types
    av, bv = arr(a, a_t), arr(b, b_t)
    if out is None:
        out = (av.shape[0], av.shape[1], bv.shape[1] if op == "MATMUL_T" else bv.shape[2])
    return run(
        op,
        [("a", av, a_t), ("b", bv, b_t)],
        out,
        out_t,
        constants=[("a_zp", arr([a_zp], a_t), a_t), ("b_zp", arr([b_zp], b_t), b_t)],
    )


# -- arithmetic ------------------------------------------------------------------------


def test_i8_by_hand_with_zero_points() -> None:
    # A = [[1,2,3],[4,5,6]], B = [[1,0,-1],[2,1,0]] (rows are B's W = 2 columns of C = 3).
    # A_zp 1, B_zp -1: A - 1 = [[0,1,2],[3,4,5]], B + 1 = [[2,1,0],[3,2,1]].
    # out[h][w] = sum_c (A-1)[h][c] * (B+1)[w][c]:
    #   h0 w0: 0*2 + 1*1 + 2*0 = 1      h0 w1: 0*3 + 1*2 + 2*1 = 4
    #   h1 w0: 3*2 + 4*1 + 5*0 = 10     h1 w1: 3*3 + 4*2 + 5*1 = 22
    a = [[[1, 2, 3], [4, 5, 6]]]
    b = [[[1, 0, -1], [2, 1, 0]]]
    assert valid(matmul_t(a, b, a_zp=1, b_zp=-1)).tolist() == [[[1, 4], [10, 22]]]
    # Without zero points: h0 w0 = 1 - 3 = -2, h0 w1 = 2 + 2 = 4, h1 w0 = 4 - 6 = -2,
    # h1 w1 = 8 + 5 = 13.
    assert valid(matmul_t(a, b)).tolist() == [[[-2, 4], [-2, 13]]]


def test_b_broadcast_when_d_is_1() -> None:
    # N = 2, D = 1: both batches use B[0] = [[1, 1], [1, -1]] (W = 2, C = 2).
    # Batch 0: A = [[2, 3]]: w0 = 2 + 3 = 5, w1 = 2 - 3 = -1.
    # Batch 1: A = [[-4, 1]]: w0 = -4 + 1 = -3, w1 = -4 - 1 = -5.
    out = matmul_t([[[2, 3]], [[-4, 1]]], [[[1, 1], [1, -1]]])
    assert valid(out).tolist() == [[[5, -1]], [[-3, -5]]]


def test_each_batch_its_own_b_when_d_is_n() -> None:
    # N = D = 2, C = 1, W = 1: out[n] = A[n] * B[n]: 3 * 5 = 15 and 3 * -7 = -21 (B[0]
    # for both would give 15 twice).
    assert valid(matmul_t([[[3]], [[3]]], [[[5]], [[-7]]])).tolist() == [[[15]], [[-21]]]


def test_i16_into_i48_is_exact() -> None:
    # A times itself (B = A, W = 1): 2 * (32767**2 + 32768**2) = 2 * (1073676289 +
    # 1073741824) = 4294836226, past int32's 2147483647: the i48 accumulator holds it.
    a = [[[32767, -32768, 32767, -32768]]]
    out = matmul_t(a, a, ("i16", "i16", "i48"))
    assert valid(out).tolist() == [[[4294836226]]]


def test_mixed_precision_operands_each_in_its_own_type() -> None:
    # Mixed precision fp with fp32 accumulate (A_t=fp8e4m3_t, B_t=fp16_t): A = [1.5, -2]
    # is exact in fp8e4m3; B = fp16(1/3) = 0.333251953125, fp16(0.1) = 0.0999755859375.
    # fp64: 1.5 * 0.333251953125 - 2 * 0.0999755859375 = 0.49987792968750 - 0.1999511718750
    # = 0.2999267578125 (B read as fp16, not rounded to fp8: fp8(1/3) would be 0.34375).
    out = matmul_t([[[1.5, -2.0]]], [[[1 / 3, 0.1]]], ("fp8e4m3", "fp16", "fp32"))
    assert float(valid(out).reshape(-1)[0]) == 0.2999267578125


def test_bf16_accumulate_mode_reads_fp16_and_fp8() -> None:
    # Mixed precision fp16 x fp input with bf16 accumulate (B_t=fp8e5m2_t): A = fp16
    # 1.0009765625 (1 + 2**-10, not a bf16 value), B = fp8e5m2 3.0; the fp64 product
    # 3.0029296875 keeps A's low bit (a bf16 A would give exactly 3.0).
    out = matmul_t([[[1.0009765625]]], [[[3.0]]], ("fp16", "fp8e5m2", "bf16"))
    assert float(valid(out).reshape(-1)[0]) == 3.0029296875


# -- ERROR_IFs -------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "d"), [(2, 3), (1, 2), (3, 2)])
def test_d_neither_n_nor_1_is_an_error(n: int, d: int) -> None:
    a = np.ones((n, 1, 2))
    b = np.ones((d, 1, 2))
    assert_rule(matmul_t(a, b, out=(n, 1, 1)), "ERROR_IF", BATCH_CLAUSE, f"D={d}, N={n}")


def test_batch_rule_comes_before_the_zero_points() -> None:
    # D = 3, N = 2 and a non-zero A_zp in fp16: the pseudocode checks D first.
    a, b = np.ones((2, 1, 1)), np.ones((3, 1, 1))
    out = matmul_t(a, b, ("fp16", "fp16", "fp16"), a_zp=1.0, out=(2, 1, 1))
    assert_rule(out, "ERROR_IF", BATCH_CLAUSE)


@pytest.mark.parametrize(
    ("types", "a_zp", "b_zp", "clause"),
    [
        (("fp16", "fp16", "fp16"), 1.0, 0.0, A_ZP_CLAUSE),
        (("fp16", "fp16", "fp16"), 0.0, -1.0, B_ZP_CLAUSE),
        (("fp16", "fp16", "fp16"), 2.0, 2.0, A_ZP_CLAUSE),  # A's rule is checked first
        (("i16", "i16", "i48"), 0, 5, B_ZP_CLAUSE),
        (("bf16", "fp8e4m3", "fp32"), 0.0, 0.5, B_ZP_CLAUSE),
    ],
)
def test_zero_point_rules_per_operand(
    types: tuple[str, str, str], a_zp: float, b_zp: float, clause: str
) -> None:
    out = matmul_t([[[1, 2]]], [[[3, 4]]], types, a_zp=a_zp, b_zp=b_zp)
    assert_rule(out, "ERROR_IF", clause)


def test_i8_zero_points_are_allowed_on_both() -> None:
    # (5 - (-128)) * (7 - 127) = 133 * -120 = -15960
    assert valid(matmul_t([[[5]]], [[[7]]], a_zp=-128, b_zp=127)).tolist() == [[[-15960]]]


def test_contraction_mismatch_is_a_declaration_error() -> None:
    # A [1,1,2] against B [1,1,3]: C is 2 and 3.
    assert_rule(matmul_t(np.ones((1, 1, 2)), np.ones((1, 1, 3))), "error", INPUTS_CLAUSE)


def test_zero_point_of_another_type_than_its_operand() -> None:
    # A_zp_t is tied to A_t by every mode: an i16 A_zp with an i8 A binds no mode.
    out = run(
        "MATMUL_T",
        [("a", arr([[[1]]], "i8"), "i8"), ("b", arr([[[1]]], "i8"), "i8")],
        (1, 1, 1),
        "i32",
        constants=[("a_zp", arr([0], "i16"), "i16"), ("b_zp", arr([0], "i8"), "i8")],
    )
    assert_rule(out, "error", TYPES_CLAUSE)


# -- MATMUL and the convolutions, typed per operand in 1.1 ---------------------------------


def test_matmul_zero_point_rules_follow_the_declarations() -> None:
    # The draft and 1.0 type A and B with one in_t: one rule for both; 1.1 gives each
    # its own (A_t, B_t), and MATMUL_T too.
    draft = matmul_zero_point_rules(DRAFT.operator("MATMUL"))
    assert draft == [(("A_zp", "B_zp"), "in_t", MATMUL_ZP_CLAUSE)]
    v1 = matmul_zero_point_rules(V1_0.operator("MATMUL"))
    assert v1 == [(("A_zp", "B_zp"), "in_t", MATMUL_ZP_INPUT_CLAUSE)]
    for op in ("MATMUL", "MATMUL_T"):
        rules = matmul_zero_point_rules(SPEC.operator(op))
        assert rules == [(("A_zp",), "A_t", A_ZP_CLAUSE), (("B_zp",), "B_t", B_ZP_CLAUSE)]


def test_zero_point_rules_test_the_operand_type_not_the_zero_points() -> None:
    # CONV2D's input_zp is typed in_zp_t in 1.1, but its rule tests in_t.
    conv = SPEC.operator("CONV2D")
    assert conv.argument("input_zp").element_type == "in_zp_t"
    assert zero_point_type_var(conv, "input_zp") == "in_t"
    assert zero_point_type_var(conv, "weight_zp") == "weight_t"
    assert zero_point_type_var(SPEC.operator("MATMUL_T"), "B_zp") == "B_t"


def test_matmul_mixed_fp8_b_zero_point() -> None:
    # 1.1 MATMUL fp8e4m3xfp8e5m2 with fp32 accumulate: a non-zero B_zp breaks B's rule
    # alone; the valid case is 2 * 3 = 6 with B as [N, C, W].
    ok = matmul_t([[[2.0]]], [[[3.0]]], ("fp8e4m3", "fp8e5m2", "fp32"), op="MATMUL")
    assert float(valid(ok).reshape(-1)[0]) == 6.0
    bad = matmul_t([[[2.0]]], [[[3.0]]], ("fp8e4m3", "fp8e5m2", "fp32"), b_zp=1.0, op="MATMUL")
    assert_rule(bad, "ERROR_IF", B_ZP_CLAUSE)


def conv2d_1_1(x: Any, w: Any, types: tuple[str, str, str], acc: str) -> Any:
    in_t, w_t, out_t = types
    xv, wv = arr(x, in_t), arr(w, w_t)
    n, ih, iw, _ = xv.shape
    oc, kh, kw, _ = wv.shape
    return run(
        "CONV2D",
        [("x", xv, in_t), ("w", wv, w_t), ("b", arr([0.0] * oc, out_t), out_t)],
        (n, ih - kh + 1, iw - kw + 1, oc),
        out_t,
        constants=[("xz", arr([0.0], in_t), in_t), ("wz", arr([0.0], w_t), w_t)],
        pad=(0, 0, 0, 0),
        stride=(1, 1),
        dilation=(1, 1),
        acc_type=acc,
    )


def test_conv2d_mixed_fp32_input_fp16_weight() -> None:
    # Mixed precision fp with fp32 accumulate (in_t=fp32_t, weight_t=fp16_t), 1x1 kernel:
    # x = 1 + 2**-13 (an fp32 value fp16 cannot hold), w = 0.5: fp64 product
    # 0.5 + 2**-14 = 0.50006103515625.
    out = conv2d_1_1([[[[1 + 2**-13]]]], [[[[0.5]]]], ("fp32", "fp16", "fp32"), "FP32")
    assert float(valid(out).reshape(-1)[0]) == 0.5 + 2**-14


def test_conv2d_bf16_accumulator_mode() -> None:
    # Mixed precision fp with bf16/fp32 accumulate (in_t=fp8e4m3_t, weight_t=bf16_t,
    # acc_t=bf16_t), out_t fp16; acc_type BF16 selects it.  2 taps (KW 2): 1.5 * 0.25 +
    # (-3) * 0.125 = 0.375 - 0.375 = 0.
    out = conv2d_1_1(
        [[[[1.5], [-3.0]]]], [[[[0.25], [0.125]]]], ("fp8e4m3", "bf16", "fp16"), "BF16"
    )
    assert float(valid(out).reshape(-1)[0]) == 0.0
    # The same tensors with FP16: no mode of (fp8e4m3, bf16, fp16) accumulates in fp16.
    bad = conv2d_1_1(
        [[[[1.5], [-3.0]]]], [[[[0.25], [0.125]]]], ("fp8e4m3", "bf16", "fp16"), "FP16"
    )
    assert_rule(bad, "error", TYPES_CLAUSE)


def test_conv2d_mixed_zero_point_tests_in_t() -> None:
    # in_t fp16 with weight_t fp8e5m2 (fp32 accumulate): a non-zero input_zp breaks the
    # rule on in_t, spelled with in_t as 1.1 writes it.
    xv, wv = arr([[[[1.0]]]], "fp16"), arr([[[[1.0]]]], "fp8e5m2")
    out = run(
        "CONV2D",
        [("x", xv, "fp16"), ("w", wv, "fp8e5m2"), ("b", arr([0.0], "fp32"), "fp32")],
        (1, 1, 1, 1),
        "fp32",
        constants=[("xz", arr([1.0], "fp16"), "fp16"), ("wz", arr([0.0], "fp8e5m2"), "fp8e5m2")],
        pad=(0, 0, 0, 0),
        stride=(1, 1),
        dilation=(1, 1),
        acc_type="FP32",
    )
    assert_rule(out, "ERROR_IF", "!is_same<in_t,i8_t>() && input_zp != 0")

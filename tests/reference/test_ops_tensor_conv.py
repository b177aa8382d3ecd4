"""Reference evaluator: CONV2D, CONV3D, DEPTHWISE_CONV2D, TRANSPOSE_CONV2D,
FULLY_CONNECTED, MATMUL."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from reference_helpers import (
    ACC_NAME,
    ALL_OPS,
    CONV_OPS,
    assert_rule,
    conv2d,
    fully_connected,
    matmul,
    output,
    run,
    transpose_conv,
    zero,
)

from conformance.dtypes import DType, dtype
from conformance.spec import load_spec
from reference.arguments import TYPES_CLAUSE
from reference.outcome import Outcome

SPEC = load_spec()
I32_MAX = (1 << 31) - 1
I48_MIN, I48_MAX = -(1 << 47), (1 << 47) - 1


GRID = np.arange(1, 17).reshape(1, 4, 4, 1)  # rows 1..4, 5..8, 9..12, 13..16
KERNEL = np.array([[1, 2], [3, 4]]).reshape(1, 2, 2, 1)


# -- hand-checked values ----------------------------------------------------------------


@pytest.mark.parametrize("types", [("i8", "i8", "i32"), ("fp32", "fp32", "fp32")])
def test_conv2d_padding_and_stride_by_hand(types: tuple[str, str, str]) -> None:
    # pad 1 on every side, stride 2: OH = (4 - 1 + 1 + 1 - (2 - 1)) / 2 + 1 = 3.
    # Output (oy, ox) reads input rows 2*oy - 1 + ky, columns 2*ox - 1 + kx; reads
    # that fall in the padding are skipped.  Bias 10.
    #   (0,0): only (0,0)=1 * w[1][1]=4                          = 4    -> 14
    #   (0,1): (0,1)=2 * 3 + (0,2)=3 * 4                         = 18   -> 28
    #   (0,2): (0,3)=4 * 3                                       = 12   -> 22
    #   (1,0): (1,0)=5 * 2 + (2,0)=9 * 4                         = 46   -> 56
    #   (1,1): 6*1 + 7*2 + 10*3 + 11*4                           = 94   -> 104
    #   (1,2): (1,3)=8 * 1 + (2,3)=12 * 3                        = 44   -> 54
    #   (2,0): (3,0)=13 * 2                                      = 26   -> 36
    #   (2,1): 14*1 + 15*2                                       = 44   -> 54
    #   (2,2): 16*1                                              = 16   -> 26
    out = conv2d(GRID, KERNEL, np.array([10]), (1, 3, 3, 1), types, pad=(1, 1, 1, 1), stride=(2, 2))
    assert output(out).reshape(3, 3).tolist() == [[14, 28, 22], [56, 104, 54], [36, 54, 26]]


def test_conv2d_dilation_and_zero_points_by_hand() -> None:
    # dilation 2: OH = (4 - 1 - (2 - 1) * 2) / 1 + 1 = 2; the taps are 2 apart.
    # input_zp 1 and weight_zp 1: x - 1 and w - 1 = [[0, 1], [2, 3]].
    #   (0,0): (1-1)*0 + (3-1)*1 + (9-1)*2 + (11-1)*3   = 0 + 2 + 16 + 30 = 48
    #   (0,1): (2-1)*0 + (4-1)*1 + (10-1)*2 + (12-1)*3  = 0 + 3 + 18 + 33 = 54
    #   (1,0): (5-1)*0 + (7-1)*1 + (13-1)*2 + (15-1)*3  = 0 + 6 + 24 + 42 = 72
    #   (1,1): (6-1)*0 + (8-1)*1 + (14-1)*2 + (16-1)*3  = 0 + 7 + 26 + 45 = 78
    out = conv2d(
        GRID, KERNEL, np.array([0]), (1, 2, 2, 1), dilation=(2, 2), input_zp=1, weight_zp=1
    )
    assert output(out).reshape(2, 2).tolist() == [[48, 54], [72, 78]]


def test_conv2d_bias_per_channel_and_broadcast() -> None:
    x = np.array([1, 2]).reshape(1, 1, 1, 2)
    w = np.array([[1, 1], [1, -1], [0, 3]]).reshape(3, 1, 1, 2)
    # Channel dot products: 1+2 = 3, 1-2 = -1, 0+6 = 6.
    out = conv2d(x, w, np.array([100, 200, 300]), (1, 1, 1, 3))
    assert output(out).reshape(-1).tolist() == [103, 199, 306]
    out = conv2d(x, w, np.array([100]), (1, 1, 1, 3))  # BC == 1: one bias for all
    assert output(out).reshape(-1).tolist() == [103, 99, 106]


def test_conv2d_i4_weights() -> None:
    # signed 8x4: i4 weights held in int8, range -7..7.
    x = np.array([100, -100, 3]).reshape(1, 1, 1, 3)
    w = np.array([7, -7, 2]).reshape(1, 1, 1, 3)
    out = conv2d(x, w, np.array([1]), (1, 1, 1, 1), ("i8", "i4", "i32"))
    assert output(out).reshape(-1).tolist() == [700 + 700 + 6 + 1]


def test_conv3d_by_hand() -> None:
    # Input depth slices [[1,2],[3,4]] and [[5,6],[7,8]]; a depth-only kernel [1, 10].
    # pad_d0 = 1: OD = (2 - 1 + 1 + 0 - 1) / 1 + 1 = 2.
    #   od=0 reads depth -1 (skipped) and 0: 10 * [[1,2],[3,4]]
    #   od=1 reads depths 0 and 1: [[1,2],[3,4]] + 10 * [[5,6],[7,8]] = [[51,62],[73,84]]
    x = np.arange(1, 9).reshape(1, 2, 2, 2, 1)
    w = np.array([1, 10]).reshape(1, 2, 1, 1, 1)
    attrs = {
        "pad": (1, 0, 0, 0, 0, 0),
        "stride": (1, 1, 1),
        "dilation": (1, 1, 1),
        "acc_type": "INT32",
        "input_zp": 0,
        "weight_zp": 0,
    }
    out = run(
        "CONV3D", [("x", x, "i8"), ("w", w, "i8"), ("b", np.array([0]), "i32")],
        (1, 2, 2, 2, 1), "i32", **attrs,
    )  # fmt: skip
    got = output(out).reshape(2, 2, 2)
    assert got.tolist() == [[[10, 20], [30, 40]], [[51, 62], [73, 84]]]


def test_depthwise_conv2d_by_hand() -> None:
    # C=2 channels [1,2,3] and [10,20,30] along x; kernel 1x2, M=2 multipliers:
    #   c0: m0 [1, 1], m1 [1, -1];  c1: m0 [2, 0], m1 [0, 3]
    # Output channel c*M + m; bias [1, 2, 3, 4].
    #   ox=0: 1+2 = 3, 1-2 = -1, 10*2 = 20, 20*3 = 60    -> [4, 1, 23, 64]
    #   ox=1: 2+3 = 5, 2-3 = -1, 20*2 = 40, 30*3 = 90    -> [6, 1, 43, 94]
    x = np.array([[1, 10], [2, 20], [3, 30]]).reshape(1, 1, 3, 2)
    w = np.zeros((1, 2, 2, 2), np.int64)
    w[0, :, 0, 0] = [1, 1]
    w[0, :, 0, 1] = [1, -1]
    w[0, :, 1, 0] = [2, 0]
    w[0, :, 1, 1] = [0, 3]
    attrs = {
        "pad": (0, 0, 0, 0),
        "stride": (1, 1),
        "dilation": (1, 1),
        "acc_type": "INT32",
        "input_zp": 0,
        "weight_zp": 0,
    }
    out = run(
        "DEPTHWISE_CONV2D",
        [("x", x, "i8"), ("w", w, "i8"), ("b", np.array([1, 2, 3, 4]), "i32")],
        (1, 1, 2, 4),
        "i32",
        **attrs,
    )
    assert output(out).reshape(2, 4).tolist() == [[4, 1, 23, 64], [6, 1, 43, 94]]


TX = np.array([[1, 2], [3, 4]]).reshape(1, 2, 2, 1)
TW = np.array([[1, 10], [100, 1000]]).reshape(1, 2, 2, 1)


def test_transpose_conv2d_by_hand() -> None:
    # stride 2: OH = (2 - 1) * 2 + 0 + 0 + 2 = 4.  Input (iy, ix) times the kernel lands
    # on the 2x2 block at (2*iy, 2*ix); the blocks do not overlap.
    out = transpose_conv(TX, TW, np.array([0]), (1, 4, 4, 1), "fp32", stride=(2, 2))
    assert output(out).reshape(4, 4).tolist() == [
        [1, 10, 2, 20],
        [100, 1000, 200, 2000],
        [3, 30, 4, 40],
        [300, 3000, 400, 4000],
    ]
    # stride 1: OH = 1 + 2 = 3 and the blocks overlap:
    #   (0,1) = x00*w01 + x01*w00 = 10 + 2;  (1,1) = 1000 + 200 + 30 + 4 = 1234 ...
    out = transpose_conv(TX, TW, np.array([0]), (1, 3, 3, 1), "fp32")
    assert output(out).reshape(3, 3).tolist() == [
        [1, 12, 20],
        [103, 1234, 2040],
        [300, 3400, 4000],
    ]


def test_transpose_conv2d_out_pad_crops_and_extends() -> None:
    # out_pad_top = -1 crops the first row of the stride-2 result; out_pad_left = 1 adds
    # a column that only the bias reaches.  OH = 2 + (-1) + 0 + 2 = 3, OW = 2 + 1 + 2 = 5.
    out = transpose_conv(
        TX, TW, np.array([7]), (1, 3, 5, 1), "fp32", stride=(2, 2), out_pad=(-1, 0, 1, 0)
    )
    assert output(out).reshape(3, 5).tolist() == [
        [7, 107, 1007, 207, 2007],
        [7, 10, 37, 11, 47],
        [7, 307, 3007, 407, 4007],
    ]


@pytest.mark.parametrize(
    ("ih", "iw", "stride", "out_pad", "kernel"),
    [(3, 4, (2, 3), (0, 0, 0, 0), (3, 2)), (5, 2, (1, 4), (1, 2, -1, 0), (2, 3))],
)
def test_transpose_conv2d_output_size(
    ih: int, iw: int, stride: tuple[int, int], out_pad: tuple[int, ...], kernel: tuple[int, int]
) -> None:
    kh, kw = kernel
    oh = (ih - 1) * stride[0] + out_pad[0] + out_pad[1] + kh
    ow = (iw - 1) * stride[1] + out_pad[2] + out_pad[3] + kw
    x = np.ones((1, ih, iw, 1), np.int64)
    w = np.ones((1, kh, kw, 1), np.int64)
    b = np.array([0])
    ok = transpose_conv(x, w, b, (1, oh, ow, 1), stride=stride, out_pad=out_pad)
    assert output(ok).shape == (1, oh, ow, 1)
    assert_rule(
        transpose_conv(x, w, b, (1, oh + 1, ow, 1), stride=stride, out_pad=out_pad),
        "ERROR_IF",
        "OH != (IH - 1) * stride_y + out_pad_top + out_pad_bottom + KH",
    )
    assert_rule(
        transpose_conv(x, w, b, (1, oh, ow - 1, 1), stride=stride, out_pad=out_pad),
        "ERROR_IF",
        "OW != (IW - 1) * stride_x + out_pad_left + out_pad_right + KW",
    )


def test_fully_connected_with_zero_points_by_hand() -> None:
    # x - 1 = [0, 1, 2]; w - (-1) = [[2, 2, 2], [3, 1, -1]]; bias [5, -5]:
    #   oc0: 0*2 + 1*2 + 2*2 = 6 -> 11;  oc1: 0*3 + 1*1 + 2*(-1) = -1 -> -6
    x = np.array([[1, 2, 3]])
    w = np.array([[1, 1, 1], [2, 0, -2]])
    out = fully_connected(x, w, np.array([5, -5]), input_zp=1, weight_zp=-1)
    assert output(out).tolist() == [[11, -6]]


def test_matmul_with_zero_points_by_hand() -> None:
    # A - 1 = [[0, 1], [2, 3]], B - 5 = [[0, 1], [2, 3]]:
    #   [[0*0 + 1*2, 0*1 + 1*3], [2*0 + 3*2, 2*1 + 3*3]] = [[2, 3], [6, 11]]
    a = np.array([[[1, 2], [3, 4]]])
    b = np.array([[[5, 6], [7, 8]]])
    assert output(matmul(a, b, A_zp=1, B_zp=5)).tolist() == [[[2, 3], [6, 11]]]
    # fp32: exact fp64 product of the stored values.
    af = np.array([[[0.5, 0.25]]], np.float32)
    bf = np.array([[[4.0], [8.0]]], np.float32)
    assert output(matmul(af, bf, "fp32", "fp32")).tolist() == [[[4.0]]]


def test_float_results_are_fp64_of_the_stored_inputs() -> None:
    # fp16 inputs 1 + 2**-10 (exact in fp16): the product 1 + 2**-9 + 2**-20 is kept in
    # fp64 for comparison, not rounded to fp16.
    v = np.array([[1 + 2**-10]], np.float16)
    out = fully_connected(v, v, np.array([0.0], np.float16), ("fp16", "fp16", "fp16"))
    assert output(out).tolist() == [[1 + 2**-9 + 2**-20]]


def test_padding_is_skipped_not_multiplied() -> None:
    # An infinite weight at the kernel's top row meets only the padding for output row
    # 0: the pseudocode skips those reads, so that output stays finite (a zero-padded
    # input would give inf * 0 = NaN).
    x = np.ones((1, 2, 1, 1), np.float32)
    w = np.array([np.inf, 2.0], np.float32).reshape(1, 2, 1, 1)
    out = conv2d(
        x, w, np.array([0.0], np.float32), (1, 2, 1, 1), ("fp32", "fp32", "fp32"),
        pad=(1, 0, 0, 0),
    )  # fmt: skip
    assert output(out).reshape(-1).tolist() == [2.0, np.inf]


# -- REQUIREs ---------------------------------------------------------------------------


def _range(t: str) -> str:
    return f"c >= minimum_s<{t}>() && c <= maximum_s<{t}>()"


ACC_T_RANGE = f"acc = apply_add_s<acc_t>(acc, product): {_range('acc_t')}"
OUT_T_RANGE = f"acc = apply_add_s<out_t>(acc, product): {_range('out_t')}"
BIAS_RANGE = f"apply_add_s<out_t>(out, bias): {_range('out_t')}"


def test_i16x8_accumulator_leaves_i48() -> None:
    # input -32768 (i16, no zero point) times weight 127 - (-128) = 255: each product is
    # -32768 * 255 = -8355840, and 2**47 / 8355840 = 2**32 / 255 = 16843009.004, so the
    # running sum leaves i48 at the 16843010th product.  One output, IC of that length.
    ic = 16843010
    assert -8355840 * (ic - 1) >= I48_MIN > -8355840 * ic
    x = np.full((1, 1, 1, ic), -32768, np.int16)
    w = np.full((1, 1, 1, ic), 127, np.int8)
    out = conv2d(x, w, np.array([0]), (1, 1, 1, 1), ("i16", "i8", "i48"), weight_zp=-128)
    assert_rule(out, "REQUIRE", ACC_T_RANGE)
    # One product fewer fits.
    out = conv2d(
        x[..., 1:], w[..., 1:], np.array([0]), (1, 1, 1, 1), ("i16", "i8", "i48"), weight_zp=-128
    )
    assert output(out).tolist() == [[[[-8355840 * (ic - 1)]]]]


def test_i16_matmul_accumulator_leaves_i48() -> None:
    # (-32768)**2 = 2**30 per product; 2**17 of them reach 2**47 = I48_MAX + 1.
    c = 1 << 17
    a = np.full((1, 1, c), -32768, np.int16)
    b = np.full((1, c, 1), -32768, np.int16)
    assert_rule(matmul(a, b, "i16", "i48"), "REQUIRE", OUT_T_RANGE)
    assert output(matmul(a[:, :, 1:], b[:, 1:], "i16", "i48")).tolist() == [
        [[I48_MAX - (1 << 30) + 1]]
    ]


def test_running_sum_is_checked_in_loop_order() -> None:
    # 131072 products of (-128)*(-128) = 16384 reach exactly 2**31 = I32_MAX + 1, even
    # though the 131072 products (-128)*127 = -16256 that follow bring the total back to
    # 128 * 131072 = 2**24.  In the other order the running sum bottoms out at
    # -16256 * 131072 = -2130706432 >= -2**31 and every step fits.
    h = 1 << 17
    x = np.full((1, 2 * h), -128)
    w = np.concatenate([np.full(h, -128), np.full(h, 127)]).reshape(1, 2 * h)
    assert_rule(fully_connected(x, w, np.array([0])), "REQUIRE", OUT_T_RANGE, "at index [0, 0]")
    assert output(fully_connected(x, w[:, ::-1], np.array([0]))).tolist() == [[1 << 24]]


def test_bias_addition_leaves_out_t() -> None:
    x = np.array([127]).reshape(1, 1, 1, 1)
    out = conv2d(x, x, np.array([I32_MAX - 16129 + 1]), (1, 1, 1, 1))
    assert_rule(out, "REQUIRE", BIAS_RANGE)
    assert output(conv2d(x, x, np.array([I32_MAX - 16129]), (1, 1, 1, 1))).tolist() == [
        [[[I32_MAX]]]
    ]
    out = conv2d(
        np.array([2]).reshape(1, 1, 1, 1).astype(np.int16), x, np.array([I48_MAX - 253]),
        (1, 1, 1, 1), ("i16", "i8", "i48"),
    )  # fmt: skip
    assert_rule(out, "REQUIRE", BIAS_RANGE)


# One output whose dot product has ``count`` products, per operator: input, weight
# and output shapes (DEPTHWISE_CONV2D's products are kernel positions, so its kernel is
# 182 x 182 = 33124, within the 8K level's MAX_KERNEL).
def one_output(op: str, count: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    return {
        "CONV2D": ((1, 1, 1, count), (1, 1, 1, count), (1, 1, 1, 1)),
        "CONV3D": ((1, 1, 1, 1, count), (1, 1, 1, 1, count), (1, 1, 1, 1, 1)),
        "DEPTHWISE_CONV2D": ((1, 182, 182, 1), (182, 182, 1, 1), (1, 1, 1, 1)),
        "TRANSPOSE_CONV2D": ((1, 1, 1, count), (1, 1, 1, count), (1, 1, 1, 1)),
        "FULLY_CONNECTED": ((1, count), (1, count), (1, 1)),
        "MATMUL": ((1, 1, count), (1, count, 1), (1, 1, 1)),
    }[op]


GEOMETRY = {
    "CONV2D": {"pad": (0,) * 4, "stride": (1, 1), "dilation": (1, 1), "acc_type": "INT32"},
    "CONV3D": {"pad": (0,) * 6, "stride": (1,) * 3, "dilation": (1,) * 3, "acc_type": "INT32"},
    "DEPTHWISE_CONV2D": {
        "pad": (0,) * 4, "stride": (1, 1), "dilation": (1, 1), "acc_type": "INT32",
    },
    "TRANSPOSE_CONV2D": {"out_pad": (0,) * 4, "stride": (1, 1), "acc_type": "INT32"},
    "FULLY_CONNECTED": {},
    "MATMUL": {},
}  # fmt: skip


def one_output_graph(op: str, value: int, zp: int, bias: int, count: int) -> Outcome:
    xs, ws, out = one_output(op, count)
    x, w = np.full(xs, value), np.full(ws, value)
    if op == "MATMUL":
        return run("MATMUL", [("a", x, "i8"), ("b", w, "i8")], out, "i32", A_zp=zp, B_zp=zp)
    attrs = {**GEOMETRY[op], "input_zp": zp, "weight_zp": zp}
    inputs = [("x", x, "i8"), ("w", w, "i8"), ("b", np.array([bias]), "i32")]
    return run(op, inputs, out, "i32", **attrs)


@pytest.mark.parametrize("op", ALL_OPS)
def test_each_operator_requires_its_accumulator_range(op: str) -> None:
    # (-128 - 127) * (-128 - 127) = 65025 per product; 2**31 / 65025 = 33025.98, so
    # 33026 products leave i32 (DEPTHWISE_CONV2D: 33124).
    out = one_output_graph(op, -128, 127, 0, 33026)
    clause = ACC_T_RANGE if op in ("CONV2D", "TRANSPOSE_CONV2D") else OUT_T_RANGE
    assert_rule(out, "REQUIRE", clause)
    if op != "DEPTHWISE_CONV2D":
        assert output(one_output_graph(op, -128, 127, 0, 33025)).reshape(-1).tolist() == [
            65025 * 33025
        ]


@pytest.mark.parametrize("op", [op for op in ALL_OPS if op != "MATMUL"])
def test_each_operator_requires_the_biased_result_to_fit(op: str) -> None:
    # DEPTHWISE_CONV2D's fixed 182 x 182 kernel of ones gives 33124; the others 1.
    total = 33124 if op == "DEPTHWISE_CONV2D" else 1
    assert_rule(one_output_graph(op, 1, 0, I32_MAX - total + 1, 1), "REQUIRE", BIAS_RANGE)
    fits = one_output_graph(op, 1, 0, I32_MAX - total, 1)
    assert output(fits).reshape(-1).tolist() == [I32_MAX]


def test_require_reports_the_first_failing_output() -> None:
    # Only output channel 1 overflows (bias), and the detail names its index.
    x = np.array([1]).reshape(1, 1, 1, 1)
    w = np.array([1, 1]).reshape(2, 1, 1, 1)
    out = conv2d(x, w, np.array([0, I32_MAX]), (1, 1, 1, 2))
    assert_rule(out, "REQUIRE", BIAS_RANGE, "at index [0, 0, 0, 1]")


# -- ERROR_IFs --------------------------------------------------------------------------


PAD_2D = "pad_top < 0 || pad_bottom < 0 || pad_left < 0 || pad_right < 0"
IDIV = "input1 % input2 != 0 (idiv_check)"
OD_CLAUSE = "OD != idiv_check(ID - 1 + pad_d0 + pad_d1 - (KD - 1) * dilation_d, stride_d) + 1"
OH_CLAUSE = "OH != idiv_check(IH - 1 + pad_top + pad_bottom - (KH - 1) * dilation_y, stride_y) + 1"
OW_CLAUSE = "OW != idiv_check(IW - 1 + pad_left + pad_right - (KW - 1) * dilation_x, stride_x) + 1"
OUT3 = (1, 2, 2, 2, 1)


def _x(shape: Sequence[int]) -> np.ndarray:
    return np.ones(shape, np.int64)


@pytest.mark.parametrize(
    ("case", "clause"),
    [
        ({"acc": "INT48"}, TYPES_CLAUSE),
        ({"types": ("fp16", "fp16", "fp16"), "input_zp": 1.0}, "in_t != i8_t && input_zp != 0"),
        ({"types": ("i16", "i8", "i48"), "input_zp": 3}, "in_t != i8_t && input_zp != 0"),
        ({"types": ("i8", "i4", "i32"), "weight_zp": 1}, "weight_t != i8_t && weight_zp != 0"),
        ({"pad": (0, -1, 0, 0)}, PAD_2D),
        ({"stride": (1, 0)}, "stride_y < 1 || stride_x < 1"),
        ({"dilation": (0, 1)}, "dilation_y < 1 || dilation_x < 1"),
        ({"stride": (3, 1)}, IDIV),
        ({"out": (1, 4, 4, 2)}, OH_CLAUSE),
        ({"out": (1, 3, 2, 2)}, OW_CLAUSE),
        ({"bias": 3}, "BC != OC && BC != 1"),
    ],
)  # fmt: skip
def test_conv2d_error_ifs(case: dict[str, Any], clause: str) -> None:
    # Base: input [1,4,4,1], weight [2,2,2,1] -> OH = OW = 3; stride 3 leaves 4 - 1 - 1 = 2
    # not a multiple of 3.
    case = dict(case)
    types = case.pop("types", ("i8", "i8", "i32"))
    out = case.pop("out", (1, 3, 3, 2))
    bc = case.pop("bias", 2)
    acc = case.pop("acc", None)
    x = np.ones((1, 4, 4, 1), dtype(types[0]).storage)
    w = np.ones((2, 2, 2, 1), dtype(types[1]).storage)
    b = np.zeros(bc, dtype(types[2]).storage)
    assert_rule(conv2d(x, w, b, out, types, acc, **case), "ERROR_IF", clause)


def test_conv2d_float_modes_choose_by_acc_type() -> None:
    x = np.ones((1, 1, 1, 1), np.float16)
    for acc in ("FP16", "FP32"):
        out = conv2d(x, x, x.reshape(1), (1, 1, 1, 1), ("fp16", "fp16", "fp16"), acc)
        assert output(out).tolist() == [[[[2.0]]]]
    # An acc_type that no mode lists for these tensor types is an unsupported type
    # combination (the engine's mode lookup or the operator itself reports it).
    out = conv2d(x, x, x.reshape(1), (1, 1, 1, 1), ("fp16", "fp16", "fp16"), "INT32")
    assert_rule(out, "ERROR_IF", TYPES_CLAUSE)
    xb = np.ones((1, 1, 1, 1), np.float32)
    out = conv2d(xb, xb, xb.reshape(1), (1, 1, 1, 1), ("bf16", "bf16", "bf16"), "FP16")
    assert_rule(out, "ERROR_IF", TYPES_CLAUSE)


def conv3d(out_shape: Sequence[int], bc: int = 1, **attrs: Any) -> Outcome:
    attrs = {
        "pad": (0,) * 6,
        "stride": (1, 1, 1),
        "dilation": (1, 1, 1),
        "acc_type": "INT32",
        "input_zp": 0,
        "weight_zp": 0,
        **attrs,
    }
    x, w, b = _x((1, 3, 3, 3, 1)), _x((1, 2, 2, 2, 1)), np.zeros(bc, np.int64)
    return run(
        "CONV3D", [("x", x, "i8"), ("w", w, "i8"), ("b", b, "i32")], out_shape, "i32", **attrs
    )


@pytest.mark.parametrize(
    ("attrs", "out", "clause"),
    [
        ({"pad": (0, 0, 0, 0, -1, 0)}, OUT3, "pad_d0 < 0 || pad_d1 < 0 || " + PAD_2D),
        ({"stride": (0, 1, 1)}, OUT3, "stride_d < 1 || stride_y < 1 || stride_x < 1"),
        ({"dilation": (1, 1, 0)}, OUT3, "dilation_d < 1 || dilation_y < 1 || dilation_x < 1"),
        ({"stride": (3, 1, 1)}, OUT3, IDIV),
        ({}, (1, 1, 2, 2, 1), OD_CLAUSE),
        ({}, (1, 2, 3, 2, 1), OH_CLAUSE),
    ],
)  # fmt: skip
def test_conv3d_error_ifs(attrs: dict[str, Any], out: tuple[int, ...], clause: str) -> None:
    assert_rule(conv3d(out, **attrs), "ERROR_IF", clause)


def test_conv3d_geometry_and_bias_error() -> None:
    # stride 2 with pad_d0 = 1: (3 - 1 + 1 - 1) / 2 + 1 = 2 in depth, 2 elsewhere.
    assert output(conv3d((1, 2, 2, 2, 1), stride=(2, 1, 1), pad=(1, 0, 0, 0, 0, 0))).shape == (
        1, 2, 2, 2, 1,
    )  # fmt: skip
    assert_rule(conv3d((1, 2, 2, 2, 1), bc=2), "ERROR_IF", "BC != OC && BC != 1")


def test_depthwise_bias_error() -> None:
    attrs = {
        "pad": (0, 0, 0, 0),
        "stride": (1, 1),
        "dilation": (1, 1),
        "acc_type": "INT32",
        "input_zp": 0,
        "weight_zp": 0,
    }
    inputs = [("x", _x((1, 2, 2, 2)), "i8"), ("w", _x((1, 1, 2, 3)), "i8")]
    ok = run("DEPTHWISE_CONV2D", [*inputs, ("b", np.zeros(6), "i32")], (1, 2, 2, 6), "i32", **attrs)
    assert output(ok).shape == (1, 2, 2, 6)
    bad = run(
        "DEPTHWISE_CONV2D", [*inputs, ("b", np.zeros(3), "i32")], (1, 2, 2, 6), "i32", **attrs
    )
    assert_rule(bad, "ERROR_IF", "BC != C*M && BC != 1")
    bad = run(
        "DEPTHWISE_CONV2D", [*inputs, ("b", np.zeros(6), "i32")], (1, 2, 2, 6), "i32",
        **{**attrs, "pad": (0, 0, -1, 0)},
    )  # fmt: skip
    assert_rule(bad, "ERROR_IF", "pad_top < 0 || pad_bottom < 0 || pad_left < 0 || pad_right < 0")


@pytest.mark.parametrize(
    ("attrs", "bc", "clause"),
    [
        ({"out_pad": (-2, 0, 0, 0)}, 1, "out_pad_top <= -KH || out_pad_bottom <= -KH"),
        ({"out_pad": (0, 0, 0, -2)}, 1, "out_pad_left <= -KW || out_pad_right <= -KW"),
        ({"stride": (0, 1)}, 1, "stride_y < 1 || stride_x < 1"),
        ({}, 2, "BC != OC && BC != 1"),
        ({"input_zp": 1, "types": "i16"}, 1, "in_t != i8_t && input_zp != 0"),
    ],
)
def test_transpose_conv2d_error_ifs(attrs: dict[str, Any], bc: int, clause: str) -> None:
    attrs = dict(attrs)
    in_t = attrs.pop("types", "i8")
    out_t = "i48" if in_t == "i16" else "i32"
    full = {
        "out_pad": (0, 0, 0, 0),
        "stride": (1, 1),
        "acc_type": ACC_NAME[out_t],
        "input_zp": 0,
        "weight_zp": 0,
        **attrs,
    }
    x, w, b = _x((1, 2, 2, 1)), _x((1, 2, 2, 1)), np.zeros(bc, np.int64)
    out = run(
        "TRANSPOSE_CONV2D", [("x", x, in_t), ("w", w, "i8"), ("b", b, out_t)], (1, 3, 3, 1),
        out_t, **full,
    )  # fmt: skip
    assert_rule(out, "ERROR_IF", clause)


def test_fully_connected_and_matmul_error_ifs() -> None:
    x = np.ones((1, 2), np.float32)
    out = fully_connected(x, x, np.zeros(1), ("fp32", "fp32", "fp32"), weight_zp=1.0)
    assert_rule(out, "ERROR_IF", "weight_t != i8_t && weight_zp != 0")
    out = fully_connected(_x((1, 2)), _x((3, 2)), np.zeros(2))
    assert_rule(out, "ERROR_IF", "BC != OC && BC != 1")
    a = np.ones((1, 2, 2), np.int16)
    assert_rule(
        matmul(a, a, "i16", "i48", B_zp=1), "ERROR_IF", "in_t != i8_t && (A_zp != 0 || B_zp != 0)"
    )


# -- every mode -------------------------------------------------------------------------

SHAPES: dict[str, tuple[dict[str, tuple[int, ...]], tuple[int, ...], dict[str, Any]]] = {
    "CONV2D": (
        {"input": (1, 5, 4, 3), "weight": (2, 3, 2, 3), "bias": (2,)},
        (1, 3, 3, 2),
        {"pad": (0, 0, 0, 0), "stride": (1, 1), "dilation": (1, 1)},
    ),
    "CONV3D": (
        {"input": (1, 3, 4, 3, 2), "weight": (2, 2, 2, 2, 2), "bias": (1,)},
        (1, 2, 3, 2, 2),
        {"pad": (0,) * 6, "stride": (1, 1, 1), "dilation": (1, 1, 1)},
    ),
    "DEPTHWISE_CONV2D": (
        {"input": (1, 4, 4, 2), "weight": (2, 2, 2, 3), "bias": (6,)},
        (1, 3, 3, 6),
        {"pad": (0, 0, 0, 0), "stride": (1, 1), "dilation": (1, 1)},
    ),
    "TRANSPOSE_CONV2D": (
        {"input": (1, 3, 2, 2), "weight": (2, 2, 3, 2), "bias": (2,)},
        (1, 6, 5, 2),
        {"out_pad": (0, 0, 0, 0), "stride": (2, 2)},
    ),
    "FULLY_CONNECTED": ({"input": (3, 4), "weight": (2, 4), "bias": (2,)}, (3, 2), {}),
    "MATMUL": ({"A": (2, 3, 4), "B": (2, 4, 5)}, (2, 3, 5), {}),
}


def sample(rng: np.random.Generator, dt: DType, shape: Sequence[int]) -> np.ndarray:
    if dt.is_int:
        lo, hi = max(int(dt.min), -100), min(int(dt.max), 100)  # type: ignore[arg-type]
        return rng.integers(lo, hi + 1, size=shape)
    return rng.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize(
    ("op", "mode"), [(op, m) for op in ALL_OPS for m in SPEC.operator(op).modes],
    ids=lambda v: v if isinstance(v, str) else v.mode,
)  # fmt: skip
def test_every_mode_evaluates(op: str, mode: Any) -> None:
    rng = np.random.default_rng(len(mode.mode) + len(op))
    shapes, out_shape, attrs = SHAPES[op]
    types = {a.name: a.element_type for a in SPEC.operator(op).arguments}
    inputs = []
    for name, shape in shapes.items():
        dt = mode.dtype(types[name])
        inputs.append((name, sample(rng, dt, shape), dt.name))
    out_t = mode.dtype("out_t")
    attrs = dict(attrs)
    if op == "MATMUL":
        attrs |= {"A_zp": zero(mode.dtype("in_t").name), "B_zp": zero(mode.dtype("in_t").name)}
    else:
        attrs |= {
            "input_zp": zero(mode.dtype("in_t").name),
            "weight_zp": zero(mode.dtype("weight_t").name),
        }
    if op in CONV_OPS:
        attrs["acc_type"] = ACC_NAME[mode.dtype("acc_t").name]
    out = run(op, inputs, out_shape, out_t.name, **attrs)
    assert output(out).shape == out_shape

"""Reference evaluator: CONV2D, CONV3D, DEPTHWISE_CONV2D, TRANSPOSE_CONV2D,
FULLY_CONNECTED, MATMUL."""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from conformance.builder import single_operator_graph
from conformance.dtypes import DType, dtype
from conformance.spec import load_spec
from reference.arguments import TYPES_CLAUSE
from reference.engine import evaluate
from reference.ops import tensor_conv
from reference.outcome import Outcome

SPEC = load_spec()
CONV_OPS = ("CONV2D", "CONV3D", "DEPTHWISE_CONV2D", "TRANSPOSE_CONV2D")
ALL_OPS = (*CONV_OPS, "FULLY_CONNECTED", "MATMUL")
ACC_NAME = {"i32": "INT32", "i48": "INT48", "fp16": "FP16", "fp32": "FP32"}
I32_MAX = (1 << 31) - 1
I48_MIN, I48_MAX = -(1 << 47), (1 << 47) - 1


def zero(dt: str) -> int | float:
    return 0.0 if dtype(dt).is_float else 0


def run(
    op: str,
    inputs: Sequence[tuple[str, np.ndarray, str]],
    out_shape: Sequence[int],
    out_dt: str,
    **attrs: Any,
) -> Outcome:
    """One operator on the given (name, value, type) inputs; output ``y``."""
    graph = single_operator_graph(
        op,
        [(name, np.shape(v), dt) for name, v, dt in inputs],
        [("y", out_shape, out_dt)],
        attrs,
        strict=False,  # the ERROR_IF tests build graphs the builder would refuse
    )
    return evaluate(graph, {name: v for name, v, _ in inputs})


def conv2d(
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray,
    out_shape: Sequence[int],
    types: tuple[str, str, str] = ("i8", "i8", "i32"),
    acc: str | None = None,
    **attrs: Any,
) -> Outcome:
    in_t, w_t, out_t = types
    attrs = {
        "pad": (0, 0, 0, 0),
        "stride": (1, 1),
        "dilation": (1, 1),
        "acc_type": acc or ACC_NAME[out_t if out_t != "fp16" else "fp16"],
        "input_zp": zero(in_t),
        "weight_zp": zero(w_t),
        **attrs,
    }
    return run(
        "CONV2D", [("x", x, in_t), ("w", w, w_t), ("b", b, out_t)], out_shape, out_t, **attrs
    )


def output(outcome: Outcome) -> np.ndarray:
    assert outcome.kind == "valid", str(outcome)
    return outcome.outputs["y"]


def assert_rule(outcome: Outcome, rule: str, clause: str, detail: str = "") -> None:
    """The graph is in error (ERROR_IF) or unpredictable (REQUIRE) by this clause."""
    assert outcome.kind == {"ERROR_IF": "error", "REQUIRE": "unpredictable"}[rule], str(outcome)
    assert outcome.rule is not None and outcome.rule.kind == rule, str(outcome)
    assert outcome.rule.clause == clause, str(outcome)
    assert detail in outcome.rule.detail, str(outcome)


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


def transpose_conv(
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray,
    out_shape: Sequence[int],
    t: str = "i8",
    **attrs: Any,
) -> Outcome:
    out_t = "fp32" if t == "fp32" else "i32"
    attrs = {
        "out_pad": (0, 0, 0, 0),
        "stride": (1, 1),
        "acc_type": ACC_NAME[out_t],
        "input_zp": zero(t),
        "weight_zp": zero(t),
        **attrs,
    }
    inputs = [("x", x, t), ("w", w, t), ("b", b, out_t)]
    return run("TRANSPOSE_CONV2D", inputs, out_shape, out_t, **attrs)


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


def fully_connected(
    x: np.ndarray, w: np.ndarray, b: np.ndarray, types: tuple[str, str, str] = ("i8", "i8", "i32"),
    **attrs: Any,
) -> Outcome:  # fmt: skip
    in_t, w_t, out_t = types
    attrs = {"input_zp": zero(in_t), "weight_zp": zero(w_t), **attrs}
    return run(
        "FULLY_CONNECTED",
        [("x", x, in_t), ("w", w, w_t), ("b", b, out_t)],
        (x.shape[0], w.shape[0]),
        out_t,
        **attrs,
    )


def matmul(
    a: np.ndarray, b: np.ndarray, in_t: str = "i8", out_t: str = "i32", **attrs: Any
) -> Outcome:
    attrs = {"A_zp": zero(in_t), "B_zp": zero(in_t), **attrs}
    shape = (a.shape[0], a.shape[1], b.shape[2])
    return run("MATMUL", [("a", a, in_t), ("b", b, in_t)], shape, out_t, **attrs)


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


# -- against a literal transcription of the pseudocode ---------------------------------


def literal_conv(
    x: np.ndarray, w: np.ndarray, b: np.ndarray, out_shape: Sequence[int],
    pads: Sequence[int], strides: Sequence[int], dils: Sequence[int], izp: int, wzp: int,
) -> np.ndarray:  # fmt: skip
    """CONV2D / CONV3D as the pseudocode loops (rank from the stride count)."""
    rank = len(strides)
    n_, oc_ = out_shape[0], out_shape[-1]
    ins, ks = x.shape[1:-1], w.shape[1:-1]
    out = np.zeros(out_shape, np.int64)
    for n, *o, oc in itertools.product(*(range(d) for d in (n_, *out_shape[1:-1], oc_))):
        acc = 0
        for *k, ic in itertools.product(*(range(d) for d in (*ks, x.shape[-1]))):
            pos = [o[j] * strides[j] - pads[2 * j] + k[j] * dils[j] for j in range(rank)]
            if all(0 <= pos[j] < ins[j] for j in range(rank)):
                acc += (int(x[(n, *pos, ic)]) - izp) * (int(w[(oc, *k, ic)]) - wzp)
        out[(n, *o, oc)] = acc + int(b[0 if b.size == 1 else oc])
    return out


def literal_depthwise(
    x: np.ndarray, w: np.ndarray, b: np.ndarray, out_shape: Sequence[int],
    pads: Sequence[int], strides: Sequence[int], dils: Sequence[int], izp: int, wzp: int,
) -> np.ndarray:  # fmt: skip
    n_, oh, ow, _ = out_shape
    _, ih, iw, c_ = x.shape
    kh, kw, _, m_ = w.shape
    out = np.zeros(out_shape, np.int64)
    for n, oy, ox, c, m in itertools.product(range(n_), range(oh), range(ow), range(c_), range(m_)):
        acc = 0
        for ky, kx in itertools.product(range(kh), range(kw)):
            y = oy * strides[0] - pads[0] + ky * dils[0]
            xx = ox * strides[1] - pads[2] + kx * dils[1]
            if 0 <= y < ih and 0 <= xx < iw:
                acc += (int(x[n, y, xx, c]) - izp) * (int(w[ky, kx, c, m]) - wzp)
        out[n, oy, ox, c * m_ + m] = acc + int(b[0 if b.size == 1 else c * m_ + m])
    return out


def literal_transpose(
    x: np.ndarray, w: np.ndarray, b: np.ndarray, out_shape: Sequence[int],
    out_pad: Sequence[int], strides: Sequence[int], izp: int, wzp: int,
) -> np.ndarray:  # fmt: skip
    """Every input element scaled by every weight, scattered to iy*stride + pad + ky."""
    n_, oh, ow, oc_ = out_shape
    _, ih, iw, ic_ = x.shape
    _, kh, kw, _ = w.shape
    out = np.zeros(out_shape, np.int64)
    out += b.reshape(1, 1, 1, -1)
    for n, iy, ix, oc, ic, ky, kx in itertools.product(
        range(n_), range(ih), range(iw), range(oc_), range(ic_), range(kh), range(kw)
    ):
        oy = iy * strides[0] + out_pad[0] + ky
        ox = ix * strides[1] + out_pad[2] + kx
        if 0 <= oy < oh and 0 <= ox < ow:
            out[n, oy, ox, oc] += (int(x[n, iy, ix, ic]) - izp) * (int(w[oc, ky, kx, ic]) - wzp)
    return out


def _geometry(data: st.DataObject, rank: int, label: str) -> tuple[list[int], ...]:
    """Input sizes, kernel sizes, pads, strides and dilations with exact output sizes."""
    ins, ks, pads, strides, dils, outs = [], [], [], [], [], []
    for j in range(rank):
        k = data.draw(st.integers(1, 3), label=f"{label} kernel[{j}]")
        d = data.draw(st.integers(1, 2), label=f"{label} dilation[{j}]")
        s = data.draw(st.integers(1, 3), label=f"{label} stride[{j}]")
        before = data.draw(st.integers(0, 2), label=f"{label} pad before[{j}]")
        extent = (k - 1) * d + 1
        i = data.draw(st.integers(max(1, extent - before), 6), label=f"{label} input[{j}]")
        span = i - 1 + before - (k - 1) * d
        after = (-span) % s  # the smallest pad_after that makes idiv_check exact
        after += s * data.draw(st.integers(0, 1), label=f"{label} extra pad[{j}]")
        ins.append(i)
        ks.append(k)
        pads += [before, after]
        strides.append(s)
        dils.append(d)
        outs.append((span + after) // s + 1)
    return ins, ks, pads, strides, dils, outs


def _i8(rng: np.random.Generator, shape: Sequence[int]) -> np.ndarray:
    return rng.integers(-128, 128, size=shape)


@given(data=st.data())
def test_conv2d_and_conv3d_match_the_pseudocode(data: st.DataObject) -> None:
    op = data.draw(st.sampled_from(["CONV2D", "CONV3D"]), label="op")
    rank = 2 if op == "CONV2D" else 3
    ins, ks, pads, strides, dils, outs = _geometry(data, rank, op)
    n = data.draw(st.integers(1, 2), label="N")
    ic = data.draw(st.integers(1, 3), label="IC")
    oc = data.draw(st.integers(1, 3), label="OC")
    bc = data.draw(st.sampled_from([1, oc]), label="BC")
    izp = data.draw(st.integers(-128, 127), label="input_zp")
    wzp = data.draw(st.integers(-128, 127), label="weight_zp")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    x, w = _i8(rng, (n, *ins, ic)), _i8(rng, (oc, *ks, ic))
    b = rng.integers(-(10**6), 10**6, size=bc)
    out_shape = (n, *outs, oc)
    attrs = {"pad": tuple(pads), "stride": tuple(strides), "dilation": tuple(dils)}
    out = run(
        op, [("x", x, "i8"), ("w", w, "i8"), ("b", b, "i32")], out_shape, "i32",
        acc_type="INT32", input_zp=izp, weight_zp=wzp, **attrs,
    )  # fmt: skip
    want = literal_conv(x, w, b, out_shape, pads, strides, dils, izp, wzp)
    assert np.array_equal(output(out), want)
    # The same geometry in fp32 agrees to fp64 rounding.
    xf, wf = (rng.standard_normal(v.shape).astype(np.float32) for v in (x, w))
    bf = rng.standard_normal(bc).astype(np.float32)
    out = run(
        op, [("x", xf, "fp32"), ("w", wf, "fp32"), ("b", bf, "fp32")], out_shape, "fp32",
        acc_type="FP32", input_zp=0.0, weight_zp=0.0, **attrs,
    )  # fmt: skip
    scale = 2.0**20  # literal_conv is integer: scale the floats up and compare loosely
    want_f = literal_conv(
        np.round(xf * scale), np.round(wf * scale), np.round(bf * scale * scale), out_shape,
        pads, strides, dils, 0, 0,
    ) / scale**2  # fmt: skip
    np.testing.assert_allclose(output(out), want_f, atol=1e-4)


@given(data=st.data())
def test_depthwise_conv2d_matches_the_pseudocode(data: st.DataObject) -> None:
    ins, ks, pads, strides, dils, outs = _geometry(data, 2, "DEPTHWISE")
    c = data.draw(st.integers(1, 3), label="C")
    m = data.draw(st.integers(1, 3), label="M")
    izp = data.draw(st.integers(-128, 127), label="input_zp")
    wzp = data.draw(st.integers(-128, 127), label="weight_zp")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    x, w = _i8(rng, (1, *ins, c)), _i8(rng, (*ks, c, m))
    b = rng.integers(-1000, 1000, size=c * m)
    out_shape = (1, *outs, c * m)
    out = run(
        "DEPTHWISE_CONV2D", [("x", x, "i8"), ("w", w, "i8"), ("b", b, "i32")], out_shape, "i32",
        pad=tuple(pads), stride=tuple(strides), dilation=tuple(dils), acc_type="INT32",
        input_zp=izp, weight_zp=wzp,
    )  # fmt: skip
    want = literal_depthwise(x, w, b, out_shape, pads, strides, dils, izp, wzp)
    assert np.array_equal(output(out), want)


@given(data=st.data())
def test_transpose_conv2d_matches_the_scatter_form(data: st.DataObject) -> None:
    kh = data.draw(st.integers(1, 3), label="KH")
    kw = data.draw(st.integers(1, 3), label="KW")
    ih = data.draw(st.integers(1, 4), label="IH")
    iw = data.draw(st.integers(1, 4), label="IW")
    sy = data.draw(st.integers(1, 3), label="stride_y")
    sx = data.draw(st.integers(1, 3), label="stride_x")
    pad = [
        data.draw(st.integers(1 - kh, 2), label="out_pad_top"),
        data.draw(st.integers(1 - kh, 2), label="out_pad_bottom"),
        data.draw(st.integers(1 - kw, 2), label="out_pad_left"),
        data.draw(st.integers(1 - kw, 2), label="out_pad_right"),
    ]
    oh = (ih - 1) * sy + pad[0] + pad[1] + kh
    ow = (iw - 1) * sx + pad[2] + pad[3] + kw
    if oh < 1 or ow < 1:
        return  # no tensor has a zero dimension
    ic = data.draw(st.integers(1, 2), label="IC")
    oc = data.draw(st.integers(1, 2), label="OC")
    izp = data.draw(st.integers(-128, 127), label="input_zp")
    wzp = data.draw(st.integers(-128, 127), label="weight_zp")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    x, w = _i8(rng, (1, ih, iw, ic)), _i8(rng, (oc, kh, kw, ic))
    b = rng.integers(-1000, 1000, size=oc)
    out = transpose_conv(
        x, w, b, (1, oh, ow, oc), stride=(sy, sx), out_pad=tuple(pad), input_zp=izp, weight_zp=wzp
    )
    want = literal_transpose(x, w, b, (1, oh, ow, oc), pad, (sy, sx), izp, wzp)
    assert np.array_equal(output(out), want)


@given(data=st.data())
def test_fully_connected_and_matmul_match_the_pseudocode(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 4), label="N")
    c = data.draw(st.integers(1, 6), label="IC / C")
    oc = data.draw(st.integers(1, 4), label="OC / W")
    izp = data.draw(st.integers(-128, 127), label="input_zp")
    wzp = data.draw(st.integers(-128, 127), label="weight_zp")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    x, w, b = _i8(rng, (n, c)), _i8(rng, (oc, c)), rng.integers(-1000, 1000, size=oc)
    want = (x - izp) @ (w - wzp).T + b
    got = output(fully_connected(x, w, b, input_zp=izp, weight_zp=wzp))
    assert np.array_equal(got, want)
    a, bb = _i8(rng, (2, n, c)), _i8(rng, (2, c, oc))
    want = np.array([(a[i] - izp) @ (bb[i] - wzp) for i in range(2)])
    assert np.array_equal(output(matmul(a, bb, A_zp=izp, B_zp=wzp)), want)


# -- speed ------------------------------------------------------------------------------


def test_timings() -> None:
    """Print (not assert) the time for the sizes the brief names."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 64, 64, 32)).astype(np.float32)
    w = rng.standard_normal((64, 3, 3, 32)).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    start = time.perf_counter()
    out = conv2d(x, w, b, (1, 62, 62, 64), ("fp32", "fp32", "fp32"))
    conv_s = time.perf_counter() - start
    assert out.valid
    a = rng.standard_normal((8, 256, 256)).astype(np.float32)
    start = time.perf_counter()
    assert matmul(a, a, "fp32", "fp32").valid
    matmul_s = time.perf_counter() - start
    print(
        f"\nCONV2D [1,64,64,32] x [64,3,3,32] fp32: {conv_s:.3f} s; "
        f"MATMUL [8,256,256] x [8,256,256] fp32: {matmul_s:.3f} s"
    )


# -- running sums, against the pseudocode's loop order ------------------------------------

# An accumulator narrow enough that a few i8 products leave it, so the running-sum
# REQUIRE is exercised on small tensors (the real i32/i48 need 2**15+ products).
NARROW = DType("narrow", "int", 16, np.dtype(np.int64), -3000, 2999)


def loop_products(
    op: str, x: np.ndarray, w: np.ndarray, out_shape: Sequence[int], geo: dict[str, Any]
) -> Any:
    """Per output, in the order the pseudocode visits outputs, the products its
    accumulator adds, in the order it adds them (x and w have zero points applied)."""
    if op in ("FULLY_CONNECTED", "MATMUL"):
        for index in itertools.product(*(range(d) for d in out_shape)):
            if op == "MATMUL":
                n, h, col = index
                yield index, [int(x[n, h, c]) * int(w[n, c, col]) for c in range(x.shape[2])]
            else:
                n, oc = index
                yield index, [int(x[n, c]) * int(w[oc, c]) for c in range(x.shape[1])]
        return
    if op == "DEPTHWISE_CONV2D":
        kh, kw, _, m_ = w.shape
        for n, oy, ox, ch in itertools.product(*(range(d) for d in out_shape)):
            c, m = divmod(ch, m_)
            terms = []
            for ky, kx in itertools.product(range(kh), range(kw)):
                y = oy * geo["stride"][0] - geo["pad"][0] + ky * geo["dilation"][0]
                xx = ox * geo["stride"][1] - geo["pad"][2] + kx * geo["dilation"][1]
                if 0 <= y < x.shape[1] and 0 <= xx < x.shape[2]:
                    terms.append(int(x[n, y, xx, c]) * int(w[ky, kx, c, m]))
            yield (n, oy, ox, ch), terms
        return
    rank = x.ndim - 2
    ks, ins = w.shape[1:-1], x.shape[1:-1]
    for n, *o, oc in itertools.product(*(range(d) for d in out_shape)):
        terms = []
        for *k, ic in itertools.product(*(range(d) for d in (*ks, x.shape[-1]))):
            if op == "TRANSPOSE_CONV2D":
                # The gather form: output o takes input (o - out_pad - k) / stride.
                t = [o[j] - geo["out_pad"][2 * j] - k[j] for j in range(rank)]
                if any(t[j] % geo["stride"][j] for j in range(rank)):
                    continue
                pos = [t[j] // geo["stride"][j] for j in range(rank)]
            else:
                pos = [
                    o[j] * geo["stride"][j] - geo["pad"][2 * j] + k[j] * geo["dilation"][j]
                    for j in range(rank)
                ]
            if all(0 <= pos[j] < ins[j] for j in range(rank)):
                terms.append(int(x[(n, *pos, ic)]) * int(w[(oc, *k, ic)]))
        yield (n, *o, oc), terms


def first_overflow(products: Any, lo: int, hi: int) -> tuple[int, ...] | None:
    for index, terms in products:
        acc = 0
        for t in terms:
            acc += t
            if not lo <= acc <= hi:
                return tuple(index)
    return None


@pytest.mark.parametrize("op", ALL_OPS)
@given(data=st.data())
def test_running_sums_follow_the_loop_order(op: str, data: st.DataObject) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    izp = data.draw(st.integers(-20, 20), label="input_zp")
    wzp = data.draw(st.integers(-20, 20), label="weight_zp")
    small = lambda shape: rng.integers(-10, 61, size=shape)  # noqa: E731  (mostly positive)
    geo: dict[str, Any] = {}
    attrs: dict[str, Any] = {"input_zp": izp, "weight_zp": wzp}
    if op in ("CONV2D", "CONV3D", "DEPTHWISE_CONV2D"):
        rank = 3 if op == "CONV3D" else 2
        ins, ks, pads, strides, dils, outs = _geometry(data, rank, op)
        geo = {"pad": pads, "stride": strides, "dilation": dils}
        c = data.draw(st.integers(1, 3), label="channels")
        oc = data.draw(st.integers(1, 2), label="OC / M")
        x = small((1, *ins, c))
        w = small((*ks, c, oc) if op == "DEPTHWISE_CONV2D" else (oc, *ks, c))
        out_shape = (1, *outs, c * oc if op == "DEPTHWISE_CONV2D" else oc)
        attrs |= {k: tuple(v) for k, v in geo.items()} | {"acc_type": "INT32"}
    elif op == "TRANSPOSE_CONV2D":
        kh, kw = (data.draw(st.integers(1, 3), label=f"K{a}") for a in "HW")
        ih, iw = (data.draw(st.integers(1, 3), label=f"I{a}") for a in "HW")
        stride = [data.draw(st.integers(1, 2), label=f"stride {a}") for a in "yx"]
        pad = [data.draw(st.integers(1 - k, 1), label=f"out_pad {i}") for i, k in
               enumerate((kh, kh, kw, kw))]  # fmt: skip
        geo = {"out_pad": pad, "stride": stride}
        c = data.draw(st.integers(1, 3), label="IC")
        x, w = small((1, ih, iw, c)), small((2, kh, kw, c))
        oh = (ih - 1) * stride[0] + pad[0] + pad[1] + kh
        ow = (iw - 1) * stride[1] + pad[2] + pad[3] + kw
        if oh < 1 or ow < 1:
            return
        out_shape = (1, oh, ow, 2)
        attrs |= {"out_pad": tuple(pad), "stride": tuple(stride), "acc_type": "INT32"}
    elif op == "FULLY_CONNECTED":
        c = data.draw(st.integers(1, 8), label="IC")
        x, w = small((2, c)), small((3, c))
        out_shape = (2, 3)
    else:
        c = data.draw(st.integers(1, 8), label="C")
        x, w = small((2, 2, c)), small((2, c, 3))
        out_shape = (2, 2, 3)
        attrs = {"A_zp": izp, "B_zp": wzp}
    names = ("x", "w") if op != "MATMUL" else ("a", "b")
    inputs = [(names[0], x, "i8"), (names[1], w, "i8")]
    if op != "MATMUL":
        inputs.append(("bias", np.zeros(1, np.int64), "i32"))
    want = first_overflow(
        loop_products(op, x - izp, w - wzp, out_shape, geo), int(NARROW.min), int(NARROW.max)
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tensor_conv, "_acc_of", lambda ctx, var: NARROW)
        out = run(op, inputs, out_shape, "i32", **attrs)
    event("overflows" if want else "fits")
    if want is None:
        assert out.kind == "valid", str(out)
        return
    assert out.kind == "unpredictable" and out.rule is not None, str(out)
    assert out.rule.clause.startswith("acc = apply_add_s<"), str(out)
    if op != "TRANSPOSE_CONV2D":  # its loop visits outputs in another order
        assert f"at index {list(want)}" in out.rule.detail, (str(out), want)

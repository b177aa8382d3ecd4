"""Cases for the tensor_conv mutants added by the red team (CONV3D, TRANSPOSE_CONV2D,
MATMUL), and for TOSA 1.1's MATMUL_T and mixed-precision modes (cases of the 1.1
revision, ``SPEC_1_1``)."""

from __future__ import annotations

from typing import Any

import numpy as np
from mutant_cases import ARANGE_2X2, Case, case, pool

from conformance.builder import GraphBuilder
from conformance.dtypes import dtype
from conformance.spec import load_revision
from targeted_cases import Cases

SPEC_1_1 = load_revision("1.1-draft")


def conv3d(x: Any, w: Any, out: tuple[int, ...], **attrs: Any) -> Case:
    full = {
        "pad": (0,) * 6,
        "stride": (1, 1, 1),
        "dilation": (1, 1, 1),
        "acc_type": "INT32",
        "input_zp": 0,
        "weight_zp": 0,
        **attrs,
    }
    return case(
        "CONV3D",
        [("x", np.asarray(x), "i8"), ("w", np.asarray(w), "i8"), ("b", [0], "i32")],
        [("y", out, "i32")],
        **full,
    )


def transpose_conv(x: Any, w: Any, stride: tuple[int, int], **attrs: Any) -> Case:
    x, w = np.asarray(x), np.asarray(w)
    n, ih, iw, _ = x.shape
    oc, kh, kw, _ = w.shape
    pad = attrs.pop("out_pad", (0, 0, 0, 0))
    oh = (ih - 1) * stride[0] + pad[0] + pad[1] + kh
    ow = (iw - 1) * stride[1] + pad[2] + pad[3] + kw
    full = {"out_pad": pad, "stride": stride, "acc_type": "INT32", "input_zp": 0, "weight_zp": 0}
    return case(
        "TRANSPOSE_CONV2D",
        [("x", x, "i8"), ("w", w, "i8"), ("b", [0], "i32")],
        [("y", (n, oh, ow, oc), "i32")],
        **(full | attrs),
    )


def matmul(a: Any, b: Any, dt: str = "i8") -> Case:
    a, b = np.asarray(a), np.asarray(b)
    out_dt = "i32" if dt == "i8" else dt
    zero: int | float = 0 if dt == "i8" else 0.0
    return case(
        "MATMUL",
        [("a", a, dt), ("b", b, dt)],
        [("y", (a.shape[0], a.shape[1], b.shape[2]), out_dt)],
        A_zp=zero,
        B_zp=zero,
    )


def conv2d(x: Any, w: Any, out_hw: tuple[int, int], **attrs: Any) -> Case:
    x, w = np.asarray(x), np.asarray(w)
    full = {
        "pad": (0, 0, 0, 0),
        "stride": (1, 1),
        "dilation": (1, 1),
        "acc_type": "INT32",
        "input_zp": 0,
        "weight_zp": 0,
        **attrs,
    }
    out = (x.shape[0], *out_hw, w.shape[0])
    return case(
        "CONV2D", [("x", x, "i8"), ("w", w, "i8"), ("b", [0], "i32")], [("y", out, "i32")], **full
    )


def depthwise(x: Any, out_hw: tuple[int, int], **attrs: Any) -> Case:
    """A 2x1 kernel, channel multiplier 2 (weights 1 and 2)."""
    x = np.asarray(x)
    w = np.array([1, 2, 1, 2]).reshape(2, 1, 1, 2)
    full = {
        "pad": (0, 0, 0, 0),
        "stride": (1, 1),
        "dilation": (1, 1),
        "acc_type": "INT32",
        "input_zp": 0,
        "weight_zp": 0,
        **attrs,
    }
    out = (x.shape[0], *out_hw, 2 * x.shape[3])
    return case(
        "DEPTHWISE_CONV2D",
        [("x", x, "i8"), ("w", w, "i8"), ("b", [0], "i32")],
        [("y", out, "i32")],
        **full,
    )


def fc_float(x: Any, w: Any, dt: str = "fp32") -> Case:
    x, w = np.asarray(x), np.asarray(w)
    return case(
        "FULLY_CONNECTED",
        [("x", x, dt), ("w", w, dt), ("b", [0.0], dt)],
        [("y", (x.shape[0], w.shape[0]), dt)],
        input_zp=0.0,
        weight_zp=0.0,
    )


def pad_conv(
    x: Any, padding: list[int], pad_const: float, dt: str = "i8", input_zp: int = 0
) -> Case:
    """PAD(x, padding, pad_const) feeding a 1x1 CONV2D with weight 1 (2 for floats)."""
    x = np.asarray(x)
    pairs = np.asarray(padding).reshape(-1, 2)
    padded = tuple(int(d + a + b) for d, (a, b) in zip(x.shape, pairs, strict=True))
    is_float = dt != "i8"
    acc, out_dt = ("FP32", dt) if is_float else ("INT32", "i32")
    zero: int | float = 0.0 if is_float else 0
    g = GraphBuilder()
    main = g.block("main")
    main.input("x", x.shape, dt)
    main.tensor("p", (len(padding),), "shape", data=np.asarray(padding, dtype=np.int64))
    main.tensor("t", padded, dt)
    w = np.full((1, 1, 1, padded[3]), 2.0 if is_float else 1).astype(dtype(dt).storage)
    main.tensor("w", w.shape, dt, data=w)
    main.tensor("b", (1,), out_dt, data=np.zeros(1, dtype(out_dt).storage))
    main.tensor("y", (*padded[:3], 1), out_dt)
    main.op("PAD", ["x", "p"], ["t"], pad_const=pad_const)
    attrs = {
        "pad": (0, 0, 0, 0),
        "stride": (1, 1),
        "dilation": (1, 1),
        "acc_type": acc,
        "input_zp": input_zp if not is_float else zero,
        "weight_zp": zero,
    }
    main.op("CONV2D", ["t", "w", "b"], ["y"], **attrs)
    main.output("y")
    return Case(g.build(), {"x": x.astype(dtype(dt).storage)})


def matmul_zp(a: Any, b: Any, a_zp: int, b_zp: int) -> Case:
    a, b = np.asarray(a), np.asarray(b)
    return case(
        "MATMUL",
        [("a", a, "i8"), ("b", b, "i8")],
        [("y", (a.shape[0], a.shape[1], b.shape[2]), "i32")],
        A_zp=a_zp,
        B_zp=b_zp,
    )


def zero_of(dt: str) -> int | float:
    return 0.0 if dtype(dt).is_float else 0


def matmul_1_1(op: str, a: Any, b: Any, types: tuple[str, str, str] = ("i8", "i8", "i32")) -> Case:
    """MATMUL or MATMUL_T of TOSA 1.1 (A_t, B_t, out_t), zero points 0 as the constant
    [1] inputs 1.1 declares."""
    a_t, b_t, out_t = types
    a, b = np.asarray(a), np.asarray(b)
    w = b.shape[1] if op == "MATMUL_T" else b.shape[2]
    return case(
        op,
        [("a", a, a_t), ("b", b, b_t), ("az", [zero_of(a_t)], a_t), ("bz", [zero_of(b_t)], b_t)],
        [("y", (a.shape[0], a.shape[1], w), out_t)],
        consts=("az", "bz"),
        spec=SPEC_1_1,
    )


def conv2d_1_1(x: Any, w: Any, types: tuple[str, str, str], acc: str = "FP32") -> Case:
    """A CONV2D of TOSA 1.1 (in_t, weight_t, out_t), no padding, stride and dilation 1."""
    in_t, w_t, out_t = types
    x, w = np.asarray(x), np.asarray(w)
    n, ih, iw, _ = x.shape
    oc, kh, kw, _ = w.shape
    zx, zw = zero_of(in_t), zero_of(w_t)
    return case(
        "CONV2D",
        [
            ("x", x, in_t),
            ("w", w, w_t),
            ("b", [zero_of(out_t)] * oc, out_t),
            ("xz", [zx], in_t),
            ("wz", [zw], w_t),
        ],
        [("y", (n, ih - kh + 1, iw - kw + 1, oc), out_t)],
        consts=("xz", "wz"),
        spec=SPEC_1_1,
        pad=(0, 0, 0, 0),
        stride=(1, 1),
        dilation=(1, 1),
        acc_type=acc,
    )


def fc(x: Any, w: Any, **zps: int) -> Case:
    x, w = np.asarray(x), np.asarray(w)
    attrs = {"input_zp": 0, "weight_zp": 0, **zps}
    return case(
        "FULLY_CONNECTED",
        [("x", x, "i8"), ("w", w, "i8"), ("b", [0], "i32")],
        [("y", (x.shape[0], w.shape[0]), "i32")],
        **attrs,
    )


def matmul_fp16(a: Any) -> Case:
    a = np.asarray(a).reshape(1, 1, -1)
    b = np.ones((1, a.shape[2], 1))
    return case(
        "MATMUL",
        [("a", a, "fp16"), ("b", b, "fp16")],
        [("y", (1, 1, 1), "fp32")],
        A_zp=0.0,
        B_zp=0.0,
    )


GRID_2X2 = np.array([1, 2, 3, 4]).reshape(1, 2, 2, 1)
GRID_3X3 = np.arange(1, 10).reshape(1, 3, 3, 1)
ONES_2X2_W = np.ones((1, 2, 2, 1))
DEPTH_4 = np.arange(1, 5).reshape(1, 4, 1, 1, 1)  # [N, D, H, W, C]
KD_2 = np.array([1, 10]).reshape(1, 2, 1, 1, 1)  # [OC, KD, KH, KW, IC]
ROW_2 = np.array([1, 2]).reshape(1, 1, 2, 1)
ONES_2X2 = np.ones((1, 2, 2, 1))
GRID_5X4 = np.arange(1, 21).reshape(1, 5, 4, 1)
GRID_4X4 = np.arange(1, 17).reshape(1, 4, 4, 1)
KERNEL_2X2 = np.array([1, 2, 3, 4]).reshape(1, 2, 2, 1)
ONE_1X1 = np.ones((1, 1, 1, 1))

CASES: Cases = {
    "conv3d-dilation-d-ignored": (
        # dilation_d 2: out[0] = 1 * 1 + 10 * 3 = 31, undilated 1 + 10 * 2 = 21
        [lambda: conv3d(DEPTH_4, KD_2, (1, 2, 1, 1, 1), dilation=(2, 1, 1))],
        [
            lambda: conv3d(DEPTH_4, KD_2, (1, 3, 1, 1, 1)),
            lambda: conv3d(
                np.arange(1, 9).reshape(1, 2, 2, 2, 1),
                np.ones((1, 1, 2, 2, 1)),
                (1, 2, 1, 1, 1),
                dilation=(2, 1, 1),
            ),
        ],
    ),
    "transpose-conv-square-stride": (
        [
            lambda: transpose_conv(ROW_2, ONES_2X2, (1, 2)),
            lambda: transpose_conv(np.array([1, 2, 3, 4]).reshape(1, 2, 2, 1), ONES_2X2, (3, 1)),
        ],
        [
            lambda: transpose_conv(ROW_2, ONES_2X2, (2, 2)),
            lambda: transpose_conv(np.array([[[[1], [2]], [[3], [4]]]]), ONES_2X2, (1, 1)),
        ],
    ),
    "matmul-b-batch0": (
        [lambda: matmul(np.ones((2, 1, 2)), np.arange(8).reshape(2, 2, 2))],
        [
            lambda: matmul(np.arange(8).reshape(2, 2, 2), np.ones((2, 2, 1))),
            lambda: matmul(np.ones((1, 2, 3)), np.arange(6).reshape(1, 3, 2), "fp32"),
        ],
    ),
    "conv-pads-zero-before-zp": (
        # padded taps add (0 - 3) * weight: the border outputs move by -3 * 1 per tap
        [
            lambda: conv2d(GRID_3X3, ONES_2X2_W, (3, 3), pad=(1, 0, 1, 0), input_zp=3),
            lambda: depthwise(GRID_3X3, (3, 3), pad=(0, 1, 0, 0), input_zp=-5),
            lambda: conv3d(DEPTH_4, KD_2, (1, 4, 1, 1, 1), pad=(1, 0, 0, 0, 0, 0), input_zp=1),
        ],
        [
            lambda: conv2d(GRID_3X3, ONES_2X2_W, (2, 2), input_zp=3),
            lambda: conv2d(GRID_3X3, ONES_2X2_W, (3, 3), pad=(1, 0, 1, 0)),
            lambda: conv2d(GRID_3X3, ONES_2X2_W, (3, 3), pad=(1, 0, 1, 0), weight_zp=1),
        ],
    ),
    "fully-connected-zero-weights-skipped": (
        [
            lambda: fc_float([[1.0, np.inf]], [[1.0, 0.0], [2.0, 1.0]]),
            lambda: fc_float([[np.nan, 2.0]], [[0.0, 3.0]], "fp16"),
        ],
        [
            lambda: fc_float([[1.0, np.inf]], [[1.0, 2.0], [np.inf, 3.0]]),
            lambda: fc_float([[np.nan, 2.0]], [[1.0, 0.0]]),
            lambda: fc_float([[1.0, 2.0]], [[0.0, 3.0]]),
        ],
    ),
    "conv-folds-pad-const": (
        [
            lambda: pad_conv(GRID_2X2, [0, 0, 1, 1, 1, 1, 0, 0], 5),
            lambda: pad_conv(GRID_2X2, [0, 0, 1, 0, 0, 0, 0, 0], 3, input_zp=-2),
            lambda: pad_conv(GRID_2X2 / 2.0, [0, 0, 0, 0, 1, 1, 0, 0], 1.5, dt="fp32"),
        ],
        [
            lambda: pad_conv(GRID_2X2, [0, 0, 1, 1, 1, 1, 0, 0], 0),
            lambda: pad_conv(GRID_2X2, [0, 0, 1, 1, 0, 0, 0, 0], 4, input_zp=4),
            lambda: pad_conv(GRID_2X2, [1, 0, 0, 0, 0, 0, 0, 0], 7),
            lambda: conv2d(GRID_3X3, ONES_2X2_W, (2, 2)),
        ],
    ),
    "dot-zp-cross-term-dropped": (
        # K * zp_a * zp_b: 4 taps * 2 * 3 = 24 (border outputs of a padded 2x2 kernel: fewer)
        [
            lambda: conv2d(GRID_3X3, ONES_2X2_W, (2, 2), input_zp=2, weight_zp=3),
            lambda: conv2d(
                GRID_3X3, ONES_2X2_W, (3, 3), pad=(1, 0, 1, 0), input_zp=-1, weight_zp=5
            ),
            lambda: matmul_zp(np.arange(6).reshape(1, 2, 3), np.ones((1, 3, 2)), 4, -7),
        ],
        [
            lambda: conv2d(GRID_3X3, ONES_2X2_W, (2, 2), input_zp=2),
            lambda: conv2d(GRID_3X3, ONES_2X2_W, (2, 2), weight_zp=3),
            lambda: matmul_zp(np.arange(6).reshape(1, 2, 3), np.ones((1, 3, 2)), 0, -7),
        ],
    ),
    "matmul-transpose-b-flag-inverted": (
        [
            # MATMUL: A [[1, 2]], B [[1, 2, 3], [4, 5, 6]] (C 2, W 3) gives [9, 12, 15];
            # B's buffer read as [W, C] = [[1, 2], [3, 4], [5, 6]] gives [5, 11, 17].
            lambda: matmul([[[1, 2]]], [[[1, 2, 3], [4, 5, 6]]]),
            # MATMUL_T: B [[1, 2], [3, 4], [5, 6]] ([D, W, C]) gives [5, 11, 17]; read as
            # [C, W] = [[1, 2, 3], [4, 5, 6]] it gives [9, 12, 15].
            lambda: matmul_1_1("MATMUL_T", [[[1, 2]]], [[[1, 2], [3, 4], [5, 6]]]),
        ],
        [
            lambda: matmul(np.ones((1, 2, 2)), np.arange(2).reshape(1, 2, 1)),  # W 1
            lambda: matmul(np.ones((1, 2, 1)), np.arange(3).reshape(1, 1, 3)),  # C 1
            lambda: matmul_1_1("MATMUL_T", [[[2], [3]]], [[[1], [4], [5]]]),  # C 1
        ],
    ),
    "dot-mixed-data-in-weight-type": (
        [
            # fp32 input 1 + 2**-13 (fp16 rounds it to 1) times an fp16 weight 0.5: 0.5 +
            # 2**-14 against 0.5, 2048 error units (bound 0.5: unit 2**-25) past
            # ABS_BOUND 3 * 2 * ksb 2 = 12.
            lambda: conv2d_1_1([[[[1 + 2**-13]]]], [[[[0.5]]]], ("fp32", "fp16", "fp32")),
            # MATMUL_T fp32 x bf16: A 1 + 2**-10 rounds to bf16 1.0, 16384 units off.
            lambda: matmul_1_1("MATMUL_T", [[[1 + 2**-10]]], [[[1.0]]], ("fp32", "bf16", "fp32")),
            # MATMUL fp8e4m3 x fp8e5m2: A 1.125 rounds to e5m2 1.0 (a tie, to even): 1.125 *
            # 2 = 2.25 against 2, far past the relaxed 2 * 1024 units of 2.25 * 2**-24.
            lambda: matmul_1_1("MATMUL", [[[1.125]]], [[[2.0]]], ("fp8e4m3", "fp8e5m2", "fp32")),
        ],
        [
            lambda: conv2d(GRID_3X3, ONES_2X2_W, (2, 2)),  # i8, the draft
            # the data type the narrower: fp8e4m3 and fp16 values are exact in fp16, fp32
            lambda: conv2d_1_1([[[[1.125]]]], [[[[0.3]]]], ("fp8e4m3", "fp16", "fp32")),
            lambda: matmul_1_1(
                "MATMUL_T", [[[0.1, 3.0]]], [[[0.7, -2.0]]], ("fp16", "fp32", "fp32")
            ),
        ],
    ),
    "dot-long-ks-accumulated-in-fp16": (
        # in fp16, 1 + 2**-12 rounds back to 1 at every step: 1, not 1.0625
        [lambda: matmul_fp16([1.0] + [2.0**-12] * 256)],
        [lambda: matmul_fp16([1.0] + [2.0**-12] * 255)],
    ),
    "dot-weight-zp-ignored": (
        # (3 - 1) * 1 + (4 - 1) * 2 = 8, not 11
        [lambda: fc([[1, 2]], [[3, 4]], weight_zp=1)],
        [lambda: fc([[1, 2]], [[3, 4]], input_zp=3)],
    ),
    "pad-top-bottom-swapped": (
        [
            lambda: conv2d(GRID_4X4, ONE_1X1, (5, 4), pad=(1, 0, 0, 0)),
            lambda: pool("AVG_POOL2D", ARANGE_2X2, (2, 2), (1, 1), (1, 0, 0, 0)),
        ],
        [lambda: conv2d(GRID_4X4, ONE_1X1, (6, 5), pad=(1, 1, 0, 1))],
    ),
    "conv-dilation-y-ignored": (
        [lambda: conv2d(GRID_4X4, KERNEL_2X2, (2, 3), dilation=(2, 1))],
        [lambda: conv2d(GRID_4X4, KERNEL_2X2, (3, 2), dilation=(1, 2))],
    ),
    "conv-strides-swapped": (
        [lambda: conv2d(GRID_5X4, ONE_1X1, (3, 4), stride=(2, 1))],
        [lambda: conv2d(np.arange(25).reshape(1, 5, 5, 1), ONE_1X1, (3, 3), stride=(2, 2))],
    ),
}

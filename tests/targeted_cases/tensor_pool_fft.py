"""Cases for the tensor_pool_fft mutants added by the red team (AVG_POOL2D, MAX_POOL2D,
ARGMAX, FFT2D, RFFT2D)."""

from __future__ import annotations

from typing import Any

import numpy as np
from mutant_cases import ARANGE_2X2, Case, case

from targeted_cases import Cases


def pool(op: str, x: Any, dt: str, kernel: tuple[int, int], pad: tuple[int, ...]) -> Case:
    x = np.asarray(x)
    n, ih, iw, c = x.shape
    out = (n, ih + pad[0] + pad[1] - kernel[0] + 1, iw + pad[2] + pad[3] - kernel[1] + 1, c)
    attrs: dict[str, Any] = {"kernel": kernel, "stride": (1, 1), "pad": pad}
    if op == "AVG_POOL2D":
        zero: int | float = 0.0 if dt.startswith(("fp", "bf")) else 0
        acc = "FP32" if dt.startswith(("fp", "bf")) else "INT32"
        attrs |= {"acc_type": acc, "input_zp": zero, "output_zp": zero}
    return case(op, [("x", x, dt)], [("y", out, dt)], **attrs)


def argmax(x: Any, dt: str = "fp32", axis: int = 1) -> Case:
    x = np.asarray(x)
    out = x.shape[:axis] + x.shape[axis + 1 :]
    return case("ARGMAX", [("x", x, dt)], [("y", out, "i32")], axis=axis)


def fft(re: Any, im: Any, inverse: bool) -> Case:
    re, im = np.asarray(re, dtype=float), np.asarray(im, dtype=float)
    return case(
        "FFT2D",
        [("re", re, "fp32"), ("im", im, "fp32")],
        [("yr", re.shape, "fp32"), ("yi", re.shape, "fp32")],
        inverse=inverse,
    )


def rfft(re: Any) -> Case:
    re = np.asarray(re, dtype=float)
    out = (*re.shape[:2], re.shape[2] // 2 + 1)
    return case("RFFT2D", [("re", re, "fp32")], [("yr", out, "fp32"), ("yi", out, "fp32")])


COL_3 = np.array([1.0, 2.0, 3.0]).reshape(1, 3, 1, 1)
ALL_MIN_2X2 = np.full((1, 2, 2, 1), -128)
NEG_INF_ROW = np.array([-np.inf, -np.inf, 1.0, 2.0]).reshape(1, 2, 2, 1)
TIE_2X2 = np.array([1, 2, 3, 4]).reshape(1, 2, 2, 1)

CASES: Cases = {
    "avg-pool-count-trailing-pad": (
        # last row's window is [3, pad]: 3 / 1 = 3, counting the pad gives 1.5
        [
            lambda: pool("AVG_POOL2D", COL_3, "fp32", (2, 1), (0, 1, 0, 0)),
            lambda: pool(
                "AVG_POOL2D", np.array([4, 8]).reshape(1, 1, 2, 1), "i8", (1, 2), (0, 0, 0, 1)
            ),
        ],
        [
            lambda: pool("AVG_POOL2D", COL_3, "fp32", (2, 1), (1, 0, 0, 0)),
            lambda: pool("AVG_POOL2D", COL_3, "fp32", (2, 1), (0, 0, 0, 0)),
        ],
    ),
    "max-pool-int-pad-symmetric-min": (
        [
            lambda: pool("MAX_POOL2D", ALL_MIN_2X2, "i8", (2, 2), (1, 0, 1, 0)),
            lambda: pool("MAX_POOL2D", np.full((1, 1, 2, 1), -32768), "i16", (1, 2), (0, 0, 0, 1)),
        ],
        [
            lambda: pool("MAX_POOL2D", ALL_MIN_2X2, "i8", (2, 2), (0, 0, 0, 0)),
            lambda: pool("MAX_POOL2D", np.full((1, 2, 2, 1), -127), "i8", (2, 2), (1, 1, 1, 1)),
            lambda: pool("MAX_POOL2D", -COL_3, "fp32", (2, 1), (1, 1, 0, 0)),
        ],
    ),
    "argmax-int-unsigned-compare": (
        # -1 is 255 unsigned: index 0, not 1
        [lambda: argmax([[-1, 5, 3]], "i8", 1), lambda: argmax([[7], [-300]], "i16", 0)],
        [
            lambda: argmax([[1, 5, 3], [-7, -2, -3]], "i8", 1),
            lambda: argmax([[-1.0, 5.0]], "fp32", 1),
        ],
    ),
    "fft2d-inverse-normalised": (
        [lambda: fft([[[1.0, 2.0, 3.0, 4.0]]], [[[0.0, 1.0, 0.0, 0.0]]], True)],
        [
            lambda: fft([[[1.0, 2.0, 3.0, 4.0]]], [[[0.0, 1.0, 0.0, 0.0]]], False),
            lambda: fft([[[3.0]]], [[[1.0]]], True),
        ],
    ),
    "rfft-nyquist-column-dropped": (
        # column 2 of [1, 2, 3, 4] is 1 - 2 + 3 - 4 = -2
        [lambda: rfft([[[1.0, 2.0, 3.0, 4.0]]]), lambda: rfft([[[1.0, -1.0], [2.0, 0.0]]])],
        [lambda: rfft([[[5.0], [2.0]]])],
    ),
    "argmax-signed-zero-ordered": (
        # -0.0 and +0.0 are equal: the first one (index 1) is the answer
        [
            lambda: argmax([[-1.0, -0.0, 0.0]], "fp32", 1),
            lambda: argmax([[-0.0], [0.0]], "fp16", 0),
        ],
        [
            lambda: argmax([[0.0, -0.0, -1.0], [-0.0, -0.0, -2.0]], "fp32", 1),
            lambda: argmax([[1.0, -0.0, 0.0], [np.nan, -0.0, 0.0]], "bf16", 1),
            lambda: argmax([[-1, 0, 0]], "i8", 1),
        ],
    ),
    "max-pool-init-lowest-finite": (
        [
            lambda: pool("MAX_POOL2D", NEG_INF_ROW, "fp32", (1, 2), (0, 0, 0, 0)),
            lambda: pool("MAX_POOL2D", NEG_INF_ROW, "bf16", (2, 1), (1, 0, 0, 0)),
        ],
        [
            lambda: pool("MAX_POOL2D", NEG_INF_ROW, "fp32", (2, 1), (0, 0, 0, 0)),
            lambda: pool("MAX_POOL2D", np.full((1, 1, 2, 1), -448.0), "fp8e4m3", (1, 2), (0,) * 4),
            lambda: pool("MAX_POOL2D", ALL_MIN_2X2, "i8", (2, 2), (0, 0, 0, 0)),
        ],
    ),
    "avg-pool-int-mean-rounded-even": (
        # 10 / 4 = 2.5 rounds to 3 (and -10 / 4 to -3); half to even gives 2 and -2
        [
            lambda: pool("AVG_POOL2D", TIE_2X2, "i8", (2, 2), (0, 0, 0, 0)),
            lambda: pool("AVG_POOL2D", -TIE_2X2, "i16", (2, 2), (0, 0, 0, 0)),
        ],
        [
            # 1.5 and -1.5 have an even neighbour away from zero; 13 / 4 is no tie
            lambda: pool(
                "AVG_POOL2D", np.array([1, 2]).reshape(1, 1, 2, 1), "i8", (1, 2), (0,) * 4
            ),
            lambda: pool(
                "AVG_POOL2D", np.array([-1, -2]).reshape(1, 1, 2, 1), "i8", (1, 2), (0,) * 4
            ),
            lambda: pool("AVG_POOL2D", TIE_2X2 + 1 - TIE_2X2 // 4, "i8", (2, 2), (0,) * 4),
        ],
    ),
    "argmax-nan-ignored": (
        # NaN compares greater than every number: index 1, not 0
        [lambda: argmax([[1.0, np.nan, 0.5]]), lambda: argmax([[np.nan, np.nan]])],
        [lambda: argmax([[-0.0, 0.0, -1.0]]), lambda: argmax([[1.0, 3.0, 3.0]])],
    ),
    "max-pool-nan-ignored": (
        [
            lambda: pool(
                "MAX_POOL2D", [[[[1.0], [np.nan]], [[3.0], [4.0]]]], "fp32", (2, 2), (0,) * 4
            )
        ],
        [lambda: pool("MAX_POOL2D", ARANGE_2X2, "fp32", (2, 2), (1, 0, 1, 0))],
    ),
}

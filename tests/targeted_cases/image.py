"""Cases for the RESIZE mutants added by the red team."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from mutant_cases import ARANGE_2X2, Case, case

from targeted_cases import Cases


def resize(
    x: Any,
    dt: str,
    out_dt: str,
    mode: str,
    scale: list[int],
    border: list[int],
    offset: Sequence[int] = (0, 0),
) -> Case:
    x = np.asarray(x)
    n, ih, iw, c = x.shape
    oh = ((ih - 1) * scale[0] - offset[0] + border[0]) // scale[1] + 1
    ow = ((iw - 1) * scale[2] - offset[1] + border[1]) // scale[3] + 1
    shapes = [("scale", scale), ("offset", list(offset)), ("border", border)]
    return case(
        "RESIZE",
        [("x", x, dt), *((name, np.array(v), "shape") for name, v in shapes)],
        [("y", (n, oh, ow, c), out_dt)],
        consts=("scale", "offset", "border"),
        mode=mode,
    )


INF_2X2 = np.array([np.inf, 1.0, 2.0, 3.0]).reshape(1, 2, 2, 1)
BIG_I16 = np.array([32767, -32768, 1000, 5]).reshape(1, 2, 2, 1)

CASES: Cases = {
    "resize-i48-accumulated-in-i32": (
        # the weights sum to scale_y_n * scale_x_n = 2**18: 32767 * 2**18 leaves int32
        [
            lambda: resize(
                np.full((1, 2, 2, 1), 32767), "i16", "i48", "BILINEAR", [512, 256, 512, 256], [0, 0]
            ),
            lambda: resize(BIG_I16, "i16", "i48", "BILINEAR", [1024, 512, 1024, 512], [0, 0]),
        ],
        [
            lambda: resize(BIG_I16, "i16", "i48", "BILINEAR", [4, 2, 4, 2], [0, 0]),
            lambda: resize(BIG_I16, "i16", "i16", "NEAREST_NEIGHBOR", [256, 128, 256, 128], [0, 0]),
            lambda: resize(
                np.array([100, -100, 7, 0]).reshape(1, 2, 2, 1),
                "i8",
                "i32",
                "BILINEAR",
                [2048, 1024, 2048, 1024],
                [0, 0],
            ),
        ],
    ),
    "resize-bilinear-lerp": (
        # 2x upscale: output (0, 0) samples the infinity with weight 1 (inf * 1 + 1 * 0 is
        # inf; inf + (1 - inf) * 0 is NaN)
        [
            lambda: resize(INF_2X2, "fp32", "fp32", "BILINEAR", [2, 1, 2, 1], [0, 0]),
            lambda: resize(
                np.full((1, 2, 2, 1), -np.inf), "fp16", "fp16", "BILINEAR", [4, 2, 4, 2], [0, 0]
            ),
        ],
        [
            lambda: resize(
                np.arange(4.0).reshape(1, 2, 2, 1), "fp32", "fp32", "BILINEAR", [4, 2, 4, 2], [0, 0]
            ),
            lambda: resize(INF_2X2, "fp32", "fp32", "NEAREST_NEIGHBOR", [2, 1, 2, 1], [0, 0]),
            lambda: resize(
                np.array([1.0, np.nan, 2.0, 3.0]).reshape(1, 2, 2, 1),
                "fp32",
                "fp32",
                "BILINEAR",
                [2, 1, 2, 1],
                [0, 0],
            ),
        ],
    ),
    "resize-negative-offset-clamped": (
        [
            lambda: resize(
                ARANGE_2X2, "fp32", "fp32", "BILINEAR", [4, 2, 4, 2], [1, 1], offset=[-1, -1]
            )
        ],
        [
            lambda: resize(
                ARANGE_2X2, "fp32", "fp32", "BILINEAR", [4, 2, 4, 2], [-1, -1], offset=[1, 1]
            )
        ],
    ),
    "resize-border-ignored": (
        [lambda: resize(ARANGE_2X2, "fp32", "fp32", "BILINEAR", [4, 2, 4, 2], [2, 2])],
        [lambda: resize(ARANGE_2X2, "fp32", "fp32", "BILINEAR", [4, 2, 4, 2], [0, 0])],
    ),
}

"""Cases for the mutant of TOSA 1.1's AVG_POOL2D_ADAPTIVE and MAX_POOL2D_ADAPTIVE
(cases of the 1.1 revision)."""

from __future__ import annotations

from typing import Any

import numpy as np
from mutant_cases import Case, case

from conformance.dtypes import dtype
from conformance.spec import load_revision
from targeted_cases import Cases

SPEC_1_1 = load_revision("1.1-draft")


def pool(
    op: str,
    x: Any,
    dt: str,
    kernel: tuple[int, int],
    stride: tuple[int, int],
    pad: tuple[int, int, int, int],
) -> Case:
    """An _ADAPTIVE pooling with kernel, stride and pad as constant shape inputs (and,
    for AVG, zero points 0 as the [1] inputs declared before them)."""
    x = np.asarray(x)
    n, ih, iw, c = x.shape
    oh = (ih + pad[0] + pad[1] - kernel[0]) // stride[0] + 1
    ow = (iw + pad[2] + pad[3] - kernel[1]) // stride[1] + 1
    window = [("k", kernel, "shape"), ("s", stride, "shape"), ("p", pad, "shape")]
    if op == "AVG_POOL2D_ADAPTIVE":
        zero = 0.0 if dtype(dt).is_float else 0
        zps = [("iz", [zero], dt), ("oz", [zero], dt)]
        attrs: dict[str, Any] = {"acc_type": "FP32" if dtype(dt).is_float else "INT32"}
    else:
        zps, attrs = [], {"nan_mode": "PROPAGATE"}
    inputs = [("x", x, dt), *zps, *window]
    consts = tuple(name for name, _, _ in inputs[1:])
    return case(op, inputs, [("y", (n, oh, ow, c), dt)], consts, spec=SPEC_1_1, **attrs)


GRID_3X3 = np.arange(1, 10).reshape(1, 3, 3, 1)
COL_3 = np.array([1.0, 2.0, 3.0]).reshape(1, 3, 1, 1)
ROW_3 = np.array([4, 8, 12]).reshape(1, 1, 3, 1)

CASES: Cases = {
    "adaptive-pool-framework-windows": (
        [
            # kernel 1, stride 2 over 3 x 3: TOSA picks 1, 3, 7, 9; the framework's 2 x 2
            # windows rows [0, 2) and [1, 3) (and the same columns) give 5, 6, 8, 9
            lambda: pool("MAX_POOL2D_ADAPTIVE", GRID_3X3, "i8", (1, 1), (2, 2), (0, 0, 0, 0)),
            # kernel 3, pads 1 and 1: TOSA averages [1, 2], [1, 2, 3], [2, 3] = 1.5, 2,
            # 2.5; the framework's windows are single rows: 1, 2, 3
            lambda: pool("AVG_POOL2D_ADAPTIVE", COL_3, "fp32", (3, 1), (1, 1), (1, 1, 0, 0)),
            # kernel 1, stride 2 along x: TOSA takes 4 and 12; the framework averages
            # [4, 8] = 6 and [8, 12] = 10
            lambda: pool("AVG_POOL2D_ADAPTIVE", ROW_3, "i8", (1, 1), (1, 2), (0, 0, 0, 0)),
        ],
        [
            # stride = kernel, no pad, the input OH x OW kernels: the same windows
            lambda: pool(
                "MAX_POOL2D_ADAPTIVE",
                np.arange(16.0).reshape(1, 4, 4, 1),
                "fp32",
                (2, 2),
                (2, 2),
                (0, 0, 0, 0),
            ),
            lambda: pool(
                "AVG_POOL2D_ADAPTIVE",
                np.array([1, 2, 3, 4, 5, 6, 7, 9]).reshape(1, 4, 2, 1),
                "i8",
                (2, 1),
                (2, 1),
                (0, 0, 0, 0),
            ),
        ],
    ),
}

"""Cases for the mutants of TOSA 1.1's block-scaled operators (cases of the 1.1
revision).  CAST_TO_BLOCK_SCALED's mutants are not here: its precision rule checks its
two outputs together, which the per-output check these tests use cannot state; they
are killed in tests/strategies/test_recipes_block_scaled_1_1.py."""

from __future__ import annotations

from typing import Any

import numpy as np
from mutant_cases import Case, case

from conformance import dtypes
from conformance.spec import load_revision
from reference import mx
from targeted_cases import Cases

SPEC_1_1 = load_revision("1.1-draft")
B32 = {"block_size": "BLOCK_SIZE_32"}


def ue8m0(codes: Any) -> np.ndarray:
    return mx.from_bits(np.asarray(codes), dtypes.FP8UE8M0).astype(np.float64)


def cast_from(data: Any, scale_codes: Any, value: str = "fp4e2m1", out: str = "fp32") -> Case:
    x = np.asarray(data, np.float64)
    return case(
        "CAST_FROM_BLOCK_SCALED",
        [("x", x, value), ("s", ue8m0(scale_codes), "fp8ue8m0")],
        [("y", x.shape, out)],
        spec=SPEC_1_1,
        **B32,
    )


def matmul_t(a: Any, sa: Any, b: Any, sb: Any) -> Case:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return case(
        "MATMUL_T_BLOCK_SCALED",
        [
            ("a", a, "fp4e2m1"),
            ("as", ue8m0(sa), "fp8ue8m0"),
            ("b", b, "fp4e2m1"),
            ("bs", ue8m0(sb), "fp8ue8m0"),
        ],
        [("y", (a.shape[0], a.shape[1], b.shape[1]), "fp32")],
        spec=SPEC_1_1,
        **B32,
    )


def conv(x: Any, w: Any, ws: Any) -> Case:
    x, w = np.asarray(x, np.float64), np.asarray(w, np.float64)
    n, ih, iw, ic = x.shape
    oc, kh, kw, _ = w.shape
    return case(
        "CONV2D_BLOCK_SCALED",
        [
            ("x", x, "fp6e2m3"),
            ("xs", ue8m0(np.full((n, ih, iw, ic // 32), 0x7F)), "fp8ue8m0"),
            ("w", w, "fp6e2m3"),
            ("ws", ue8m0(ws), "fp8ue8m0"),
            ("b", [0.0], "fp32"),
            ("pad", [0, 0, 0, 0], "shape"),
            ("stride", [1, 1], "shape"),
            ("dilation", [1, 1], "shape"),
        ],
        [("y", (n, ih - kh + 1, iw - kw + 1, oc), "fp32")],
        consts=("pad", "stride", "dilation"),
        spec=SPEC_1_1,
        **B32,
    )


FP4_ALL = np.tile(mx.decode_bits(np.arange(16), dtypes.FP4E2M1), 2).reshape(1, 32)
ONES_64 = np.ones((1, 1, 64))

CASES: Cases = {
    "block-scale-nan-as-exponent": (
        # 1.0 * NaN scale is NaN, not 2**128 (inf in fp32); 0 * NaN is NaN, not 0
        [
            lambda: cast_from(np.ones((1, 64)), [[0x7F, 0xFF]]),
            lambda: cast_from(FP4_ALL, [[0xFF]], out="bf16"),
        ],
        [
            lambda: cast_from(FP4_ALL, [[0xFE]]),
            lambda: cast_from(np.ones((2, 32)), [[0x00], [0x7F]], "mxint8"),
        ],
    ),
    "block-value-subnormals-as-zero": (
        # fp4e2m1 0b0001 is 0.5 (times 2: 1.0), not 0
        [
            lambda: cast_from(FP4_ALL, [[0x80]]),
            lambda: cast_from(np.full((1, 32), 0.125), [[0x7F]], "fp6e2m3"),
        ],
        [
            lambda: cast_from(np.full((1, 32), 1.5), [[0x7F]]),
            lambda: cast_from(FP4_ALL, [[0x7F]], "fp8e4m3"),
        ],
    ),
    "block-scale-first-block-only": (
        # blocks scaled 1 and 4: 32 * 1 + 32 * 4 = 160, not 64
        [lambda: matmul_t(ONES_64, [[[0x7F, 0x81]]], ONES_64, [[[0x7F, 0x7F]]])],
        [
            lambda: matmul_t(
                np.ones((1, 2, 32)), [[[0x7F], [0x80]]], np.ones((1, 1, 32)), [[[0x81]]]
            ),
            lambda: matmul_t(ONES_64, [[[0x7F, 0x7F]]], ONES_64, [[[0x80, 0x80]]]),
        ],
    ),
    "block-weight-scale-tap-zero": (
        # a 1x2 kernel whose second tap has scale 2: 32 + 64 = 96, not 64
        [lambda: conv(np.ones((1, 1, 2, 32)), np.ones((1, 1, 2, 32)), [[[[0x7F], [0x80]]]])],
        [
            lambda: conv(np.ones((1, 2, 2, 32)), np.ones((2, 1, 1, 32)), [[[[0x80]]], [[[0x7E]]]]),
            lambda: conv(np.ones((1, 1, 2, 32)), np.ones((1, 1, 2, 32)), [[[[0x80], [0x80]]]]),
        ],
    ),
}

"""Cases for the mutants of TOSA 1.1's block-scaled (bs32_fp8ue8m0_*_t) modes of CONV2D,
CONV3D, TRANSPOSE_CONV2D and MATMUL_T (conformance/backends/mutants/tensor_conv.py):
each element is read as scale * value, rounded in the accumulator (tensor_read.tosac)."""

from __future__ import annotations

from typing import Any

import numpy as np
from block_helpers import composite
from mutant_cases import Case

from conformance import dtypes
from conformance.block_tensor import BlockScaled
from conformance.builder import single_operator_graph
from conformance.spec import load_revision, spec_in_use
from targeted_cases import Cases

SPEC_1_1 = load_revision("1.1-draft")
E4M3 = dtypes.dtype("bs32_fp8ue8m0_fp8e4m3")
FP4 = dtypes.dtype("bs32_fp8ue8m0_fp4e2m1")


def matmul_t(a: BlockScaled, b: BlockScaled) -> Case:
    """MATMUL_T of two composites into fp32 (zero points fp32 0, constants)."""
    n, h, _ = a.shape
    zp = np.zeros(1, np.float32)
    with spec_in_use(SPEC_1_1):
        graph = single_operator_graph(
            "MATMUL_T",
            [
                ("a", a.shape, a.dtype),
                ("b", b.shape, b.dtype),
                ("a_zp", (1,), dtypes.FP32),
                ("b_zp", (1,), dtypes.FP32),
            ],
            [("y", (n, h, b.shape[1]), dtypes.FP32)],
            {},
            constants={"a_zp": zp, "b_zp": zp},
            strict=False,
            spec=SPEC_1_1,
        )
    return Case(graph, {"a": a, "b": b}, SPEC_1_1)  # type: ignore[dict-item]


ONE = 2  # fp4e2m1 code of 1.0


def _ones_b(exponents: Any, c: int = 32) -> BlockScaled:
    return composite(FP4, np.full((1, 1, c), ONE), exponents)


def _e4m3(values: Any, exponents: Any) -> BlockScaled:
    return composite(E4M3, np.asarray(values, np.float64), exponents)


_CANCEL = np.zeros((1, 1, 32))
_CANCEL[0, 0, :2] = [448.0, -448.0]

CASES: Cases = {
    "block-scale-ignored": (
        # A 1.0 at scale 2**3, B 1.0: 32 * 8 = 256, not 32
        [lambda: matmul_t(_e4m3(np.ones((1, 1, 32)), [[[3]]]), _ones_b([[[0]]]))],
        [lambda: matmul_t(_e4m3(np.ones((1, 1, 32)), [[[0]]]), _ones_b([[[0]]]))],
    ),
    "block-scale-first-of-channel": (
        # B's two blocks scaled 1 and 16: 32 + 32 * 16 = 544, not 64
        [lambda: matmul_t(_e4m3(np.ones((1, 1, 64)), [[[0, 0]]]), _ones_b([[[0, 4]]], 64))],
        [lambda: matmul_t(_e4m3(np.ones((1, 2, 32)), [[[1], [2]]]), _ones_b([[[3]]]))],
    ),
    "block-nan-scale-as-one": (
        # B's NaN scale makes every product NaN: NaN, not 32
        [lambda: matmul_t(_e4m3(np.ones((1, 1, 32)), [[[0]]]), _ones_b([[[None]]]))],
        [lambda: matmul_t(_e4m3(np.ones((1, 1, 32)), [[[0]]]), _ones_b([[[5]]]))],
    ),
    "block-scale-exact-product": (
        # 448 and -448 at 2**127 overflow fp32 to +inf and -inf: the sum is NaN, not 0
        [lambda: matmul_t(_e4m3(_CANCEL, [[[127]]]), _ones_b([[[0]]]))],
        [lambda: matmul_t(_e4m3(_CANCEL, [[[0]]]), _ones_b([[[0]]]))],
    ),
}

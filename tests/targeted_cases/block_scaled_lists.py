"""Cases for the mutants of TOSA 1.1's block-scaled tensor-list operators,
RESHAPE_BLOCK_SCALED and ROW_GATHER_BLOCK_SCALED (cases of the 1.1 revision)."""

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


def fp4(shape: tuple[int, ...]) -> np.ndarray:
    """fp4e2m1 values cycling through its 16 encodings."""
    codes = np.arange(int(np.prod(shape))) % 16
    return mx.from_bits(codes.reshape(shape), dtypes.FP4E2M1).astype(np.float64)


def reshape(
    values: np.ndarray, scale_codes: Any, new: tuple[int, ...], value_t: str = "fp4e2m1"
) -> Case:
    s = ue8m0(scale_codes)
    new_scales = (*new[:-1], new[-1] // 32)
    return case(
        "RESHAPE_BLOCK_SCALED",
        [("v", values, value_t), ("s", s, "fp8ue8m0"), ("shape", list(new), "shape")],
        [("ov", new, value_t), ("os", new_scales, "fp8ue8m0")],
        consts=("shape",),
        spec=SPEC_1_1,
        **B32,
    )


def row_gather(values: np.ndarray, scale_codes: Any, indices: Any, row_count: int) -> Case:
    s, k = ue8m0(scale_codes), np.asarray(indices)
    n, _, c = values.shape
    rows = k.shape[1] * row_count
    inputs = [("v", values, "fp4e2m1"), ("s", s, "fp8ue8m0"), ("k", k, "i32")]
    return case(
        "ROW_GATHER_BLOCK_SCALED",
        [*inputs, ("r", [row_count], "i32")],
        [("ov", (n, rows, c), "fp4e2m1"), ("os", (n, rows, c // 32), "fp8ue8m0")],
        consts=("r",),
        spec=SPEC_1_1,
        **B32,
    )


def values_alone_gather(row_count: int) -> Case:
    v, k = np.arange(12).reshape(1, 4, 3), np.array([[2, 0]])
    return case(
        "ROW_GATHER_BLOCK_SCALED",
        [("v", v, "i8"), ("k", k, "i32"), ("r", [row_count], "i32")],
        [("ov", (1, 2 * row_count, 3), "i8")],
        consts=("r",),
        spec=SPEC_1_1,
        block_size="BLOCK_SIZE_1",
    )


CASES: Cases = {
    "reshape-bs-scales-column-major": (
        [
            # [2, 64] with scales [[1, 2], [3, 4]] (codes 0x70 ...) to [4, 32]: the
            # scales [4, 1] are 0x70, 0x71, 0x72, 0x73 in row-major order; column-major
            # gives 0x70, 0x72, 0x71, 0x73
            lambda: reshape(fp4((2, 64)), [[0x70, 0x71], [0x72, 0x73]], (4, 32)),
            # [1, 4, 32] to [2, 64]: the scales [1, 4, 1] become [2, 2] (column-major
            # fills [[s0, s2], [s1, s3]]); the NaN scale moves with them
            lambda: reshape(fp4((1, 4, 32)), [[[0x01], [0xFF], [0x80], [0xFE]]], (2, 64)),
        ],
        [
            # one row of scales in and out: both orders are the same
            lambda: reshape(fp4((1, 128)), [[0x10, 0x20, 0x30, 0x40]], (128,)),
            # [4, 32] to [128]: scales [4, 1] to [4], one dimension above 1 on either
            # side, where both orders read and write 1, 2, 3, 4
            lambda: reshape(fp4((4, 32)), [[1], [2], [3], [4]], (128,)),
        ],
    ),
    "row-gather-bs-scales-first-row": (
        [
            # rows 0 .. 3 with scale codes 0x70 + row; index 1 with row_count 2 reads
            # rows 1 and 2: scales 0x71, 0x72 (the mutant: 0x71, 0x71)
            lambda: row_gather(fp4((1, 4, 32)), [[[0x70], [0x71], [0x72], [0x73]]], [[1]], 2),
            # two indices (2, 0) of 3 rows, 2 blocks per row, the NaN scale in row 1
            lambda: row_gather(
                fp4((1, 5, 64)),
                [[[1, 2], [0xFF, 4], [5, 6], [7, 8], [9, 10]]],
                [[2, 0]],
                3,
            ),
        ],
        [
            # row_count 1: a window is one row, its first
            lambda: row_gather(fp4((1, 4, 32)), [[[1], [2], [3], [4]]], [[3, 0, 1]], 1),
            # values alone (no scales to gather)
            lambda: values_alone_gather(2),
        ],
    ),
}

"""Cases for the CAST and RESCALE mutants of the second red-team pass."""

from __future__ import annotations

from typing import Any

import numpy as np
from mutant_cases import ONE_30, Case, case, rescale, unary

# one below a bf16 tie: fp32 rounds it onto the tie, which then goes to even
NEAR_TIE = ONE_30 + 3 * (1 << 22) - 1


def nans(*bits: int) -> np.ndarray:
    """fp32 values with the given bit patterns (NaN payloads kept)."""
    return np.array(bits, dtype=np.uint32).view(np.float32)


def per_channel(x: Any, shifts: list[int]) -> Case:
    """A per-channel i8 -> i32 RESCALE: multiplier 2**30 everywhere, one shift per channel."""
    arr = np.asarray(x)
    nc = len(shifts)
    return case(
        "RESCALE",
        [
            ("x", arr, "i8"),
            ("m", np.full(nc, ONE_30), "i32"),
            ("s", np.asarray(shifts), "i8"),
        ],
        [("y", arr.shape, "i32")],
        consts=("m", "s"),
        input_zp=0,
        output_zp=0,
        scale32=True,
        double_round=False,
        per_channel=True,
        input_unsigned=False,
        output_unsigned=False,
    )


CASES = {
    "cast-bool-true-minus-one": (
        [lambda: unary("CAST", [True, False], "bool", "i8")],
        [
            lambda: unary("CAST", [False, False], "bool", "i32"),
            lambda: unary("CAST", [True], "bool", "fp32"),
        ],
    ),
    "cast-to-bool-low-byte": (
        [
            lambda: unary("CAST", [256, 1], "i32", "bool"),
            lambda: unary("CAST", [-512], "i16", "bool"),
        ],
        [
            lambda: unary("CAST", [0, 1, -1, 257], "i32", "bool"),
            lambda: unary("CAST", [0, -128], "i8", "bool"),
        ],
    ),
    "rescale-output-unsigned-clamped-signed": (
        # 100 * 2 = 200 as uint8, not 127
        [lambda: rescale([100, 10], "i16", "i8", ONE_30, 29, output_unsigned=True)],
        [
            lambda: rescale([60, -10], "i16", "i8", ONE_30, 29, output_unsigned=True),
            lambda: rescale([100], "i16", "i8", ONE_30, 29),
        ],
    ),
    "rescale-unsigned-zero-point-sign-extended": (
        [
            # uint16 200 - 32768 = -32568; with the zero point read as -32768 it is
            # 200 + 32768, clamped to 32767
            lambda: rescale([200], "i16", "i16", ONE_30, 30, input_unsigned=True, input_zp=32768),
            lambda: rescale([10], "i8", "i16", ONE_30, 30, input_unsigned=True, input_zp=200),
            lambda: rescale([10], "i16", "i8", ONE_30, 30, output_unsigned=True, output_zp=130),
        ],
        [
            lambda: rescale([200], "i8", "i16", ONE_30, 30, input_unsigned=True, input_zp=100),
            lambda: rescale([10], "i16", "i8", ONE_30, 30, input_zp=-100),
        ],
    ),
    "cast-to-bf16-nan-payload-lost": (
        [lambda: unary("CAST", nans(0x7F800001, 0xFF80FFFF), "fp32", "bf16")],
        [
            lambda: unary(
                "CAST", nans(0x7FC00000, 0xFFC00001, 0x7F810000, 0x7F80FFFF), "fp32", "bf16"
            ),
            lambda: unary("CAST", [1.0, -np.inf, 3e38], "fp32", "bf16"),
        ],
    ),
    "rescale-double-round-at-shift-31": (
        # 3 * 2**30 >> 31 rounds to 2 (round 2**30); with 2**31 it gives 2
        [
            lambda: rescale([1, -1, 3], "i16", "i32", ONE_30, 31, double_round=True),
        ],
        [
            lambda: rescale([1, -1, 3], "i16", "i32", ONE_30, 31),
            lambda: rescale([1, -1, 3], "i16", "i32", ONE_30, 32, double_round=True),
            lambda: rescale([1, -1, 3], "i16", "i32", ONE_30, 30, double_round=True),
        ],
    ),
    "rescale-channel-index-u8-wraps": (
        # channel 256 has shift 31 (4 -> 2); read from channel 0's shift 30 it stays 4
        [lambda: per_channel(np.full((2, 300), 4), [30] * 256 + [31] * 44)],
        [
            lambda: per_channel(np.full((2, 256), 4), [30] * 255 + [31]),
            # channel c and c - 256 alike: nothing can show
            lambda: per_channel(np.full((1, 300), 4), (([30] * 128 + [31] * 128) * 2)[:300]),
        ],
    ),
    "rescale-output-zp-after-clamp": (
        # 75 * 2 = 150, then -100: 50 (clamping 150 first would give 27)
        [lambda: rescale([75], "i8", "i8", ONE_30, 29, output_zp=-100)],
        [lambda: rescale([10, -60], "i8", "i8", ONE_30, 29, output_zp=-100)],
    ),
    "rescale-input-unsigned-ignored": (
        # the stored byte -56 is uint8 200
        [lambda: rescale([-56], "i8", "i16", ONE_30, 30, input_unsigned=True)],
        [lambda: rescale([100, 0], "i8", "i16", ONE_30, 30, input_unsigned=True, input_zp=7)],
    ),
    "cast-i32-to-bf16-double-rounded": (
        # just below the tie between 2**30 + 2**23 (odd) and 2**30 + 2**24 (even)
        [lambda: unary("CAST", [NEAR_TIE, -NEAR_TIE], "i32", "bf16")],
        [lambda: unary("CAST", [NEAR_TIE + 1, 2**24 + 1, -7], "i32", "bf16")],
    ),
    "cast-float-to-int-min-wraps": (
        [lambda: unary("CAST", [-200.0, -np.inf, 5.0], "fp32", "i8")],
        [
            lambda: unary("CAST", [-128.4, 300.0, np.inf, 5.0], "fp32", "i8"),
            lambda: unary("CAST", [-3e9, 2.5], "fp32", "i32"),
        ],
    ),
}

"""reference.mx: the TOSA 1.1 microscaling element types and the block scale, checked
against hand-worked values and against ml_dtypes where the two must agree."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from conformance import dtypes
from reference import mx

FP4, FP6A, FP6B = dtypes.FP4E2M1, dtypes.FP6E2M3, dtypes.FP6E3M2
UE8M0, MXINT8 = dtypes.FP8UE8M0, dtypes.MXINT8

# Every fp4e2m1 encoding by hand: s.ee.m, bias 1; exponent 0 is subnormal (m * 0.5).
FP4_VALUES = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def test_every_fp4e2m1_encoding_by_hand() -> None:
    got = mx.decode_bits(np.arange(16), FP4)
    np.testing.assert_array_equal(got[:8], FP4_VALUES)
    np.testing.assert_array_equal(got[8:], [-v for v in FP4_VALUES])
    assert np.signbit(got[8])  # 0b1000 is -0.0
    assert got[0b0111] == 6.0  # (1 + 1/2) * 2**(3-1)
    assert got[0b0001] == 0.5  # subnormal: 1/2 * 2**(1-1)


def test_fp6_encodings_by_hand() -> None:
    a = mx.decode_bits(np.arange(64), FP6A)  # s.ee.mmm, bias 1
    assert a[0b011111] == 7.5  # (1 + 7/8) * 2**2
    assert a[0b000001] == 0.125  # subnormal 1/8 * 2**0
    assert a[0b001000] == 1.0 and a[0b100000] == 0.0 and np.signbit(a[0b100000])
    b = mx.decode_bits(np.arange(64), FP6B)  # s.eee.mm, bias 3
    assert b[0b011111] == 28.0  # (1 + 3/4) * 2**(7-3)
    assert b[0b000001] == 0.0625  # subnormal 1/4 * 2**-2
    assert b[0b000100] == 0.25  # normal_min 2**(1-3)
    assert b[0b101100] == -1.0
    # 64 distinct values but for the two zeros, all finite (no inf, no NaN)
    for v in (a, b):
        assert np.all(np.isfinite(v)) and len(np.unique(v)) == 63


def test_every_ue8m0_encoding() -> None:
    got = mx.decode_bits(np.arange(256), UE8M0)
    assert got[0x7F] == 1.0 and got[0x80] == 2.0 and got[0x7E] == 0.5
    assert got[0x00] == 2.0**-127 and got[0xFE] == 2.0**127
    assert np.isnan(got[0xFF]) and np.all(np.isfinite(got[:255]))
    assert np.all(got[:255] > 0)  # no zero, no sign
    np.testing.assert_array_equal(np.log2(got[:255]), np.arange(255) - 127)


def test_every_mxint8_encoding() -> None:
    got = mx.decode_bits(np.arange(256), MXINT8)
    assert got[0x7F] == 127 / 64 == 1 + 63 / 64  # the largest, 1.984375
    assert got[0x80] == -2.0  # raw -128
    assert got[0x01] == 1 / 64 and got[0xFF] == -1 / 64 and got[0x40] == 1.0
    np.testing.assert_array_equal(np.sort(got), np.arange(-128, 128) / 64)


@pytest.mark.parametrize("dt", [FP4, FP6A, FP6B, UE8M0, dtypes.FP8E4M3, dtypes.FP8E5M2])
def test_ml_dtypes_storage_decodes_as_the_bit_fields_say(dt: dtypes.DType) -> None:
    codes = np.arange(mx.code_count(dt))
    ours = mx.decode_bits(codes, dt)
    theirs = mx.decode(mx.encodings(dt), dt)
    same = (ours == theirs) & (np.signbit(ours) == np.signbit(theirs))
    assert np.all(same | (np.isnan(ours) & np.isnan(theirs)))
    np.testing.assert_array_equal(mx.to_bits(mx.encodings(dt), dt), codes)


@pytest.mark.parametrize("dt", [FP4, FP6A, FP6B, UE8M0, MXINT8])
def test_encode_gives_back_every_encoding(dt: dtypes.DType) -> None:
    codes = np.arange(mx.code_count(dt))
    back = mx.to_bits(mx.encode(mx.decode_bits(codes, dt), dt), dt)
    np.testing.assert_array_equal(back, codes)


def test_fp4_rounding_ties_to_even_and_saturates() -> None:
    x = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.9, 7.0, 100.0, -5.0, -0.2])
    # 0.25: between 0 and 0.5 -> 0 (even); 0.75 -> 1.0; 1.25 -> 1.0; 1.75 -> 2.0;
    # 2.5 -> 2.0; 3.5 -> 4.0; 5.0 -> 4.0 (4 = 1.0b * 4 even, 6 = 1.1b * 4 odd);
    # 6.9 -> 6; 7.0 is the tie 6 | 8, 8 is past the range: saturates to 6; -0.2 -> -0.
    want = [0.0, 1.0, 1.0, 2.0, 2.0, 4.0, 4.0, 6.0, 6.0, 6.0, -4.0, -0.0]
    got = mx.round_value(x, FP4)
    np.testing.assert_array_equal(got, want)
    assert np.signbit(got[-1])


def test_values_without_a_representation() -> None:
    # fp4/fp6 have no NaN and no infinity: NaN stores +0, infinities saturate.
    np.testing.assert_array_equal(
        mx.round_value(np.array([np.nan, np.inf, -np.inf]), FP6B), [0, 28, -28]
    )
    # ml_dtypes stores a NaN as -0.0 (code 0b1000): not the reading here
    assert mx.to_bits(np.array([np.nan]).astype(ml_dtypes.float4_e2m1fn), FP4)[0] == 8
    assert mx.to_bits(mx.encode(np.array([np.nan]), FP4), FP4)[0] == 0
    # mxint8: multiples of 1/64 to nearest even, saturating at -128 / 127 raw.
    raw = mx.encode(np.array([0.5 / 64, 1.5 / 64, 2.0, -2.5, 1.99, np.nan]), MXINT8)
    np.testing.assert_array_equal(raw, [0, 2, 127, -128, 127, 0])


def test_ue8m0_rounding() -> None:
    x = np.array(
        [1.0, 1.4, 1.5, 3.0, 6.0, 0.75, 2.0**-130, 2.0**127 * 1.49, 2.0**127 * 1.5, 0.0, -1.0]
    )
    got = mx.round_value(x, UE8M0)
    # 1.5 * 2**0 is the tie 1 | 2: the even exponent 0 -> 1; 3 = 1.5 * 2**1 -> 4 (2**2);
    # 6 = 1.5 * 2**2 -> 4; 0.75 = 1.5 * 2**-1 -> 1; below 2**-127 saturates; 1.5 * 2**127
    # ties to 2**128, past the range: NaN; zero and negatives have no encoding: NaN.
    want = [1.0, 1.0, 1.0, 4.0, 4.0, 1.0, 2.0**-127, 2.0**127, np.nan, np.nan, np.nan]
    np.testing.assert_array_equal(got, want)


def test_largest_value_rounding_to_normal_max() -> None:
    got = [mx.largest_rounding_to_normal_max(t) for t in mx.VALUE_TYPES]
    # normal_max + half its ulp: 448 + 16, 57344 + 4096, 28 + 2, 7.5 + 0.25, 6 + 1,
    # mxint8 127/64 + 1/128
    assert got == [464.0, 61440.0, 30.0, 7.75, 7.0, 1.9921875]


def test_block_scale_by_hand() -> None:
    m = np.array([0.0, 7.0, 6.99, 3.5, 3.49, np.nan, np.inf, 2.0**-149, 1.0, 3.4e38])
    got = mx.block_scale(m, FP4)
    # fp4: 2**(floor(log2(m / 7)) + 1): 7 -> 2 (7/2 = 3.5 rounds to 4), 6.99 -> 1 (6.99
    # rounds to 6), 3.5 -> 1, 3.49 -> 0.5 (6.98 -> 6), 1 -> 2**-2 (1 / 0.25 = 4); zero
    # -> 2**-127; NaN and inf -> NaN; 2**-149 -> 2**-151 clipped to 2**-127;
    # 3.4e38 / 7 ~ 2**125.2 -> 2**126.
    want = [2.0**-127, 2.0, 1.0, 1.0, 0.5, np.nan, np.nan, 2.0**-127, 0.25, 2.0**126]
    np.testing.assert_array_equal(got, want)


def test_block_scale_fp8e4m3_takes_the_ceiling() -> None:
    # ceil(log2(m / 464)): 464 -> 1 (464 ties to 448), 465 -> 2, 928 -> 2, 929 -> 4
    got = mx.block_scale(np.array([464.0, 465.0, 448.0, 928.0, 929.0]), dtypes.FP8E4M3)
    np.testing.assert_array_equal(got, [1.0, 2.0, 1.0, 2.0, 4.0])


def test_block_scale_clips_at_2_127_for_mxint8() -> None:
    # fp32's largest over 1.9921875 is just over 2**127: the exponent 128 clips to 127,
    # and the value then saturates at raw 127.
    fmax = float(np.finfo(np.float32).max)
    scaled, scale = mx.quantize(np.full((1, 32), fmax), MXINT8)
    assert scale[0, 0] == 2.0**127
    assert mx.encode(scaled, MXINT8)[0, 0] == 127


def test_block_max_propagates_nan_and_ignores_sign() -> None:
    x = np.zeros((2, 64))
    x[0, 3] = -5.0
    x[1, 40] = np.nan
    got = mx.block_max_abs(x)
    assert got[0, 0] == 5.0 and got[0, 1] == 0.0 and got[1, 0] == 0.0 and np.isnan(got[1, 1])
    with pytest.raises(ValueError, match="multiple of 32"):
        mx.block_max_abs(np.zeros((1, 33)))

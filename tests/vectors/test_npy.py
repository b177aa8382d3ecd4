"""Tests for the .npy encodings of pack tensors (vectors/npy.py)."""

from __future__ import annotations

import io
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conformance import dtypes as D
from conformance.dtypes import DType
from vectors import npy
from vectors.pack_errors import PackError

# The interchange table of docs/pack-format.md, written out by hand.
INTERCHANGE = {
    "bool": "|b1",
    "i4": "|i1",
    "i8": "|i1",
    "i16": "<i2",
    "i32": "<i4",
    "i48": "<i8",
    "shape": "<i8",
    "fp16": "<f2",
    "fp32": "<f4",
    "bf16": "<f4",
    "fp8e4m3": "<f4",
    "fp8e5m2": "<f4",
    # TOSA 1.1
    "i64": "<i8",
    "fp4e2m1": "<f4",
    "fp6e2m3": "<f4",
    "fp6e3m2": "<f4",
    "fp8ue8m0": "<f4",
    "mxint8": "|i1",
}
# Every type a tensor file can hold: a block-scaled composite is two (its parts').
FILE_TYPES = [d for d in D.ALL if d.kind != "block"]

NARROW = [D.BF16, D.FP8E4M3, D.FP8E5M2, D.FP4E2M1, D.FP6E2M3, D.FP6E3M2, D.FP8UE8M0]


def every_value(dt: DType) -> np.ndarray:
    """Every bit pattern of a narrow float type (ml_dtypes keeps a 4- or 6-bit code in
    the low bits of its byte)."""
    u = np.uint16 if dt.bits == 16 else np.uint8
    return np.arange(1 << dt.bits, dtype=np.int64).astype(u).view(dt.storage)


def sample(dt: DType) -> np.ndarray:
    """A few values of each type, its extremes and special values included."""
    if dt.kind == "bool":
        return np.array([[True, False, True], [False, False, True]])
    if dt.kind in ("int", "shape"):
        lo, hi = int(dt.min or 0), int(dt.max or 0)
        return np.array([[lo, -1, 0], [1, hi, 3]], dtype=dt.storage)
    if dt.kind == "fixed":  # mxint8: the codes; -128 / 64 = -2.0 and 127 / 64 included
        return np.array([[-128, -1, 0], [1, 127, 64]], dtype=dt.storage)
    if not dt.signed:  # fp8ue8m0: powers of two from 2**-127 to 2**127, and NaN
        specials = [2.0**-127, 0.25, 1.0, np.nan, 2.0**127, 4.0]
    else:
        specials = [0.0, -0.0, 1.5, -2.25, np.nan, float(dt.normal_max or 1.0)]
        if dt.has_inf:
            specials[4:5] = [np.inf]
        elif not dt.has_nan:  # fp4 / fp6: neither
            specials[4:5] = [-float(dt.normal_max or 1.0)]
    return np.array(specials, dtype=np.float32).reshape(2, 3).astype(dt.storage)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("dt", FILE_TYPES, ids=str)
def test_interchange_dtype_is_the_documented_one(dt: DType) -> None:
    assert npy.interchange_dtype(dt).str == INTERCHANGE[dt.name]


@pytest.mark.parametrize("dt", D.BLOCK_SCALED, ids=str)
def test_block_scaled_types_have_no_one_file(dt: DType) -> None:
    # two files, each of its part's type: tests/vectors/test_block_scaled_1_1.py
    with raises(rf"^x.npy: {dt.name} is a block-scaled type, whose values and scales are two"):
        npy.encode_array(np.zeros(2, dt.storage), dt, source="x.npy")
    data = npy.encode_array(np.zeros(2, dt.storage), D.dtype(dt.block_value))
    with raises(rf"^x.npy: {dt.name} is a block-scaled type"):
        npy.decode_array(data, dt, source="x.npy")


def test_mxint8_files_hold_the_codes() -> None:
    # value = code / 64: the codes -128, 1, 127 are -2.0, 0.015625, 1.984375
    codes = np.array([-128, 1, 127], np.int8)
    plain = np.load(io.BytesIO(npy.encode_array(codes, D.MXINT8)), allow_pickle=False)
    assert plain.dtype.str == "|i1" and plain.tolist() == [-128, 1, 127]


def test_fp8ue8m0_zero_is_no_value() -> None:
    # fp8ue8m0 is 2**(e - 127) for e = 0..254, NaN for 255: 0.0 is none of them, and a
    # NaN of either sign is its NaN.
    wide = np.array([0.0], np.float32)
    with raises(r"not a fp8ue8m0 value"):
        npy.decode_array(npy._encode(wide, np.dtype("<f4")), D.FP8UE8M0, source="f")
    nans = np.array([np.nan, -np.nan], np.float32)
    back = npy.decode_array(npy._encode(nans, np.dtype("<f4")), D.FP8UE8M0, source="f")
    assert back.view(np.uint8).tolist() == [0xFF, 0xFF]


@pytest.mark.parametrize("dt", FILE_TYPES, ids=str)
def test_round_trip_each_type(dt: DType) -> None:
    arr = sample(dt)
    back = npy.decode_array(npy.encode_array(arr, dt), dt, shape=arr.shape)
    assert same_bits(back, arr)


@pytest.mark.parametrize("dt", FILE_TYPES, ids=str)
def test_files_are_readable_by_plain_numpy(dt: DType, tmp_path: Path) -> None:
    arr = sample(dt)
    path = tmp_path / "x.npy"
    npy.save_array(path, arr, dt)
    plain = np.load(path, allow_pickle=False)  # no ml_dtypes involved
    assert plain.dtype.str == INTERCHANGE[dt.name]
    # Widening is exact: the values a consumer reads are the tensor's values.
    np.testing.assert_array_equal(plain, arr.astype(plain.dtype))
    assert same_bits(npy.load_array(path, dt), arr)


@pytest.mark.parametrize("dt", NARROW, ids=str)
def test_every_narrow_float_value_survives(dt: DType) -> None:
    allv = every_value(dt)
    back = npy.decode_array(npy.encode_array(allv, dt), dt)
    nan = np.isnan(allv.astype(np.float32))
    # Every non-NaN bit pattern (both zeros, infinities, subnormals) comes back exactly.
    assert same_bits(back[~nan], allv[~nan])
    # NaN stays NaN with its sign; its payload is not promised.
    back32 = back.astype(np.float32)
    assert np.isnan(back32[nan]).all()
    if dt.signed:
        assert (np.signbit(back32[nan]) == np.signbit(allv.astype(np.float32)[nan])).all()


def test_quiet_nan_bits_survive() -> None:
    arr = np.array([np.nan, -np.nan], dtype=np.float32).astype(ml_dtypes.bfloat16)
    for dt in NARROW:
        a = np.array([np.nan, -np.nan], dtype=np.float32).astype(dt.storage)
        assert same_bits(npy.decode_array(npy.encode_array(a, dt), dt), a)
    assert same_bits(npy.decode_array(npy.encode_array(arr, D.BF16), D.BF16), arr)


@given(
    hnp.arrays(
        np.float32,
        hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
        elements=st.floats(width=32, allow_nan=True, allow_infinity=True),
    )
)
def test_fp32_bits_round_trip(arr: np.ndarray) -> None:
    assert same_bits(npy.decode_array(npy.encode_array(arr, D.FP32), D.FP32), arr)


@given(
    hnp.arrays(
        np.int64,
        hnp.array_shapes(max_dims=2, max_side=5),
        elements=st.integers(-(1 << 47) + 1, (1 << 47) - 1),
    )
)
def test_i48_round_trip(arr: np.ndarray) -> None:
    assert same_bits(npy.decode_array(npy.encode_array(arr, D.I48), D.I48), arr)


def test_bytes_are_deterministic_and_pinned() -> None:
    arr = np.arange(6, dtype=np.int32).reshape(2, 3)
    data = npy.encode_array(arr, D.I32)
    header = b"{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }"
    # magic, version 1.0, header length 118 (little-endian), header padded to 128 bytes
    assert data[:10] == b"\x93NUMPY\x01\x00\x76\x00"
    assert data[10:128] == header + b" " * (128 - 10 - len(header) - 1) + b"\n"
    assert data[128:] == arr.astype("<i4").tobytes()
    # Memory layout and byte order of the array given do not change the bytes.
    fortran = np.asfortranarray(arr.astype(">i4")).astype(np.int32)
    assert npy.encode_array(fortran, D.I32) == data


def test_expected_and_bound_are_float64() -> None:
    exp = np.array([0.1, -0.0, np.nan, np.inf], dtype=np.float64)
    for dt in (D.FP32, D.BF16, D.FP8E4M3):
        data = npy.encode_expected(exp, dt)
        assert np.load(io.BytesIO(data)).dtype.str == "<f8"
        assert same_bits(npy.decode_expected(data, dt, shape=(4,)), exp)
    ints = np.array([1, -2], dtype=np.int16)
    assert same_bits(npy.decode_expected(npy.encode_expected(ints, D.I16), D.I16), ints)
    bound = np.array([1.0, 2.5], dtype=np.float32)
    back = npy.decode_bound(npy.encode_bound(bound))
    assert back.dtype == np.float64 and (back == bound).all()


def test_save_and_load_files(tmp_path: Path) -> None:
    exp = np.array([1.0, 2.0])
    npy.save_expected(tmp_path / "e.npy", exp, D.FP16)
    assert same_bits(npy.load_expected(tmp_path / "e.npy", D.FP16, (2,)), exp)
    npy.save_bound(tmp_path / "b.npy", exp)
    assert same_bits(npy.load_bound(tmp_path / "b.npy", (2,)), exp)


# ----------------------------------------------------------------------------- errors


def raises(match: str) -> pytest.RaisesContext[PackError]:
    return pytest.raises(PackError, match=match)


def test_missing_file(tmp_path: Path) -> None:
    with raises(r"^.*nope\.npy: missing$"):
        npy.load_array(tmp_path / "nope.npy", D.I8)


def test_not_an_npy() -> None:
    with raises(r"^V/input-0\.npy: not an \.npy file"):
        npy.decode_array(b"hello world", D.I8, source="V/input-0.npy")


@pytest.mark.parametrize("cut", [4, 20, 129], ids=["magic", "header", "data"])
def test_truncated(cut: int) -> None:
    data = npy.encode_array(np.zeros((2, 3), np.int32), D.I32)
    with raises(r"^V/input-0\.npy: (not a readable \.npy file|not an \.npy file|truncated)"):
        npy.decode_array(data[:cut], D.I32, source="V/input-0.npy")


def test_trailing_bytes() -> None:
    data = npy.encode_array(np.zeros(2, np.int32), D.I32) + b"\0"
    with raises("1 trailing bytes"):
        npy.decode_array(data, D.I32, source="f")


def test_pickled_objects_are_refused() -> None:
    buf = io.BytesIO()
    np.save(buf, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with raises("not a readable .npy file|not a tensor element type"):
        npy.decode_array(buf.getvalue(), D.I32, source="f")


@pytest.mark.parametrize(
    ("dt", "stored"),
    [(D.I32, np.int64), (D.I16, np.uint16), (D.BF16, np.float64), (D.BOOL, np.int8)],
    ids=str,
)
def test_wrong_dtype(dt: DType, stored: type) -> None:
    buf = io.BytesIO()
    np.save(buf, np.zeros(3, dtype=stored))
    data = buf.getvalue()
    with raises(rf"^f: wrong dtype: file holds .*, expected .* for {dt.name}$"):
        npy.decode_array(data, dt, source="f")


def test_big_endian_file_of_the_right_type_is_accepted() -> None:
    buf = io.BytesIO()
    np.save(buf, np.array([1, -2], dtype=">i4"))
    back = npy.decode_array(buf.getvalue(), D.I32)
    assert back.dtype == np.int32 and back.tolist() == [1, -2]


def test_wrong_shape() -> None:
    data = npy.encode_array(np.zeros((3, 2), np.int8), D.I8)
    with raises(r"wrong shape: file holds \[3, 2\], expected \[2, 3\]"):
        npy.decode_array(data, D.I8, source="f", shape=(2, 3))


@pytest.mark.parametrize(
    ("dt", "stored", "bad"),
    [(D.I4, np.int8, -8), (D.I4, np.int8, 8), (D.I48, np.int64, 1 << 47)],
    ids=["i4-min", "i4-max", "i48"],
)
def test_out_of_range(dt: DType, stored: type, bad: int) -> None:
    buf = io.BytesIO()
    np.save(buf, np.array([0, bad], dtype=stored))
    with raises(rf"1 element\(s\) out of range for {dt.name} .*first at \[1\]: {bad}$"):
        npy.decode_array(buf.getvalue(), dt, source="f")
    with raises("out of range"):  # and never written in the first place
        npy.encode_array(np.array([bad], dtype=stored), dt, source="f")


@pytest.mark.parametrize(
    ("dt", "value"),
    [(D.BF16, 0.1), (D.BF16, 1e-45), (D.FP8E4M3, np.inf), (D.FP8E4M3, 1000.0), (D.FP8E5M2, 1.1)],
    ids=["bf16-0.1", "bf16-subnormal", "e4m3-inf", "e4m3-big", "e5m2-1.1"],
)
def test_not_a_narrow_value(dt: DType, value: float) -> None:
    buf = io.BytesIO()
    np.save(buf, np.array([1.0, value], dtype=np.float32))
    with raises(rf"^f: 1 element\(s\) not a {dt.name} value, first at \[1\]"):
        npy.decode_array(buf.getvalue(), dt, source="f")


def test_bool_bytes_other_than_0_or_1() -> None:
    data = bytearray(npy.encode_array(np.array([True, False]), D.BOOL))
    data[-1] = 2
    with raises(r"bool element at \[1\] is byte 2"):
        npy.decode_array(bytes(data), D.BOOL, source="f")


def test_encode_requires_the_storage_dtype() -> None:
    with raises("array has dtype float32, but bf16 tensors are held in bfloat16"):
        npy.encode_array(np.zeros(2, np.float32), D.BF16, source="f")
    with raises("must be float64"):
        npy.encode_expected(np.zeros(2, np.float32), D.FP32, source="f")
    with raises("must be floating-point"):
        npy.encode_bound(np.zeros(2, np.int32), source="f")


def test_expected_float_file_must_be_float64() -> None:
    data = npy.encode_array(np.zeros(2, np.float32), D.FP32)
    with raises("expected float64 .* for an expected fp32 result"):
        npy.decode_expected(data, D.FP32, source="f")


@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3)], ids=["rank0", "empty", "empty3d"])
@pytest.mark.parametrize("dt", FILE_TYPES, ids=str)
def test_rank_0_and_empty_tensors_keep_their_shape(dt: DType, shape: tuple[int, ...]) -> None:
    arr = np.zeros(shape, dtype=dt.storage)
    back = npy.decode_array(npy.encode_array(arr, dt), dt, shape=shape)
    assert same_bits(back, arr)

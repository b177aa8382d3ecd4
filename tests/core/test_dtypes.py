"""Element types: ranges and the float parameters of the numeric accuracy helpers."""

import ml_dtypes
import numpy as np
import pytest

from conformance import dtypes
from conformance.spec import load_spec


@pytest.mark.parametrize(
    ("dt", "lo", "hi"),
    [
        (dtypes.I4, -7, 7),  # int4_t excludes -8
        (dtypes.I8, -128, 127),
        (dtypes.I16, -32768, 32767),
        (dtypes.I32, -(2**31), 2**31 - 1),
        (dtypes.I48, -(2**47), 2**47 - 1),
    ],
)
def test_integer_ranges(dt, lo, hi) -> None:
    assert (dt.min, dt.max) == (lo, hi)
    assert dt.in_range(np.array([lo, hi])).all()
    assert not dt.in_range(np.array([lo - 1])).any()
    assert not dt.in_range(np.array([hi + 1])).any()


@pytest.mark.parametrize(
    ("dt", "frac", "nmin", "nmax", "inf"),
    [
        # numeric_accuracy_helpers: normal_frac, normal_min, normal_max
        (dtypes.FP32, 23, 2.0**-126, 2.0**128 - 2.0**104, True),
        (dtypes.BF16, 7, 2.0**-126, 2.0**128 - 2.0**120, True),
        (dtypes.FP16, 10, 2.0**-14, 2.0**16 - 2.0**5, True),
        (dtypes.FP8E4M3, 3, 2.0**-6, 2.0**9 - 2.0**6, False),
        (dtypes.FP8E5M2, 2, 2.0**-14, 2.0**16 - 2.0**13, True),
    ],
)
def test_float_parameters(dt, frac, nmin, nmax, inf) -> None:
    assert dt.normal_frac == frac
    assert dt.normal_min == nmin
    assert dt.normal_max == nmax
    assert dt.has_inf is inf and dt.has_nan
    # the storage type agrees: largest finite value and smallest normal
    info = ml_dtypes.finfo(dt.storage)
    assert float(info.max) == nmax
    assert float(info.smallest_normal) == nmin
    assert info.nmant == frac


def test_lookup_by_any_name() -> None:
    assert dtypes.dtype("i8_t") is dtypes.I8
    assert dtypes.dtype("fp16") is dtypes.FP16
    assert dtypes.dtype("size_t") is dtypes.SHAPE
    assert dtypes.I8.spec_name == "i8_t" and dtypes.SHAPE.spec_name == "size_t"
    with pytest.raises(KeyError, match="unknown TOSA element type 'i7'"):
        dtypes.dtype("i7")


def test_every_type_in_the_spec_is_known() -> None:
    spec = load_spec()
    for m in spec.modes():
        for var, value in m.bindings.items():
            if var != "TABLE_SIZE" and value != "-":
                dtypes.dtype(value)


def test_storage_and_sizes() -> None:
    assert dtypes.I48.storage == np.int64 and dtypes.I48.size_bytes == 6
    assert dtypes.I4.size_bytes == 1 and dtypes.BOOL.size_bytes == 1
    assert dtypes.from_numpy(np.dtype(ml_dtypes.bfloat16)) is dtypes.BF16
    with pytest.raises(KeyError):
        dtypes.from_numpy(np.dtype(np.complex64))


@pytest.mark.parametrize("dt", dtypes.ALL, ids=str)
def test_accessors_answer_for_their_kind_and_raise_for_others(dt: dtypes.DType) -> None:
    if dt.is_float:
        fmt = dt.fp
        assert (fmt.normal_frac, fmt.normal_min, fmt.normal_max) == (
            dt.normal_frac,
            dt.normal_min,
            dt.normal_max,
        )
        assert dt.finite_range == (-fmt.normal_max, fmt.normal_max)
        with pytest.raises(TypeError, match=f"{dt.name} is not an integer type"):
            _ = dt.int_range
    else:
        lo, hi = dt.int_range
        assert (lo, hi) == (dt.min, dt.max) and isinstance(lo, int)
        assert dt.finite_range == (float(lo), float(hi))
        with pytest.raises(TypeError, match=f"{dt.name} is not a floating-point type"):
            _ = dt.fp


def test_int_range_by_hand() -> None:
    assert dtypes.I4.int_range == (-7, 7)  # int4_t excludes -8
    assert dtypes.BOOL.int_range == (0, 1)
    assert dtypes.FP16.fp.normal_max == 65504.0
    assert dtypes.FP8E4M3.fp.has_inf is False

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
        lowest = -fmt.normal_max if dt.signed else fmt.normal_min
        assert dt.finite_range == (lowest, fmt.normal_max)
        with pytest.raises(TypeError, match=f"{dt.name} is not an integer type"):
            _ = dt.int_range
    elif dt.kind in ("fixed", "block"):
        assert dt.finite_range == (float(dt.min), float(dt.max))
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


@pytest.mark.parametrize(
    ("dt", "exp", "frac", "nmin", "nmax", "smallest", "has_nan"),
    [
        # TOSA 1.1 introduction, "Number formats" (OCP-MX): fp4e2m1 is +-6.0 with bias 1
        # (normal 2**0 .. 1.5 * 2**2; subnormal 0.5); fp6e2m3 +-7.5 (1.875 * 2**2,
        # subnormal 2**-3); fp6e3m2 +-28 (1.75 * 2**4, normal min 2**-2, subnormal 2**-4).
        (dtypes.FP4E2M1, 2, 1, 1.0, 6.0, 0.5, False),
        (dtypes.FP6E2M3, 2, 3, 1.0, 7.5, 0.125, False),
        (dtypes.FP6E3M2, 3, 2, 0.25, 28.0, 0.0625, False),
    ],
)
def test_microscaling_element_types(dt, exp, frac, nmin, nmax, smallest, has_nan) -> None:
    assert (dt.exponent_bits, dt.normal_frac, dt.normal_min, dt.normal_max) == (
        exp,
        frac,
        nmin,
        nmax,
    )
    assert dt.has_nan is has_nan and dt.has_inf is False
    info = ml_dtypes.finfo(dt.storage)
    assert (float(info.max), float(info.smallest_subnormal)) == (nmax, smallest)


def test_tosa_1_1_types_by_hand() -> None:
    # fp8ue8m0: exponent only, 2**(e - 127); 0xFF is NaN and there is no zero.
    codes = np.array([0, 127, 254, 255], np.uint8).view(dtypes.FP8UE8M0.storage)
    values = codes.astype(np.float64)
    assert list(values[:3]) == [2.0**-127, 1.0, 2.0**127] and np.isnan(values[3])
    assert dtypes.FP8UE8M0.finite_range == (2.0**-127, 2.0**127)
    # mxint8: raw -128 .. 127 with an implicit 1/64: -2 .. 1 + 63/64.
    assert dtypes.MXINT8.finite_range == (-2.0, 127 / 64) and dtypes.MXINT8.frac_bits == 6
    assert dtypes.I64.int_range == (-(2**63), 2**63 - 1)
    assert dtypes.dtype("tensor_size_t") is dtypes.SHAPE
    mx4 = dtypes.dtype("bs32_fp8ue8m0_fp4e2m1_t")
    assert (mx4.kind, mx4.block_value, mx4.block_scale, mx4.block_size) == (
        "block",
        "fp4e2m1",
        "fp8ue8m0",
        32,
    )
    assert len(dtypes.BLOCK_SCALED) == 6

"""Rounding to narrow float types: once, to nearest, ties to even (conformance.rounding).

Hand-checked values per type, then every tie of every 8- and 16-bit type (and a sample
of fp32's) against the neighbours it lies between, then a Hypothesis property against
an exact reference in ``fractions.Fraction`` over the type's bit patterns.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance import dtypes
from conformance.dtypes import BF16, FP8E4M3, FP8E5M2, FP16, FP32, DType
from conformance.rounding import round_to, round_to_float64

FLOATS = (FP8E4M3, FP8E5M2, FP16, BF16, FP32)
NAN, INF = math.nan, math.inf


def _uint(dt: DType) -> np.dtype:
    return np.dtype(f"u{dt.storage.itemsize}")


def same(got: np.ndarray, want: list[float]) -> bool:
    """Equal as values of the type, the sign of zero included, NaN matching NaN."""
    g = got.astype(np.float64)
    w = np.asarray(want, np.float64)
    return bool(
        np.array_equal(g, w, equal_nan=True)
        and np.array_equal(np.signbit(g[w == 0]), np.signbit(w[w == 0]))
    )


# (input, result) pairs; each comment gives the neighbours and which one is even.
HAND: dict[str, list[tuple[float, float]]] = {
    "bf16": [  # 7 fraction bits: ulp(1) = 2**-7
        (1 + 2**-8, 1.0),  # tie 1 | 1+2**-7: 1.0000000b is even
        (-(1 + 2**-8), -1.0),
        (1 + 3 * 2**-8, 1 + 2**-6),  # tie 1+2**-7 (odd) | 1+2**-6 (even)
        (-(1 + 3 * 2**-8), -(1 + 2**-6)),
        (1 + 2**-8 + 2**-30, 1 + 2**-7),  # just above the tie; float32 would swallow 2**-30
        (1 + 2**-8 - 2**-30, 1.0),
        (1 + 3 * 2**-8 - 2**-30, 1 + 2**-7),  # just below a tie that would go up
        (16_842_753.0, 16_908_288.0),  # 2**24 + 2**16 + 1: above the tie 2**24 + 2**16
        (2.0**128 - 2**120, 2.0**128 - 2**120),  # largest finite
        (2.0**128 - 2**119, INF),  # half-way to 2**128: max's last bit is odd, so inf
        (-(2.0**128 - 2**119), -INF),
        (2.0**128 - 2**119 - 2**90, 2.0**128 - 2**120),  # just below the threshold
        (1e300, INF),
        (2.0**-133, 2.0**-133),  # smallest subnormal
        (2.0**-134, 0.0),  # half of it: tie with 0, which is even
        (-(2.0**-134), -0.0),
        (2.0**-134 + 2**-160, 2.0**-133),
        (3 * 2.0**-134, 2.0**-132),  # tie 2**-133 (odd) | 2**-132 (even)
        (2.0**-126 - 2**-134, 2.0**-126),  # tie at the top subnormal goes up to normal_min
    ],
    "fp16": [  # 10 fraction bits
        (1 + 2**-11, 1.0),
        (-(1 + 3 * 2**-11), -(1 + 2**-9)),
        (1 + 2**-11 + 2**-40, 1 + 2**-10),
        (1 + 3 * 2**-11 - 2**-40, 1 + 2**-10),
        (65504.0, 65504.0),
        (65520.0, INF),  # half-way to 65536 = 2**16; 65504's last bit is odd
        (-65520.0, -INF),
        (65520.0 - 2**-20, 65504.0),
        (2.0**-24, 2.0**-24),
        (2.0**-25, 0.0),
        (-(2.0**-25), -0.0),
        (2.0**-25 + 2**-50, 2.0**-24),
        (3 * 2.0**-25, 2.0**-23),
    ],
    "fp32": [  # 23 fraction bits
        (1 + 2**-24, 1.0),
        (-(1 + 3 * 2**-24), -(1 + 2**-22)),
        (1 + 2**-24 + 2**-50, 1 + 2**-23),
        (16_777_217.0, 16_777_216.0),  # 2**24 + 1: tie, 2**24 is even
        (16_777_219.0, 16_777_220.0),  # 2**24 + 3: tie, 2**24 + 4 is even
        (2.0**128 - 2**104, 2.0**128 - 2**104),
        (2.0**128 - 2**103, INF),
        (2.0**128 - 2**103 - 2**80, 2.0**128 - 2**104),
        (2.0**-149, 2.0**-149),
        (2.0**-150, 0.0),
        (-(2.0**-150), -0.0),
        (2.0**-150 + 2**-170, 2.0**-149),
    ],
    "fp8e4m3": [  # 3 fraction bits, no infinity: overflow is NaN (OCP non-saturating)
        (1 + 2**-4, 1.0),
        (-(1 + 2**-4), -1.0),
        (1 + 3 * 2**-4, 1.25),  # tie 1.125 (001b, odd) | 1.25 (010b, even)
        (1 + 2**-4 + 2**-30, 1.125),
        (1 + 3 * 2**-4 - 2**-30, 1.125),
        (448.0, 448.0),  # 1.110b * 2**8, largest finite
        (464.0, 448.0),  # tie 448 | 480 (1.111b * 2**8, the NaN code): 448 is even
        (-464.0, -448.0),
        (464.0 + 2**-30, NAN),  # above the tie: rounds to 480, outside the range
        (480.0, NAN),
        (1e6, NAN),
        (INF, NAN),
        (-INF, NAN),
        (2.0**-9, 2.0**-9),  # smallest subnormal, 0.001b * 2**-6
        (2.0**-10, 0.0),
        (-(2.0**-10), -0.0),
        (2.0**-10 + 2**-40, 2.0**-9),
        (3 * 2.0**-10, 2.0**-8),  # tie 001b (odd) | 010b (even)
    ],
    "fp8e5m2": [  # 2 fraction bits
        (1 + 2**-3, 1.0),
        (1 + 3 * 2**-3, 1.5),  # tie 1.25 (01b, odd) | 1.5 (10b, even)
        (-(1 + 2**-3 + 2**-30), -1.25),
        (1 + 3 * 2**-3 - 2**-30, 1.25),
        (57344.0, 57344.0),  # 1.11b * 2**15
        (61440.0, INF),  # half-way to 2**16 (ulp 2**13); 57344's last bit is odd
        (-61440.0, -INF),
        (61440.0 - 2**-20, 57344.0),
        (59392.0, 57344.0),  # a quarter ulp above max: not a tie
        (2.0**-16, 2.0**-16),
        (2.0**-17, 0.0),
        (-(2.0**-17), -0.0),
        (2.0**-17 + 2**-40, 2.0**-16),
        (3 * 2.0**-17, 2.0**-15),
    ],
}


@pytest.mark.parametrize("name", sorted(HAND))
def test_hand_checked_values(name: str) -> None:
    dt = dtypes.dtype(name)
    x = np.array([v for v, _ in HAND[name]], np.float64)
    got = round_to(dt, x)
    assert got.dtype == dt.storage
    for i, (v, want) in enumerate(HAND[name]):
        assert same(got[i : i + 1], [want]), f"{name}: {v!r} -> {float(got[i])!r}, want {want!r}"


@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_nan_zero_and_infinity(dt: DType) -> None:
    got = round_to(dt, np.array([NAN, -NAN, 0.0, -0.0, INF, -INF]))
    assert np.isnan(got[:2].astype(np.float64)).all()
    assert same(got[2:4], [0.0, -0.0])
    # Infinities stay infinities where the type has them; fp8e4m3 makes them NaN.
    assert same(got[4:], [INF, -INF] if dt.has_inf else [NAN, NAN])


def test_the_two_double_rounding_examples() -> None:
    # ml_dtypes 0.5 goes through float32: 16,842,753 -> 16,842,752 (a bf16 tie) -> 2**24,
    # and 1 + 2**-8 + 2**-30 -> 1 + 2**-8 (a tie) -> 1.0.
    assert float(round_to(BF16, np.array(16_842_753, np.int32))) == 16_908_288.0
    assert float(round_to(BF16, np.array(1 + 2**-8 + 2**-30))) == 1.0078125
    assert float(round_to(FP8E4M3, np.array(1 + 2**-4 + 2**-30))) == 1.125
    assert float(round_to(FP8E5M2, np.array(1 + 2**-3 + 2**-30))) == 1.25


def test_int64_beyond_float64_precision() -> None:
    # 2**60 + 2**52 + 1 is not a float64 value: float64 makes it 2**60 + 2**52, a bf16
    # tie that goes to 2**60.  Rounded once it lies above the tie: 2**60 + 2**53.
    x = np.array([2**60 + 2**52 + 1, -(2**60 + 2**52 + 1), 2**60 + 2**52, 2**63 - 1, -(2**63)])
    want = [2.0**60 + 2**53, -(2.0**60 + 2**53), 2.0**60, 2.0**63, -(2.0**63)]
    assert same(round_to(BF16, x), want)
    # fp32: 2**60 + 2**36 + 1 lies above the tie 2**60 + 2**36 (ulp 2**37).
    assert float(round_to(FP32, np.array([2**60 + 2**36 + 1]))[0]) == 2.0**60 + 2**37
    assert float(round_to(FP32, np.array([2**60 + 2**36]))[0]) == 2.0**60
    assert same(round_to(FP16, np.array([2**63 - 1, -(2**62)])), [INF, -INF])
    assert same(round_to(FP8E4M3, np.array([2**40])), [NAN])
    assert same(round_to(BF16, np.array([2**64 - 1, 0], np.uint64)), [2.0**64, 0.0])
    # Small integers of every width take the float64 path exactly.
    for t in (np.int8, np.int16, np.int32, np.uint8, np.bool_):
        assert same(round_to(BF16, np.array([1, 0], t)), [1.0, 0.0])


def test_narrow_inputs_and_same_type_copy() -> None:
    x = np.array([1 + 2**-8 + 2**-30], np.float64)
    from_fp32 = round_to(BF16, x.astype(np.float32))  # float32 already holds 1 + 2**-8
    assert float(from_fp32[0]) == 1.0
    assert float(round_to(FP8E4M3, round_to(BF16, np.array([1.125])))[0]) == 1.125
    # Already in the storage type: a copy, bit for bit (a NaN payload is kept).
    bits = np.array([0x7FC1, 0x8000], np.uint16).view(BF16.storage)
    copy = round_to(BF16, bits)
    assert copy is not bits and np.array_equal(copy.view(np.uint16), bits.view(np.uint16))


def test_scalars_and_shapes() -> None:
    assert round_to(BF16, np.float64(1.0)).shape == ()
    got = round_to_float64(FP8E4M3, np.full((2, 0, 3), 1.0))
    assert got.shape == (2, 0, 3) and got.dtype == np.float64


def test_refuses_what_is_not_a_rounding() -> None:
    with pytest.raises(TypeError, match="floating-point types, not i32"):
        round_to(dtypes.I32, np.array([1.5]))
    with pytest.raises(TypeError, match="complex128"):
        round_to(BF16, np.array([1 + 1j]))
    with pytest.raises(TypeError, match="<U1"):
        round_to(FP16, np.array(["1"]))


# -- every tie -------------------------------------------------------------------------


def _positive_values(dt: DType, patterns: np.ndarray) -> np.ndarray:
    """The values of positive bit patterns (0 = +0 up to the largest finite value),
    which increase with the pattern."""
    return patterns.astype(_uint(dt)).view(dt.storage).astype(np.float64)


def _top_pattern(dt: DType) -> int:
    return int(np.array(dt.normal_max).astype(dt.storage).view(_uint(dt)))


@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_every_tie_and_its_neighbourhood(dt: DType) -> None:
    """Between patterns k and k + 1: the midpoint goes to the even pattern, a hair above
    it to k + 1, a hair below to k (both signs).  Above the largest value the next
    pattern is the overflow (inf, or NaN for fp8e4m3)."""
    top = _top_pattern(dt)
    if dt.bits <= 16:
        k = np.arange(top + 1, dtype=np.int64)
    else:  # fp32: the boundaries and a fixed sample of the rest
        rng = np.random.default_rng(0)
        special = [0, 1, 2, (1 << 23) - 1, 1 << 23, (1 << 23) + 1, top - 1, top]
        k = np.unique(np.concatenate([special, rng.integers(0, top + 1, 200_000)]))
    lo = _positive_values(dt, k)
    hi_k = np.minimum(k + 1, top)
    hi = np.where(k < top, _positive_values(dt, hi_k), 2 * lo - _positive_values(dt, k - 1))
    mid = (lo + hi) / 2  # exact: at most frac + 2 significant bits
    over = np.inf if dt.has_inf else np.nan
    hi_result = np.where(k < top, hi, over)
    even = np.where(k % 2 == 0, lo, hi_result)
    nudge = mid * 2.0**-30 + 2.0**-1074  # below float32's (and every type's) precision
    for sign in (1.0, -1.0):
        for x, want in ((mid, even), (mid + nudge, hi_result), (mid - nudge, lo)):
            got = round_to(dt, sign * x).astype(np.float64)
            expect = sign * want
            ok = (got == expect) | (np.isnan(got) & np.isnan(expect))
            ok &= (np.signbit(got) == np.signbit(expect)) | np.isnan(expect)
            bad = np.flatnonzero(~ok)
            assert bad.size == 0, (
                f"{dt}: {bad.size} wrong, first {sign * x[bad[0]]!r} -> {got[bad[0]]!r}, "
                f"want {expect[bad[0]]!r}"
            )


# -- exact reference -------------------------------------------------------------------


def exact_round(dt: DType, x: Fraction | float) -> float:
    """Round-to-nearest-even of the exact value ``x`` by search over the type's positive
    bit patterns, which are monotonic in value; the pattern after the largest finite one
    stands for the next binade's first value, reached only by overflow."""
    if isinstance(x, float) and math.isnan(x):
        return NAN
    over = INF if dt.has_inf else NAN
    sign = -1.0 if (x < 0 or (isinstance(x, float) and math.copysign(1.0, x) < 0)) else 1.0
    if isinstance(x, float) and math.isinf(x):
        return math.copysign(over, sign) if dt.has_inf else NAN
    a = abs(Fraction(x))
    top = _top_pattern(dt)

    def value(k: int) -> Fraction:
        if k <= top:
            return Fraction(float(_positive_values(dt, np.array([k]))[0]))
        return 2 * value(top) - value(top - 1)

    if a >= value(top + 1):
        return sign * over
    lo, hi = 0, top + 1  # value(lo) <= a < value(hi)
    while hi - lo > 1:
        m = (lo + hi) // 2
        lo, hi = (m, hi) if value(m) <= a else (lo, m)
    below, above = a - value(lo), value(hi) - a
    k = lo if below < above or (below == above and lo % 2 == 0) else hi
    if k > top:
        return sign * over
    return sign * float(value(k))


@st.composite
def near_ties(draw: st.DrawFn, dt: DType) -> float:
    """A float64 value at, or a few float64 steps either side of, the midpoint between
    two neighbouring values of ``dt`` (the top midpoint being the overflow threshold)."""
    top = _top_pattern(dt)
    k = draw(st.integers(0, top), label="lower pattern")
    lo = _positive_values(dt, np.array([k]))[0]
    hi = exact_value_above(dt, k)
    mid = (lo + hi) / 2
    steps = draw(st.integers(-3, 3), label="float64 steps from the midpoint")
    x = mid
    for _ in range(abs(steps)):
        x = float(np.nextafter(x, np.inf if steps > 0 else -np.inf))
    negative = draw(st.booleans(), label="negative")
    return -x if negative else x


def exact_value_above(dt: DType, k: int) -> float:
    top = _top_pattern(dt)
    if k < top:
        return float(_positive_values(dt, np.array([k + 1]))[0])
    below = _positive_values(dt, np.array([top - 1, top]))
    return float(2 * below[1] - below[0])


def big_ints(frac: int) -> st.SearchStrategy[int]:
    """int64 values at and next to a tie at ``frac + 1`` significant bits, where float64
    may not hold them exactly."""

    @st.composite
    def build(draw: st.DrawFn) -> int:
        shift = draw(st.integers(1, 62 - frac), label="dropped bits")
        q = draw(st.integers(1 << frac, (1 << (frac + 1)) - 1), label="kept significand")
        off = draw(st.integers(-2, 2), label="offset from the tie")
        v = (q << shift) + (1 << (shift - 1)) + off
        v = min(v, 2**63 - 1)
        return -v if draw(st.booleans(), label="negative") else v

    return build()


@settings(max_examples=400)
@given(data=st.data())
def test_matches_exact_reference(data: st.DataObject) -> None:
    dt = data.draw(st.sampled_from(FLOATS), label="type")
    source = data.draw(st.sampled_from(["near tie", "any float64", "int64"]), label="source")
    if source == "near tie":
        x: float | int = data.draw(near_ties(dt), label="value")
    elif source == "any float64":
        x = data.draw(st.floats(width=64), label="value")
    else:
        x = data.draw(
            st.one_of(big_ints(dt.normal_frac), st.integers(-(2**63), 2**63 - 1)), label="value"
        )  # type: ignore[arg-type]
    arr = np.array([x], np.int64 if isinstance(x, int) else np.float64)
    got = float(round_to(dt, arr).astype(np.float64)[0])
    want = exact_round(dt, Fraction(x) if isinstance(x, int) else x)
    assert (math.isnan(got) and math.isnan(want)) or (
        got == want and math.copysign(1.0, got) == math.copysign(1.0, want)
    ), f"{dt}: {x!r} -> {got!r}, exact {want!r}"

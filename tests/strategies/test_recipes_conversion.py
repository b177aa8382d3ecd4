"""The arithmetic the RESIZE, CAST and RESCALE recipes rely on."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from conformance import dtypes
from strategies.recipes.image import _borders
from strategies.recipes.type_conversion import I32_MAX, I32_MIN, _ties, _value_bounds


def _scale16(v: int, m: int, s: int) -> int:
    return (v * m + (1 << (s - 1))) >> s


@given(
    m=st.integers(1, (1 << 15) - 1),
    s=st.integers(2, 62),
    zp=st.sampled_from([0, -128, 127, 255, 32768]),
)
def test_scale16_bounds_are_exact(m: int, s: int, zp: int) -> None:
    """The last values for which apply_scale_16's result fits int32 (its REQUIRE) and
    so does that result plus the output zero point (apply_add_s's)."""

    def fits(v: int) -> bool:
        r = _scale16(v, m, s)
        return I32_MIN <= r <= I32_MAX and I32_MIN <= r + zp <= I32_MAX

    lo, hi = _value_bounds(False, m, s, zp)
    assert fits(lo) and fits(hi)
    assert hi >= 1 << 62 or not fits(hi + 1)
    assert lo <= -(1 << 62) or not fits(lo - 1)


@given(s=st.integers(2, 62))
def test_scale32_bounds_are_the_value_require(s: int) -> None:
    assert _value_bounds(True, 1 << 30, s, 0) == (-(1 << (s - 1)), (1 << (s - 1)) - 1)


@given(seed=st.integers(0, 2**32 - 1))
def test_ties_are_halfway_between_neighbours(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for target in (dtypes.FP8E4M3, dtypes.FP8E5M2, dtypes.FP16, dtypes.BF16):
        v = _ties(rng, target, 64, float(target.normal_max), False)  # type: ignore[arg-type]
        v = v[np.abs(v) < float(target.normal_max)]  # type: ignore[arg-type]
        near = v.astype(target.storage).astype(np.float64)
        other = 2 * v - near  # the neighbour on the other side, if v is halfway
        assert (other.astype(target.storage).astype(np.float64) == other).all()
        assert (near != other).all()


@given(
    in_size=st.integers(1, 40),
    n=st.integers(1, 2048),
    d=st.integers(1, 4096),
    offset=st.integers(-2048, 4096),
    cap=st.integers(1, 64),
)
def test_borders_make_the_output_size_exact(
    in_size: int, n: int, d: int, offset: int, cap: int
) -> None:
    for border in _borders(in_size, n, d, offset, cap):
        assert -16 * n <= border < n
        numerator = (in_size - 1) * n - offset + border
        assert numerator % d == 0 and 0 <= numerator <= (cap - 1) * d

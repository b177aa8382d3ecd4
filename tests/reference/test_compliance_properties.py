"""Properties of the checker over generated values, and its speed on a large output."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.dtypes import FP16, FP32, DType
from reference.compliance import abs_error_for, check, dot_product, reduce_product, resize, ulp

FLOAT_TYPES = st.sampled_from([FP32, FP16])
ULPS = st.sampled_from([0.5, 1.0, 2.0, 5.0])
ANY_FLOAT = st.floats(allow_nan=False, allow_infinity=False)
SPECIAL = st.sampled_from([0.0, -0.0, np.inf, -np.inf, np.nan])


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_correctly_rounded_results_pass_half_ulp(data: st.DataObject) -> None:
    """Round-to-nearest of the reference always meets 0.5 ulp, including results that
    are subnormal, flushed, or overflow."""
    out: DType = data.draw(FLOAT_TYPES, label="output type")
    values = data.draw(st.lists(ANY_FLOAT, min_size=1, max_size=20), label="references")
    expected = np.array(values, dtype=np.float64)
    with np.errstate(over="ignore"):
        actual = expected.astype(out.storage)
    v = check(expected, ulp(out, 0.5, "property"), actual)
    assert v.passed, v.message


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_whole_ulp_steps_inside_a_binade(data: st.DataObject) -> None:
    """An fp32 reference (not a power of two) moved by k fp32 steps passes n-ulp
    exactly when |k| <= n: the step is the ulp throughout its binade."""
    n = data.draw(ULPS, label="allowed ulp")
    mantissa = data.draw(st.integers(6, (1 << 23) - 7), label="mantissa bits")
    exponent = data.draw(st.integers(-126, 127), label="exponent")
    steps = data.draw(st.integers(-5, 5), label="steps")
    sign = data.draw(st.sampled_from([1.0, -1.0]), label="sign")
    ref = sign * np.ldexp(1.0 + mantissa * 2.0**-23, exponent)
    actual = np.array([ref + sign * steps * np.ldexp(1.0, exponent - 23)], dtype=np.float32)
    v = check(np.array([ref]), ulp(FP32, n, "property"), actual)
    assert v.passed == (abs(steps) <= n)
    assert v.max_margin == abs(steps) / n


def _descriptor(data: st.DataObject, out: DType):
    kind = data.draw(st.sampled_from(["ulp", "reduce", "resize", "exp"]), label="mode")
    if kind == "ulp":
        return ulp(out, data.draw(ULPS, label="ulp"), "property"), None
    if kind == "reduce":
        return reduce_product(out, data.draw(st.integers(1, 64), label="n")), None
    if kind == "resize":
        peak = data.draw(st.floats(0, 1e3), label="input abs max")
        return resize(out, peak), None
    return abs_error_for("EXP", out), data.draw(st.floats(1, 20), label="1 + |x|")


def _element(bound: np.ndarray | None, i: int) -> np.ndarray | None:
    return None if bound is None else bound[i : i + 1]


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_margin_agrees_with_verdict(data: st.DataObject) -> None:
    """Every bound mode: passed exactly when max_margin <= 1, the failing count is the
    number of elements that fail on their own, and negating both sides changes
    nothing."""
    out: DType = data.draw(FLOAT_TYPES, label="output type")
    desc, bound_value = _descriptor(data, out)
    refs = data.draw(
        st.lists(st.floats(-1e5, 1e5) | SPECIAL, min_size=1, max_size=8),
        label="references",
    )
    expected = np.array(refs)
    noise = data.draw(
        st.lists(st.floats(-1e-2, 1e-2), min_size=len(refs), max_size=len(refs)), label="noise"
    )
    with np.errstate(over="ignore", invalid="ignore"):
        actual = (expected * (1 + np.array(noise))).astype(out.storage)
    bound = None if bound_value is None else np.full(expected.shape, bound_value)

    v = check(expected, desc, actual, bound)
    assert v.passed == (v.max_margin <= 1)
    singles = [
        check(expected[i : i + 1], desc, actual[i : i + 1], _element(bound, i))
        for i in range(expected.size)
    ]
    assert v.failing_count == sum(not s.passed for s in singles)
    mirrored = check(-expected, desc, -actual, bound)
    assert mirrored.passed == v.passed
    assert mirrored.failing_count == v.failing_count


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_unbiased_dot_product_errors_pass(data: st.DataObject) -> None:
    """Errors no larger than half the per-element bound, with random signs, pass the
    per-element, sum and variance tests."""
    count = data.draw(st.integers(1000, 3000), label="outputs")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    data_set = data.draw(st.sampled_from([-1, 0, 1, 2, 3, 4, 5]), label="data set")
    ks = data.draw(st.integers(1, 64), label="ks")
    rng = np.random.default_rng(seed)
    bound = rng.uniform(1.0, 8.0, size=count)
    expected = rng.uniform(-1.0, 1.0, size=count)
    unit = bound * 2.0**-24
    # fp32 rounding near 1 adds at most 2**-25, under 1/8 of the smallest unit.
    errors = rng.uniform(-0.5, 0.5, size=count) * unit
    actual = (expected + errors).astype(np.float32)
    desc = dot_product("MATMUL", FP32, FP32, ks=ks, data_set=data_set)
    v = check(expected, desc, actual, bound)
    assert v.passed, v.message

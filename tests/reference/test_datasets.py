"""Appendix A test data: set_data, tosa_mi_data, the B table and the per-operator
data sets, each checked against a literal scalar transcription of the appendix."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np
import pytest

from conformance.dtypes import BF16, FP8E4M3, FP8E5M2, FP16, FP32, DType
from reference.datasets import (
    B_TABLE,
    MIN_DOT_PRODUCTS,
    bound_b,
    dataset_inputs,
    kernel_size,
    largest_square_safe,
    set_data,
    tosa_mi_data,
)

# -- scalar transcriptions of the appendix -------------------------------------------


def scalar_set_data(set_: int, index: int) -> np.float32:
    """The appendix's C function, step by step (uint32 arithmetic, fp32 result)."""
    m = ((8 * set_ + 1) * 0x705A5E75) & 0xFFFFFFFF
    r = (m + 1) & 0xFFFFFFFF
    for _ in range(index):
        r = (r * m + 1) & 0xFFFFFFFF
    sign = np.float32(1.0) if (r >> 31) == 0 else np.float32(-1.0)
    return sign * (np.float32(r & 0x7FFFFFFF) / np.float32(0x7FFFFFFF))


def scalar_sequence(set_: int, count: int, start_r: int | None = None) -> list[np.float32]:
    """set_data(set_, 0..count-1) by running the recurrence once (the same values the
    C function gives index by index, in O(count))."""
    m = ((8 * set_ + 1) * 0x705A5E75) & 0xFFFFFFFF
    r = (m + 1) & 0xFFFFFFFF if start_r is None else start_r
    out = []
    for _ in range(count):
        sign = np.float32(1.0) if (r >> 31) == 0 else np.float32(-1.0)
        out.append(sign * (np.float32(r & 0x7FFFFFFF) / np.float32(0x7FFFFFFF)))
        r = (r * m + 1) & 0xFFFFFFFF
    return out


def scalar_mi(s: int, ks: int, p: int, k: int, i: int, b: float) -> float:
    """tosa_mi_data as the appendix's tables state it, one value at a time."""

    def sd(set_: int, idx: int) -> float:
        return float(scalar_set_data(set_, idx))

    if s == 0:
        return [
            0.0 if sd(2 * s, i) < 0 else sd(2 * s + 1, i),
            sd(2 * s + 1, i) if sd(2 * s, i) < 0 else 0.0,
            0.0,
        ][p]
    if s == 1:
        if p == 2:
            return (b * b / (ks + 1)) * (0.75 + 0.25 * sd(3 * s + 2, i))
        return (b / math.sqrt(ks + 1)) * (0.75 + 0.25 * sd(3 * s + p, i))
    if p == 2:
        return 0.0
    if s == 2:
        return 1.0 if k == 0 else sd(2 * s + p, i) / math.sqrt(ks)
    if s == 3:
        if k == 0:
            return -16.0 if sd(2 * s + p, 2 * i) < 0 else 16.0
        return math.exp(2 * sd(2 * s + p, 2 * i)) * sd(2 * s + p, 2 * i + 1)
    if s == 4:
        neg = sd(2 * s, i) < 0
        if k == ks // 2:
            return (-0.5 if neg else 0.5) if p == 0 else (0.5 if neg else -0.5)
        scaled = (b / math.sqrt(ks)) * sd(2 * s + 1, i)
        if p == 0:
            return 0.0 if neg else scaled
        return scaled if neg else 0.0
    return (b / math.sqrt(ks)) * sd(3 * s + p, i)


# -- set_data ---------------------------------------------------------------------------


@pytest.mark.parametrize("set_", [0, 1, 2, 5, 7, 15, 16, 31])
def test_set_data_matches_the_recurrence(set_: int) -> None:
    count = 300
    got = set_data(set_, np.arange(count))
    assert got.dtype == np.float32
    assert got.tolist() == scalar_sequence(set_, count)
    # The literal per-index loop agrees with the running sequence too (spot checks).
    for index in (0, 1, 2, 99, 299):
        assert got[index] == scalar_set_data(set_, index)


def test_set_data_first_value_by_hand() -> None:
    # Set 0: m = 0x705A5E75, r = m + 1 = 0x705A5E76 = 1884970614; the top bit is clear,
    # so +1884970614 / 2**31 (the fp32 divisor 0x7FFFFFFF rounds to 2**31) = 0.877757...
    assert set_data(0, [0])[0] == np.float32(1884970614 / 2**31)
    assert abs(float(set_data(0, [0])[0]) - 0.8777578) < 1e-6


def test_set_data_far_indices_and_shape() -> None:
    # Run the recurrence a million steps in Python, then compare a window there.
    set_, start = 3, 1_000_000
    m = ((8 * set_ + 1) * 0x705A5E75) & 0xFFFFFFFF
    r = (m + 1) & 0xFFFFFFFF
    for _ in range(start):
        r = (r * m + 1) & 0xFFFFFFFF
    want = scalar_sequence(set_, 50, start_r=r)
    assert set_data(set_, np.arange(start, start + 50)).tolist() == want
    idx = np.arange(12).reshape(3, 4)
    assert set_data(1, idx).shape == (3, 4)
    assert set_data(1, idx)[2, 3] == scalar_set_data(1, 11)
    # The largest uint32 index is accepted; outside uint32 is refused.
    assert np.isfinite(set_data(1, [0xFFFFFFFF])).all()
    with pytest.raises(ValueError):
        set_data(1, [-1])


def test_set_data_range() -> None:
    v = set_data(4, np.arange(100_000))
    assert np.all(np.abs(v) <= 1.0)
    assert 0.4 < np.mean(v > 0) < 0.6  # both signs, about evenly


# -- B and tosa_mi_data -----------------------------------------------------------------


def test_b_table_and_its_rule() -> None:
    assert bound_b(FP16, FP16) == 255.875
    assert bound_b(FP16, FP32) == 65504.0
    assert bound_b(BF16, FP32) == 2.0**64 - 2.0**56
    assert bound_b(FP32, FP32) == 2.0**64 - 2.0**40
    # The table's rule (largest input value whose square fits the accumulator)
    # reproduces every row, so it is trusted for the pairs the table leaves out.
    names = {"fp16": FP16, "bf16": BF16, "fp32": FP32}
    for (i, a), b in B_TABLE.items():
        assert largest_square_safe(names[i], float(names[a].normal_max)) == b
    # fp8e4m3: 240 = 1.875 * 2**7, 240**2 = 57600 <= 65504; the next value is 256.
    assert bound_b(FP8E4M3, FP16) == 240.0
    # fp8e5m2: 224 = 1.75 * 2**7, 224**2 = 50176; the next value is 256.
    assert bound_b(FP8E5M2, FP16) == 224.0
    # An fp16 output narrower than its fp32 accumulator: B*B must fit the output.
    assert bound_b(FP16, FP32, FP16) == 255.875
    assert bound_b(FP16, FP32, FP32) == 65504.0


@pytest.mark.parametrize("s", range(6))
@pytest.mark.parametrize("p", [0, 1, 2])
def test_tosa_mi_data_matches_scalar_formulas(s: int, p: int) -> None:
    ks, b = 9, 255.875
    k = np.arange(40) % ks
    i = np.arange(40) * 7 + 3
    got = tosa_mi_data(s, ks, p, k, i, b=b)
    want = [scalar_mi(s, ks, p, int(kk), int(ii), b) for kk, ii in zip(k, i, strict=True)]
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)


def test_tosa_mi_data_special_positions() -> None:
    # S=2 and S=3 put their large term at k == 0; S=4 its +-0.5 at k == KS/2.
    assert tosa_mi_data(2, 100, 0, [0], [5]).tolist() == [1.0]
    assert abs(tosa_mi_data(3, 100, 1, [0], [5])[0]) == 16.0
    assert abs(tosa_mi_data(4, 100, 0, [50], [5], b=1.0)[0]) == 0.5
    with pytest.raises(ValueError, match="needs the bound B"):
        tosa_mi_data(5, 10, 0, [1], [1])


# -- per-operator data sets -------------------------------------------------------------


def literal(
    shapes: dict[str, Sequence[int]],
    rule: dict[str, tuple[int, Callable[..., tuple[int, int]]]],
    s: int,
    ks: int,
    b: float,
) -> dict[str, np.ndarray]:
    """Fill every tensor by looping over its indices and calling the appendix's index
    expressions (rule[arg] = (p, index -> (k, i)))."""
    out = {}
    for arg, (p, fn) in rule.items():
        shape = tuple(shapes[arg])
        arr = np.zeros(shape)
        for index in itertools.product(*(range(d) for d in shape)):
            k, i = fn(*index)
            arr[index] = scalar_mi(s, ks, p, k, i, b)
        out[arg] = arr
    return out


def _rounded(values: np.ndarray, dt: DType) -> np.ndarray:
    return values.astype(np.float64).astype(dt.storage)


def _compare(got: dict[str, np.ndarray], want: dict[str, np.ndarray], dt: DType) -> None:
    assert set(got) == set(want)
    for arg, w in want.items():
        assert got[arg].dtype == dt.storage, arg
        np.testing.assert_array_equal(
            got[arg].astype(np.float64), _rounded(w, dt).astype(np.float64), err_msg=arg
        )


@pytest.mark.parametrize("s", range(6))
def test_conv2d_and_transpose_conv2d_data(s: int) -> None:
    n_, ih, iw, ic, oc, kh, kw = 2, 4, 5, 3, 2, 2, 3
    shapes = {"input": (n_, ih, iw, ic), "weight": (oc, kh, kw, ic), "bias": (oc,)}
    ks = kw * kh * ic
    rule = {
        "input": (
            0,
            lambda n, iy, ix, c: (
                ((iy % kh) * kw + (ix % kw)) * ic + c,
                ((n * ih + iy) * iw + ix) * ic + c,
            ),
        ),
        "weight": (
            1,
            lambda o, ky, kx, c: ((ky * kw + kx) * ic + c, ((o * kh + ky) * kw + kx) * ic + c),
        ),
        "bias": (2, lambda o: (0, o)),
    }
    want = literal(shapes, rule, s, ks, bound_b(FP16, FP32, FP16))
    for op in ("CONV2D", "TRANSPOSE_CONV2D"):
        types = {"input": FP16, "weight": FP16, "bias": FP16}
        got = dataset_inputs(op, s, shapes, types, acc_dtype=FP32)
        _compare(got, want, FP16)


@pytest.mark.parametrize("s", [1, 3, 4])
def test_conv3d_data(s: int) -> None:
    n_, id_, ih, iw, ic, oc, kd, kh, kw = 1, 3, 3, 4, 2, 2, 2, 2, 3
    shapes = {"input": (n_, id_, ih, iw, ic), "weight": (oc, kd, kh, kw, ic), "bias": (oc,)}
    ks = kd * kw * kh * ic
    rule = {
        "input": (
            0,
            lambda n, d, y, x, c: (
                (((d % kd) * kh + (y % kh)) * kw + (x % kw)) * ic + c,
                (((n * id_ + d) * ih + y) * iw + x) * ic + c,
            ),
        ),
        "weight": (
            1,
            lambda o, d, y, x, c: (
                ((d * kh + y) * kw + x) * ic + c,
                (((o * kd + d) * kh + y) * kw + x) * ic + c,
            ),
        ),
        "bias": (2, lambda o: (0, o)),
    }
    want = literal(shapes, rule, s, ks, bound_b(FP32, FP32))
    types = {"input": FP32, "weight": FP32, "bias": FP32}
    _compare(dataset_inputs("CONV3D", s, shapes, types, acc_dtype=FP32), want, FP32)


@pytest.mark.parametrize("s", [0, 2, 4, 5])
def test_depthwise_conv2d_data(s: int) -> None:
    n_, ih, iw, c_, m_, kh, kw = 1, 4, 3, 2, 3, 2, 2
    shapes = {"input": (n_, ih, iw, c_), "weight": (kh, kw, c_, m_), "bias": (c_ * m_,)}
    rule = {
        "input": (
            0,
            lambda n, y, x, c: ((y % kh) * kw + (x % kw), ((n * ih + y) * iw + x) * c_ + c),
        ),
        "weight": (1, lambda y, x, c, m: (y * kw + x, ((y * kw + x) * c_ + c) * m_ + m)),
        "bias": (2, lambda o: (0, o)),
    }
    want = literal(shapes, rule, s, kw * kh, bound_b(BF16, FP32))
    types = {"input": BF16, "weight": BF16, "bias": BF16}
    _compare(dataset_inputs("DEPTHWISE_CONV2D", s, shapes, types, acc_dtype=FP32), want, BF16)


@pytest.mark.parametrize("s", [1, 4, 5])
def test_fully_connected_and_matmul_data(s: int) -> None:
    n_, ic, oc = 3, 5, 4
    shapes = {"input": (n_, ic), "weight": (oc, ic), "bias": (oc,)}
    rule = {
        "input": (0, lambda n, c: (c, n * ic + c)),
        "weight": (1, lambda o, c: (c, o * ic + c)),
        "bias": (2, lambda o: (0, o)),
    }
    # fp16 with fp32 accumulate: out_t (bias and output) is fp32, so B is 65504.
    want = literal(shapes, rule, s, ic, 65504.0)
    types = {"input": FP16, "weight": FP16, "bias": FP32}
    got = dataset_inputs("FULLY_CONNECTED", s, shapes, types, acc_dtype=FP32)
    for arg in ("input", "weight"):
        _compare({arg: got[arg]}, {arg: want[arg]}, FP16)
    _compare({"bias": got["bias"]}, {"bias": want["bias"]}, FP32)

    n_, h, c_, w = 2, 3, 4, 5
    shapes = {"A": (n_, h, c_), "B": (n_, c_, w)}
    rule = {
        "A": (0, lambda n, y, c: (c, (n * h + y) * c_ + c)),
        "B": (1, lambda n, c, x: (c, (n * c_ + c) * w + x)),
    }
    want = literal(shapes, rule, s, c_, 65504.0)
    got = dataset_inputs("MATMUL", s, shapes, {"A": FP16, "B": FP16}, acc_dtype=FP32)
    _compare(got, want, FP16)


@pytest.mark.parametrize("s", [2, 3, 5])
def test_pooling_reduction_and_fft_data(s: int) -> None:
    n_, ih, iw, c_, ky, kx = 2, 4, 5, 3, 2, 3
    shapes: dict[str, Sequence[int]] = {"input": (n_, ih, iw, c_)}
    rule = {
        "input": (
            0,
            lambda n, y, x, c: (
                ((y % ky) * kx + (x % kx)) * c_ + c,
                ((n * ih + y) * iw + x) * c_ + c,
            ),
        )
    }
    want = literal(shapes, rule, s, kx * ky, 255.875)
    got = dataset_inputs(
        "AVG_POOL2D", s, shapes, {"input": FP16}, acc_dtype=FP16, attrs={"kernel": (ky, kx)}
    )
    _compare(got, want, FP16)

    shape = (3, 4, 2)
    axis = 1
    rule = {"input": (0, lambda a, b, c: ((a, b, c)[axis], (a * 4 + b) * 2 + c))}
    want = literal({"input": shape}, rule, s, shape[axis], 2.0**64 - 2.0**40)
    got = dataset_inputs(
        "REDUCE_SUM", s, {"input": shape}, {"input": FP32}, acc_dtype=FP32, attrs={"axis": axis}
    )
    _compare(got, want, FP32)

    n_, h, w = 2, 3, 4
    shapes = {"input_real": (n_, h, w), "input_imag": (n_, h, w)}
    rule = {
        "input_real": (0, lambda n, y, x: (y * w + x, ((0 * n_ + n) * h + y) * w + x)),
        "input_imag": (0, lambda n, y, x: (y * w + x, ((1 * n_ + n) * h + y) * w + x)),
    }
    b = 2.0**64 - 2.0**40
    want = literal(shapes, rule, s, 2 * h * w, b)
    types = {"input_real": FP32, "input_imag": FP32}
    _compare(dataset_inputs("FFT2D", s, shapes, types, acc_dtype=FP32), want, FP32)
    want = literal({"input_real": (n_, h, w)}, {"input_real": rule["input_real"]}, s, h * w, b)
    got = dataset_inputs(
        "RFFT2D", s, {"input_real": (n_, h, w)}, {"input_real": FP32}, acc_dtype=FP32
    )
    _compare(got, want, FP32)


def test_kernel_sizes_and_limits() -> None:
    assert MIN_DOT_PRODUCTS == 1000
    assert kernel_size("CONV2D", {"weight": (8, 3, 5, 7)}, {}) == 3 * 5 * 7
    assert kernel_size("CONV3D", {"weight": (8, 2, 3, 5, 7)}, {}) == 2 * 3 * 5 * 7
    assert kernel_size("DEPTHWISE_CONV2D", {"weight": (3, 5, 7, 2)}, {}) == 15
    assert kernel_size("TRANSPOSE_CONV2D", {"weight": (8, 3, 5, 7)}, {}) == 105
    assert kernel_size("FULLY_CONNECTED", {"input": (4, 9)}, {}) == 9
    assert kernel_size("MATMUL", {"A": (2, 4, 9)}, {}) == 9
    assert kernel_size("FFT2D", {"input_real": (1, 4, 8)}, {}) == 64
    assert kernel_size("RFFT2D", {"input_real": (1, 4, 8)}, {}) == 32
    with pytest.raises(ValueError):
        kernel_size("ADD", {}, {})
    with pytest.raises(ValueError, match="floating-point"):
        dataset_inputs(
            "MATMUL", 0, {"A": (1, 1, 1), "B": (1, 1, 1)}, {"A": "i8", "B": "i8"}, acc_dtype="i32"
        )

"""Reference evaluator: ARGMAX, AVG_POOL2D, MAX_POOL2D (FFT2D and RFFT2D: test_ops_fft.py)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reference_helpers import assert_rule, valid

from conformance.builder import single_operator_graph
from conformance.dtypes import DType
from conformance.spec import load_spec
from reference.arguments import TYPES_CLAUSE
from reference.engine import evaluate
from reference.outcome import Outcome

SPEC = load_spec()
I32_MAX = (1 << 31) - 1
I32_MIN = -(1 << 31)


# -- graphs ---------------------------------------------------------------------------


def run_argmax(
    x: np.ndarray, dtype: DType | str, axis: int, out_shape: Sequence[int] | None = None
) -> Outcome:
    shape = tuple(x.shape)
    if out_shape is None:
        out_shape = shape[:axis] + shape[axis + 1 :]
    graph = single_operator_graph(
        "ARGMAX", [("x", shape, dtype)], [("y", out_shape, "i32")], {"axis": axis}
    )
    return evaluate(graph, {"x": x})


def pool_out_shape(
    shape: Sequence[int], kernel: Sequence[int], stride: Sequence[int], pad: Sequence[int]
) -> tuple[int, int, int, int]:
    n, ih, iw, c = shape
    oh = (ih + pad[0] + pad[1] - kernel[0]) // stride[0] + 1
    ow = (iw + pad[2] + pad[3] - kernel[1]) // stride[1] + 1
    return (n, oh, ow, c)


def run_pool(
    op: str,
    x: np.ndarray,
    dtype: DType | str,
    kernel: Sequence[int],
    stride: Sequence[int] = (1, 1),
    pad: Sequence[int] = (0, 0, 0, 0),
    *,
    out_shape: Sequence[int] | None = None,
    **attrs: Any,
) -> Outcome:
    if out_shape is None:
        out_shape = pool_out_shape(x.shape, kernel, stride, pad)
    attributes = {"kernel": tuple(kernel), "stride": tuple(stride), "pad": tuple(pad)}
    if op == "AVG_POOL2D":
        attributes |= {"acc_type": "INT32", "input_zp": 0, "output_zp": 0}
    attributes |= attrs
    # not strict: the error tests build graphs no mode supports, for the evaluator to reject
    graph = single_operator_graph(
        op,
        [("x", tuple(x.shape), dtype)],
        [("y", tuple(out_shape), dtype)],
        attributes,
        strict=False,
    )
    return evaluate(graph, {"x": x})


# -- test oracles: the pseudocode loops, element by element (small tensors only) ----------


def literal_argmax(x: np.ndarray, axis: int) -> np.ndarray:
    """ARGMAX.tosac's loop, element by element (the reference follows it without NaN)."""
    moved = np.moveaxis(x.astype(np.float64), axis, -1)
    out = np.zeros(moved.shape[:-1], dtype=np.int64)
    for index in np.ndindex(out.shape):
        max_value, max_index = -np.inf, 0
        for i, value in enumerate(moved[index]):
            if math.isnan(value) or math.isnan(max_value):
                biggest = math.nan
            else:
                biggest = value if value >= max_value else max_value
            if biggest != max_value:  # NaN != anything, NaN included
                max_value, max_index = value, i
        out[index] = max_index
    return out


def prose_argmax(x: np.ndarray, axis: int) -> np.ndarray:
    """ARGMAX as its prose states it, row by row: all NaN -> the last location; some
    NaN -> the first NaN (NaN compares greater; first match); else the first maximum."""
    moved = np.moveaxis(x.astype(np.float64), axis, -1)
    out = np.zeros(moved.shape[:-1], dtype=np.int64)
    for index in np.ndindex(out.shape):
        row = [float(v) for v in moved[index]]
        nans = [i for i, v in enumerate(row) if math.isnan(v)]
        if len(nans) == len(row):
            out[index] = len(row) - 1
        elif nans:
            out[index] = nans[0]
        else:
            best = 0
            for i, v in enumerate(row):
                if v > row[best]:
                    best = i
            out[index] = best
    return out


def literal_avg_pool_int(
    x: np.ndarray,
    kernel: Sequence[int],
    stride: Sequence[int],
    pad: Sequence[int],
    input_zp: int,
    output_zp: int,
    lo: int,
    hi: int,
) -> np.ndarray:
    """AVG_POOL2D's integer loop with Python ints (no REQUIRE failures expected)."""
    n_, ih, iw, c_ = x.shape
    _, oh, ow, _ = pool_out_shape(x.shape, kernel, stride, pad)
    out = np.zeros((n_, oh, ow, c_), dtype=np.int64)
    for n, oy, ox, c in np.ndindex(n_, oh, ow, c_):
        acc = count = 0
        for ky, kx in np.ndindex(kernel[0], kernel[1]):
            y = oy * stride[0] - pad[0] + ky
            xx = ox * stride[1] - pad[2] + kx
            if 0 <= y < ih and 0 <= xx < iw:
                count += 1
                acc += int(x[n, y, xx, c]) - input_zp
                assert I32_MIN <= acc <= I32_MAX
        k = (count - 1).bit_length()
        multiplier = (((1 << 30) + 1) << k) // count
        shift = 30 + k
        acc = (acc * multiplier + (1 << (shift - 1))) >> shift
        out[n, oy, ox, c] = min(max(acc + output_zp, lo), hi)
    return out


def literal_max_pool(
    x: np.ndarray, kernel: Sequence[int], stride: Sequence[int], pad: Sequence[int]
) -> np.ndarray:
    n_, ih, iw, c_ = x.shape
    _, oh, ow, _ = pool_out_shape(x.shape, kernel, stride, pad)
    out = np.zeros((n_, oh, ow, c_))
    for n, oy, ox, c in np.ndindex(n_, oh, ow, c_):
        acc = -math.inf
        for ky, kx in np.ndindex(kernel[0], kernel[1]):
            y = oy * stride[0] - pad[0] + ky
            xx = ox * stride[1] - pad[2] + kx
            if 0 <= y < ih and 0 <= xx < iw:
                value = float(x[n, y, xx, c])
                if math.isnan(acc) or math.isnan(value):
                    acc = math.nan
                else:
                    acc = acc if acc >= value else value
        out[n, oy, ox, c] = acc
    return out


# == ARGMAX ===========================================================================


def test_argmax_integers_by_hand() -> None:
    x = np.array([[3, 7, 7, -2], [-128, -128, -128, -128], [5, 1, 5, 6]], dtype=np.int8)
    # Row 0: 7 first at index 1 (the tie at 2 does not replace it).  Row 1: all equal
    # to minimum_s<int8>, which never exceeds the starting max: index 0.  Row 2: 6 at 3.
    assert valid(run_argmax(x, "i8", 1)).tolist() == [1, 0, 3]
    # Down the columns: max(3,-128,5)=5 at 2, max(7,-128,1)=7 at 0, 7 at 0, 6 at 2.
    assert valid(run_argmax(x, "i8", 0)).tolist() == [2, 0, 0, 2]


def test_argmax_output_drops_the_axis() -> None:
    x = np.arange(24, dtype=np.int16).reshape(2, 3, 4)
    assert valid(run_argmax(x, "i16", 1)).shape == (2, 4)
    assert valid(run_argmax(np.array([4, 9, 2], dtype=np.int16), "i16", 0)).shape == ()
    assert valid(run_argmax(np.array([4, 9, 2], dtype=np.int16), "i16", 0)) == 1


@pytest.mark.parametrize(
    ("row", "index"),
    [
        ([1.0, 3.0, 3.0, 2.0], 1),  # the first of equal maxima
        ([-0.0, 0.0], 0),  # +0.0 == -0.0: no replacement
        ([0.0, -0.0], 0),
        ([-np.inf, -np.inf], 0),  # -inf never exceeds the starting minimum_s (-inf)
        ([-np.inf, np.inf, np.inf], 1),
    ],
)
def test_argmax_float_ties(row: list[float], index: int) -> None:
    assert valid(run_argmax(np.array(row), "fp32", 0)) == index


@pytest.mark.parametrize(
    ("row", "index", "literal"),
    [
        # The last element is the only NaN: the prose (NaN is greatest) and the loop
        # (a NaN always replaces the running max) agree.  The packs test this case.
        ([1.0, 2.0, np.nan], 2, 2),
        # All NaN: "the last location must be returned"; the loop agrees (NaN != NaN).
        ([np.nan, np.nan, np.nan], 2, 2),
        ([np.nan], 0, 0),
        # A number after the NaN: the prose gives the NaN; the loop's element after a NaN
        # always replaces it (apply_max_s(v, NaN) is NaN, and NaN != NaN), so it gives the
        # first maximum after the last NaN.  The reference follows the prose.
        ([np.nan, 1.0, 2.0], 0, 2),
        ([5.0, np.nan, 1.0], 1, 2),
        ([np.nan, -np.inf, -np.inf], 0, 1),
        # Several NaN among numbers: the prose does not say which NaN; the reference
        # takes the first (as Arm's reference model does).  Vectors avoid this case.
        ([3.0, np.nan, 2.0, np.nan, 0.5, 0.75], 1, 5),
    ],
)
def test_argmax_nan_follows_the_prose(row: list[float], index: int, literal: int) -> None:
    x = np.array(row)
    assert valid(run_argmax(x, "fp16", 0)) == index
    assert literal_argmax(x, 0) == literal  # where the reading of the loop differs


def test_argmax_fp8_and_bf16() -> None:
    x = np.array([[-448.0, -448.0, 2.0, 448.0, 448.0]])
    # fp8e4m3 minimum_s is -448 (no infinity); 448 first at index 3.
    assert valid(run_argmax(x, "fp8e4m3", 1)).tolist() == [3]
    assert valid(run_argmax(np.array([[1.0, 1.5, 1.5]]), "bf16", 1)).tolist() == [1]


ARGMAX_SPECIALS = st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan])


@given(data=st.data())
def test_argmax_matches_the_prose_and_without_nan_the_loop(data: st.DataObject) -> None:
    shape = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=3), label="shape")
    axis = data.draw(st.integers(0, len(shape) - 1), label="axis")
    size = int(np.prod(shape))
    flat = data.draw(st.lists(ARGMAX_SPECIALS, min_size=size, max_size=size), label="values")
    x = np.array(flat).reshape(shape)
    got = valid(run_argmax(x, "fp32", axis))
    assert got.dtype == np.int32
    assert np.array_equal(got, prose_argmax(x, axis))
    no_nan = np.where(np.isnan(x), 1.0, x)
    assert np.array_equal(valid(run_argmax(no_nan, "fp32", axis)), literal_argmax(no_nan, axis))


@pytest.mark.parametrize("axis", [-1, 2])
def test_argmax_axis_out_of_range_is_an_error(axis: int) -> None:
    x = np.zeros((2, 3), dtype=np.int8)
    assert_rule(run_argmax(x, "i8", axis, (2,)), "error", "axis < 0 || axis >= rank(shape1)")


@pytest.mark.parametrize("out_shape", [(3,), (2, 3), (2, 1), (1, 2), ()])
def test_argmax_wrong_output_shape_is_an_error(out_shape: tuple[int, ...]) -> None:
    x = np.zeros((2, 3), dtype=np.int8)
    assert_rule(
        run_argmax(x, "i8", 1, out_shape), "error", "flatten(left_shape, right_shape) != shape"
    )


# == AVG_POOL2D =======================================================================


def test_avg_pool_int8_zero_points_and_rounding_by_hand() -> None:
    x = np.array([[10, -7, 3], [5, 0, -8]], dtype=np.int8).reshape(1, 2, 3, 1)
    # kernel 2x2, stride 1, pad left 1 / right 1: OH = (2-2)/1+1 = 1, OW = (3+2-2)/1+1 = 4.
    # input_zp 2: terms x - 2 = [[8, -9, 1], [3, -2, -10]]; output_zp -1.
    # count 2 -> reciprocal_scale: k = 1, multiplier ((1<<30)+1)<<1 / 2 = 1073741825,
    #   shift 31; count 4 -> k = 2, multiplier 4294967300 / 4 = 1073741825, shift 32.
    # ox=0: column 0 only (the pad column is not counted): 8 + 3 = 11, count 2:
    #   (11 * 1073741825 + 2**30) >> 31 = 12884901899 >> 31 = 6 (5.5 rounds up); 6 - 1 = 5
    # ox=1: 8 - 9 + 3 - 2 = 0 -> 0; 0 - 1 = -1
    # ox=2: -9 + 1 - 2 - 10 = -20, count 4:
    #   (-20 * 1073741825 + 2**31) >> 32 = -19327352852 >> 32 = -5 (exactly -5); -6
    # ox=3: 1 - 10 = -9, count 2: (-9 * 1073741825 + 2**30) >> 31 = -8589934601 >> 31
    #   = -5: -4.5 rounds away from zero (the multiplier is a little over 2**30); -6
    out = valid(
        run_pool("AVG_POOL2D", x, "i8", (2, 2), (1, 1), (0, 0, 1, 1), input_zp=2, output_zp=-1)
    )
    assert out.dtype == np.int8
    assert out.reshape(-1).tolist() == [5, -1, -6, -6]


def test_avg_pool_int8_count_three_and_clipping() -> None:
    x = np.array([[7, 0, 8, 1]], dtype=np.int8).reshape(1, 1, 4, 1)
    # kernel 1x3, stride 1, pad right 2 (pad < kernel_x 3): OW = (4+2-3)/1+1 = 4.
    # count 3: k = 2, multiplier 4294967300 // 3 = 1431655766, shift 32.
    # ox=0: 7+0+8 = 15 -> (15 * 1431655766 + 2**31) >> 32 = 23622320138 >> 32 = 5
    # ox=1: 0+8+1 = 9 -> 3.  ox=2: 8+1 = 9 over count 2 -> 4.5 -> 5.  ox=3: 1 -> 1.
    out = valid(run_pool("AVG_POOL2D", x, "i8", (1, 3), (1, 1), (0, 0, 0, 2)))
    assert out.reshape(-1).tolist() == [5, 3, 5, 1]
    # output_zp 125 pushes 5 + 125 = 130 past int8: clipped to 127.
    out = valid(run_pool("AVG_POOL2D", x, "i8", (1, 3), (1, 1), (0, 0, 0, 2), output_zp=125))
    assert out.reshape(-1).tolist() == [127, 127, 127, 126]


def test_avg_pool_float_excludes_padding_from_the_count() -> None:
    x = np.array([[1.0, 2.0], [3.0, 5.0]]).reshape(1, 2, 2, 1)
    # kernel 2x2, stride 1, pad 1 all round: OH = OW = (2+2-2)/1+1 = 3.
    # Corner windows hold one real value each (divided by 1, not 4); edge windows two;
    # the centre all four: (1+2+3+5)/4 = 2.75.
    out = valid(run_pool("AVG_POOL2D", x, "fp32", (2, 2), (1, 1), (1, 1, 1, 1), acc_type="FP32"))
    assert out.reshape(3, 3).tolist() == [
        [1.0, 1.5, 2.0],
        [2.0, 2.75, 3.5],
        [3.0, 4.0, 5.0],
    ]


def test_avg_pool_float_is_the_fp64_mean() -> None:
    x = np.array([2048.0, 1.0, 1.0, 0.0]).reshape(1, 1, 4, 1)
    # fp16 with fp16 accumulation would lose the 1s (2048 + 1 rounds to 2048); the
    # reference is the fp64 mean 2050 / 4 = 512.5.
    out = valid(run_pool("AVG_POOL2D", x, "fp16", (1, 4), acc_type="FP16"))
    assert out.reshape(-1).tolist() == [512.5]


def test_avg_pool_strided_matches_the_loop() -> None:
    rng = np.random.default_rng(11)
    x = rng.integers(-128, 128, size=(2, 8, 10, 3)).astype(np.int8)  # OH 5, OW 4
    kernel, stride, pad = (3, 2), (2, 3), (1, 2, 0, 1)
    got = valid(run_pool("AVG_POOL2D", x, "i8", kernel, stride, pad, input_zp=-5, output_zp=3))
    want = literal_avg_pool_int(x, kernel, stride, pad, -5, 3, -128, 127)
    assert np.array_equal(got, want)


@given(data=st.data())
def test_avg_pool_int_matches_the_loop(data: st.DataObject) -> None:
    dt = data.draw(st.sampled_from(["i8", "i16"]), label="dtype")
    ky = data.draw(st.integers(1, 4), label="kernel_y")
    kx = data.draw(st.integers(1, 4), label="kernel_x")
    sy = data.draw(st.integers(1, 3), label="stride_y")
    sx = data.draw(st.integers(1, 3), label="stride_x")
    pad = [
        data.draw(st.integers(0, k - 1), label=name)
        for name, k in (("top", ky), ("bottom", ky), ("left", kx), ("right", kx))
    ]
    oh = data.draw(st.integers(1, 3), label="OH")
    ow = data.draw(st.integers(1, 3), label="OW")
    # Choose the input size that makes idiv_check exact.
    ih = (oh - 1) * sy + ky - pad[0] - pad[1]
    iw = (ow - 1) * sx + kx - pad[2] - pad[3]
    if ih < 1 or iw < 1:
        return
    lo, hi = (-128, 127) if dt == "i8" else (-32768, 32767)
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    x = np.random.default_rng(seed).integers(lo, hi + 1, size=(1, ih, iw, 2))
    zps = (0, 0)
    if dt == "i8":
        zps = (data.draw(st.integers(lo, hi)), data.draw(st.integers(lo, hi)))
    got = valid(
        run_pool(
            "AVG_POOL2D",
            x.astype(np.int8 if dt == "i8" else np.int16),
            dt,
            (ky, kx),
            (sy, sx),
            pad,
            input_zp=zps[0],
            output_zp=zps[1],
        )
    )
    assert np.array_equal(got, literal_avg_pool_int(x, (ky, kx), (sy, sx), pad, *zps, lo, hi))


def test_avg_pool_running_sum_overflow_is_unpredictable() -> None:
    # int16, kernel 17 x 8192 (within MAX_KERNEL): rows 0..8 hold 32767 and rows 9..16
    # hold -32768.  After nine rows the running sum is 9 * 8192 * 32767 = 2415845376 >
    # 2**31 - 1, although the total 2415845376 - 8 * 8192 * 32768 = 268361728 fits.
    x = np.empty((1, 17, 8192, 1), dtype=np.int16)
    x[:, :9] = 32767
    x[:, 9:] = -32768
    outcome = run_pool("AVG_POOL2D", x, "i16", (17, 8192))
    assert_rule(
        outcome, "unpredictable", "c >= minimum_s<acc_t>() && c <= maximum_s<acc_t>() (apply_add_s)"
    )
    # The same data in the other order never leaves int32 on the way (it reaches
    # -8 * 8192 * 32768 = -2**31 exactly); 268361728 / (17 * 8192) = 1927 exactly.
    x = x[:, ::-1].copy()
    assert valid(run_pool("AVG_POOL2D", x, "i16", (17, 8192))).tolist() == [[[[1927]]]]


def test_avg_pool_large_window_that_fits() -> None:
    # 8 rows of 8192 x 32767 = 2147418112 <= 2**31 - 1: every running sum fits.
    x = np.full((1, 8, 8192, 1), 32767, dtype=np.int16)
    assert valid(run_pool("AVG_POOL2D", x, "i16", (8, 8192))).tolist() == [[[[32767]]]]


AVG_ERRORS = [
    # (attributes over the defaults, input shape, dtype, clause)
    ({"input_zp": 1}, "i16", "in_out_t != i8_t && input_zp != 0"),
    ({"output_zp": -1}, "i16", "in_out_t != i8_t && output_zp != 0"),
    ({"input_zp": 1.0, "acc_type": "FP32"}, "fp32", "in_out_t != i8_t && input_zp != 0"),
    ({"output_zp": 0.5, "acc_type": "FP16"}, "fp16", "in_out_t != i8_t && output_zp != 0"),
]


@pytest.mark.parametrize(("attrs", "dtype", "clause"), AVG_ERRORS)
def test_avg_pool_zero_point_errors(attrs: dict[str, Any], dtype: str, clause: str) -> None:
    x = np.zeros((1, 4, 4, 1))
    assert_rule(run_pool("AVG_POOL2D", x, dtype, (2, 2), **attrs), "error", clause)


@pytest.mark.parametrize(
    ("dtype", "acc_type"),
    [("i8", "FP32"), ("i16", "INT48"), ("fp32", "FP16"), ("bf16", "FP16"), ("fp8e4m3", "FP32")],
)
def test_avg_pool_unsupported_acc_type_is_an_error(dtype: str, acc_type: str) -> None:
    x = np.zeros((1, 2, 2, 1))
    outcome = run_pool("AVG_POOL2D", x, dtype, (2, 2), acc_type=acc_type)
    assert_rule(outcome, "error", TYPES_CLAUSE)


@pytest.mark.parametrize("acc_type", ["FP16", "FP32"])
def test_avg_pool_fp16_takes_either_accumulator(acc_type: str) -> None:
    x = np.ones((1, 2, 2, 1))
    assert valid(run_pool("AVG_POOL2D", x, "fp16", (2, 2), acc_type=acc_type)).item() == 1.0


# Geometry errors both pooling operators state: (kernel, stride, pad, input, output, clause).
POOL_GEOMETRY_ERRORS = [
    ((0, 2), (1, 1), (0, 0, 0, 0), (1, 4, 4, 1), (1, 4, 3, 1), "kernel_y < 1 || kernel_x < 1"),
    ((2, -1), (1, 1), (0, 0, 0, 0), (1, 4, 4, 1), (1, 3, 4, 1), "kernel_y < 1 || kernel_x < 1"),
    ((2, 2), (0, 1), (0, 0, 0, 0), (1, 4, 4, 1), (1, 3, 3, 1), "stride_y < 1 || stride_x < 1"),
    ((2, 2), (1, 0), (0, 0, 0, 0), (1, 4, 4, 1), (1, 3, 3, 1), "stride_y < 1 || stride_x < 1"),
    (
        (2, 2),
        (1, 1),
        (0, -1, 0, 0),
        (1, 4, 4, 1),
        (1, 2, 3, 1),
        "pad_top < 0 || pad_bottom < 0 || pad_left < 0 || pad_right < 0",
    ),
    (
        (2, 2),
        (1, 1),
        (0, 0, 0, 2),
        (1, 4, 4, 1),
        (1, 3, 5, 1),
        "pad_right >= kernel_x || pad_left >= kernel_x",
    ),
    (
        (2, 2),
        (1, 1),
        (0, 0, 2, 0),
        (1, 4, 4, 1),
        (1, 3, 5, 1),
        "pad_right >= kernel_x || pad_left >= kernel_x",
    ),
    (
        (2, 3),
        (1, 1),
        (2, 0, 0, 0),
        (1, 4, 4, 1),
        (1, 5, 2, 1),
        "pad_top >= kernel_y || pad_bottom >= kernel_y",
    ),
    (
        (2, 3),
        (1, 1),
        (0, 3, 0, 0),
        (1, 4, 4, 1),
        (1, 6, 2, 1),
        "pad_top >= kernel_y || pad_bottom >= kernel_y",
    ),
    (
        (2, 2),
        (2, 1),
        (0, 0, 0, 0),
        (1, 5, 4, 1),
        (1, 2, 3, 1),
        "input1 % input2 != 0 (idiv_check(IH + pad_top + pad_bottom - kernel_y, stride_y))",
    ),
    (
        (2, 2),
        (2, 2),
        (0, 0, 0, 0),
        (1, 4, 4, 1),
        (1, 3, 2, 1),
        "OH != idiv_check(IH + pad_top + pad_bottom - kernel_y, stride_y) + 1",
    ),
    (
        (2, 2),
        (1, 2),
        (0, 0, 0, 0),
        (1, 4, 5, 1),
        (1, 3, 2, 1),
        "input1 % input2 != 0 (idiv_check(IW + pad_left + pad_right - kernel_x, stride_x))",
    ),
    (
        (2, 2),
        (1, 1),
        (0, 0, 0, 0),
        (1, 4, 4, 1),
        (1, 3, 4, 1),
        "OW != idiv_check(IW + pad_left + pad_right - kernel_x, stride_x) + 1",
    ),
    (
        (3, 3),
        (1, 1),
        (0, 0, 0, 0),
        (1, 2, 4, 1),
        (1, 1, 2, 1),
        "OH != idiv_check(IH + pad_top + pad_bottom - kernel_y, stride_y) + 1",
    ),
]


@pytest.mark.parametrize("op", ["AVG_POOL2D", "MAX_POOL2D"])
@pytest.mark.parametrize(
    ("kernel", "stride", "pad", "in_shape", "out_shape", "clause"), POOL_GEOMETRY_ERRORS
)
def test_pool_geometry_errors(
    op: str,
    kernel: tuple[int, int],
    stride: tuple[int, int],
    pad: tuple[int, int, int, int],
    in_shape: tuple[int, ...],
    out_shape: tuple[int, ...],
    clause: str,
) -> None:
    x = np.zeros(in_shape, dtype=np.int8)
    outcome = run_pool(op, x, "i8", kernel, stride, pad, out_shape=out_shape)
    assert_rule(outcome, "error", clause)


def test_pool_negative_extent_takes_c_division() -> None:
    # IH + pads - kernel_y = 2 - 3 = -1: C's -1 % 1 = 0 and -1 / 1 = -1, so OH must be 0;
    # with stride 2, -1 % 2 = -1 != 0 is the idiv_check error.
    x = np.zeros((1, 2, 4, 1), dtype=np.int8)
    for op in ("MAX_POOL2D", "AVG_POOL2D"):
        out = valid(run_pool(op, x, "i8", (3, 1), (1, 1), out_shape=(1, 0, 4, 1)))
        assert out.shape == (1, 0, 4, 1)
    outcome = run_pool("MAX_POOL2D", x, "i8", (3, 1), (2, 1), out_shape=(1, 1, 4, 1))
    assert_rule(
        outcome,
        "error",
        "input1 % input2 != 0 (idiv_check(IH + pad_top + pad_bottom - kernel_y, stride_y))",
    )


# == MAX_POOL2D =======================================================================


def test_max_pool_padding_is_never_selected() -> None:
    x = np.array([[-5, -3], [-7, -128]], dtype=np.int8).reshape(1, 2, 2, 1)
    # kernel 2x2, pad 1 all round, stride 1: 3x3 outputs.  A zero pad would win every
    # window; the real values do: corners hold one value each, edges two, centre four.
    out = valid(run_pool("MAX_POOL2D", x, "i8", (2, 2), (1, 1), (1, 1, 1, 1)))
    assert out.reshape(3, 3).tolist() == [[-5, -3, -3], [-5, -3, -3], [-7, -7, -128]]


def test_max_pool_float_padding_nan_and_infinity() -> None:
    x = np.array([[-np.inf, 1.0, np.nan], [-2.0, -np.inf, 0.5]]).reshape(1, 2, 3, 1)
    # kernel 2x2, stride 1, pad left 1: OH 1, OW 3.
    # ox=0: column 0 only: max(-inf, -2) = -2.  ox=1: max(-inf, 1, -2, -inf) = 1.
    # ox=2: the NaN is in the window: apply_max_s gives NaN.
    out = valid(run_pool("MAX_POOL2D", x, "fp32", (2, 2), (1, 1), (0, 0, 1, 0)))
    assert out[0, 0, :2, 0].tolist() == [-2.0, 1.0]
    assert np.isnan(out[0, 0, 2, 0])
    # All -inf under padding: -inf, never something from the padding.
    y = np.full((1, 1, 1, 1), -np.inf)
    assert valid(run_pool("MAX_POOL2D", y, "fp16", (2, 2), (1, 1), (1, 0, 1, 0))).item() == -np.inf


@pytest.mark.parametrize(
    ("window", "negative"),
    [
        ([0.0, -0.0, -0.0, -0.0], False),  # the first zero in (ky, kx) order wins
        ([-0.0, 0.0, 0.0, 0.0], True),
        ([-1.0, -0.0, 0.0, -2.0], True),  # row 0 holds -0.0 first
        ([-1.0, -3.0, 0.0, -0.0], False),  # row 0 has no zero: row 1's first
    ],
)
def test_max_pool_sign_of_zero(window: list[float], negative: bool) -> None:
    x = np.array(window).reshape(1, 2, 2, 1)
    out = valid(run_pool("MAX_POOL2D", x, "bf16", (2, 2))).item()
    assert out == 0.0 and bool(np.signbit(out)) == negative


MAX_POOL_SPECIALS = st.sampled_from([0.0, -0.0, 1.0, -1.0, 3.5, -np.inf, np.inf, np.nan])


@given(data=st.data())
def test_max_pool_matches_the_loop(data: st.DataObject) -> None:
    ky = data.draw(st.integers(1, 3), label="kernel_y")
    kx = data.draw(st.integers(1, 3), label="kernel_x")
    sy = data.draw(st.integers(1, 3), label="stride_y")
    sx = data.draw(st.integers(1, 3), label="stride_x")
    pad = [
        data.draw(st.integers(0, k - 1), label=name)
        for name, k in (("top", ky), ("bottom", ky), ("left", kx), ("right", kx))
    ]
    oh = data.draw(st.integers(1, 3), label="OH")
    ow = data.draw(st.integers(1, 3), label="OW")
    ih = (oh - 1) * sy + ky - pad[0] - pad[1]
    iw = (ow - 1) * sx + kx - pad[2] - pad[3]
    if ih < 1 or iw < 1:
        return
    size = ih * iw * 2
    flat = data.draw(st.lists(MAX_POOL_SPECIALS, min_size=size, max_size=size), label="x")
    x = np.array(flat).reshape(1, ih, iw, 2)
    got = valid(run_pool("MAX_POOL2D", x, "fp32", (ky, kx), (sy, sx), pad))
    want = literal_max_pool(x, (ky, kx), (sy, sx), pad)
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))


def test_max_pool_int16_strided() -> None:
    rng = np.random.default_rng(5)
    x = rng.integers(-32768, 32768, size=(2, 9, 7, 3)).astype(np.int16)
    kernel, stride, pad = (3, 3), (3, 2), (2, 1, 0, 2)
    got = valid(run_pool("MAX_POOL2D", x, "i16", kernel, stride, pad))
    assert got.dtype == np.int16
    assert np.array_equal(got, literal_max_pool(x, kernel, stride, pad))


# == every mode =======================================================================

OPERATORS = ("ARGMAX", "AVG_POOL2D", "MAX_POOL2D")
MODES = [
    pytest.param(op, mode.mode, id=f"{op}-{mode.mode}")
    for op in OPERATORS
    for mode in SPEC.operator(op).modes
]
ACC_TYPE_NAMES = {"i32": "INT32", "fp16": "FP16", "fp32": "FP32"}


def sample(rng: np.random.Generator, dt: DType, shape: Sequence[int]) -> np.ndarray:
    if dt.is_int:
        lo, hi = int(dt.min), int(dt.max)  # type: ignore[arg-type]
        return rng.integers(lo, hi + 1, size=shape)
    return rng.uniform(-4.0, 4.0, size=shape)


@pytest.mark.parametrize(("op", "mode"), MODES)
def test_every_mode_evaluates(op: str, mode: str) -> None:
    support = SPEC.operator(op).mode(mode)
    rng = np.random.default_rng(3)
    if op == "ARGMAX":
        dt = support.dtype("in_t")
        x = sample(rng, dt, (2, 3, 4))
        for axis in range(3):
            assert valid(run_argmax(x, dt, axis)).shape == tuple(
                d for i, d in enumerate(x.shape) if i != axis
            )
    else:
        dt = support.dtype("in_out_t")
        x = sample(rng, dt, (2, 5, 6, 3))
        attrs: dict[str, Any] = {}
        if op == "AVG_POOL2D":
            attrs["acc_type"] = ACC_TYPE_NAMES[support.dtype("acc_t").name]
        # OH = (5+1+0-2)/1+1 = 5, OW = (6+2+1-3)/3+1 = 3
        out = valid(run_pool(op, x, dt, (2, 3), (1, 3), (1, 0, 2, 1), **attrs))
        assert out.shape == (2, 5, 3, 3)

"""Reference evaluator, TOSA 1.0 rules of the tensor operators: ARGMAX's and
MAX_POOL2D's nan_mode, the zero points as [1] input tensors (their ERROR_IFs as 1.0
spells them, and the argument declarations that replaced the draft's attribute
checks), TRANSPOSE_CONV2D's gather loop, and RFFT2D's optional extra multiplies.

Every expected value is worked out by hand from the 1.0 pseudocode in the comment
beside it."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_helpers import assert_rule, run_with_constants, valid

from conformance.builder import single_operator_graph
from conformance.dtypes import dtype
from conformance.spec import load_revision
from reference.arguments import INPUTS_CLAUSE, TYPES_CLAUSE
from reference.describe.tensor_pool_fft import _sin_part
from reference.ops.tensor_conv import (
    MATMUL_ZP_INPUT_CLAUSE,
    extra_multiplies_allowed,
    zero_point_clause,
)
from reference.ops.tensor_pool_fft import argmax_index, argmax_index_nan_mode
from reference.outcome import Outcome

SPEC = load_revision("1.0")
DRAFT = load_revision("2024-04-draft")
NAN = float("nan")
INF = float("inf")


# One operator of 1.0 (or of the draft, spec=DRAFT), parameters as constant inputs.
run = functools.partial(run_with_constants, spec=SPEC)


# -- ARGMAX ------------------------------------------------------------------------------


def argmax(x: Any, dt: str, axis: int, nan_mode: str) -> np.ndarray:
    x = np.asarray(x)
    out = x.shape[:axis] + x.shape[axis + 1 :]
    return valid(run("ARGMAX", [("x", x, dt)], out, "i32", axis=axis, nan_mode=nan_mode))


# (row, PROPAGATE, IGNORE), by the loop: PROPAGATE starts at minimum_s (-inf), takes the
# first NaN (apply_max_s returns NaN, NaN != -inf) and is never replaced after it (both
# NaN); IGNORE starts at NaN, takes the first number (compare_nan returns it) and a NaN
# never replaces a number (compare_nan returns the number: equal, no update).
ARGMAX_ROWS = [
    ([NAN, 1.0, 2.0], 0, 2),  # first NaN / the 2 at index 2
    ([1.0, NAN, 3.0, NAN], 1, 2),  # first NaN at 1 / the 3
    ([NAN, NAN, NAN], 0, 0),  # all NaN: the first NaN / max_index never set
    ([NAN, -INF], 0, 1),  # IGNORE: -inf replaces the starting NaN at i = 1
    ([-INF, -INF], 0, 0),  # -inf == minimum_s: no update, index 0
    ([3.0, 5.0, 5.0], 1, 1),  # a tie keeps the first maximum
    ([-0.0, 0.0, 0.0], 0, 0),  # +0 == -0: the first zero stays
    ([2.0, INF, NAN, INF], 2, 1),  # inf at 1; PROPAGATE then the NaN at 2
]


@pytest.mark.parametrize(("row", "propagate", "ignore"), ARGMAX_ROWS)
def test_argmax_nan_mode_by_hand(row: list[float], propagate: int, ignore: int) -> None:
    assert int(argmax(np.array(row, np.float32), "fp32", 0, "PROPAGATE")) == propagate
    assert int(argmax(np.array(row, np.float32), "fp32", 0, "IGNORE")) == ignore


def test_argmax_nan_mode_along_an_inner_axis() -> None:
    # [[NaN, 4], [7, NaN], [1, 2]] along axis 0: column 0 is [NaN, 7, 1], column 1
    # [4, NaN, 2].  PROPAGATE: the first NaN of each, [0, 1]; IGNORE: 7 at 1, 4 at 0.
    x = np.array([[NAN, 4.0], [7.0, NAN], [1.0, 2.0]], np.float16)
    assert argmax(x, "fp16", 0, "PROPAGATE").tolist() == [0, 1]
    assert argmax(x, "fp16", 0, "IGNORE").tolist() == [1, 0]


def test_argmax_integers_ignore_nan_mode() -> None:
    # i8 has no NaN: the first maximum (7 at index 1) under both modes.
    x = np.array([-128, 7, 7], np.int8)
    for mode in ("PROPAGATE", "IGNORE"):
        assert int(argmax(x, "i8", 0, mode)) == 1


def test_draft_argmax_keeps_its_prose_reading() -> None:
    # The draft declares no nan_mode; its prose gives an all-NaN axis its last index,
    # where 1.0's loop gives 0 under both modes.
    row = np.array([[NAN, NAN, NAN]])
    assert argmax_index(row, 1).tolist() == [2]
    assert argmax_index_nan_mode(row, 1, "PROPAGATE").tolist() == [0]
    assert not any(a.name == "nan_mode" for a in DRAFT.operator("ARGMAX").attributes)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from([NAN, -INF, INF, -1.0, 0.0, -0.0, 2.0]), min_size=1, max_size=6).map(
        lambda r: np.array(r, np.float64)
    ),
    st.sampled_from(["PROPAGATE", "IGNORE"]),
)
def test_argmax_nan_mode_is_the_pseudocode_loop(row: np.ndarray, mode: str) -> None:
    # The loop of ARGMAX.tosac with apply_max_s/compare_nan, element by element.
    def apply_max(a: float, b: float) -> float:
        if np.isnan(a) or np.isnan(b):
            return NAN if mode == "PROPAGATE" else (b if np.isnan(a) else a)
        return a if a >= b else b

    best, index = (NAN if mode == "IGNORE" else -INF), 0
    for i, v in enumerate(row):
        r = apply_max(float(v), best)
        if r != best and not (np.isnan(r) and np.isnan(best)):
            best, index = r, i
    assert int(argmax_index_nan_mode(row[None, :], 1, mode)[0]) == index


# -- MAX_POOL2D --------------------------------------------------------------------------


def max_pool(
    x: Any, kernel: Sequence[int], pad: Sequence[int], nan_mode: str, dt: str = "fp32"
) -> np.ndarray:
    x = np.asarray(x)
    n, ih, iw, c = x.shape
    oh = ih + pad[0] + pad[1] - kernel[0] + 1
    ow = iw + pad[2] + pad[3] - kernel[1] + 1
    attrs: dict[str, Any] = {"kernel": tuple(kernel), "stride": (1, 1), "pad": tuple(pad)}
    attrs["nan_mode"] = nan_mode
    return valid(run("MAX_POOL2D", [("x", x, dt)], (n, oh, ow, c), dt, **attrs))


def test_max_pool_nan_mode_by_hand() -> None:
    # One 2x2 window of [[NaN, 1], [2, -3]]: PROPAGATE NaN (any NaN), IGNORE 2 (the
    # largest number; the accumulator starts as NaN and takes the first number).
    x = np.array([NAN, 1.0, 2.0, -3.0], np.float32).reshape(1, 2, 2, 1)
    assert np.isnan(max_pool(x, (2, 2), (0, 0, 0, 0), "PROPAGATE")).all()
    assert max_pool(x, (2, 2), (0, 0, 0, 0), "IGNORE").reshape(-1).tolist() == [2.0]


@pytest.mark.parametrize("dt", ["bf16", "fp8e4m3", "fp8e5m2", "fp16"])
def test_max_pool_ignore_in_every_float_type(dt: str) -> None:
    # The same window in each float type: IGNORE gives 2. bf16 and fp8 arrays
    # (ml_dtypes) are no numpy kind "f"; the reference once took them for integers and
    # propagated the NaN (found by Arm's model on the 1.0 pack: it gives 448 for a
    # window of fp8e4m3 numbers up to 448 and one NaN).
    storage = dtype(dt).storage
    x = np.array([NAN, 1.0, 2.0, -3.0]).astype(storage).reshape(1, 2, 2, 1)
    assert np.isnan(np.asarray(max_pool(x, (2, 2), (0, 0, 0, 0), "PROPAGATE", dt), float)).all()
    got = np.asarray(max_pool(x, (2, 2), (0, 0, 0, 0), "IGNORE", dt), float)
    assert got.reshape(-1).tolist() == [2.0]


def test_max_pool_nan_mode_with_padding() -> None:
    # [[NaN, 4], [5, NaN]], kernel 2x2, pad top 1 and left 1: output (0,0) reads only
    # (0,0) = NaN: NaN in both modes; (0,1) reads NaN, 4: IGNORE 4; (1,0) reads NaN, 5:
    # IGNORE 5; (1,1) reads all four: IGNORE 5.  PROPAGATE: every window holds a NaN.
    x = np.array([NAN, 4.0, 5.0, NAN], np.float32).reshape(1, 2, 2, 1)
    ignore = max_pool(x, (2, 2), (1, 0, 1, 0), "IGNORE").reshape(-1)
    assert np.isnan(ignore[0]) and ignore[1:].tolist() == [4.0, 5.0, 5.0]
    assert np.isnan(max_pool(x, (2, 2), (1, 0, 1, 0), "PROPAGATE")).all()


def test_max_pool_ignore_keeps_minus_inf_and_the_first_zero() -> None:
    # [NaN, -inf] (kernel 1x2): IGNORE takes -inf after the NaN.  [NaN, -0, +0] (1x3):
    # -0 becomes the accumulator, +0 >= -0 is a tie in apply_max_s(acc, value), which
    # returns acc: -0.0.
    x = np.array([NAN, -INF], np.float32).reshape(1, 1, 2, 1)
    assert max_pool(x, (1, 2), (0, 0, 0, 0), "IGNORE").reshape(-1).tolist() == [-INF]
    z = np.array([NAN, -0.0, 0.0], np.float32).reshape(1, 1, 3, 1)
    out = max_pool(z, (1, 3), (0, 0, 0, 0), "IGNORE").reshape(-1)
    assert out[0] == 0.0 and np.signbit(out[0])


def test_max_pool_integers_ignore_nan_mode() -> None:
    x = np.array([-128, 3, -5, 2], np.int8).reshape(1, 2, 2, 1)
    for mode in ("PROPAGATE", "IGNORE"):
        assert max_pool(x, (2, 2), (0, 0, 0, 0), mode, "i8").reshape(-1).tolist() == [3]


# -- zero points as [1] input tensors ------------------------------------------------------


def conv2d(
    x: Any, w: Any, b: Any, types: tuple[str, str, str], zps: tuple[Any, Any], **attrs: Any
) -> Outcome:
    in_t, w_t, out_t = types
    x, w = np.asarray(x), np.asarray(w)
    n, ih, iw, _ = x.shape
    oc, kh, kw, _ = w.shape
    acc = {"i32": "INT32", "i48": "INT48", "fp16": "FP16", "fp32": "FP32"}[out_t]
    full = {"pad": (0, 0, 0, 0), "stride": (1, 1), "dilation": (1, 1), "acc_type": acc} | attrs
    return run(
        "CONV2D",
        [("x", x, in_t), ("w", w, w_t), ("b", np.asarray(b), out_t)],
        (n, ih - kh + 1, iw - kw + 1, oc),
        out_t,
        constants=[("izp", np.asarray(zps[0]), in_t), ("wzp", np.asarray(zps[1]), w_t)],
        **full,
    )


def test_conv2d_zero_point_tensors_by_hand() -> None:
    # 1x1x2x1 input [10, -3], a 1x1x2x1 kernel [2, 5], input_zp 4, weight_zp -1, bias 7:
    # (10 - 4) * (2 + 1) + (-3 - 4) * (5 + 1) + 7 = 18 - 42 + 7 = -17.
    x = np.array([10, -3], np.int8).reshape(1, 1, 2, 1)
    w = np.array([2, 5], np.int8).reshape(1, 1, 2, 1)
    out = conv2d(x, w, np.array([7], np.int32), ("i8", "i8", "i32"), ([4], [-1]))
    assert valid(out).reshape(-1).tolist() == [-17]


def _fp_conv2d(zps: tuple[float, float]) -> Outcome:
    x = np.ones((1, 1, 1, 1), np.float32)
    return conv2d(x, x, np.zeros(1, np.float32), ("fp32", "fp32", "fp32"), ([zps[0]], [zps[1]]))


def test_zero_point_only_for_i8_as_1_0_spells_it() -> None:
    assert_rule(_fp_conv2d((0.5, 0.0)), "ERROR_IF", "!is_same<in_t,i8_t>() && input_zp != 0")
    assert_rule(_fp_conv2d((0.0, 2.0)), "ERROR_IF", "!is_same<weight_t,i8_t>() && weight_zp != 0")
    # i8 input with i4 weights: the weight zero point must be 0 (weight_t is i4).
    x = np.ones((1, 1, 1, 1), np.int8)
    out = conv2d(x, x, np.zeros(1, np.int32), ("i8", "i4", "i32"), ([3], [1]))
    assert_rule(out, "ERROR_IF", "!is_same<weight_t,i8_t>() && weight_zp != 0", "weight_zp=1")


def test_zero_point_clause_follows_the_declaration() -> None:
    for op in ("CONV2D", "CONV3D", "DEPTHWISE_CONV2D", "TRANSPOSE_CONV2D"):
        want = "!is_same<in_t,i8_t>() && input_zp != 0"
        assert zero_point_clause(SPEC.operator(op), "input_zp", "in_t") == want
        assert zero_point_clause(DRAFT.operator(op), "input_zp", "in_t") == (
            "in_t != i8_t && input_zp != 0"
        )


def test_avg_pool_zero_point_tensors() -> None:
    # i16 has no zero point: input_zp 1 is the first ERROR_IF, then output_zp.
    x = np.zeros((1, 2, 2, 1), np.int16)

    def pool(izp: int, ozp: int) -> Outcome:
        attrs = {"kernel": (2, 2), "stride": (1, 1), "pad": (0, 0, 0, 0), "acc_type": "INT32"}
        zps = [("izp", np.array([izp], np.int16), "i16"), ("ozp", np.array([ozp], np.int16), "i16")]
        return run("AVG_POOL2D", [("x", x, "i16")], (1, 1, 1, 1), "i16", constants=zps, **attrs)

    assert_rule(pool(1, 0), "ERROR_IF", "!is_same<in_out_t,i8_t>() && input_zp != 0")
    assert_rule(pool(0, -1), "ERROR_IF", "!is_same<in_out_t,i8_t>() && output_zp != 0")
    assert valid(pool(0, 0)).reshape(-1).tolist() == [0]


def test_avg_pool_i8_zero_points_by_hand() -> None:
    # i8 [1, 2, 3, 6], input_zp 2, output_zp -5: the sum of (v - 2) is 4, count 4;
    # reciprocal_scale(4): k = 2, multiplier (2**30 + 1) * 4 // 4 = 2**30 + 1, shift 32;
    # apply_scale_32(4) = (4 * (2**30 + 1) + 2**31) >> 32 = 1; plus output_zp: -4.
    x = np.array([1, 2, 3, 6], np.int8).reshape(1, 2, 2, 1)
    attrs = {"kernel": (2, 2), "stride": (1, 1), "pad": (0, 0, 0, 0), "acc_type": "INT32"}
    zps = [("izp", np.array([2], np.int8), "i8"), ("ozp", np.array([-5], np.int8), "i8")]
    out = run("AVG_POOL2D", [("x", x, "i8")], (1, 1, 1, 1), "i8", constants=zps, **attrs)
    assert valid(out).reshape(-1).tolist() == [-4]


def matmul(a: Any, b: Any, dt: str, out_dt: str, zps: tuple[Any, Any]) -> Outcome:
    a, b = np.asarray(a), np.asarray(b)
    shape = (a.shape[0], a.shape[1], b.shape[2])
    consts = [("azp", np.asarray([zps[0]]), dt), ("bzp", np.asarray([zps[1]]), dt)]
    return run("MATMUL", [("a", a, dt), ("b", b, dt)], shape, out_dt, constants=consts)


def test_matmul_zero_points_read_as_meant() -> None:
    # i8 [[3, 4]] @ [[1], [2]] with A_zp 1, B_zp -2: (3-1)(1+2) + (4-1)(2+2) = 6 + 12 = 18.
    # 1.0.2 prints 'is_same<in_t,i8_t> && ...' (no '!'): read literally this i8 case
    # would be an error and a float zero point allowed; its comment says otherwise.
    a = np.array([[[3, 4]]], np.int8)
    b = np.array([[[1], [2]]], np.int8)
    assert valid(matmul(a, b, "i8", "i32", (1, -2))).reshape(-1).tolist() == [18]
    f = np.ones((1, 1, 1), np.float16)
    assert_rule(matmul(f, f, "fp16", "fp16", (0.0, 1.0)), "ERROR_IF", MATMUL_ZP_INPUT_CLAUSE)
    i16 = np.ones((1, 1, 1), np.int16)
    assert_rule(matmul(i16, i16, "i16", "i48", (3, 0)), "ERROR_IF", MATMUL_ZP_INPUT_CLAUSE)


def test_zero_point_tensor_must_be_shape_one_of_its_type() -> None:
    x = np.ones((1, 1, 1, 1), np.int8)
    b = np.zeros(1, np.int32)
    # shape [2]: the argument declares [1].
    assert_rule(conv2d(x, x, b, ("i8", "i8", "i32"), ([0, 0], [0])), "ERROR_IF", INPUTS_CLAUSE)
    # an i16 input_zp beside an i8 input: in_t is bound twice.
    out = run(
        "CONV2D",
        [("x", x, "i8"), ("w", x, "i8"), ("b", b, "i32")],
        (1, 1, 1, 1),
        "i32",
        constants=[("izp", np.array([0], np.int16), "i16"), ("wzp", np.array([0], np.int8), "i8")],
        pad=(0, 0, 0, 0),
        stride=(1, 1),
        dilation=(1, 1),
        acc_type="INT32",
    )
    assert_rule(out, "ERROR_IF", TYPES_CLAUSE)


# -- TRANSPOSE_CONV2D's gather loop ---------------------------------------------------


def test_transpose_conv2d_1_0_gather_by_hand() -> None:
    # Input [1, 2] (1x1x2x1), weight [1, 10, 100] (1x1x3x1), stride_x 2, out_pad 0:
    # OW = (2 - 1) * 2 + 3 = 5.  Output ox reads x = ox - kx where x % 2 == 0 and
    # x < IW * 2 = 4, input x / 2:  ox0: kx0 (x0) 1*1 = 1; ox1: kx1 (x0) 1*10 = 10;
    # ox2: kx0 (x2) 2*1 + kx2 (x0) 1*100 = 102; ox3: kx1 (x2) 2*10 = 20; ox4: kx2
    # (x2) 2*100 = 200.  input_zp 1, weight_zp 0 subtract 1 from each input: [0, 1]
    # gives [0, 0, 1, 10, 100].
    x = np.array([1, 2], np.int8).reshape(1, 1, 2, 1)
    w = np.array([1, 10, 100], np.int8).reshape(1, 1, 3, 1)

    def tconv(izp: int) -> np.ndarray:
        out = run(
            "TRANSPOSE_CONV2D",
            [("x", x, "i8"), ("w", w, "i8"), ("b", np.zeros(1, np.int32), "i32")],
            (1, 1, 5, 1),
            "i32",
            constants=[
                ("izp", np.array([izp], np.int8), "i8"),
                ("wzp", np.zeros(1, np.int8), "i8"),
            ],
            out_pad=(0, 0, 0, 0),
            stride=(1, 2),
            acc_type="INT32",
        )
        return valid(out).reshape(-1)

    assert tconv(0).tolist() == [1, 10, 102, 20, 200]
    assert tconv(1).tolist() == [0, 0, 1, 10, 100]


# -- RFFT2D: the skipped imaginary terms ----------------------------------------------


def test_extra_multiplies_by_revision() -> None:
    assert extra_multiplies_allowed("1.0") and not extra_multiplies_allowed("2024-04-draft")


def test_rfft_skipped_imaginary_bound_with_extra_multiplies() -> None:
    # A 2x2 plane: every output (rows 0, 1 = H/2; columns 0, 1 = W/2) skips all its sin
    # terms, so the imaginary bound is exactly 0.  With a backend allowed -inf * 0.0
    # there (1.0), a plane holding an infinity has no limit (inf); a finite plane keeps 0.
    planes = np.array([[[1.0, 2.0], [3.0, 4.0]], [[1.0, INF], [3.0, 4.0]]])
    draft = _sin_part(planes, 2)
    assert (draft == 0.0).all()
    one = _sin_part(planes, 2, extra_multiplies=True)
    assert (one[0] == 0.0).all() and np.isinf(one[1]).all()


# -- convolutions: outputs that meet a non-finite weight at a skipped tap -------------------


def _padded_conv_bound(spec_name: str) -> np.ndarray:
    """CONV2D fp32, input [1, 1, 1] (1x1x3x1), pad_left = pad_right = 1, two output
    channels: oc0's weight [inf, 1, 1], oc1's [1, 1, 1]."""
    from reference.expectations import expect

    spec = load_revision(spec_name)
    x = np.ones((1, 1, 3, 1), np.float32)
    w = np.array([[np.inf, 1.0, 1.0], [1.0, 1.0, 1.0]], np.float32).reshape(2, 1, 3, 1)
    b = np.zeros(2, np.float32)
    inputs = [("x", x.shape, "fp32"), ("w", w.shape, "fp32"), ("b", (2,), "fp32")]
    attrs: dict[str, Any] = {"pad": (0, 0, 1, 1), "stride": (1, 1), "dilation": (1, 1)}
    attrs["acc_type"] = "FP32"
    constants: dict[str, np.ndarray] = {}
    if spec_name == "1.0":
        inputs += [("izp", (1,), "fp32"), ("wzp", (1,), "fp32")]
        constants = {"izp": np.zeros(1, np.float32), "wzp": np.zeros(1, np.float32)}
    else:
        attrs |= {"input_zp": 0.0, "weight_zp": 0.0}
    graph = single_operator_graph(
        "CONV2D", inputs, [("y", (1, 1, 3, 2), "fp32")], attrs, constants=constants, spec=spec
    )
    e = expect(graph, {"x": x, "w": w, "b": b}, spec=spec)
    assert e.outcome.valid, str(e.outcome)
    bound = e.checks["y"].bound
    assert bound is not None
    return bound.reshape(3, 2)


def test_outputs_meeting_a_skipped_infinite_weight_have_no_limit() -> None:
    # Output ox0 of oc0 takes kx0 at x = -1 (padding) where the weight is inf: a backend
    # forming 0 * inf there (1.0's tosa_extra_multiplies) gets NaN, one skipping it
    # 1 + 1 = 2.  Under 1.0 that output has no limit (bound inf); the draft multiplies
    # no padding tap, so its bound stays the abs pass: |1| * |1| + |1| * |1| = 2.  ox1
    # and ox2 of oc0 read the inf (bound inf either way); oc1 has finite bounds.
    one, draft = _padded_conv_bound("1.0"), _padded_conv_bound("2024-04-draft")
    assert np.isinf(one[0, 0]) and draft[0, 0] == 2.0
    assert np.isfinite(one[:, 1]).all() and (one[:, 1] == draft[:, 1]).all()


# -- CONCAT: the list rules as 1.0 words them ----------------------------------------------

F23 = np.ones((2, 3), np.float32)


@pytest.mark.parametrize(
    "xs, out, clause, detail",
    [
        # 1.0 loops over shape_index and axis_index; the draft says input_shape and index
        (
            [F23, np.ones((2, 3, 1), np.float32)],
            (4, 3),
            "rank(shapes1[shape_index]) != rank(shapes1[0])",
            "input 1",
        ),
        (
            [F23, np.ones((2, 2), np.float32)],
            (4, 3),
            ("shapes1[shape_index][axis_index] != shapes1[0][axis_index]"),
            "input 1",
        ),
        # 2 + 2 rows along axis 0, not 3: axis_sum (summed in the loop) != shape[axis]
        ([F23, F23], (3, 3), "axis_sum != shape[axis]", "shape[0] = 3"),
    ],
    ids=["rank", "dimension", "axis-sum"],
)
def test_concat_list_rules_in_1_0_words(
    xs: list[np.ndarray], out: tuple, clause: str, detail: str
) -> None:
    inputs = [(f"x{k}", x, "fp32") for k, x in enumerate(xs)]
    outcome = run("CONCAT", inputs, out, "fp32", axis=0)
    assert_rule(outcome, "ERROR_IF", clause, detail)
    # the draft: the same vector breaks the same rule, in its words
    draft = run_with_constants("CONCAT", inputs, out, "fp32", spec=DRAFT, axis=0)
    assert draft.kind == "error" and draft.rule is not None
    assert draft.rule.clause != clause

"""Reference evaluator: RESIZE (nearest and bilinear, integer and floating-point)."""

from __future__ import annotations

from collections.abc import Sequence

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reference_helpers import assert_rule

from conformance import dtypes
from conformance.builder import single_operator_graph
from conformance.graph import Graph
from conformance.spec import TypeSupport, load_spec
from reference import compliance
from reference.arguments import ATTRIBUTES_CLAUSE, INPUTS_CLAUSE, TYPES_CLAUSE
from reference.engine import evaluate
from reference.expectations import expect
from reference.ops import image
from reference.outcome import Outcome

SPEC = load_spec()
NEAREST, BILINEAR = "NEAREST_NEIGHBOR", "BILINEAR"


def graph_for(
    in_shape: Sequence[int],
    out_shape: Sequence[int],
    in_dt: str,
    out_dt: str,
    mode: str,
    scale: Sequence[int],
    offset: Sequence[int] = (0, 0),
    border: Sequence[int] = (0, 0),
) -> Graph:
    return single_operator_graph(
        "RESIZE",
        [
            ("x", tuple(in_shape), in_dt),
            ("scale", (len(scale),), "shape"),
            ("offset", (len(offset),), "shape"),
            ("border", (len(border),), "shape"),
        ],
        [("y", tuple(out_shape), out_dt)],
        {"mode": mode},
        constants={
            "scale": np.asarray(scale, np.int64),
            "offset": np.asarray(offset, np.int64),
            "border": np.asarray(border, np.int64),
        },
    )


def resize(
    x: np.ndarray,
    out_hw: tuple[int, int],
    in_dt: str,
    out_dt: str,
    mode: str,
    scale: Sequence[int],
    offset: Sequence[int] = (0, 0),
    border: Sequence[int] = (0, 0),
) -> Outcome:
    x = np.asarray(x)
    n, _, _, c = x.shape
    graph = graph_for(x.shape, (n, *out_hw, c), in_dt, out_dt, mode, scale, offset, border)
    return evaluate(graph, {"x": x})


def out(outcome: Outcome) -> np.ndarray:
    assert outcome.kind == "valid", str(outcome)
    return outcome.outputs["y"]


def column(values: Sequence[float], dt: str = "fp32") -> np.ndarray:
    """A 1 x H x 1 x 1 image (one column)."""
    storage = dtypes.dtype(dt).storage
    return np.asarray(values, np.float64).astype(storage).reshape(1, -1, 1, 1)


# -- bilinear -------------------------------------------------------------------------


def test_bilinear_2x_upscale_fp32() -> None:
    # scale 2/1 both ways: OH = ((2 - 1) * 2 - 0 + 0) / 1 + 1 = 3.  Output row oy reads
    # y = oy, iy = y // 2, dy = (y % 2) / 2; the middle element averages all four.
    x = np.array([[1, 2], [3, 4]], np.float32).reshape(1, 2, 2, 1)
    got = out(resize(x, (3, 3), "fp32", "fp32", BILINEAR, [2, 1, 2, 1]))
    assert got[0, :, :, 0].tolist() == [[1, 1.5, 2], [2, 2.5, 3], [3, 3.5, 4]]


def test_bilinear_at_the_bottom_border() -> None:
    # IH = 2, scale 2/1, border_y = 1: OH = ((2 - 1) * 2 - 0 + 1) / 1 + 1 = 4.
    #   oy  y  iy  ry  iy0 iy1             dy    value
    #   0   0  0   0   0   1               0     10
    #   1   1  0   1   0   1               0.5   0.5 * 10 + 0.5 * 30 = 20
    #   2   2  1   0   1   min(2, 1) = 1   0     30
    #   3   3  1   1   1   1 (clamped)     0.5   0.5 * 30 + 0.5 * 30 = 30
    got = out(
        resize(column([10, 30]), (4, 1), "fp32", "fp32", BILINEAR, [2, 1, 2, 1], (0, 0), (1, 0))
    )
    assert got.reshape(-1).tolist() == [10, 20, 30, 30]


def test_bilinear_at_the_top_border_floors_negative_positions() -> None:
    # offset_y = -1: y = oy - 1, OH = ((2 - 1) * 2 + 1 + 0) / 1 + 1 = 4.
    #   oy  y   iy = idiv_floor(y, 2)  ry   iy0 iy1  dy    value
    #   0   -1  -1                     1    0   0    0.5   0.5 * 10 + 0.5 * 10 = 10
    #   1   0   0                      0    0   1    0     10
    #   2   1   0                      1    0   1    0.5   20
    #   3   2   1                      0    1   1    0     30
    # A truncating division would give iy = 0, ry = -1, dy = -0.5 and extrapolate
    # 1.5 * 10 - 0.5 * 30 = 0 at oy = 0.
    got = out(resize(column([10, 30]), (4, 1), "fp32", "fp32", BILINEAR, [2, 1, 2, 1], (-1, 0)))
    assert got.reshape(-1).tolist() == [10, 10, 20, 30]


def test_bilinear_downscale_and_thirds() -> None:
    # scale 3/2 (n = 3, d = 2), IH = 3: OH = (2 * 3 - 0 + 0) / 2 + 1 = 4.
    #   oy  y  iy  ry  dy    value (input 0, 3, 9)
    #   0   0  0   0   0     0
    #   1   2  0   2   2/3   1/3 * 0 + 2/3 * 3 = 2
    #   2   4  1   1   1/3   2/3 * 3 + 1/3 * 9 = 5
    #   3   6  2   0   0     9
    got = out(resize(column([0, 3, 9]), (4, 1), "fp32", "fp32", BILINEAR, [3, 2, 1, 1]))
    assert np.allclose(got.reshape(-1), [0, 2, 5, 9], rtol=0, atol=1e-15)


def test_float_bilinear_uses_the_stored_inputs_in_fp64() -> None:
    # bf16 holds 1/3 as 0.333984375; the midpoint of it and 1 is computed from that.
    x = column([1 / 3, 1.0], "bf16")
    assert x.dtype == ml_dtypes.bfloat16
    got = out(resize(x, (3, 1), "bf16", "bf16", BILINEAR, [2, 1, 1, 1]))
    assert got.dtype == np.float64
    assert got.reshape(-1).tolist() == [0.333984375, (0.333984375 + 1) / 2, 1.0]


def test_float_bilinear_infinity_times_zero_weight_is_nan() -> None:
    # The fp64 reference is the pseudocode's sum, every term included: a tap holding an
    # infinity contributes inf * 0 = NaN where its weight is zero.  IW = 1 makes
    # ix0 = ix1 = 0 and dx = 0, so each output has terms v * (1 - dy) * 0 and v * dy * 0
    # for both rows it reads: any infinite tap makes it NaN.
    #   oy = 0: taps rows 0, 1 (inf)   oy = 1: rows 0, 1   oy = 2: row 1 twice
    # A finite input keeps the result finite: the column [1, 2] gives 1, 1.5, 2.
    got = out(resize(column([1.0, np.inf]), (3, 1), "fp32", "fp32", BILINEAR, [2, 1, 1, 1]))
    assert np.isnan(got).all()
    got = out(resize(column([1.0, 2.0]), (3, 1), "fp32", "fp32", BILINEAR, [2, 1, 1, 1]))
    assert got.reshape(-1).tolist() == [1.0, 1.5, 2.0]


def test_integer_bilinear_is_scaled_by_the_numerators() -> None:
    # i8 -> i32, scale 2/1 both ways: each output is the weighted sum with weights in
    # units of scale_y_n * scale_x_n = 4.  Middle: 1 * 1 * (1 + 2 + 3 + 4) = 10;
    # top-left: v00 * 2 * 2 = 4; top middle: (1 + 2) * 2 * 1 = 6.
    x = np.array([[1, 2], [3, 4]], np.int8).reshape(1, 2, 2, 1)
    got = out(resize(x, (3, 3), "i8", "i32", BILINEAR, [2, 1, 2, 1]))
    assert got[0, :, :, 0].tolist() == [[4, 6, 8], [8, 10, 12], [12, 14, 16]]


def test_integer_bilinear_asymmetric_scale_and_negative_values() -> None:
    # scale_y 3/1, scale_x 2/1: the factor is 3 * 2 = 6.  IH = 2 -> OH = 4, IW = 1 -> OW = 1.
    #   oy = 1: y = 1, ry = 1: (3 - 1) * 2 * (-128) + 1 * 2 * 127 = -512 + 254 = -258.
    #   oy = 2: ry = 2: 1 * 2 * (-128) + 2 * 2 * 127 = -256 + 508 = 252.
    x = np.array([-128, 127], np.int8).reshape(1, 2, 1, 1)
    got = out(resize(x, (4, 1), "i8", "i32", BILINEAR, [3, 1, 2, 1]))
    assert got.reshape(-1).tolist() == [-768, -258, 252, 762]


def test_int16_bilinear_needs_48_bits() -> None:
    # The weights of each output sum to scale_y_n * scale_x_n, so a constant input gives
    # 32767 * 2048 * 2048 = 137_434_759_168 > 2**31 everywhere: the i48 output holds it.
    # scale 2048/8 (= MAX_SCALE 256): OH = (1 * 2048) / 8 + 1 = 257.
    x = np.full((1, 2, 2, 1), 32767, np.int16)
    got = out(resize(x, (257, 257), "i16", "i48", BILINEAR, [2048, 8, 2048, 8]))
    assert got.dtype == np.int64
    assert int(got.max()) == int(got.min()) == 32767 * 2048 * 2048


# -- nearest --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dt", "storage"), [("i8", np.int8), ("i16", np.int16), ("fp16", np.float16)]
)
def test_nearest_rounds_half_up_to_the_next_row(dt: str, storage: type) -> None:
    # scale 2/1, IH = 2 -> OH = 3; oy = 1 sits exactly halfway (2 * ry = 2 >= 2): iy1.
    x = np.array([5, 7], storage).reshape(1, 2, 1, 1)
    assert out(resize(x, (3, 1), dt, dt, NEAREST, [2, 1, 2, 1])).reshape(-1).tolist() == [5, 7, 7]
    # scale 3/1 -> OH = 4: ry = 0, 1, 2, 0; 2 * ry >= 3 only for ry = 2.
    got = out(resize(x, (4, 1), dt, dt, NEAREST, [3, 1, 2, 1]))
    assert got.reshape(-1).tolist() == [5, 5, 7, 7]


def test_nearest_with_negative_offset_and_downscale() -> None:
    # scale 2/3, offset -2, border -1: x = 3 * ox - 2;
    # IW = 5 -> OW = ((5 - 1) * 2 + 2 - 1) / 3 + 1 = 4.
    #   ox  x   ix = idiv_floor(x, 2)  rx  pick (2 * rx >= 2 -> ix1)  value
    #   0   -2  -1                     0   ix0 = max(-1, 0) = 0       10
    #   1   1   0                      1   ix1 = 1                    11
    #   2   4   2                      0   ix0 = 2                    12
    #   3   7   3                      1   ix1 = 4                    14
    x = np.array([10, 11, 12, 13, 14], np.int8).reshape(1, 1, 5, 1)
    got = out(resize(x, (1, 4), "i8", "i8", NEAREST, [2, 1, 2, 3], (0, -2), (0, -1)))
    assert got.reshape(-1).tolist() == [10, 11, 12, 14]


def test_nearest_keeps_every_channel_and_batch() -> None:
    rng = np.random.default_rng(1)
    x = rng.integers(-128, 128, (2, 2, 3, 4)).astype(np.int8)
    got = out(resize(x, (3, 5), "i8", "i8", NEAREST, [2, 1, 2, 1]))
    # Column picks for ox = 0..4: x = ox, ix = ox // 2, rx = ox % 2 -> 0, 1, 1, 2, 2.
    assert np.array_equal(got, x[:, [0, 1, 1]][:, :, [0, 1, 1, 2, 2]])


# -- against a transcription of the pseudocode ----------------------------------------


def pseudocode_resize(
    x: np.ndarray, oh: int, ow: int, mode: str, is_float: bool, scale: list[int], offset: list[int]
) -> np.ndarray:
    """RESIZE.tosac element by element (Python ints / fp64), for small cases only."""
    n_, ih, iw, c_ = x.shape
    y_n, y_d, x_n, x_d = scale
    out_arr = np.zeros((n_, oh, ow, c_), np.float64 if is_float else object)
    for n in range(n_):
        for oy in range(oh):
            for ox in range(ow):
                for c in range(c_):
                    y = oy * y_d + offset[0]
                    xx = ox * x_d + offset[1]
                    iy = int(y / y_n)  # C division truncates ...
                    if iy * y_n > y:  # ... and idiv_floor steps down
                        iy -= 1
                    ix = int(xx / x_n)
                    if ix * x_n > xx:
                        ix -= 1
                    ry, rx = y - iy * y_n, xx - ix * x_n
                    if is_float:
                        dy, dx, uy, ux = ry / y_n, rx / x_n, 1.0, 1.0
                    else:
                        dy, dx, uy, ux = ry, rx, y_n, x_n
                    iy0, iy1 = max(iy, 0), min(iy + 1, ih - 1)
                    ix0, ix1 = max(ix, 0), min(ix + 1, iw - 1)
                    if mode == BILINEAR:
                        v = [[x[n, a, b, c].item() for b in (ix0, ix1)] for a in (iy0, iy1)]
                        acc = v[0][0] * (uy - dy) * (ux - dx)
                        acc += v[0][1] * (uy - dy) * dx
                        acc += v[1][0] * dy * (ux - dx)
                        acc += v[1][1] * dy * dx
                    else:
                        if is_float:
                            py, px = (iy1 if dy >= 0.5 else iy0), (ix1 if dx >= 0.5 else ix0)
                        else:
                            py = iy1 if 2 * dy >= y_n else iy0
                            px = ix1 if 2 * dx >= x_n else ix0
                        acc = x[n, py, px, c].item()
                    out_arr[n, oy, ox, c] = acc
    return out_arr


@st.composite
def axis_params(draw: st.DrawFn, label: str) -> tuple[int, int, int, int, int, int]:
    """(in_size, out_size, n, d, offset, border) satisfying every ERROR_IF."""
    in_size = draw(st.integers(1, 5), label=f"I{label}")
    n = draw(st.integers(1, 9), label=f"scale_{label}_n")
    d = draw(st.integers(1, min(16 * n - 1, 20)), label=f"scale_{label}_d")
    # Offsets of in_size * n or more would leave no output row (OH <= 0).
    offset = draw(st.integers(-n, min(16 * n, in_size * n) - 1), label=f"offset_{label}")
    # border = k * d - (in - 1) * n + offset makes the division exact with out = k + 1;
    # k = 0 always fits the border range for in_size <= 5.
    ks = [k for k in range(12) if -16 * n <= k * d - (in_size - 1) * n + offset < n]
    k = draw(st.sampled_from(ks), label=f"O{label} - 1")
    return in_size, k + 1, n, d, offset, k * d - (in_size - 1) * n + offset


@given(
    y=axis_params("y"),
    x=axis_params("x"),
    mode=st.sampled_from([NEAREST, BILINEAR]),
    kind=st.sampled_from(["i8", "i16", "fp32"]),
    seed=st.integers(0, 2**16),
)
def test_matches_the_pseudocode_element_by_element(
    y: tuple[int, ...], x: tuple[int, ...], mode: str, kind: str, seed: int
) -> None:
    ih, oh, y_n, y_d, off_y, bor_y = y
    iw, ow, x_n, x_d, off_x, bor_x = x
    rng = np.random.default_rng(seed)
    dt = dtypes.dtype(kind)
    if dt.is_float:
        data = rng.normal(0, 10, (2, ih, iw, 2)).astype(np.float32)
        out_dt = kind
    else:
        data = rng.integers(int(dt.min), int(dt.max) + 1, (2, ih, iw, 2)).astype(dt.storage)
        out_dt = kind if mode == NEAREST else {"i8": "i32", "i16": "i48"}[kind]
    scale = [y_n, y_d, x_n, x_d]
    got = out(resize(data, (oh, ow), kind, out_dt, mode, scale, (off_y, off_x), (bor_y, bor_x)))
    want = pseudocode_resize(data, oh, ow, mode, dt.is_float, scale, [off_y, off_x])
    if dt.is_float:
        assert np.allclose(got, want, rtol=1e-12, atol=1e-12)
    else:
        assert got.tolist() == want.tolist()


# -- ERROR_IFs --------------------------------------------------------------------------

ERROR_CASES = [
    # (clause, in_hw, out_hw, scale, offset, border)
    (image.SIZE_CLAUSE, (16384, 1), (16384, 1), [1, 1, 1, 1], (0, 0), (0, 0)),
    (image.SIZE_CLAUSE, (2, 2), (1, 16384), [1, 1, 1, 1], (0, 0), (0, 0)),
    (image.SCALE_POSITIVE_CLAUSE, (2, 2), (3, 3), [0, 1, 2, 1], (0, 0), (0, 0)),
    (image.SCALE_POSITIVE_CLAUSE, (2, 2), (3, 3), [2, 1, 2, -1], (0, 0), (0, 0)),
    # 4096 / 16 = 256 stays within MAX_SCALE, so the level check passes.
    (image.SCALE_N_CLAUSE, (2, 2), (3, 3), [4096, 16, 2, 1], (0, 0), (0, 0)),
    (image.SCALE_N_CLAUSE, (2, 2), (3, 3), [2, 1, 2049, 16], (0, 0), (0, 0)),
    (image.SCALE_D_CLAUSE, (2, 2), (3, 3), [1, 16, 2, 1], (0, 0), (0, 0)),
    (image.SCALE_D_CLAUSE, (2, 2), (3, 3), [2, 1, 2, 32], (0, 0), (0, 0)),
    (image.OFFSET_Y_CLAUSE, (2, 2), (3, 3), [2, 1, 2, 1], (-3, 0), (0, 0)),
    (image.OFFSET_Y_CLAUSE, (2, 2), (3, 3), [2, 1, 2, 1], (32, 0), (0, 0)),
    (image.OFFSET_X_CLAUSE, (2, 2), (3, 3), [2, 1, 2, 1], (0, -3), (0, 0)),
    (image.OFFSET_X_CLAUSE, (2, 2), (3, 3), [2, 1, 2, 1], (0, 32), (0, 0)),
    (image.BORDER_Y_CLAUSE, (2, 2), (3, 3), [2, 1, 2, 1], (0, 0), (-33, 0)),
    (image.BORDER_Y_CLAUSE, (2, 2), (3, 3), [2, 1, 2, 1], (0, 0), (2, 0)),
    (image.BORDER_X_CLAUSE, (2, 2), (3, 3), [2, 1, 2, 1], (0, 0), (0, -33)),
    (image.BORDER_X_CLAUSE, (2, 2), (3, 3), [2, 1, 2, 1], (0, 0), (0, 2)),
    # (2 - 1) * 2 - 0 + 0 = 2 is not a multiple of scale_y_d = 3.
    (image.IDIV_CHECK_CLAUSE, (2, 2), (1, 3), [2, 3, 2, 1], (0, 0), (0, 0)),
    (image.OH_CLAUSE, (2, 2), (4, 3), [2, 1, 2, 1], (0, 0), (0, 0)),
    # A negative numerator is divisible but gives OH <= 0, which no output has.
    (image.OH_CLAUSE, (2, 2), (1, 3), [2, 1, 2, 1], (0, 0), (-4, 0)),
    (image.IDIV_CHECK_CLAUSE, (2, 2), (3, 1), [2, 1, 2, 3], (0, 0), (0, 0)),
    (image.OW_CLAUSE, (2, 2), (3, 2), [2, 1, 2, 1], (0, 0), (0, 0)),
]


@pytest.mark.parametrize(
    ("clause", "in_hw", "out_hw", "scale", "offset", "border"),
    ERROR_CASES,
    ids=[f"{i}-{c[0][:24]}" for i, c in enumerate(ERROR_CASES)],
)
def test_error_ifs_name_their_clause(
    clause: str,
    in_hw: tuple[int, int],
    out_hw: tuple[int, int],
    scale: list[int],
    offset: tuple[int, int],
    border: tuple[int, int],
) -> None:
    x = np.zeros((1, *in_hw, 1), np.float32)
    assert_rule(resize(x, out_hw, "fp32", "fp32", BILINEAR, scale, offset, border), "error", clause)


def test_error_ifs_are_checked_in_pseudocode_order() -> None:
    # Both the offset_y and the border_x rule fail: offset_y's comes first.
    x = np.zeros((1, 2, 2, 1), np.float32)
    got = resize(x, (3, 3), "fp32", "fp32", BILINEAR, [2, 1, 2, 1], (-3, 0), (0, 5))
    assert_rule(got, "error", image.OFFSET_Y_CLAUSE)


def test_shape_inputs_of_the_wrong_length() -> None:
    graph = single_operator_graph(
        "RESIZE",
        [
            ("x", (1, 2, 2, 1), "fp32"),
            ("scale", (3,), "shape"),
            ("offset", (2,), "shape"),
            ("border", (2,), "shape"),
        ],
        [("y", (1, 3, 3, 1), "fp32")],
        {"mode": BILINEAR},
        constants={"scale": np.array([2, 1, 2]), "offset": np.zeros(2), "border": np.zeros(2)},
    )
    assert_rule(evaluate(graph, {"x": np.zeros((1, 2, 2, 1))}), "error", INPUTS_CLAUSE)


def test_unknown_mode_and_mode_type_mismatch() -> None:
    x = np.zeros((1, 2, 2, 1), np.int8)
    got = resize(x, (3, 3), "i8", "i8", "NEAREST", [2, 1, 2, 1])  # the XML name is NEAREST_NEIGHBOR
    assert_rule(got, "error", ATTRIBUTES_CLAUSE)
    # i8 -> i8 is the nearest row; i8 -> i32 the bilinear one.
    assert_rule(resize(x, (3, 3), "i8", "i8", BILINEAR, [2, 1, 2, 1]), "error", TYPES_CLAUSE)
    assert_rule(resize(x, (3, 3), "i8", "i32", NEAREST, [2, 1, 2, 1]), "error", TYPES_CLAUSE)
    # Floating-point rows serve both modes.
    assert resize(x.astype(np.float16), (3, 3), "fp16", "fp16", NEAREST, [2, 1, 2, 1]).valid


def test_scale_beyond_the_level_is_unpredictable() -> None:
    x = np.zeros((1, 2, 2, 1), np.float32)
    got = resize(x, (259, 3), "fp32", "fp32", BILINEAR, [258, 1, 2, 1])
    assert got.kind == "unpredictable" and got.rule is not None
    assert got.rule.kind == "LEVEL_CHECK"


# -- every mode, and the compliance descriptor -------------------------------------------

MODES = SPEC.operator("RESIZE").modes


def _mode_attrs(mode: TypeSupport) -> list[str]:
    name = mode.mode.lower()
    if "bilinear" in name:
        return [BILINEAR]
    if "nearest" in name:
        return [NEAREST]
    return [NEAREST, BILINEAR]


CASES = [(m, a) for m in MODES for a in _mode_attrs(m)]


@pytest.mark.parametrize(("mode", "attr"), CASES, ids=[f"{m.mode}-{a}" for m, a in CASES])
def test_every_mode_evaluates(mode: TypeSupport, attr: str) -> None:
    in_dt, out_dt = mode.dtype("in_t"), mode.dtype("out_t")
    rng = np.random.default_rng(7)
    if in_dt.is_float:
        x = rng.normal(0, 3, (1, 3, 4, 2)).astype(in_dt.storage)
    else:
        x = rng.integers(int(in_dt.min), int(in_dt.max) + 1, (1, 3, 4, 2)).astype(in_dt.storage)
    # scale 3/2 and 5/3, offset (1, -1), border (1, 2):
    # OH = ((3 - 1) * 3 - 1 + 1) / 2 + 1 = 4, OW = ((4 - 1) * 5 + 1 + 2) / 3 + 1 = 7.
    got = resize(x, (4, 7), in_dt.name, out_dt.name, attr, [3, 2, 5, 3], (1, -1), (1, 2))
    assert got.kind == "valid", str(got)
    assert got.outputs["y"].shape == (1, 4, 7, 2)


def test_float_describer_uses_the_largest_input_magnitude() -> None:
    # scale_y 2/1, scale_x 1/1: OH = 3, OW = 3.  Output (0, 0) reads input rows 0-1 and
    # columns 0-1 only, so the NaN at (1, 2) does not reach it; its reference is 1.0.
    x = np.array([[1.0, -8.0, 0.0], [0.0, 2.0, np.nan]], np.float32).reshape(1, 2, 3, 1)
    graph = graph_for((1, 2, 3, 1), (1, 3, 3, 1), "fp32", "fp32", BILINEAR, [2, 1, 1, 1])
    e = expect(graph, {"x": x})
    desc = e.checks["y"].descriptor
    assert desc.mode is compliance.Mode.RESIZE
    assert desc.params.input_abs_max == 8.0  # the NaN is left out
    # err_bnd = 0.006 * 8 = 0.048: the element at (0, 0) (reference 1.0) may be 1.04.
    assert e.outcome.outputs["y"][0, 0, 0, 0] == 1.0
    actual = e.outcome.outputs["y"].astype(np.float32)
    actual[0, 0, 0, 0] = 1.04
    assert e.check("y", actual).passed
    actual[0, 0, 0, 0] = 1.05
    assert not e.check("y", actual).passed


def test_integer_outputs_are_exact() -> None:
    x = np.array([[1, 2], [3, 4]], np.int8).reshape(1, 2, 2, 1)
    graph = graph_for((1, 2, 2, 1), (1, 3, 3, 1), "i8", "i32", BILINEAR, [2, 1, 2, 1])
    assert expect(graph, {"x": x}).checks["y"].descriptor.mode is compliance.Mode.EXACT

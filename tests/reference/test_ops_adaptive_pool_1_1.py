"""Reference evaluator, TOSA 1.1: AVG_POOL2D_ADAPTIVE and MAX_POOL2D_ADAPTIVE (the
pooling pseudocode with kernel, stride and pad as shape_t inputs), and ARGMAX's i64_t
modes (EXT-INT64).

Every expected value is worked out by hand from the 1.1 pseudocode in the comment
beside it (AVG_POOL2D.tosac, MAX_POOL2D.tosac, ARGMAX.tosac; tensor_ops.adoc includes
the first two under the _ADAPTIVE headings)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_helpers import assert_rule, run_with_constants, valid

from conformance.builder import single_operator_graph
from conformance.dtypes import dtype
from conformance.spec import load_revision, spec_in_use
from reference.arguments import INPUTS_CLAUSE, TYPES_CLAUSE
from reference.compliance import DOT_PRODUCT_OPERATORS, EXACT_OPERATORS, Mode
from reference.engine import Evaluator
from reference.expectations import expect
from reference.ops.tensor_conv import STRIDE_CLAUSE
from reference.ops.tensor_pool_fft import (
    KERNEL_CLAUSE,
    PAD_NEGATIVE_CLAUSE,
    POOL_OH_CLAUSE,
    POOL_OW_CLAUSE,
    POOL_PAD_X_CLAUSE,
    POOL_PAD_Y_CLAUSE,
)
from reference.outcome import Outcome
from reference.zero_sign import SELECTIONS, tied_zeros

V11 = load_revision("1.1-draft")
NAN = float("nan")
run = functools.partial(run_with_constants, spec=V11)


def adaptive(
    op: str,
    x: Any,
    dt: str,
    kernel: tuple[int, ...],
    stride: tuple[int, ...] = (1, 1),
    pad: tuple[int, ...] = (0, 0, 0, 0),
    *,
    out_shape: tuple[int, ...] | None = None,
    input_zp: float = 0,
    output_zp: float = 0,
    **attrs: Any,
) -> Outcome:
    """An _ADAPTIVE pooling: kernel, stride and pad as constant shape_t inputs, AVG's
    zero points as [1] inputs before them (argument order)."""
    x = np.asarray(x)
    if out_shape is None:
        n, ih, iw, c = x.shape
        oh = (ih + pad[0] + pad[1] - kernel[0]) // stride[0] + 1
        ow = (iw + pad[2] + pad[3] - kernel[1]) // stride[1] + 1
        out_shape = (n, oh, ow, c)
    window = [("k", kernel, "shape"), ("s", stride, "shape"), ("p", pad, "shape")]
    if op == "AVG_POOL2D_ADAPTIVE":
        zps = [("iz", [input_zp], dt), ("oz", [output_zp], dt)]
        attrs.setdefault("acc_type", "FP32" if dtype(dt).is_float else "INT32")
    else:
        zps = []
        attrs.setdefault("nan_mode", "PROPAGATE")
    return run(op, [("x", x, dt)], out_shape, dt, constants=[*zps, *window], **attrs)


def avg(x: Any, dt: str, *args: Any, **kw: Any) -> np.ndarray:
    return valid(adaptive("AVG_POOL2D_ADAPTIVE", x, dt, *args, **kw))


def mx(x: Any, dt: str, *args: Any, **kw: Any) -> np.ndarray:
    return valid(adaptive("MAX_POOL2D_ADAPTIVE", x, dt, *args, **kw))


GRID_4X4 = np.arange(16, dtype=np.int8).reshape(1, 4, 4, 1)
GRID_3X3 = np.arange(1, 10, dtype=np.int8).reshape(1, 3, 3, 1)


# == AVG_POOL2D_ADAPTIVE ===============================================================


def test_avg_int8_rounds_with_reciprocal_scale() -> None:
    # kernel 2x2, stride 2 over 0..15: window sums 0+1+4+5 = 10, 2+3+6+7 = 18, 42, 50.
    # count 4: reciprocal_scale k = 2, multiplier (2**30 + 1) << 2 // 4 = 1073741825,
    # shift 32; (10 * 1073741825 + 2**31) >> 32 = 12884901898 >> 32 = 3 (2.5 up), and
    # 18 -> 5 (4.5), 42 -> 11 (10.5), 50 -> 13 (12.5).
    assert avg(GRID_4X4, "i8", (2, 2), (2, 2)).reshape(-1).tolist() == [3, 5, 11, 13]


def test_avg_int8_negative_half_rounds_away_from_zero() -> None:
    # [-1, -2] over kernel 1x2: sum -3, count 2: k = 1, multiplier 1073741825, shift 31;
    # -3 * 1073741825 + 2**30 = -2147483651, >> 31 = -2 (the multiplier is a little over
    # 2**30, so -1.5 lands just below it)
    x = np.array([-1, -2]).reshape(1, 1, 2, 1)
    assert avg(x, "i8", (1, 2)).reshape(-1).tolist() == [-2]


def test_avg_int8_zero_points_and_clipping() -> None:
    x = np.array([10, 20]).reshape(1, 1, 2, 1)
    # input_zp 5: (10 - 5) + (20 - 5) = 20 over 2 = 10; output_zp -3 gives 7
    assert avg(x, "i8", (1, 2), input_zp=5, output_zp=-3).tolist() == [[[[7]]]]
    # [127, 127] with output_zp 100: 127 + 100 = 227, clipped to 127
    y = np.array([127, 127]).reshape(1, 1, 2, 1)
    assert avg(y, "i8", (1, 2), output_zp=100).tolist() == [[[[127]]]]


def test_avg_float_counts_only_real_taps() -> None:
    # kernel 3x1, pad 1 above and below, stride 1 over [1, 2, 3]: OH = (3 + 2 - 3) + 1 = 3.
    # oy 0 reads rows -1, 0, 1: (1 + 2) / 2 = 1.5; oy 1: (1 + 2 + 3) / 3 = 2; oy 2: 2.5
    x = np.array([1.0, 2.0, 3.0]).reshape(1, 3, 1, 1)
    assert avg(x, "fp32", (3, 1), (1, 1), (1, 1, 0, 0)).reshape(-1).tolist() == [1.5, 2.0, 2.5]


def test_avg_windows_are_the_pseudocodes_not_the_frameworks() -> None:
    # kernel 1x1, stride 1x2 over [4, 8, 12]: OW = (3 - 1) / 2 + 1 = 2, ix = 0 and 2, so
    # 4 and 12.  PyTorch's adaptive windows for 3 -> 2 ([0, 2), [1, 3)) would give 6, 10.
    x = np.array([4, 8, 12]).reshape(1, 1, 3, 1)
    assert avg(x, "i8", (1, 1), (1, 2)).reshape(-1).tolist() == [4, 12]


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_avg_is_avg_pool2d_with_its_parameters_as_inputs(data: st.DataObject) -> None:
    """The same windows, divisor, rounding and zero points as AVG_POOL2D of 1.1."""
    dt = data.draw(st.sampled_from(["i8", "i16", "fp16", "fp32"]), label="dtype")
    ky, kx = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    sy, sx = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    pad = tuple(data.draw(st.integers(0, k - 1)) for k in (ky, ky, kx, kx))
    oh, ow = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    ih, iw = (oh - 1) * sy + ky - pad[0] - pad[1], (ow - 1) * sx + kx - pad[2] - pad[3]
    if ih < 1 or iw < 1:
        return
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    x = rng.integers(-100, 100, size=(2, ih, iw, 2))
    zps = (data.draw(st.integers(-128, 127)), data.draw(st.integers(-128, 127)))
    zps = zps if dt == "i8" else (0, 0)
    got = avg(x, dt, (ky, kx), (sy, sx), pad, input_zp=zps[0], output_zp=zps[1])
    acc = "FP32" if dtype(dt).is_float else "INT32"
    want = run(
        "AVG_POOL2D",
        [("x", x, dt)],
        got.shape,
        dt,
        constants=[("iz", [zps[0]], dt), ("oz", [zps[1]], dt)],
        kernel=(ky, kx),
        stride=(sy, sx),
        pad=pad,
        acc_type=acc,
    )
    np.testing.assert_array_equal(got, valid(want))


def test_avg_zero_point_rules_as_1_1_spells_them() -> None:
    x = np.zeros((1, 2, 2, 1))
    outcome = adaptive("AVG_POOL2D_ADAPTIVE", x, "i16", (2, 2), input_zp=1)
    assert_rule(outcome, "error", "!is_same<in_out_t,i8_t>() && input_zp != 0")
    outcome = adaptive("AVG_POOL2D_ADAPTIVE", x, "fp16", (2, 2), output_zp=0.5)
    assert_rule(outcome, "error", "!is_same<in_out_t,i8_t>() && output_zp != 0")


def test_avg_acc_type_must_be_the_modes() -> None:
    # i8 pairs with INT32 only; fp16 takes FP16 or FP32
    x = np.zeros((1, 2, 2, 1))
    assert_rule(
        adaptive("AVG_POOL2D_ADAPTIVE", x, "i8", (2, 2), acc_type="FP32"), "error", TYPES_CLAUSE
    )
    for acc in ("FP16", "FP32"):
        assert avg(x, "fp16", (2, 2), acc_type=acc).tolist() == [[[[0.0]]]]


# == MAX_POOL2D_ADAPTIVE ===============================================================


def test_max_strided_windows() -> None:
    # kernel 1, stride 2 over 1..9: taps (0, 0), (0, 2), (2, 0), (2, 2) = 1, 3, 7, 9
    assert mx(GRID_3X3, "i8", (1, 1), (2, 2)).reshape(-1).tolist() == [1, 3, 7, 9]
    # kernel 2, stride 1: the maxima of the four 2x2 windows, 5, 6, 8, 9
    assert mx(GRID_3X3, "i8", (2, 2)).reshape(-1).tolist() == [5, 6, 8, 9]


def test_max_padding_is_skipped() -> None:
    # every value -128 and pad 1 on every side, kernel 2x2: a padding tap read as 0 (or
    # as -127) would win; the loop skips it, so every window gives -128
    x = np.full((1, 2, 2, 1), -128)
    assert mx(x, "i8", (2, 2), (1, 1), (1, 1, 1, 1)).reshape(-1).tolist() == [-128] * 9


@pytest.mark.parametrize(
    ("window", "propagate", "ignore"),
    [
        ([NAN, 1.0], NAN, 1.0),  # apply_max_s: NaN wins / the number wins
        ([NAN, NAN], NAN, NAN),  # IGNORE starts from NaN and finds no number
        ([-2.0, -1.0], -1.0, -1.0),
    ],
)
def test_max_nan_mode(window: list[float], propagate: float, ignore: float) -> None:
    x = np.array(window).reshape(1, 1, 2, 1)
    for mode, want in (("PROPAGATE", propagate), ("IGNORE", ignore)):
        got = mx(x, "fp32", (1, 2), nan_mode=mode).reshape(-1)[0]
        assert (np.isnan(got) and np.isnan(want)) or got == want, (mode, got)


def test_max_nan_mode_is_ignored_by_integers() -> None:
    assert mx(GRID_3X3, "i8", (3, 3), nan_mode="IGNORE").tolist() == [[[[9]]]]


def test_max_zero_sign_reading_covers_it() -> None:
    """A window of -0.0 and +0.0: the zero chosen may have either sign (reading
    zero-sign-selection), as for MAX_POOL2D."""
    assert "MAX_POOL2D_ADAPTIVE" in SELECTIONS.operators
    x = np.array([-0.0, 0.0, -0.0, -0.0]).reshape(1, 1, 4, 1)
    # kernel 1x2, stride 2: windows [-0, +0] (tied) and [-0, -0] (one sign)
    outcome = adaptive("MAX_POOL2D_ADAPTIVE", x, "fp32", (1, 2), (1, 2))
    assert np.signbit(valid(outcome).reshape(-1)).tolist() == [True, True]
    graph = _max_graph(x)
    evaluator = Evaluator(graph, V11, V11.level("8K"))
    with spec_in_use(V11):
        evaluator.run({"x": x.astype(np.float32)})
        ctx = evaluator.context(graph.main, 0, evaluator.main_values)
        assert tied_zeros(ctx).reshape(-1).tolist() == [True, False]


def _max_graph(x: np.ndarray) -> Any:
    return single_operator_graph(
        "MAX_POOL2D_ADAPTIVE",
        [("x", x.shape, "fp32"), ("k", (2,), "shape"), ("s", (2,), "shape"), ("p", (4,), "shape")],
        [("y", (1, 1, 2, 1), "fp32")],
        {"nan_mode": "PROPAGATE"},
        constants={"k": np.array([1, 2]), "s": np.array([1, 2]), "p": np.zeros(4, np.int64)},
        spec=V11,
    )


# == the window rules (both operators) =================================================

GEOMETRY_ERRORS = [
    # (kernel, stride, pad, input shape, output shape, clause)
    ((0, 2), (1, 1), (0, 0, 0, 0), (1, 4, 4, 1), (1, 4, 3, 1), KERNEL_CLAUSE),
    ((2, 2), (1, 0), (0, 0, 0, 0), (1, 4, 4, 1), (1, 3, 3, 1), STRIDE_CLAUSE),
    ((2, 2), (1, 1), (0, -1, 0, 0), (1, 4, 4, 1), (1, 3, 3, 1), PAD_NEGATIVE_CLAUSE),
    ((2, 2), (1, 1), (0, 0, 0, 2), (1, 4, 4, 1), (1, 3, 5, 1), POOL_PAD_X_CLAUSE),
    ((2, 2), (1, 1), (2, 0, 0, 0), (1, 4, 4, 1), (1, 5, 3, 1), POOL_PAD_Y_CLAUSE),
    # (4 + 0 - 2) % 3 = 2: idiv_check's own rule
    (
        (2, 2),
        (3, 1),
        (0, 0, 0, 0),
        (1, 4, 4, 1),
        (1, 1, 3, 1),
        "input1 % input2 != 0 (idiv_check(IH + pad_top + pad_bottom - kernel_y, stride_y))",
    ),
    ((2, 2), (1, 1), (0, 0, 0, 0), (1, 4, 4, 1), (1, 2, 3, 1), POOL_OH_CLAUSE),
    ((2, 2), (1, 1), (0, 0, 0, 0), (1, 4, 4, 1), (1, 3, 4, 1), POOL_OW_CLAUSE),
    # a shape input of another length than declared ([2], [2], [4])
    ((2, 2, 1), (1, 1), (0, 0, 0, 0), (1, 4, 4, 1), (1, 3, 3, 1), INPUTS_CLAUSE),
    ((2, 2), (1,), (0, 0, 0, 0), (1, 4, 4, 1), (1, 3, 3, 1), INPUTS_CLAUSE),
    ((2, 2), (1, 1), (0, 0, 0), (1, 4, 4, 1), (1, 3, 3, 1), INPUTS_CLAUSE),
]


@pytest.mark.parametrize("op", ["AVG_POOL2D_ADAPTIVE", "MAX_POOL2D_ADAPTIVE"])
@pytest.mark.parametrize(("kernel", "stride", "pad", "shape", "out", "clause"), GEOMETRY_ERRORS)
def test_window_rules(
    op: str,
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    pad: tuple[int, ...],
    shape: tuple[int, ...],
    out: tuple[int, ...],
    clause: str,
) -> None:
    outcome = adaptive(op, np.zeros(shape), "i8", kernel, stride, pad, out_shape=out)
    assert_rule(outcome, "error", clause)


def test_shape_inputs_are_checked_before_the_zero_points() -> None:
    # The argument rule (a kernel of 3 values) comes before the pseudocode's first
    # ERROR_IF (input_zp 1 for i16).
    x = np.zeros((1, 2, 2, 1))
    outcome = adaptive(
        "AVG_POOL2D_ADAPTIVE", x, "i16", (2, 2, 2), input_zp=1, out_shape=(1, 1, 1, 1)
    )
    assert_rule(outcome, "error", INPUTS_CLAUSE, "kernel must be a shape of 2 values")


# == compliance ========================================================================


def test_precision_rules_are_the_pooling_operators() -> None:
    assert "AVG_POOL2D_ADAPTIVE" in DOT_PRODUCT_OPERATORS
    assert "MAX_POOL2D_ADAPTIVE" in EXACT_OPERATORS
    x = np.linspace(-1.0, 1.0, 12).reshape(1, 4, 3, 1)
    graph = single_operator_graph(
        "AVG_POOL2D_ADAPTIVE",
        [
            ("x", x.shape, "fp16"),
            ("iz", (1,), "fp16"),
            ("oz", (1,), "fp16"),
            ("k", (2,), "shape"),
            ("s", (2,), "shape"),
            ("p", (4,), "shape"),
        ],
        [("y", (1, 2, 3, 1), "fp16")],
        {"acc_type": "FP32"},
        constants={
            "iz": np.zeros(1, np.float16),
            "oz": np.zeros(1, np.float16),
            "k": np.array([3, 1]),
            "s": np.array([1, 1]),
            "p": np.zeros(4, np.int64),
        },
        spec=V11,
    )
    with spec_in_use(V11):
        exp = expect(graph, {"x": x.astype(np.float16)}, spec=V11)
    check = exp.checks["y"].descriptor
    # a dot product of KS = kernel_y * kernel_x = 3 terms with weights 1/3, fp32 acc_t
    assert check.mode is Mode.DOT_PRODUCT and "AVG_POOL2D_ADAPTIVE KS=3" in check.rule
    assert check.params.acc_dtype.name == "fp32"


# == ARGMAX's i64_t modes (EXT-INT64) ==================================================


def argmax(x: Any, in_t: str, out_t: str, axis: int = 1, nan_mode: str = "PROPAGATE") -> np.ndarray:
    x = np.asarray(x)
    out = x.shape[:axis] + x.shape[axis + 1 :]
    return valid(run("ARGMAX", [("x", x, in_t)], out, out_t, axis=axis, nan_mode=nan_mode))


def test_argmax_i64_output_is_int64() -> None:
    got = argmax([[1, 5, 2], [7, 7, -1]], "i8", "i64")
    # the first maximum: 5 at 1; 7 at 0 (the tie keeps the first)
    assert got.dtype == np.int64 and got.tolist() == [1, 0]


def test_argmax_i64_input_compares_every_bit() -> None:
    top = 2**63 - 1
    # 2**63 - 2 and 2**63 - 1 are the same fp64 value: a comparison through fp64 would
    # keep index 0; int64 sees 2**63 - 1 at index 1
    assert argmax([[top - 1, top]], "i64", "i64").tolist() == [1]
    # 2**53 + 1 > 2**53 (equal in fp64); the minimum of i64 never wins
    assert argmax([[2**53, 2**53 + 1, -(2**63)]], "i64", "i64").tolist() == [1]
    assert argmax([[-(2**63), -(2**63)]], "i64", "i64").tolist() == [0]


def test_argmax_float_input_with_i64_output() -> None:
    # nan_mode PROPAGATE: the first NaN (index 1); IGNORE: the largest number, 3 at 2
    row = [[1.0, NAN, 3.0]]
    assert argmax(row, "fp16", "i64").tolist() == [1]
    assert argmax(row, "fp16", "i64", nan_mode="IGNORE").tolist() == [2]


@pytest.mark.parametrize(
    "mode",
    [m.mode for m in V11.operator("AVG_POOL2D_ADAPTIVE").modes if m.dtype("in_out_t").is_float],
)
def test_avg_precision_rule_is_avg_pool2ds(mode: str) -> None:
    """The same descriptor (dot product, KS, acc_t, local_bound true) and the same
    per-element bound as AVG_POOL2D's on the same data, whatever 1.1's dot-product rule
    makes of the types."""
    m = V11.operator("AVG_POOL2D_ADAPTIVE").mode(mode)
    dt, acc = m.dtype("in_out_t"), m.dtype("acc_t")
    acc_type = {"fp16": "FP16", "fp32": "FP32"}[acc.name]
    x = np.linspace(-1.0, 1.0, 24).reshape(1, 4, 6, 1)
    zero = np.zeros(1)
    # kernel 3 x 2, stride 1 x 2, pad_top 1: OH = (4 + 1 - 3) + 1 = 3, OW = (6 - 2) / 2 + 1 = 3
    window = {"k": np.array([3, 2]), "s": np.array([1, 2]), "p": np.array([1, 0, 0, 0])}
    graphs = [
        single_operator_graph(
            "AVG_POOL2D",
            [("x", x.shape, dt.name), ("iz", (1,), dt.name), ("oz", (1,), dt.name)],
            [("y", (1, 3, 3, 1), dt.name)],
            {"kernel": (3, 2), "stride": (1, 2), "pad": (1, 0, 0, 0), "acc_type": acc_type},
            constants={"iz": zero, "oz": zero},
            spec=V11,
        ),
        single_operator_graph(
            "AVG_POOL2D_ADAPTIVE",
            [("x", x.shape, dt.name), ("iz", (1,), dt.name), ("oz", (1,), dt.name)]
            + [(n, v.shape, "shape") for n, v in window.items()],
            [("y", (1, 3, 3, 1), dt.name)],
            {"acc_type": acc_type},
            constants={"iz": zero, "oz": zero, **window},
            spec=V11,
        ),
    ]
    with spec_in_use(V11):
        checks = [expect(g, {"x": x.astype(dt.storage)}, spec=V11).checks["y"] for g in graphs]
    json = [c.descriptor.to_json() for c in checks]
    assert json[1].pop("rule").endswith("AVG_POOL2D_ADAPTIVE KS=6 S=-1")
    json[0].pop("rule")
    assert json[0] == json[1] and json[1]["params"]["ks"] == 6
    np.testing.assert_array_equal(checks[0].bound, checks[1].bound)

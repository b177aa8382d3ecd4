"""The block-scaled operators of TOSA 1.1 (reference/ops/block_scaled.py) and their
precision rules (reference/compliance/block_scaled.py), by hand."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from reference_helpers import assert_rule

from conformance import dtypes
from conformance.builder import single_operator_graph
from conformance.compliance_descriptor import BlockScalesParams, Mode, ScaledValuesParams
from conformance.spec import load_revision, spec_in_use
from reference import compliance, mx
from reference.arguments import INPUTS_CLAUSE, OUTPUTS_CLAUSE
from reference.compliance import block_scaled as bc
from reference.engine import evaluate, to_storage
from reference.expectations import NotDescribable, expect
from reference.ops import block_scaled as bso
from reference.outcome import Outcome

SPEC = load_revision("1.1-draft")
FP4, UE8M0, MXINT8 = dtypes.FP4E2M1, dtypes.FP8UE8M0, dtypes.MXINT8
B32 = "BLOCK_SIZE_32"
Operand = tuple[str, Any, str]


def graph(
    op: str,
    inputs: Sequence[Operand],
    outputs: Sequence[tuple[str, Sequence[int], str]],
    consts: Sequence[Operand] = (),
    **attrs: Any,
) -> Any:
    return single_operator_graph(
        op,
        [(n, np.shape(v), t) for n, v, t in [*inputs, *consts]],
        [(n, tuple(s), t) for n, s, t in outputs],
        attrs,
        constants={n: np.asarray(v) for n, v, _ in consts},
        spec=SPEC,
        strict=False,
    )


def run(
    op: str, inputs: Sequence[Operand], outputs: Any, consts: Sequence[Operand] = (), **attrs: Any
) -> Outcome:
    g = graph(op, inputs, outputs, consts, **attrs)
    return evaluate(g, {n: np.asarray(v) for n, v, _ in inputs}, spec=SPEC)


def fp4(values: Any) -> np.ndarray:
    return mx.encode(np.asarray(values, np.float64), FP4)


def scales(exponents: Any) -> np.ndarray:
    return mx.from_bits(np.asarray(exponents) + 127, UE8M0)


# -- CAST_TO_BLOCK_SCALED ------------------------------------------------------------


def test_cast_to_by_hand() -> None:
    x = np.zeros((1, 64), np.float32)
    x[0, :4] = [3.0, -1.0, 0.625, 0.125]  # block 0: max 3 -> scale 2**(floor(log2(3/7))+1) = 0.5
    x[0, 32] = 40.0  # block 1: 40/7 = 5.7 -> 2**3 = 8
    x[0, 33] = -20.0
    out = run(
        "CAST_TO_BLOCK_SCALED",
        [("x", x, "fp32")],
        [("v", (1, 64), "fp4e2m1"), ("s", (1, 2), "fp8ue8m0")],
        block_size=B32,
    )
    assert out.valid, str(out)
    np.testing.assert_array_equal(out.outputs["s"], [[0.5, 8.0]])
    v = out.outputs["v"]  # x / scale in fp64, before rounding to fp4e2m1
    np.testing.assert_array_equal(v[0, :4], [6.0, -2.0, 1.25, 0.25])
    np.testing.assert_array_equal(v[0, 32:34], [5.0, -2.5])
    # stored, ties to even: 1.25 -> 1.0, 0.25 -> 0, 5.0 -> 4, -2.5 -> -2
    stored = to_storage(v, FP4).astype(np.float64)
    np.testing.assert_array_equal(stored[0, [0, 1, 2, 3, 32, 33]], [6, -2, 1, 0, 4, -2])


def test_cast_to_special_blocks() -> None:
    x = np.zeros((1, 96), np.float32)
    x[0, 40] = np.nan  # block 1 holds a NaN: the NaN scale
    x[0, 64] = 1e-40  # block 2: a subnormal fp32, scale clipped at 2**-127
    out = run(
        "CAST_TO_BLOCK_SCALED",
        [("x", x, "fp32")],
        [("v", (1, 96), "mxint8"), ("s", (1, 3), "fp8ue8m0")],
        block_size=B32,
    )
    s = out.outputs["s"]
    assert s[0, 0] == 2.0**-127 and np.isnan(s[0, 1]) and s[0, 2] == 2.0**-127
    assert mx.to_bits(to_storage(s, UE8M0), UE8M0).tolist() == [[0x00, 0xFF, 0x00]]
    raw = out.outputs["v"]  # mxint8 comes back as its raw bytes
    assert raw.dtype == np.int8
    # 1e-40 / 2**-127 = 0.0170 -> raw round(1.09) = 1
    assert raw[0, 64] == 1 and raw[0, 0] == 0


@pytest.mark.parametrize(
    ("shape", "scale", "attrs", "clause"),
    [
        ((1, 48), (1, 1), {"block_size": B32}, bso.SHAPE_BLOCK_CLAUSE),
        ((1, 32), (1, 32), {"block_size": "BLOCK_SIZE_1"}, bso.BLOCK_SIZE_ONE_CLAUSE),
        ((1, 64), (1, 3), {"block_size": B32}, OUTPUTS_CLAUSE),
    ],
)
def test_cast_to_error_ifs(
    shape: tuple[int, ...], scale: tuple[int, ...], attrs: Any, clause: str
) -> None:
    out = run(
        "CAST_TO_BLOCK_SCALED",
        [("x", np.ones(shape, np.float32), "fp32")],
        [("v", shape, "fp4e2m1"), ("s", scale, "fp8ue8m0")],
        **attrs,
    )
    assert_rule(out, "error", clause)


# -- CAST_FROM_BLOCK_SCALED ----------------------------------------------------------


def test_cast_from_every_fp4_encoding_by_hand() -> None:
    data = mx.encodings(FP4).reshape(1, 16)
    data = np.concatenate([data, data, data, data], axis=1).reshape(2, 32)
    s = scales([[1], [-127]])  # 2 and 2**-127
    out = run(
        "CAST_FROM_BLOCK_SCALED",
        [("x", data, "fp4e2m1"), ("s", s, "fp8ue8m0")],
        [("y", (2, 32), "fp32")],
        block_size=B32,
    )
    y = out.outputs["y"]
    np.testing.assert_array_equal(y[0, :8], [0, 1, 2, 3, 4, 6, 8, 12])  # fp4 values * 2
    np.testing.assert_array_equal(y[1, :8], np.array(FP4_VALUES) * 2.0**-127)


FP4_VALUES = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def test_cast_from_nan_scale_and_mxint8_bounds() -> None:
    raw = np.zeros((1, 64), np.int8)
    raw[0, :2] = [-128, 127]
    raw[0, 32:34] = [-128, 127]
    s = mx.from_bits(np.array([[0xFE, 0xFF]]), UE8M0)  # 2**127 and NaN
    out = run(
        "CAST_FROM_BLOCK_SCALED",
        [("x", raw, "mxint8"), ("s", s, "fp8ue8m0")],
        [("y", (1, 64), "bf16")],
        block_size=B32,
    )
    y = out.outputs["y"]
    # -2 * 2**127 = -2**128, past bf16's range; 127/64 * 2**127; the NaN scale: NaN
    assert y[0, 0] == -(2.0**128) and y[0, 1] == 127 / 64 * 2.0**127
    assert np.all(np.isnan(y[0, 32:]))


@pytest.mark.parametrize(
    ("data", "scale", "bs", "clause"),
    [
        ((1, 40), (1, 1), B32, bso.SHAPE_BLOCK_CLAUSE),
        ((1, 64), (1, 1, 2), B32, bso.SCALE_RANK_CLAUSE),
        ((1, 32), (1, 32), "BLOCK_SIZE_1", bso.BLOCK_SIZE_ONE_CLAUSE),
        ((2, 64), (3, 2), B32, bso.SCALE_DIM_CLAUSE),
        ((2, 64), (2, 3), B32, bso.SCALE_INNER_CLAUSE),
    ],
)
def test_cast_from_error_ifs(
    data: tuple[int, ...], scale: tuple[int, ...], bs: str, clause: str
) -> None:
    out = run(
        "CAST_FROM_BLOCK_SCALED",
        [("x", fp4(np.ones(data)), "fp4e2m1"), ("s", scales(np.zeros(scale, int)), "fp8ue8m0")],
        [("y", data, "fp32")],
        block_size=bs,
    )
    assert_rule(out, "error", clause)


# -- MATMUL_T_BLOCK_SCALED -----------------------------------------------------------


def _matmul(a: Any, sa: Any, b: Any, sb: Any, out: Sequence[int], bs: str = B32) -> Outcome:
    return run(
        "MATMUL_T_BLOCK_SCALED",
        [("a", a, "fp4e2m1"), ("as", sa, "fp8ue8m0"), ("b", b, "fp4e2m1"), ("bs", sb, "fp8ue8m0")],
        [("y", out, "fp32")],
        block_size=bs,
    )


def test_matmul_t_by_hand() -> None:
    a = np.ones((1, 1, 64))
    a[0, 0, 32:] = 0.5
    b = np.full((1, 2, 64), 2.0)
    b[0, 1, :32] = -1.0
    # block 0 of a: 32 * 1.0 * 2.0 = 64, scales 2**1 * 2**0 -> 128
    # block 1: 32 * 0.5 * 2.0 = 32, scales 2**-1 * 2**2 -> 64; column 0: 192
    # column 1: block 0 is 32 * 1 * -1 = -32 * 2 = -64, block 1 32 * 2 = 64: 0
    out = _matmul(fp4(a), scales([[[1, -1]]]), fp4(b), scales([[[0, 2], [0, 2]]]), (1, 1, 2))
    np.testing.assert_array_equal(out.outputs["y"], [[[192.0, 0.0]]])


def test_matmul_t_b_broadcast_and_nan_scale() -> None:
    a = fp4(np.ones((2, 1, 32)))
    sa = scales(np.zeros((2, 1, 1), int))
    sa = mx.from_bits(np.array([[[0x7F]], [[0xFF]]]), UE8M0)  # batch 1's row: NaN scale
    b = fp4(np.full((1, 1, 32), 3.0))  # D = 1: every batch reads batch 0 of B
    out = _matmul(a, sa, b, scales([[[0]]]), (2, 1, 1))
    y = out.outputs["y"]
    assert y[0, 0, 0] == 96.0 and np.isnan(y[1, 0, 0])


@pytest.mark.parametrize(
    ("a", "sa", "b", "sb", "bs", "clause"),
    [
        ((1, 1, 40), (1, 1, 1), (1, 1, 40), (1, 1, 1), B32, bso.MATMUL_C_CLAUSE),
        ((1, 1, 32), (1, 1, 32), (1, 1, 32), (1, 1, 32), "BLOCK_SIZE_1", bso.BLOCK_SIZE_ONE_CLAUSE),
        ((2, 1, 32), (2, 1, 1), (3, 1, 32), (3, 1, 1), B32, bso.MATMUL_D_CLAUSE),
        ((1, 1, 64), (1, 1, 3), (1, 1, 64), (1, 1, 2), B32, INPUTS_CLAUSE),
    ],
)
def test_matmul_t_error_ifs(a: Any, sa: Any, b: Any, sb: Any, bs: str, clause: str) -> None:
    n, h = a[0], a[1]
    out = _matmul(
        fp4(np.ones(a)), scales(np.zeros(sa, int)), fp4(np.ones(b)), scales(np.zeros(sb, int)),
        (n, h, b[1]), bs,
    )  # fmt: skip
    assert_rule(out, "error", clause)


# -- CONV2D_BLOCK_SCALED -------------------------------------------------------------


def _conv(
    x: Any, xs: Any, w: Any, ws: Any, bias: Any, out: Sequence[int],
    pad: Sequence[int] = (0, 0, 0, 0), stride: Sequence[int] = (1, 1),
    dilation: Sequence[int] = (1, 1), bs: str = B32,
) -> Outcome:  # fmt: skip
    return run(
        "CONV2D_BLOCK_SCALED",
        [
            ("x", x, "fp4e2m1"),
            ("xs", xs, "fp8ue8m0"),
            ("w", w, "fp4e2m1"),
            ("ws", ws, "fp8ue8m0"),
            ("b", np.asarray(bias, np.float32), "fp32"),
        ],
        [("y", out, "fp32")],
        consts=[
            ("pad", list(pad), "shape"),
            ("stride", list(stride), "shape"),
            ("dilation", list(dilation), "shape"),
        ],
        block_size=bs,
    )


def test_conv2d_padding_and_scales_by_hand() -> None:
    x = fp4(np.ones((1, 2, 2, 32)))
    xs = scales([[[[0], [1]], [[0], [0]]]])  # the input at (0, 1) has scale 2
    w = fp4(np.ones((1, 2, 2, 32)))
    ws = scales([[[[0], [0]], [[0], [2]]]])  # the tap (1, 1) has scale 4
    out = _conv(x, xs, w, ws, [0.5], (1, 2, 2, 1), pad=(0, 1, 0, 1))
    y = out.outputs["y"][0, :, :, 0]
    # each block product is 32; output (0,0) reads taps (0,0) x1, (0,1) x2 (input scale),
    # (1,0) x1, (1,1) x4 (weight scale): 32 * (1 + 2 + 1 + 4) + 0.5 = 256.5
    # output (0,1): taps (0,0) at input (0,1) x2, (1,0) at input (1,1) x1, the others
    # in the padding: 32 * (2 + 1) + 0.5; (1,0): taps (0,0) and (0,1) at inputs (1,0)
    # and (1,1), both x1: 64.5; (1,1): tap (0,0) alone: 32.5
    np.testing.assert_array_equal(y, [[256.5, 96.5], [64.5, 32.5]])


def test_conv2d_nan_weight_scale_reaches_through_padding() -> None:
    x = fp4(np.ones((1, 1, 1, 32)))
    ws = mx.from_bits(np.array([[[[0x7F], [0xFF]]]]), UE8M0)  # tap (0, 1): NaN scale
    out = _conv(
        x,
        scales(np.zeros((1, 1, 1, 1), int)),
        fp4(np.ones((1, 1, 2, 32))),
        ws,
        [0.0],
        (1, 1, 1, 1),
        pad=(0, 0, 0, 1),
    )
    # the output's tap (0, 1) reads the padding: block_acc 0, times 1 * NaN
    assert np.isnan(out.outputs["y"][0, 0, 0, 0])


@pytest.mark.parametrize(
    ("change", "clause"),
    [
        ({"pad": (0, -1, 0, 0)}, bso.PAD_NEGATIVE_CLAUSE),
        ({"stride": (0, 1)}, bso.STRIDE_CLAUSE),
        ({"dilation": (1, 0)}, bso.DILATION_CLAUSE),
        ({"stride": (2, 1)}, bso.IDIV_CHECK_CLAUSE),  # IH - KH = 1, not a multiple of 2
        ({"out": (1, 3, 1, 1)}, bso.OH_CLAUSE),
        ({"out": (1, 2, 2, 1)}, bso.OW_CLAUSE),
        ({"bias": [0.0, 0.0]}, bso.CONV_BIAS_CLAUSE),
        ({"bs": "BLOCK_SIZE_1"}, bso.BLOCK_SIZE_ONE_CLAUSE),
    ],
)
def test_conv2d_error_ifs(change: dict[str, Any], clause: str) -> None:
    # input [1, 2, 1, 32], a 1x1 kernel: output [1, 2, 1, 1]
    args: dict[str, Any] = {"out": (1, 2, 1, 1), "bias": [0.0], **change}
    bs = args.pop("bs", B32)
    nb = 32 if bs == "BLOCK_SIZE_1" else 1
    out = _conv(
        fp4(np.ones((1, 2, 1, 32))), scales(np.zeros((1, 2, 1, nb), int)),
        fp4(np.ones((1, 1, 1, 32))), scales(np.zeros((1, 1, 1, nb), int)),
        args.pop("bias"), args.pop("out"), bs=bs, **args,
    )  # fmt: skip
    assert_rule(out, "error", clause)


def test_conv2d_ic_off_block() -> None:
    out = _conv(
        fp4(np.ones((1, 1, 1, 40))), scales(np.zeros((1, 1, 1, 1), int)),
        fp4(np.ones((1, 1, 1, 40))), scales(np.zeros((1, 1, 1, 1), int)), [0.0], (1, 1, 1, 1),
    )  # fmt: skip
    assert_rule(out, "error", bso.CONV_IC_CLAUSE)


# -- precision rules -------------------------------------------------------------------


def test_from_block_bound_by_hand() -> None:
    # x = 1.5 (fp4) * 2**-3 = 0.1875 to fp32: one fp32 ulp at 1.5 (2**-23) times the
    # scale 2**-3 is 2**-26; at least normal_min<fp32> = 2**-126
    err = bc.from_block_error_bound(
        np.array([0.1875, 0.0, np.nan]), np.array([2.0**-3, 1.0, 1.0]), dtypes.FP32
    )
    np.testing.assert_array_equal(err, [2.0**-26, 0.0, 0.0])
    # bf16 out, 6 * 2**127 overflows: only infinity passes
    ok = bc.check_from_block(
        np.array([np.inf, 3.4e38]),
        np.array([6 * 2.0**127] * 2),
        np.array([2.0**127] * 2),
        dtypes.BF16,
    )
    assert ok.tolist() == [True, False]


def test_cast_from_descriptor_is_the_from_block_rule() -> None:
    raw = mx.encodings(dtypes.FP6E3M2).reshape(2, 32)
    s = mx.from_bits(np.array([[0x7F], [0xFE]]), UE8M0)
    g = graph(
        "CAST_FROM_BLOCK_SCALED",
        [("x", raw, "fp6e3m2"), ("s", s, "fp8ue8m0")],
        [("y", (2, 32), "fp32")],
        block_size=B32,
    )
    with spec_in_use(SPEC):
        exp = expect(g, {"x": raw, "s": s}, spec=SPEC)
        ref = exp.outcome.outputs["y"]
        good = to_storage(ref, dtypes.FP32)
        assert exp.check("y", good).passed
        # 28 * 2**127 overflows fp32: the rule wants infinity there, not the largest
        bad = good.copy()
        bad[np.isinf(good)] = np.float32(np.finfo(np.float32).max)
        assert not exp.check("y", bad).passed
        scale = mx.scale_per_element(mx.decode(s, UE8M0))
        direct = bc.check_from_block(bad.astype(np.float64), ref, scale, dtypes.FP32)
        assert not direct.all() and direct[~np.isinf(good)].all()


def test_check_fp_bnd_caps_for_types_without_inf_and_nan() -> None:
    # fp4: a reference past 6 is met by the saturated 6; a NaN reference by anything
    assert bc.check_fp(np.array([6.0]), np.array([9.0]), 1, FP4).all()
    assert bc.check_fp(np.array([4.0]), np.array([np.nan]), 1, FP4).all()
    # mxint8: one ulp is 1/64 everywhere; -2.0 is its lowest value
    assert bc.check_fp(np.array([-2.0, 0.0]), np.array([-2.01, 1 / 64]), 1, MXINT8).all()
    assert not bc.check_fp(np.array([0.0]), np.array([2 / 64]), 1, MXINT8).any()


def test_check_scale_reading_and_nan_scale() -> None:
    x = np.zeros((1, 32))
    x[0, :3] = [6.9, 0.1, -3.0]  # block max 6.9 -> reference scale 1
    ref_scale = mx.block_scale(mx.block_max_abs(x), FP4)
    assert ref_scale[0, 0] == 1.0
    values = mx.round_value(x / ref_scale[0, 0], FP4)  # 6.9 -> 6, 0.1 -> 0
    r = bc.check_scale(ref_scale, values, ref_scale, x, FP4, 32)
    assert r.passed  # read with the arguments in place: 6 within 1 ulp (2) of 6.9
    # as written (the reference value where the test value goes): 6.9 is outside 6 +- 2
    # capped at 6, so a correct result would fail
    assert not bc.check_fp(np.array([6.9]), np.array([6.0]), 1, FP4).all()
    # twice the scale passes the scale's 1-ulp check (its ulp is the scale itself)
    double = bc.check_scale(ref_scale * 2, mx.round_value(x / 2, FP4), ref_scale, x, FP4, 32)
    assert double.passed
    four = bc.check_scale(ref_scale * 4, mx.round_value(x / 4, FP4), ref_scale, x, FP4, 32)
    assert not four.scale_ok.any()
    # a NaN reference scale accepts the whole block, whatever was returned
    nan = bc.check_scale(np.array([[4.0]]), np.full((1, 32), 6.0), np.array([[np.nan]]), x, FP4, 32)
    assert nan.passed
    # a NaN scale for a finite block fails (has_Inf<fp8ue8m0_t>() is true as written)
    assert not bc.check_scale(np.array([[np.nan]]), values, ref_scale, x, FP4, 32).passed


def _cast_to_graph(x: np.ndarray, out_t: str = "fp4e2m1") -> Any:
    blocks = x.shape[-1] // 32
    return graph(
        "CAST_TO_BLOCK_SCALED",
        [("x", x, "fp32")],
        [("v", x.shape, out_t), ("s", (*x.shape[:-1], blocks), "fp8ue8m0")],
        block_size=B32,
    )


def test_cast_to_is_described_as_two_outputs_judged_together() -> None:
    x = np.ones((1, 64), np.float32)
    with spec_in_use(SPEC):
        e = expect(_cast_to_graph(x), {"x": x}, spec=SPEC)
    v, s = e.checks["v"], e.checks["s"]
    assert v.descriptor.mode is Mode.SCALED_VALUES and s.descriptor.mode is Mode.BLOCK_SCALES
    assert v.descriptor.params == ScaledValuesParams("s", 32)
    assert s.descriptor.params == BlockScalesParams("v") and s.bound is None
    # the bound tensor is the input itself: the rule's ref_scale * ref_value
    assert v.bound is not None and v.bound.dtype == np.float64
    np.testing.assert_array_equal(v.bound, x.astype(np.float64))


def test_cast_to_mxint8_values_are_described_too() -> None:
    x = np.ones((1, 32), np.float32)
    with spec_in_use(SPEC):
        e = expect(_cast_to_graph(x, "mxint8"), {"x": x}, spec=SPEC)
    assert e.checks["v"].descriptor.mode is Mode.SCALED_VALUES
    assert e.checks["v"].descriptor.dtype is MXINT8


def test_cast_to_is_not_described_when_the_scales_are_no_graph_output() -> None:
    x = np.ones((1, 32), np.float32)
    g = _cast_to_graph(x)
    g.main.outputs.remove("s")
    with spec_in_use(SPEC), pytest.raises(NotDescribable, match="'s' is no output"):
        expect(g, {"x": x}, spec=SPEC)


def _out(e: Any, name: str) -> np.ndarray:
    return np.asarray(e.outcome.outputs[name])


def _judged(scale: float, values: Sequence[float]) -> compliance.Verdict:
    """The hand block of the brief: x = [6.9, 0.1, -3.0, 0 ...] (max 6.9, so the
    reference scale is 2**(floor(log2(6.9 / 7)) + 1) = 1), judged with the scale and the
    first three values given (the rest 0)."""
    x = np.zeros((1, 32), np.float32)
    x[0, :3] = [6.9, 0.1, -3.0]
    with spec_in_use(SPEC):
        e = expect(_cast_to_graph(x), {"x": x}, spec=SPEC)
    assert _out(e, "s")[0, 0] == 1.0
    got = np.zeros((1, 32))
    got[0, :3] = values
    ts = to_storage(np.array([[scale]]), UE8M0)
    partner = compliance.Partner("s", UE8M0, _out(e, "s"), ts)
    c = e.checks["v"]
    return compliance.check(
        _out(e, "v"), c.descriptor, to_storage(got, FP4), c.bound, partner=partner
    )


def test_check_scaled_values_by_hand() -> None:
    # scale 1: 6.9 -> 6 (ulp 2 in [4, 8): [4.9, 8.9] capped at 6), 0.1 -> 0 (ulp
    # max(0.0625, normal_min 1) / 2 = 0.5: [-0.4, 0.6]), -3 exact
    ok = _judged(1.0, [6.0, 0.0, -3.0])
    assert ok.passed and ok.scales is not None and ok.scales.passed
    assert ok.message.startswith("pass (32 values in 1 block, scales from s)")
    # 0.1 -> 1.0 is outside [-0.4, 0.6]: the value is named, with x / scale
    one = _judged(1.0, [6.0, 1.0, -3.0])
    assert not one.passed and one.scales is not None and one.scales.passed
    assert one.failing_count == 1 and one.failing_indices.tolist() == [[0, 1]]
    assert "value at [0, 1] 1, x / scale = 0.100000001 / 2**0 = 0.1" in one.message
    # a scale 2x too large passes the scale check (one ulp of fp8ue8m0 at 1 is 1:
    # [0, 2]), so the values are judged against x / 2: 6 is outside 6.9 / 2 = 3.45's
    # [2.45, 4.45] (ulp 1 in [2, 4))
    double = _judged(2.0, [6.0, 0.0, -3.0])
    assert not double.passed and double.scales is not None and double.scales.passed
    assert "value at [0, 0] 6, x / scale = 6.9000001 / 2**1 = 3.45" in double.message
    # ... and with the values rounded for that scale (3.45 -> 3, 0.05 -> 0, -1.5) the
    # rule accepts it
    assert _judged(2.0, [3.0, 0.0, -1.5]).passed
    # 4x too large: 4 is outside [0, 2]; the block's scale is named and the whole block fails
    four = _judged(4.0, [1.5, 0.0, -0.75])
    assert not four.passed and four.failing_count == 32
    assert four.scales is not None and (four.scales.passed, four.scales.failing_count) == (False, 1)
    assert "block [0, 0] scale 2**2 (s), reference 2**0: not within 1 ulp of fp8ue8m0" in (
        four.message
    )
    assert four.max_margin == np.inf


def test_check_scaled_values_failure_paths() -> None:
    x = np.ones((1, 32), np.float32)
    with spec_in_use(SPEC):
        e = expect(_cast_to_graph(x), {"x": x}, spec=SPEC)
    v, s = e.checks["v"], e.checks["s"]
    values = to_storage(_out(e, "v"), FP4)
    scales = to_storage(_out(e, "s"), UE8M0)
    with pytest.raises(ValueError, match="needs its scale output 's'"):
        compliance.check(_out(e, "v"), v.descriptor, values, v.bound)
    with pytest.raises(ValueError, match="judged with their values output 'v'"):
        compliance.check(_out(e, "s"), s.descriptor, scales)
    wrong = compliance.Partner("s", UE8M0, _out(e, "s"), np.concatenate([scales] * 2, 1))
    with pytest.raises(ValueError, match=r"s \(actual\) has shape \[1, 2\]; .* need \[1, 1\]"):
        compliance.check(_out(e, "v"), v.descriptor, values, v.bound, partner=wrong)
    partner = compliance.Partner("s", UE8M0, _out(e, "s"), scales)
    with pytest.raises(ValueError, match="judges one output"):
        compliance.check(_out(e, "s"), compliance.exact(UE8M0, "r"), scales, partner=partner)


def test_block_scaled_dot_products_take_the_relaxed_bound() -> None:
    a = fp4(np.ones((1, 1, 64)))
    g = graph(
        "MATMUL_T_BLOCK_SCALED",
        [
            ("a", a, "fp4e2m1"),
            ("as", scales([[[0, 0]]]), "fp8ue8m0"),
            ("b", a, "fp4e2m1"),
            ("bs", scales([[[0, 0]]]), "fp8ue8m0"),
        ],
        [("y", (1, 1, 1), "fp32")],
        block_size=B32,
    )
    inputs = {
        n: v
        for n, v in zip(g.main.inputs, [a, scales([[[0, 0]]]), a, scales([[[0, 0]]])], strict=True)
    }
    with spec_in_use(SPEC):
        exp = expect(g, inputs, spec=SPEC)
        check = exp.checks["y"]
        assert check.descriptor.params.ks == 64
        assert [t.name for t in check.descriptor.params.input_dtypes] == ["fp4e2m1", "fp4e2m1"]
        # the abs pass: max(|1|, normal_min 1) * 1 summed over 64 = 64
        np.testing.assert_array_equal(check.bound, [[[64.0]]])
        # ABS_BOUND 2 * max(64, 64 * 1024) = 131072 error units of 64 * 2**-24 = 2**-18:
        # 0.5 either way passes (1.0's 2 * ksb would allow 2**-11)
        y = exp.outcome.outputs["y"]
        assert exp.check("y", (y + 0.49).astype(np.float32)).passed
        assert not exp.check("y", (y + 0.51).astype(np.float32)).passed

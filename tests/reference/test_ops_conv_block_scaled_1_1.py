"""Reference evaluator, TOSA 1.1: the block-scaled (bs32_fp8ue8m0_*_t) modes of CONV2D,
CONV3D, TRANSPOSE_CONV2D and MATMUL_T.

A composite operand element is read as tensor_read<in_t, acc_t> reads it
(pseudocode/library/tensor_read.tosac): value and its block's scale, each cast to the
accumulator, multiplied with apply_mul_s<acc_t>, so the element rounds and overflows in
acc_t.  The block-size ERROR_IFs ask IC (MATMUL_T: C) to be a whole number of blocks.
Every expected value is worked out by hand in the comment beside it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from block_helpers import composite
from reference_helpers import assert_rule

from conformance import dtypes as D
from conformance.block_tensor import BlockScaled
from conformance.builder import single_operator_graph
from conformance.spec import load_revision, spec_in_use
from reference import mx
from reference.engine import evaluate
from reference.expectations import expect
from reference.ops.tensor_conv import block_clause
from reference.outcome import Outcome

SPEC = load_revision("1.1-draft")
FP4 = D.dtype("bs32_fp8ue8m0_fp4e2m1")
E4M3 = D.dtype("bs32_fp8ue8m0_fp8e4m3")
MX8 = D.dtype("bs32_fp8ue8m0_mxint8")

# fp4e2m1 codes 0..7 are +0, 0.5, 1, 1.5, 2, 3, 4, 6.
FP4_CODES = np.arange(8)
FP4_VALUES = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


@pytest.fixture(autouse=True)
def _the_1_1_spec() -> Iterator[None]:
    with spec_in_use(SPEC):
        yield


def plain(values: Any, dt: D.DType) -> np.ndarray:
    return np.asarray(values, dtype=np.float64).astype(dt.storage)


def zp_type(dt: D.DType) -> D.DType:
    """The zero point's type the 1.1 modes pair with an operand type: fp32_t for a
    composite, the operand's own otherwise."""
    return D.FP32 if dt.kind == "block" else dt


def graph_of(
    op: str,
    operands: list[tuple[str, Any, D.DType]],
    zps: list[tuple[str, D.DType, float]],
    out_shape: tuple[int, ...],
    out_t: D.DType,
    attrs: dict[str, Any],
    bias: np.ndarray | None = None,
) -> Any:
    """One operator: ``operands`` graph inputs, then the bias and the zero points (each
    [1] constants; 1.1 declares the zero points as inputs)."""
    inputs = [(n, v.shape, dt) for n, v, dt in operands]
    consts: dict[str, Any] = {}
    if bias is not None:
        inputs.append(("b", bias.shape, out_t))
        consts["b"] = bias
    for name, dt, value in zps:
        t = zp_type(dt)
        inputs.append((name, (1,), t))
        consts[name] = plain([value], t)
    return single_operator_graph(
        op, inputs, [("y", out_shape, out_t)], attrs, constants=consts, spec=SPEC, strict=False
    )


def conv2d(
    x: Any,
    w: Any,
    x_t: D.DType,
    w_t: D.DType,
    out_t: D.DType,
    acc: str,
    out_shape: tuple[int, ...],
    op: str = "CONV2D",
    weight_zp: float = 0.0,
) -> tuple[Any, Outcome]:
    """A 1x1 stride-1 CONV2D (or TRANSPOSE_CONV2D) with zero bias and zero points."""
    oc = w.shape[0]
    attrs: dict[str, Any] = {"acc_type": acc}
    if op == "TRANSPOSE_CONV2D":
        attrs |= {"out_pad": (0, 0, 0, 0), "stride": (1, 1)}
    else:
        attrs |= {"pad": (0, 0, 0, 0), "stride": (1, 1), "dilation": (1, 1)}
    graph = graph_of(
        op,
        [("x", x, x_t), ("w", w, w_t)],
        [("x_zp", x_t, 0.0), ("w_zp", w_t, weight_zp)],
        out_shape,
        out_t,
        attrs,
        plain(np.zeros(oc), out_t),
    )
    return graph, evaluate(graph, {"x": x, "w": w}, spec=SPEC)


def matmul_t(a: Any, b: Any, a_t: D.DType, b_t: D.DType, out_t: D.DType) -> Outcome:
    n, h, _ = a.shape
    graph = graph_of(
        "MATMUL_T",
        [("a", a, a_t), ("b", b, b_t)],
        [("a_zp", a_t, 0.0), ("b_zp", b_t, 0.0)],
        (n, h, b.shape[1]),
        out_t,
        {},
    )
    return evaluate(graph, {"a": a, "b": b}, spec=SPEC)


def out(outcome: Outcome) -> np.ndarray:
    assert outcome.kind == "valid", str(outcome)
    return np.asarray(outcome.outputs["y"], dtype=np.float64)


# -- arithmetic ------------------------------------------------------------------------


def test_1x1_conv_of_32_fp4_channels_at_scale_2_pow_3() -> None:
    # Input 1.0 in all 32 channels (fp8e4m3); the weight's one block holds the fp4
    # values 0, .5, 1, 1.5, 2, 3, 4, 6 four times (sum 18 each, 72 in all) at scale
    # 2**3: out = 72 * 8 = 576 (exact in fp16).  A second output channel with scale
    # 2**-1 gives 36.
    x = plain(np.ones((1, 1, 1, 32)), D.FP8E4M3)
    w = composite(FP4, np.tile(FP4_CODES, 8).reshape(2, 1, 1, 32), [[[[3]]], [[[-1]]]])
    _, o = conv2d(x, w, D.FP8E4M3, FP4, D.FP16, "FP32", (1, 1, 1, 2))
    assert out(o).reshape(-1).tolist() == [576.0, 36.0]


def test_each_block_takes_its_own_scale() -> None:
    # 64 channels: two blocks of the weight, 1.0 each (fp4 code 2), scales 2**0 and
    # 2**4; input 1.0: out = 32 * 1 + 32 * 16 = 544.  A kernel that took block 0's
    # scale for both would give 64, one that ignored the scales 64 as well.
    x = plain(np.ones((1, 1, 1, 64)), D.FP8E4M3)
    w = composite(FP4, np.full((1, 1, 1, 64), 2), [[[[0, 4]]]])
    _, o = conv2d(x, w, D.FP8E4M3, FP4, D.FP16, "FP32", (1, 1, 1, 1))
    assert out(o).reshape(-1).tolist() == [544.0]


def test_block_scaled_input_and_weight_in_transpose_conv2d() -> None:
    # TRANSPOSE_CONV2D 1x1 stride 1: out = sum_ic x * w.  Input: fp8e4m3 composite 2.0
    # at scale 2**-2 (0.5 per element); weight: fp4 1.5 (code 3) at scale 2**1 (3.0):
    # 32 * 0.5 * 3 = 48.
    x = composite(E4M3, np.full((1, 1, 1, 32), 2.0), [[[[-2]]]])
    w = composite(FP4, np.full((1, 1, 1, 32), 3), [[[[1]]]])
    _, o = conv2d(x, w, E4M3, FP4, D.FP32, "FP32", (1, 1, 1, 1), op="TRANSPOSE_CONV2D")
    assert out(o).reshape(-1).tolist() == [48.0]


def test_scale_times_value_overflows_fp32_to_infinity() -> None:
    # fp8e4m3 448 at scale 2**127: 448 * 2**127 = 1.75 * 2**135 > fp32's largest
    # (~2**128), so apply_mul_s<fp32_t> gives +inf and the output is +inf, though the
    # exact product (and any sum) is finite.  B = 1.0 (fp4 code 2) at scale 2**0.
    a_vals = np.zeros((1, 1, 32))
    a_vals[0, 0, 0] = 448.0
    a = composite(E4M3, a_vals, [[[127]]])
    b = composite(FP4, np.full((1, 1, 32), 2), [[[0]]])
    assert out(matmul_t(a, b, E4M3, FP4, D.FP32)).tolist() == [[[np.inf]]]
    # 1.0 at 2**127 is finite in fp32: the output is 2**127 exactly.
    a_vals[0, 0, 0] = 1.0
    a = composite(E4M3, a_vals, [[[127]]])
    assert out(matmul_t(a, b, E4M3, FP4, D.FP32)).tolist() == [[[2.0**127]]]


def test_scale_times_value_rounds_in_a_bf16_accumulator() -> None:
    # fp8e4m3's least subnormal 2**-9 at scale 2**-127 is 2**-136: an fp32 subnormal
    # (fp32 reaches 2**-149), but below half of bf16's least subnormal 2**-133, so in
    # bf16 the element reads as 0.  B = 1.0: out fp32 2**-136, out bf16 0.
    a_vals = np.zeros((1, 1, 32))
    a_vals[0, 0, 0] = 2.0**-9
    a = composite(E4M3, a_vals, [[[-127]]])
    b = composite(FP4, np.full((1, 1, 32), 2), [[[0]]])
    assert out(matmul_t(a, b, E4M3, FP4, D.FP32)).tolist() == [[[2.0**-136]]]
    assert out(matmul_t(a, b, E4M3, FP4, D.BF16)).tolist() == [[[0.0]]]


def test_mxint8_values_at_their_scale() -> None:
    # mxint8 raw 64 is 1.0, raw -128 is -2.0; A's block: one -2.0, the rest 0, scale
    # 2**5 (-64); B's block all 1.0 at 2**-3 (0.125): out = -64 * 0.125 = -8.
    a_vals = np.zeros((1, 1, 32), np.int8)
    a_vals[0, 0, 7] = -128
    a = BlockScaled.of(MX8, a_vals, mx.from_bits(np.full((1, 1, 1), 127 + 5), D.FP8UE8M0))
    b = BlockScaled.of(
        MX8, np.full((1, 1, 32), 64, np.int8), mx.from_bits(np.full((1, 1, 1), 124), D.FP8UE8M0)
    )
    assert out(matmul_t(a, b, MX8, MX8, D.FP32)).tolist() == [[[-8.0]]]


def test_nan_scale_makes_its_block_nan() -> None:
    # Output channel 0's weight block has the NaN scale (0xFF): every element reads
    # NaN, so its output is NaN however small the values (here 0: NaN * 0 is NaN).
    # Channel 1 (scale 2**0, fp4 0.5 each) gives 32 * 0.5 = 16.
    x = plain(np.ones((1, 1, 1, 32)), D.FP8E4M3)
    codes = np.stack([np.zeros(32, int), np.ones(32, int)]).reshape(2, 1, 1, 32)
    w = composite(FP4, codes, [[[[None]]], [[[0]]]])
    _, o = conv2d(x, w, D.FP8E4M3, FP4, D.FP16, "FP32", (1, 1, 1, 2))
    y = out(o).reshape(-1)
    assert np.isnan(y[0]) and y[1] == 16.0


def test_conv3d_block_scaled_weight() -> None:
    # CONV3D 1x1x1, input 2.0 (fp8e4m3) in 32 channels, weight fp4 1.0 at 2**2: 32 * 2 *
    # 4 = 256.
    x = plain(np.full((1, 1, 1, 1, 32), 2.0), D.FP8E4M3)
    w = composite(FP4, np.full((1, 1, 1, 1, 32), 2), [[[[[2]]]]])
    graph = graph_of(
        "CONV3D",
        [("x", x, D.FP8E4M3), ("w", w, FP4)],
        [("x_zp", D.FP8E4M3, 0.0), ("w_zp", FP4, 0.0)],
        (1, 1, 1, 1, 1),
        D.FP16,
        {"pad": (0,) * 6, "stride": (1, 1, 1), "dilation": (1, 1, 1), "acc_type": "FP32"},
        plain([0.0], D.FP16),
    )
    assert out(evaluate(graph, {"x": x, "w": w}, spec=SPEC)).reshape(-1).tolist() == [256.0]


# -- ERROR_IFs -------------------------------------------------------------------------


def test_ic_not_a_whole_number_of_blocks_is_an_error() -> None:
    # IC = 33: the weight's scales cover two blocks (the second partial), and the
    # weight_t rule fires (in_t is not block-scaled).
    x = plain(np.ones((1, 1, 1, 33)), D.FP8E4M3)
    w = composite(FP4, np.full((1, 1, 1, 33), 2), [[[[0, 0]]]])
    _, o = conv2d(x, w, D.FP8E4M3, FP4, D.FP16, "FP32", (1, 1, 1, 1))
    assert_rule(o, "error", block_clause("weight_t", "IC"))


def test_matmul_t_c_off_block_names_the_first_block_scaled_operand() -> None:
    # C = 40, both composite: A_t's rule is checked first.
    a = composite(E4M3, np.ones((1, 1, 40)), [[[0, 0]]])
    b = composite(FP4, np.full((1, 1, 40), 2), [[[0, 0]]])
    assert_rule(matmul_t(a, b, E4M3, FP4, D.FP32), "error", block_clause("A_t", "C"))


def test_nonzero_zero_point_of_a_block_scaled_weight_is_an_error() -> None:
    # weight_zp_t is fp32_t for a composite weight; !is_same<weight_t,i8_t>() holds.
    x = plain(np.ones((1, 1, 1, 32)), D.FP8E4M3)
    w = composite(FP4, np.full((1, 1, 1, 32), 2), [[[[0]]]])
    _, o = conv2d(x, w, D.FP8E4M3, FP4, D.FP16, "FP32", (1, 1, 1, 1), weight_zp=1.0)
    assert_rule(o, "error", "!is_same<weight_t,i8_t>() && weight_zp != 0")


# -- the accuracy bound ------------------------------------------------------------------


def test_abs_pass_reads_scale_times_value() -> None:
    # The dot-product bound of the 1x1 conv above is the abs pass: sum |x| * |w| =
    # 72 * 8 = 576 for channel 0, where |w| = |scale * value|, plus the zero bias read
    # as at least normal_min<fp16_t> = 2**-14 (1.1's typed floor): 576 + 2**-14.  The
    # relaxed row applies (an fp4 weight with an fp32 accumulator).
    x = plain(np.ones((1, 1, 1, 32)), D.FP8E4M3)
    w = composite(FP4, np.tile(FP4_CODES, 4).reshape(1, 1, 1, 32), [[[[3]]]])
    graph, _ = conv2d(x, w, D.FP8E4M3, FP4, D.FP16, "FP32", (1, 1, 1, 1))
    e = expect(graph, {"x": x, "w": w}, spec=SPEC)
    check = e.checks["y"]
    assert check.bound is not None and check.bound.reshape(-1).tolist() == [576.0 + 2.0**-14]
    params = check.descriptor.params
    assert [t.name for t in params.input_dtypes] == ["fp8e4m3", FP4.name]  # type: ignore[union-attr]

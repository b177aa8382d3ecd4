"""The dot-product recipes (convolutions, FULLY_CONNECTED, MATMUL) draw what their
docstrings promise."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance import dtypes
from conformance.spec import load_spec
from strategies.draw import draw_examples
from strategies.recipes.conv_geometry import Axis, conv_axis, transpose_axis
from strategies.recipes.tensor_conv import ACC_NAMES
from strategies.valid import valid_cases

SPEC = load_spec()
LEVEL = SPEC.level("8K")
DOT_OPS = [
    "CONV2D",
    "CONV3D",
    "DEPTHWISE_CONV2D",
    "TRANSPOSE_CONV2D",
    "FULLY_CONNECTED",
    "MATMUL",
]
ACC_OPS = DOT_OPS[:4]
caps = st.integers(1, 64)


@st.composite
def conv_axes(
    draw: st.DrawFn, k: int, room: int, out_min: int, out: int, stride: int, max_k: int
) -> Axis:
    return conv_axis(draw, k, room, out_min, out, stride, max_k, "axis")


@st.composite
def transpose_axes(
    draw: st.DrawFn, k: int, room: int, out_min: int, out: int, stride: int, max_k: int
) -> Axis:
    return transpose_axis(draw, k, room, out_min, out, stride, max_k, "axis")


@settings(max_examples=300, deadline=None)
@given(st.data(), caps, caps, caps, caps, caps, st.integers(1, 16))
def test_conv_axis_meets_every_rule(
    data: st.DataObject, k: int, room: int, out_min: int, out_cap: int, stride_cap: int, max_k: int
) -> None:
    k = min(k, max_k)
    a = data.draw(conv_axes(k, room, out_min, out_cap, stride_cap, max_k))
    assert 1 <= a.size_in <= room and 1 <= a.size_out <= out_cap
    assert a.kernel == k and 1 <= a.stride <= stride_cap
    assert a.dilation >= 1 and a.dilation * a.kernel <= max(max_k, a.kernel)
    assert 0 <= a.pad_before <= max_k and 0 <= a.pad_after <= max_k
    numerator = a.size_in - 1 + a.pad_before + a.pad_after - (a.kernel - 1) * a.dilation
    assert numerator >= 0 and numerator % a.stride == 0  # idiv_check divides evenly
    assert a.size_out == numerator // a.stride + 1
    # The least output size is met whenever the room can hold it with stride 1.
    if out_min <= min(room, out_cap) and k <= max_k // 2:
        assert a.size_out >= out_min


@settings(max_examples=300, deadline=None)
@given(st.data(), caps, caps, caps, caps, caps, st.integers(1, 16))
def test_transpose_axis_meets_every_rule(
    data: st.DataObject, k: int, room: int, out_min: int, out_cap: int, stride_cap: int, max_k: int
) -> None:
    k = min(k, max_k)
    a = data.draw(transpose_axes(k, room, out_min, out_cap, stride_cap, max_k))
    assert 1 <= a.size_in <= room and 1 <= a.size_out <= out_cap
    assert 1 <= a.kernel <= k and 1 <= a.stride <= stride_cap
    assert a.pad_before > -a.kernel and a.pad_after > -a.kernel
    assert a.pad_before <= max_k and a.pad_after <= max_k
    want = (a.size_in - 1) * a.stride + a.pad_before + a.pad_after + a.kernel
    assert a.size_out == want


@pytest.mark.parametrize("op", ACC_OPS)
def test_acc_type_names_the_mode_accumulator(op: str) -> None:
    for m in SPEC.operator(op).modes:
        for case in draw_examples(valid_cases(SPEC, op, m.mode, LEVEL), 3, 5):
            attrs = case.graph.main.operators[0].attributes
            assert attrs["acc_type"] == ACC_NAMES[m.dtype("acc_t")]


@pytest.mark.parametrize("op", DOT_OPS)
def test_zero_points_only_for_i8(op: str) -> None:
    zps = ("A_zp", "B_zp") if op == "MATMUL" else ("input_zp", "weight_zp")
    types = ("in_t", "in_t") if op == "MATMUL" else ("in_t", "weight_t")
    for m in SPEC.operator(op).modes:
        for case in draw_examples(valid_cases(SPEC, op, m.mode, LEVEL), 4, 6):
            attrs = case.graph.main.operators[0].attributes
            for zp, var in zip(zps, types, strict=True):
                if m.dtype(var) is not dtypes.I8:
                    assert attrs[zp] == 0


@pytest.mark.parametrize("op", ["CONV2D", "FULLY_CONNECTED", "DEPTHWISE_CONV2D"])
def test_i4_weights_stay_in_range(op: str) -> None:
    mode = "signed 8x4 with int32 accumulate"
    for case in draw_examples(valid_cases(SPEC, op, mode, LEVEL), 8, 7):
        main = case.graph.main
        w = case.inputs.get("weight")
        if w is None:
            w = main.tensors["weight"].data
        assert main.tensors["weight"].dtype is dtypes.I4
        assert np.all((np.asarray(w) >= -7) & (np.asarray(w) <= 7))

"""The ARGMAX, pooling and FFT recipes draw what their docstrings promise."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.spec import load_spec
from reference.compliance import MIN_DOT_PRODUCTS
from strategies.draw import draw_examples
from strategies.recipes.tensor_pool_fft import ACC_NAMES, pool_axis
from strategies.valid import valid_cases

SPEC = load_spec()
LEVEL = SPEC.level("8K")


@settings(max_examples=300, deadline=None)
@given(st.data(), st.integers(1, 64), st.integers(1, 64), st.integers(1, 64), st.booleans())
def test_pool_axis_meets_every_rule(
    data: st.DataObject, room: int, kernel_cap: int, stride_cap: int, padded: bool
) -> None:
    a = data.draw(pool_axis(room, kernel_cap, stride_cap, padded, "axis"))
    assert 1 <= a.size <= room
    assert 1 <= a.kernel <= kernel_cap and 1 <= a.stride <= stride_cap
    assert 0 <= a.pad_before < a.kernel and 0 <= a.pad_after < a.kernel
    span = a.size + a.pad_before + a.pad_after - a.kernel
    assert span >= 0 and span % a.stride == 0  # idiv_check divides evenly
    assert a.out == span // a.stride + 1 >= 1


@pytest.mark.parametrize("mode", ["fp16", "bf16", "fp8e4m3", "fp32"])
def test_argmax_nan_only_last_along_the_axis(mode: str) -> None:
    for case in draw_examples(valid_cases(SPEC, "ARGMAX", mode, LEVEL), 40, 3):
        axis = case.graph.main.operators[0].attributes["axis"]
        (x,) = case.inputs.values()
        nan = np.isnan(np.moveaxis(x.astype(np.float64), axis, -1))
        assert not nan[..., :-1].any()


@pytest.mark.parametrize(
    ("op", "mode"),
    [
        ("AVG_POOL2D", "fp16 with fp32 accumulate"),
        ("AVG_POOL2D", "fp8e5m2 with fp16 accumulate"),
        ("FFT2D", "fp32"),
        ("RFFT2D", "fp32"),
    ],
)
@pytest.mark.parametrize("data_set", [3, 4, 5])
def test_statistical_sets_have_enough_outputs(op: str, mode: str, data_set: int) -> None:
    cases = draw_examples(valid_cases(SPEC, op, mode, LEVEL, data_set=data_set), 5, 4)
    assert cases
    for case in cases:
        assert case.data_set == data_set
        main = case.graph.main
        for name in main.outputs:
            assert math.prod(main.tensors[name].shape) >= MIN_DOT_PRODUCTS
        for name in main.inputs:
            assert math.prod(main.tensors[name].shape) <= 4096


@pytest.mark.parametrize("mode", [m.mode for m in SPEC.operator("AVG_POOL2D").modes])
def test_avg_pool_acc_type_names_the_mode_accumulator(mode: str) -> None:
    m = SPEC.operator("AVG_POOL2D").mode(mode)
    acc, in_out = m.dtype("acc_t"), m.dtype("in_out_t")
    for case in draw_examples(valid_cases(SPEC, "AVG_POOL2D", mode, LEVEL), 5, 5):
        attrs = case.graph.main.operators[0].attributes
        assert attrs["acc_type"] == ACC_NAMES[acc]
        if not (in_out.is_int and in_out.bits == 8):  # zero points only for i8
            assert attrs["input_zp"] == 0 and attrs["output_zp"] == 0

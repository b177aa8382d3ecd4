"""The ARGMAX, pooling and FFT recipes draw what their docstrings promise."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.spec import load_spec
from strategies.draw import draw_examples
from strategies.recipes.pool_geometry import Axis, dot_axis, pool_axis
from strategies.recipes.tensor_pool_fft import ACC_NAMES
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


@st.composite
def dot_axes(draw: st.DrawFn, k: int, room: int, out_min: int, stride_cap: int) -> Axis:
    return dot_axis(draw, k, room, out_min, stride_cap, "axis")


@settings(max_examples=300, deadline=None)
@given(st.data(), st.integers(1, 64), st.integers(1, 64), st.integers(1, 64), st.integers(1, 64))
def test_dot_axis_meets_every_rule_and_the_least_outputs(
    data: st.DataObject, k: int, room: int, out_min: int, stride_cap: int
) -> None:
    a = data.draw(dot_axes(k, room, out_min, stride_cap))
    assert a.kernel == k and 1 <= a.size <= room and 1 <= a.stride <= stride_cap
    assert 0 <= a.pad_before < k and 0 <= a.pad_after < k
    span = a.size + a.pad_before + a.pad_after - a.kernel
    assert span >= 0 and span % a.stride == 0
    assert a.out == span // a.stride + 1
    # out_min outputs fit whenever the room holds them at stride 1 with 'same' pads:
    # out_min <= room, and the pads (each below k) can make up k - 1.
    if out_min <= room:
        assert a.out >= out_min


@pytest.mark.parametrize("mode", ["fp16", "bf16", "fp8e4m3", "fp32"])
def test_argmax_rows_hold_no_nan_one_nan_or_only_nan(mode: str) -> None:
    # The prose settles a single NaN (its index) and an all-NaN row (the last index);
    # several NaNs among numbers is the case the spec leaves open (docs/compliance.md,
    # readings: argmax-nan), so no vector has it.  And the single NaN appears at the
    # first, a middle and the last place of a row somewhere in the draws.
    seen = set()
    for case in draw_examples(valid_cases(SPEC, "ARGMAX", mode, LEVEL), 40, 3):
        axis = case.graph.main.operators[0].attributes["axis"]
        (x,) = case.inputs.values()
        nan = np.isnan(np.moveaxis(x.astype(np.float64), axis, -1))
        rows = nan.reshape(-1, nan.shape[-1])
        count = rows.sum(axis=1)
        assert np.all((count <= 1) | (count == rows.shape[1])), "several NaN among numbers"
        n = rows.shape[1]
        single = rows[count == 1]
        if n >= 3 and single.size:
            at = np.argmax(single, axis=1)
            seen |= {"first" for _ in at[at == 0][:1]} | {"last" for _ in at[at == n - 1][:1]}
            seen |= {"middle" for _ in at[(at > 0) & (at < n - 1)][:1]}
    assert seen == {"first", "middle", "last"}


@pytest.mark.parametrize("mode", [m.mode for m in SPEC.operator("AVG_POOL2D").modes])
def test_avg_pool_acc_type_names_the_mode_accumulator(mode: str) -> None:
    m = SPEC.operator("AVG_POOL2D").mode(mode)
    acc, in_out = m.dtype("acc_t"), m.dtype("in_out_t")
    for case in draw_examples(valid_cases(SPEC, "AVG_POOL2D", mode, LEVEL), 5, 5):
        attrs = case.graph.main.operators[0].attributes
        assert attrs["acc_type"] == ACC_NAMES[acc]
        if not (in_out.is_int and in_out.bits == 8):  # zero points only for i8
            assert attrs["input_zp"] == 0 and attrs["output_zp"] == 0

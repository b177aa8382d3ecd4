"""Block-scaled composite tensors (TOSA 1.1 bs32_*) in the graph IR: the (values,
scales) pair, its shapes, and constants of such a type in a Tensor and the builder."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from conformance import dtypes
from conformance.block_tensor import (
    BlockScaled,
    arrays,
    is_block_scaled,
    scale_shape,
    scale_type,
    value_type,
)
from conformance.builder import GraphBuilder, GraphError
from conformance.graph import Tensor
from conformance.spec import load_revision

SPEC = load_revision("1.1-draft")
FP4 = dtypes.dtype("bs32_fp8ue8m0_fp4e2m1")
MX8 = dtypes.dtype("bs32_fp8ue8m0_mxint8")


def fp4_pair(values: list[float], scales: list[float]) -> BlockScaled:
    return BlockScaled.of(FP4, np.array([values], np.float32), np.array([scales], np.float32))


def test_parts_of_every_composite() -> None:
    assert [value_type(d).name for d in dtypes.BLOCK_SCALED] == [
        "fp8e4m3", "fp8e5m2", "fp6e3m2", "fp6e2m3", "fp4e2m1", "mxint8",
    ]  # fmt: skip
    assert {scale_type(d) for d in dtypes.BLOCK_SCALED} == {dtypes.FP8UE8M0}
    assert all(is_block_scaled(d) for d in dtypes.BLOCK_SCALED)
    assert not is_block_scaled(dtypes.FP4E2M1)
    with pytest.raises(TypeError, match="not a block-scaled type"):
        value_type(dtypes.FP32)


def test_scale_shape_counts_blocks_of_the_innermost_dimension() -> None:
    assert scale_shape((3, 64), 32) == (3, 2)  # 64 / 32 = 2 blocks a row
    assert scale_shape((2, 5, 32), 32) == (2, 5, 1)
    # what a must-fail graph may hold: a partial last block has a scale, rank 0 one
    assert scale_shape((4, 33), 32) == (4, 2)  # ceil(33 / 32) = 2
    assert scale_shape((), 32) == ()


def test_a_pair_checks_its_parts() -> None:
    pair = fp4_pair([1.0] * 64, [2.0**-127, 2.0**127])
    assert pair.shape == (1, 64) and pair.values.dtype == ml_dtypes.float4_e2m1fn
    assert pair.scales.dtype == ml_dtypes.float8_e8m0fnu
    with pytest.raises(ValueError, match=r"scales of shape \[1, 2\], got \[1, 1\]"):
        fp4_pair([1.0] * 64, [1.0])
    with pytest.raises(ValueError, match="not fp4e2m1 values"):
        fp4_pair([5.0] * 64, [1.0, 1.0])  # 5 is no fp4e2m1 value (4, then 6)
    with pytest.raises(ValueError, match="must be held in"):
        BlockScaled(FP4, np.zeros((1, 32), np.float32), np.ones((1, 1), ml_dtypes.float8_e8m0fnu))


def test_element_scales_spread_each_block() -> None:
    pair = fp4_pair([0.5] * 64, [4.0, 0.25])
    per = pair.element_scales().astype(np.float64)
    assert per.shape == (1, 64)
    assert set(per[0, :32]) == {4.0} and set(per[0, 32:]) == {0.25}


def test_from_element_scales_groups_them_back_or_refuses() -> None:
    pair = fp4_pair([1.0] * 64, [4.0, 0.25])
    back = BlockScaled.from_element_scales(FP4, pair.values, pair.element_scales())
    assert back.same(pair)
    mixed = pair.element_scales().copy()
    mixed[0, 5] = np.float32(8.0).astype(mixed.dtype)  # block 0 holds 4.0 and 8.0
    with pytest.raises(ValueError, match="carry different scales"):
        BlockScaled.from_element_scales(FP4, pair.values, mixed)


def test_same_compares_bits_nan_scales_included() -> None:
    nan = fp4_pair([1.0] * 32, [float("nan")])
    assert nan.same(nan.copy())
    assert not nan.same(fp4_pair([1.0] * 32, [1.0]))
    assert not fp4_pair([0.0] * 32, [1.0]).same(fp4_pair([-0.0] * 32, [1.0]))


def test_mxint8_values_are_codes() -> None:
    pair = BlockScaled.of(MX8, np.array([-128, 127] * 16, np.int8), np.array([1.0]))
    assert pair.values.dtype == np.int8 and pair.scales.shape == (1,)


def test_arrays_refuses_a_pair() -> None:
    assert list(arrays({"a": np.zeros(2)})) == ["a"]
    with pytest.raises(TypeError, match="'b' is block-scaled"):
        arrays({"b": fp4_pair([1.0] * 32, [1.0])})


def test_tensor_constant_pairs_data_and_scale_data() -> None:
    pair = fp4_pair([1.0] * 32, [2.0])
    t = Tensor("c", (1, 32), FP4)
    assert t.constant() is None
    t.set_constant(pair)
    assert t.data is pair.values and t.scale_data is pair.scales
    got = t.constant()
    assert isinstance(got, BlockScaled) and got.same(pair)
    t.scale_data = None
    with pytest.raises(ValueError, match="data but no scale_data"):
        t.constant()
    plain = Tensor("p", (2,), dtypes.FP32, np.zeros(2, np.float32), scale_data=np.ones(1))
    with pytest.raises(ValueError, match="has scale_data"):
        plain.constant()


def test_builder_takes_a_pair_for_a_composite_constant_only() -> None:
    block = GraphBuilder(SPEC).block()
    block.tensor("c", (1, 32), FP4, data=fp4_pair([1.0] * 32, [2.0]))
    assert block.block.tensors["c"].scale_data is not None
    with pytest.raises(GraphError, match="data is an array"):
        block.tensor("d", (1, 32), FP4, data=np.zeros((1, 32), np.float32))
    with pytest.raises(GraphError, match="data is bs32_fp8ue8m0_fp4e2m1"):
        block.tensor("e", (1, 32), dtypes.FP32, data=fp4_pair([1.0] * 32, [2.0]))
    with pytest.raises(GraphError, match=r"data shape \[1, 32\] != declared \[1, 64\]"):
        block.tensor("f", (1, 64), FP4, data=fp4_pair([1.0] * 32, [2.0]))

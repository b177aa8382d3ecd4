"""CaseSpec's tensor editors and the tensor helpers beside them (strategies/case.py),
which breakers and recipes share."""

import numpy as np
import pytest

from conformance import dtypes
from strategies.case import CaseSpec, TensorDraw, converted, resized, shape_tensor


def _spec() -> CaseSpec:
    x = TensorDraw("input1", (2, 3), dtypes.I8, np.zeros((2, 3), np.int8))
    return CaseSpec("ABS", "signed 8", [x], [TensorDraw("output", (2, 3), dtypes.I8)])


def test_tensor_finds_inputs_and_outputs() -> None:
    spec = _spec()
    assert spec.tensor("input1") is spec.inputs[0]
    assert spec.tensor("output") is spec.outputs[0]
    with pytest.raises(KeyError, match="ABS case has no tensor 'weight'"):
        spec.tensor("weight")


def test_replace_tensor_copies_and_keeps_the_original() -> None:
    spec = _spec()
    before = spec.outputs[0]
    spec.replace_tensor("output", shape=(3, 2))
    assert spec.outputs[0].shape == (3, 2) and before.shape == (2, 3)
    assert spec.outputs[0].dtype is dtypes.I8  # other fields kept
    with pytest.raises(KeyError, match="no tensor 'bias'"):
        spec.replace_tensor("bias", shape=(1,))


def test_reshape_tensor_cycles_the_values() -> None:
    spec = _spec()
    spec.inputs[0].values = np.arange(6, dtype=np.int8).reshape(2, 3)
    spec.reshape_tensor("input1", (4, 2))
    t = spec.tensor("input1")
    assert t.shape == (4, 2) and t.values is not None and t.values.dtype == np.int8
    assert t.values.reshape(-1).tolist() == [0, 1, 2, 3, 4, 5, 0, 1]
    spec.reshape_tensor("output", ())  # an output: no values to cycle
    assert spec.outputs[0].shape == () and spec.outputs[0].values is None


def test_retype_tensor_converts_into_the_new_type() -> None:
    spec = _spec()
    spec.inputs[0].values = np.array([[-128, 0, 127], [1, -1, 5]], np.int8)
    spec.retype_tensor("input1", dtypes.FP32)
    t = spec.tensor("input1")
    assert t.dtype is dtypes.FP32 and t.values is not None and t.values.dtype == np.float32
    assert t.values.tolist() == [[-128.0, 0.0, 127.0], [1.0, -1.0, 5.0]]


def test_set_shape_input_takes_the_length_of_its_values() -> None:
    spec = _spec()
    spec.inputs.append(shape_tensor("shape", [2, 3]))
    spec.set_shape_input("shape", [6, 1, 1])
    t = spec.tensor("shape")
    assert t.shape == (3,) and t.dtype is dtypes.SHAPE and t.const
    assert t.values is not None and t.values.tolist() == [6, 1, 1]


def test_resized_and_converted() -> None:
    assert resized(None, (2,)) is None
    assert resized(np.array([1, 2, 3]), (2, 2)).tolist() == [[1, 2], [3, 1]]  # type: ignore[union-attr]
    assert converted(None, dtypes.I8) is None
    floats = np.array([300.0, -300.0, np.nan, 1.5])
    assert converted(floats, dtypes.I8).tolist() == [127, -128, 0, 1]  # type: ignore[union-attr]
    assert converted(np.array([2**40], np.int64), dtypes.I32).tolist() == [2**31 - 1]  # type: ignore[union-attr]
    assert converted(np.array([0.0, 2.0]), dtypes.BOOL).tolist() == [False, True]  # type: ignore[union-attr]

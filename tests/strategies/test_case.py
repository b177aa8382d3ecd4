"""CaseSpec's tensor editors (strategies/case.py), which breakers and recipes share."""

import numpy as np
import pytest

from conformance import dtypes
from strategies.case import CaseSpec, TensorDraw


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

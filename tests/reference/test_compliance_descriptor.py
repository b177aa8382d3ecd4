"""Descriptors: the operator tables, factories, JSON round trips, and the errors bad
descriptors and bad check() inputs give."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conformance.dtypes import BF16, BOOL, FP16, FP32, I8, I32
from reference.compliance import (
    ULP_OPERATORS,
    AbsErrorParams,
    ComplianceDescriptor,
    Magnitude,
    Mode,
    UlpParams,
    abs_error_for,
    check,
    comparison,
    dot_product,
    exact,
    for_operator,
    reduce_product,
    resize,
    ulp,
)


def test_ulp_table_matches_the_precision_table() -> None:
    assert ULP_OPERATORS == {
        "ADD": 0.5,
        "SUB": 0.5,
        "MUL": 0.5,
        "CEIL": 0.5,
        "FLOOR": 0.5,
        "CAST": 0.5,
        "RECIPROCAL": 1.0,
        "RSQRT": 2.0,
        "LOG": 5.0,
        "ERF": 5.0,
    }


@pytest.mark.parametrize(
    ("op", "dt", "mode"),
    [
        ("RECIPROCAL", FP32, Mode.ULP),
        ("CLAMP", FP16, Mode.EXACT_NAN),
        ("ARGMAX", I32, Mode.EXACT),
        ("ADD", I8, Mode.EXACT),
        ("GREATER", FP32, Mode.EXACT),
        ("TRANSPOSE", BF16, Mode.EXACT_NAN),
        ("TANH", FP16, Mode.ABS_ERROR),
    ],
)
def test_for_operator_modes(op: str, dt, mode: Mode) -> None:
    assert for_operator(op, dt).mode is mode


def test_for_operator_rule_text() -> None:
    assert for_operator("RECIPROCAL", FP32).rule == (
        "introduction: Main Inference precision requirements, RECIPROCAL 1 ulp"
    )


@pytest.mark.parametrize("op", ["CONV2D", "REDUCE_PRODUCT", "RESIZE"])
def test_for_operator_refuses_operators_needing_parameters(op: str) -> None:
    with pytest.raises(ValueError, match="needs parameters"):
        for_operator(op, FP32)


ALL_KINDS = [
    ulp(FP16, 2, "test"),
    exact(FP32, "test"),
    exact(I8, "test"),
    comparison("EQUAL"),
    abs_error_for("COS", FP32),
    abs_error_for("TANH", BF16),
    reduce_product(FP16, 17),
    resize(BF16, 3.5),
    dot_product("CONV2D", FP16, FP32, ks=27, data_set=4, bias_abs_max=2.0, local_bound=True),
]


@pytest.mark.parametrize("desc", ALL_KINDS, ids=lambda d: d.mode.value)
def test_json_round_trip(desc: ComplianceDescriptor) -> None:
    text = json.dumps(desc.to_json())
    assert ComplianceDescriptor.from_json(json.loads(text)) == desc


def test_json_form() -> None:
    assert abs_error_for("COS", FP16).to_json() == {
        "mode": "ABS_ERROR",
        "dtype": "fp16",
        "rule": "introduction: Main Inference precision requirements, COS calcAbsErrorBound",
        "params": {
            "lower_bound": 0.0,
            "normal_divisor": 2.0,
            "magnitude": "INPUT",
            "input_offset": 1.0,
        },
    }
    dp = dot_product("MATMUL", FP32, FP32, ks=8, data_set=3).to_json()
    assert dp["params"] == {
        "ks": 8,
        "data_set": 3,
        "acc_dtype": "fp32",
        "bias_abs_max": 0.0,
        "local_bound": True,
    }


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({"dtype": "fp32", "rule": "r"}, "missing"),
        ({"mode": "NEARLY", "dtype": "fp32", "rule": "r"}, "NEARLY"),
        ({"mode": "ULP", "dtype": "fp99", "rule": "r", "params": {"ulp": 1}}, "fp99"),
        ({"mode": "ULP", "dtype": "fp32", "rule": "r"}, "UlpParams"),
        ({"mode": "ULP", "dtype": "fp32", "rule": "r", "params": {"n": 1}}, "unexpected"),
        ({"mode": "EXACT", "dtype": "i8", "rule": "r", "params": {}}, "no parameters"),
        ({"mode": "ULP", "dtype": "fp32", "rule": "r", "colour": 1}, "unexpected keys"),
    ],
)
def test_from_json_errors(data: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ComplianceDescriptor.from_json(data)


def test_descriptor_validation() -> None:
    with pytest.raises(ValueError, match="use EXACT_NAN"):
        ComplianceDescriptor(Mode.EXACT, FP32, "r")
    with pytest.raises(ValueError, match="needs a float output"):
        ComplianceDescriptor(Mode.ULP, I8, "r", UlpParams(1.0))
    with pytest.raises(ValueError, match="ulp must be > 0"):
        ulp(FP32, 0, "r")
    with pytest.raises(ValueError, match="data_set"):
        dot_product("MATMUL", FP32, FP32, ks=4, data_set=6)
    with pytest.raises(ValueError, match="input_offset only applies"):
        AbsErrorParams(input_offset=1.0, magnitude=Magnitude.REFERENCE)
    with pytest.raises(ValueError, match="rule"):
        ulp(FP32, 1, " ")


class TestBadCheckInputs:
    DESC = ulp(FP32, 1, "r")

    def test_shape_mismatch(self) -> None:
        with pytest.raises(ValueError, match=r"shape mismatch: expected has shape \(2, 3\)"):
            check(np.zeros((2, 3)), self.DESC, np.zeros((3, 2), np.float32))

    def test_wrong_actual_dtype(self) -> None:
        with pytest.raises(ValueError, match="actual has dtype float64, but fp32 outputs"):
            check(np.zeros(3), self.DESC, np.zeros(3))

    def test_bf16_needs_bfloat16_storage(self) -> None:
        with pytest.raises(ValueError, match="bf16 outputs are stored as bfloat16"):
            check(np.zeros(3), ulp(BF16, 1, "r"), np.zeros(3, np.float32))

    def test_wrong_expected_dtype(self) -> None:
        with pytest.raises(ValueError, match="expected has dtype float32; ULP needs the fp64"):
            check(np.zeros(3, np.float32), self.DESC, np.zeros(3, np.float32))

    def test_exact_expected_must_be_numeric(self) -> None:
        with pytest.raises(ValueError, match="EXACT needs bool, integer or float64"):
            check(np.array(["a"]), exact(BOOL, "r"), np.array([True]))

    def test_missing_and_unexpected_bound(self) -> None:
        dp = dot_product("MATMUL", FP32, FP32, ks=4, data_set=0)
        with pytest.raises(ValueError, match="DOT_PRODUCT needs a bound tensor"):
            check(np.zeros(3), dp, np.zeros(3, np.float32))
        with pytest.raises(ValueError, match="ULP takes no bound tensor"):
            check(np.zeros(3), self.DESC, np.zeros(3, np.float32), np.zeros(3))

    def test_bound_shape_and_dtype(self) -> None:
        dp = dot_product("MATMUL", FP32, FP32, ks=4, data_set=0)
        with pytest.raises(ValueError, match=r"bound has shape \(2,\), expected \(3,\)"):
            check(np.zeros(3), dp, np.zeros(3, np.float32), np.zeros(2))
        with pytest.raises(ValueError, match="bound has dtype int64"):
            check(np.zeros(3), dp, np.zeros(3, np.float32), np.zeros(3, np.int64))

    def test_negative_or_nan_bound(self) -> None:
        dp = dot_product("MATMUL", FP32, FP32, ks=4, data_set=0)
        with pytest.raises(ValueError, match=r"negative or NaN at \[1\]"):
            check(np.zeros(3), dp, np.zeros(3, np.float32), np.array([0.0, -1.0, 0.0]))
        exp_desc = abs_error_for("EXP", FP32)
        with pytest.raises(ValueError, match=r"negative or NaN at \[0\]"):
            check(np.ones(1), exp_desc, np.ones(1, np.float32), np.array([np.nan]))
        # Where the reference is NaN the bound is not used, so NaN is accepted there.
        nan = np.array([np.nan])
        assert check(nan, exp_desc, nan.astype(np.float32), nan)


def test_local_bound_attribute_comes_from_tosa_xml() -> None:
    # The precision table lists the dot-product operators; tosa.xml says which of them
    # take a local_bound attribute (the others use the rule with local_bound true).
    from conformance.spec import load_spec
    from reference.compliance.rules import DOT_PRODUCT_OPERATORS, has_local_bound_attribute

    ops = DOT_PRODUCT_OPERATORS & set(load_spec().operators)  # a later revision's too
    with_attribute = {op for op in ops if has_local_bound_attribute(op)}
    # Hand-checked against tosa.xml: the convolutions and the FFTs have one.
    assert with_attribute == {
        "CONV2D", "CONV3D", "DEPTHWISE_CONV2D", "TRANSPOSE_CONV2D", "FFT2D", "RFFT2D"
    }  # fmt: skip
    with pytest.raises(ValueError, match="not a dot product operator"):
        has_local_bound_attribute("ADD")

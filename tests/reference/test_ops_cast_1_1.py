"""Reference evaluator, TOSA 1.1's CAST: the input_unsigned attribute (its ERROR_IF and
its zero-extended reading of the input), the i64 modes ("to signed 64", "signed 64 to
bool/i32"), and the new bool to fp32 and fp32 to bool modes.

Every expected value is worked out by hand from 1.1's CAST.tosac in the comment beside
it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from reference_helpers import assert_rule, run_with_constants, valid

from conformance.spec import load_revision
from reference.ops.type_conversion import INPUT_UNSIGNED_CLAUSE
from reference.outcome import Outcome

SPEC = load_revision("1.1-draft")
SPEC_1_0 = load_revision("1.0")
MAX = (1 << 63) - 1
MIN = -(1 << 63)


def cast(x: Any, in_dt: str, out_dt: str, spec: Any = SPEC, **attrs: Any) -> Outcome:
    arr = np.asarray(x)
    return run_with_constants("CAST", [("x", arr, in_dt)], arr.shape, out_dt, spec=spec, **attrs)


def test_the_1_1_modes_and_the_attribute_are_declared() -> None:
    op = SPEC.operator("CAST")
    arg = op.argument("input_unsigned")
    assert arg.category == "attribute" and arg.optional
    assert "input_unsigned" not in [a.name for a in SPEC_1_0.operator("CAST").arguments]
    modes = {m.mode for m in op.modes}
    assert {"bool to fp32", "fp32 to bool", "to signed 64 (in_t=i32_t)"} <= modes


def test_i32_to_i64_sign_extends_and_unsigned_zero_extends() -> None:
    # sign_extend<i64>: -1 stays -1, MIN_I32 stays -2**31
    x = [-1, -(1 << 31), 7]
    got = valid(cast(x, "i32", "i64"))
    assert got.astype(np.int64).tolist() == [-1, -(1 << 31), 7]
    # input_unsigned: zero_extend<uint64_t>: 0xFFFFFFFF = 4294967295, 0x80000000 = 2**31
    got = valid(cast(x, "i32", "i64", input_unsigned=True))
    assert got.astype(np.int64).tolist() == [4294967295, 1 << 31, 7]


def test_i64_to_i32_truncates_and_to_bool_tests_non_zero() -> None:
    # truncate<i32>: MAX -> low 32 bits 0xFFFFFFFF = -1; 2**32 + 5 -> 5; MIN -> 0;
    # 2**31 -> 0x80000000 = -2**31
    x = [MAX, (1 << 32) + 5, MIN, 1 << 31]
    got = valid(cast(x, "i64", "i32"))
    assert got.astype(np.int64).tolist() == [-1, 5, 0, -(1 << 31)]
    # input_unsigned makes no difference to a truncation
    got = valid(cast(x, "i64", "i32", input_unsigned=True))
    assert got.astype(np.int64).tolist() == [-1, 5, 0, -(1 << 31)]
    # (in != 0): MIN is true, 2**32 (whose low word is 0) is true, 0 false
    got = valid(cast([MIN, 1 << 32, 0], "i64", "bool"))
    assert got.tolist() == [True, True, False]


def test_bool_to_i64_and_fp32() -> None:
    assert valid(cast([True, False], "bool", "i64")).astype(np.int64).tolist() == [1, 0]
    assert valid(cast([True, False], "bool", "fp32")).tolist() == [1.0, 0.0]


def test_fp32_to_bool_compares_the_float() -> None:
    # (in != 0): 0.5 is true (a cast through an integer would make it 0), -0.0 false,
    # NaN != 0 true, inf true, the smallest subnormal true
    x = np.array([0.5, -0.0, np.nan, np.inf, 1e-45, 0.0], np.float32)
    got = valid(cast(x, "fp32", "bool"))
    assert got.tolist() == [True, False, True, True, True, False]


@pytest.mark.parametrize(
    ("in_dt", "x", "want"),
    [
        # i8 -56 is 0xC8 = 200 read unsigned; -1 is 255
        ("i8", [-56, -1, 3], [200.0, 255.0, 3.0]),
        # i16 -1 is 65535
        ("i16", [-1, -32768], [65535.0, 32768.0]),
        # i32 -1 is 4294967295 in fp64 (the fp32 result rounds it to 2**32: the check's job)
        ("i32", [-1, -(1 << 31)], [4294967295.0, 2147483648.0]),
    ],
)
def test_unsigned_to_float_is_the_unsigned_value(
    in_dt: str, x: list[int], want: list[float]
) -> None:
    got = valid(cast(np.asarray(x), in_dt, "fp32", input_unsigned=True))
    assert got.tolist() == want


def test_unsigned_narrowing_and_widening() -> None:
    # i8 -1 unsigned is 255: to i16 255, to i32 255; i16 -2 (0xFFFE) to i8 truncates to -2
    assert valid(cast([-1], "i8", "i16", input_unsigned=True)).tolist() == [255]
    assert valid(cast([-1], "i8", "i32", input_unsigned=True)).tolist() == [255]
    assert valid(cast([-2], "i16", "i8", input_unsigned=True)).tolist() == [-2]
    # to bool comes first: (in != 0) whatever the reading
    assert valid(cast([-1, 0], "i8", "bool", input_unsigned=True)).tolist() == [True, False]


@pytest.mark.parametrize(
    ("in_dt", "out_dt", "x"),
    [
        ("fp32", "i32", [1.5]),
        ("bool", "i32", [True]),
        ("fp16", "fp32", [1.0]),
        ("bf16", "i8", [2.0]),
    ],
)
def test_input_unsigned_on_a_non_integer_is_an_error(in_dt: str, out_dt: str, x: list[Any]) -> None:
    # ERROR_IF(input_unsigned && !is_integer<in_t>()): is_integer is i8..i64, not bool
    assert_rule(cast(x, in_dt, out_dt, input_unsigned=True), "ERROR_IF", INPUT_UNSIGNED_CLAUSE)
    # false (or absent) is fine
    assert cast(x, in_dt, out_dt, input_unsigned=False).kind == "valid"


def test_input_unsigned_false_is_the_signed_reading() -> None:
    got = valid(cast([-1], "i32", "fp32", input_unsigned=False))
    assert got.tolist() == [-1.0]

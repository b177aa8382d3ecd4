"""Reference evaluator: RESCALE under TOSA 1.0 (rounding_mode, zero points as [1] input
tensors typed in_t/out_t, the unsigned-reading ERROR_IFs, INEXACT_ROUND's range)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_helpers import assert_rule

from conformance import dtypes
from conformance.builder import single_operator_graph
from conformance.compliance_descriptor import ComplianceDescriptor, IntRangeParams, Mode
from conformance.dtypes import I32_MAX, I32_MIN
from conformance.spec import load_revision
from reference.engine import evaluate
from reference.expectations import expect
from reference.ops import type_conversion as tc
from reference.outcome import Outcome

SPEC = load_revision("1.0")
ONE_30 = 1 << 30


def rescale(
    x: Any,
    in_dt: str,
    out_dt: str,
    multiplier: Sequence[int],
    shift: Sequence[int],
    *,
    scale32: bool = True,
    rounding_mode: str = "SINGLE_ROUND",
    per_channel: bool = False,
    input_unsigned: bool = False,
    output_unsigned: bool = False,
    input_zp: int = 0,
    output_zp: int = 0,
) -> Outcome:
    """One 1.0 RESCALE; the zero points are given as stored in their typed tensors."""
    in_t, out_t = dtypes.dtype(in_dt), dtypes.dtype(out_dt)
    arr = np.asarray(x).astype(in_t.storage)
    mul_dt = "i32" if scale32 else "i16"
    nc = len(multiplier)
    graph = single_operator_graph(
        "RESCALE",
        [
            ("x", arr.shape, in_dt),
            ("multiplier", (nc,), mul_dt),
            ("shift", (len(shift),), "i8"),
            ("input_zp", (1,), in_dt),
            ("output_zp", (1,), out_dt),
        ],
        [("y", arr.shape, out_dt)],
        {
            "scale32": scale32,
            "rounding_mode": rounding_mode,
            "per_channel": per_channel,
            "input_unsigned": input_unsigned,
            "output_unsigned": output_unsigned,
        },
        constants={
            "multiplier": np.asarray(multiplier),
            "shift": np.asarray(shift),
            "input_zp": np.array([input_zp], in_t.storage),
            "output_zp": np.array([output_zp], out_t.storage),
        },
        spec=SPEC,
        strict=False,
    )
    return evaluate(graph, {"x": arr}, spec=SPEC)


def out(outcome: Outcome) -> list[Any]:
    assert outcome.kind == "valid", str(outcome)
    return outcome.outputs["y"].tolist()  # type: ignore[no-any-return]


def test_single_and_double_round() -> None:
    # multiplier 2**30, shift 40: scale 2**-10.  SINGLE_ROUND adds 2**39 before the
    # shift: 1536 / 1024 = 1.5 -> 2, -1536 -> -1.5 -> -1 (half up).  DOUBLE_ROUND adds
    # another 2**30 for a positive value, subtracts it for a negative one:
    # 1535 * 2**30 + 2**39 + 2**30 = (1535 + 512 + 1) * 2**30 >> 40 = 2048 / 1024 = 2
    # (single: 2047 * 2**30 >> 40 = 1); -1537: (-1537 + 512 - 1) = -1026 -> -2 (floor
    # of -1.002), single: -1025 -> -2 as well; -1536 double: -1025 -> -2.
    x = [1536, -1536, 1535, -1537]
    assert out(rescale(x, "i16", "i16", [ONE_30], [40])) == [2, -1, 1, -2]
    double = rescale(x, "i16", "i16", [ONE_30], [40], rounding_mode="DOUBLE_ROUND")
    assert out(double) == [2, -2, 2, -2]


def test_inexact_round_evaluates_the_exact_single_round_value() -> None:
    # A SINGLE_ROUND result always meets the INEXACT_ROUND bound; the reference gives
    # it (3 * 2**-1 = 1.5 -> 2).
    got = rescale([3], "i8", "i8", [ONE_30], [31], rounding_mode="INEXACT_ROUND")
    assert out(got) == [2]


def test_uint16_zero_point_stored_as_its_bits() -> None:
    # uint16 input, zero point 32768 held in the i16 tensor as -32768 (0x8000).  The
    # value 0x8005 (stored -32763) reads 32773 unsigned; minus 32768 gives 5; scale 1.
    got = rescale([-32763], "i16", "i8", [ONE_30], [30], input_unsigned=True, input_zp=-32768)
    assert out(got) == [5]
    # uint8 output with zero point 200 (stored -56): 5 + 200 = 205, stored as -51.
    got = rescale([5], "i8", "i8", [ONE_30], [30], output_unsigned=True, output_zp=-56)
    assert out(got) == [-51]


@pytest.mark.parametrize(
    ("in_dt", "out_dt", "kwargs", "clause"),
    [
        ("i16", "i8", {"input_zp": 3}, tc.IN_ZP_CLAUSE_1_0),
        ("i8", "i32", {"output_zp": 1}, tc.OUT_ZP_CLAUSE_1_0),
        ("i16", "i8", {"input_unsigned": True, "input_zp": 1}, tc.IN_ZP16_CLAUSE_1_0),
        ("i8", "i16", {"output_unsigned": True, "output_zp": 7}, tc.OUT_ZP16_CLAUSE_1_0),
        (
            "i16",
            "i8",
            {"scale32": False, "rounding_mode": "DOUBLE_ROUND"},
            tc.DOUBLE_ROUND_CLAUSE_1_0,
        ),
        ("i8", "i32", {"input_unsigned": True}, tc.OUT_I32_IN_UNSIGNED_CLAUSE_1_0),
        ("i32", "i8", {"output_unsigned": True}, tc.IN_I32_OUT_UNSIGNED_CLAUSE_1_0),
        (
            "i48",
            "i8",
            {"scale32": False, "output_unsigned": True},
            tc.IN_I48_OUT_UNSIGNED_CLAUSE_1_0,
        ),
        ("i48", "i16", {"scale32": False, "input_unsigned": True}, tc.IN_I48_IN_UNSIGNED_CLAUSE),
        ("i32", "i16", {"input_unsigned": True}, tc.IN_I32_IN_UNSIGNED_CLAUSE),
        ("i16", "i32", {"output_unsigned": True}, tc.OUT_I32_OUT_UNSIGNED_CLAUSE),
    ],
)
def test_error_ifs(in_dt: str, out_dt: str, kwargs: dict[str, Any], clause: str) -> None:
    scale32 = kwargs.get("scale32", True)
    mult = [ONE_30] if scale32 else [1 << 14]
    shift = [30] if scale32 else [14]
    assert_rule(rescale([1], in_dt, out_dt, mult, shift, **kwargs), "ERROR_IF", clause)


def test_scale32_with_i48() -> None:
    got = rescale([1], "i48", "i8", [ONE_30], [30], scale32=True)
    assert_rule(got, "ERROR_IF", tc.SCALE32_I48_CLAUSE_1_0)


def test_per_channel_rank0() -> None:
    got = rescale(np.int8(1), "i8", "i8", [ONE_30], [30], per_channel=True)
    assert_rule(got, "ERROR_IF", tc.PER_CHANNEL_RANK_CLAUSE)


def test_clauses_follow_the_declaration() -> None:
    draft = load_revision("2024-04-draft").operator("RESCALE")
    one = SPEC.operator("RESCALE")
    assert tc.rescale_clause(draft, "double_round") == tc.DOUBLE_ROUND_CLAUSE
    assert tc.rescale_clause(one, "double_round") == tc.DOUBLE_ROUND_CLAUSE_1_0
    assert tc.rescale_clause(draft, "in_i32_in_uns") is None
    assert tc.rescale_clause(one, "make_unsigned_in") is None


def test_rounding_mode_extensions_in_the_model() -> None:
    values = {v.name: v.extension for v in SPEC.enums["rounding_mode_t"].values}
    assert values == {
        "SINGLE_ROUND": "",
        "INEXACT_ROUND": "EXT-INEXACTROUND",
        "DOUBLE_ROUND": "EXT-DOUBLEROUND",
    }


# -- INEXACT_ROUND's range ---------------------------------------------------------------


def _range(value: int, m: int, s: int, zp: int, out_dt: str, uns: bool = False) -> list[int]:
    lo, hi = tc.inexact_round_range(
        np.array([value]), np.array(m), np.array(s), zp, dtypes.dtype(out_dt), uns
    )
    return [int(lo[0]), int(hi[0])]


def test_inexact_range_by_hand() -> None:
    # out_ref = 3 * 2**30 * 2**-31 = 1.5; bound 0.5 + (4.5 + 1.5) * 2**-24 (just over
    # 0.5): [ceil(1.0 - tiny), floor(2.0 + tiny)] = [1, 2].  Both roundings of a tie.
    assert _range(3, ONE_30, 31, 0, "i8") == [1, 2]
    # out_ref = 1.25: bound just over 0.5 -> [ceil(0.75), floor(1.75)] = [1, 1].
    assert _range(5, ONE_30, 32, 0, "i8") == [1, 1]
    # out_ref = 100, zero point 30: 130 +- 0.5+: [130, 130], clipped to i8: [127, 127].
    assert _range(100, ONE_30, 30, 30, "i8") == [127, 127]
    # Unsigned output (the unsigned reading of the clip): -5 + 0 clips to [0, 0].
    assert _range(-5, ONE_30, 30, 0, "i8", uns=True) == [0, 0]
    # A large result widens the bound: out_ref = 2**30, bound 0.5 + 4 * 2**30 * 2**-24
    # = 256.5: [2**30 - 256, 2**30 + 256].
    assert _range(1 << 30, ONE_30, 30, 0, "i32") == [(1 << 30) - 256, (1 << 30) + 256]


@settings(max_examples=50, deadline=None)
@given(
    value=st.integers(-(2**15), 2**15 - 1).map(int),
    m=st.integers(0, 2**31 - 1),
    s=st.integers(16, 62),
)
def test_single_round_meets_the_inexact_range(value: int, m: int, s: int) -> None:
    # The text: an exact SINGLE_ROUND implementation meets the bound automatically.
    lo, hi = tc.inexact_round_range(
        np.array([value]), np.array(m), np.array(s), 0, dtypes.I32, False
    )
    exact = (value * m + (1 << (s - 1))) >> s
    exact = min(max(exact, I32_MIN), I32_MAX)
    assert lo[0] <= exact <= hi[0]


# -- INEXACT_ROUND's compliance check (Mode.INT_RANGE) -----------------------------------


def _inexact_graph(x: list[int], shift: int, out_zp: int = 0, out_uns: bool = False) -> Any:
    in_t = dtypes.I16
    return single_operator_graph(
        "RESCALE",
        [
            ("x", (len(x),), "i16"),
            ("multiplier", (1,), "i32"),
            ("shift", (1,), "i8"),
            ("input_zp", (1,), "i16"),
            ("output_zp", (1,), "i8"),
        ],
        [("y", (len(x),), "i8")],
        {
            "scale32": True,
            "rounding_mode": "INEXACT_ROUND",
            "per_channel": False,
            "input_unsigned": False,
            "output_unsigned": out_uns,
        },
        constants={
            "multiplier": np.array([ONE_30], np.int32),
            "shift": np.array([shift], np.int8),
            "input_zp": np.array([0], in_t.storage),
            "output_zp": np.array([out_zp], np.int8),
        },
        spec=SPEC,
    )


def test_inexact_round_accepts_exactly_its_range() -> None:
    # x = [3, 5, 1000], scale 2**-1: out_ref 1.5, 2.5, 500; zero point 4:
    # [ceil(5.5 - e), floor(5.5 + e)] = [5, 6]; [6, 7]; 504 +- 0.5+ clipped to [127, 127].
    graph = _inexact_graph([3, 5, 1000], 31, out_zp=4)
    exp = expect(graph, {"x": np.array([3, 5, 1000], np.int16)}, spec=SPEC)
    check = exp.checks["y"]
    assert check.descriptor.mode is Mode.INT_RANGE
    assert exp.outcome.outputs["y"].tolist() == [6, 7, 127]  # the SINGLE_ROUND value

    def passes(values: list[int]) -> bool:
        return exp.check("y", np.array(values, np.int8)).passed

    assert passes([5, 6, 127]) and passes([6, 7, 127])
    assert not passes([4, 6, 127]) and not passes([5, 8, 127]) and not passes([5, 6, 126])


def test_int_range_descriptor_round_trips() -> None:
    desc = ComplianceDescriptor(Mode.INT_RANGE, dtypes.I8, "rule", IntRangeParams(-3, True))
    assert ComplianceDescriptor.from_json(desc.to_json()) == desc
    assert desc.needs_bound


def test_exact_roundings_keep_the_exact_check() -> None:
    graph = _inexact_graph([3], 31)
    op = graph.main.operators[0]
    op.attributes["rounding_mode"] = "SINGLE_ROUND"
    exp = expect(graph, {"x": np.array([3], np.int16)}, spec=SPEC)
    assert exp.checks["y"].descriptor.mode is Mode.EXACT
    assert not exp.check("y", np.array([1], np.int8)).passed  # 1.5 rounds half up to 2


def test_inexact_round_requires_every_allowed_result_to_fit_int32() -> None:
    # Reading v1-inexact-round-require.  i48 -> i32, scale16 of 1.0 (1 << 14, shift 14):
    # out_ref = x, err_bnd = 0.5 + 4 * x * 2**-24.  For x = 2147483640, err_bnd is 512.5
    # and floor(x + 512.5) = 2147484152 passes I32_MAX: an INEXACT_ROUND implementation
    # may produce it and break apply_scale_16's REQUIRE, so the result is unpredictable.
    # For x = 2147483000 the highest allowed, 2147483512, fits (647 below I32_MAX).
    near, clear = 2147483640, 2147483000
    kwargs: dict[str, Any] = {"scale32": False, "rounding_mode": "INEXACT_ROUND"}
    got = rescale([near], "i48", "i32", [1 << 14], [14], **kwargs)
    assert_rule(got, "REQUIRE", tc.SCALE16_RESULT_CLAUSE)
    assert out(rescale([clear], "i48", "i32", [1 << 14], [14], **kwargs)) == [clear]
    # SINGLE_ROUND has one result, which fits: the same input is valid.
    single = rescale([near], "i48", "i32", [1 << 14], [14], scale32=False)
    assert out(single) == [near]


def test_inexact_round_requires_the_zero_point_sum_to_fit_int32() -> None:
    # i48 -> i8, scale16 of 1.0, x = 2147483100: err_bnd = 0.5 + 4 * x * 2**-24 is
    # 512.5 (to 1e-5), so the scaled results reach 2147483612, which fits; plus
    # output_zp 127 they reach floor(2147483227 + 512.5) = 2147483739 > I32_MAX, so
    # apply_add_s's REQUIRE may break.  The exact sum, 2147483227, fits.
    kwargs: dict[str, Any] = {"scale32": False, "output_zp": 127}
    got = rescale(
        [2147483100], "i48", "i8", [1 << 14], [14], rounding_mode="INEXACT_ROUND", **kwargs
    )
    assert_rule(got, "REQUIRE", tc.ADD_ZP_CLAUSE)
    assert out(rescale([2147483100], "i48", "i8", [1 << 14], [14], **kwargs)) == [127]

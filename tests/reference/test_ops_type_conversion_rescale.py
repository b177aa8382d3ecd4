"""Reference evaluator: RESCALE (apply_scale_32 / apply_scale_16, zero points,
unsigned input and output, per-channel scaling)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reference_helpers import assert_rule

from conformance import dtypes
from conformance.builder import single_operator_graph
from conformance.spec import TypeSupport, load_spec
from reference.arguments import ATTRIBUTES_CLAUSE, INPUTS_CLAUSE
from reference.engine import evaluate
from reference.ops import type_conversion as tc
from reference.outcome import Outcome

SPEC = load_spec()
ONE_30 = 1 << 30


def rescale(
    x: Any,
    in_dt: str,
    out_dt: str,
    multiplier: Sequence[int],
    shift: Sequence[int],
    *,
    scale32: bool = True,
    double_round: bool = False,
    per_channel: bool = False,
    input_unsigned: bool = False,
    output_unsigned: bool = False,
    input_zp: int = 0,
    output_zp: int = 0,
) -> Outcome:
    arr = np.asarray(x).astype(dtypes.dtype(in_dt).storage)
    mul_dt = "i32" if scale32 else "i16"
    nc = len(multiplier)
    graph = single_operator_graph(
        "RESCALE",
        [("x", arr.shape, in_dt), ("multiplier", (nc,), mul_dt), ("shift", (len(shift),), "i8")],
        [("y", arr.shape, out_dt)],
        {
            "input_zp": input_zp,
            "output_zp": output_zp,
            "scale32": scale32,
            "double_round": double_round,
            "per_channel": per_channel,
            "input_unsigned": input_unsigned,
            "output_unsigned": output_unsigned,
        },
        constants={"multiplier": np.asarray(multiplier), "shift": np.asarray(shift)},
    )
    return evaluate(graph, {"x": arr})


def out(outcome: Outcome) -> list[Any]:
    assert outcome.kind == "valid", str(outcome)
    return outcome.outputs["y"].tolist()  # type: ignore[no-any-return]


# -- scaling and rounding ---------------------------------------------------------------


def test_unit_scale_and_half_up_rounding() -> None:
    # multiplier 2**30, shift 30: scale 1.0.  shift 31: scale 0.5, rounding half up
    # (round = 2**30 is added before the floor shift): 3 -> 1.5 -> 2, -3 -> -1.5 -> -1.
    assert out(rescale([-128, 0, 127], "i8", "i8", [ONE_30], [30])) == [-128, 0, 127]
    assert out(rescale([3, -3, 1, -1, 5], "i8", "i8", [ONE_30], [31])) == [2, -1, 1, 0, 3]
    assert out(rescale(np.int8(5), "i8", "i16", [ONE_30], [31])) == 3  # rank 0


def test_double_round() -> None:
    # multiplier 2**30, shift 40: scale 2**-10.  double_round adds 2**30 (subtracts it
    # for negative values) to the rounding term when shift > 31.
    #   1535: 1535 * 2**30 / 2**40 = 1.4990234375.
    #     single: floor(1.4990234375 + 0.5) = 1
    #     double: floor(1.4990234375 + 0.5 + 2**30 / 2**40) = floor(2.0) = 2; as two
    #     roundings: 1535 * 2**30 / 2**31 = 767.5 -> 768, then 768 / 2**9 = 1.5 -> 2.
    #   -1536: -1.5.  single: floor(-1.0) = -1; double: floor(-1.0 - 2**-10) = -2.
    #   1536: 1.5 -> 2 either way; 1024: exactly 1 either way.
    x = [1535, -1536, 1536, 1024]
    assert out(rescale(x, "i16", "i32", [ONE_30], [40])) == [1, -1, 2, 1]
    assert out(rescale(x, "i16", "i32", [ONE_30], [40], double_round=True)) == [2, -2, 2, 1]
    # With shift <= 31 double_round changes nothing: 3 * 2**30 / 2**31 = 1.5 -> 2.
    assert out(rescale([3, -3], "i8", "i8", [ONE_30], [31], double_round=True)) == [2, -1]


def test_per_channel_with_zero_points() -> None:
    # Input [2, 3] i8, input_zp 2, output_zp -3; channel c uses multiplier[c], shift[c]:
    #   c0: 2**30 >> 30     = x 1     c1: 2**30 >> 31 = x 0.5     c2: 3 * 2**28 >> 30 = x 0.75
    # Row 0 (x = 12 -> value 10):  10 -3 = 7;   5 -3 = 2;   7.5 -> 8, 8 -3 = 5
    # Row 1 (x = -5 -> value -7):  -7 -3 = -10; -3.5 -> (-7 * 2**30 + 2**30) >> 31 = -3,
    #   -3 -3 = -6;  -5.25 -> (-21 * 2**28 + 2**29) >> 30 = floor(-19 / 4) = -5, -5 -3 = -8
    x = [[12, 12, 12], [-5, -5, -5]]
    got = rescale(
        x, "i8", "i8", [ONE_30, ONE_30, 3 << 28], [30, 31, 30],
        per_channel=True, input_zp=2, output_zp=-3,
    )  # fmt: skip
    assert out(got) == [[7, 2, 5], [-10, -6, -8]]


def test_clamps_to_the_output_type() -> None:
    # i32 -> i8 at scale 1: values beyond i8 saturate.
    x = [1000, -1000, 127, -128]
    assert out(rescale(x, "i32", "i8", [ONE_30], [30])) == [127, -128, 127, -128]
    assert out(rescale([40000, -40000], "i32", "i16", [ONE_30], [30])) == [32767, -32768]


def test_scale16_and_int48_input() -> None:
    # apply_scale_16: multiplier 2**14, shift 14 is scale 1; shift 30 divides by 2**16:
    # 2**40 -> 2**24; (2**40 + 2**15) / 2**16 = 2**24 + 0.5 -> rounds up.
    x = [2**40, 2**40 + 2**15, -(2**47)]
    got = rescale(x, "i48", "i32", [1 << 14], [30], scale32=False)
    assert out(got) == [2**24, 2**24 + 1, -(2**31)]
    assert out(rescale([-300, 300], "i16", "i8", [1 << 14], [14], scale32=False)) == [-128, 127]


# -- unsigned input and output ----------------------------------------------------------------


def test_unsigned_input() -> None:
    # i8 read as uint8: stored -56 is 200, stored -128 is 128; input_zp 128 (may be
    # written 128 or -128, the same 8 bits).  Scale 1 into signed i8:
    #   200 - 128 = 72;  128 - 128 = 0;  0 - 128 = -128;  255 - 128 = 127.
    x = np.array([-56, -128, 0, -1], np.int8)
    for zp in (128, -128):
        got = rescale(x, "i8", "i8", [ONE_30], [30], input_unsigned=True, input_zp=zp)
        assert out(got) == [72, 0, -128, 127]
    # uint16 with zero point 32768 into i16: stored -32768 is 32768 -> 0; stored -1 is
    # 65535 -> 32767; stored 0 -> -32768.
    x16 = np.array([-32768, -1, 0], np.int16)
    got = rescale(x16, "i16", "i16", [ONE_30], [30], input_unsigned=True, input_zp=32768)
    assert out(got) == [0, 32767, -32768]


def test_unsigned_output() -> None:
    # Signed i16 into uint8 with output_zp 128, scale 1:
    #   -5 + 128 = 123;  200 + 128 = 328 -> 255 (stored as -1);  -200 + 128 = -72 -> 0;
    #   127 + 128 = 255 (stored -1);  0 + 128 = 128 (stored -128).
    x = [-5, 200, -200, 127, 0]
    got = rescale(x, "i16", "i8", [ONE_30], [30], output_unsigned=True, output_zp=128)
    assert out(got) == [123, -1, 0, -1, -128]
    # uint16 output with zero point 32768: -32768 -> 0; 32767 -> 65535 (stored -1).
    got = rescale(
        [-32768, 32767, 0], "i16", "i16", [ONE_30], [30], output_unsigned=True, output_zp=32768
    )
    assert out(got) == [0, -1, -32768]


# -- ERROR_IFs ---------------------------------------------------------------------------------

# (clause, in_dt, out_dt, keyword arguments); multiplier 2**30 / 2**14, shift 30 / 14.
ERROR_CASES: list[tuple[str, str, str, dict[str, Any]]] = [
    (tc.IN_ZP_CLAUSE, "i32", "i8", {"input_zp": 1}),
    (tc.IN_ZP_CLAUSE, "i16", "i8", {"input_zp": 1}),  # signed i16 must have zp 0
    (tc.OUT_ZP_CLAUSE, "i8", "i32", {"output_zp": 1}),
    (tc.OUT_ZP_CLAUSE, "i8", "i16", {"output_zp": -1}),
    (tc.IN_ZP16_CLAUSE, "i16", "i8", {"input_unsigned": True, "input_zp": 5}),
    (tc.OUT_ZP16_CLAUSE, "i8", "i16", {"output_unsigned": True, "output_zp": 5}),
    (tc.SCALE32_I48_CLAUSE, "i48", "i8", {}),
    (tc.DOUBLE_ROUND_CLAUSE, "i8", "i8", {"scale32": False, "double_round": True}),
    (tc.BOTH_UNSIGNED_CLAUSE, "i8", "i8", {"input_unsigned": True, "output_unsigned": True}),
    (tc.OUT_I32_IN_UNSIGNED_CLAUSE, "i8", "i32", {"input_unsigned": True}),
    (tc.IN_I32_OUT_UNSIGNED_CLAUSE, "i32", "i8", {"output_unsigned": True}),
    (tc.IN_I48_OUT_UNSIGNED_CLAUSE, "i48", "i8", {"scale32": False, "output_unsigned": True}),
    (tc.MAKE_UNSIGNED_CLAUSE, "i32", "i8", {"input_unsigned": True}),
    (tc.MAKE_UNSIGNED_CLAUSE, "i48", "i16", {"scale32": False, "input_unsigned": True}),
    (tc.MAKE_UNSIGNED_CLAUSE, "i8", "i32", {"output_unsigned": True}),
    # Zero points the attribute's type cannot hold.
    (ATTRIBUTES_CLAUSE, "i8", "i8", {"input_zp": 200}),
    (ATTRIBUTES_CLAUSE, "i8", "i8", {"input_unsigned": True, "input_zp": 256}),
]


@pytest.mark.parametrize(
    ("clause", "in_dt", "out_dt", "kw"),
    ERROR_CASES,
    ids=[f"{i}-{c[0][:30]}" for i, c in enumerate(ERROR_CASES)],
)
def test_error_ifs_name_their_clause(
    clause: str, in_dt: str, out_dt: str, kw: dict[str, Any]
) -> None:
    scale32 = kw.get("scale32", True)
    mult, shift = ([ONE_30], [30]) if scale32 else ([1 << 14], [14])
    assert_rule(rescale([1, 2], in_dt, out_dt, mult, shift, **kw), "error", clause)


def test_per_channel_needs_rank_one() -> None:
    got = rescale(np.int8(3), "i8", "i8", [ONE_30], [30], per_channel=True)
    assert_rule(got, "error", tc.PER_CHANNEL_RANK_CLAUSE)


def test_channel_count_must_match() -> None:
    # per_channel: NC = shape[rank - 1] = 3; per-tensor: NC = 1.
    got = rescale([[1, 2, 3]], "i8", "i8", [ONE_30] * 2, [30] * 2, per_channel=True)
    assert_rule(got, "error", INPUTS_CLAUSE)
    assert_rule(rescale([1, 2], "i8", "i8", [ONE_30] * 2, [30] * 2), "error", INPUTS_CLAUSE)


def test_error_ifs_in_pseudocode_order() -> None:
    # double_round without scale32 and both unsigned: the former is stated first.
    kw = {"scale32": False, "double_round": True, "input_unsigned": True, "output_unsigned": True}
    assert_rule(rescale([1], "i8", "i8", [1 << 14], [14], **kw), "error", tc.DOUBLE_ROUND_CLAUSE)


# -- REQUIREs -------------------------------------------------------------------------------------


@pytest.mark.parametrize("scale32", [True, False])
def test_requires_multiplier_and_shift(scale32: bool) -> None:
    m = ONE_30 if scale32 else 1 << 14
    assert_rule(
        rescale([1], "i16", "i16", [-m], [30], scale32=scale32),
        "unpredictable",
        tc.MULTIPLIER_CLAUSE,
    )
    for bad in (1, 63, -1):
        got = rescale([1], "i16", "i16", [m], [bad], scale32=scale32)
        assert_rule(got, "unpredictable", tc.SHIFT_CLAUSE)
    assert rescale([1], "i16", "i16", [m], [2], scale32=scale32).valid
    assert rescale([1], "i16", "i16", [m], [62], scale32=scale32).valid
    # Both fail at the same element: the multiplier is checked first.
    got = rescale([1], "i16", "i16", [-m], [0], scale32=scale32)
    assert_rule(got, "unpredictable", tc.MULTIPLIER_CLAUSE)


def test_requires_value_within_the_shift() -> None:
    # shift 2: value must lie in [-(1 << 1), 1 << 1) = [-2, 2).
    assert out(rescale([-2, 1], "i8", "i8", [1], [2])) == [0, 0]
    got = rescale([0, 1, 2], "i8", "i8", [1], [2])
    assert_rule(got, "unpredictable", tc.VALUE_CLAUSE)
    assert got.rule is not None and "index [2]" in got.rule.detail
    # The zero point counts: 1 - (-1) = 2 is out of range too.
    got = rescale([1], "i8", "i8", [1], [2], input_zp=-1)
    assert_rule(got, "unpredictable", tc.VALUE_CLAUSE)


def test_requires_scale16_result_in_int32() -> None:
    # 2**46 * 2**14 >> 14 = 2**46 does not fit int32.
    got = rescale([2**46], "i48", "i32", [1 << 14], [14], scale32=False)
    assert_rule(got, "unpredictable", tc.SCALE16_RESULT_CLAUSE)


def test_requires_output_zero_point_sum_in_int32() -> None:
    # apply_scale_32's REQUIRE on value keeps its result below 2**30, so only
    # apply_scale_16 can reach it: INT32_MAX at scale 1 (i48 input) plus output_zp 1
    # leaves int32 (apply_add_s<int32_t>).
    one16 = [1 << 14]
    got = rescale([2**31 - 1], "i48", "i8", one16, [14], scale32=False, output_zp=1)
    assert_rule(got, "unpredictable", tc.ADD_ZP_CLAUSE)
    got = rescale([2**31 - 2], "i48", "i8", one16, [14], scale32=False, output_zp=1)
    assert out(got) == [127]
    got = rescale([2**31 - 1], "i32", "i8", [ONE_30], [30])
    assert_rule(got, "unpredictable", tc.VALUE_CLAUSE)


def test_per_channel_require_names_the_channel_element() -> None:
    # Channel 1 has shift 70: the first element reading it is at index [0, 1].
    got = rescale([[1, 2], [3, 4]], "i8", "i8", [ONE_30, ONE_30], [30, 70], per_channel=True)
    assert_rule(got, "unpredictable", tc.SHIFT_CLAUSE)
    assert got.rule is not None and "index [0, 1]" in got.rule.detail


# -- against a transcription of the pseudocode ----------------------------------------------------


def pseudocode_rescale(
    x: np.ndarray,
    in_t: dtypes.DType,
    out_t: dtypes.DType,
    multiplier: list[int],
    shift: list[int],
    flags: dict[str, bool],
    input_zp: int,
    output_zp: int,
) -> list[int] | None:
    """RESCALE.tosac with Python integers, element by element; None where a REQUIRE
    fails."""
    result_list = []
    for index in np.ndindex(x.shape):
        v = int(x[index])
        if flags["input_unsigned"]:
            v &= (1 << in_t.bits) - 1
        value = v - input_zp
        c = index[-1] if flags["per_channel"] else 0
        m, s = multiplier[c], shift[c]
        if m < 0 or not 2 <= s <= 62:
            return None
        rnd = 1 << (s - 1)
        if flags["scale32"]:
            if not -(1 << (s - 1)) <= value < (1 << (s - 1)):
                return None
            if flags["double_round"] and s > 31:
                rnd += (1 << 30) if value >= 0 else -(1 << 30)
            result = (value * m + rnd) >> s
        else:
            result = (value * m + rnd) >> s
            if not -(2**31) <= result < 2**31:
                return None
        result += output_zp
        if not -(2**31) <= result < 2**31:
            return None
        if flags["output_unsigned"]:
            r = min(max(result, 0), (1 << out_t.bits) - 1)
            half = 1 << (out_t.bits - 1)
            result_list.append(r - (1 << out_t.bits) if r >= half else r)
        else:
            result_list.append(min(max(result, int(out_t.min)), int(out_t.max)))
    return result_list


COMBOS = [
    # (in, out, input_unsigned, output_unsigned)
    *[(i, o, False, False) for i in ("i8", "i16", "i32", "i48") for o in ("i8", "i16", "i32")],
    ("i8", "i8", True, False),
    ("i8", "i16", True, False),
    ("i16", "i16", True, False),
    ("i16", "i8", True, False),
    ("i8", "i8", False, True),
    ("i16", "i8", False, True),
    ("i16", "i16", False, True),
    ("i8", "i16", False, True),
]


@given(
    combo=st.sampled_from(COMBOS),
    scale32=st.booleans(),
    double_round=st.booleans(),
    per_channel=st.booleans(),
    shift_lo=st.integers(2, 62),
    seed=st.integers(0, 2**32 - 1),
)
def test_matches_the_pseudocode_element_by_element(
    combo: tuple[str, str, bool, bool],
    scale32: bool,
    double_round: bool,
    per_channel: bool,
    shift_lo: int,
    seed: int,
) -> None:
    in_name, out_name, in_uns, out_uns = combo
    in_t, out_t = dtypes.dtype(in_name), dtypes.dtype(out_name)
    if in_name == "i48":
        scale32 = False
    double_round = double_round and scale32
    rng = np.random.default_rng(seed)
    shape = (3, 4)
    x = rng.integers(int(in_t.min), int(in_t.max) + 1, shape, dtype=np.int64)
    nc = shape[-1] if per_channel else 1
    mul_max = (1 << 31) - 1 if scale32 else (1 << 15) - 1
    multiplier = [int(v) for v in rng.integers(0, mul_max + 1, nc)]
    shift = [int(v) for v in rng.integers(shift_lo, 63, nc)]

    def zp(dt: dtypes.DType, unsigned: bool) -> int:
        if dt.name == "i8":
            return int(rng.integers(0, 256)) if unsigned else int(rng.integers(-128, 128))
        if dt.name == "i16" and unsigned:
            return int(rng.choice([0, 32768]))
        return 0

    input_zp, output_zp = zp(in_t, in_uns), zp(out_t, out_uns)
    flags = {
        "scale32": scale32,
        "double_round": double_round,
        "per_channel": per_channel,
        "input_unsigned": in_uns,
        "output_unsigned": out_uns,
    }
    got = rescale(
        x.astype(in_t.storage), in_name, out_name, multiplier, shift,
        input_zp=input_zp, output_zp=output_zp, **flags,
    )  # fmt: skip
    want = pseudocode_rescale(x, in_t, out_t, multiplier, shift, flags, input_zp, output_zp)
    if want is None:
        assert got.kind == "unpredictable", str(got)
    else:
        assert got.kind == "valid", str(got)
        assert got.outputs["y"].reshape(-1).tolist() == want


# -- every mode ---------------------------------------------------------------------------------

MODES = SPEC.operator("RESCALE").modes


@pytest.mark.parametrize("mode", MODES, ids=[m.mode for m in MODES])
def test_every_mode_evaluates(mode: TypeSupport) -> None:
    in_t, out_t = mode.dtype("in_t"), mode.dtype("out_t")
    rng = np.random.default_rng(len(mode.mode))
    x = rng.integers(int(in_t.min), int(in_t.max) + 1, (2, 3))
    scale32 = in_t.name != "i48"
    # Scale 2**-8 (a value of up to 2**47 stays inside int32 for apply_scale_16).
    mult, shift = ([ONE_30], [38]) if scale32 else ([1 << 14], [30])
    got = rescale(x, in_t.name, out_t.name, mult, shift, scale32=scale32)
    assert got.kind == "valid", str(got)
    assert got.outputs["y"].shape == (2, 3)
    assert np.all(out_t.in_range(got.outputs["y"].astype(np.int64)))


def test_mode_count() -> None:
    assert len(MODES) == 12

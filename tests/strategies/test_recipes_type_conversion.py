"""The arithmetic the RESIZE, CAST and RESCALE recipes rely on."""

from functools import cache

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance import dtypes
from conformance.spec import load_spec
from reference.engine import evaluate
from strategies.case import Case
from strategies.draw import draw_examples
from strategies.recipes.image import _borders
from strategies.recipes.type_conversion_rescale import I32_MAX, I32_MIN, _value_bounds
from strategies.tie_values import float_midpoints
from strategies.ties import case_tie_facts, tie_kinds
from strategies.valid import valid_cases


def _scale16(v: int, m: int, s: int) -> int:
    return (v * m + (1 << (s - 1))) >> s


@given(
    m=st.integers(1, (1 << 15) - 1),
    s=st.integers(2, 62),
    zp=st.sampled_from([0, -128, 127, 255, 32768]),
)
def test_scale16_bounds_are_exact(m: int, s: int, zp: int) -> None:
    """The last values for which apply_scale_16's result fits int32 (its REQUIRE) and
    so does that result plus the output zero point (apply_add_s's)."""

    def fits(v: int) -> bool:
        r = _scale16(v, m, s)
        return I32_MIN <= r <= I32_MAX and I32_MIN <= r + zp <= I32_MAX

    lo, hi = _value_bounds(False, m, s, zp)
    assert fits(lo) and fits(hi)
    assert hi >= 1 << 62 or not fits(hi + 1)
    assert lo <= -(1 << 62) or not fits(lo - 1)


@given(s=st.integers(2, 62))
def test_scale32_bounds_are_the_value_require(s: int) -> None:
    assert _value_bounds(True, 1 << 30, s, 0) == (-(1 << (s - 1)), (1 << (s - 1)) - 1)


@given(seed=st.integers(0, 2**32 - 1))
def test_ties_are_halfway_between_neighbours(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for target in (dtypes.FP8E4M3, dtypes.FP8E5M2, dtypes.FP16, dtypes.BF16):
        v = float_midpoints(rng, target, 64, float(target.normal_max))  # type: ignore[arg-type]
        v = v[np.abs(v) < float(target.normal_max)]  # type: ignore[arg-type]
        near = v.astype(target.storage).astype(np.float64)
        other = 2 * v - near  # the neighbour on the other side, if v is halfway
        assert (other.astype(target.storage).astype(np.float64) == other).all()
        assert (near != other).all()


@given(
    in_size=st.integers(1, 40),
    n=st.integers(1, 2048),
    d=st.integers(1, 4096),
    offset=st.integers(-2048, 4096),
    cap=st.integers(1, 64),
)
def test_borders_make_the_output_size_exact(
    in_size: int, n: int, d: int, offset: int, cap: int
) -> None:
    for border in _borders(in_size, n, d, offset, cap):
        assert -16 * n <= border < n
        numerator = (in_size - 1) * n - offset + border
        assert numerator % d == 0 and 0 <= numerator <= (cap - 1) * d


# -- targets and boundaries: CAST, RESCALE, RESIZE ------------------------------------

SPEC = load_spec()
LEVEL = SPEC.level("8K")


@cache
def targeted(op: str, mode: str, target: str | None, seed: int = 3, count: int = 8) -> list[Case]:
    """A job's cases, each one checked valid by the reference (the generator drops the
    others: a target that made invalid cases would make no vectors)."""
    cases = draw_examples(valid_cases(SPEC, op, mode, LEVEL, target=target), count, seed)
    assert cases
    for case in cases:
        outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
        assert outcome.kind == "valid", f"{case.describe()} [{target}]: {outcome}"
    return cases


def attributes_of(case: Case) -> dict:
    return case.graph.main.operators[0].attributes


TIE_PAIRS = [
    (op, m.mode)
    for op in ("CAST", "RESCALE", "RESIZE")
    for m in SPEC.operator(op).modes
    if tie_kinds(op, m)
]


@pytest.mark.parametrize(("op", "mode"), TIE_PAIRS)
def test_ties_target_lands_on_ties_and_near_ties(op: str, mode: str) -> None:
    found = [case_tie_facts(c, SPEC) for c in targeted(op, mode, "ties")]
    assert all(found), found
    assert set().union(*found) == {"tie", "near-tie"}


def test_rescale_ties_cover_both_signs_and_double_round() -> None:
    signs, double = set(), False
    for mode in ("8-bit to 8-bit", "32-bit to 16-bit"):
        for case in targeted("RESCALE", mode, "ties", seed=4, count=12):
            x = case.inputs["input"].astype(np.int64)
            signs |= {int(np.sign(v)) for v in np.unique(np.sign(x))}
            double |= bool(attributes_of(case)["double_round"]) and "near-tie" in case_tie_facts(
                case, SPEC
            )
    assert {-1, 1} <= signs and double


def test_resize_ties_cover_both_modes_offsets_and_scales() -> None:
    modes, offsets, ratios = set(), set(), set()
    for mode in ("fp16", "bf16", "fp32"):
        for case in targeted("RESIZE", mode, "ties", count=12):
            modes.add(attributes_of(case)["mode"])
            t = case.graph.main.tensors
            y_n, y_d, x_n, x_d = (int(v) for v in t["scale"].data)  # type: ignore[union-attr]
            offsets |= {int(np.sign(v)) for v in t["offset"].data}  # type: ignore[union-attr]
            ratios |= {(n > d) - (n < d) for n, d in ((y_n, y_d), (x_n, x_d))}
    assert modes == {"NEAREST_NEIGHBOR", "BILINEAR"}
    assert {-1, 1} <= offsets and {-1, 0, 1} <= ratios  # down, unit and up


FLAGS = ("scale32", "double_round", "per_channel", "input_unsigned", "output_unsigned")


@pytest.mark.parametrize("flag", FLAGS)
@pytest.mark.parametrize("value", [True, False])
def test_rescale_flag_targets(flag: str, value: bool) -> None:
    # Where the mode allows the value (scale32 never with i48, unsigned sides only
    # for 8- and 16-bit types), every case takes it.
    for mode in ("8-bit to 8-bit", "16-bit to 16-bit"):
        cases = targeted("RESCALE", mode, f"attr:{flag}={str(value).lower()}")
        assert all(attributes_of(c)[flag] is value for c in cases)


@pytest.mark.parametrize(
    ("mode", "name", "klass", "want"),
    [
        ("8-bit to 16-bit", "input_zp", "min", {-128}),
        ("8-bit to 16-bit", "input_zp", "max", {127, 255}),
        ("8-bit to 32-bit", "input_zp", "nonzero", None),
        ("16-bit to 8-bit", "input_zp", "nonzero", {32768}),  # uint16: 0 or 32768
        ("32-bit to 8-bit", "output_zp", "max", {127, 255}),
        ("16-bit to 16-bit", "output_zp", "max", {32768}),
        ("8-bit to 8-bit", "output_zp", "zero", {0}),
    ],
)
def test_rescale_zero_point_targets(mode: str, name: str, klass: str, want: set | None) -> None:
    for case in targeted("RESCALE", mode, f"attr:{name}={klass}"):
        zp = attributes_of(case)[name]
        assert zp != 0 if want is None else zp in want


def test_rescale_zero_point_target_the_type_cannot_take() -> None:
    # An i32 input has no zero point: the job draws as usual, valid.
    assert all(
        attributes_of(c)["input_zp"] == 0
        for c in targeted("RESCALE", "32-bit to 16-bit", "attr:input_zp=nonzero")
    )


def test_rescale_with_output_zero_point_spreads_without_saturating() -> None:
    spread = 0
    for seed in (2, 3, 4):
        for case in targeted("RESCALE", "8-bit to 8-bit", None, seed=seed, count=20):
            attrs = attributes_of(case)
            if attrs["output_zp"] == 0:
                continue
            out = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL).outputs["output"]
            o = np.asarray(out).astype(np.int64)
            lo, hi = (0, 255) if attrs["output_unsigned"] else (-128, 127)
            if o.size >= 16 and not ((o == lo) | (o == hi)).any() and o.max() - o.min() >= 16:
                spread += 1
    assert spread >= 2


def test_rescale_shifts_reach_their_ends() -> None:
    shifts = {
        int(s)
        for seed in (2, 3)
        for c in targeted("RESCALE", "16-bit to 32-bit", None, seed=seed, count=20)
        for s in c.graph.main.tensors["shift"].data  # type: ignore[union-attr]
    }
    assert {2, 62} <= shifts


@pytest.mark.parametrize("value", ["NEAREST_NEIGHBOR", "BILINEAR"])
def test_resize_mode_targets(value: str) -> None:
    for mode in ("fp16", "fp32"):
        assert all(
            attributes_of(c)["mode"] == value
            for c in targeted("RESIZE", mode, f"attr:mode={value}")
        )
    # An integer row fixes its mode: the target cannot move it.
    for c in targeted("RESIZE", "signed 8, nearest", f"attr:mode={value}"):
        assert attributes_of(c)["mode"] == "NEAREST_NEIGHBOR"


def test_cast_edge_target_has_specials_and_output_edges() -> None:
    for case in targeted("CAST", "fp32 to fp16", "edge"):
        v = case.inputs["input"].astype(np.float64)
        if v.size < 40:  # too small for the input's specials and fp16's edges
            continue
        assert np.isnan(v).any() and np.isinf(v).any() and ((v == 0) & np.signbit(v)).any()
        assert (v == 65504.0).any() and (v == 65520.0).any()  # max, max + half an ulp
        assert (v == 2.0**-24).any()  # the smallest subnormal


@pytest.mark.parametrize(("op", "mode"), [("CAST", "fp32 to fp16"), ("RESIZE", "fp16")])
def test_ordinary_draws_see_nan(op: str, mode: str) -> None:
    cases = [c for seed in (3, 4) for c in targeted(op, mode, None, seed=seed, count=15)]
    assert sum(bool(np.isnan(c.inputs["input"].astype(np.float64)).any()) for c in cases) >= 5

"""Dot-product cases as the spec means them: every Appendix A data set (and the free
values, S = -1) with at least MIN_DOT_PRODUCTS outputs, KS from short to long, the
local_bound and zero point targets honoured, integer cases that compute something.

The operators and modes come from the spec model and the compliance rules, not from
a list typed here."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.spec import load_spec
from reference.compliance import DOT_PRODUCT_OPERATORS, MIN_DOT_PRODUCTS
from reference.datasets import kernel_size
from reference.engine import evaluate
from reference.expectations import expect
from strategies.case import Case, CaseSpec
from strategies.draw import draw_examples
from strategies.recipes import RecipeContext, load_all
from strategies.recipes.data_sets import (
    DATA_SETS,
    KS_LONG,
    KS_LONG_LOW,
    log_uniform,
    sizes_with_product,
    unit,
)
from strategies.shapes import Budget

SPEC = load_spec()
LEVEL = SPEC.level("8K")


def _data_dtype(op: str, mode: str):
    o = SPEC.operator(op)
    rc = RecipeContext(SPEC, o, o.mode(mode), LEVEL, Budget())
    return rc.arg_dtype(o.inputs[0].name)


# The dot-product operators of the suite's revision (the table names later ones too).
IN_SPEC = DOT_PRODUCT_OPERATORS & set(SPEC.operators)


def _modes(kind: str) -> list:
    """(operator, mode) of every dot-product operator, float or integer modes."""
    out = []
    for op in sorted(IN_SPEC):
        for m in SPEC.operator(op).modes:
            if _data_dtype(op, m.mode).is_float == (kind == "float"):
                out.append(pytest.param(op, m.mode, id=f"{op}-{m.mode}"))
    return out


FLOAT_MODES = _modes("float")
INT_MODES = _modes("int")


def cases(
    op: str,
    mode: str,
    data_set: int | None = None,
    *,
    target: str | None = None,
    budget: Budget | None = None,
    count: int = 2,
    seed: int = 3,
) -> list[Case]:
    o = SPEC.operator(op)
    rc = RecipeContext(SPEC, o, o.mode(mode), LEVEL, budget or Budget(), data_set, target=target)
    fn = load_all()[op]

    @st.composite
    def draw_case(draw: st.DrawFn) -> Case:
        drawn = fn(draw, rc)
        return drawn.build(SPEC) if isinstance(drawn, CaseSpec) else drawn

    found = draw_examples(draw_case(), count, seed)
    assert found, f"{op} [{mode}] S={data_set} {target}: no case drawn"
    return found


def _ks(case: Case) -> int:
    main = case.graph.main
    op = main.operators[0]
    names = [a.name for a in SPEC.operator(op.op).inputs]
    shapes = {a: main.tensors[t].shape for a, t in zip(names, op.inputs, strict=False)}
    return kernel_size(op.op, shapes, op.attributes)


def _outputs(case: Case) -> list[int]:
    main = case.graph.main
    return [math.prod(main.tensors[n].shape) for n in main.outputs]


def _attributes(case: Case) -> dict:
    return case.graph.main.operators[0].attributes


def _valid_and_described(case: Case) -> None:
    outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
    assert outcome.kind == "valid", f"{case.describe()}: {outcome}"
    expectation = expect(case.graph, case.inputs, spec=SPEC, level=LEVEL, data_set=case.data_set)
    assert set(expectation.checks) == set(case.graph.main.outputs)


# -- the helpers, by hand ---------------------------------------------------------------


def test_unit_is_fibonacci_hashing_of_the_seed() -> None:
    @st.composite
    def u(draw: st.DrawFn) -> float:
        return unit(draw, "u")

    # Seed 0 (where Hypothesis shrinks) is the low end; seed 1 is 0x9E3779B1 / 2**32,
    # the golden ratio's fractional part to 9 digits.
    values = draw_examples(u(), 40, 1)
    assert min(values) >= 0.0 and max(values) < 1.0
    assert 0.0 in values or len(set(values)) > 30


def test_log_uniform_ends_and_middle() -> None:
    @st.composite
    def draws(draw: st.DrawFn) -> tuple[int, int, int]:
        return (
            log_uniform(draw, 7, 7, "same"),
            log_uniform(draw, 5, 2, "reversed"),
            log_uniform(draw, 1, 10_000, "wide"),
        )

    got = draw_examples(draws(), 60, 2)
    assert {g[0] for g in got} == {7} and {g[1] for g in got} == {5}
    wide = sorted(g[2] for g in got)
    assert wide[0] >= 1 and wide[-1] <= 10_000
    # Log-uniform: about half the draws below sqrt(10000) = 100 (uniform would put 1%).
    below = sum(w < 100 for w in wide)
    assert 15 <= below <= 45, wide


@settings(max_examples=300, deadline=None)
@given(st.data(), st.lists(st.integers(1, 70), min_size=1, max_size=4), st.integers(1, 5000))
def test_sizes_with_product_meet_a_wide_range(
    data: st.DataObject, caps: list[int], low: int
) -> None:
    high = data.draw(st.integers(2 * low, 4 * low), label="high")
    goal = data.draw(st.floats(1, 8 * low), label="goal")

    @st.composite
    def sizes(draw: st.DrawFn) -> list[int]:
        return sizes_with_product(draw, caps, low, high, goal, "sizes")

    got = data.draw(sizes())
    assert len(got) == len(caps) and all(1 <= d <= c for d, c in zip(got, caps, strict=True))
    if math.prod(caps) >= low:  # reachable: the product lands in the range
        assert low <= math.prod(got) <= high, (caps, low, high, got)
    else:  # as close to low as the caps go: every size at its cap
        assert got == caps


# -- every data set, enough dot products ------------------------------------------------------


@pytest.mark.parametrize(("op", "mode"), FLOAT_MODES)
def test_every_data_set_has_enough_outputs(op: str, mode: str) -> None:
    """At least MIN_DOT_PRODUCTS outputs per output tensor for every data set, the
    free values included, in the default budget; valid, and with a rule for each
    output."""
    for s in DATA_SETS:
        for case in cases(op, mode, s, count=1, seed=11 + s):
            assert case.data_set == s
            assert min(_outputs(case)) >= MIN_DOT_PRODUCTS, case
            for t in case.graph.main.tensors.values():
                assert math.prod(t.shape) <= Budget().max_elements
            _valid_and_described(case)


@pytest.mark.parametrize(("op", "mode"), FLOAT_MODES[::3])
def test_free_values_carry_special_values(op: str, mode: str) -> None:
    """S = -1: NaN and zeros among the inputs by construction (in the data, or in the
    weights when the data is too small to hold them)."""
    for case in cases(op, mode, -1, count=2, seed=5):
        main = case.graph.main
        values = [np.asarray(v) for v in case.inputs.values()]
        values += [t.data for t in main.tensors.values() if t.data is not None]
        wide = np.concatenate([v.astype(np.float64).reshape(-1) for v in values])
        assert np.isnan(wide).any() and (wide == 0).any(), case


@pytest.mark.parametrize("op", sorted(IN_SPEC))
def test_ks_long_reaches_the_hundreds(op: str) -> None:
    """ "ks:long" in a 16,384-element budget: KS of 256 or more, except REDUCE_SUM,
    whose KS times its 1,000 outputs is its input: 16384 // 1000 = 16 at most."""
    mode = next(p.values[1] for p in FLOAT_MODES if p.values[0] == op)
    budget = Budget(max_elements=16384)
    for case in cases(op, mode, 3, target=KS_LONG, budget=budget, count=2, seed=4):
        ks = _ks(case)
        assert min(_outputs(case)) >= MIN_DOT_PRODUCTS
        if op == "REDUCE_SUM":
            assert ks == 16
        else:
            assert ks >= KS_LONG_LOW, case


def test_ordinary_ks_spans_short_to_long() -> None:
    """Ordinary MATMUL draws: KS (= C) from single digits to past a hundred within
    16,384 elements (the cap is 16384 // 32 = 512 for 1,000 outputs)."""
    budget = Budget(max_elements=16384)
    ks = [_ks(c) for c in cases("MATMUL", "fp32 with fp32 accumulate", 0, budget=budget, count=30)]
    assert min(ks) < 10 and max(ks) > 100 and max(ks) <= 512, sorted(ks)


@pytest.mark.parametrize("op", ["MATMUL", "CONV2D", "REDUCE_SUM", "AVG_POOL2D"])
def test_large_reaches_the_input_aim(op: str) -> None:
    """min_elements per input tensor (2 for MATMUL: 32,768 each, up to 65,536): the
    inputs together reach 65,536, with at least 1,024 outputs."""
    mode = next(p.values[1] for p in FLOAT_MODES if p.values[0] == op)
    tensors = sum(a.type == "tensor_t" for a in SPEC.operator(op).inputs)
    per = -(-65536 // tensors)
    budget = Budget(max_elements=2 * per, max_dim=2048, min_elements=per)
    for case in cases(op, mode, 5, target="large", budget=budget, count=2, seed=6):
        main = case.graph.main
        inputs = sum(math.prod(t.shape) for n, t in main.tensors.items() if n not in main.outputs)
        assert inputs >= 65536 and min(_outputs(case)) >= 1024, case


# -- attribute targets ------------------------------------------------------------------------


def _local_bound_ops() -> list[str]:
    return [
        op
        for op in sorted(IN_SPEC)
        if any(a.name == "local_bound" for a in SPEC.operator(op).attributes)
    ]


@pytest.mark.parametrize("op", _local_bound_ops())
@pytest.mark.parametrize("value", [True, False])
def test_local_bound_target(op: str, value: bool) -> None:
    mode = next(p.values[1] for p in FLOAT_MODES if p.values[0] == op)
    target = f"attr:local_bound={'true' if value else 'false'}"
    for s in (0, 3):
        for case in cases(op, mode, s, target=target, count=2, seed=8):
            assert _attributes(case)["local_bound"] is value


def _zero_point_modes() -> list:
    out = []
    for op in sorted(IN_SPEC):
        zps = [a.name for a in SPEC.operator(op).attributes if a.name.endswith("_zp")]
        for p in INT_MODES:
            if p.values[0] == op:
                out += [pytest.param(op, p.values[1], zp, id=f"{p.id}-{zp}") for zp in zps]
    return out


def _zp_type(op: str, mode: str, zp: str):
    """The type of the operand a zero point belongs to (A_zp: A, input_zp: input ...)."""
    o = SPEC.operator(op)
    rc = RecipeContext(SPEC, o, o.mode(mode), LEVEL, Budget())
    operand = zp.removesuffix("_zp")
    names = {a.name for a in o.inputs}
    return rc.arg_dtype(operand if operand in names else o.inputs[0].name)


@pytest.mark.parametrize(("op", "mode", "zp"), _zero_point_modes())
def test_zero_point_targets(op: str, mode: str, zp: str) -> None:
    dt = _zp_type(op, mode, zp)
    i8 = dt.is_int and dt.bits == 8
    want = {"zero": 0, "min": -128, "max": 127}
    for value in ("zero", "nonzero", "min", "max"):
        for case in cases(op, mode, target=f"attr:{zp}={value}", count=1, seed=9):
            got = _attributes(case)[zp]
            if not i8:  # ERROR_IF for a non-zero zero point: always 0
                assert got == 0
            elif value == "nonzero":
                assert got != 0
            else:
                assert got == want[value]
            _valid_and_described(case)


# -- integer cases compute something ---------------------------------------------------------


@pytest.mark.parametrize(("op", "mode"), [p for p in INT_MODES if p.values[0] != "REDUCE_SUM"])
def test_integer_cases_are_not_all_zero_points(op: str, mode: str) -> None:
    """The data and the weights never sit entirely at their zero points (every product
    0); the zero points seen across the draws include 0 and non-zero values."""
    o = SPEC.operator(op)
    zp_names = [a.name for a in o.attributes if a.name.endswith("_zp")]
    seen: set[bool] = set()
    for case in cases(op, mode, count=12, seed=10):
        main = case.graph.main
        attrs = _attributes(case)
        for arg, zp in zip((a.name for a in o.inputs), zp_names, strict=False):
            values = case.inputs.get(arg)
            if values is None:
                values = main.tensors[arg].data
            values = np.asarray(values).astype(np.int64)
            if values.size > 1:
                assert (values != int(attrs[zp])).any(), f"{case.describe()}: {arg} at {zp}"
            seen.add(int(attrs[zp]) == 0)
        _valid_and_described(case)
    if _data_dtype(op, mode).bits == 8:
        assert seen == {True, False}


def test_ordinary_conv2d_geometry_varies() -> None:
    """Ordinary CONV2D draws reach strides, dilations and pads above 1, asymmetric
    pads, non-square kernels, channel counts off the multiples of 4 and dimensions
    above 16 (counts over 24 draws)."""
    found = cases("CONV2D", "fp32 with fp32 accumulate", 0, count=24, seed=12)
    attrs = [_attributes(c) for c in found]
    weights = [c.graph.main.tensors["weight"].shape for c in found]
    inputs = [c.graph.main.tensors["input"].shape for c in found]
    assert sum(max(a["stride"]) > 1 for a in attrs) >= 3
    assert sum(max(a["dilation"]) > 1 for a in attrs) >= 3
    assert sum(max(a["pad"]) > 1 for a in attrs) >= 3
    assert sum(a["pad"][0] != a["pad"][1] or a["pad"][2] != a["pad"][3] for a in attrs) >= 3
    assert sum(w[1] != w[2] for w in weights) >= 3
    assert sum(w[3] % 4 != 0 for w in weights) >= 3
    assert sum(max(s[1:3]) > 16 for s in inputs) >= 3

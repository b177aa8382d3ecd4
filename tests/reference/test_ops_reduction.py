"""Reference evaluator: REDUCE_ALL, REDUCE_ANY, REDUCE_MAX, REDUCE_MIN, REDUCE_PRODUCT,
REDUCE_SUM."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reference_helpers import assert_rule

from conformance.builder import single_operator_graph
from conformance.dtypes import DType
from conformance.spec import load_spec
from reference.arguments import INPUTS_CLAUSE, OUTPUTS_CLAUSE
from reference.engine import evaluate
from reference.outcome import Outcome

SPEC = load_spec()
REDUCTIONS = (
    "REDUCE_ALL",
    "REDUCE_ANY",
    "REDUCE_MAX",
    "REDUCE_MIN",
    "REDUCE_PRODUCT",
    "REDUCE_SUM",
)
I32_MAX = (1 << 31) - 1
I32_MIN = -(1 << 31)


def reduce(
    op: str,
    x: np.ndarray,
    dtype: DType | str,
    axis: int,
    out_shape: Sequence[int] | None = None,
) -> Outcome:
    shape = tuple(x.shape)
    if out_shape is None:
        out_shape = tuple(1 if i == axis else d for i, d in enumerate(shape))
    graph = single_operator_graph(
        op, [("x", shape, dtype)], [("y", out_shape, dtype)], {"axis": axis}
    )
    return evaluate(graph, {"x": x})


def output(outcome: Outcome) -> np.ndarray:
    assert outcome.kind == "valid", str(outcome)
    return outcome.outputs["y"]


def sample(rng: np.random.Generator, dt: DType, shape: Sequence[int]) -> np.ndarray:
    """Small values of any type: no integer sum of a few of them overflows."""
    if dt.kind == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dt.is_int:
        lo, hi = dt.min, dt.max
        assert isinstance(lo, int) and isinstance(hi, int)
        return rng.integers(max(lo, -100), min(hi, 100) + 1, size=shape)
    return rng.standard_normal(shape) * 4.0


# -- hand-checked values ---------------------------------------------------------


def test_reduce_all_and_any_by_hand() -> None:
    x = np.array([[True, True, False], [True, True, True]])
    # Row-wise AND: T&T&F = F, T&T&T = T.  Column-wise AND: [T&T, T&T, F&T].
    assert output(reduce("REDUCE_ALL", x, "bool", 1)).tolist() == [[False], [True]]
    assert output(reduce("REDUCE_ALL", x, "bool", 0)).tolist() == [[True, True, False]]
    y = np.array([[False, False, False], [False, True, False]])
    # Row-wise OR: F|F|F = F, F|T|F = T.
    assert output(reduce("REDUCE_ANY", y, "bool", 1)).tolist() == [[False], [True]]


def test_reduce_max_min_integers_by_hand() -> None:
    x = np.array([[-128, 5, 127], [-3, -2, -100]], dtype=np.int8)
    # max(-128, 5, 127) = 127, max(-3, -2, -100) = -2; min: -128 and -100.
    assert output(reduce("REDUCE_MAX", x, "i8", 1)).tolist() == [[127], [-2]]
    assert output(reduce("REDUCE_MIN", x, "i8", 1)).tolist() == [[-128], [-100]]
    # Column-wise: max(-128, -3) = -3, max(5, -2) = 5, max(127, -100) = 127.
    assert output(reduce("REDUCE_MAX", x, "i8", 0)).tolist() == [[-3, 5, 127]]


def test_reduce_max_min_propagate_nan() -> None:
    x = np.array([[1.0, np.nan, 3.0], [1.0, 2.0, 3.0], [-np.inf, 0.5, np.inf]])
    # apply_max_s / apply_min_s return NaN once either operand is NaN.
    mx = output(reduce("REDUCE_MAX", x, "fp32", 1))
    mn = output(reduce("REDUCE_MIN", x, "fp32", 1))
    assert np.isnan(mx[0, 0]) and np.isnan(mn[0, 0])
    # Row 1: max 3, min 1.  Row 2: max +inf, min -inf (infinities are ordinary values).
    assert mx[1:, 0].tolist() == [3.0, np.inf]
    assert mn[1:, 0].tolist() == [1.0, -np.inf]


@pytest.mark.parametrize(
    ("op", "values", "negative"),
    [
        # max keeps the accumulator on a tie (a >= b): the first zero wins.
        ("REDUCE_MAX", [0.0, -0.0], False),
        ("REDUCE_MAX", [-0.0, 0.0], True),
        ("REDUCE_MAX", [-1.0, -0.0, 0.0], True),
        # min replaces it on a tie (a < b is false): the last zero wins.
        ("REDUCE_MIN", [0.0, -0.0], True),
        ("REDUCE_MIN", [-0.0, 0.0], False),
        ("REDUCE_MIN", [1.0, 0.0, -0.0, 2.0], True),
    ],
)
def test_reduce_max_min_sign_of_zero(op: str, values: list[float], negative: bool) -> None:
    out = output(reduce(op, np.array([values]), "fp16", 1))
    assert out[0, 0] == 0.0 and bool(np.signbit(out[0, 0])) == negative


def test_reduce_product_by_hand() -> None:
    x = np.array([[1.5, -2.0, 4.0], [0.5, 0.5, 0.5], [np.inf, 0.0, 1.0]])
    out = output(reduce("REDUCE_PRODUCT", x, "fp32", 1))
    # 1.5 * -2 * 4 = -12; 0.5**3 = 0.125; inf * 0 is NaN.
    assert out[:2, 0].tolist() == [-12.0, 0.125]
    assert np.isnan(out[2, 0])


def test_reduce_sum_float_is_the_fp64_sum() -> None:
    x = np.array([[2048.0, 1.0, 1.0], [0.5, 0.25, 0.125]])
    out = output(reduce("REDUCE_SUM", x, "fp16", 1))
    # fp16 has 11 significant bits: 2048 + 1 rounds back to 2048, so an fp16 running
    # sum gives 2048.  The reference is the fp64 sum 2050 (the compliance bound allows
    # the difference).  0.5 + 0.25 + 0.125 = 0.875 exactly.
    assert out.tolist() == [[2050.0], [0.875]]


def test_reduce_sum_int32_by_hand() -> None:
    x = np.array([[I32_MAX, -1, 1], [-5, 3, 7]], dtype=np.int32)
    # Running sums: MAX, MAX-1, MAX (all fit); -5, -2, 5.
    assert output(reduce("REDUCE_SUM", x, "i32", 1)).tolist() == [[I32_MAX], [5]]


@pytest.mark.parametrize(
    "row",
    [
        [I32_MAX, 1, -1],  # running sum MAX + 1 overflows although the total fits
        [I32_MIN, -1],  # MIN - 1 underflows
        [1 << 30, 1 << 30],  # 2**31 = MAX + 1
    ],
)
def test_reduce_sum_int32_overflow_is_unpredictable(row: list[int]) -> None:
    outcome = reduce("REDUCE_SUM", np.array([row], dtype=np.int32), "i32", 1)
    assert_rule(
        outcome,
        "unpredictable",
        "c >= minimum_s<acc_t>() && c <= maximum_s<acc_t>() (apply_add_s)",
    )


# -- ERROR_IF / REQUIRE ------------------------------------------------------------


def _input_for(op: str, shape: Sequence[int]) -> tuple[np.ndarray, str]:
    if op in ("REDUCE_ALL", "REDUCE_ANY"):
        return np.ones(shape, dtype=bool), "bool"
    return np.ones(shape), "fp32"


@pytest.mark.parametrize("op", REDUCTIONS)
@pytest.mark.parametrize("axis", [-1, 2])
def test_axis_out_of_range_is_an_error(op: str, axis: int) -> None:
    x, dt = _input_for(op, (2, 3))
    outcome = reduce(op, x, dt, axis, out_shape=(2, 3))
    assert_rule(outcome, "error", "axis < 0 || axis >= rank(shape1)")


@pytest.mark.parametrize("op", REDUCTIONS)
def test_output_axis_not_one_is_an_error(op: str) -> None:
    x, dt = _input_for(op, (2, 3))
    assert_rule(reduce(op, x, dt, 1, out_shape=(2, 3)), "error", "shape[axis] != 1")


@pytest.mark.parametrize("op", REDUCTIONS)
def test_output_of_other_rank_is_an_error(op: str) -> None:
    # The output argument is declared "same rank as the input tensor".
    x, dt = _input_for(op, (2, 3))
    assert_rule(reduce(op, x, dt, 1, out_shape=(2, 1, 1)), "error", OUTPUTS_CLAUSE)


@pytest.mark.parametrize("op", REDUCTIONS)
def test_rank_zero_input_is_an_error(op: str) -> None:
    # input is declared with rank at least 1.
    x, dt = _input_for(op, ())
    assert_rule(reduce(op, x, dt, 0, out_shape=(1,)), "error", INPUTS_CLAUSE)


@pytest.mark.parametrize("op", REDUCTIONS)
@pytest.mark.parametrize("out_shape", [(3, 1), (1, 1)])
def test_output_other_dims_disagreeing_is_unpredictable(
    op: str, out_shape: tuple[int, int]
) -> None:
    # Not an ERROR_IF of the pseudocode, which reads the input at the output's
    # indices: a larger dimension fails tensor_read's REQUIRE.
    x, dt = _input_for(op, (2, 3))
    outcome = reduce(op, x, dt, 1, out_shape=out_shape)
    assert outcome.kind == "unpredictable", str(outcome)
    assert outcome.rule is not None and outcome.rule.kind == "REQUIRE"


# -- every mode ----------------------------------------------------------------------

MODES = [
    pytest.param(op, mode.mode, id=f"{op}-{mode.mode}")
    for op in REDUCTIONS
    for mode in SPEC.operator(op).modes
]


@pytest.mark.parametrize(("op", "mode"), MODES)
def test_every_mode_evaluates(op: str, mode: str) -> None:
    dt = SPEC.operator(op).mode(mode).dtype("in_out_t")
    rng = np.random.default_rng(7)
    for axis in range(3):
        x = sample(rng, dt, (2, 3, 4))
        out = output(reduce(op, x, dt, axis))
        assert out.shape == tuple(1 if i == axis else d for i, d in enumerate(x.shape))


# -- properties ----------------------------------------------------------------------

SPECIALS = st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan])


def literal_extreme(x: np.ndarray, axis: int, is_max: bool) -> np.ndarray:
    """The pseudocode's loop, element by element (test oracle, small tensors only)."""
    moved = np.moveaxis(x, axis, -1)
    out = np.empty(moved.shape[:-1])
    for index in np.ndindex(out.shape):
        acc = -np.inf if is_max else np.inf
        for v in moved[index]:
            if np.isnan(acc) or np.isnan(v):
                acc = np.nan
            elif is_max:
                acc = acc if acc >= v else v
            else:
                acc = acc if acc < v else v
        out[index] = acc
    return np.expand_dims(out, axis)


@given(data=st.data())
def test_reduce_max_min_match_the_pseudocode_loop(data: st.DataObject) -> None:
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3), label="shape")
    axis = data.draw(st.integers(0, len(shape) - 1), label="axis")
    op = data.draw(st.sampled_from(["REDUCE_MAX", "REDUCE_MIN"]), label="op")
    flat = data.draw(
        st.lists(SPECIALS, min_size=int(np.prod(shape)), max_size=int(np.prod(shape))),
        label="values",
    )
    x = np.array(flat, dtype=np.float64).reshape(shape)
    got = output(reduce(op, x, "bf16", axis))
    want = literal_extreme(x, axis, op == "REDUCE_MAX")
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))


@given(data=st.data())
def test_reduce_sum_int32_overflow_matches_the_running_sum(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 6), label="length")
    big = st.integers(I32_MIN, I32_MAX)
    row = data.draw(st.lists(big, min_size=n, max_size=n), label="row")
    running = np.cumsum(np.array(row, dtype=object))
    overflows = any(v < I32_MIN or v > I32_MAX for v in running)
    outcome = reduce("REDUCE_SUM", np.array([row], dtype=np.int32), "i32", 1)
    if overflows:
        assert outcome.kind == "unpredictable", str(outcome)
    else:
        assert output(outcome).tolist() == [[sum(row)]]


@given(data=st.data())
def test_reduce_all_is_not_any_of_not(data: st.DataObject) -> None:
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=4), label="shape")
    axis = data.draw(st.integers(0, len(shape) - 1), label="axis")
    bits = data.draw(
        st.lists(st.booleans(), min_size=int(np.prod(shape)), max_size=int(np.prod(shape))),
        label="values",
    )
    x = np.array(bits, dtype=bool).reshape(shape)
    all_ = output(reduce("REDUCE_ALL", x, "bool", axis))
    any_not = output(reduce("REDUCE_ANY", ~x, "bool", axis))
    assert np.array_equal(all_, ~any_not)

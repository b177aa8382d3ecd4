"""Boundary obligations (strategies/boundaries.py): the condition parser on the
pseudocode's clauses, broken cases moved to the first value past the boundary, and
the facts read back from written vectors, on TOSA 1.0."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance import dtypes
from conformance.claims import make_claim
from conformance.conditions import atoms, parse_condition, relational_atoms
from conformance.expressions import Call, ExpressionError, Name, Num, Subscript
from conformance.generate import generate
from conformance.generate_plan import Options
from conformance.spec import load_revision, spec_in_use
from reference.engine import evaluate
from reference.ops.data_layout import (
    PADDING_NEGATIVE_CLAUSE,
    REVERSE_AXIS_CLAUSE,
    SLICE_END_CLAUSE,
    SLICE_SHAPE_CLAUSE,
)
from reference.ops.tensor_pool_fft import KERNEL_CLAUSE, POOL_PAD_X_CLAUSE, POOL_PAD_Y_CLAUSE
from strategies.boundaries import (
    NO_STEP,
    at_boundary_facts,
    at_key,
    boundary_atoms,
    boundary_facts,
    first_past,
    integer_elements,
    past_key,
    snapped,
)
from strategies.case import Case, CaseSpec, TensorDraw, shape_tensor
from strategies.obligations import pair_obligations
from vectors.pack import open_pack

SPEC = load_revision("1.0")
LEVEL = SPEC.level("8K")


# -- the condition parser -----------------------------------------------------------------


def test_axis_clause_is_two_orderings() -> None:
    cond = parse_condition(REVERSE_AXIS_CLAUSE)  # axis < 0 || axis >= rank(shape)
    got = [(a.left, a.op, a.right) for a in atoms(cond)]
    assert got == [(Name("axis"), "<", Num(0)), (Name("axis"), ">=", Call("rank", "shape"))]


def test_pool_clauses_compare_attribute_elements() -> None:
    kernel = relational_atoms(KERNEL_CLAUSE)  # kernel_y < 1 || kernel_x < 1
    assert [(str(a.left), a.op, str(a.right)) for a in kernel] == [
        ("kernel_y", "<", "1"),
        ("kernel_x", "<", "1"),
    ]
    pad = relational_atoms(POOL_PAD_X_CLAUSE)  # pad_right >= kernel_x || pad_left >= kernel_x
    assert [a.names() for a in pad] == [{"pad_right", "kernel_x"}, {"pad_left", "kernel_x"}]


def test_subscripts_of_shape_values() -> None:
    # padding[i * 2] < 0 || padding[(i * 2) + 1] < 0
    first, second = relational_atoms(PADDING_NEGATIVE_CLAUSE)
    assert isinstance(first.left, Subscript) and first.left.name == "padding"
    assert str(second.left.index) == "i * 2 + 1" and second.right == Num(0)  # type: ignore[union-attr]
    (end,) = relational_atoms(SLICE_END_CLAUSE)  # start[index] + size[index] > shape1[index]
    assert end.op == ">" and end.names() == {"start", "size", "index", "shape1"}


def test_type_comparisons_are_no_integer_atoms() -> None:
    assert [str(a) for a in relational_atoms("in_t != i8_t && input_zp != 0")] == ["input_zp != 0"]
    assert relational_atoms("in_t == i32_t && output_unsigned") == []


@pytest.mark.parametrize(
    "clause",
    [
        "!scale32 && double_round",  # negation
        "is_same<in_t, i32_t> && input_unsigned",  # a template call
        "scale_y_n > (1 << 11) || scale_x_n > (1 << 11)",  # a shift
        "tensor_size(shape1) != tensor_size(shape)",  # another call
        "axis < 0 || axis >= max(1,rank(shapes1[0]))",
    ],
)
def test_clauses_outside_the_grammar_do_not_parse(clause: str) -> None:
    with pytest.raises(ExpressionError):
        parse_condition(clause)
    assert relational_atoms(clause) == []


def test_which_clauses_owe_boundaries() -> None:
    slice_i8 = SPEC.operator("SLICE")
    mode = slice_i8.mode("signed 8")
    assert boundary_atoms(slice_i8, mode, SLICE_END_CLAUSE)
    # shape[index] != size[index] checks the output's shape, not a parameter
    assert not boundary_atoms(slice_i8, mode, SLICE_SHAPE_CLAUSE)
    reshape = SPEC.operator("RESHAPE")
    keys = pair_obligations(SPEC, LEVEL, reshape, reshape.modes[0]).obligation_keys()
    assert not [k for k in keys if k.startswith("boundary:")]  # tensor_size(...) only
    reverse = SPEC.operator("REVERSE")
    obligations = pair_obligations(SPEC, LEVEL, reverse, reverse.mode("signed 8"))
    boundary = [o for o in obligations.obligations if o.key.startswith("boundary:")]
    assert [(o.key, o.target) for o in boundary] == [
        (past_key(REVERSE_AXIS_CLAUSE), None),
        (at_key(REVERSE_AXIS_CLAUSE), f"boundary:{REVERSE_AXIS_CLAUSE}"),
    ]


# -- the search -----------------------------------------------------------------------------


def test_first_past_gallops_then_bisects() -> None:
    calls: list[int] = []

    def from_four(x: int) -> bool:
        calls.append(x)
        return x >= 4

    assert first_past(1, 2**31 - 1, from_four) == 4
    assert len(calls) <= 6
    assert first_past(0, -9, lambda x: x < -3) == -4
    assert first_past(0, 1, lambda x: x >= 1) == 1  # already one step from the valid value


def test_first_past_keeps_to_its_budget() -> None:
    calls: list[int] = []

    def far(x: int) -> bool:
        calls.append(x)
        return x >= 10**6

    got = first_past(0, 2**31 - 1, far, budget=5)
    assert len(calls) == 5 and got >= 10**6 and far(got)


# -- snapping on hand-made cases --------------------------------------------------------------


def _reverse(axis: int) -> CaseSpec:
    x = np.arange(24, dtype=np.int8).reshape(2, 3, 4)
    return CaseSpec(
        "REVERSE",
        "signed 8",
        [TensorDraw("input1", x.shape, dtypes.I8, x)],
        [TensorDraw("output", x.shape, dtypes.I8)],
        {"axis": axis},
    )


def _max_pool(kernel: tuple[int, int]) -> CaseSpec:
    x = np.arange(16, dtype=np.int8).reshape(1, 4, 4, 1)
    attrs: dict[str, Any] = {"kernel": kernel, "stride": (1, 1), "pad": (0, 0, 0, 0)}
    return CaseSpec(
        "MAX_POOL2D",
        "signed 8",
        [TensorDraw("input", x.shape, dtypes.I8, x)],
        [TensorDraw("output", (1, 3, 3, 1), dtypes.I8)],
        attrs | {"nan_mode": "PROPAGATE"},
    )


def _slice(start: list[int]) -> CaseSpec:
    x = np.arange(8, dtype=np.int8).reshape(2, 4)
    return CaseSpec(
        "SLICE",
        "signed 8",
        [
            TensorDraw("input1", x.shape, dtypes.I8, x),
            shape_tensor("start", start),
            shape_tensor("size", [2, 2]),
        ],
        [TensorDraw("output", (2, 2), dtypes.I8)],
    )


def _snap(valid: CaseSpec, bad: CaseSpec, clause: str) -> Case:
    bad.kind, bad.rule_broken = "error", clause
    case = bad.build(SPEC)
    assert _rule(case) == clause
    return snapped(SPEC, LEVEL, valid.build(SPEC), case, clause)


def _rule(case: Any) -> str | None:
    outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=LEVEL)
    return None if outcome.rule is None else outcome.rule.clause


def _values(case: Case) -> dict[str, int]:
    return {
        f"{e.name}{'' if e.index is None else e.index}": v
        for e, v in integer_elements(SPEC, case.graph).items()
    }


def test_an_axis_break_snaps_to_the_rank() -> None:
    # rank 3: axis 7 is broken, axis 3 the first value past axis >= rank(shape)
    case = _snap(_reverse(1), _reverse(7), REVERSE_AXIS_CLAUSE)
    assert _values(case) == {"axis": 3}
    below = _snap(_reverse(1), _reverse(-6), REVERSE_AXIS_CLAUSE)
    assert _values(below) == {"axis": -1}
    facts, reasons = boundary_facts(SPEC, LEVEL, case, REVERSE_AXIS_CLAUSE)
    assert facts == {past_key(REVERSE_AXIS_CLAUSE)} and reasons == {}  # axis 2 is valid


def test_a_kernel_break_snaps_to_zero_and_names_the_rule_at_the_boundary() -> None:
    case = _snap(_max_pool((2, 2)), _max_pool((-5, 2)), KERNEL_CLAUSE)
    assert _values(case)["kernel0"] == 0 and _values(case)["kernel1"] == 2
    facts, reasons = boundary_facts(SPEC, LEVEL, case, KERNEL_CLAUSE)
    assert facts == {past_key(KERNEL_CLAUSE)}
    # kernel_y 1 with the 3x3 output of kernel 2: the output-shape rule fires there
    assert reasons[at_key(KERNEL_CLAUSE)].startswith("ERROR_IF OH != idiv_check(")


def _padded_pool(pad_top: int, oh: int) -> CaseSpec:
    case = _max_pool((2, 2))
    case.attributes["pad"] = (pad_top, 0, 0, 0)
    case.replace_tensor("output", shape=(1, oh, 3, 1))
    return case


def test_a_pad_snapped_to_its_kernel_gets_the_output_shape_of_that_pad() -> None:
    # IH 4, kernel 2, stride 1: pad_top 1 gives OH 4 (valid); the breaker's pad_top 9
    # left OH at 4.  The first value past pad_top >= kernel_y is 2, whose OH is
    # 4 + 2 - 2 + 1 = 5: with OH 4 a backend whose check is pad > kernel would still
    # refuse it by the OH rule, so the vector's output is refitted to 5.
    case = _snap(_padded_pool(1, 4), _padded_pool(9, 4), POOL_PAD_Y_CLAUSE)
    assert _values(case)["pad0"] == 2
    out = case.graph.main.tensors[case.graph.main.operators[0].outputs[0]]
    assert out.shape == (1, 5, 3, 1)
    assert _rule(case) == POOL_PAD_Y_CLAUSE


def test_a_shape_input_break_snaps_within_the_tensor() -> None:
    # shape1 [2, 4], size [2, 2]: start[1] = 3 is the first past start + size > shape1
    case = _snap(_slice([0, 1]), _slice([0, 9]), SLICE_END_CLAUSE)
    assert _values(case) == {"start0": 0, "start1": 3, "size0": 2, "size1": 2}


def test_two_changed_elements_are_left_unsnapped() -> None:
    valid, bad = _max_pool((2, 2)), _max_pool((-5, -7))
    bad.kind = "error"
    built = bad.build(SPEC)
    assert snapped(SPEC, LEVEL, valid.build(SPEC), built, KERNEL_CLAUSE) is built
    facts, reasons = boundary_facts(SPEC, LEVEL, built, KERNEL_CLAUSE)
    assert facts == set() and reasons == {past_key(KERNEL_CLAUSE): NO_STEP}


def _clamp(lo: int, hi: int) -> CaseSpec:
    x = np.arange(-4, 4, dtype=np.int8)
    return CaseSpec(
        "CLAMP",
        "signed 8",
        [TensorDraw("input", x.shape, dtypes.I8, x)],
        [TensorDraw("output", x.shape, dtypes.I8)],
        {"min_val": lo, "max_val": hi, "nan_mode": "PROPAGATE"},
    )


def test_swapped_bounds_walk_one_of_them_back() -> None:
    # [3, 10] broken by swapping to [10, 3]: both elements changed.  min_val walked back
    # alone (max_val 3 kept) first breaks max_val < min_val at 4.
    clause = "max_val < min_val"
    case = _snap(_clamp(3, 10), _clamp(10, 3), clause)
    assert _values(case) == {"min_val": 4, "max_val": 3}
    facts, _ = boundary_facts(SPEC, LEVEL, case, clause)
    assert facts == {past_key(clause)}


def test_a_clause_that_does_not_parse_is_left_alone() -> None:
    clause = "tensor_size(shape1) != tensor_size(shape)"
    valid, bad = _reverse(1), _reverse(7)
    built = bad.build(SPEC)
    assert snapped(SPEC, LEVEL, valid.build(SPEC), built, clause) is built
    assert boundary_facts(SPEC, LEVEL, built, clause) == (set(), {})


@given(data=st.data())
def test_every_axis_break_snaps_to_its_boundary(data: st.DataObject) -> None:
    rank = data.draw(st.integers(1, 4), label="rank")
    valid_axis = data.draw(st.integers(0, rank - 1), label="valid axis")
    broken = data.draw(
        st.one_of(st.integers(-(2**31), -1), st.integers(rank, 2**31 - 1)), label="broken axis"
    )
    x = np.zeros((2,) * rank, dtype=np.int8)

    def spec_of(axis: int) -> CaseSpec:
        return CaseSpec(
            "REVERSE",
            "signed 8",
            [TensorDraw("input1", x.shape, dtypes.I8, x)],
            [TensorDraw("output", x.shape, dtypes.I8)],
            {"axis": axis},
        )

    case = _snap(spec_of(valid_axis), spec_of(broken), REVERSE_AXIS_CLAUSE)
    assert _values(case) == {"axis": rank if broken >= rank else -1}


# -- facts of a written pack -------------------------------------------------------------------


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("boundaries") / "pack"
    claim = make_claim(SPEC, ["PRO-INT"], [], "8K")
    options = Options(ops="REVERSE|SLICE", examples=1, levels=False, chains=False)
    # in-process, generate makes 1.0 the process's spec: a module fixture must put the
    # session's back itself (the autouse fixture restores per test, after this runs)
    with spec_in_use(SPEC):
        generate(SPEC, claim, out, options=options)
    return out


def test_a_pack_meets_its_boundary_obligations_from_its_data(pack: Path) -> None:
    with open_pack(pack) as p:
        record = {(c["operator"], c["mode"]): c for c in p.coverage or []}
        i8 = record[("REVERSE", "signed 8")]
        assert past_key(REVERSE_AXIS_CLAUSE) in i8["met"]
        assert at_key(REVERSE_AXIS_CLAUSE) in i8["met"]
        errors = [e.name for e in p.entries if e.kind == "error" and e.operator == "REVERSE"]
        vectors = [p.load(n) for n in errors]
        at = [p.load(e.name) for e in p.entries if "_boundary-" in e.name]
    # re-read from the written data: one step of the axis leaves the clause
    axis = [v for v in vectors if (v.rule or {}).get("clause") == REVERSE_AXIS_CLAUSE]
    assert axis
    for v in axis:
        facts, _ = boundary_facts(SPEC, LEVEL, v, REVERSE_AXIS_CLAUSE)
        assert past_key(REVERSE_AXIS_CLAUSE) in facts
        value = int(v.graph.main.operators[0].attributes["axis"])
        rank = len(v.graph.main.tensors[v.graph.main.inputs[0]].shape)
        assert value in (-1, rank)
    # the valid vectors one step short of it are valid, and one step breaks the clause
    assert at and all(v.kind == "valid" and _rule(v) is None for v in at)
    target = f"boundary:{REVERSE_AXIS_CLAUSE}"
    short = [v for v in at if v.operator == "REVERSE"]
    assert short and all(at_boundary_facts(SPEC, LEVEL, v, target) for v in short)
    assert at_boundary_facts(SPEC, LEVEL, short[0], "edge") == set()

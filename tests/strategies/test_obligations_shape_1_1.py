"""Coverage obligations of TOSA 1.1's shape values: tensor_size_t's classes at the level
and EXP2_SHAPE's exponents, read from the data; the "edge" target of the 1.1 shape
recipes, which meets them by construction (and holds the values that break real
implementations); the classes a REQUIRE forbids, named with it; and the type-table
classes narrow float types lack (fp8ue8m0 has no zero), which do not apply."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np
import pytest

from conformance import dtypes
from conformance.builder import single_operator_graph
from conformance.spec import load_revision, spec_in_use
from reference.engine import evaluate
from strategies.case import Case
from strategies.draw import draw_examples
from strategies.fill import class_value, fill_values
from strategies.obligations import (
    forbidden_by_rule,
    pair_obligations,
    shape_value_range,
    value_classes,
    vector_facts,
)
from strategies.recipes.shape import BINARY_1_1, edge_pairs
from strategies.shapes import Budget
from strategies.valid import valid_cases
from strategies.values import ValueRange, edge_pool, place_edge_values

SPEC = load_revision("1.1-draft")
DRAFT = load_revision("2024-04-draft")
K8, NONE = SPEC.level("8K"), SPEC.level("none")
TOP, BOTTOM = (1 << 31) - 1, -(1 << 31)  # tensor_size_t at 8K: MAX_LOG2_SIZE = 31
CLASSES = ("min", "max", "zero", "one", "minus-one")


def keys(op: str, level=K8, spec=SPEC) -> list[str]:
    o = spec.operator(op)
    return pair_obligations(spec, level, o, o.mode("shape")).obligation_keys()


def shape_case(op: str, args: dict[str, Sequence[int]], out: int | None = None, **attrs) -> Case:
    """One 1.1 shape operator whose shape inputs are constants named after its
    arguments (SLICE_SHAPE's start and size: i32)."""
    op_spec = SPEC.operator(op)
    values = {
        a.name: np.asarray(args[a.name], np.int32 if a.type == "tensor_t" else np.int64)
        for a in op_spec.inputs
    }
    types = {a.name: "i32" if a.type == "tensor_t" else "shape" for a in op_spec.inputs}
    n = len(next(iter(args.values()))) if out is None else out
    outputs = [(o.name, (n,), "shape") for o in op_spec.outputs]
    graph = single_operator_graph(
        op,
        [(name, v.shape, types[name]) for name, v in values.items()],
        outputs,
        attrs,
        constants=values,
        strict=False,
        spec=SPEC,
    )
    return Case(graph, {}, op, "shape")


def outputs(case: Case, level=K8) -> list[int]:
    outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=level)
    assert outcome.kind == "valid", outcome
    return [int(v) for v in np.asarray(outcome.outputs["output"]).reshape(-1)]


# -- the obligations ------------------------------------------------------------------


def test_tensor_size_t_classes_are_the_levels() -> None:
    # 8K: MAX_LOG2_SIZE 31, so [-(1 << 31), (1 << 31) - 1] = [-2147483648, 2147483647];
    # no level: 63, the int64 range
    assert shape_value_range(SPEC, K8) == (-2147483648, 2147483647)
    assert shape_value_range(SPEC, NONE) == (-(2**63), 2**63 - 1)
    shape = dtypes.SHAPE
    assert class_value(shape, "max", shape_value_range(SPEC, K8)) == 2147483647
    assert class_value(shape, "min", shape_value_range(SPEC, K8)) == -2147483648
    assert class_value(shape, "minus-one", shape_value_range(SPEC, K8)) == -1
    assert shape_value_range(DRAFT, DRAFT.level("8K")) is None  # the draft: size_t


@pytest.mark.parametrize("op", [*BINARY_1_1, "ASSERT_EQUAL_SHAPE"])
def test_both_shape_operands_owe_every_class(op: str) -> None:
    k = keys(op)
    assert {f"value:{a}:{c}" for a in ("input1", "input2") for c in CLASSES} <= set(k)


def test_unary_slice_and_concat_owe_their_shape_inputs_classes() -> None:
    for op in ("LOG2_CEIL_SHAPE", "LOG2_FLOOR_SHAPE", "EXP2_SHAPE", "SLICE_SHAPE"):
        assert {f"value:input:{c}" for c in CLASSES} <= set(keys(op)), op
    # CONCAT_SHAPE's list: its members together
    assert {f"value:input:{c}" for c in CLASSES} <= set(keys("CONCAT_SHAPE"))
    # DIM has no shape input (its in_t classes are the ordinary ones); CONST_SHAPE none
    assert not any(k.startswith("value:") for k in keys("CONST_SHAPE"))


def test_exp2_owes_every_exponent_first() -> None:
    # REQUIRE(0 <= input < MAX_LOG2_SIZE): 31 exponents 0..30 at 8K, 63 at no level
    k = keys("EXP2_SHAPE")
    exponents = [x for x in k if "exponent=" in x]
    assert exponents == [f"value:input:exponent={e}" for e in range(31)]
    assert k[:31] == exponents  # an aimed job reaches them before a forbidden class
    assert len([x for x in keys("EXP2_SHAPE", NONE) if "exponent=" in x]) == 63
    assert not any("exponent=" in x for x in keys("LOG2_FLOOR_SHAPE"))


def test_the_drafts_shape_operators_owe_no_value_classes() -> None:
    # its packs stay as they were: size_t values, no edge jobs
    for op in ("ADD_SHAPE", "DIV_SHAPE", "CONCAT_SHAPE"):
        assert not any(k.startswith("value:") for k in keys(op, DRAFT.level("8K"), DRAFT))


# -- facts ------------------------------------------------------------------------------


def test_classes_are_read_at_the_level() -> None:
    case = shape_case("ADD_SHAPE", {"input1": [TOP, 0, -1], "input2": [BOTTOM, 1, 0]})
    at_8k = vector_facts(SPEC, case, K8)
    assert {"value:input1:max", "value:input1:zero", "value:input1:minus-one"} <= at_8k
    assert {"value:input2:min", "value:input2:one", "value:input2:zero"} <= at_8k
    assert "value:input1:min" not in at_8k and "value:input2:max" not in at_8k
    # at no level 2**31 - 1 is no end of tensor_size_t
    none = vector_facts(SPEC, case, NONE)
    assert "value:input1:max" not in none and "value:input2:min" not in none
    assert "value:input1:zero" in none
    # without a level (a drawn case) the classes are not read
    assert not any(k.startswith("value:") for k in vector_facts(SPEC, case))


def test_exponent_and_list_facts() -> None:
    facts = vector_facts(SPEC, shape_case("EXP2_SHAPE", {"input": [30, 0, 16]}), K8)
    assert {f"value:input:exponent={e}" for e in (0, 16, 30)} <= facts
    assert "value:input:exponent=1" not in facts
    assert "value:input:zero" in facts and "value:input:max" not in facts


# -- the edge target ----------------------------------------------------------------------


@cache
def edge(op: str, level: str = "8K", n: int = 8) -> list[Case]:
    with spec_in_use(SPEC):
        cases = draw_examples(
            valid_cases(SPEC, op, "shape", SPEC.level(level), target="edge"), n, 5
        )
    assert cases
    return cases


def shape_values(case: Case, k: int) -> list[int]:
    main = case.graph.main
    data = main.tensors[main.operators[0].inputs[k]].data
    assert data is not None
    return [int(v) for v in np.asarray(data).reshape(-1)]


EDGE_OPS = [*BINARY_1_1, "EXP2_SHAPE", "LOG2_CEIL_SHAPE", "LOG2_FLOOR_SHAPE", "SLICE_SHAPE",
            "CONCAT_SHAPE", "ASSERT_EQUAL_SHAPE"]  # fmt: skip


@pytest.mark.parametrize("level", ["8K", "none"])
@pytest.mark.parametrize("op", EDGE_OPS)
def test_edge_cases_are_valid_and_within_max_shape_len(op: str, level: str) -> None:
    lv = SPEC.level(level)
    for case in edge(op, level):
        outcome = evaluate(case.graph, case.inputs, spec=SPEC, level=lv)
        assert outcome.kind == "valid", f"{case.describe()}: {outcome}"
        for t in case.graph.main.tensors.values():
            if t.dtype.kind == "shape":
                assert t.shape[0] <= lv["MAX_SHAPE_LEN"]


# The classes each operator's REQUIREs allow in each shape input (the others: below).
ALLOWED = {
    **{op: {a: set(CLASSES) for a in ("input1", "input2")} for op in
       ("ADD_SHAPE", "SUB_SHAPE", "MUL_SHAPE", "MIN_SHAPE", "MAX_SHAPE")},
    # REQUIRE(input1 >= 0), REQUIRE(input2 >= 1)
    **{op: {"input1": {"max", "zero", "one"}, "input2": {"max", "one"}} for op in
       ("DIV_CEIL_SHAPE", "DIV_FLOOR_SHAPE", "MOD_SHAPE")},
    "LOG2_CEIL_SHAPE": {"input": {"max", "one"}},  # REQUIRE(in >= 1)
    "LOG2_FLOOR_SHAPE": {"input": {"max", "one"}},
    "SLICE_SHAPE": {"input": set(CLASSES)},
    "CONCAT_SHAPE": {"input": set(CLASSES)},
}  # fmt: skip


@pytest.mark.parametrize("level", ["8K", "none"])
@pytest.mark.parametrize("op", sorted(ALLOWED))
def test_one_edge_case_holds_every_class_the_requires_allow(op: str, level: str) -> None:
    lv = SPEC.level(level)
    for case in edge(op, level):
        facts = vector_facts(SPEC, case, lv)
        for arg, classes in ALLOWED[op].items():
            missing = {c for c in classes if f"value:{arg}:{c}" not in facts}
            assert not missing, (case.describe(), arg, missing)


def test_div_floor_edge_shows_an_fp32_division() -> None:
    # 2147483647 / 1 = 2147483647 exactly; in fp32 2147483647 is 2147483648 (24-bit
    # mantissa: the spacing at 2**31 is 2**7), so floor(fp32 a / fp32 b) = 2147483648.
    # 16777217 / 1 = 16777217; fp32 holds 16777216.
    for case in edge("DIV_FLOOR_SHAPE"):
        a, b, got = shape_values(case, 0), shape_values(case, 1), outputs(case)
        pairs = dict(zip(zip(a, b, strict=True), got, strict=True))
        assert pairs[(TOP, 1)] == 2147483647
        assert pairs[(16777217, 1)] == 16777217
        fp32 = np.floor(np.float32(TOP) / np.float32(1))
        assert int(fp32) == 2147483648 != pairs[(TOP, 1)]
        assert any(1 < d <= 3 and x > 1 << 24 for x, d in zip(a, b, strict=True))  # small divisors


def test_div_ceil_edge_has_the_sum_that_wraps() -> None:
    # ceil((2**31 - 1) / 2) = 2**30 = 1073741824; (a + b - 1) = 2**31 wraps in int32
    for case in edge("DIV_CEIL_SHAPE"):
        a, b = shape_values(case, 0), shape_values(case, 1)
        assert dict(zip(zip(a, b, strict=True), outputs(case), strict=True))[(TOP, 2)] == 1073741824


def test_min_max_edge_mixes_signs() -> None:
    for op, want in (("MIN_SHAPE", -1), ("MAX_SHAPE", TOP)):
        for case in edge(op):
            a, b = shape_values(case, 0), shape_values(case, 1)
            pairs = dict(zip(zip(a, b, strict=True), outputs(case), strict=True))
            assert pairs[(-1, TOP)] == want  # unsigned, -1 would be the largest


def test_arithmetic_edge_results_reach_both_ends() -> None:
    for op in ("ADD_SHAPE", "SUB_SHAPE", "MUL_SHAPE"):
        for case in edge(op):
            got = outputs(case)
            assert TOP in got and BOTTOM in got, op


def test_exp2_edge_parts_hold_every_exponent() -> None:
    # 31 exponents at 8K in parts of at most MAX_SHAPE_LEN = 16: two parts
    seen: set[int] = set()
    parts = set()
    for case in edge("EXP2_SHAPE", n=24):
        x = shape_values(case, 0)
        assert len(x) <= 16
        parts.add(frozenset(x))
        seen |= set(x)
        assert outputs(case) == [1 << e for e in x]
    assert seen == set(range(31)) and len(parts) == 2
    # no level: 63 exponents fit in one MAX_SHAPE_LEN of 64
    (whole,) = {frozenset(shape_values(c, 0)) for c in edge("EXP2_SHAPE", "none")}
    assert whole == set(range(63))


def test_log2_edge_holds_fp32_roundings_and_powers() -> None:
    for case in edge("LOG2_FLOOR_SHAPE"):
        x = shape_values(case, 0)
        # floor(log2(2**31 - 1)) = 30; fp32 rounds it to 2**31 (31)
        assert dict(zip(x, outputs(case), strict=True))[TOP] == 30
        assert {1, 2, 4, 8, (1 << 24) + 1, (1 << 25) - 1} <= set(x)


def test_assert_equal_edge_broadcasts_both_ways() -> None:
    flags = set()
    for case in edge("ASSERT_EQUAL_SHAPE", n=12):
        a, b = shape_values(case, 0), shape_values(case, 1)
        allow = bool(case.graph.main.operators[0].attributes["allow_broadcast"])
        flags.add(allow)
        assert {TOP, BOTTOM, 0, 1, -1} <= set(a) & set(b)
        if allow:
            pairs = list(zip(a, b, strict=True))
            assert (TOP, 1) in pairs and (1, BOTTOM) in pairs
        else:
            assert a == b
    assert flags == {True, False}


def test_edge_pairs_keep_the_requires_at_every_level() -> None:
    for level in (K8, NONE):
        bounds = shape_value_range(SPEC, level)
        assert bounds is not None
        lo, hi = bounds
        for op in BINARY_1_1:
            for a, b in edge_pairs(op, bounds):
                assert lo <= a <= hi and lo <= b <= hi
                if op in ("DIV_CEIL_SHAPE", "DIV_FLOOR_SHAPE", "MOD_SHAPE"):
                    assert a >= 0 and b >= 1
                exact = {"ADD_SHAPE": a + b, "SUB_SHAPE": a - b, "MUL_SHAPE": a * b}.get(op, lo)
                assert lo <= exact <= hi


# -- what a REQUIRE forbids: the reference's rule is the reason -----------------------------


@pytest.mark.parametrize(
    ("op", "arg", "cls", "rule"),
    [
        ("DIV_FLOOR_SHAPE", "input2", "zero", "REQUIRE input2[index] >= 1"),
        ("DIV_FLOOR_SHAPE", "input1", "minus-one", "REQUIRE input1[index] >= 0"),
        ("MOD_SHAPE", "input1", "min", "REQUIRE input1[index] >= 0"),
        ("LOG2_CEIL_SHAPE", "input", "zero", "REQUIRE in >= 1"),
        # 2**31 - 1 is far past MAX_LOG2_SIZE - 1 = 30
        ("EXP2_SHAPE", "input", "max", "REQUIRE input[index] < MAX_LOG2_SIZE"),
    ],
)
def test_a_forbidden_class_is_named_with_its_require(
    op: str, arg: str, cls: str, rule: str
) -> None:
    case = edge(op)[0]
    main = case.graph.main
    k = [a.name for a in SPEC.operator(op).inputs].index(arg)
    tname = main.operators[0].inputs[k]
    before = list(np.asarray(main.tensors[tname].data))
    reasons = fill_values(case, SPEC, K8, [(tname, dtypes.SHAPE, cls)])
    assert reasons == {f"{tname}:{cls}": rule}
    assert forbidden_by_rule(reasons[f"{tname}:{cls}"])
    assert list(np.asarray(main.tensors[tname].data)) == before  # nothing kept


def test_an_allowed_class_is_placed_at_the_levels_value() -> None:
    # ADD_SHAPE [5, 6] + [7, 8]: max (2**31 - 1) at the end needs the constant input2
    # at 0 there (2**31 - 1 + 8 fails apply_add_s's REQUIRE): [5, 2**31 - 1] + [7, 0]
    case = shape_case("ADD_SHAPE", {"input1": [5, 6], "input2": [7, 8]})
    main = case.graph.main
    name1, name2 = main.operators[0].inputs
    assert fill_values(case, SPEC, K8, [(name1, dtypes.SHAPE, "max")]) == {}
    assert [int(v) for v in np.asarray(main.tensors[name1].data)] == [5, 2147483647]
    assert [int(v) for v in np.asarray(main.tensors[name2].data)] == [7, 0]
    assert outputs(case) == [12, 2147483647]


# -- narrow float types: what their type table has (DIM's edge, item of issue 22) ---------


def test_fp8ue8m0_has_no_zero_sign_or_subnormals() -> None:
    classes, missing = value_classes(dtypes.dtype("fp8ue8m0"))
    assert set(classes) == {"nan", "normal-min", "finite-max"}
    assert missing["+0"] == missing["-0"] == "fp8ue8m0 has no zero"
    assert missing["subnormal-min"].startswith("fp8ue8m0 has no subnormals")
    o = SPEC.operator("DIM")
    pair = pair_obligations(SPEC, K8, o, o.mode("fp8ue8m0"))
    assert pair.not_applicable["value:input1:+0"] == "fp8ue8m0 has no zero"
    assert not {"value:input1:+0", "value:input1:subnormal-max"} & set(pair.obligation_keys())
    # fp4e2m1 has signed zeros and a subnormal (0.5), but no NaN
    classes, missing = value_classes(dtypes.dtype("fp4e2m1"))
    assert {"-0", "subnormal-min"} <= set(classes) and missing["nan"] == "fp4e2m1 has no NaN"


@pytest.mark.parametrize(("name", "codes"), [("fp4e2m1", 16), ("fp6e2m3", 64), ("fp6e3m2", 64)])
def test_edge_values_hold_every_fp4_and_fp6_encoding(name: str, codes: int) -> None:
    dt = dtypes.dtype(name)
    pool = edge_pool(dt, ValueRange())
    assert not any(np.isnan(float(v)) for v in pool)  # no NaN to place
    bits = {int(b) for b in np.asarray(pool, np.float64).astype(dt.storage).view(np.uint8)}
    assert len(bits) == codes
    # a lone operand of 64 elements (the edge budget) holds all of them: element 0 too
    a = np.zeros(64, dt.storage)
    place_edge_values(a, dt, ValueRange(), 0, 1)
    assert len({int(b) for b in a.view(np.uint8)}) == codes


def test_fp8ue8m0_edge_values_are_its_own() -> None:
    dt = dtypes.dtype("fp8ue8m0")
    pool = [float(v) for v in edge_pool(dt, ValueRange())]
    # 2**-127, 1, 2**127 and NaN (0xFF): no zero or negative value to become a NaN
    assert sorted(v for v in pool if not np.isnan(v)) == [2.0**-127, 1.0, 2.0**127]
    assert sum(np.isnan(v) for v in pool) == 1


@pytest.mark.parametrize("mode", ["fp4e2m1", "fp6e2m3", "fp6e3m2", "fp8ue8m0"])
def test_dim_edge_cases_of_the_narrow_types(mode: str) -> None:
    # was: KeyError 'fp6e3m2' (the NaN-encoding table had no 1.1 types)
    with spec_in_use(SPEC):
        # the edge job's budget: 64 elements at least (conformance.generate_jobs.job_budget)
        budget = Budget(min_elements=64)
        cases = draw_examples(valid_cases(SPEC, "DIM", mode, K8, budget, target="edge"), 3, 2)
    assert cases
    o = SPEC.operator("DIM")
    owed = pair_obligations(SPEC, K8, o, o.mode(mode)).obligation_keys()
    for case in cases:
        facts = vector_facts(SPEC, case, K8)
        values = {k for k in owed if k.startswith("value:")}
        assert values <= facts, values - facts

"""Reference evaluator: COND_IF and WHILE_LOOP."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reference_helpers import assert_rule

from conformance import dtypes
from conformance.builder import BlockBuilder, GraphBuilder
from conformance.graph import Graph
from conformance.spec import load_spec
from reference.arguments import ATTRIBUTES_CLAUSE, INPUTS_CLAUSE, TYPES_CLAUSE
from reference.engine import EvaluationError, evaluate
from reference.ops import control_flow
from reference.ops.control_flow import NESTING_CLAUSE
from reference.outcome import Outcome

SPEC = load_spec()
MAX_NESTING_8K = SPEC.level("8K")["MAX_NESTING"]
TYPES = TYPES_CLAUSE


def i32(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int32)


def const(b: BlockBuilder, name: str, value: np.ndarray) -> str:
    return b.tensor(name, value.shape, dtypes.from_numpy(value.dtype), data=value)


# -- COND_IF -------------------------------------------------------------------------


def cond_if_graph(
    cond_shape: Sequence[int] = (1,),
    *,
    cond_dtype: str = "bool",
    then_in: Sequence[tuple[Sequence[int], str]] = (((2,), "i32"),),
    else_in: Sequence[tuple[Sequence[int], str]] = (((2,), "i32"),),
    then_out: tuple[Sequence[int], str] = ((2,), "i32"),
    else_out: tuple[Sequence[int], str] = ((2,), "i32"),
    out: tuple[Sequence[int], str] = ((2,), "i32"),
) -> Graph:
    """main: y = COND_IF(c, x); then: x + 10 (via ADD); else: IDENTITY(x).

    The blocks' declared inputs/outputs can be made to disagree with the operator's
    lists; the branch bodies then only need to build, not to run.
    """
    g = GraphBuilder(strict=False)
    main = g.block("main")
    main.input("c", cond_shape, cond_dtype)
    main.input("x", (2,), "i32")
    main.tensor("y", *out)
    main.op("COND_IF", ["c", "x"], ["y"], then_graph="then", else_graph="else")
    main.output("y")
    for name, ins, result in (("then", then_in, then_out), ("else", else_in, else_out)):
        b = g.block(name)
        names = [b.input(f"a{k}", s, dt) for k, (s, dt) in enumerate(ins)]
        b.tensor("r", *result)
        if name == "then":
            b.op("ADD", [names[0], const(b, "ten", np.full(ins[0][0], 10, np.int32))], ["r"])
        else:
            b.op("IDENTITY", [names[0]], ["r"])
        b.output("r")
    return g.build()


def run_cond_if(graph: Graph, cond: bool, cond_shape: Sequence[int] = (1,)) -> Outcome:
    return evaluate(graph, {"c": np.full(cond_shape, cond), "x": i32(3, -4)})


@pytest.mark.parametrize("cond_shape", [(1,), (1, 1, 1)])
def test_cond_if_takes_each_branch(cond_shape: tuple[int, ...]) -> None:
    graph = cond_if_graph(cond_shape)
    taken = run_cond_if(graph, True, cond_shape)
    assert taken.kind == "valid", str(taken)
    np.testing.assert_array_equal(taken.outputs["y"], i32(13, 6))  # then: [3+10, -4+10]
    skipped = run_cond_if(graph, False, cond_shape)
    assert skipped.kind == "valid", str(skipped)
    np.testing.assert_array_equal(skipped.outputs["y"], i32(3, -4))  # else: identity


@given(data=st.data())
def test_cond_if_matches_numpy(data: st.DataObject) -> None:
    cond = data.draw(st.booleans(), label="condition")
    x = np.array(data.draw(st.lists(st.integers(-1000, 1000), min_size=2, max_size=2)), np.int32)
    outcome = evaluate(cond_if_graph(), {"c": np.array([cond]), "x": x})
    assert outcome.kind == "valid", str(outcome)
    np.testing.assert_array_equal(outcome.outputs["y"], x + 10 if cond else x)


def test_cond_if_runs_only_the_taken_branch() -> None:
    """A branch that would fail (CUSTOM cannot be evaluated) is harmless when not taken."""
    g = GraphBuilder()
    main = g.block("main")
    main.input("c", (1,), "bool")
    main.input("x", (2,), "i32")
    main.tensor("y", (2,), "i32")
    main.op("COND_IF", ["c", "x"], ["y"], then_graph="then", else_graph="else")
    main.output("y")
    then = g.block("then")
    then.input("a", (2,), "i32")
    then.tensor("r", (2,), "i32")
    then.op("IDENTITY", ["a"], ["r"])
    then.output("r")
    other = g.block("else")
    other.input("a", (2,), "i32")
    other.tensor("r", (2,), "i32")
    other.op("CUSTOM", ["a"], ["r"], operator_name="f", domain_name="d", implementation_attrs="")
    other.output("r")
    graph = g.build()
    assert evaluate(graph, {"c": np.array([True]), "x": i32(1, 2)}).kind == "valid"
    with pytest.raises(EvaluationError, match="CUSTOM"):
        evaluate(graph, {"c": np.array([False]), "x": i32(1, 2)})


def test_cond_if_float_branch() -> None:
    """Floating-point data flows through a branch; the block's result is the value
    rounded to its tensor type (what the COND_IF's consumers read)."""
    g = GraphBuilder()
    main = g.block("main")
    main.input("c", (1,), "bool")
    main.input("x", (1,), "fp16")
    main.tensor("y", (1,), "fp16")
    main.op("COND_IF", ["c", "x"], ["y"], then_graph="then", else_graph="else")
    main.output("y")
    for name in ("then", "else"):
        b = g.block(name)
        b.input("a", (1,), "fp16")
        b.tensor("r", (1,), "fp16")
        k = np.array([0.5 if name == "then" else -0.5], np.float16)
        b.op("ADD", ["a", const(b, "k", k)], ["r"])
        b.output("r")
    graph = g.build()
    x = np.array([1.25], np.float16)
    # 1.25 + 0.5 = 1.75 and 1.25 - 0.5 = 0.75, both exact in fp16.
    assert evaluate(graph, {"c": np.array([True]), "x": x}).outputs["y"][0] == 1.75
    assert evaluate(graph, {"c": np.array([False]), "x": x}).outputs["y"][0] == 0.75


@pytest.mark.parametrize(
    ("change", "clause"),
    [
        (
            {"then_in": [((2,), "i32"), ((2,), "i32")]},
            "tensor_list_shape(input_list) != tosa_input_shape(then_graph)",
        ),
        (
            {"then_in": [((3,), "i32")]},
            "tensor_list_shape(input_list) != tosa_input_shape(then_graph)",
        ),
        (
            {"then_in": [((2,), "i16")]},
            "tensor_list_shape(input_list) != tosa_input_shape(then_graph)",
        ),
        (
            {"else_in": [((2, 1), "i32")]},
            "tensor_list_shape(input_list) != tosa_input_shape(else_graph)",
        ),
        (
            {"else_in": [((2,), "i8")]},
            "tensor_list_shape(input_list) != tosa_input_shape(else_graph)",
        ),
        (
            {"then_out": ((1,), "i32")},
            "tensor_list_shape(output_list) != tosa_output_shape(then_graph)",
        ),
        (
            {"then_out": ((2,), "i8")},
            "tensor_list_shape(output_list) != tosa_output_shape(then_graph)",
        ),
        (
            {"else_out": ((1,), "i32")},
            "tensor_list_shape(output_list) != tosa_output_shape(else_graph)",
        ),
        (
            {"else_out": ((2,), "i16")},
            "tensor_list_shape(output_list) != tosa_output_shape(else_graph)",
        ),
    ],
)
def test_cond_if_list_mismatch(change: dict[str, object], clause: str) -> None:
    graph = cond_if_graph(**change)  # type: ignore[arg-type]
    for cond in (True, False):  # both branches are checked whichever is taken
        assert_rule(run_cond_if(graph, cond), "error", clause)


def test_cond_if_input_checks_come_before_output_checks() -> None:
    graph = cond_if_graph(else_in=[((3,), "i32")], then_out=((1,), "i32"))
    assert_rule(
        run_cond_if(graph, True),
        "error",
        "tensor_list_shape(input_list) != tosa_input_shape(else_graph)",
    )


@pytest.mark.parametrize("shape", [(2,), (1, 3), (0,)])
def test_cond_if_condition_must_have_one_element(shape: tuple[int, ...]) -> None:
    assert_rule(run_cond_if(cond_if_graph(shape), True, shape), "error", "tensor_size(shape) != 1")


def test_cond_if_condition_rank_and_type() -> None:
    # rank >= 1 per tosa.xml: checked by the engine as an argument of the operator.
    assert_rule(run_cond_if(cond_if_graph(()), True, ()), "error", INPUTS_CLAUSE)
    graph = cond_if_graph(cond_dtype="i8")
    outcome = evaluate(graph, {"c": np.array([1], np.int8), "x": i32(3, -4)})
    assert_rule(outcome, "error", TYPES)


def test_cond_if_unknown_block_is_an_attribute_error() -> None:
    graph = cond_if_graph()
    graph.main.operators[0].attributes["else_graph"] = "nowhere"  # the builder refuses it
    assert_rule(run_cond_if(graph, True), "error", ATTRIBUTES_CLAUSE)


def test_cond_if_modes_from_spec() -> None:
    for mode in SPEC.operator("COND_IF").modes:
        cond_t = mode.dtype("cond_t")
        graph = cond_if_graph(cond_dtype=cond_t.name)
        c = np.array([True]).astype(cond_t.storage)
        outcome = evaluate(graph, {"c": c, "x": i32(1, 2)})
        assert outcome.kind == "valid", f"{mode.mode}: {outcome}"


# -- WHILE_LOOP ------------------------------------------------------------------------


def counting_loop(
    limit: int = 10,
    *,
    shape: tuple[int, ...] = (1,),
    cond_out: tuple[Sequence[int], str] | None = None,
    cond_outputs: int = 1,
    cond_in: Sequence[tuple[Sequence[int], str]] | None = None,
    body_in: Sequence[tuple[Sequence[int], str]] | None = None,
    body_out: Sequence[tuple[Sequence[int], str]] | None = None,
    out: Sequence[tuple[Sequence[int], str]] | None = None,
) -> Graph:
    """(i, s) = WHILE_LOOP(i, s): while i < limit: i += 1; s += i.

    Every loop tensor has ``shape``; the other keyword arguments make the blocks'
    declarations disagree with the lists.
    """
    pair = [(shape, "i32"), (shape, "i32")]
    cond_out = cond_out or (shape, "bool")
    g = GraphBuilder(strict=False)
    main = g.block("main")
    main.input("i", shape, "i32")
    main.input("s", shape, "i32")
    for name, (out_shape, dt) in zip(["i_out", "s_out"], out or pair, strict=True):
        main.tensor(name, out_shape, dt)
    main.op("WHILE_LOOP", ["i", "s"], ["i_out", "s_out"], cond_graph="cond", body_graph="body")
    main.output("i_out")
    main.output("s_out")

    cond = g.block("cond")
    ins = [cond.input(f"c{k}", s, dt) for k, (s, dt) in enumerate(cond_in or pair)]
    cond.tensor("go", *cond_out)
    op = "GREATER" if cond_out[1] == "bool" else "SUB"
    cond.op(op, [const(cond, "limit", i32(limit).reshape(shape)), ins[0]], ["go"])
    cond.output("go")
    for k in range(1, cond_outputs):
        cond.output(ins[k])

    body = g.block("body")
    bi, bs = (body.input(f"b{k}", s, dt) for k, (s, dt) in enumerate(body_in or pair))
    names = ["i2", "s2"]
    for name, (out_shape, dt) in zip(names, body_out or pair, strict=True):
        body.tensor(name, out_shape, dt)
    body.op("ADD", [bi, const(body, "one", i32(1).reshape(shape))], ["i2"])
    body.op("ADD", [bs, "i2"], ["s2"])
    body.output("i2")
    body.output("s2")
    return g.build()


def run_loop(graph: Graph, i: int, s: int, shape: tuple[int, ...] = (1,)) -> Outcome:
    return evaluate(graph, {"i": i32(i).reshape(shape), "s": i32(s).reshape(shape)})


def test_while_loop_counts_to_ten() -> None:
    outcome = run_loop(counting_loop(10), 0, 0)
    assert outcome.kind == "valid", str(outcome)
    assert int(outcome.outputs["i_out"][0]) == 10
    assert int(outcome.outputs["s_out"][0]) == 55  # 1 + 2 + ... + 10 = 10 * 11 / 2


def test_while_loop_partial_and_zero_iterations() -> None:
    graph = counting_loop(10)
    partial = run_loop(graph, 7, 100)
    assert partial.outputs["i_out"][0] == 10
    assert partial.outputs["s_out"][0] == 127  # 100 + 8 + 9 + 10
    # The condition is false at once: the inputs come out unchanged.
    none = run_loop(graph, 12, 5)
    assert none.outputs["i_out"][0] == 12 and none.outputs["s_out"][0] == 5


@given(data=st.data())
def test_while_loop_sum_property(data: st.DataObject) -> None:
    limit = data.draw(st.integers(-3, 30), label="limit")
    i = data.draw(st.integers(-5, 30), label="start")
    s = data.draw(st.integers(-1000, 1000), label="sum")
    outcome = run_loop(counting_loop(limit), i, s)
    assert outcome.kind == "valid", str(outcome)
    steps = range(i + 1, limit + 1)
    assert int(outcome.outputs["i_out"][0]) == max(i, limit)
    assert int(outcome.outputs["s_out"][0]) == s + sum(steps)


def test_while_loop_body_requires_hold_per_iteration() -> None:
    """A REQUIRE inside the body fires in the iteration that breaks it: ADD overflows
    i32 once the running sum passes 2**31 - 1."""
    outcome = run_loop(counting_loop(10), 0, (1 << 31) - 30)
    # s: 2**31-30 +1 +2 ... +7 = 2**31-2, + 8 overflows.
    assert outcome.kind == "unpredictable", str(outcome)
    assert outcome.rule is not None and outcome.rule.operator == "ADD"


LIST_CASES = [
    (
        {"out": [((1,), "i32"), ((2,), "i32")]},
        "tensor_list_shape(input_list) != tensor_list_shape(output_list)",
    ),
    (
        {"out": [((1,), "i32"), ((1,), "i16")]},
        "tensor_list_shape(input_list) != tensor_list_shape(output_list)",
    ),
    (
        {"cond_in": [((1,), "i32")]},
        "tensor_list_shape(input_list) != tosa_input_shape(cond_graph)",
    ),
    (
        {"cond_in": [((1,), "i32"), ((1, 1), "i32")]},
        "tensor_list_shape(input_list) != tosa_input_shape(cond_graph)",
    ),
    (
        {"body_in": [((1,), "i32"), ((1,), "i8")]},
        "tensor_list_shape(input_list) != tosa_input_shape(body_graph)",
    ),
    (
        {"body_out": [((1,), "i32"), ((2,), "i32")]},
        "tensor_list_shape(input_list) != tosa_output_shape(body_graph)",
    ),
    ({"cond_out": ((2,), "bool")}, "tensor_size(tosa_output_shape(cond_graph)) != 1"),
    ({"cond_outputs": 2}, "tensor_size(tosa_output_shape(cond_graph)) != 1"),
    ({"cond_out": ((1,), "i32")}, "tosa_output_type(cond_graph) != bool_t"),
]


@pytest.mark.parametrize(("change", "clause"), LIST_CASES)
def test_while_loop_list_mismatch(change: dict[str, object], clause: str) -> None:
    # Checked before the first iteration, whether or not the body would run.
    for start in (0, 99):
        assert_rule(run_loop(counting_loop(**change), start, 0), "error", clause)  # type: ignore[arg-type]


@pytest.mark.parametrize("shape", [(), (1, 1, 1)])
def test_while_loop_condition_of_any_rank(shape: tuple[int, ...]) -> None:
    """The condition graph's output only needs one element; rank 0 is fine."""
    outcome = run_loop(counting_loop(3, shape=shape), 0, 0, shape)
    assert outcome.kind == "valid", str(outcome)
    assert int(outcome.outputs["s_out"].reshape(-1)[0]) == 6  # 1 + 2 + 3


def test_while_loop_modes_from_spec() -> None:
    for mode in SPEC.operator("WHILE_LOOP").modes:
        cond_t = mode.dtype("cond_t")
        outcome = run_loop(counting_loop(2, cond_out=((1,), cond_t.name)), 0, 0)
        assert outcome.kind == "valid", f"{mode.mode}: {outcome}"
        assert outcome.outputs["s_out"][0] == 3


def endless_loop() -> Graph:
    """The condition is a constant true: the loop never ends."""
    g = GraphBuilder()
    main = g.block("main")
    main.input("x", (1,), "i32")
    main.tensor("y", (1,), "i32")
    main.op("WHILE_LOOP", ["x"], ["y"], cond_graph="cond", body_graph="body")
    main.output("y")
    cond = g.block("cond")
    cond.input("a", (1,), "i32")
    cond.tensor("t", (1,), "bool", data=np.array([True]))
    cond.tensor("go", (1,), "bool")
    cond.op("IDENTITY", ["t"], ["go"])
    cond.output("go")
    body = g.block("body")
    body.input("a", (1,), "i32")
    body.tensor("b", (1,), "i32")
    body.op("IDENTITY", ["a"], ["b"])
    body.output("b")
    return g.build()


def test_while_loop_iteration_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(control_flow, "MAX_ITERATIONS", 25)
    with pytest.raises(EvaluationError, match="after 25 iterations"):
        evaluate(endless_loop(), {"x": i32(0)})


def test_while_loop_time_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(control_flow, "TIME_BUDGET_SECONDS", 0.0)
    with pytest.raises(EvaluationError, match="may not terminate"):
        evaluate(endless_loop(), {"x": i32(0)})


# -- nesting -----------------------------------------------------------------------------


def nested_graph(kinds: Sequence[str]) -> Graph:
    """A chain of control-flow operators, ``kinds[k]`` at nesting depth k.

    Every level block maps (x, n) -> (y, n + 1); the innermost computes y = x + 1.  A
    COND_IF level passes both through a constant-true condition; a WHILE_LOOP level
    runs the next level once (from a counter 0, while counter < 1) and adds 1 to n
    itself.  So y = x + 1 and the second output is n + 1 for any chain.
    """
    g = GraphBuilder()
    levels = [g.block("main" if k == 0 else f"level{k}") for k in range(len(kinds) + 1)]
    for k, b in enumerate(levels):
        x = b.input("x", (1,), "i32")
        n = b.input("n", (1,), "i32")
        b.tensor("y", (1,), "i32")
        b.tensor("m", (1,), "i32")
        if k == len(kinds):
            b.op("ADD", [x, const(b, "one", i32(1))], ["y"])
            b.op("ADD", [n, "one"], ["m"])
        elif kinds[k] == "COND_IF":
            const(b, "true", np.array([True]))
            nxt = levels[k + 1].name
            b.op("COND_IF", ["true", x, n], ["y", "m"], then_graph=nxt, else_graph=nxt)
        else:
            zero = const(b, "zero", i32(0))
            b.tensor("count", (1,), "i32")
            b.op(
                "WHILE_LOOP",
                [x, zero],
                ["y", "count"],
                cond_graph=f"cond{k}",
                body_graph=levels[k + 1].name,
            )
            b.op("ADD", [n, const(b, "one", i32(1))], ["m"])
            cond = g.block(f"cond{k}")
            cond.input("x", (1,), "i32")
            cond.input("c", (1,), "i32")
            cond.tensor("go", (1,), "bool")
            cond.op("GREATER", [const(cond, "one", i32(1)), "c"], ["go"])
            cond.output("go")
        b.output("y")
        b.output("m")
    return g.build()


CHAINS = {
    "cond_if": ["COND_IF"],
    "while_loop": ["WHILE_LOOP"],
    "mixed": ["COND_IF", "WHILE_LOOP"],
}


def chain(kind: str, length: int) -> list[str]:
    pattern = CHAINS[kind]
    return [pattern[k % len(pattern)] for k in range(length)]


@pytest.mark.parametrize("kind", list(CHAINS))
def test_nesting_up_to_max_nesting_is_valid(kind: str) -> None:
    # MAX_NESTING operators deep: the innermost sits at depth MAX_NESTING - 1.
    graph = nested_graph(chain(kind, MAX_NESTING_8K))
    outcome = evaluate(graph, {"x": i32(41), "n": i32(0)}, level="8K")
    assert outcome.kind == "valid", str(outcome)
    assert outcome.outputs["y"][0] == 42 and outcome.outputs["m"][0] == 1


@pytest.mark.parametrize("kind", list(CHAINS))
def test_nesting_at_max_nesting_is_an_error(kind: str) -> None:
    kinds = chain(kind, MAX_NESTING_8K + 1)
    outcome = evaluate(nested_graph(kinds), {"x": i32(41), "n": i32(0)}, level="8K")
    assert_rule(outcome, "error", NESTING_CLAUSE)
    assert outcome.rule is not None and outcome.rule.operator == kinds[-1]
    # The same graph is fine where the level allows deeper nesting.
    loose = evaluate(nested_graph(kinds), {"x": i32(41), "n": i32(0)}, level="none")
    assert loose.kind == "valid", str(loose)


def test_nesting_check_comes_first() -> None:
    """The innermost COND_IF passes one tensor too many: at depth MAX_NESTING the
    nesting ERROR_IF is the one reported, one level shallower the list check."""
    for length, clause in (
        (MAX_NESTING_8K + 1, NESTING_CLAUSE),
        (MAX_NESTING_8K, "tensor_list_shape(input_list) != tosa_input_shape(then_graph)"),
    ):
        graph = nested_graph(chain("cond_if", length))
        innermost = graph.block("main" if length == 1 else f"level{length - 1}")
        innermost.operators[-1].inputs.append("x")
        outcome = evaluate(graph, {"x": i32(0), "n": i32(0)}, level="8K")
        assert_rule(outcome, "error", clause)


def test_recursive_cond_if_stops_at_max_nesting() -> None:
    """A block that runs itself: the recursion ends in the nesting ERROR_IF."""
    g = GraphBuilder(strict=False)
    main = g.block("main")
    main.input("c", (1,), "bool")
    main.input("x", (1,), "i32")
    main.tensor("y", (1,), "i32")
    # input_list (c, x) is what "main" itself takes.
    main.op("COND_IF", ["c", "c", "x"], ["y"], then_graph="main", else_graph="main")
    main.output("y")
    outcome = evaluate(g.build(), {"c": np.array([True]), "x": i32(0)}, level="8K")
    assert_rule(outcome, "error", NESTING_CLAUSE)

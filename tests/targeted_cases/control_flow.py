"""Cases for the control-flow mutants (COND_IF, WHILE_LOOP)."""

from __future__ import annotations

from typing import Any

import numpy as np
from mutant_cases import Case

from conformance.builder import GraphBuilder
from targeted_cases import Cases, counter_condition


def cond_if(condition: Any, x: Any) -> Case:
    """then: x + x, else: x - x (zeros)."""
    g = GraphBuilder()
    main = g.block("main")
    then, other = g.block("then"), g.block("else")
    c = np.asarray(condition, dtype=bool)
    x = np.asarray(x, dtype=np.int32)
    for b, op in ((then, "ADD"), (other, "SUB")):
        b.input("a", x.shape, "i32")
        b.tensor("r", x.shape, "i32")
        b.op(op, ["a", "a"], ["r"])
        b.output("r")
    main.input("c", c.shape, "bool")
    main.input("x", x.shape, "i32")
    main.tensor("out", x.shape, "i32")
    main.op("COND_IF", ["c", "x"], ["out"], then_graph="then", else_graph="else")
    main.output("out")
    return Case(g.build(), {"c": c, "x": x})


def count_to(start: int, limit: int) -> Case:
    """while (i < limit) { i = i + 1; acc = acc + acc }."""
    g = GraphBuilder()
    main, cond, body = g.block("main"), g.block("cond"), g.block("body")
    for b in (cond, body):
        b.input("i", (1,), "i32")
        b.input("acc", (2,), "i32")
    counter_condition(cond, limit)
    body.tensor("one", (1,), "i32", data=np.array([1], np.int32))
    body.tensor("i2", (1,), "i32")
    body.tensor("acc2", (2,), "i32")
    body.op("ADD", ["i", "one"], ["i2"])
    body.op("ADD", ["acc", "acc"], ["acc2"])
    body.output("i2")
    body.output("acc2")
    main.input("i0", (1,), "i32")
    main.input("a0", (2,), "i32")
    main.tensor("i_out", (1,), "i32")
    main.tensor("a_out", (2,), "i32")
    main.op("WHILE_LOOP", ["i0", "a0"], ["i_out", "a_out"], cond_graph="cond", body_graph="body")
    main.output("i_out")
    main.output("a_out")
    inputs = {"i0": np.array([start], np.int32), "a0": np.array([3, -5], np.int32)}
    return Case(g.build(), inputs)


def loop_with_branch(iterations: int) -> Case:
    """for (i = 0; i < iterations; i++) acc = COND_IF(i < 1, acc + acc, acc - acc)."""
    g = GraphBuilder()
    main, cond, body = g.block("main"), g.block("cond"), g.block("body")
    then, other = g.block("then"), g.block("else")
    for b, op in ((then, "ADD"), (other, "SUB")):
        b.input("a", (2,), "i32")
        b.tensor("r", (2,), "i32")
        b.op(op, ["a", "a"], ["r"])
        b.output("r")
    for b in (cond, body):
        b.input("i", (1,), "i32")
        b.input("acc", (2,), "i32")
    counter_condition(cond, iterations)
    body.tensor("one", (1,), "i32", data=np.array([1], np.int32))
    body.tensor("first", (1,), "bool")
    body.tensor("i2", (1,), "i32")
    body.tensor("acc2", (2,), "i32")
    body.op("GREATER", ["one", "i"], ["first"])
    body.op("COND_IF", ["first", "acc"], ["acc2"], then_graph="then", else_graph="else")
    body.op("ADD", ["i", "one"], ["i2"])
    body.output("i2")
    body.output("acc2")
    main.input("i0", (1,), "i32")
    main.input("a0", (2,), "i32")
    main.tensor("i_out", (1,), "i32")
    main.tensor("a_out", (2,), "i32")
    main.op("WHILE_LOOP", ["i0", "a0"], ["i_out", "a_out"], cond_graph="cond", body_graph="body")
    main.output("i_out")
    main.output("a_out")
    inputs = {"i0": np.array([0], np.int32), "a0": np.array([3, -5], np.int32)}
    return Case(g.build(), inputs)


def _carry_loop(iterations: int, outputs: tuple[str, str]) -> Case:
    """while (i < iterations) { (a, b) = outputs of (a + b, a or b); i++ }."""
    g = GraphBuilder()
    main, cond, body = g.block("main"), g.block("cond"), g.block("body")
    for b in (cond, body):
        b.input("i", (1,), "i32")
        b.input("a", (2,), "i32")
        b.input("b", (2,), "i32")
    counter_condition(cond, iterations)
    body.tensor("one", (1,), "i32", data=np.array([1], np.int32))
    body.tensor("i2", (1,), "i32")
    body.tensor("s", (2,), "i32")
    body.op("ADD", ["i", "one"], ["i2"])
    body.op("ADD", ["a", "b"], ["s"])
    body.output("i2")
    for name in outputs:
        body.output(name)
    main.input("i0", (1,), "i32")
    main.input("a0", (2,), "i32")
    main.input("b0", (2,), "i32")
    for name in ("i_out", "a_out", "b_out"):
        main.tensor(name, (2,) if name != "i_out" else (1,), "i32")
    main.op(
        "WHILE_LOOP",
        ["i0", "a0", "b0"],
        ["i_out", "a_out", "b_out"],
        cond_graph="cond",
        body_graph="body",
    )
    for name in ("i_out", "a_out", "b_out"):
        main.output(name)
    inputs = {
        "i0": np.array([0], np.int32),
        "a0": np.array([1, 5], np.int32),
        "b0": np.array([0, -2], np.int32),
    }
    return Case(g.build(), inputs)


def fibonacci(iterations: int) -> Case:
    """(a, b) -> (a + b, a): output 2 passes input 1 through."""
    return _carry_loop(iterations, ("s", "a"))


def passthrough_same_position(iterations: int) -> Case:
    """(a, b) -> (a + b, b): a pass-through at its own position."""
    return _carry_loop(iterations, ("s", "b"))


CASES: Cases = {
    "while-loop-do-while": (
        [lambda: count_to(5, 5), lambda: count_to(9, 2)],
        [lambda: count_to(0, 3), lambda: count_to(4, 5)],
    ),
    "cond-if-first-branch-cached": (
        [lambda: loop_with_branch(2)],
        [
            lambda: cond_if([True], [1, 2]),
            lambda: cond_if([[False]], [3]),
            lambda: loop_with_branch(1),
        ],
    ),
    "condition-rank-above-1-rejected": (
        # a [1, 1] and a rank-5 condition are refused; rank 0 and 1 run as the reference
        [lambda: cond_if([[True]], [1, 2]), lambda: cond_if(np.ones((1,) * 5, bool), [5])],
        [lambda: cond_if([True], [1, 2]), lambda: cond_if(False, [3]), lambda: count_to(0, 3)],
    ),
    "while-loop-carried-in-place": (
        [lambda: fibonacci(3), lambda: fibonacci(1)],
        [
            lambda: fibonacci(0),
            lambda: count_to(0, 3),
            lambda: passthrough_same_position(3),
        ],
    ),
}

"""Cases for the variable mutants (VARIABLE, VARIABLE_WRITE, VARIABLE_READ)."""

from __future__ import annotations

from typing import Any

import numpy as np
from mutant_cases import Case

from conformance.builder import GraphBuilder
from targeted_cases import Cases, counter_condition


def variable_graph(initial: Any, write: Any | None, dt: str = "i8") -> Case:
    """VARIABLE uid 1 (with ``initial`` unless None), an optional VARIABLE_WRITE of the
    graph input ``w``, then VARIABLE_READ into the output."""
    shape = (2,)
    var_t = {"i8": "INT8", "fp32": "FP32", "fp16": "FP16"}[dt]
    storage = {"i8": np.int8, "fp32": np.float32, "fp16": np.float16}[dt]
    g = GraphBuilder()
    main = g.block("main")
    attrs: dict[str, Any] = {"uid": 1, "var_shape": shape, "type": var_t}
    if initial is not None:
        attrs["initial_value"] = np.asarray(initial, dtype=storage)
    main.op("VARIABLE", [], [], **attrs)
    inputs: dict[str, np.ndarray] = {}
    if write is not None:
        main.input("w", shape, dt)
        main.op("VARIABLE_WRITE", ["w"], [], uid=1)
        inputs["w"] = np.asarray(write, dtype=storage)
    main.tensor("r", shape, dt)
    main.op("VARIABLE_READ", [], ["r"], uid=1)
    main.output("r")
    return Case(g.build(), inputs)


def loop_accumulating(iterations: int) -> Case:
    """VARIABLE v = [10]; while (i < iterations) { v = v + 1; i++ }; read v."""
    g = GraphBuilder()
    main, cond, body = g.block("main"), g.block("cond"), g.block("body")
    init = np.array([10.0], np.float32)
    main.op("VARIABLE", [], [], uid=7, var_shape=(1,), type="FP32", initial_value=init)
    for b in (cond, body):
        b.input("i", (1,), "i32")
        b.input("last", (1,), "fp32")
    counter_condition(cond, iterations)
    body.tensor("one", (1,), "i32", data=np.array([1], np.int32))
    body.tensor("one8", (1,), "fp32", data=np.array([1.0], np.float32))
    body.tensor("i2", (1,), "i32")
    body.tensor("r", (1,), "fp32")
    body.tensor("r2", (1,), "fp32")
    body.op("ADD", ["i", "one"], ["i2"])
    body.op("VARIABLE_READ", [], ["r"], uid=7)
    body.op("ADD", ["r", "one8"], ["r2"])
    body.op("VARIABLE_WRITE", ["r2"], [], uid=7)
    body.output("i2")
    body.output("r")
    main.input("i0", (1,), "i32")
    main.input("l0", (1,), "fp32")
    main.tensor("i_out", (1,), "i32")
    main.tensor("l_out", (1,), "fp32")
    main.op("WHILE_LOOP", ["i0", "l0"], ["i_out", "l_out"], cond_graph="cond", body_graph="body")
    main.tensor("v", (1,), "fp32")
    main.op("VARIABLE_READ", [], ["v"], uid=7)
    main.output("v")
    inputs = {"i0": np.array([0], np.int32), "l0": np.array([0.0], np.float32)}
    return Case(g.build(), inputs)


CASES: Cases = {
    "variable-initial-value-ignored": (
        [lambda: variable_graph([3, -4], None), lambda: variable_graph([0.5, 0.0], None, "fp32")],
        [lambda: variable_graph([3, -4], [7, 8]), lambda: variable_graph(None, [1, 2])],
    ),
    "variable-read-folded-to-initial": (
        [
            lambda: variable_graph([3, -4], [7, 8]),
            lambda: variable_graph([1.0, 2.0], [0.0, 0.0], "fp16"),
        ],
        [
            lambda: variable_graph([3, -4], None),
            lambda: variable_graph(None, [1, 2]),
            lambda: variable_graph([3, -4], [3, -4]),
        ],
    ),
    "variable-read-hoisted-out-of-loop": (
        # three iterations add 1 each: 3 (a hoisted read makes every iteration write 1)
        [lambda: loop_accumulating(3), lambda: loop_accumulating(2)],
        [
            lambda: loop_accumulating(1),
            lambda: loop_accumulating(0),
            lambda: variable_graph([3, -4], [7, 8]),
        ],
    ),
}

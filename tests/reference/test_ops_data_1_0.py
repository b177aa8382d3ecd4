"""Reference evaluator under TOSA 1.0: the data-layout, scatter/gather, variable and
control-flow operators where 1.0 renames or retypes an argument (REVERSE's input1,
GATHER/SCATTER's index_t, VARIABLE's String name, the in_t/out_t of the variable
operators), allows rank 0 (RESHAPE, COND_IF's condition) or makes pad_const an input."""

from __future__ import annotations

import numpy as np
from reference_helpers import assert_rule

from conformance import dtypes
from conformance.builder import GraphBuilder, bind_types, find_mode
from conformance.spec import load_revision
from reference.engine import evaluate
from reference.ops import variable as var_ops
from reference.ops.data_layout import REVERSE_AXIS_CLAUSE
from reference.ops.scatter_gather import ONCE_CLAUSE, RANGE_CLAUSE
from reference.outcome import Outcome

SPEC = load_revision("1.0")
DRAFT = load_revision("2024-04-draft")


def _run(g: GraphBuilder, inputs: dict[str, np.ndarray]) -> Outcome:
    return evaluate(g.build(), inputs, spec=SPEC)


def test_reverse_reads_input1() -> None:
    g = GraphBuilder(SPEC)
    b = g.block()
    b.input("input1", (2, 3), dtypes.I8)
    b.tensor("y", (2, 3), dtypes.I8)
    b.op("REVERSE", ["input1"], ["y"], axis=1)
    b.output("y")
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int8)
    out = _run(g, {"input1": x})
    assert out.kind == "valid", str(out)
    assert out.outputs["y"].tolist() == [[3, 2, 1], [6, 5, 4]]  # each row backwards


def test_reverse_axis_error_if() -> None:
    g = GraphBuilder(SPEC, strict=False)
    b = g.block()
    b.input("input1", (2,), dtypes.I8)
    b.tensor("y", (2,), dtypes.I8)
    b.op("REVERSE", ["input1"], ["y"], axis=1)  # rank 1: axis 1 is out of range
    b.output("y")
    assert_rule(_run(g, {"input1": np.zeros(2, np.int8)}), "ERROR_IF", REVERSE_AXIS_CLAUSE)


def _gather(indices: list[list[int]]) -> Outcome:
    g = GraphBuilder(SPEC)
    b = g.block()
    b.input("values", (1, 3, 2), dtypes.I16)
    b.input("indices", (1, len(indices[0])), dtypes.I32)  # index_t = i32_t in every mode
    b.tensor("y", (1, len(indices[0]), 2), dtypes.I16)
    b.op("GATHER", ["values", "indices"], ["y"])
    b.output("y")
    values = np.arange(6, dtype=np.int16).reshape(1, 3, 2)  # rows [0,1] [2,3] [4,5]
    return _run(g, {"values": values, "indices": np.array(indices, np.int32)})


def test_gather_with_i32_indices() -> None:
    # rows 2, 0, 2 of [[0,1],[2,3],[4,5]]
    out = _gather([[2, 0, 2]])
    assert out.kind == "valid", str(out)
    assert out.outputs["y"].tolist() == [[[4, 5], [0, 1], [4, 5]]]
    assert_rule(_gather([[3]]), "REQUIRE", RANGE_CLAUSE)  # K = 3


def test_index_t_binds_from_the_tensor() -> None:
    # index_t is declared by GATHER and SCATTER in 1.0 and bound by each mode: an i32
    # indices tensor agrees with the mode, an int64 shape tensor does not.
    op_spec = SPEC.operator("GATHER")
    g = GraphBuilder(SPEC, strict=False)
    b = g.block()
    b.input("v", (1, 2, 1), dtypes.I8)
    b.input("k", (1, 1), dtypes.SHAPE)
    b.tensor("y", (1, 1, 1), dtypes.I8)
    b.op("GATHER", ["v", "k"], ["y"])
    graph = g.build()
    op = graph.main.operators[0]
    bound, _ = bind_types(op_spec, op, graph.main.tensors)
    assert bound["index_t"] is dtypes.SHAPE
    assert find_mode(op_spec, bound, op.attributes) is None


def test_scatter_with_i32_indices() -> None:
    g = GraphBuilder(SPEC)
    b = g.block()
    b.input("values_in", (1, 3, 1), dtypes.I8)
    b.input("indices", (1, 2), dtypes.I32)
    b.input("input", (1, 2, 1), dtypes.I8)
    b.tensor("values_out", (1, 3, 1), dtypes.I8)
    b.op("SCATTER", ["values_in", "indices", "input"], ["values_out"])
    b.output("values_out")
    feed: dict[str, np.ndarray] = {
        "values_in": np.array([[[7], [8], [9]]], np.int8),
        "indices": np.array([[2, 0]], np.int32),
        "input": np.array([[[1], [2]]], np.int8),
    }
    out = _run(g, feed)
    assert out.kind == "valid", str(out)
    # row 2 <- 1, row 0 <- 2, row 1 keeps 8
    assert out.outputs["values_out"].reshape(-1).tolist() == [2, 8, 1]
    feed["indices"] = np.array([[1, 1]], np.int32)
    assert_rule(_run(g, feed), "REQUIRE", ONCE_CLAUSE)


def test_variables_are_addressed_by_name() -> None:
    assert var_ops.address_attribute(SPEC.operator("VARIABLE")) == "name"
    assert var_ops.address_attribute(DRAFT.operator("VARIABLE")) == "uid"
    assert var_ops.element_type_variable(SPEC.operator("VARIABLE_READ")) == "out_t"
    assert var_ops.element_type_variable(DRAFT.operator("VARIABLE_READ")) == "var_t"
    g = GraphBuilder(SPEC)
    b = g.block()
    b.input("x", (2,), dtypes.I8)
    b.tensor("r1", (2,), dtypes.I8)
    b.tensor("r2", (2,), dtypes.I8)
    shape = np.array([2], np.int64)
    b.op("VARIABLE", [], [], name="a", var_shape=shape, type="INT8")
    b.op("VARIABLE", [], [], name="b", var_shape=shape, type="INT8")
    b.op("VARIABLE_WRITE", ["x"], [], name="a")
    b.op("VARIABLE_READ", [], ["r1"], name="a")
    b.op("VARIABLE_READ", [], ["r2"], name="b")  # declared, never written
    b.output("r1")
    g2 = GraphBuilder(SPEC)
    b2 = g2.block()
    b2.input("x", (2,), dtypes.I8)
    b2.tensor("r1", (2,), dtypes.I8)
    b2.op("VARIABLE", [], [], name="a", var_shape=shape, type="INT8")
    b2.op("VARIABLE_WRITE", ["x"], [], name="a")
    b2.op("VARIABLE_READ", [], ["r1"], name="a")
    b2.output("r1")
    x = np.array([5, -6], np.int8)
    ok = _run(g2, {"x": x})
    assert ok.kind == "valid", str(ok)
    assert ok.outputs["r1"].tolist() == [5, -6]  # what was written under name "a"
    assert_rule(_run(g, {"x": x}), "REQUIRE", "variable_tensor.is_written", "name 'b'")


def test_reshape_to_rank_0() -> None:
    # 1.0 allows rank 0: a one-element tensor reshapes to a scalar (shape input [])
    g = GraphBuilder(SPEC)
    b = g.block()
    b.input("input1", (1, 1), dtypes.I32)
    b.tensor("shape", (0,), dtypes.SHAPE, data=np.zeros(0, np.int64))
    b.tensor("y", (), dtypes.I32)
    b.op("RESHAPE", ["input1", "shape"], ["y"])
    b.output("y")
    out = _run(g, {"input1": np.array([[42]], np.int32)})
    assert out.kind == "valid", str(out)
    assert out.outputs["y"].tolist() == 42


def test_pad_const_is_an_input() -> None:
    g = GraphBuilder(SPEC)
    b = g.block()
    b.input("input1", (2,), dtypes.I8)
    b.tensor("padding", (2,), dtypes.SHAPE, data=np.array([1, 2], np.int64))
    b.tensor("pad_const", (1,), dtypes.I8, data=np.array([-9], np.int8))
    b.tensor("y", (5,), dtypes.I8)
    b.op("PAD", ["input1", "padding", "pad_const"], ["y"])
    b.output("y")
    out = _run(g, {"input1": np.array([3, 4], np.int8)})
    assert out.kind == "valid", str(out)
    assert out.outputs["y"].tolist() == [-9, 3, 4, -9, -9]  # one before, two after


def test_cond_if_with_a_rank_0_condition() -> None:
    # TOSA 1.0 declares condition with rank 0..MAX_RANK: a scalar condition is valid.
    g = GraphBuilder(SPEC)
    main = g.block("main")
    then, other = g.block("then"), g.block("else")
    for blk, op in ((then, "IDENTITY"), (other, "BITWISE_NOT")):
        blk.input("a", (2,), dtypes.I8)
        blk.tensor("b", (2,), dtypes.I8)
        blk.op(op, ["a"], ["b"])
        blk.output("b")
    main.input("c", (), dtypes.BOOL)
    main.input("x", (2,), dtypes.I8)
    main.tensor("y", (2,), dtypes.I8)
    main.op("COND_IF", ["c", "x"], ["y"], then_graph="then", else_graph="else")
    main.output("y")
    x = np.array([1, -2], np.int8)
    taken = _run(g, {"c": np.array(True), "x": x})
    assert taken.kind == "valid", str(taken)
    assert taken.outputs["y"].tolist() == [1, -2]
    other_way = _run(g, {"c": np.array(False), "x": x})
    assert other_way.outputs["y"].tolist() == [-2, 1]  # ~1 = -2, ~-2 = 1

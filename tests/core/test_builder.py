"""The graph builder: names, references, attributes and type binding against the spec."""

import numpy as np
import pytest

from conformance import dtypes
from conformance.builder import GraphBuilder, GraphError, check_operator, single_operator_graph
from conformance.graph import Operator
from conformance.spec import load_spec

SPEC = load_spec()
CONV_ATTRS = dict(
    pad=(0, 0, 0, 0), stride=(1, 1), dilation=(1, 1), acc_type="INT32", input_zp=0, weight_zp=0
)


def _conv(builder: GraphBuilder, out_dtype: str = "i32", **attrs):
    b = builder.block()
    b.input("x", [1, 8, 8, 4], "i8")
    b.input("w", [2, 3, 3, 4], "i8")
    b.input("bias", [2], "i32")
    b.tensor("y", [1, 6, 6, 2], out_dtype)
    b.op("CONV2D", ["x", "w", "bias"], ["y"], **{**CONV_ATTRS, **attrs})
    b.output("y")
    return b


def test_a_valid_graph() -> None:
    g = GraphBuilder()
    _conv(g)
    graph = g.build()
    assert graph.main.name == "main"
    assert graph.main.operators[0].op == "CONV2D"
    assert graph.main.inputs == ["x", "w", "bias"]
    assert graph.main.tensors["y"].dtype is dtypes.I32


def test_mode_is_found() -> None:
    g = GraphBuilder()
    b = _conv(g)
    mode, problems = check_operator(SPEC, b.block.operators[0], b.block.tensors)
    assert problems == []
    assert mode.mode == "signed 8x8 with int32 accumulate"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"out_dtype": "fp16"}, "CONV2D output is fp16 but out_t is already i32"),
        ({"dilations": (1, 1)}, "CONV2D has no attribute 'dilations'"),
        ({"stride": 2}, "attribute 'stride': expected a list of integers"),
        ({"acc_type": 3}, "attribute 'acc_type': expected an enumeration value name"),
    ],
)
def test_spec_problems_raise_when_strict(change, message) -> None:
    with pytest.raises(GraphError, match=message):
        _conv(GraphBuilder(), **change)


def test_missing_attribute_and_optional_one() -> None:
    attrs = dict(CONV_ATTRS)
    del attrs["dilation"]
    op = Operator("CONV2D", ["x", "w", "bias"], ["y"], attrs)
    g = GraphBuilder()
    b = _conv(g)
    _, problems = check_operator(SPEC, op, b.block.tensors)
    assert problems == ["CONV2D is missing attribute 'dilation'"]
    # local_bound is optional: absent or present, both fine
    op.attributes = {**CONV_ATTRS, "local_bound": True}
    assert check_operator(SPEC, op, b.block.tensors)[1] == []


def test_not_strict_collects_problems() -> None:
    g = GraphBuilder(strict=False)
    _conv(g, out_dtype="fp16")
    assert g.problems and "out_t" in g.problems[0]
    g.build()


def test_structural_errors_always_raise() -> None:
    g = GraphBuilder(strict=False)
    b = g.block()
    b.input("x", [2], "i32")
    with pytest.raises(GraphError, match="tensor 'x' is declared twice"):
        b.tensor("x", [2], "i32")
    with pytest.raises(GraphError, match="tensor 'nope' is not declared"):
        b.op("ABS", ["nope"], ["x"])
    b.tensor("y", [2], "i32")
    b.op("ABS", ["x"], ["y"])
    with pytest.raises(GraphError, match="'y' already has a producer"):
        b.op("ABS", ["x"], ["y"])
    with pytest.raises(GraphError, match="ABS takes 1 inputs"):
        b.tensor("z", [2], "i32")
        b.op("ABS", ["x", "y"], ["z"])
    with pytest.raises(GraphError, match="output 'q' is not a tensor"):
        b.output("q")
    with pytest.raises(GraphError, match="data shape"):
        b.tensor("c", [3], "i32", data=np.zeros(2))


def test_unknown_operator() -> None:
    with pytest.raises(GraphError, match="unknown operator 'CONV4D'"):
        single_operator_graph("CONV4D", [("a", [1], "i8")], [("b", [1], "i8")])


def test_list_arguments_take_the_rest() -> None:
    g = single_operator_graph(
        "CONCAT",
        [("a", [1, 2], "fp32"), ("b", [3, 2], "fp32"), ("c", [1, 2], "fp32")],
        [("out", [5, 2], "fp32")],
        {"axis": 0},
    )
    assert g.main.operators[0].inputs == ["a", "b", "c"]


def test_shape_inputs_must_be_shapes() -> None:
    with pytest.raises(GraphError, match="RESHAPE shape must be a shape, got i32"):
        single_operator_graph(
            "RESHAPE",
            [("a", [2, 3], "i8"), ("s", [2], "i32")],
            [("b", [3, 2], "i8")],
            constants={"s": np.array([3, 2])},
        )
    single_operator_graph(
        "RESHAPE",
        [("a", [2, 3], "i8"), ("s", [2], "shape")],
        [("b", [3, 2], "i8")],
        constants={"s": np.array([3, 2])},
    )


def test_control_flow_blocks_must_exist() -> None:
    g = GraphBuilder()
    b = g.block()
    b.input("c", [1], "bool")
    b.input("x", [2], "i32")
    b.tensor("y", [2], "i32")
    b.op("COND_IF", ["c", "x"], ["y"], then_graph="then", else_graph="else")
    with pytest.raises(GraphError, match="names block 'then', which the graph does not have"):
        g.build()
    for name in ("then", "else"):
        nb = g.block(name)
        nb.input(f"{name}_x", [2], "i32")
        nb.output(f"{name}_x")
    assert [blk.name for blk in g.build().blocks()] == ["main", "then", "else"]

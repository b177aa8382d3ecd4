"""A 1.0 graph's parameters laid out as the draft declares them, for backends that read
the draft's layout (LiteRT)."""

import numpy as np

from conformance import dtypes
from conformance.backends.revision.parameters import parameters_as_attributes
from conformance.builder import GraphBuilder
from conformance.spec import load_revision

V10, DRAFT = load_revision("1.0"), load_revision("2024-04-draft")


def test_zero_points_and_shift_go_back_to_the_draft_layout() -> None:
    g = GraphBuilder(V10)
    b = g.block()
    b.input("x", (2,), dtypes.I8)
    b.tensor("zp_in", (1,), dtypes.I8, data=np.array([3], np.int8))
    b.tensor("zp_out", (1,), dtypes.I8, data=np.array([-5], np.int8))
    b.tensor("y", (2,), dtypes.I8)
    b.op("NEGATE", ["x", "zp_in", "zp_out"], ["y"])
    b.input("a", (2,), dtypes.I32)
    b.tensor("shift", (1,), dtypes.I8, data=np.array([7], np.int8))
    b.tensor("z", (2,), dtypes.I32)
    b.op("MUL", ["a", "a", "shift"], ["z"])
    b.output("y")
    b.output("z")
    graph = g.build()
    laid = parameters_as_attributes(graph, V10, DRAFT)
    negate, mul = laid.main.operators
    # NEGATE's zero points are attributes of the draft, with their values 3 and -5.
    assert negate.inputs == ["x"] and negate.attributes == {"input1_zp": 3, "output_zp": -5}
    # MUL's shift stays an input (so the draft declares it), of rank 0 there.
    assert mul.inputs == ["a", "a", "shift"] and laid.main.tensors["shift"].shape == ()
    assert int(laid.main.tensors["shift"].data) == 7
    # The graph it was given is not changed.
    assert graph.main.operators[0].inputs == ["x", "zp_in", "zp_out"]

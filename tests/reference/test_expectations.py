"""expect(): the descriptor and bound each graph output is checked with."""

import numpy as np

from conformance.builder import single_operator_graph
from reference.compliance import Mode
from reference.expectations import expect

RNG = np.random.default_rng(7)


def test_reduce_sum_is_a_dot_product_with_its_abs_pass() -> None:
    g = single_operator_graph(
        "REDUCE_SUM", [("x", [4, 3], "fp32")], [("y", [1, 3], "fp32")], {"axis": 0}
    )
    x = np.array([[1, -2, 0.5], [1, 2, 0.5], [-1, 2, 0.5], [1, -2, 0.5]], np.float32)
    e = expect(g, {"x": x}, data_set=0)
    c = e.checks["y"]
    assert c.descriptor.mode is Mode.DOT_PRODUCT
    assert c.descriptor.params.ks == 4 and c.descriptor.params.data_set == 0
    # abs pass: sum of |x| down the axis, by hand
    assert c.bound.tolist() == [[4.0, 8.0, 2.0]]
    assert e.outcome.outputs["y"].tolist() == [[2.0, 0.0, 2.0]]
    assert e.check("y", np.array([[2, 0, 2]], np.float32)).passed
    assert not e.check("y", np.array([[2.01, 0, 2]], np.float32)).passed


def test_abs_error_operators_get_their_bound_tensor() -> None:
    g = single_operator_graph("EXP", [("x", [3], "fp16")], [("y", [3], "fp16")])
    x = np.array([0.0, 1.0, -2.0], np.float16)
    e = expect(g, {"x": x})
    assert e.checks["y"].descriptor.mode is Mode.ABS_ERROR
    assert e.checks["y"].bound.tolist() == [1.0, 2.0, 3.0]  # 1 + |x|
    assert e.check("y", np.exp(x.astype(np.float32)).astype(np.float16)).passed


def test_ulp_exact_and_integer_operators() -> None:
    g = single_operator_graph("ADD", [("a", [8], "fp32"), ("b", [8], "fp32")], [("y", [8], "fp32")])
    a = RNG.standard_normal(8).astype(np.float32)
    e = expect(g, {"a": a, "b": a})
    assert e.checks["y"].descriptor.mode is Mode.ULP
    g = single_operator_graph("ADD", [("a", [8], "i32"), ("b", [8], "i32")], [("y", [8], "i32")])
    e = expect(g, {"a": np.arange(8), "b": np.arange(8)})
    assert e.checks["y"].descriptor.mode is Mode.EXACT
    assert not e.check("y", np.arange(8, dtype=np.int32)).passed
    assert e.check("y", 2 * np.arange(8, dtype=np.int32)).passed


def test_no_checks_for_an_invalid_graph() -> None:
    g = single_operator_graph("ADD", [("a", [1], "i32"), ("b", [1], "i32")], [("y", [1], "i32")])
    e = expect(g, {"a": [2**31 - 1], "b": [1]})
    assert e.outcome.kind == "unpredictable" and e.checks == {}

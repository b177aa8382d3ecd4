"""What the tests of ``reference`` share: the assertions (one vocabulary, one message
format) and the graphs of the dot-product operators that two test modules build."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from conformance.builder import single_operator_graph
from conformance.dtypes import dtype
from conformance.spec import Spec
from reference.engine import evaluate
from reference.outcome import Outcome

# An outcome kind and the rule kinds that can give it.
_RULE_KINDS = {"error": ("ERROR_IF",), "unpredictable": ("REQUIRE", "LEVEL_CHECK")}
_OUTCOME_OF = {"ERROR_IF": "error", "REQUIRE": "unpredictable", "LEVEL_CHECK": "unpredictable"}


def assert_rule(outcome: Outcome, kind: str, clause: str, detail: str = "") -> None:
    """The graph is in error or unpredictable by exactly this clause.

    ``kind`` is the outcome ("error", "unpredictable") or, to pin which statement fired,
    the rule ("ERROR_IF", "REQUIRE", "LEVEL_CHECK"); ``clause`` is the whole condition as
    the pseudocode states it, and ``detail`` a part of what made it fire.
    """
    expected = _OUTCOME_OF.get(kind, kind)
    if expected not in _RULE_KINDS:
        raise ValueError(f"unknown outcome or rule kind {kind!r}")
    assert outcome.kind == expected, str(outcome)
    assert outcome.rule is not None, str(outcome)
    rule_kinds = (kind,) if kind in _OUTCOME_OF else _RULE_KINDS[expected]
    assert outcome.rule.kind in rule_kinds, str(outcome)
    assert outcome.rule.clause == clause, f"{outcome}: expected the clause {clause!r}"
    assert detail in outcome.rule.detail, f"{outcome}: expected {detail!r} in the detail"


def valid(outcome: Outcome, name: str = "y") -> np.ndarray:
    """The output ``name`` of a valid outcome."""
    assert outcome.kind == "valid", str(outcome)
    return outcome.outputs[name]


# -- dot-product operator graphs (tests of reference/ops/tensor_conv.py) ---------------

CONV_OPS = ("CONV2D", "CONV3D", "DEPTHWISE_CONV2D", "TRANSPOSE_CONV2D")
ALL_OPS = (*CONV_OPS, "FULLY_CONNECTED", "MATMUL")
ACC_NAME = {"i32": "INT32", "i48": "INT48", "fp16": "FP16", "fp32": "FP32"}


def zero(dt: str) -> int | float:
    return 0.0 if dtype(dt).is_float else 0


def run(
    op: str,
    inputs: Sequence[tuple[str, np.ndarray, str]],
    out_shape: Sequence[int],
    out_dt: str,
    **attrs: Any,
) -> Outcome:
    """One operator on the given (name, value, type) inputs; output ``y``."""
    graph = single_operator_graph(
        op,
        [(name, np.shape(v), dt) for name, v, dt in inputs],
        [("y", out_shape, out_dt)],
        attrs,
        strict=False,  # the ERROR_IF tests build graphs the builder would refuse
    )
    return evaluate(graph, {name: v for name, v, _ in inputs})


def run_with_constants(
    op: str,
    inputs: Sequence[tuple[str, Any, str]],
    out_shape: Sequence[int],
    out_dt: str,
    *,
    constants: Sequence[tuple[str, Any, str]] = (),
    spec: Spec | None = None,
    **attrs: Any,
) -> Outcome:
    """One operator of ``spec``: ``inputs`` are graph inputs, ``constants`` constant
    tensors (a revision's parameter inputs: zero points, MUL's shift), each (name, value,
    type), in argument order; output ``y``."""
    graph = single_operator_graph(
        op,
        [(name, np.shape(v), dt) for name, v, dt in [*inputs, *constants]],
        [("y", tuple(out_shape), out_dt)],
        attrs,
        constants={name: np.asarray(v) for name, v, _ in constants},
        spec=spec,
        strict=False,  # the ERROR_IF tests build graphs the builder would refuse
    )
    return evaluate(graph, {name: np.asarray(v) for name, v, _ in inputs}, spec=spec)


def conv2d(
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray,
    out_shape: Sequence[int],
    types: tuple[str, str, str] = ("i8", "i8", "i32"),
    acc: str | None = None,
    **attrs: Any,
) -> Outcome:
    in_t, w_t, out_t = types
    attrs = {
        "pad": (0, 0, 0, 0),
        "stride": (1, 1),
        "dilation": (1, 1),
        "acc_type": acc or ACC_NAME[out_t if out_t != "fp16" else "fp16"],
        "input_zp": zero(in_t),
        "weight_zp": zero(w_t),
        **attrs,
    }
    return run(
        "CONV2D", [("x", x, in_t), ("w", w, w_t), ("b", b, out_t)], out_shape, out_t, **attrs
    )


def output(outcome: Outcome) -> np.ndarray:
    return valid(outcome)


def transpose_conv(
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray,
    out_shape: Sequence[int],
    t: str = "i8",
    **attrs: Any,
) -> Outcome:
    out_t = "fp32" if t == "fp32" else "i32"
    attrs = {
        "out_pad": (0, 0, 0, 0),
        "stride": (1, 1),
        "acc_type": ACC_NAME[out_t],
        "input_zp": zero(t),
        "weight_zp": zero(t),
        **attrs,
    }
    inputs = [("x", x, t), ("w", w, t), ("b", b, out_t)]
    return run("TRANSPOSE_CONV2D", inputs, out_shape, out_t, **attrs)


def fully_connected(
    x: np.ndarray, w: np.ndarray, b: np.ndarray, types: tuple[str, str, str] = ("i8", "i8", "i32"),
    **attrs: Any,
) -> Outcome:  # fmt: skip
    in_t, w_t, out_t = types
    attrs = {"input_zp": zero(in_t), "weight_zp": zero(w_t), **attrs}
    return run(
        "FULLY_CONNECTED",
        [("x", x, in_t), ("w", w, w_t), ("b", b, out_t)],
        (x.shape[0], w.shape[0]),
        out_t,
        **attrs,
    )


def matmul(
    a: np.ndarray, b: np.ndarray, in_t: str = "i8", out_t: str = "i32", **attrs: Any
) -> Outcome:
    attrs = {"A_zp": zero(in_t), "B_zp": zero(in_t), **attrs}
    shape = (a.shape[0], a.shape[1], b.shape[2])
    return run("MATMUL", [("a", a, in_t), ("b", b, in_t)], shape, out_t, **attrs)

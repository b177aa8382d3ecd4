"""Hand-made one-operator cases for the mutant tests: a graph, its inputs, and the
vector a backend runs, with the builders more than one of them uses (shared by
tests/backends/test_mutants*.py and the tests/targeted_cases/ modules)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from conformance.backends.base import BackendResult
from conformance.builder import single_operator_graph
from conformance.dtypes import dtype
from conformance.graph import Graph
from conformance.spec import Spec, spec_in_use
from reference.expectations import expect
from vectors.pack_model import LoadedVector, Provenance, Requirements


@dataclass
class Case:
    graph: Graph
    inputs: dict[str, np.ndarray]
    # The revision the case is of, where it is not the test suite's (a TOSA 1.1
    # operator or mode): run and failures use it.
    spec: Spec | None = None
    level: str = "8K"  # the level the vector is run at (EXP2_SHAPE's large exponents: none)

    @contextmanager
    def revision(self) -> Iterator[None]:
        if self.spec is None:
            yield
            return
        with spec_in_use(self.spec):
            yield

    def vector(self) -> LoadedVector:
        return LoadedVector(
            name="case",
            operator=self.graph.main.operators[0].op,
            mode="",
            kind="valid",
            graph=self.graph,
            inputs=self.inputs,
            expected={},
            checks={},
            requirements=Requirements((), (), self.level),
            provenance=Provenance("test", 0, 0, ""),
        )


Operand = tuple[str, Any, str]  # (name, value, type)


def case(
    op: str,
    inputs: Sequence[Operand],
    outputs: Sequence[tuple[str, Sequence[int], str]],
    consts: Sequence[str] = (),
    spec: Spec | None = None,
    **attrs: Any,
) -> Case:
    """One operator; the inputs named in ``consts`` are constant tensors; ``spec`` the
    revision, where it is not the test suite's."""
    values = {n: np.asarray(v).astype(dtype(dt).storage) for n, v, dt in inputs}
    graph = single_operator_graph(
        op,
        [(n, values[n].shape, dt) for n, _, dt in inputs],
        [(n, tuple(s), dt) for n, s, dt in outputs],
        attrs,
        constants={n: values[n] for n in consts},
        strict=False,
        spec=spec,
    )
    return Case(graph, {n: v for n, v in values.items() if n not in consts}, spec)


def unary(op: str, x: Any, dt: str, out_dt: str | None = None, **attrs: Any) -> Case:
    arr = np.asarray(x)
    return case(op, [("x", arr, dt)], [("y", arr.shape, out_dt or dt)], **attrs)


def run(backend: Any, c: Case, tmp_path: Path) -> BackendResult:
    assert backend.unsupported(c.vector()) is None
    if c.spec is not None:  # the backend evaluates with the spec it was made with
        backend.spec = c.spec
    with c.revision():
        return backend.run(c.vector(), tmp_path)  # type: ignore[no-any-return]


def failures(c: Case, result: BackendResult) -> list[str]:
    """The compliance failures of ``result`` against the reference expectation."""
    with c.revision():
        exp = expect(c.graph, c.inputs, spec=c.spec, level=c.level)
        assert exp.outcome.valid, str(exp.outcome)
        verdicts = {n: exp.check(n, result.outputs[n]) for n in c.graph.main.outputs}
    return [f"{n}: {v.message}" for n, v in verdicts.items() if not v.passed]


def rescale(
    x: Any,
    in_dt: str,
    out_dt: str,
    mult: int | Sequence[int],
    shift: int | Sequence[int],
    **attrs: Any,
) -> Case:
    """A RESCALE of ``x`` with constant multiplier and shift (one value each, or one
    per channel); the attributes default to a signed, per-tensor scale32 RESCALE."""
    arr = np.asarray(x)
    flags = {
        "input_zp": 0,
        "output_zp": 0,
        "scale32": True,
        "double_round": False,
        "per_channel": False,
        "input_unsigned": False,
        "output_unsigned": False,
        **attrs,
    }
    mul_dt = "i32" if flags["scale32"] else "i16"
    m, s = np.atleast_1d(np.asarray(mult)), np.atleast_1d(np.asarray(shift))
    return case(
        "RESCALE",
        [("x", arr, in_dt), ("m", m, mul_dt), ("s", s, "i8")],
        [("y", arr.shape, out_dt)],
        consts=("m", "s"),
        **flags,
    )


def binary(
    op: str, a: Any, b: Any, dt: str, out_dt: str | None = None, out: Sequence[int] = ()
) -> Case:
    a, b = np.asarray(a), np.asarray(b)
    shape = tuple(out) or np.broadcast_shapes(a.shape, b.shape)
    return case(op, [("a", a, dt), ("b", b, dt)], [("y", shape, out_dt or dt)])


def select(cond: Any, a: Any, b: Any, dt: str = "fp32") -> Case:
    c, a, b = np.asarray(cond), np.asarray(a), np.asarray(b)
    out = np.broadcast_shapes(c.shape, a.shape, b.shape)
    return case("SELECT", [("c", c, "bool"), ("a", a, dt), ("b", b, dt)], [("y", out, dt)])


def pool(op: str, x: Any, kernel: tuple[int, int], stride: tuple[int, int], pad: Any) -> Case:
    x = np.asarray(x)
    n, ih, iw, c = x.shape
    oh = (ih + pad[0] + pad[1] - kernel[0]) // stride[0] + 1
    ow = (iw + pad[2] + pad[3] - kernel[1]) // stride[1] + 1
    attrs: dict[str, Any] = {"kernel": kernel, "stride": stride, "pad": pad}
    if op == "AVG_POOL2D":
        attrs |= {"acc_type": "FP32", "input_zp": 0.0, "output_zp": 0.0}
    return case(op, [("x", x, "fp32")], [("y", (n, oh, ow, c), "fp32")], **attrs)


def resize(x: Any, scale: list[int], offset: list[int], border: list[int]) -> Case:
    x = np.asarray(x)
    n, ih, iw, c = x.shape
    oh = ((ih - 1) * scale[0] - offset[0] + border[0]) // scale[1] + 1
    ow = ((iw - 1) * scale[2] - offset[1] + border[1]) // scale[3] + 1
    shapes = [("scale", scale), ("offset", offset), ("border", border)]
    return case(
        "RESIZE",
        [("x", x, "fp32"), *((name, np.array(v), "shape") for name, v in shapes)],
        [("y", (n, oh, ow, c), "fp32")],
        consts=("scale", "offset", "border"),
        mode="BILINEAR",
    )


ONE_30 = 1 << 30
ARANGE_2X2 = np.array([1.0, 2.0, 3.0, 4.0]).reshape(1, 2, 2, 1)

"""The iree backend on IREE itself: types through the pipeline, stage labels, fork safety.

Graphs are built with the builder, our evaluator gives the expected results, the
backend compiles and runs them with IREE, and the runner's ``judge`` gives the verdict.
Skipped as a whole, with the reason, when the 'iree' extra is not installed.
"""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conformance import dtypes
from conformance.backends import available, get_backend
from conformance.backends.base import BackendError
from conformance.backends.iree import IreeBackend, unavailable
from conformance.backends.iree.stages import NO_VERIFIER, stage_of
from conformance.builder import single_operator_graph
from conformance.verdicts import ERROR_EXPECTED, FAILED, PASSED, judge
from reference.expectations import expect
from vectors.pack_model import Check, LoadedVector, Provenance, Requirements

WHY = unavailable()
pytestmark = pytest.mark.skipif(WHY is not None, reason=f"the iree backend is unavailable: {WHY}")
RNG = np.random.default_rng(20261201)


def vector_of(name: str, op: str, ins: list[Any], outs: list[Any], attrs: dict[str, Any],
              feed: dict[str, np.ndarray], kind: str | None = None) -> LoadedVector:  # fmt: skip
    graph = single_operator_graph(op, ins, outs, attrs, strict=False)
    exp = expect(graph, feed, level="8K")
    return LoadedVector(
        name=name,
        operator=op,
        mode="",
        kind=kind or ("valid" if exp.outcome.valid else "error"),  # type: ignore[arg-type]
        graph=graph,
        inputs=feed,
        expected=dict(exp.outcome.outputs),
        checks={n: Check(c.descriptor, c.bound) for n, c in exp.checks.items()},
        requirements=Requirements((), (), "8K"),
        provenance=Provenance("test", 0, 0, ""),
        rule=None if exp.outcome.rule is None else exp.outcome.rule.to_json(),
    )


def identity(dt: str, values: np.ndarray) -> LoadedVector:
    shape = values.shape
    return vector_of(
        f"IDENTITY_{dt}", "IDENTITY", [("input1", shape, dt)], [("output", shape, dt)], {},
        {"input1": values},
    )  # fmt: skip


def values_of(dt: str, shape: tuple[int, ...]) -> np.ndarray:
    t = dtypes.dtype(dt)
    if t is dtypes.BOOL:
        return RNG.integers(0, 2, size=shape).astype(bool)
    if t.is_int:
        assert t.min is not None and t.max is not None
        return RNG.integers(int(t.min), int(t.max) + 1, size=shape).astype(t.storage)
    return RNG.uniform(-8, 8, size=shape).astype(t.storage)


@pytest.fixture(scope="module")
def backend() -> IreeBackend:
    return IreeBackend()


def outcome(backend: IreeBackend, vector: LoadedVector, tmp: Path) -> Any:
    assert backend.unsupported(vector) is None, backend.unsupported(vector)
    return judge(vector, backend.run(vector, tmp))


def test_every_runtime_type_crosses_the_pipeline_in_one_module(
    backend: IreeBackend, tmp_path: Path
) -> None:
    # bf16 and fp8 as ml_dtypes arrays, i48 as int64, i4 embedded and widened, bool as
    # i1; an even element count for i4 (IREE packs two to a byte, see docs/iree.md).
    names = ["bool", "i4", "i8", "i16", "i32", "i48", "fp8e4m3", "fp8e5m2", "fp16", "bf16",
             "fp32"]  # fmt: skip
    feeds = {dt: values_of(dt, (2, 3)) for dt in names}
    feeds["i48"][0, 0] = -(1 << 47) + 1  # the most negative i48 value
    vectors = [identity(dt, feeds[dt]) for dt in names]
    compiled: list[int] = []
    real = backend.compiler.compile

    def counting(text: str) -> Any:
        compiled.append(text.count("func.func @v"))
        return real(text)

    backend.compiler.compile = counting  # type: ignore[method-assign]
    try:
        backend.prepare(vectors, tmp_path)
    finally:
        backend.compiler.compile = real  # type: ignore[method-assign]
    assert compiled == [len(vectors)]  # one module for all of them
    for v in vectors:
        r = outcome(backend, v, tmp_path)
        assert r.verdict == PASSED, (v.name, r.detail)


def test_stage_labels(backend: IreeBackend, tmp_path: Path) -> None:
    f32 = "fp32"
    # IREE's TOSA verifier: operands of different ranks (a must-fail vector).
    ranks = vector_of(
        "ADD_ranks", "ADD", [("input1", (2, 3), f32), ("input2", (3,), f32)],
        [("output", (2, 3), f32)], {}, {"input1": values_of(f32, (2, 3)),
                                        "input2": values_of(f32, (3,))}, kind="error",
    )  # fmt: skip
    r = outcome(backend, ranks, tmp_path)
    assert r.verdict == PASSED and stage_of(r.detail) == "verify", r.detail
    assert "rank" in r.detail
    # A rank-1 condition is valid, but IREE's lowering of COND_IF expects rank 0.
    cond = single_cond_if()
    r = outcome(backend, cond, tmp_path)
    assert r.verdict == FAILED and stage_of(r.detail) == "lowering", r.detail
    assert r.detail.startswith("rejected a valid graph: lowering: ")


def single_cond_if() -> LoadedVector:
    from conformance.builder import GraphBuilder

    b = GraphBuilder(None, strict=False)
    main = b.block()
    then_b, else_b = b.block("then"), b.block("else")
    for blk in (then_b, else_b):
        blk.input("x", (2,), "i32")
        blk.tensor("y", (2,), "i32")
        blk.op("IDENTITY", ["x"], ["y"])
        blk.output("y")
    main.input("cond", (1,), "bool")
    main.input("x", (2,), "i32")
    main.tensor("y", (2,), "i32")
    main.op("COND_IF", ["cond", "x"], ["y"], then_graph="then", else_graph="else")
    main.output("y")
    graph = b.build()
    feed = {"cond": np.array([True]), "x": np.array([3, -4], np.int32)}
    exp = expect(graph, feed, level="8K")
    assert exp.outcome.valid, exp.outcome.rule
    return LoadedVector(
        "COND_IF_rank1", "COND_IF", "", "valid", graph, feed, dict(exp.outcome.outputs),
        {n: Check(c.descriptor, c.bound) for n, c in exp.checks.items()},
        Requirements((), (), "8K"), Provenance("test", 0, 0, ""), None,
    )  # fmt: skip


def test_a_must_fail_vector_stopped_only_past_the_verifier_is_marked(
    backend: IreeBackend, tmp_path: Path
) -> None:
    vector = identity("fp32", values_of("fp32", (4,)))
    vector.kind = "error"  # type: ignore[misc]
    vector.rule = {"clause": "a clause IREE does not check"}  # type: ignore[misc]
    backend.prepare([vector], tmp_path)
    real = backend.runtime.call

    def refuse(*args: Any) -> Any:
        raise RuntimeError("INVALID_ARGUMENT; a runtime check")

    backend.runtime.call = refuse  # type: ignore[method-assign]
    try:
        result = backend.run(vector, tmp_path)
    finally:
        backend.runtime.call = real  # type: ignore[method-assign]
    r = judge(vector, result)
    assert r.verdict == PASSED and stage_of(r.detail) == "runtime"
    assert r.detail == f"rejected: runtime ({NO_VERIFIER}): INVALID_ARGUMENT; a runtime check"
    # And one it runs without complaint is an error accepted.
    vector2 = identity("fp32", values_of("fp32", (4,)))
    vector2.kind = "error"  # type: ignore[misc]
    assert outcome(backend, vector2, tmp_path).verdict == ERROR_EXPECTED


def _in_child(backend: IreeBackend, vector: LoadedVector, queue: Any, tmp: str) -> None:
    queue.put(outcome(backend, vector, Path(tmp)).verdict)


def test_fork_safety(backend: IreeBackend, tmp_path: Path) -> None:
    """The parent has a runtime device and a compiler helper; a forked child makes its
    own instead of hanging in the parent's."""
    parent = identity("i32", values_of("i32", (3,)))
    assert outcome(backend, parent, tmp_path).verdict == PASSED
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(
        target=_in_child,
        args=(backend, identity("i8", values_of("i8", (3,))), queue, str(tmp_path)),
    )
    child.start()
    child.join(180)
    hung = child.is_alive()
    if hung:
        child.kill()
    assert not hung, "the forked child hung"
    assert queue.get(timeout=5) == PASSED
    # The parent's own helper and device still work after the fork.
    assert outcome(backend, identity("i16", values_of("i16", (3,))), tmp_path).verdict == PASSED


def test_listed_and_unavailable_without_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "unavailable" not in available()["iree"]
    import conformance.backends.iree as iree

    monkeypatch.setattr(iree, "REQUIRED", (("no_such_module_xyz", "iree-base-runtime"),))
    assert available()["iree"].endswith(
        "[unavailable: iree-base-runtime is not installed; pip install -e '.[iree]']"
    )
    with pytest.raises(BackendError, match=r"unavailable: iree-base-runtime is not installed"):
        get_backend("iree")
    with pytest.raises(BackendError, match="batch size"):
        IreeBackend("0")

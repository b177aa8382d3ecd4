"""The backends on TOSA 1.1 draft vectors: Arm's model runs them natively and skips,
with a reason naming the operator and types, what tosa-tools 2026.8 does not implement
(conformance/backends/revision/revisions.py, ``skipped_1_1``); IREE and LiteRT skip the 1.1
operators and types they cannot run rather than crash (conformance/backends/iree/
tosa_1_1.py, conformance/backends/litert ``not_translated_1_1``).  The tests that run
Arm's model are skipped, with the reason, when tosa-tools is absent."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from arm_cases import vector_of

from conformance import dtypes as D
from conformance.backends.arm import needs_executable
from conformance.backends.iree.tosa_1_1 import not_lowered_1_1
from conformance.backends.litert import not_translated_1_1
from conformance.backends.revision.elements import from_npy, returned_by_binding
from conformance.backends.revision.native import is_native, why_not_run
from conformance.backends.revision.revisions import IMPLEMENTED_CONVOLUTIONS, _spec_modes
from conformance.builder import GraphBuilder, single_operator_graph
from conformance.graph import Graph
from conformance.spec import load_revision, spec_in_use
from conformance.verdicts import PASSED, judge
from vectors import encoding
from vectors.flatbuffer import serialize

SPEC = load_revision("1.1-draft")
NO_TOSA_TOOLS = "tosa-tools is not installed (pip install -e '.[arm]')"


@pytest.fixture(autouse=True)
def _the_1_1_spec() -> Iterator[None]:
    with spec_in_use(SPEC):
        yield


# -- graphs ----------------------------------------------------------------------------


def one(dt: str, values: object) -> np.ndarray:
    t = D.BY_NAME[dt]
    return (
        np.asarray(values, np.float64).astype(t.storage)
        if t.is_float
        else np.asarray(values, t.storage)
    )


def convolution(op: str, in_t: str, weight_t: str, acc_t: str, out_t: str) -> Graph:
    """A convolution of one element: all operands constants, every size 1."""
    rank = 5 if op == "CONV3D" else 4
    spatial = rank - 2
    unit = (1,) * rank
    attrs: dict[str, object] = {
        "stride": (1,) * spatial,
        "acc_type": acc_t.upper().replace("I", "INT"),
        "local_bound": False,
    }
    if op == "TRANSPOSE_CONV2D":
        attrs["out_pad"] = (0, 0, 0, 0)
    else:
        attrs["pad"] = (0,) * (2 * spatial)
        attrs["dilation"] = (1,) * spatial
    consts = {
        "input": one(in_t, np.ones(unit)),
        "weight": one(weight_t, np.ones(unit)),
        "bias": one(out_t, [0.0]),
        "input_zp": one(in_t, [0.0]),
        "weight_zp": one(weight_t, [0.0]),
    }
    return single_operator_graph(
        op,
        [
            ("input", unit, in_t),
            ("weight", unit, weight_t),
            ("bias", (1,), out_t),
            ("input_zp", (1,), in_t),
            ("weight_zp", (1,), weight_t),
        ],
        [("output", unit, out_t)],
        attrs,
        constants=consts,
        spec=SPEC,
    )


def const(dt: str, values: np.ndarray) -> Graph:
    gb = GraphBuilder(SPEC)
    b = gb.block()
    b.tensor("out", values.shape, dt)
    b.op("CONST", [], ["out"], values=values)
    b.output("out")
    return gb.build()


def add_i64() -> Graph:
    return single_operator_graph(
        "ADD", [("a", (2, 3), "i64"), ("b", (2, 3), "i64")], [("c", (2, 3), "i64")], spec=SPEC
    )


# -- Arm: what is native, what is skipped ------------------------------------------------


def test_1_1_vectors_are_native_and_draft_ones_are_not() -> None:
    assert is_native(add_i64())
    assert is_native(
        single_operator_graph(
            "ABS", [("x", (2,), "i32")], [("y", (2,), "i32")], spec=load_revision("1.0")
        )
    )
    draft = single_operator_graph(
        "ABS", [("x", (2,), "i32")], [("y", (2,), "i32")], spec=load_revision("2024-04-draft")
    )
    assert not is_native(draft)
    assert why_not_run(add_i64()) is None


def test_a_convolution_mode_the_model_lacks_is_skipped_naming_it() -> None:
    # a 1.1 mode: bf16 input, fp8e4m3 weight, bf16 accumulator, fp16 output
    graph = convolution("CONV2D", "bf16", "fp8e4m3", "bf16", "fp16")
    reason = why_not_run(graph)
    assert reason == (
        "tosa-tools 2026.8's model has no CONV2D of in_t=bf16, weight_t=fp8e4m3, acc_t=bf16, "
        "out_t=fp16 (a TOSA 1.1 mode; its operator factory: Unsupported operation type or rank)"
    )
    # CONV2D mixes into fp32; CONV3D does not
    assert why_not_run(convolution("CONV2D", "fp16", "fp8e4m3", "fp32", "fp32")) is None
    reason3 = why_not_run(convolution("CONV3D", "fp16", "fp8e4m3", "fp32", "fp32"))
    assert reason3 is not None and "no CONV3D of in_t=fp16, weight_t=fp8e4m3" in reason3
    # the modes of TOSA 1.0 all run
    assert why_not_run(convolution("TRANSPOSE_CONV2D", "fp16", "fp16", "fp32", "fp16")) is None


def test_types_of_no_mode_are_left_to_the_model_to_reject() -> None:
    # A must-fail graph whose types are no mode at all is no skip: the model rejects it.
    graph = single_operator_graph(
        "CONV2D",
        [
            ("input", (1, 1, 1, 1), "i32"),
            ("weight", (1, 1, 1, 1), "i32"),
            ("bias", (1,), "i32"),
            ("input_zp", (1,), "i32"),
            ("weight_zp", (1,), "i32"),
        ],
        [("output", (1, 1, 1, 1), "i32")],
        {"pad": (0, 0, 0, 0), "stride": (1, 1), "dilation": (1, 1), "acc_type": "INT32"},
        spec=SPEC,
        strict=False,
    )
    assert why_not_run(graph) is None


def test_fp4_and_fp6_outputs_the_model_cannot_hand_back_are_skipped() -> None:
    rank0 = const("fp4e2m1", one("fp4e2m1", 1.5))
    reason = why_not_run(rank0)
    assert reason is not None
    assert "returns fp4e2m1 outputs only in .npy files whose last dimension is a multiple " in (
        reason
    )
    assert "output 'out' is []" in reason
    odd = const("fp6e3m2", one("fp6e3m2", np.ones((2, 5))))
    assert "output 'out' is [2, 5]" in (why_not_run(odd) or "")
    rows = const("fp6e2m3", one("fp6e2m3", np.ones((2, 32))))
    assert why_not_run(rows) is None
    assert needs_executable(rows)  # the binding returns no fp6 output
    assert not needs_executable(add_i64())


def test_the_binding_takes_but_does_not_return_the_mx_types() -> None:
    # measured: fp4 / fp6 / fp8ue8m0 outputs come back empty, mxint8 as an empty float64
    for name in ("fp4e2m1", "fp6e2m3", "fp6e3m2", "fp8ue8m0", "mxint8"):
        assert not returned_by_binding(D.BY_NAME[name])
    for name in ("i64", "fp8e4m3", "i8"):
        assert returned_by_binding(D.BY_NAME[name])


def test_packed_npy_outputs_are_unpacked() -> None:
    # The model's .npy of an fp4 [2, 32] output: uint8 [2, 16], two codes per byte, the
    # flatbuffer's packing; fp6 [1, 32]: uint8 [1, 24], four codes per three bytes.
    for name, shape, packed in (("fp4e2m1", (2, 32), (2, 16)), ("fp6e2m3", (1, 32), (1, 24))):
        dt = D.BY_NAME[name]
        codes = (np.arange(np.prod(shape)) % (1 << dt.bits)).astype(np.uint8).reshape(shape)
        values = codes.view(dt.storage)
        raw = np.frombuffer(encoding.encode(values, dt), np.uint8).reshape(packed)
        back = from_npy(raw, dt, shape)
        assert back.dtype == dt.storage and back.tobytes() == values.tobytes()
    mx = from_npy(np.array([0x80, 0x40], np.uint8), D.MXINT8, (2,))  # -128, 64 as |u1
    assert mx.dtype == np.int8 and mx.tolist() == [-128, 64]
    with pytest.raises(ValueError, match="packed fp4e2m1 array that does not fit"):
        from_npy(np.zeros((3, 2), np.uint8), D.FP4E2M1, (3, 5))  # their truncation


# -- Arm's model itself ----------------------------------------------------------------


def _model_builds(graph: Graph) -> bool:
    model = pytest.importorskip("tosa_reference_model", reason=NO_TOSA_TOOLS)
    os.environ.setdefault("TOSA_MODEL_NO_BACKTRACE", "1")
    try:
        _, status = model.run(serialize(graph, revision="1.1-draft"), [])
    except ValueError as exc:  # the graph did not initialise
        assert "Invalid TOSA graph" in str(exc)
        return False
    return str(status.name) == "TOSA_VALID"


@pytest.mark.parametrize("op", sorted(IMPLEMENTED_CONVOLUTIONS))
def test_the_convolution_table_is_what_the_model_implements(op: str) -> None:
    """Every floating-point 1.1 mode of the operator (the block-scaled weights aside):
    the model builds and runs it exactly when the table says it has a kernel."""
    modes = sorted(m for m in _spec_modes(op) if not any(t.startswith(("bs", "i")) for t in m))
    assert len(modes) > 40
    wrong = [
        m
        for m in modes
        if _model_builds(convolution(op, *m)) != (m in IMPLEMENTED_CONVOLUTIONS[op])
    ]
    assert wrong == []


def test_the_backend_runs_1_1_vectors(tmp_path: Path) -> None:
    pytest.importorskip("tosa_reference_model", reason=NO_TOSA_TOOLS)
    from conformance.backends.arm import ArmBackend

    backend = ArmBackend()
    for sub in ("add", "fp6", "mxint8"):
        (tmp_path / sub).mkdir()
    a = np.array([[5, -7, 1 << 40], [-1, 0, 9]], np.int64)
    b = np.array([[1, 2, 3], [-(1 << 50), 4, -9]], np.int64)
    vector = vector_of(add_i64(), {"a": a, "b": b})
    assert vector.kind == "valid" and backend.unsupported(vector) is None
    result = judge(vector, backend.run(vector, tmp_path / "add"))
    assert result.verdict == PASSED, result.detail
    # an fp6 constant output goes through the executable's packed .npy file
    values = one("fp6e2m3", np.linspace(-7.5, 7.5, 32).reshape(1, 32))
    fp6 = vector_of(const("fp6e2m3", values), {})
    assert backend.unsupported(fp6) is None
    result6 = judge(fp6, backend.run(fp6, tmp_path / "fp6"))
    assert result6.verdict == PASSED, result6.detail
    # so does an mxint8 one, its bounds included (the binding returns it empty)
    mx = vector_of(const("mxint8", np.array([[-128, 127, 0, -1, 64]], np.int8)), {})
    assert backend.unsupported(mx) is None
    result8 = judge(mx, backend.run(mx, tmp_path / "mxint8"))
    assert result8.verdict == PASSED, result8.detail
    skipped = vector_of(convolution("CONV3D", "bf16", "fp16", "fp32", "fp32"), {})
    assert "no CONV3D of in_t=bf16, weight_t=fp16" in (backend.unsupported(skipped) or "")


# -- IREE and LiteRT: skipped, never crashed ---------------------------------------------


def test_iree_skips_what_it_cannot_lower_or_hold() -> None:
    matmul_t = single_operator_graph(
        "MATMUL_T",
        [
            ("A", (1, 2, 3), "i8"),
            ("B", (1, 4, 3), "i8"),
            ("A_zp", (1,), "i8"),
            ("B_zp", (1,), "i8"),
        ],
        [("output", (1, 2, 4), "i32")],
        constants={"A_zp": np.zeros(1, np.int8), "B_zp": np.zeros(1, np.int8)},
        spec=SPEC,
    )
    assert not_lowered_1_1(matmul_t) == (
        "IREE 3.13 does not lower MATMUL_T (a TOSA 1.1 operator): tosa.matmul_t fails to legalize"
    )
    cast = single_operator_graph(
        "CAST_FROM_BLOCK_SCALED",
        [("x", (1, 32), "fp8e4m3"), ("s", (1, 1), "fp8ue8m0")],
        [("y", (1, 32), "fp32")],
        {"block_size": "BLOCK_SIZE_32"},
        spec=SPEC,
    )
    assert "does not lower CAST_FROM_BLOCK_SCALED" in (not_lowered_1_1(cast) or "")
    fp4 = const("fp4e2m1", one("fp4e2m1", np.ones(32)))
    assert not_lowered_1_1(fp4) == (
        "tensor 'out' is fp4e2m1, a TOSA 1.1 type: IREE 3.13's stream dialect cannot size "
        "a 4-bit float tensor"
    )
    mx = const("mxint8", np.array([1, -2], np.int8))
    assert "crashes (signal 11) on !tosa.mxint8" in (not_lowered_1_1(mx) or "")
    # what IREE runs is not skipped: i64, fp8ue8m0, the adaptive pools
    assert not_lowered_1_1(add_i64()) is None
    scale = np.array([1.0, 2.0**-127], np.float64).astype(ml_dtypes.float8_e8m0fnu)
    assert not_lowered_1_1(const("fp8ue8m0", scale)) is None


def test_litert_skips_the_1_1_types_for_every_kind_of_vector() -> None:
    vector = vector_of(add_i64(), {"a": np.zeros((2, 3), np.int64), "b": np.ones((2, 3), np.int64)})
    assert not_translated_1_1(vector) == (
        "no LiteRT translation of i64 tensors ('a'), a type of TOSA 1.1 that the translators "
        "(the 2024 draft's types) do not have"
    )
    error = vector_of(
        single_operator_graph(
            "ADD",
            [("a", (2,), "i64"), ("b", (3,), "i64")],
            [("c", (2,), "i64")],
            spec=SPEC,
            strict=False,
        ),
        {"a": np.zeros(2, np.int64), "b": np.zeros(3, np.int64)},
    )
    assert error.kind == "error" and not_translated_1_1(error) is not None
    i32 = single_operator_graph(
        "ADD", [("a", (2,), "i32"), ("b", (2,), "i32")], [("c", (2,), "i32")], spec=SPEC
    )
    assert (
        not_translated_1_1(vector_of(i32, {"a": np.zeros(2, np.int32), "b": np.zeros(2, np.int32)}))
        is None
    )

"""The tosa-reference-model backend against our reference evaluator.

Single-operator graphs (and a few control-flow graphs) are built with the builder, our
evaluator gives the expected results and compliance checks, the backend runs Arm's
model, and the runner's ``judge`` gives the verdict, exactly as for a pack.  Skipped as
a whole when tosa-tools is not installed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip(
    "tosa_reference_model", reason="tosa-tools is not installed (pip install -e '.[arm]')"
)

from arm_cases import CASES, F32, I8, I16, I32, S, run, values, vector_of

from conformance import dtypes
from conformance.backends.arm import ArmBackend
from conformance.backends.revision.conflicts import find_conflict
from conformance.backends.revision.elements import from_binding, wrap_to
from conformance.backends.revision.revisions import DIFFERENCES, operators_named
from conformance.builder import GraphBuilder, single_operator_graph
from conformance.verdicts import PASSED, judge

DOC = Path(__file__).resolve().parents[2] / "docs" / "arm-reference-model.md"


@pytest.fixture(scope="module")
def backend() -> ArmBackend:
    return ArmBackend()


@pytest.mark.parametrize("case", sorted(CASES))
def test_backend_agrees_with_reference(backend: ArmBackend, case: str, tmp_path: Path) -> None:
    vector = CASES[case]()
    assert vector.kind == "valid", f"test case is not a valid graph: {vector.rule}"
    result = run(backend, vector, tmp_path)
    assert result.verdict == PASSED, f"{case}: {result.verdict}: {result.detail}\n{result.log}"


# -- rejections, skips, plumbing -------------------------------------------------------


def test_mismatched_shapes_are_rejected(backend: ArmBackend, tmp_path: Path) -> None:
    graph = single_operator_graph(
        "ADD", [("a", (2, 3), I32), ("b", (2, 4), I32)], [("c", (2, 3), I32)], strict=False
    )
    vector = vector_of(graph, {"a": values(I32, (2, 3)), "b": values(I32, (2, 4))})
    assert vector.kind == "error"
    result = backend.run(vector, tmp_path)
    assert result.rejected
    assert "shape" in result.rejected.lower()
    assert judge(vector, result).verdict == PASSED


def test_error_inside_a_rewritten_graph_is_rejected(backend: ArmBackend, tmp_path: Path) -> None:
    # FULLY_CONNECTED becomes RESHAPE + CONV2D + RESHAPE; CONV2D's batch check fails
    # while evaluating, which the binding cannot survive: the executable must be used.
    graph = single_operator_graph(
        "FULLY_CONNECTED",
        [("input", (1, 2), I8), ("weight", (3, 2), I8), ("bias", (3,), I32)],
        [("output", (2, 3), I32)],
        {"input_zp": 0, "weight_zp": 0},
        strict=False,
    )
    inputs = {"input": values(I8, (1, 2)), "weight": values(I8, (3, 2)), "bias": values(I32, (3,))}
    vector = vector_of(graph, inputs)
    assert vector.kind == "error"
    assert backend.unsupported(vector) is None
    result = backend.run(vector, tmp_path)
    assert result.rejected and "batch" in result.rejected


def test_float_zero_point_is_rejected(backend: ArmBackend, tmp_path: Path) -> None:
    graph = single_operator_graph(
        "NEGATE",
        [("x", S, F32)],
        [("y", S, F32)],
        {"input1_zp": 1, "output_zp": 0},
        strict=False,
    )
    vector = vector_of(graph, {"x": values(F32, S)})
    assert vector.kind == "error"
    assert backend.run(vector, tmp_path).rejected


def test_require_failure_is_reported_as_unpredictable(backend: ArmBackend, tmp_path: Path) -> None:
    graph = single_operator_graph("ADD", [("a", S, I32), ("b", S, I32)], [("c", S, I32)])
    big = np.full(S, (1 << 31) - 1, np.int32)
    vector = vector_of(graph, {"a": big, "b": np.ones(S, np.int32)})
    result = backend.run(vector, tmp_path)
    assert result.rejected is not None and result.rejected.startswith("unpredictable:")
    assert "overflow" in result.log


def test_variable_operators_are_skipped(backend: ArmBackend) -> None:
    g = GraphBuilder()
    main = g.block("main")
    main.input("x", (2,), F32)
    main.tensor("r", (2,), F32)
    main.op("VARIABLE", [], [], uid=0, var_shape=(2,), type="FP32")
    main.op("VARIABLE_WRITE", ["x"], [], uid=0)
    main.op("VARIABLE_READ", [], ["r"], uid=0)
    main.output("r")
    vector = vector_of(g.build(), {"x": values(F32, (2,))})
    assert "variable" in (backend.unsupported(vector) or "")


def test_zero_point_outside_the_type_is_skipped(backend: ArmBackend) -> None:
    graph = single_operator_graph(
        "NEGATE",
        [("x", S, I8)],
        [("y", S, I8)],
        {"input1_zp": 300, "output_zp": 0},
        strict=False,
    )
    vector = vector_of(graph, {"x": values(I8, S)})
    assert "does not fit" in (backend.unsupported(vector) or "")


def test_revision_conflicts_skip_only_what_they_concern() -> None:
    graph = single_operator_graph(
        "LOGICAL_LEFT_SHIFT", [("a", S, I16), ("b", S, I16)], [("c", S, I16)]
    )
    big = {"a": values(I16, S), "b": np.full(S, 20, np.int16)}
    small = {"a": values(I16, S), "b": np.full(S, 3, np.int16)}
    assert find_conflict(graph, big, "valid")
    assert find_conflict(graph, big, "error") is None  # REQUIREs do not concern error vectors
    assert find_conflict(graph, small, "valid") is None


def test_cli_path_agrees_with_in_process(tmp_path: Path) -> None:
    cli = ArmBackend("cli")
    for case in ("ADD-bf16", "CAST-fp16-fp8e4m3", "RESCALE-i8-i8-per-channel"):
        vector = CASES[case]()
        (tmp_path / case).mkdir()
        result = run(cli, vector, tmp_path / case)
        assert result.verdict == PASSED, f"{case}: {result.detail}"


def test_binding_outputs_are_reinterpreted_exactly() -> None:
    bits = np.array([0x7FC1, 0x8000, 0x3F80], np.uint16)  # NaN payload, -0.0, 1.0
    out = from_binding(bits.view("V2"), dtypes.BF16, (3,))
    assert out.dtype == dtypes.BF16.storage
    assert np.array_equal(out.view(np.uint16), bits)
    assert wrap_to(128, dtypes.I8) == -128 and wrap_to(32768, dtypes.I16) == -32768


def test_backend_argument_is_checked() -> None:
    from conformance.backends import BackendError

    with pytest.raises(BackendError):
        ArmBackend("fast")


def test_doc_lists_every_difference() -> None:
    text = DOC.read_text()
    for diff in DIFFERENCES:
        for op in operators_named(diff):
            assert op in text, f"docs/arm-reference-model.md does not mention {op}"
        assert diff.how.split(";")[0][:40] in " ".join(text.split()), diff.how

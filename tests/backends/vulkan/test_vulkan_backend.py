"""The vulkan backend on Arm's ML SDK for Vulkan and a Vulkan device (lavapipe in CI):
every type through the pipeline in one scenario, the stage labels, what is skipped and
why, and a TOSA 1.0 vector in its own format.

Graphs are the Arm backend's cases (tests/arm_cases.py), our evaluator gives the
expected results, and the runner's ``judge`` the verdict.  Skipped as a whole, with
the reason and the command that installs what is missing, without the 'vulkan' extra
or a Vulkan device.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from arm_cases import CASES, single, values, vector_of

from conformance.backends import available, get_backend
from conformance.backends.base import BackendError
from conformance.backends.vulkan import VulkanBackend, unavailable
from conformance.backends.vulkan.pipeline import CONVERT, STAGES
from conformance.builder import single_operator_graph
from conformance.spec import load_revision, spec_in_use
from conformance.verdicts import PASSED, judge
from vectors.pack_model import LoadedVector

WHY = unavailable()
pytestmark = pytest.mark.skipif(WHY is not None, reason=f"the vulkan backend is unavailable: {WHY}")

# One case of each type and of each way a binding differs from our tensor: bool, i4 and
# i48 (in bytes and 64 bits), bf16 and both fp8s (Arm's encodings), an unsigned binding
# (RESCALE input_unsigned), a [N,1,1,C] binding for [N,C] (FULLY_CONNECTED, translated
# to CONV2D), a constant folded by the converter.
TYPES = [
    "ADD-i32", "ADD-fp16", "ADD-bf16", "LOGICAL_XOR-bool", "BITWISE_AND-i16", "MUL-i8",
    "CAST-fp16-fp8e4m3", "CAST-fp8e5m2-fp32", "CAST-i32-bool", "RESCALE-i8u-i8",
    "RESCALE-i16-i16u", "RESCALE-i48-i32", "IDENTITY-i4", "IDENTITY-i48", "CONV2D-i8x4",
    "CONV2D-i16x8-i48-out", "FULLY_CONNECTED-fp32", "CONST-fp16",
]  # fmt: skip


@pytest.fixture(scope="module")
def backend() -> VulkanBackend:
    return VulkanBackend()


def case(name: str) -> LoadedVector:
    vector = CASES[name]()
    vector.name = name  # type: ignore[misc]
    return vector


def outcome(backend: VulkanBackend, vector: LoadedVector, tmp: Path) -> Any:
    assert backend.unsupported(vector) is None, backend.unsupported(vector)
    return judge(vector, backend.run(vector, tmp))


def test_every_type_crosses_the_pipeline_in_one_scenario(
    backend: VulkanBackend, tmp_path: Path
) -> None:
    vectors = [case(n) for n in TYPES]
    builds: list[int] = []
    runner = backend.runner

    class Counting:  # the SDK's builder, counting the scenarios built
        def __init__(self) -> None:
            self._real = runner.ScenarioBuilder()
            self._dispatches = 0

        def __getattr__(self, name: str) -> Any:
            return getattr(self._real, name)

        def add_dispatch_vgf(self, command: Any) -> None:
            self._dispatches += 1
            self._real.add_dispatch_vgf(command)

        def build(self) -> Any:
            builds.append(self._dispatches)
            return self._real.build()

    backend._runner = type("Runner", (), {**vars(runner), "ScenarioBuilder": Counting})  # type: ignore[assignment]
    try:
        backend.prepare(vectors, tmp_path)
    finally:
        backend._runner = runner
    assert builds == [len(vectors)]  # one scenario, a dispatch per graph
    for v in vectors:
        r = outcome(backend, v, tmp_path)
        assert r.verdict == PASSED, (v.name, r.detail)
    assert list(tmp_path.glob("*.vgf")), "the VGFs are written in the workdir"


def test_a_must_fail_graph_is_refused_by_the_converter(
    backend: VulkanBackend, tmp_path: Path
) -> None:
    graph = single_operator_graph(
        "ADD", [("input1", (2, 3), "fp32"), ("input2", (3,), "fp32")],
        [("output", (2, 3), "fp32")], {}, strict=False,
    )  # fmt: skip
    vector = vector_of(graph, {"input1": values("fp32", (2, 3)), "input2": values("fp32", (3,))})
    assert vector.kind == "error"
    r = outcome(backend, vector, tmp_path)
    assert r.verdict == PASSED and STAGES.stage_of(r.detail) == CONVERT, r.detail
    assert "broadcast" in r.detail or "rank" in r.detail


def test_what_the_instruction_set_lacks_is_skipped_saying_so(backend: VulkanBackend) -> None:
    reason = backend.unsupported(case("COND_IF-i32"))
    assert reason == (
        "the device does not claim COND_IF: the instruction set TOSA.001000.1 of this "
        "SDK's converter has no COND_IF instruction"
    )
    # FULLY_CONNECTED is no 1.0 operator: the translation writes it as CONV2D, so the
    # instruction set is not asked about it.
    assert backend.unsupported(case("FULLY_CONNECTED-i8")) is None


@pytest.fixture
def tosa_1_0() -> Iterator[None]:
    with spec_in_use(load_revision("1.0")):
        yield


def test_a_tosa_1_0_vector_runs_in_its_own_format(tosa_1_0: None, tmp_path: Path) -> None:
    backend = VulkanBackend("batch=4")
    vector = single(
        "ADD", [("input1", (2, 3), "i32"), ("input2", (1, 3), "i32")], [("output", (2, 3), "i32")]
    )
    assert vector.graph.revision == "1.0"
    r = outcome(backend, vector, tmp_path)
    assert r.verdict == PASSED, r.detail
    assert np.array_equal(
        backend.run(vector, tmp_path).outputs["output"], vector.expected["output"]
    )


def test_listed_with_its_identity_and_a_device_by_name() -> None:
    assert "unavailable" not in available()["vulkan"]
    backend = get_backend("vulkan:device=lvp")
    ident = backend.identity()  # type: ignore[attr-defined]
    assert ident["instruction_set"] == "TOSA.001000.1"
    assert ident["sdk"]["ai-ml-sdk-model-converter"].startswith("0.11")
    assert ident["device"].endswith(".json")
    with pytest.raises(BackendError, match=r"vulkan: no Vulkan driver 'nosuch'; drivers: .*lvp"):
        get_backend("vulkan:device=nosuch")


def test_the_device_reports_the_tosa_instruction_set_at_level_8k(backend: VulkanBackend) -> None:
    from conformance.backends.vulkan.claim import DeviceClaim

    claim = backend.claim
    assert isinstance(claim, DeviceClaim), claim
    assert claim.instruction_set == "TOSA.001000.1" and claim.level == "8K"
    assert backend.identity()["device_claim"]["instruction_set"] == "TOSA.001000.1"


def test_an_extension_a_tosa_named_report_leaves_out_is_skipped(
    backend: VulkanBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conformance.backends.vulkan.claim import DeviceClaim

    vector = case("ADD-i32")
    vector.requirements = replace(vector.requirements, extensions=("EXT-INT16",))  # type: ignore[misc]
    claim = DeviceClaim("gpu0", "TOSA.001000.1", {"PRO-INT": ["conformant"]}, {}, "8K")
    monkeypatch.setattr(VulkanBackend, "claim", property(lambda self: claim))
    assert backend._unclaimed(vector) == (
        "the device does not claim EXT-INT16 (its TOSA report: profiles PRO-INT "
        "(conformant); extensions none; level 8K)"
    )
    claimed = DeviceClaim("gpu0", "TOSA.001000.1", {"PRO-INT": []}, {"EXT-INT16": []}, "8K")
    monkeypatch.setattr(VulkanBackend, "claim", property(lambda self: claimed))
    assert backend._unclaimed(vector) is None
    # A profile the report leaves out: a PRO-INT vector on a PRO-FP-only device.
    vector.requirements = replace(vector.requirements, profiles=("PRO-INT",))  # type: ignore[misc]
    fp_only = DeviceClaim("gpu0", "TOSA.001000.1", {"PRO-FP": []}, {"EXT-INT16": []}, "8K")
    monkeypatch.setattr(VulkanBackend, "claim", property(lambda self: fp_only))
    assert backend._unclaimed(vector) == (
        "the device does not claim PRO-INT (its TOSA report: profiles PRO-FP (no quality); "
        "extensions EXT-INT16 (no quality); level 8K)"
    )

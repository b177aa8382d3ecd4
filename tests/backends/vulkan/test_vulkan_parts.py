"""The vulkan backend's parts that need no Vulkan: the type mapping, the VGF bindings and
scenario JSON, the stage labels, the argument, the batching and its halving, the
start-up retry, the converter's outcomes and the layer environment."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from conformance import dtypes
from conformance.backends.base import BackendError
from conformance.backends.stages import NO_VERIFIER
from conformance.backends.vulkan import environment, parse_argument
from conformance.backends.vulkan.formats import ELEMENTS, FORMATS, from_device, to_device
from conformance.backends.vulkan.instructions import missing_instruction
from conformance.backends.vulkan.pipeline import (
    CONVERT,
    DISPATCH,
    FLAKE,
    PIPELINE,
    STAGES,
    ConverterCrash,
    Member,
    Refusal,
    convert,
    run_batch,
)
from conformance.backends.vulkan.scenario import Binding, parse_bindings, scenario_json
from conformance.graph import Tensor


def tensor(name: str, shape: tuple[int, ...], dt: str) -> Tensor:
    return Tensor(name, shape, dtypes.dtype(dt))


# -- the type mapping ---------------------------------------------------------------------


BF16_VK = FORMATS["bf16"]


def test_bf16_crosses_as_its_bit_pattern() -> None:
    values = np.array([1.0, -2.5, np.inf], dtype=ml_dtypes.bfloat16)
    raw = to_device(values, dtypes.BF16, BF16_VK)
    # numpy has no bf16: the runner and a scenario's .npy take the bits, 1.0 is 0x3F80
    assert raw.dtype == np.uint16 and raw.tolist()[0] == 0x3F80
    back = from_device(raw, tensor("t", (3,), "bf16"), BF16_VK)
    assert back.dtype == dtypes.BF16.storage and back.tobytes() == values.tobytes()


def test_i4_in_a_byte_i48_in_64_bits_bool_as_bytes() -> None:
    i4 = np.array([-7, 7, -1], dtype=np.int8)
    assert to_device(i4, dtypes.dtype("i4"), FORMATS["i4"]).tolist() == [-7, 7, -1]
    i48 = np.array([-(1 << 47)], dtype=np.int64)
    raw = to_device(i48, dtypes.dtype("i48"), FORMATS["i48"])
    assert raw.dtype == np.int64 and raw[0] == -(1 << 47)
    flags = np.array([[True, False]])
    assert to_device(flags, dtypes.BOOL, FORMATS["bool"]).tolist() == [[1, 0]]
    got = from_device(np.array([1, 0], np.uint8), tensor("b", (2,), "bool"), FORMATS["bool"])
    assert got.dtype == np.bool_ and got.tolist() == [True, False]


def test_an_unsigned_binding_carries_the_bits_of_our_signed_storage() -> None:
    # A draft RESCALE with input_unsigned: the VGF binds R8_UINT; -1 in our int8
    # storage is 255 there, and 200 coming back is -56 in ours.
    vk = "VK_FORMAT_R8_UINT"
    assert to_device(np.array([-1, 5], np.int8), dtypes.dtype("i8"), vk).tolist() == [255, 5]
    back = from_device(np.array([200], np.uint8), tensor("q", (1,), "i8"), vk)
    assert back.dtype == np.int8 and back.tolist() == [-56]


def test_a_value_outside_the_type_is_handed_back_wide() -> None:
    # A bool byte of 2 or an i4 of -8 (int4_t excludes it) is the device's mistake:
    # the judge must see it.
    b = from_device(np.array([2, 0], np.uint8), tensor("b", (2,), "bool"), FORMATS["bool"])
    assert b.dtype == np.int64 and b.tolist() == [2, 0]
    i4 = from_device(np.array([-8], np.int8), tensor("q", (1,), "i4"), FORMATS["i4"])
    assert i4.dtype == np.int64 and i4.tolist() == [-8]


def test_a_result_of_the_wrong_size_is_refused() -> None:
    with pytest.raises(ValueError, match="returned 4 bytes for 'out', a i32 tensor of shape"):
        from_device(np.zeros(4, np.uint8), tensor("out", (2,), "i32"), FORMATS["i32"])
    with pytest.raises(ValueError, match="VK_FORMAT_R8G8_UNORM tensor: a format not read here"):
        from_device(np.zeros(2, np.uint8), tensor("out", (1,), "i16"), "VK_FORMAT_R8G8_UNORM")


def test_a_result_in_another_layout_is_read_in_ours() -> None:
    # The translation writes FULLY_CONNECTED's [N, OC] output as CONV2D's [N, 1, 1, OC].
    raw = np.arange(6, dtype=np.float32).reshape(3, 1, 1, 2)
    got = from_device(raw, tensor("out", (3, 2), "fp32"), FORMATS["fp32"])
    assert got.shape == (3, 2) and got[2, 1] == 5.0


def test_rank_0_keeps_its_shape() -> None:
    value = np.array(3.5, dtype=np.float32)
    vk = FORMATS["fp32"]
    assert to_device(value, dtypes.FP32, vk).shape == ()
    assert from_device(to_device(value, dtypes.FP32, vk), tensor("s", (), "fp32"), vk).shape == ()


def test_every_format_has_an_element_of_its_width() -> None:
    for name, vk in FORMATS.items():
        dt = dtypes.dtype(name)
        raw = to_device(np.zeros((2,), dt.storage), dt, vk)
        width = {"R8": 1, "R16": 2, "R32": 4, "R64": 8}[vk.split("_")[2]]
        assert raw.nbytes == 2 * width, name
        assert ELEMENTS[vk].dtype.itemsize == width, name


# -- bindings and scenario JSON -----------------------------------------------------------


def test_bindings_are_read_from_the_model_sequence() -> None:
    # vgf_dump's JSON: the model sequence's entries name their resource (mrt_index)
    dump = {
        "model_sequence": {
            "inputs": [{"index": 1, "binding": 0, "mrt_index": 1},
                       {"index": 0, "binding": 1, "mrt_index": 0}],
            "outputs": [{"index": 0, "binding": 2, "mrt_index": 2}],
        },
        "resources": [
            {"category": "INPUT", "shape": [2, 3], "vk_format": "VK_FORMAT_R8_SINT"},
            {"category": "INPUT", "shape": [1], "vk_format": "VK_FORMAT_R32_SINT"},
            {"category": "OUTPUT", "shape": [3, 1, 1, 4], "vk_format": "VK_FORMAT_R32_SFLOAT"},
        ],
    }  # fmt: skip
    assert parse_bindings(dump) == [
        Binding("input", 1, 0, "VK_FORMAT_R32_SINT", (1,)),
        Binding("input", 0, 1, "VK_FORMAT_R8_SINT", (2, 3)),
        Binding("output", 0, 2, "VK_FORMAT_R32_SFLOAT", (3, 1, 1, 4)),
    ]
    with pytest.raises(ValueError, match="no model sequence"):
        parse_bindings({})


def test_scenario_json_binds_each_tensor_in_its_format() -> None:
    layout = [
        Binding("input", 0, 0, FORMATS["bf16"], (2, 3)),
        Binding("input", 1, 1, FORMATS["i8"], (3,)),
        Binding("output", 0, 2, FORMATS["bool"], (2, 3)),
    ]
    doc = scenario_json("g.vgf", layout, ["a.npy", "b.npy"], ["c.npy"])
    (command,) = doc["commands"]
    assert command["dispatch_vgf"]["graph_ref"] == "graph"
    assert [b["id"] for b in command["dispatch_vgf"]["bindings"]] == [0, 1, 2]
    tensors = {r["tensor"]["uid"]: r["tensor"] for r in doc["resources"] if "tensor" in r}
    assert tensors["input_0"]["format"] == "VK_FORMAT_R16_SFLOAT_FPENCODING_BFLOAT16_ARM"
    assert tensors["input_1"] == {
        "uid": "input_1", "dims": [3], "format": "VK_FORMAT_R8_SINT",
        "shader_access": "readonly", "src": "b.npy",
    }  # fmt: skip
    assert tensors["output_0"]["dst"] == "c.npy"
    assert tensors["output_0"]["format"] == "VK_FORMAT_R8_BOOL_ARM"
    json.dumps(doc)  # what the scenario runner reads


# -- stage labels and the argument --------------------------------------------------------


def test_stage_labels() -> None:
    assert STAGES.names == (CONVERT, PIPELINE, DISPATCH)
    assert Refusal(CONVERT, "op failed").text("error") == "convert: op failed"
    # Only the converter checks TOSA's rules: a must-fail graph the device refused at
    # dispatch was not refused by a verifier.
    assert Refusal(DISPATCH, "boom").text("error") == f"dispatch ({NO_VERIFIER}): boom"
    assert Refusal(PIPELINE, "no").text("valid") == "pipeline: no"
    assert STAGES.stage_of("rejected a valid graph: pipeline: x") == PIPELINE
    assert STAGES.stage_of("rejected: dispatch (no verifier refused it): y") == DISPATCH
    with pytest.raises(ValueError, match="unknown stage 'lowering'"):
        Refusal("lowering", "x")


def test_argument() -> None:
    assert parse_argument(None) == (16, None)
    assert parse_argument("4") == (4, None)
    assert parse_argument("batch=2,device=lvp") == (2, "lvp")
    for bad in ("0", "batch=x", "device=", "colour=red"):
        with pytest.raises(BackendError, match="vulkan takes batch=N"):
            parse_argument(bad)


# -- batching -----------------------------------------------------------------------------


class FakeRunner:
    """scenario_runner_py's builder API, enough of it: a scenario fails to build when it
    holds a VGF named in ``bad``, and its first ``flakes`` builds fail as the device's
    start-up does."""

    Format = SimpleNamespace(**{e.runner: e.runner for e in ELEMENTS.values()})
    DescriptorType = SimpleNamespace(TensorArm="tensor")

    def __init__(self, bad: set[str], flakes: int = 0) -> None:
        self.bad, self.flakes, self.builds = bad, flakes, []
        runner = self

        class Builder:
            def __init__(self) -> None:
                self.vgfs: list[str] = []
                self.tensors: list[tuple[list[int], str]] = []

            def add_vgf(self, info: Any) -> int:
                self.vgfs.append(info.src)
                return len(self.vgfs) - 1

            def add_tensor(self, shape: list[int], fmt: str, debug_name: str = "") -> int:
                self.tensors.append((shape, fmt))
                return len(self.tensors) - 1

            def add_dispatch_vgf(self, command: Any) -> None:
                pass

            def build(self) -> Any:
                runner.builds.append(list(self.vgfs))
                if runner.flakes:
                    runner.flakes -= 1
                    raise RuntimeError(f"{FLAKE} for the data graph queue")
                hit = [v for v in self.vgfs if Path(v).name in runner.bad]
                if hit:
                    raise RuntimeError(f"vkCreateDataGraphPipelinesARM failed for {hit[0]}")
                return Scenario(self.tensors)

        class Scenario:
            def __init__(self, tensors: list[tuple[list[int], str]]) -> None:
                self.data: dict[int, np.ndarray] = {}
                self.tensors = tensors

            def upload(self, tid: int, data: np.ndarray) -> None:
                self.data[tid] = data

            def run(self) -> None:
                pass

            def download(self, tid: int) -> np.ndarray:
                # each output is its graph's input: the fake graphs are identities
                return self.data.get(tid - 1, np.zeros(0, np.uint8))

        class VgfInfo:
            def load_source(self, path: str) -> None:
                self.src = path

        self.ScenarioBuilder, self.VgfInfo = Builder, VgfInfo

    @staticmethod
    def DispatchVgfData(vgf: int) -> Any:
        return SimpleNamespace(vgf=vgf, bindings=[])

    @staticmethod
    def TypedBinding(*args: Any) -> Any:
        return args


def members(n: int) -> list[Member]:
    out = []
    for k in range(n):
        t_in, t_out = tensor("x", (2,), "i32"), tensor("y", (2,), "i32")
        vector: Any = SimpleNamespace(name=f"v{k}")
        layout = [Binding("input", 0, 0, FORMATS["i32"], (2,)),
                  Binding("output", 0, 1, FORMATS["i32"], (2,))]  # fmt: skip
        values = [np.array([k, -k], np.int32)]
        out.append(Member(vector, Path(f"v{k}.vgf"), layout, [t_in], values, [t_out]))
    return out


def test_one_scenario_for_the_batch_and_halving_to_the_graph_that_fails() -> None:
    runner = FakeRunner(bad={"v5.vgf"})
    outcomes = run_batch(members(8), runner)  # type: ignore[arg-type]
    assert runner.builds[0] == [f"v{k}.vgf" for k in range(8)]  # one scenario first
    for k, o in enumerate(outcomes):
        if k == 5:
            assert o.refusal is not None and o.refusal.stage == PIPELINE
            assert "v5.vgf" in o.refusal.message and not o.outputs
        else:
            assert o.refusal is None, (k, o.refusal)
            assert o.outputs["y"].tolist() == [k, -k]
    # 8 -> 4 + 4 -> (2 + 2) -> (1 + 1): 1 + 2 + 2 + 2 builds
    assert len(runner.builds) == 7


def test_a_start_up_flake_is_retried_once_and_recorded() -> None:
    runner = FakeRunner(bad=set(), flakes=1)
    outcomes = run_batch(members(3), runner)  # type: ignore[arg-type]
    assert len(runner.builds) == 2
    assert all(o.refusal is None for o in outcomes)
    assert all("retried once after the device's start-up failure" in o.log for o in outcomes)
    # Twice in a row is no flake: the graph is refused, saying what the device said.
    runner = FakeRunner(bad=set(), flakes=2)
    (only,) = run_batch(members(1), runner)  # type: ignore[arg-type]
    assert only.refusal is not None and FLAKE in only.refusal.message


# -- the converter ------------------------------------------------------------------------


def fake_converter(tmp: Path, body: str) -> Path:
    path = tmp / "model-converter"
    path.write_text(f"#!{sys.executable}\nimport sys, os, signal\nargs = sys.argv[1:]\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_converter_refusal_is_the_convert_stage(tmp_path: Path) -> None:
    conv = fake_converter(tmp_path, (
        "print('WARNING: Different TOSA spec', file=sys.stderr)\n"
        "print(\"<unknown>:0: error: 'tosa.add' op operands don't have broadcast-compatible "
        "shapes\", file=sys.stderr)\nsys.exit(255)"
    ))  # fmt: skip
    got = convert(conv, b"graph", tmp_path, "v0")
    assert isinstance(got, Refusal) and got.stage == CONVERT
    assert got.message == "'tosa.add' op operands don't have broadcast-compatible shapes"
    assert (tmp_path / "v0.tosa").read_bytes() == b"graph"  # in the vector's workdir


def test_converter_crash_is_a_crash_with_its_output(tmp_path: Path) -> None:
    conv = fake_converter(tmp_path, (
        "print('legalizing tosa.while_loop', flush=True)\nos.kill(os.getpid(), signal.SIGSEGV)"
    ))  # fmt: skip
    with pytest.raises(ConverterCrash, match=r"killed by signal 11 \(SIGSEGV\)") as info:
        convert(conv, b"graph", tmp_path, "v0")
    assert "legalizing tosa.while_loop" in info.value.output  # for the vector's log


def test_converter_success_gives_the_vgf(tmp_path: Path) -> None:
    conv = fake_converter(tmp_path, "open(args[args.index('--output') + 1], 'wb').write(b'VGF')")
    got = convert(conv, b"graph", tmp_path, "v1")
    assert got == tmp_path / "v1.vgf" and got.read_bytes() == b"VGF"


# -- what is claimed, and the environment -------------------------------------------------


def test_operators_without_an_instruction_are_found(tmp_path: Path) -> None:
    binary = tmp_path / "converter"
    binary.write_bytes(b"\0spirv.Tosa.Conv2D\0spirv.Tosa.ReduceSum\0spirv.Tosa.MatMul\0junk")
    assert missing_instruction({"CONV2D", "REDUCE_SUM", "MATMUL", "CONST"}, binary) is None
    assert missing_instruction({"CONV2D", "WHILE_LOOP", "COND_IF"}, binary) == "COND_IF"


def fake_layers(tmp: Path) -> Path:
    deploy = tmp / "emulation_layer" / "deploy"
    folder = deploy / "share/vulkan/explicit_layer.d"
    folder.mkdir(parents=True)
    for stem, name in (("VkLayer_Graph", "G"), ("VkLayer_Tensor", "T")):
        (folder / f"{stem}.json").write_text(
            json.dumps({"layer": {"name": name, "library_path": f"lib{stem}.so"}})
        )
    return deploy.parent


def test_each_layer_in_its_own_folder_graph_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = fake_layers(tmp_path)
    monkeypatch.setattr(environment, "_package_dir", lambda m: base)
    env = environment.layer_environment(tmp_path / "layers")
    graph, tensor_dir = env["VK_LAYER_PATH"].split(":")
    assert graph.endswith("VkLayer_Graph") and tensor_dir.endswith("VkLayer_Tensor")
    assert env["VK_INSTANCE_LAYERS"] == "VK_LAYER_ML_Graph_Emulation:VK_LAYER_ML_Tensor_Emulation"
    manifest = json.loads((Path(graph) / "VkLayer_Graph.json").read_text())
    assert manifest["layer"]["library_path"] == str(base / "deploy/lib/libVkLayer_Graph.so")
    assert "VK_DRIVER_FILES" not in env
    device = environment.Device("lvp", tmp_path / "lvp_icd.x86_64.json")
    env = environment.layer_environment(tmp_path / "layers", device)
    assert env["VK_DRIVER_FILES"] == env["VK_ICD_FILENAMES"] == str(device.manifest)


def test_what_is_missing_is_named_with_its_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(environment, "_package_dir", lambda m: None)
    assert environment.missing() == (
        "ai-ml-sdk-model-converter is not installed; pip install -e '.[vulkan]'"
    )
    monkeypatch.setattr(environment, "_package_dir", lambda m: tmp_path)
    monkeypatch.setattr(environment.ctypes.util, "find_library", lambda name: None)
    assert environment.missing() == (
        "the Vulkan loader (libvulkan.so.1) is not installed; "
        "apt-get install -y libvulkan1 mesa-vulkan-drivers"
    )
    monkeypatch.setattr(environment.ctypes.util, "find_library", lambda name: "libvulkan.so.1")
    monkeypatch.setattr(environment, "ICD_FOLDERS", (str(tmp_path / "none"),))
    monkeypatch.setattr(environment, "devices", lambda folders=(): [])
    assert environment.missing() is not None and "no Vulkan driver" in str(environment.missing())


def test_a_device_is_found_by_name_or_manifest(tmp_path: Path) -> None:
    icd = tmp_path / "icd.d"
    icd.mkdir()
    (icd / "lvp_icd.x86_64.json").write_text("{}")
    (icd / "radeon_icd.x86_64.json").write_text("{}")
    assert [d.name for d in environment.devices((str(icd),))] == ["lvp", "radeon"]
    path = icd / "lvp_icd.x86_64.json"
    assert environment.find_device(str(path)).manifest == path.resolve()
    with pytest.raises(ValueError, match="no Vulkan driver manifest"):
        environment.find_device(str(tmp_path / "none.json"))


# -- the device's TOSA claim (claim.py): parsing the query's report ---------------------


def _report(profiles: dict[str, list[str]], extensions: dict[str, list[str]]) -> dict[str, Any]:
    return {
        "devices": [
            {"device": "gpu0", "data_graph": [
                {"name": "OpticalFlow", "operation": "1000631000"},
                {"name": "TOSA.001000.1", "profiles": profiles, "extensions": extensions,
                 "level": "8K"},
            ]},
        ]
    }  # fmt: skip


def test_a_report_in_tosa_names_is_a_claim_whose_absences_count() -> None:
    from conformance.backends.vulkan.claim import parse

    claim = parse(_report({"PRO-INT": ["conformant"]}, {"EXT-INT16": ["accelerated"]}))
    assert not isinstance(claim, str)
    assert claim.device == "gpu0" and claim.instruction_set == "TOSA.001000.1"
    assert claim.names_tosa() and claim.level == "8K"
    assert claim.summary() == (
        "profiles PRO-INT (conformant); extensions EXT-INT16 (accelerated); level 8K"
    )


def test_the_emulation_layers_report_names_no_tosa_profile() -> None:
    from conformance.backends.vulkan.claim import parse

    # What the SDK 0.11 emulation layer reports: one 'profile' named after itself.
    claim = parse(_report({"Emulation Layer": ["conformant"]}, {}))
    assert not isinstance(claim, str) and not claim.names_tosa()


def test_a_report_without_a_tosa_set_says_which_devices_it_saw() -> None:
    from conformance.backends.vulkan.claim import parse

    report = {"devices": [{"device": "llvmpipe", "data_graph": [{"name": "OpticalFlow"}]}]}
    assert parse(report) == "no Vulkan device reports a TOSA instruction set (devices: llvmpipe)"
    assert parse({"devices": []}).endswith("(devices: none)")  # type: ignore[union-attr]

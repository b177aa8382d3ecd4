"""Block-scaled composite tensors (TOSA 1.1 bs32_*) in the 1.1 flatbuffer and in packs.

The flatbuffer carries one as one TosaTensor (``type`` the value type, ``scale_type``
FP8UE8M0, ``block_shape`` BLOCK_SHAPE_32, a constant's scales in ``scale_data``) and
marks the file with the MXFP feature, as tosa-tools' serializer does; a pack holds one
as two ``.npy`` files, ``input-K.npy`` / ``input-K_scale.npy`` (``expected-K...`` for a
result), named in desc.json's ``scale_file``.  Round trips, the bytes, and the one-line
failures of a damaged file."""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from conformance import dtypes as D
from conformance.block_tensor import BlockScaled
from conformance.builder import single_operator_graph
from conformance.claims import full_claim
from conformance.graph import Graph
from conformance.spec import load_revision, spec_in_use
from reference import mx
from reference.compliance import rules
from reference.engine import evaluate
from vectors import layout_1_0 as L
from vectors import npy, pack_json
from vectors.fbreader import Reader
from vectors.flatbuffer import FlatbufferError, deserialize, serialize
from vectors.pack import (
    Check,
    PackError,
    PackMeta,
    Provenance,
    Requirements,
    Vector,
    open_pack,
    verify_pack,
    write_pack_index,
    write_vector,
)

SPEC = load_revision("1.1-draft")
LAY = L.LAYOUT_1_1
FP4 = D.dtype("bs32_fp8ue8m0_fp4e2m1")
FP6 = D.dtype("bs32_fp8ue8m0_fp6e3m2")
MX8 = D.dtype("bs32_fp8ue8m0_mxint8")


@pytest.fixture(autouse=True)
def _the_1_1_spec() -> Iterator[None]:
    with spec_in_use(SPEC):
        yield


def fp4_reverse_input() -> BlockScaled:
    """A 1 x 64 fp4e2m1 composite: its 16 encodings four times over, scales 2**-127
    (block 0) and NaN (block 1)."""
    codes = np.tile(np.arange(16), 4).reshape(1, 64)
    scales = np.array([[0x00, mx.UE8M0_NAN]])
    return BlockScaled(FP4, mx.from_bits(codes, D.FP4E2M1), mx.from_bits(scales, D.FP8UE8M0))


def reverse_graph(shape: tuple[int, ...] = (1, 64), constant: bool = False) -> Graph:
    constants = {"x": fp4_reverse_input()} if constant else None
    return single_operator_graph(
        "REVERSE", [("x", shape, FP4)], [("y", shape, FP4)], {"axis": len(shape) - 1},
        spec=SPEC, constants=constants,
    )  # fmt: skip


def tensor_table(data: bytes, name: str) -> object:
    root = Reader(data).root(LAY.GRAPH.layout)
    block = root.tables("regions", LAY.REGION.layout)[0].tables("blocks", LAY.BLOCK.layout)[0]
    return next(t for t in block.tables("tensors", LAY.TENSOR.layout) if t.string("name") == name)


def features(data: bytes) -> int:
    comp = Reader(data).root(LAY.GRAPH.layout).table("compatibility", LAY.COMPATIBILITY.layout)
    assert comp is not None
    return int(comp.u32("features") if comp.present("features") else 0)


# --------------------------------------------------------------------------- flatbuffer


def test_a_composite_is_one_tosa_tensor_with_its_scale_fields() -> None:
    data = serialize(reverse_graph(constant=True), revision="1.1-draft")
    x = tensor_table(data, "x")
    assert LAY.DTYPE.names[x.u32("type")] == "FP4E2M1"  # type: ignore[attr-defined]
    assert LAY.DTYPE.names[x.u32("scale_type")] == "FP8UE8M0"  # type: ignore[attr-defined]
    assert LAY.BLOCK_SHAPE.names[x.u32("block_shape")] == "BLOCK_SHAPE_32"  # type: ignore[attr-defined]
    # 64 fp4 codes, two to a byte (element 2k low nibble): 0x10, 0x32, ... 0xFE, 4 times
    assert x.raw_bytes("data") == bytes([0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE] * 4)  # type: ignore[attr-defined]
    assert x.raw_bytes("scale_data") == bytes([0x00, 0xFF])  # type: ignore[attr-defined]
    # the output: the same type fields, no data
    y = tensor_table(data, "y")
    assert y.u32("scale_type") == x.u32("scale_type") and not y.raw_bytes("data")  # type: ignore[attr-defined]
    # a file holding block-scaled tensors needs the MXFP feature (bit 1: features 2)
    assert features(data) == 1 << LAY.COMPATIBILITY_FEATURE.values["MXFP"] == 2


def test_no_feature_without_a_composite() -> None:
    g = single_operator_graph("REVERSE", [("x", (1, 32), "fp8e4m3")], [("y", (1, 32), "fp8e4m3")],
                              {"axis": 1}, spec=SPEC)  # fmt: skip
    assert features(serialize(g, revision="1.1-draft")) == 0


@pytest.mark.parametrize("dt", D.BLOCK_SCALED, ids=str)
def test_constants_round_trip_bit_for_bit(dt: D.DType) -> None:
    vt = D.dtype(dt.block_value)
    codes = np.arange(2 * 64) % mx.code_count(vt)
    pair = BlockScaled(
        dt,
        mx.from_bits(codes.reshape(2, 64), vt),
        mx.from_bits(np.array([[0x00, 0xFE], [0x7F, 0xFF]]), D.FP8UE8M0),
    )
    g = single_operator_graph("IDENTITY", [("x", (2, 64), dt)], [("y", (2, 64), dt)],
                              spec=SPEC, constants={"x": pair})  # fmt: skip
    back = deserialize(serialize(g, revision="1.1-draft"))
    x, y = back.main.tensors["x"], back.main.tensors["y"]
    assert x.dtype is dt and y.dtype is dt and y.constant() is None
    got = x.constant()
    assert isinstance(got, BlockScaled) and got.same(pair)


def test_a_const_operator_keeps_its_pair_as_values() -> None:
    pair = fp4_reverse_input()
    g = single_operator_graph("CONST", [], [("out", (1, 64), FP4)], {"values": pair}, spec=SPEC)
    back = deserialize(serialize(g, revision="1.1-draft"))
    op = back.main.operators[0]
    assert isinstance(op.attributes["values"], BlockScaled)
    assert op.attributes["values"].same(pair)
    assert back.main.tensors["out"].data is None and back.main.tensors["out"].scale_data is None


def _patched(data: bytes, old: bytes, new: bytes) -> bytes:
    assert data.count(old) == 1
    return data.replace(old, new)


def test_damaged_scales_fail_in_one_line() -> None:
    data = serialize(reverse_graph(constant=True), revision="1.1-draft")
    # scale_data of 2 bytes, its length word patched to 1
    x = tensor_table(data, "x")
    assert x.raw_bytes("scale_data") == b"\x00\xff"  # type: ignore[attr-defined]
    bad = _patched(data, b"\x02\x00\x00\x00\x00\xff", b"\x01\x00\x00\x00\x00\xff")
    want = (
        r"^bad.tosa: block 'main': tensor 'x': "
        r"scale_data: 1 data bytes where shape \(1, 2\) of fp8ue8m0 needs 2$"
    )
    with pytest.raises(FlatbufferError, match=want):
        deserialize(bad, source="bad.tosa")


def test_scale_fields_naming_no_composite_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    g = single_operator_graph("IDENTITY", [("x", (1, 32), FP4)], [("y", (1, 32), FP4)], spec=SPEC)
    # a writer that names FP16 scales: the three fields name no composite type
    parts = (LAY.DTYPE.values["FP4E2M1"], LAY.DTYPE.values["FP16"], 32)
    monkeypatch.setattr(LAY, "composite_parts", lambda dt: parts)
    data = serialize(g, revision="1.1-draft")
    monkeypatch.undo()
    with pytest.raises(FlatbufferError, match=r"^bad.tosa: block 'main': tensor 'x': type FP4E2M1, "
                       r"scale_type FP16, block_shape BLOCK_SHAPE_32 name no block-scaled type "
                       r"of TOSA 1.1-draft$"):  # fmt: skip
        deserialize(data, source="bad.tosa")


def test_the_earlier_formats_refuse_composites() -> None:
    with pytest.raises(FlatbufferError, match="is not in the 2024-04 draft's schema"):
        serialize(reverse_graph(), revision="2024-04-draft")


def test_arms_generated_reader_sees_the_scale_fields() -> None:
    graph_mod = pytest.importorskip("tosa.TosaGraph", reason="tosa-tools' generated Python")
    types = {v: k for k, v in vars(importlib.import_module("tosa.DType").DType).items()
             if not k.startswith("_")}  # fmt: skip
    data = serialize(reverse_graph(constant=True), revision="1.1-draft")
    g = graph_mod.TosaGraph.GetRootAs(data, 0)
    assert g.Compatibility().Features() == 2
    t = next(g.Regions(0).Blocks(0).Tensors(i) for i in range(2)
             if g.Regions(0).Blocks(0).Tensors(i).Name() == b"x")  # fmt: skip
    assert (types[t.Type()], types[t.ScaleType()], t.BlockShape()) == ("FP4E2M1", "FP8UE8M0", 32)
    assert t.ScaleDataAsNumpy().tobytes() == b"\x00\xff"


# --------------------------------------------------------------------------------- npy


def test_npy_pair_round_trip_and_a_scale_file_of_the_wrong_shape() -> None:
    pair = fp4_reverse_input()
    values, scales = npy.encode_block_scaled(pair, source="v.npy", scale_source="v_scale.npy")
    # plain numpy reads both: fp4 values and fp8ue8m0 scales widened to float32
    assert npy.interchange_dtype(D.FP4E2M1).str == npy.interchange_dtype(D.FP8UE8M0).str == "<f4"
    back = npy.decode_block_scaled(values, scales, FP4, source="v.npy", scale_source="s.npy")
    assert back.same(pair)
    other = npy.encode_array(np.ones((1, 3), ml_dtypes.float8_e8m0fnu), D.FP8UE8M0)
    with pytest.raises(PackError, match=r"^s.npy: wrong shape: file holds \[1, 3\], expected "
                       r"\[1, 2\]$"):  # fmt: skip
        npy.decode_block_scaled(values, other, FP4, source="v.npy", scale_source="s.npy")


# -------------------------------------------------------------------------------- packs


def reverse_vector() -> Vector:
    graph = reverse_graph()
    x = fp4_reverse_input()
    outcome = evaluate(graph, {"x": x}, spec=SPEC)
    assert outcome.valid
    mode = SPEC.operator("REVERSE").mode("MX (in_out_t=bs32_fp8ue8m0_fp4e2m1_t)")
    return Vector(
        name="REVERSE_bs32_0",
        operator="REVERSE",
        mode=mode.mode,
        kind="valid",
        graph=graph,
        inputs={"x": x},
        expected=dict(outcome.outputs),
        checks={"y": Check(rules.for_operator("REVERSE", FP4))},
        requirements=Requirements.for_mode(SPEC, mode, "8K"),
        provenance=Provenance("hand", 7, 0, "tosa-conformance generate --seed 7"),
    )


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    root = tmp_path / "pack"
    root.mkdir()
    entry = write_vector(root, reverse_vector())
    write_pack_index(root, PackMeta.create(SPEC, full_claim(SPEC).to_json(), 7), [entry])
    return root


def test_a_pack_holds_a_composite_in_two_files_each(pack: Path) -> None:
    folder = pack / "REVERSE_bs32_0"
    assert sorted(p.name for p in folder.iterdir()) == [
        "desc.json", "expected-0.npy", "expected-0_scale.npy", "graph.tosa",
        "input-0.npy", "input-0_scale.npy",
    ]  # fmt: skip
    desc = json.loads((folder / "desc.json").read_text())
    assert desc["inputs"][0]["scale_file"] == "input-0_scale.npy"
    assert desc["expected"][0]["scale_file"] == "expected-0_scale.npy"
    assert desc["ifm_file"] == ["input-0.npy"]  # Arm's field: the scales sit beside it
    assert desc["expected"][0]["compliance"]["mode"] == "EXACT"
    # plain numpy: the reversed scales [2**-127, NaN] -> [NaN, 2**-127]
    scales = np.load(folder / "expected-0_scale.npy")
    assert np.isnan(scales[0, 0]) and scales[0, 1] == 2.0**-127
    assert verify_pack(pack) == []
    with open_pack(pack) as p:
        loaded = p.load("REVERSE_bs32_0")
    want = reverse_vector()
    for got, ref in (
        (loaded.inputs["x"], want.inputs["x"]),
        (loaded.expected["y"], want.expected["y"]),
    ):
        assert isinstance(got, BlockScaled) and isinstance(ref, BlockScaled) and got.same(ref)


def _rehash(root: Path) -> None:
    doc = json.loads((root / "pack.json").read_text())
    for v in doc["vectors"]:
        v["files"] = {
            f.name: pack_json.sha256(f.read_bytes()) for f in (root / v["name"]).iterdir()
        }
    del doc["pack_sha256"]
    doc["pack_sha256"] = pack_json.sha256(pack_json.canonical(doc))
    (root / "pack.json").write_bytes(pack_json.dumps(doc))


def test_a_scale_file_of_the_wrong_shape_is_one_line_naming_it(pack: Path) -> None:
    path = pack / "REVERSE_bs32_0" / "input-0_scale.npy"
    path.write_bytes(npy.encode_array(np.ones((1, 3), ml_dtypes.float8_e8m0fnu), D.FP8UE8M0))
    _rehash(pack)
    assert verify_pack(pack) == [
        "REVERSE_bs32_0/input-0_scale.npy: wrong shape: file holds [1, 3], expected [1, 2]"
    ]


def test_a_missing_or_misnamed_scale_file_is_reported(pack: Path) -> None:
    (pack / "REVERSE_bs32_0" / "expected-0_scale.npy").unlink()
    _rehash(pack)
    problems = verify_pack(pack)
    assert any(p.startswith("REVERSE_bs32_0/expected-0_scale.npy: desc.json refers to it")
               for p in problems), problems  # fmt: skip
    desc_path = pack / "REVERSE_bs32_0" / "desc.json"
    desc = json.loads(desc_path.read_text())
    del desc["inputs"][0]["scale_file"]  # a block-scaled input needs its scale file
    desc_path.write_bytes(pack_json.dumps(desc))
    _rehash(pack)
    assert any("scale_file" in p and "inputs" in p for p in verify_pack(pack))


def test_write_refuses_an_array_for_a_composite(tmp_path: Path) -> None:
    v = reverse_vector()
    x = v.inputs["x"]
    assert isinstance(x, BlockScaled)
    v.inputs = {"x": x.values}
    with pytest.raises(PackError, match=r"input-0.npy: a bs32_fp8ue8m0_fp4e2m1 tensor is values "
                       r"and scales"):  # fmt: skip
        write_vector(tmp_path, v)

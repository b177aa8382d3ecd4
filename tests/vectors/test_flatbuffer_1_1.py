"""Tests of the TOSA 1.1 draft's flatbuffer format (vectors/graph_writer_1_0.py and
vectors/graph_reader_1_0.py with the 1.1 layout of vectors/layout_1_0.py) through the
public API of vectors/flatbuffer.py: the graph records its revision and chooses its
format by it, the 1.1 element types (i64, fp4e2m1, fp6e2m3, fp6e3m2, fp8ue8m0, mxint8)
round-trip with tosa-tools' data layouts, a 1.1 file is told from a 2024-draft one
(both say 1.1.0 draft) by the serializer tables it carries, block-scaled tensors are
refused in one line by the earlier formats (the 1.1 format's are
tests/vectors/test_block_scaled_1_1.py), and the new operators' attribute tables are
derived from the
schema.  With tosa-tools installed: Arm's generated reader reads our files, our reader
reads Arm's serializer's, and Arm's model runs ours.

Graphs are built with ``single_operator_graph`` / ``GraphBuilder`` under the 1.1 draft's
spec model; no test needs a reference implementation of a 1.1 operator."""

from __future__ import annotations

import hashlib
import importlib
import os
from collections.abc import Iterator
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from vectors_helpers import same_value

from conformance import dtypes as D
from conformance import revisions
from conformance.builder import GraphBuilder, single_operator_graph
from conformance.graph import Block, Graph, Operator, Region, Tensor
from conformance.sources import operator_sources
from conformance.spec import load_revision, spec_in_use
from vectors import encoding
from vectors import layout_1_0 as L
from vectors.fbreader import Reader
from vectors.flatbuffer import (
    VERSION_1_0,
    VERSION_1_1,
    FlatbufferError,
    deserialize,
    detect_revision,
    format_for,
    serialize,
)

SPEC = load_revision("1.1-draft")
LAY = L.LAYOUT_1_1
NEW_TYPES = (D.I64, D.FP4E2M1, D.FP6E2M3, D.FP6E3M2, D.FP8UE8M0, D.MXINT8)


@pytest.fixture(autouse=True)
def _the_1_1_spec() -> Iterator[None]:
    with spec_in_use(SPEC):
        yield


# ----------------------------------------------------------------------------- helpers


def assert_same_graph(a: Graph, b: Graph) -> None:
    assert (a.version, a.revision) == (b.version, b.revision)
    assert [r.name for r in a.regions] == [r.name for r in b.regions]
    for ba, bb in zip(a.blocks(), b.blocks(), strict=True):
        assert (ba.name, ba.inputs, ba.outputs) == (bb.name, bb.inputs, bb.outputs)
        assert list(ba.tensors) == list(bb.tensors)
        for name, ta in ba.tensors.items():
            tb = bb.tensors[name]
            assert (ta.name, tuple(ta.shape), ta.dtype) == (tb.name, tb.shape, tb.dtype)
            assert (ta.data is None) == (tb.data is None), name
            if ta.data is not None:
                assert same_value(np.asarray(ta.data), tb.data), name
        assert [(o.op, o.inputs, o.outputs) for o in ba.operators] == [
            (o.op, o.inputs, o.outputs) for o in bb.operators
        ]
        for oa, ob in zip(ba.operators, bb.operators, strict=True):
            assert sorted(oa.attributes) == sorted(ob.attributes), oa.op
            for key, value in oa.attributes.items():
                want = tuple(value) if isinstance(value, list) else value
                assert same_value(want, ob.attributes[key]), (oa.op, key)


def round_trip(graph: Graph) -> bytes:
    """Serialize in the graph's own format (1.1), read back with the format detected,
    and check exact equality and byte-identical re-serialization."""
    assert format_for(graph) == "1.1-draft"
    data = serialize(graph, revision=format_for(graph))
    assert detect_revision(data) == "1.1-draft"
    back = deserialize(data)
    assert back.revision == "1.1-draft"
    assert_same_graph(graph, back)
    assert serialize(back, revision=format_for(back)) == data
    return data


def add_i64() -> Graph:
    k = np.array([[1, -2, 3], [(1 << 62) + 5, 0, -(1 << 63)]], np.int64)
    return single_operator_graph(
        "ADD",
        [("a", [2, 3], "i64"), ("k", [2, 3], "i64")],
        [("out", [2, 3], "i64")],
        constants={"k": k},
        spec=SPEC,
    )


def const_of(dt: D.DType, values: np.ndarray, *, as_operator: bool = False) -> Graph:
    """A graph whose output is a constant of ``dt``: a tensor holding data (written as a
    CONST of the file) or, ``as_operator``, an IR CONST operator with ``values``."""
    gb = GraphBuilder(SPEC)
    b = gb.block()
    if as_operator:
        b.tensor("out", values.shape, dt)
        b.op("CONST", [], ["out"], values=values)
    else:
        b.tensor("out", values.shape, dt, data=values)
    b.output("out")
    return gb.build()


def tensor_bytes(data: bytes, name: str) -> bytes | None:
    """The raw ``data`` of tensor ``name`` of the first block, read from the bytes with
    the checked reader directly (not through the IR)."""
    root = Reader(data).root(LAY.GRAPH.layout)
    block = root.tables("regions", LAY.REGION.layout)[0].tables("blocks", LAY.BLOCK.layout)[0]
    for t in block.tables("tensors", LAY.TENSOR.layout):
        if t.string("name") == name:
            return t.raw_bytes("data")
    raise KeyError(name)


# --------------------------------------------------------------- the graph's revision


def test_the_builder_records_its_revision_and_the_format_follows_it() -> None:
    g11 = add_i64()
    assert (g11.revision, g11.version) == ("1.1-draft", VERSION_1_1)
    assert format_for(g11) == "1.1-draft"
    # The 2024 draft's graphs say the same version, 1.1.0 draft, in their own format.
    draft = load_revision("2024-04-draft")
    g24 = single_operator_graph(
        "ADD", [("a", [2], "i32"), ("b", [2], "i32")], [("c", [2], "i32")], spec=draft
    )
    assert (g24.revision, g24.version) == ("2024-04-draft", g11.version)
    assert format_for(g24) == "2024-04-draft"
    g10 = single_operator_graph(
        "ADD",
        [("a", [2], "i32"), ("b", [2], "i32")],
        [("c", [2], "i32")],
        spec=load_revision("1.0"),
    )
    assert (g10.revision, g10.version, format_for(g10)) == ("1.0", VERSION_1_0, "1.0")


def test_a_graph_without_a_revision_goes_by_its_version() -> None:
    # Made by hand (or by a custom tosa.xml): the version decides, as it always did.
    hand = Graph([Region("main", [])])
    assert format_for(hand) == "2024-04-draft"
    hand.version = VERSION_1_0
    assert format_for(hand) == "1.0"
    hand.revision = "custom-1.2.0"
    assert format_for(hand) == "1.0"


# ---------------------------------------------------------------------- round trips


def test_add_i64_round_trips() -> None:
    data = round_trip(add_i64())
    # int64 is eight little-endian bytes per element
    assert (
        tensor_bytes(data, "k")
        == np.array([1, -2, 3, (1 << 62) + 5, 0, -(1 << 63)], "<i8").tobytes()
    )


def test_cast_between_fp8_and_fp32_round_trips() -> None:
    for inp, out in (("fp8e4m3", "fp32"), ("fp32", "fp8e5m2")):
        round_trip(single_operator_graph("CAST", [("x", [4], inp)], [("y", [4], out)], spec=SPEC))


# Hand-packed bytes of each 1.1 type, in the layouts tosa-tools 2026.8 writes (its
# serializer's addTensor; checked against it in test_arms_serializer_packs_alike):
# fp4e2m1 codes: 0.5 = 0001, 1.0 = 0010, 1.5 = 0011, -6.0 = 1111, 6.0 = 0111; two per
#   byte, the first in the low nibble: 0x21, 0xF3, 0x07 (the last high nibble unused).
# fp6e2m3 (bias 1): 1.0 = 001000 (8), 7.5 = 011111 (31), -0.125 = 100001 (33, a
#   subnormal 1/8), 2.0 = 010000 (16), 0.5 = 000100 (4); a little-endian bit stream:
#   8 | 31 << 6 | 33 << 12 | 16 << 18 = 0x4217C8 -> C8 17 42, then 4 -> 04: 4 bytes for 5.
# fp6e3m2 (bias 3): 1.0 = 001100 (12), 28.0 = 011111 (31), -0.0625 = 100001 (33, a
#   subnormal 1/16); 12 | 31 << 6 | 33 << 12 = 0x217CC -> CC 17 02: ceil(18 / 8) = 3.
# fp8ue8m0 is 2**(e - 127): 1.0 = 0x7F, 2**-127 = 0x00, 2**127 = 0xFE, NaN = 0xFF.
# mxint8 is the code / 64: -2.0 = 0x80, 1.0 = 0x40, 1.984375 = 0x7F.
PACKED = {
    "fp4e2m1": ([0.5, 1.0, 1.5, -6.0, 6.0], bytes([0x21, 0xF3, 0x07])),
    "fp6e2m3": ([1.0, 7.5, -0.125, 2.0, 0.5], bytes([0xC8, 0x17, 0x42, 0x04])),
    "fp6e3m2": ([1.0, 28.0, -0.0625], bytes([0xCC, 0x17, 0x02])),
    "fp8ue8m0": ([1.0, 2.0**-127, 2.0**127, float("nan")], bytes([0x7F, 0x00, 0xFE, 0xFF])),
    "mxint8": ([-128, 64, 127], bytes([0x80, 0x40, 0x7F])),
    "i64": ([-2], bytes([0xFE] + [0xFF] * 7)),
}


def packed_values(name: str) -> np.ndarray:
    dt = D.BY_NAME[name]
    values, _ = PACKED[name]
    if dt.is_float:
        return np.array(values, np.float64).astype(dt.storage)
    return np.array(values, dt.storage)


@pytest.mark.parametrize("name", PACKED)
@pytest.mark.parametrize("as_operator", [False, True], ids=["constant", "const-op"])
def test_new_types_are_packed_as_tosa_tools_packs_them(name: str, as_operator: bool) -> None:
    values = packed_values(name)
    data = round_trip(const_of(D.BY_NAME[name], values, as_operator=as_operator))
    assert tensor_bytes(data, "out") == PACKED[name][1]


def _codes(dt: D.DType) -> st.SearchStrategy[np.ndarray]:
    """Arrays of ``dt``'s storage from every code of the type (NaN included)."""
    shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)
    if dt is D.I64:
        return hnp.arrays(np.int64, shapes)
    codes = st.integers(0, (1 << dt.bits) - 1)
    return hnp.arrays(np.uint8, shapes, elements=codes).map(lambda a: a.view(dt.storage))


@given(st.data())
def test_tensors_of_every_new_type_round_trip(data: st.DataObject) -> None:
    dt = data.draw(st.sampled_from(NEW_TYPES), label="dtype")
    values = data.draw(_codes(dt), label="values")
    graph = const_of(dt, values)
    graph.main.tensors["x"] = Tensor("x", (2, 3), dt)  # no data: stays None
    data_bytes = round_trip(graph)
    raw = tensor_bytes(data_bytes, "out")
    assert raw is not None and len(raw) == encoding.byte_count(dt, values.size)


def test_fp6_packing_of_every_tail_length() -> None:
    # 1..8 elements take ceil(6n / 8) bytes: 1, 2, 3, 3, 4, 5, 6, 6
    codes = np.arange(8, dtype=np.uint8) * 9 % 64
    for n, size in zip(range(1, 9), (1, 2, 3, 3, 4, 5, 6, 6), strict=True):
        arr = codes[:n].view(D.FP6E2M3.storage)
        raw = encoding.encode(arr, D.FP6E2M3)
        assert len(raw) == size
        assert same_value(encoding.decode(raw, D.FP6E2M3, (n,)), arr)


# ------------------------------------------------------------- refusals, in one line


@pytest.mark.parametrize("dt", D.BLOCK_SCALED, ids=str)
def test_block_scaled_types_are_refused_in_one_line(dt: D.DType) -> None:
    graph = const_of(D.FP8E4M3, np.zeros(32, ml_dtypes.float8_e4m3fn))
    graph.main.tensors["out"] = Tensor("out", (32,), dt)
    formats = {
        "1.0": (VERSION_1_0, f"tensor 'out': TOSA 1.0 files hold no block-scaled {dt.name}"),
        "2024-04-draft": (VERSION_1_1, f"element type {dt.name} is not in the 2024-04 draft"),
    }
    for revision, (version, want) in formats.items():
        graph.version = version
        with pytest.raises(FlatbufferError) as info:
            serialize(graph, revision=revision)
        message = str(info.value)
        assert "\n" not in message
        assert want in message
    # the 1.1 format holds them, but a constant's values need its scales too
    graph.version = VERSION_1_1
    graph.main.tensors["out"].data = np.zeros(32, dt.storage)
    with pytest.raises(FlatbufferError, match=r"tensor 'out': block-scaled tensor 'out' has data "
                       r"but no scale_data$"):  # fmt: skip
        serialize(graph, revision="1.1-draft")


def test_earlier_formats_refuse_the_new_types() -> None:
    graph = add_i64()
    graph.version = VERSION_1_0
    with pytest.raises(FlatbufferError, match=r"tensor 'a': TOSA 1\.0 files hold no i64 tensors$"):
        serialize(graph, revision="1.0")
    with pytest.raises(FlatbufferError, match=r"element type i64 is not in the 2024-04 draft's"):
        serialize(add_i64())  # the default, the draft's format


def test_the_1_1_format_needs_a_1_1_version() -> None:
    graph = add_i64()
    graph.version = VERSION_1_0
    with pytest.raises(FlatbufferError, match=r"graph version 1\.0\.2 is not a TOSA 1\.1 version"):
        serialize(graph, revision="1.1-draft")


def test_cast_input_unsigned_has_no_field_in_the_schema() -> None:
    # tosa.xml 1.1 gives CAST an optional input_unsigned (false unless given);
    # tosa-tools 2026.8's CastAttribute is empty. false is written as its absence.
    graph = single_operator_graph(
        "CAST", [("x", [3], "i8")], [("y", [3], "i32")], {"input_unsigned": False}, spec=SPEC
    )
    back = deserialize(serialize(graph, revision="1.1-draft"))
    assert back.main.operators[0].attributes == {}
    graph.main.operators[0].attributes["input_unsigned"] = True
    with pytest.raises(FlatbufferError, match=r"CastAttribute has no field for attribute "
                       r"'input_unsigned' .*can only be written false"):  # fmt: skip
        serialize(graph, revision="1.1-draft")


def test_unknown_features_are_refused_on_reading_mxfp_is_not() -> None:
    data = bytearray(serialize(add_i64(), revision="1.1-draft"))
    root = Reader(bytes(data)).root(LAY.GRAPH.layout)
    comp = root.table("compatibility", LAY.COMPATIBILITY.layout)
    assert comp is not None and not comp.present("features")
    # A writer that sets MXFP (bit 1) writes block-scaled tensors, which the reader
    # reads; a bit it does not know is refused.
    from vectors.fbbuild import Builder

    mxfp = 1 << LAY.COMPATIBILITY_FEATURE.values["MXFP"]

    def with_features(features: int) -> bytes:
        b = Builder()
        version = b.table(LAY.VERSION, {"_major": 1, "_minor": 1, "_patch": 0, "_draft": True})
        comp_off = b.table(LAY.COMPATIBILITY, {"features": features})
        root_off = b.table(LAY.GRAPH, {"version": version, "compatibility": comp_off})
        return b.finish(root_off, LAY.FILE_IDENTIFIER)

    handmade = with_features(mxfp)
    assert detect_revision(handmade) == "1.1-draft"
    assert deserialize(handmade, source="mx.tosa").regions == []  # block-scaled: readable
    with pytest.raises(FlatbufferError, match=r"^mx.tosa: the file requires the serialization "
                       r"features bit 5 \(TosaGraph.compatibility\), which this reader does "
                       r"not know$"):  # fmt: skip
        deserialize(with_features(mxfp | 1 << 5), source="mx.tosa")


# ---------------------------------------------------------------------- detection


def test_a_1_1_file_and_a_2024_draft_file_are_told_apart() -> None:
    # a graph the draft's format can hold too, with the version both say
    graph = single_operator_graph(
        "ADD", [("a", [2], "i32"), ("b", [2], "i32")], [("c", [2], "i32")], spec=SPEC
    )
    as_1_1 = serialize(graph, revision="1.1-draft")
    as_draft = serialize(graph, revision="2024-04-draft")
    assert deserialize(as_1_1).version == deserialize(as_draft).version == VERSION_1_1
    assert detect_revision(as_1_1) == "1.1-draft"
    assert detect_revision(as_draft) == "2024-04-draft"
    assert deserialize(as_draft).revision == "2024-04-draft"
    # a 1.0 file (no serializer tables of ours) is still 1.0's
    g10 = single_operator_graph(
        "ABS", [("x", [2], "i32")], [("y", [2], "i32")], spec=load_revision("1.0")
    )
    assert detect_revision(serialize(g10, revision="1.0")) == "1.0"


def test_a_1_1_file_names_the_serializer_of_its_schema() -> None:
    """software_version and compatibility.min_reader_version are tosa-tools 2026.8,
    the release whose schema conformance/tosa_spec/1.1-draft/tosa.fbs is, as that
    serializer writes them; 1.0 files carry neither (their bytes are pinned)."""
    root = Reader(serialize(add_i64(), revision="1.1-draft")).root(LAY.GRAPH.layout)
    version = root.table("version", LAY.VERSION.layout)
    assert version is not None
    assert [version.i32(f, -1) for f in ("_major", "_minor", "_patch")] == [1, 1, 0]
    assert version.boolean("_draft", False) is True
    sw = root.table("software_version", LAY.SOFTWARE_VERSION.layout)
    comp = root.table("compatibility", LAY.COMPATIBILITY.layout)
    assert sw is not None and comp is not None
    reader = comp.table("min_reader_version", LAY.SOFTWARE_VERSION.layout)
    assert reader is not None
    for table in (sw, reader):
        assert (table.i32("_major"), table.i32("_minor"), table.i32("_micro")) == (2026, 8, 0)
        assert table.string("_modifier") == ""
    g10 = single_operator_graph(
        "ABS", [("x", [2], "i32")], [("y", [2], "i32")], spec=load_revision("1.0")
    )
    root10 = Reader(serialize(g10, revision="1.0")).root(L.GRAPH.layout)
    assert not root10.present("software_version") and not root10.present("compatibility")


def test_the_1_1_schema_is_its_own_folders() -> None:
    assert LAY.SCHEMA is not L.LAYOUT_1_0.SCHEMA
    assert revisions.revision("1.1-draft").fbs_path.parent.name == "1.1-draft"
    assert LAY.VERSION_MAJOR_MINOR == (1, 1) and L.LAYOUT_1_0.VERSION_MAJOR_MINOR == (1, 0)
    assert set(LAY.DTYPE_NAMES) - set(L.LAYOUT_1_0.DTYPE_NAMES) == {d.name for d in NEW_TYPES}


def test_every_truncation_of_a_1_1_file_is_reported() -> None:
    # The Version table is still the first object written: it ends the file, so any cut
    # removes bytes the reader checks (the serializer tables come after it).
    data = serialize(add_i64(), revision="1.1-draft")
    for length in range(len(data)):
        for revision in (None, "1.1-draft"):
            with pytest.raises(FlatbufferError) as info:
                deserialize(data[:length], source="cut.tosa", revision=revision)
            message = str(info.value)
            assert message.startswith("cut.tosa: ") and "\n" not in message
            if length >= 8:
                assert "truncated or corrupt flatbuffer: " in message, message


# Pinned: the bytes of a 1.1 file change only deliberately.
GOLDEN_ADD_I64 = "b13fbe9048d0eb64479a39f0a7f714a3e31f185c2057d3e432acb411d0ccd829"


def test_bytes_are_pinned_and_deterministic() -> None:
    data = serialize(add_i64(), revision="1.1-draft")
    assert serialize(add_i64(), revision="1.1-draft") == data
    assert hashlib.sha256(data).hexdigest() == GOLDEN_ADD_I64


# ------------------------------------------------- the new operators' attribute tables


def test_every_1_1_xml_attribute_is_a_field_of_its_table() -> None:
    """tosa.xml 1.1's attributes are the schema fields of the operator's table, by name,
    except those the writer keeps elsewhere (CONST values, variables) and the optional
    bools the schema has no field for (CAST input_unsigned, written as its absence)."""
    elsewhere = {"CONST", "CONST_SHAPE", "VARIABLE", "VARIABLE_READ", "VARIABLE_WRITE"}
    no_field = []
    for name, op in SPEC.operators.items():
        table = LAY.attribute_table(name)
        assert table is not None, name
        fields = {f.name for f in LAY.attribute_fields(name)}
        if name in elsewhere:
            assert fields == set(), name
            continue
        xml = {a.name: a for a in op.attributes}
        assert fields <= set(xml), name
        for missing in sorted(set(xml) - fields):
            arg = xml[missing]
            assert arg.optional and arg.element_type == "bool_t", (name, missing)
            no_field.append((name, missing))
    assert no_field == [("CAST", "input_unsigned")]


def test_every_1_1_enum_value_has_a_schema_value() -> None:
    # block_size_t (BLOCK_SIZE_32, BLOCK_SIZE_1) is the schema's BlockSize, by name.
    fields = {}
    for name, op in SPEC.operators.items():
        by_name = {af.name: af for af in LAY.attribute_fields(name)}
        for arg in op.attributes:
            if arg.element_type in SPEC.enums and arg.name in by_name:
                fields.setdefault(arg.element_type, by_name[arg.name].field)
    assert {"block_size_t", "acc_type_t", "nan_propagation_mode_t"} <= set(fields)
    for enum_name, f in fields.items():
        enum = LAY.enum_of(f)
        for value in SPEC.enums[enum_name].values:
            number = L.enum_value(enum, value.name)
            assert number is not None, (enum_name, value.name)
            assert L.enum_name(enum, number) == value.name
    assert LAY.enum_of(fields["block_size_t"]).values["BLOCK_SIZE_32"] == 32


NEW_OPERATORS = sorted(set(SPEC.operators) - set(load_revision("1.0").operators))


@pytest.mark.parametrize("op", NEW_OPERATORS)
def test_the_new_operators_attributes_round_trip(op: str) -> None:
    """Each operator new in 1.1 (or back from the 2024 draft) with every attribute it
    declares, at a value of its type, written and read back by the schema's table."""
    attrs: dict[str, object] = {}
    for arg in SPEC.operators[op].attributes:
        if arg.element_type in SPEC.enums:
            attrs[arg.name] = SPEC.enums[arg.element_type].values[-1].name
        elif arg.element_type == "bool_t":
            attrs[arg.name] = True
        else:
            attrs[arg.name] = 1
    block_tensors = {
        "x": Tensor("x", (2, 32), D.FP32),
        "y": Tensor("y", (2, 32), D.FP32),
    }
    block = Block("main", [Operator(op, ["x"], ["y"], attrs)], block_tensors, ["x"], ["y"])
    graph = Graph([Region("main", [block])], VERSION_1_1, "1.1-draft")
    back = deserialize(serialize(graph, revision="1.1-draft"))
    assert back.main.operators[0].attributes == attrs


def test_the_attribute_sources_are_the_revisions_own_schema() -> None:
    for op in ("MATMUL_T_BLOCK_SCALED", "AVG_POOL2D_ADAPTIVE", "ROW_GATHER"):
        (where,) = operator_sources(op, spec=SPEC)["attributes"]
        assert where.path.endswith("conformance/tosa_spec/1.1-draft/tosa.fbs"), where
        assert where.what.startswith("table ") and where.what.endswith("Attribute")
    (where10,) = operator_sources("CONV2D", spec=load_revision("1.0"))["attributes"]
    assert where10.path.endswith("conformance/tosa_spec/1.0/tosa.fbs")


# ===================================================================== with tosa-tools

NO_TOSA_TOOLS = "tosa-tools is not installed: Arm's reader, serializer and model cannot check"


def _names(cls: Any) -> dict[int, str]:
    return {v: k for k, v in vars(cls).items() if not k.startswith("_") and isinstance(v, int)}


def test_arms_generated_reader_reads_our_1_1_files() -> None:
    pytest.importorskip("tosa_serializer", reason=NO_TOSA_TOOLS)
    graph_mod = pytest.importorskip("tosa.TosaGraph", reason="tosa-tools' generated Python")
    types = _names(importlib.import_module("tosa.DType").DType)
    ops = _names(importlib.import_module("tosa.Op").Op)
    gb = GraphBuilder(SPEC)
    b = gb.block()
    for name in PACKED:
        b.tensor(f"c_{name}", (len(PACKED[name][0]),), name, data=packed_values(name))
    b.input("a", [2, 3], "i64")
    b.tensor("k", [2, 3], "i64", data=np.arange(6, dtype=np.int64).reshape(2, 3))
    b.tensor("out", [2, 3], "i64")
    b.op("ADD", ["a", "k"], ["out"])
    b.output("out")
    data = serialize(gb.build(), revision="1.1-draft")
    g = graph_mod.TosaGraph.GetRootAs(data, 0)
    v = g.Version()
    assert (v._Major(), v._Minor(), v._Patch(), v._Draft()) == (1, 1, 0, True)
    sw = g.SoftwareVersion()
    assert (sw._Major(), sw._Minor(), sw._Micro(), sw._Modifier()) == (2026, 8, 0, b"")
    m = g.Compatibility().MinReaderVersion()
    assert (m._Major(), m._Minor(), m._Micro()) == (2026, 8, 0)
    assert g.Compatibility().Features() == 0
    block = g.Regions(0).Blocks(0)
    seen = {}
    for i in range(block.TensorsLength()):
        t = block.Tensors(i)
        raw = t.DataAsNumpy().tobytes() if t.DataLength() else None
        seen[t.Name().decode()] = (types[t.Type()], raw)
    for name, (_, raw) in PACKED.items():
        assert seen[f"c_{name}"] == (encoding.SCHEMA_NAMES_1_1[name], raw)
    assert seen["out"] == ("INT64", None)
    op_names = [ops[block.Operators(i).Op()] for i in range(block.OperatorsLength())]
    assert op_names == ["CONST"] * (len(PACKED) + 1) + ["ADD"]


def _arm_bytes(build: Any) -> bytes:
    ts = pytest.importorskip("tosa_serializer", reason=NO_TOSA_TOOLS)
    ser = ts.TosaSerializer("", targetMajor=1, targetMinor=1, targetPatch=0, targetDraft=True)
    build(ts, ser.currRegion.currBasicBlock)
    return bytes(ser.serialize())


def _attr(ts: Any, op: Any, *args: Any) -> Any:
    attr = ts.TosaSerializerAttribute()
    attr.setAttribute(op, *args)
    return attr


@pytest.mark.parametrize("name", PACKED)
def test_arms_serializer_packs_alike_and_we_read_it(name: str) -> None:
    values = packed_values(name)

    def build(ts: Any, blk: Any) -> None:
        dtype = getattr(ts.DType, encoding.SCHEMA_NAMES_1_1[name])
        blk.addTensor("out", list(values.shape), dtype, values)
        blk.addOperator(ts.Op.CONST, [], ["out"], _attr(ts, ts.Op.CONST))
        blk.addOutput("out")

    data = _arm_bytes(build)
    assert detect_revision(data) == "1.1-draft"  # tosa-tools writes its serializer tables
    assert tensor_bytes(data, "out") == PACKED[name][1]
    graph = deserialize(data, source="arm.tosa")
    assert graph.revision == "1.1-draft" and graph.version == VERSION_1_1
    out = graph.main.tensors["out"]
    assert out.dtype is D.BY_NAME[name] and out.data is not None
    assert same_value(out.data, values)


def _model_run(graph: Graph, *inputs: np.ndarray) -> list[np.ndarray]:
    model = pytest.importorskip("tosa_reference_model", reason=NO_TOSA_TOOLS)
    os.environ.setdefault("TOSA_MODEL_NO_BACKTRACE", "1")  # see conformance/backends/arm/run.py
    outputs, status = model.run(serialize(graph, revision="1.1-draft"), list(inputs))
    assert status.name == "TOSA_VALID", status
    return [np.asarray(o) for o in outputs]


def test_arms_model_runs_add_i64() -> None:
    a = np.array([[5, -7, 1 << 40], [-1, 0, 9]], np.int64)
    (out,) = _model_run(add_i64(), a)
    k = add_i64().main.tensors["k"].data
    assert k is not None
    np.testing.assert_array_equal(out, a + k)  # no element overflows int64


def test_arms_model_reads_our_packed_fp4_and_fp6_constants() -> None:
    """CAST_FROM_BLOCK_SCALED of constant data: each value times its block's scale.
    The model decodes our packing, so the values come back: 0.5 * 2 = 1.0 ..."""
    for name in ("fp4e2m1", "fp6e2m3", "fp6e3m2"):
        dt = D.BY_NAME[name]
        values = np.resize(packed_values(name), 32).reshape(1, 32)
        scale = np.array([[2.0]], np.float64).astype(ml_dtypes.float8_e8m0fnu)
        graph = single_operator_graph(
            "CAST_FROM_BLOCK_SCALED",
            [("x", [1, 32], name), ("s", [1, 1], "fp8ue8m0")],
            [("y", [1, 32], "fp32")],
            {"block_size": "BLOCK_SIZE_32"},
            constants={"x": values, "s": scale},
            spec=SPEC,
        )
        (out,) = _model_run(graph)
        want = values.astype(np.float32) * 2.0
        np.testing.assert_array_equal(out, want, err_msg=str(dt))

"""Tests for the TOSA flatbuffer codec (vectors/flatbuffer.py and its helpers)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import flatbuffers
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from vectors_helpers import same_value, xml_operator_attributes

from conformance import dtypes as D
from conformance.dtypes import DType
from conformance.graph import Block, Graph, Operator, Region, Tensor, Version
from vectors import encoding
from vectors import layout as L
from vectors.attributes import (
    ACC_TYPES,
    RESIZE_MODES,
    VAR_TYPES,
    ArgMap,
    Kind,
    mapping,
)
from vectors.flatbuffer import FlatbufferError, deserialize, read_graph, serialize, write_graph
from vectors.tosa_fb.tosa import TosaBasicBlock, TosaGraph, TosaOperator, TosaRegion, TosaTensor
from vectors.tosa_fb.tosa import Version as FbVersion
from vectors.tosa_fb.tosa.ClampAttribute import ClampAttribute
from vectors.tosa_fb.tosa.TosaGraph import TosaGraph as FbGraph

# Cheap properties get more examples than the profile's default (tests/conftest.py); scaling
# keeps the HYPOTHESIS_PROFILE choice meaningful.
MANY = settings(max_examples=5 * (settings.default.max_examples or 100), deadline=None)


# ----------------------------------------------------------------------------- helpers


def assert_same_graph(a: Graph, b: Graph) -> None:
    assert a.version == b.version
    assert [r.name for r in a.regions] == [r.name for r in b.regions]
    for ra, rb in zip(a.regions, b.regions, strict=True):
        for ba, bb in zip(ra.blocks, rb.blocks, strict=True):
            assert (ba.name, ba.inputs, ba.outputs) == (bb.name, bb.inputs, bb.outputs)
            assert list(ba.tensors) == list(bb.tensors)
            for name, ta in ba.tensors.items():
                tb = bb.tensors[name]
                assert (ta.name, ta.shape, ta.dtype) == (tb.name, tb.shape, tb.dtype)
                assert (ta.variable, ta.is_unranked, ta.variable_name) == (
                    tb.variable,
                    tb.is_unranked,
                    tb.variable_name,
                )
                assert (ta.data is None) == (tb.data is None), name
                if ta.data is not None:
                    assert same_value(ta.data, tb.data), name
            assert len(ba.operators) == len(bb.operators)
            for oa, ob in zip(ba.operators, bb.operators, strict=True):
                assert (oa.op, oa.inputs, oa.outputs) == (ob.op, ob.inputs, ob.outputs)
                assert sorted(oa.attributes) == sorted(ob.attributes), oa.op
                for key, value in oa.attributes.items():
                    assert same_value(value, ob.attributes[key]), (oa.op, key)


def round_trip(graph: Graph) -> Graph:
    """Serialize, read back, check equality and byte-identical re-serialization."""
    data = serialize(graph)
    back = deserialize(data)
    assert_same_graph(graph, back)
    assert serialize(back) == data
    return back


def one_block(*tensors: Tensor, ops: list[Operator] | None = None) -> Graph:
    block = Block("main", operators=ops or [], tensors={t.name: t for t in tensors})
    block.inputs = [t.name for t in tensors if t.data is None][:1]
    return Graph([Region("main", [block])])


INT_RANGE: dict[str, tuple[int, int]] = {
    "i4": (-8, 7),  # -8 has an encoding even though the spec's i4 range stops at -7
    "i8": (-(1 << 7), (1 << 7) - 1),
    "i16": (-(1 << 15), (1 << 15) - 1),
    "i32": (-(1 << 31), (1 << 31) - 1),
    "i48": (-(1 << 47), (1 << 47) - 1),
    "shape": (-(1 << 63), (1 << 63) - 1),
}


# The element types of the draft's schema: TOSA 1.1's (i64, the MX types) are not in it
# (tests/vectors/test_flatbuffer_1_1.py writes them in the 1.1 format).
DRAFT_TYPES = tuple(d for d in D.ALL if d.name not in D.TOSA_1_1_TYPES)
DATA_TYPES = tuple(d for d in DRAFT_TYPES if d is not D.SHAPE)


def arrays(dtype: DType, shape: tuple[int, ...]) -> st.SearchStrategy[np.ndarray]:
    """Arrays in ``dtype``'s storage; floats from raw bits so NaN/inf/-0 all occur."""
    if dtype.kind == "bool":
        return hnp.arrays(np.bool_, shape)
    if dtype.kind in ("int", "shape"):
        lo, hi = INT_RANGE[dtype.name]
        return hnp.arrays(dtype.storage, shape, elements=st.integers(lo, hi))
    bits = np.dtype(f"u{dtype.storage.itemsize}")
    return hnp.arrays(bits, shape).map(lambda a: a.view(dtype.storage))


small_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


def scalar_values(dtype: DType) -> st.SearchStrategy[object]:
    """One value of the element type as the IR holds it (bool / int / float)."""
    if dtype.kind == "bool":
        return st.booleans()
    if dtype.is_float:
        return arrays(dtype, ()).map(lambda a: float(a))
    lo, hi = INT_RANGE[dtype.name]
    return st.integers(max(lo, -(1 << 31)), min(hi, (1 << 31) - 1))


# ------------------------------------------------------------------------- tensor data


def test_packed_layouts() -> None:
    i4 = np.array([1, -1, -8, 7, 3], dtype=np.int8)
    assert encoding.encode(i4, D.I4) == bytes([0xF1, 0x78, 0x03])
    i48 = np.array([-1, (1 << 47) - 1, -(1 << 47)], dtype=np.int64)
    assert encoding.encode(i48, D.I48) == (
        b"\xff" * 6 + b"\xff\xff\xff\xff\xff\x7f" + b"\x00\x00\x00\x00\x00\x80"
    )
    assert encoding.encode(np.array([True, False]), D.BOOL) == b"\x01\x00"
    assert encoding.encode(np.array([1.0], dtype=np.float16), D.FP16) == b"\x00\x3c"
    assert encoding.encode(np.array([1.0], dtype=ml_dtypes.bfloat16), D.BF16) == b"\x80\x3f"
    assert encoding.encode(np.array([-2], dtype=np.int64), D.SHAPE) == b"\xfe" + b"\xff" * 7
    assert encoding.encode(np.array([1], dtype=np.int16), D.I16) == b"\x01\x00"


SPECIAL_DATA: list[tuple[DType, np.ndarray]] = [
    (D.I4, np.array([-8, -7, -1, 0, 1, 7, -3], dtype=np.int8)),
    (D.I48, np.array([(1 << 47) - 1, -((1 << 47) - 1), -(1 << 47), 0, -1], dtype=np.int64)),
    (D.FP8E4M3, np.array([np.nan, 448, -448, 0.0, -0.0, 2**-9], dtype=ml_dtypes.float8_e4m3fn)),
    (
        D.FP8E5M2,
        np.array([np.nan, np.inf, -np.inf, 57344, -0.0, 2**-16], dtype=ml_dtypes.float8_e5m2),
    ),
    (D.BF16, np.array([np.nan, np.inf, -np.inf, 3.0e38, -1.5, 2**-133], dtype=ml_dtypes.bfloat16)),
    (D.FP16, np.array([np.nan, np.inf, 65504, -0.0, 2**-24], dtype=np.float16)),
    (D.FP32, np.array([np.nan, -np.inf, 3.4e38, 1e-45], dtype=np.float32)),
    (D.BOOL, np.array([True, False, True])),
    (D.SHAPE, np.array([-(1 << 63), (1 << 63) - 1, 0], dtype=np.int64)),
]


@pytest.mark.parametrize(("dtype", "values"), SPECIAL_DATA, ids=lambda x: str(x)[:12])
def test_special_values_round_trip(dtype: DType, values: np.ndarray) -> None:
    back = round_trip(one_block(Tensor("t", values.shape, dtype, data=values)))
    assert back.main.tensors["t"].dtype is dtype
    assert same_value(back.main.tensors["t"].data, values)


def test_nan_payloads_survive() -> None:
    bits = np.array([0x7FC1, 0xFFFF, 0x7C01], dtype=np.uint16)
    values = bits.view(np.float16)
    back = round_trip(one_block(Tensor("t", (3,), D.FP16, data=values)))
    data = back.main.tensors["t"].data
    assert data is not None
    assert data.view(np.uint16).tolist() == bits.tolist()


@given(st.data())
@MANY
def test_tensors_of_every_dtype_round_trip(data: st.DataObject) -> None:
    dtype = data.draw(st.sampled_from(DRAFT_TYPES), label="dtype")
    shape = data.draw(small_shapes, label="shape")
    values = data.draw(arrays(dtype, shape), label="values")
    flags = data.draw(st.tuples(st.booleans(), st.booleans()), label="variable, is_unranked")
    var_name = data.draw(st.text(max_size=8), label="variable_name")
    tensor = Tensor("t", shape, dtype, data=values, variable=flags[0], is_unranked=flags[1])
    tensor.variable_name = var_name
    empty = Tensor("empty", shape, dtype)  # no data: must come back as None, not empty
    round_trip(one_block(tensor, empty))


def test_lossless_conversion_is_accepted_and_lossy_rejected() -> None:
    ok = Tensor("t", (3,), D.I8, data=np.array([1, -2, 3], dtype=np.int64))
    back = deserialize(serialize(one_block(ok))).main.tensors["t"].data
    assert back is not None and back.dtype == np.int8 and back.tolist() == [1, -2, 3]
    for bad in (
        Tensor("t", (1,), D.I8, data=np.array([300])),
        Tensor("t", (1,), D.FP16, data=np.array([0.1])),
        Tensor("t", (1,), D.I4, data=np.array([8], dtype=np.int8)),
        Tensor("t", (2,), D.I8, data=np.array([1], dtype=np.int8)),
    ):
        with pytest.raises(FlatbufferError, match=r"^cannot serialize graph: block 'main': "):
            serialize(one_block(bad))


def test_tensor_data_is_8_byte_aligned() -> None:
    tensors = [
        Tensor(f"t{i}", (i + 1,), dtype, data=np.zeros(i + 1, dtype.storage))
        for i, dtype in enumerate(DRAFT_TYPES)
    ]
    data = serialize(one_block(*tensors))
    block = FbGraph.GetRootAs(data, 0).Regions(0).Blocks(0)
    for i in range(block.TensorsLength()):
        tab = block.Tensors(i)._tab
        assert tab.Vector(tab.Offset(10)) % 8 == 0  # slot 3 (data) -> vtable offset 10


# -------------------------------------------------------------------------- attributes


def _draw_attributes(data: st.DataObject, op: str, element: DType) -> dict[str, object]:
    attrs: dict[str, object] = {}
    args = {a.arg: a for a in mapping(op).args if a.kind is not Kind.OUTPUT_DATA}
    for name, arg in args.items():
        if data.draw(st.booleans(), label=f"{op}.{name} present"):
            attrs[name] = data.draw(_value_strategy(arg, element), label=f"{op}.{name}")
    if op == "VARIABLE" and "initial_value" in attrs:
        # The initial value is encoded in the declared type and shape, so those must exist.
        var_type = data.draw(st.sampled_from(sorted(VAR_TYPES)), label="VARIABLE.type")
        shape = data.draw(hnp.array_shapes(max_dims=3, max_side=3), label="VARIABLE.var_shape")
        dtype = encoding.ir_dtype(L.DTYPE_VALUES[VAR_TYPES[var_type]])
        attrs.update(type=var_type, var_shape=shape)
        attrs["initial_value"] = data.draw(arrays(dtype, shape), label="initial_value")
    return attrs


def _value_strategy(arg: ArgMap, element: DType) -> st.SearchStrategy[object]:
    int32 = st.integers(-(1 << 31), (1 << 31) - 1)
    strategies: dict[Kind, Callable[[], st.SearchStrategy[object]]] = {
        Kind.I32: lambda: int32,
        Kind.BOOL: st.booleans,
        Kind.I32_LIST: lambda: st.lists(int32, max_size=6).map(tuple),
        Kind.ACC_TYPE: lambda: st.sampled_from(sorted(ACC_TYPES)),
        Kind.RESIZE_MODE: lambda: st.sampled_from(sorted(RESIZE_MODES)),
        Kind.VAR_TYPE: lambda: st.sampled_from(sorted(VAR_TYPES)),
        Kind.STRING: lambda: st.text(max_size=10),
        Kind.STRING_BYTES: lambda: st.text(max_size=10),
        Kind.ELEMENT: lambda: scalar_values(element),
        Kind.INITIAL_VALUE: lambda: st.just(np.zeros(0)),  # replaced in _draw_attributes
    }
    return strategies[arg.kind]()


# Every tosa.xml operator except the two whose values live in a tensor (tested below).
XML_OPERATORS = sorted(op for op in xml_operator_attributes() if op not in ("CONST", "CONST_SHAPE"))


@pytest.mark.parametrize("op", XML_OPERATORS)
@given(data=st.data())
def test_every_operator_round_trips_with_its_attributes(op: str, data: st.DataObject) -> None:
    element = data.draw(st.sampled_from(DATA_TYPES), label="dtype")
    attrs = _draw_attributes(data, op, element)
    tensors = [Tensor("in0", (2, 3), element), Tensor("out0", (2, 3), element)]
    round_trip(one_block(*tensors, ops=[Operator(op, ["in0"], ["out0"], attrs)]))


@pytest.mark.parametrize("op", ["CONST", "CONST_SHAPE"])
@given(data=st.data())
def test_const_values_travel_in_the_output_tensor(op: str, data: st.DataObject) -> None:
    if op == "CONST":
        dtype = data.draw(st.sampled_from(DATA_TYPES), label="dtype")
        shape = data.draw(small_shapes, label="shape")
    else:
        dtype, shape = D.SHAPE, (data.draw(st.integers(0, 6), label="rank"),)
    values = data.draw(arrays(dtype, shape), label="values")
    out = Tensor("out", shape, dtype)
    graph = one_block(out, ops=[Operator(op, [], ["out"], {"values": values})])
    raw = serialize(graph)
    fb_tensor = FbGraph.GetRootAs(raw, 0).Regions(0).Blocks(0).Tensors(0)
    assert fb_tensor.DataAsNumpy().tobytes() == encoding.encode(values, dtype)
    back = round_trip(graph)
    assert back.main.tensors["out"].data is None  # the values live in the attribute only


def test_const_output_data_that_agrees_is_accepted_and_normalised() -> None:
    values = np.array([1, 2], dtype=np.int32)
    out = Tensor("out", (2,), D.I32, data=values.copy())
    graph = one_block(out, ops=[Operator("CONST", [], ["out"], {"values": values})])
    back = deserialize(serialize(graph))
    assert back.main.tensors["out"].data is None
    assert same_value(back.main.operators[0].attributes["values"], values)
    out.data = np.array([1, 3], dtype=np.int32)
    with pytest.raises(FlatbufferError, match="differs from tensor 'out'"):
        serialize(graph)


def test_optional_attribute_absent_and_false_stay_distinct() -> None:
    base = {"pad": (0, 0, 0, 0), "stride": (1, 1), "dilation": (1, 1), "acc_type": "FP32"}
    tensors = [Tensor("x", (1, 1, 1, 1), D.FP32), Tensor("y", (1, 1, 1, 1), D.FP32)]
    for extra in ({}, {"local_bound": False}, {"local_bound": True}):
        attrs = {**base, "input_zp": 0, "weight_zp": 0, **extra}
        back = round_trip(one_block(*tensors, ops=[Operator("CONV2D", ["x"], ["y"], attrs)]))
        assert back.main.operators[0].attributes == attrs


def _clamp_round_trip(dtype: DType, lo: object, hi: object) -> tuple[Operator, bytes]:
    op = Operator("CLAMP", ["x"], ["y"], {"min_val": lo, "max_val": hi})
    graph = one_block(Tensor("x", (2,), dtype), ops=[op])
    return round_trip(graph).main.operators[0], serialize(graph)


def test_float_element_attributes_are_raw_bits_of_the_input_type() -> None:
    back, raw = _clamp_round_trip(D.BF16, -1.5, 2.0)
    assert back.attributes == {"min_val": -1.5, "max_val": 2.0}
    union = FbGraph.GetRootAs(raw, 0).Regions(0).Blocks(0).Operators(0).Attribute()
    fb_clamp = ClampAttribute()
    fb_clamp.Init(union.Bytes, union.Pos)
    assert fb_clamp.MinFpAsNumpy().tobytes() == np.array(-1.5, ml_dtypes.bfloat16).tobytes()
    assert fb_clamp._tab.Offset(4) == 0  # min_int (slot 0) is absent for a float input
    back, _ = _clamp_round_trip(D.FP16, -math.inf, 65504.0)
    assert back.attributes["min_val"] == -math.inf
    inexact = Operator("PAD", ["x"], ["y"], {"pad_const": 0.1})
    with pytest.raises(FlatbufferError, match="do not convert exactly to fp16"):
        serialize(one_block(Tensor("x", (2,), D.FP16), ops=[inexact]))


def test_integer_and_bool_element_attributes() -> None:
    back, _ = _clamp_round_trip(D.I8, -128, 127)
    assert back.attributes == {"min_val": -128, "max_val": 127}
    pad = Operator("PAD", ["x"], ["y"], {"pad_const": True})
    back_graph = round_trip(one_block(Tensor("x", (2,), D.BOOL), ops=[pad]))
    assert back_graph.main.operators[0].attributes == {"pad_const": True}
    not_bool = Operator("PAD", ["x"], ["y"], {"pad_const": 2})
    with pytest.raises(FlatbufferError, match="'pad_const': expected a bool, got 2"):
        serialize(one_block(Tensor("x", (2,), D.BOOL), ops=[not_bool]))


def test_element_attributes_absent_need_no_input_tensor() -> None:
    bare = Operator("CLAMP", [], ["y"])
    assert round_trip(one_block(ops=[bare])).main.operators[0].attributes == {}


def test_attribute_dict_order_does_not_change_the_bytes() -> None:
    attrs = {"kernel": (2, 2), "stride": (1, 1), "pad": (0, 0, 0, 0), "acc_type": "INT32"}
    attrs |= {"input_zp": -3, "output_zp": 4}
    reordered = dict(reversed(list(attrs.items())))
    graphs = [
        one_block(Tensor("x", (1, 2, 2, 1), D.I8), ops=[Operator("AVG_POOL2D", ["x"], ["y"], a)])
        for a in (attrs, reordered)
    ]
    assert serialize(graphs[0]) == serialize(graphs[1])


def test_bad_attributes_are_reported() -> None:
    x = Tensor("x", (2,), D.I8)
    cases = [
        (Operator("ADD", ["x", "x"], ["y"], {"axis": 1}), "tosa.xml defines no attribute 'axis'"),
        (Operator("ARGMAX", ["x"], ["y"], {"axis": 1.0}), "'axis': expected an integer"),
        (Operator("ARGMAX", ["x"], ["y"], {"axis": 1 << 31}), "does not fit in int32"),
        (Operator("RESIZE", ["x"], ["y"], {"mode": "NEAREST"}), "expected one of"),
        (Operator("CLAMP", [], ["y"], {"min_val": 0}), "first input tensor"),
        (Operator("FOO", [], ["y"]), "not an operator of the schema"),
        (Operator("VARIABLE", [], [], {"initial_value": np.zeros(1)}), "'type' and 'var_shape'"),
    ]
    for op, problem in cases:
        with pytest.raises(FlatbufferError) as info:
            serialize(one_block(x, ops=[op]))
        message = str(info.value)
        assert message.startswith(f"cannot serialize graph: block 'main': operator 0 ({op.op})")
        assert problem in message


# --------------------------------------------------------------------- graph structure


def nested_graph() -> Graph:
    """COND_IF whose branches are blocks of the same region, and a WHILE_LOOP."""
    main = Block("main", inputs=["c", "a"], outputs=["r"])
    main.tensors = {
        "c": Tensor("c", (), D.BOOL),
        "a": Tensor("a", (2,), D.I32),
        "r": Tensor("r", (2,), D.I32),
        "w": Tensor("w", (2,), D.I32),
    }
    main.operators = [
        Operator("COND_IF", ["c", "a"], ["r"], {"then_graph": "then", "else_graph": "else"}),
        Operator("WHILE_LOOP", ["r"], ["w"], {"cond_graph": "cond", "body_graph": "body"}),
    ]
    branches = []
    for name, op in (("then", "ADD"), ("else", "SUB"), ("body", "MUL")):
        block = Block(name, inputs=["p"], outputs=["q"])
        block.tensors = {"p": Tensor("p", (2,), D.I32), "q": Tensor("q", (2,), D.I32)}
        block.operators = [Operator(op, ["p", "p"], ["q"])]
        branches.append(block)
    cond = Block("cond", inputs=["p"], outputs=["b"])
    cond.tensors = {"p": Tensor("p", (2,), D.I32), "b": Tensor("b", (), D.BOOL)}
    cond.operators = [Operator("REDUCE_ANY", ["p"], ["b"], {"axis": 0})]
    version = Version(major=1, minor=1, patch=0, draft=False)
    return Graph([Region("main", [main, *branches, cond]), Region("extra")], version)


def test_nested_blocks_round_trip() -> None:
    graph = nested_graph()
    back = round_trip(graph)
    assert back.block("then").operators[0].op == "ADD"
    assert back.main.operators[0].attributes == {"then_graph": "then", "else_graph": "else"}
    assert back.version == Version(1, 1, 0, False)


def test_generated_readers_agree() -> None:
    """Our writer and flatc's generated Python readers see the same file."""
    fb = FbGraph.GetRootAs(serialize(nested_graph()), 0)
    assert FbGraph.TosaGraphBufferHasIdentifier(serialize(nested_graph()), 0)
    version = fb.Version()
    assert (version._major(), version._minor(), version._patch(), version._draft()) == (
        1,
        1,
        0,
        False,
    )
    block = fb.Regions(0).Blocks(0)
    assert block.Name() == b"main"
    op = block.Operators(0)
    assert op.Op() == L.OP_VALUES["COND_IF"]
    assert op.AttributeType() == L.ATTRIBUTE_VALUES["CondIfAttribute"]
    tensor = block.Tensors(1)
    assert (tensor.Name(), tensor.Type()) == (b"a", L.DTYPE_VALUES["INT32"])
    assert fb.RegionsLength() == 2


def test_write_and_read_files(tmp_path: Path) -> None:
    path = tmp_path / "graph.tosa"
    write_graph(path, nested_graph())
    assert_same_graph(read_graph(path), nested_graph())
    assert path.read_bytes() == serialize(nested_graph())


def test_serialization_is_deterministic() -> None:
    assert serialize(nested_graph()) == serialize(nested_graph())


def test_tensor_key_must_be_its_name() -> None:
    graph = one_block(Tensor("a", (1,), D.I8))
    graph.main.tensors = {"b": graph.main.tensors["a"]}
    with pytest.raises(FlatbufferError, match="tensor 'b' is named 'a'"):
        serialize(graph)


# ------------------------------------------------------------------------------ errors


def _sample_bytes() -> bytes:
    values = np.arange(6, dtype=np.int8).reshape(2, 3)
    graph = nested_graph()
    graph.main.tensors["k"] = Tensor("k", (2, 3), D.I8, data=values)
    return serialize(graph)


_SAMPLE = _sample_bytes()


def test_every_truncation_is_reported(tmp_path: Path) -> None:
    data = _sample_bytes()
    path = tmp_path / "cut.tosa"
    for length in range(len(data)):
        path.write_bytes(data[:length])
        with pytest.raises(FlatbufferError) as info:
            read_graph(path)
        message = str(info.value)
        assert message.startswith(f"{path}: ")
        assert "\n" not in message
        if length < 8:
            assert "not a TOSA flatbuffer" in message and f"({length} bytes" in message
        else:
            assert "truncated or corrupt flatbuffer: " in message


def test_wrong_file_identifier(tmp_path: Path) -> None:
    path = tmp_path / "graph.tosa"
    data = _sample_bytes()
    path.write_bytes(data[:4] + b"ABCD" + data[8:])
    with pytest.raises(FlatbufferError) as info:
        read_graph(path)
    expected = f"{path}: not a TOSA flatbuffer (file identifier is 'ABCD', expected 'TOSA')"
    assert str(info.value) == expected


def test_bytes_that_are_not_a_flatbuffer() -> None:
    with pytest.raises(FlatbufferError, match=r"^<bytes>: not a TOSA flatbuffer \(file id"):
        deserialize(b'{"this": "is json, not a flatbuffer"}')
    with pytest.raises(FlatbufferError, match=r"^x\.tosa: truncated or corrupt flatbuffer: "):
        deserialize(b"\xff\xff\xff\x7fTOSA" + bytes(24), source="x.tosa")
    with pytest.raises(FlatbufferError, match=r"^<bytes>: not a TOSA flatbuffer \(3 bytes"):
        deserialize(b"abc")


@given(st.binary(max_size=200))
@MANY
def test_random_bytes_with_the_identifier_never_crash(tail: bytes) -> None:
    data = tail[:4].ljust(4, b"\0") + b"TOSA" + tail[4:]
    try:
        deserialize(data)
    except FlatbufferError as exc:
        assert str(exc).startswith("<bytes>: ") and "\n" not in str(exc)


@given(st.data())
@MANY
def test_corrupted_files_never_crash(data: st.DataObject) -> None:
    raw = bytearray(_SAMPLE)
    for _ in range(data.draw(st.integers(1, 4), label="corruptions")):
        pos = data.draw(st.integers(8, len(raw) - 1), label="position")
        raw[pos] = data.draw(st.integers(0, 255), label="byte")
    try:
        deserialize(bytes(raw), source="bad.tosa")
    except FlatbufferError as exc:
        assert str(exc).startswith("bad.tosa: ") and "\n" not in str(exc)


def _handmade(op: int = 0, dtype: int = 0) -> bytes:
    """A TosaGraph written with the generated builder API: one block holding one tensor
    of schema type ``dtype`` (if non-zero) and one operator ``op`` (if non-zero)."""
    b = flatbuffers.Builder(0)
    tensors, ops = [], []
    if dtype:
        name = b.CreateString("t")
        TosaTensor.Start(b)
        TosaTensor.AddName(b, name)
        TosaTensor.AddType(b, dtype)
        tensors.append(TosaTensor.End(b))
    if op:
        TosaOperator.Start(b)
        TosaOperator.AddOp(b, op)
        ops.append(TosaOperator.End(b))
    vectors = []
    for items in (ops, tensors):
        b.StartVector(4, len(items), 4)
        for item in reversed(items):
            b.PrependUOffsetTRelative(item)
        vectors.append(b.EndVector())
    block_name = b.CreateString("main")
    TosaBasicBlock.Start(b)
    TosaBasicBlock.AddName(b, block_name)
    TosaBasicBlock.AddOperators(b, vectors[0])
    TosaBasicBlock.AddTensors(b, vectors[1])
    block = TosaBasicBlock.End(b)
    TosaRegion.StartBlocksVector(b, 1)
    b.PrependUOffsetTRelative(block)
    blocks = b.EndVector()
    TosaRegion.Start(b)
    TosaRegion.AddBlocks(b, blocks)
    region = TosaRegion.End(b)
    TosaGraph.StartRegionsVector(b, 1)
    b.PrependUOffsetTRelative(region)
    regions = b.EndVector()
    FbVersion.Start(b)
    version = FbVersion.End(b)
    TosaGraph.Start(b)
    TosaGraph.AddVersion(b, version)
    TosaGraph.AddRegions(b, regions)
    b.Finish(TosaGraph.End(b), file_identifier=b"TOSA")
    return bytes(b.Output())


def test_handmade_buffer_reads() -> None:
    graph = deserialize(_handmade(op=L.OP_VALUES["ADD"], dtype=L.DTYPE_VALUES["FP32"]))
    assert graph.main.operators[0].op == "ADD"
    assert graph.main.tensors["t"].dtype is D.FP32
    assert graph.version == Version(-1, -1, -1, True)  # schema defaults


@pytest.mark.parametrize(
    ("buffer", "problem"),
    [
        (_handmade(op=999), "block 'main': operator 0: unknown Op value 999"),
        (_handmade(op=L.OP_VALUES["RESERVED"]), "block 'main': operator 0: unknown Op RESERVED"),
        (_handmade(dtype=99), "block 'main': tensor 't': unknown DType value 99"),
        (
            _handmade(dtype=L.DTYPE_VALUES["UINT8"]),
            "block 'main': tensor 't': DType UINT8 is not a TOSA 1.x element type",
        ),
    ],
    ids=["op-999", "op-reserved", "dtype-99", "dtype-uint8"],
)
def test_unknown_enum_values(buffer: bytes, problem: str) -> None:
    with pytest.raises(FlatbufferError) as info:
        deserialize(buffer, source="model.tosa")
    assert str(info.value) == f"model.tosa: {problem}"


def test_wrong_attribute_table_for_the_operator() -> None:
    raw = serialize(one_block(Tensor("x", (2,), D.I8), ops=[Operator("ARGMAX", ["x"], ["y"])]))
    graph = deserialize(raw)
    assert graph.main.operators[0].attributes == {}
    # Relabel the operator: ADD takes no attributes but the file carries AxisAttribute.
    fb_op = FbGraph.GetRootAs(raw, 0).Regions(0).Blocks(0).Operators(0)
    op_field = fb_op._tab.Pos + fb_op._tab.Offset(4)
    patched = bytearray(raw)
    patched[op_field : op_field + 4] = L.OP_VALUES["ADD"].to_bytes(4, "little")
    with pytest.raises(FlatbufferError) as info:
        deserialize(bytes(patched))
    assert str(info.value) == (
        "<bytes>: block 'main': operator 0 (ADD): ADD operator carries AxisAttribute, "
        "expected no attributes"
    )

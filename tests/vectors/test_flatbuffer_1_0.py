"""Tests of the TOSA 1.0 flatbuffer format (vectors/graph_writer_1_0.py,
vectors/graph_reader_1_0.py, vectors/fbbuild.py) through the public API of
vectors/flatbuffer.py: round trips of 1.0 graphs, the CONST / TosaShape / variable
conventions, determinism, format detection, and corrupt input.

Graphs are built with ``GraphBuilder(load_revision("1.0"))``, so they hold 1.0's operands
(zero points, pad_const, shifts as input tensors) and attributes (enum names)."""

from __future__ import annotations

import copy
import hashlib
import importlib
import math
import os
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vectors_helpers import same_value

from conformance import dtypes as D
from conformance.builder import BlockBuilder, GraphBuilder
from conformance.graph import Block, Graph, Operator, Region, Tensor, Version
from conformance.spec import load_revision
from vectors import fbbuild
from vectors import layout_1_0 as L
from vectors.fbbuild import Builder
from vectors.flatbuffer import (
    VERSION_1_0,
    FlatbufferError,
    deserialize,
    detect_revision,
    read_graph,
    serialize,
    write_graph,
)
from vectors.graph_writer_1_0 import IR_CONST_LOCATION, file_regions

SPEC = load_revision("1.0")
_PROFILE = settings.default
MANY = settings(max_examples=5 * ((_PROFILE and _PROFILE.max_examples) or 100), deadline=None)


# ----------------------------------------------------------------------------- helpers


def assert_same_graph(a: Graph, b: Graph) -> None:
    assert a.version == b.version
    assert [r.name for r in a.regions] == [r.name for r in b.regions]
    for ra, rb in zip(a.regions, b.regions, strict=True):
        assert [x.name for x in ra.blocks] == [x.name for x in rb.blocks]
        for ba, bb in zip(ra.blocks, rb.blocks, strict=True):
            assert (ba.inputs, ba.outputs) == (bb.inputs, bb.outputs)
            assert list(ba.tensors) == list(bb.tensors)
            for name, ta in ba.tensors.items():
                tb = bb.tensors[name]
                assert (ta.name, tuple(ta.shape), ta.dtype) == (tb.name, tb.shape, tb.dtype)
                assert (ta.variable, ta.is_unranked, ta.variable_name) == (
                    tb.variable,
                    tb.is_unranked,
                    tb.variable_name,
                )
                assert (ta.data is None) == (tb.data is None), name
                if ta.data is not None:
                    assert same_value(np.asarray(ta.data), tb.data), name
            assert len(ba.operators) == len(bb.operators)
            for oa, ob in zip(ba.operators, bb.operators, strict=True):
                assert (oa.op, oa.inputs, oa.outputs) == (ob.op, ob.inputs, ob.outputs)
                assert sorted(oa.attributes) == sorted(ob.attributes), oa.op
                for key, value in oa.attributes.items():
                    want = tuple(value) if isinstance(value, list) else value
                    assert same_value(want, ob.attributes[key]), (oa.op, key)


def round_trip(graph: Graph) -> tuple[Graph, bytes]:
    """Serialize in the 1.0 format, read back (format detected), check exact equality
    and byte-identical re-serialization."""
    data = serialize(graph, revision="1.0")
    assert detect_revision(data) == "1.0"
    back = deserialize(data)
    assert_same_graph(graph, back)
    assert serialize(back, revision="1.0") == data
    assert_same_graph(deserialize(data, revision="1.0"), back)
    return back, data


Build = Callable[[BlockBuilder], None]


def graph_of(build: Build, *, regions: dict[str, Build] | None = None) -> Graph:
    """A 1.0 graph: block ``main`` from ``build``, and a block for each of ``regions``
    (called graphs), all in one region as the builder makes them; the file holds each
    called graph as a region of its own (``test_called_graphs_are_regions_in_the_file``)."""
    gb = GraphBuilder(SPEC)
    build(gb.block("main"))
    for name, fn in (regions or {}).items():
        fn(gb.block(name))
    graph = gb.build()
    graph.version = VERSION_1_0
    return graph


def test_called_graphs_are_regions_in_the_file() -> None:
    # 1.0 names a COND_IF branch by region: Arm's model looks the branch up so.
    from vectors.fbreader import Reader

    root = Reader(serialize(CASES["cond-if-regions"](), revision="1.0")).root(L.GRAPH.layout)
    regions = root.tables("regions", L.REGION.layout)
    names = [r.string("name") for r in regions]
    assert names == ["main", "then", "else"]
    assert [[b.string("name") for b in r.tables("blocks", L.BLOCK.layout)] for r in regions] == [
        ["main"], ["then"], ["else"]
    ]


def consts(b: BlockBuilder, **values: tuple[str, object]) -> None:
    for name, (dt, data) in values.items():
        arr = np.asarray(data, dtype=D.BY_NAME[dt].storage)
        b.tensor(name, arr.shape, dt, data=arr)


def ops_in_file(data: bytes) -> list[tuple[str, list[str], list[str], str | None]]:
    """(Op, inputs, outputs, location text) of the first block, read from the bytes with
    the checked reader directly (not through the IR)."""
    from vectors.fbreader import Reader

    root = Reader(data).root(L.GRAPH.layout)
    block = root.tables("regions", L.REGION.layout)[0].tables("blocks", L.BLOCK.layout)[0]
    out = []
    for op in block.tables("operators", L.OPERATOR.layout):
        loc = op.table("location", L.LOCATION.layout)
        out.append(
            (
                L.OP.names[op.u32("op")],
                op.strings("inputs"),
                op.strings("outputs"),
                None if loc is None else loc.string("text"),
            )
        )
    return out


# ------------------------------------------------------------------------- round trips


def _add(b: BlockBuilder) -> None:
    b.input("a", [2, 3], "i32")
    consts(b, k=("i32", [[1, -2, 3], [2**31 - 1, 0, -(2**31)]]))
    b.tensor("out", [2, 3], "i32")
    b.op("ADD", ["a", "k"], ["out"])
    b.output("out")


def _conv(b: BlockBuilder) -> None:
    b.input("x", [1, 4, 4, 2], "i8")
    weights = (np.arange(24).reshape(3, 2, 2, 2) - 12).astype(np.int8)
    consts(b, w=("i8", weights), bias=("i32", [1, -2, 3]), izp=("i8", [5]), wzp=("i8", [-3]))
    b.tensor("y", [1, 3, 3, 3], "i32")
    b.op(
        "CONV2D",
        ["x", "w", "bias", "izp", "wzp"],
        ["y"],
        pad=(0, 0, 0, 0),
        stride=(1, 1),
        dilation=(1, 1),
        acc_type="INT32",
        local_bound=False,
    )
    b.output("y")


def _rescale(b: BlockBuilder) -> None:
    b.input("x", [4], "i8")
    consts(b, mul=("i32", [1 << 30]), shift=("i8", [31]), izp=("i8", [3]), ozp=("i8", [-2]))
    b.tensor("y", [4], "i8")
    b.op(
        "RESCALE",
        ["x", "mul", "shift", "izp", "ozp"],
        ["y"],
        scale32=True,
        rounding_mode="DOUBLE_ROUND",
        per_channel=False,
        input_unsigned=False,
        output_unsigned=False,
    )
    b.output("y")


def _max_pool(b: BlockBuilder) -> None:
    b.input("x", [1, 4, 4, 1], "fp32")
    b.tensor("y", [1, 2, 2, 1], "fp32")
    b.op("MAX_POOL2D", ["x"], ["y"], kernel=(2, 2), stride=(2, 2), pad=(0, 0, 0, 0),
         nan_mode="IGNORE")  # fmt: skip
    b.output("y")


def _shapes(b: BlockBuilder) -> None:
    b.input("x", [4, 6], "i16")
    consts(b, pad_const=("i16", [-7]))
    b.tensor("r", [6, 4], "i16")
    b.tensor("s", [3, 2], "i16")
    b.tensor("p", [4, 5], "i16")
    b.tensor("new_shape", [2], "shape", data=np.array([6, 4]))
    b.tensor("start", [2], "shape", data=np.array([1, 2]))
    b.tensor("size", [2], "shape", data=np.array([3, 2]))
    b.tensor("padding", [4], "shape", data=np.array([1, 0, 0, 3]))
    b.op("RESHAPE", ["x", "new_shape"], ["r"])
    b.op("SLICE", ["r", "start", "size"], ["s"])
    b.op("PAD", ["s", "padding", "pad_const"], ["p"])
    b.output("p")


def _mul_clamp(b: BlockBuilder) -> None:
    b.input("x", [3], "i32")
    consts(b, shift=("i8", [2]))
    b.input("h", [3], "i16")
    b.tensor("m", [3], "i32")
    b.tensor("c", [3], "i16")
    b.op("MUL", ["x", "x", "shift"], ["m"])
    b.op("CLAMP", ["h"], ["c"], min_val=-(2**15), max_val=12345, nan_mode="PROPAGATE")
    b.output("m")
    b.output("c")


def _misc(b: BlockBuilder) -> None:
    b.input("x", [1, 2, 2, 3], "fp16")
    b.tensor("t", [3, 2, 2, 1], "fp16")
    b.tensor("arg", [3, 2, 2], "i32")
    b.tensor("sum", [1, 2, 2, 1], "fp16")
    b.tensor("cat", [2, 2, 2, 3], "fp16")
    b.tensor("z", [1, 4, 4, 3], "fp16")
    b.tensor("scale", [4], "shape", data=np.array([4, 2, 4, 2]))
    b.tensor("offset", [2], "shape", data=np.array([0, 0]))
    b.tensor("border", [2], "shape", data=np.array([2, 2]))
    b.op("TRANSPOSE", ["x"], ["t"], perms=(3, 1, 2, 0))
    b.op("ARGMAX", ["t"], ["arg"], axis=3, nan_mode="PROPAGATE")
    b.op("REDUCE_SUM", ["x"], ["sum"], axis=3)
    b.op("CONCAT", ["x", "x"], ["cat"], axis=0)
    b.op("RESIZE", ["x", "scale", "offset", "border"], ["z"], mode="NEAREST_NEIGHBOR")
    for name in ("t", "arg", "sum", "cat", "z"):
        b.output(name)


def _clamp_float(dt: str, lo: float, hi: float) -> Build:
    def build(b: BlockBuilder) -> None:
        b.input("x", [2], dt)
        b.tensor("y", [2], dt)
        b.op("CLAMP", ["x"], ["y"], min_val=lo, max_val=hi, nan_mode="IGNORE")
        b.output("y")

    return build


def _cond_if() -> Graph:
    def main(b: BlockBuilder) -> None:
        b.input("c", [], "bool")
        b.input("x", [2], "i32")
        b.input("y", [2], "i32")
        b.tensor("r", [2], "i32")
        b.op("COND_IF", ["c", "x", "y"], ["r"], then_graph="then", else_graph="else")
        b.output("r")

    def branch(op: str) -> Build:
        def build(b: BlockBuilder) -> None:
            b.input("a", [2], "i32")
            b.input("b", [2], "i32")
            b.tensor("o", [2], "i32")
            b.op(op, ["a", "b"], ["o"])
            b.output("o")

        return build

    return graph_of(main, regions={"then": branch("ADD"), "else": branch("SUB")})


def _while_loop() -> Graph:
    def main(b: BlockBuilder) -> None:
        b.input("i", [], "i32")
        b.tensor("o", [], "i32")
        b.op("WHILE_LOOP", ["i"], ["o"], cond_graph="cond", body_graph="body")
        b.output("o")

    def cond(b: BlockBuilder) -> None:
        b.input("i", [], "i32")
        consts(b, limit=("i32", 5))
        b.tensor("r", [], "bool")
        b.op("GREATER", ["limit", "i"], ["r"])
        b.output("r")

    def body(b: BlockBuilder) -> None:
        b.input("i", [], "i32")
        consts(b, one=("i32", 1))
        b.tensor("o", [], "i32")
        b.op("ADD", ["i", "one"], ["o"])
        b.output("o")

    return graph_of(main, regions={"cond": cond, "body": body})


def _variables(b: BlockBuilder) -> None:
    b.op("VARIABLE", [], [], name="state", var_shape=(2,), type="INT8",
         initial_value=np.array([1, -2], np.int8))  # fmt: skip
    b.op("VARIABLE", [], [], name="flags", var_shape=(3,), type="BOOLEAN")
    b.input("x", [2], "i8")
    b.tensor("y", [2], "i8")
    b.tensor("state", [2], "i8")  # an IR tensor with the variable's name: no clash
    b.op("VARIABLE_WRITE", ["x"], [], name="state")
    b.op("VARIABLE_READ", [], ["y"], name="state")
    b.op("IDENTITY", ["y"], ["state"])
    b.output("state")


def _explicit_consts(b: BlockBuilder) -> None:
    b.tensor("c", [2, 2], "bf16")
    b.tensor("s", [3], "shape")
    vals = np.array([[1.5, -0.0], [np.inf, np.nan]], dtype=ml_dtypes.bfloat16)
    b.op("CONST", [], ["c"], values=vals)
    b.op("CONST_SHAPE", [], ["s"], values=np.array([1, 2, 3]))
    b.output("c")
    b.output("s")


BF16_MAX = float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)

CASES: dict[str, Callable[[], Graph]] = {
    "add-int32": lambda: graph_of(_add),
    "conv2d-int8-zero-points": lambda: graph_of(_conv),
    "rescale-rounding-mode": lambda: graph_of(_rescale),
    "max-pool2d-nan-mode": lambda: graph_of(_max_pool),
    "reshape-slice-pad-shapes": lambda: graph_of(_shapes),
    "mul-shift-clamp-int": lambda: graph_of(_mul_clamp),
    "transpose-argmax-reduce-concat-resize": lambda: graph_of(_misc),
    "clamp-fp16": lambda: graph_of(_clamp_float("fp16", -65504.0, 0.5)),
    "clamp-bf16": lambda: graph_of(_clamp_float("bf16", -1.0, BF16_MAX)),
    "clamp-fp32": lambda: graph_of(_clamp_float("fp32", -math.inf, -0.0)),
    "cond-if-regions": _cond_if,
    "while-loop-regions": _while_loop,
    "variables-by-name": lambda: graph_of(_variables),
    "const-operators": lambda: graph_of(_explicit_consts),
}


@pytest.mark.parametrize("case", CASES)
def test_round_trip(case: str) -> None:
    round_trip(CASES[case]())


def test_conv2d_zero_points_are_const_inputs_in_the_file() -> None:
    _, data = round_trip(CASES["conv2d-int8-zero-points"]())
    assert ops_in_file(data) == [
        ("CONST", [], ["w"], None),
        ("CONST", [], ["bias"], None),
        ("CONST", [], ["izp"], None),
        ("CONST", [], ["wzp"], None),
        ("CONV2D", ["x", "w", "bias", "izp", "wzp"], ["y"], None),
    ]


def test_shape_values_are_tosa_shapes_made_by_const_shape() -> None:
    graph = CASES["reshape-slice-pad-shapes"]()
    back, data = round_trip(graph)
    ops = ops_in_file(data)
    assert ops[:5] == [
        ("CONST", [], ["pad_const"], None),
        ("CONST_SHAPE", [], ["new_shape"], None),
        ("CONST_SHAPE", [], ["start"], None),
        ("CONST_SHAPE", [], ["size"], None),
        ("CONST_SHAPE", [], ["padding"], None),
    ]
    from vectors.fbreader import Reader

    root = Reader(data).root(L.GRAPH.layout)
    block = root.tables("regions", L.REGION.layout)[0].tables("blocks", L.BLOCK.layout)[0]
    tensors = [t.string("name") for t in block.tables("tensors", L.TENSOR.layout)]
    shapes = {
        s.string("name"): (s.u32("rank"), s.raw_bytes("data"))
        for s in block.tables("shapes", L.SHAPE.layout)
    }
    assert tensors == ["x", "pad_const", "r", "s", "p"]
    assert shapes["padding"] == (4, np.array([1, 0, 0, 3], "<i8").tobytes())
    assert back.main.tensors["padding"].dtype is D.SHAPE


def test_ir_const_operators_stay_operators() -> None:
    back, data = round_trip(CASES["const-operators"]())
    assert [op[0] for op in ops_in_file(data)] == ["CONST", "CONST_SHAPE"]
    assert all(op[3] == IR_CONST_LOCATION for op in ops_in_file(data))
    assert back.main.tensors["c"].data is None  # the values live in the operator


def test_variables_are_variable_tensors_in_the_file() -> None:
    back, data = round_trip(CASES["variables-by-name"]())
    ops = ops_in_file(data)
    assert [op[:3] for op in ops] == [
        ("VARIABLE", [], ["state_1"]),
        ("VARIABLE", [], ["flags"]),
        ("VARIABLE_WRITE", ["x"], ["state_1"]),
        ("VARIABLE_READ", ["state_1"], ["y"]),
        ("IDENTITY", ["y"], ["state"]),
    ]
    from vectors.fbreader import Reader

    root = Reader(data).root(L.GRAPH.layout)
    block = root.tables("regions", L.REGION.layout)[0].tables("blocks", L.BLOCK.layout)[0]
    var = block.tables("tensors", L.TENSOR.layout)[-2]
    assert (var.string("name"), var.boolean("variable"), var.string("variable_name")) == (
        "state_1",
        True,
        "state",
    )
    assert var.raw_bytes("data") == b"\x01\xfe"
    assert list(back.main.tensors) == ["x", "y", "state"]


def test_variable_read_in_another_block_refers_by_name() -> None:
    def main(b: BlockBuilder) -> None:
        b.op("VARIABLE", [], [], name="v", var_shape=(1,), type="FP32")
        b.input("c", [], "bool")
        b.tensor("r", [1], "fp32")
        b.op("COND_IF", ["c"], ["r"], then_graph="read", else_graph="read")
        b.output("r")

    def read(b: BlockBuilder) -> None:
        b.tensor("o", [1], "fp32")
        b.op("VARIABLE_READ", [], ["o"], name="v")
        b.output("o")

    round_trip(graph_of(main, regions={"read": read}))


def test_constants_that_are_inputs_or_produced_get_no_const() -> None:
    x = Tensor("x", (2,), D.I8, data=np.array([1, 2], np.int8))
    y = Tensor("y", (2,), D.I8, data=np.array([3, 4], np.int8))
    block = Block("main", [Operator("IDENTITY", ["x"], ["y"])], {"x": x, "y": y}, ["x"], ["y"])
    graph = Graph([Region("main", [block])], VERSION_1_0)
    _, data = round_trip(graph)
    assert [op[0] for op in ops_in_file(data)] == ["IDENTITY"]


def test_tensor_flags_and_empty_data_round_trip() -> None:
    t = Tensor("t", (0, 3), D.FP32, data=np.zeros((0, 3), np.float32), is_unranked=True)
    u = Tensor("u", (), D.I48, data=np.array(-(2**47), np.int64), variable=True,
               variable_name="u")  # fmt: skip
    v = Tensor("v", (5,), D.I4, data=np.array([-8, 7, 0, -1, 3], np.int8))
    block = Block("main", [], {"t": t, "u": u, "v": v}, ["t"], ["u", "v"])
    round_trip(Graph([Region("main", [block])], Version(1, 0, 0, draft=True)))


def test_shape_values_follow_the_other_tensors() -> None:
    """The one normalisation: a block's shape values read back after its other tensors."""
    gb = GraphBuilder(SPEC)
    b = gb.block()
    b.input("x", [4], "i8")
    b.tensor("shape", [2], "shape", data=np.array([2, 2]))
    b.tensor("y", [2, 2], "i8")
    b.op("RESHAPE", ["x", "shape"], ["y"])
    b.output("y")
    graph = gb.build()
    graph.version = VERSION_1_0
    data = serialize(graph, revision="1.0")
    back = deserialize(data)
    assert list(back.main.tensors) == ["x", "y", "shape"]
    assert serialize(back, revision="1.0") == data
    graph.main.tensors = {k: graph.main.tensors[k] for k in ("x", "y", "shape")}
    assert_same_graph(graph, back)


@given(st.data())
@settings(deadline=None)
def test_element_valued_attributes_round_trip(data: st.DataObject) -> None:
    dt = data.draw(st.sampled_from(["i8", "i16", "fp16", "bf16", "fp32"]), label="dt")
    dtype = D.BY_NAME[dt]
    if dtype.is_float:
        bits = data.draw(st.integers(0, (1 << (8 * dtype.storage.itemsize)) - 1), label="bits")
        raw = np.array([bits], f"u{dtype.storage.itemsize}").view(dtype.storage)
        lo = hi = float(raw[0])
    else:
        lo, hi = (data.draw(st.integers(*dtype.int_range)) for _ in range(2))
    graph = graph_of(_clamp_float(dt, lo, hi))
    graph.main.operators[0].attributes.update(min_val=lo, max_val=hi)
    round_trip(graph)


# ------------------------------------------------------------------------- determinism


def test_equal_graphs_give_equal_bytes() -> None:
    for make in CASES.values():
        assert serialize(make(), revision="1.0") == serialize(copy.deepcopy(make()), revision="1.0")


def test_attribute_dict_order_does_not_change_the_bytes() -> None:
    graph = CASES["conv2d-int8-zero-points"]()
    op = graph.main.operators[0]
    before = serialize(graph, revision="1.0")
    op.attributes = dict(reversed(list(op.attributes.items())))
    assert serialize(graph, revision="1.0") == before


# Pinned: any change of these bytes (a new layout rule, a runtime dependency creeping in)
# must be deliberate.
GOLDEN_SHA256 = {
    "conv2d-int8-zero-points": "9c749ce1ab80f362e9a85d628571d1914cf954c28d95e309b2c800c7130dfa7e",
    "cond-if-regions": "fd8c9d56755d811bca222910b72b9d9d052d94dbc61412b8aac5198f706d4e0b",
}


@pytest.mark.parametrize("case", GOLDEN_SHA256)
def test_bytes_are_pinned(case: str) -> None:
    digest = hashlib.sha256(serialize(CASES[case](), revision="1.0")).hexdigest()
    assert digest == GOLDEN_SHA256[case]


def test_the_flatbuffers_package_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    import flatbuffers

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the 1.0 writer must not use flatbuffers.Builder")

    monkeypatch.setattr(flatbuffers, "Builder", refuse)
    monkeypatch.setattr(flatbuffers.builder, "Builder", refuse)
    for make in CASES.values():
        round_trip(make())


def test_buffer_layout_is_aligned() -> None:
    """Tables, vectors and tensor data sit at the alignment the flatbuffer rules (and the
    schema's force_align: 8) ask for."""
    from vectors.fbreader import Reader

    data = serialize(CASES["conv2d-int8-zero-points"](), revision="1.0")
    assert len(data) % 8 == 0
    root = Reader(data).root(L.GRAPH.layout)
    assert root.pos % 4 == 0
    block = root.tables("regions", L.REGION.layout)[0].tables("blocks", L.BLOCK.layout)[0]
    for t in block.tables("tensors", L.TENSOR.layout):
        assert t.pos % 4 == 0
        field_pos = t._field(L.TENSOR.field("data").slot)
        if field_pos is not None:
            start = field_pos + struct.unpack_from("<I", data, field_pos)[0] + 4
            assert start % 8 == 0, t.string("name")


def test_builder_shares_vtables_and_checks_offsets() -> None:
    b = Builder()
    one = b.table(L.VERSION, {"_major": 1})
    two = b.table(L.VERSION, {"_major": 2})
    data = b.finish(b.table(L.GRAPH, {"version": two}), b"TOSA")
    vt_one = len(data) - one - struct.unpack_from("<i", data, len(data) - one)[0]
    vt_two = len(data) - two - struct.unpack_from("<i", data, len(data) - two)[0]
    assert vt_one == vt_two
    with pytest.raises(fbbuild.EncodeError, match="was not written"):
        Builder().table(L.GRAPH, {"version": 12})


# -------------------------------------------------------------- format choice and files


def test_draft_default_is_unchanged_and_detected() -> None:
    graph = CASES["add-int32"]()
    graph.version = Version()  # the draft's 1.1.0 draft
    draft = serialize(graph)
    assert draft == serialize(graph, revision="2024-04-draft")
    assert detect_revision(draft) == "2024-04-draft"
    assert deserialize(draft).version == Version()


def test_write_and_read_files(tmp_path: Path) -> None:
    graph = CASES["cond-if-regions"]()
    path = tmp_path / "graph.tosa"
    write_graph(path, graph, revision="1.0")
    assert path.read_bytes() == serialize(graph, revision="1.0")
    assert_same_graph(graph, read_graph(path))
    assert_same_graph(graph, read_graph(path, revision="1.0"))


def test_unknown_revision() -> None:
    with pytest.raises(FlatbufferError, match=r"^cannot serialize graph: unknown revision '2\.0'"):
        serialize(CASES["add-int32"](), revision="2.0")
    with pytest.raises(FlatbufferError, match=r"^x\.tosa: cannot read: unknown revision"):
        deserialize(b"", source="x.tosa", revision="0.8")


# ------------------------------------------------------------------- errors on writing


def _with(make: str, edit: Callable[[Graph], None]) -> Graph:
    graph = CASES[make]()
    edit(graph)
    return graph


def _set_attr(op: int, **attrs: object) -> Callable[[Graph], None]:
    return lambda g: g.main.operators[op].attributes.update(attrs)


@pytest.mark.parametrize(
    ("graph", "message"),
    [
        (
            _with("add-int32", lambda g: setattr(g, "version", Version())),
            "graph version 1.1.0 draft is not a TOSA 1.0 version",
        ),
        (
            _with("add-int32", lambda g: setattr(g.main.operators[0], "op", "FULLY_CONNECTED")),
            "block 'main': operator 0 (FULLY_CONNECTED): not an operator of TOSA 1.0's schema",
        ),
        (
            _with("max-pool2d-nan-mode", _set_attr(0, nan_mode="SOMETIMES")),
            "operator 0 (MAX_POOL2D): attribute 'nan_mode': expected one of PROPAGATE, IGNORE",
        ),
        (
            _with("max-pool2d-nan-mode", _set_attr(0, input_zp=0)),
            "TOSA 1.0's MaxPool2dAttribute has no field for attribute 'input_zp'",
        ),
        (
            _with("rescale-rounding-mode", _set_attr(0, double_round=True)),
            "RescaleAttribute has no field for attribute 'double_round'",
        ),
        (
            _with("conv2d-int8-zero-points", _set_attr(0, pad=(0, 0, 2**31, 0))),
            "attribute 'pad': 2147483648 does not fit in int32",
        ),
        (
            _with("clamp-fp16", _set_attr(0, min_val=0.1)),
            "attribute 'min_val': value: float64 values do not convert exactly to fp16",
        ),
        (
            _with("mul-shift-clamp-int", _set_attr(1, max_val=2**15)),
            "attribute 'max_val': 32768 is not a i16 value",
        ),
        (
            _with(
                "reshape-slice-pad-shapes",
                lambda g: g.main.tensors.update(
                    start=Tensor("start", (1, 2), D.SHAPE, data=np.array([[1, 2]]))
                ),
            ),
            "shape value 'start' has tensor shape [1, 2]; TOSA 1.0 holds shape values as",
        ),
        (
            _with("variables-by-name", lambda g: g.main.operators[2].attributes.pop("name")),
            "operator 2 (VARIABLE_WRITE): needs its 'name' attribute",
        ),
        (
            _with("variables-by-name", _set_attr(0, type="INT64")),
            "operator 0 (VARIABLE): attribute 'type': expected one of BOOLEAN, INT4, INT8",
        ),
        (
            _with("const-operators", _set_attr(0, values=np.zeros((2, 3)))),
            "operator 0 (CONST) attribute 'values': array shape (2, 3) does not match",
        ),
        (
            _with(
                "add-int32",
                lambda g: g.main.tensors.update(k=Tensor("kk", (2, 3), D.I32)),
            ),
            "tensor 'k' is named 'kk'; the key must be its name",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_bad_graphs_are_reported_in_one_line(graph: Graph, message: str) -> None:
    with pytest.raises(FlatbufferError) as info:
        serialize(graph, revision="1.0")
    text = str(info.value)
    assert text.startswith("cannot serialize graph: ") and "\n" not in text
    assert message in text


def test_write_graph_errors_name_the_path(tmp_path: Path) -> None:
    graph = CASES["add-int32"]()
    graph.version = Version(0, 80, 0, False)
    with pytest.raises(FlatbufferError, match=r"^.*g\.tosa: cannot serialize graph: graph version"):
        write_graph(tmp_path / "g.tosa", graph, revision="1.0")


# -------------------------------------------------------------------- errors on reading

_SAMPLE = serialize(CASES["conv2d-int8-zero-points"](), revision="1.0")
_SAMPLES = [serialize(make(), revision="1.0") for make in CASES.values()]


def test_every_truncation_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "cut.tosa"
    for length in range(len(_SAMPLE)):
        path.write_bytes(_SAMPLE[:length])
        for revision in (None, "1.0"):
            with pytest.raises(FlatbufferError) as info:
                read_graph(path, revision=revision)
            message = str(info.value)
            assert message.startswith(f"{path}: ") and "\n" not in message
            if length < 8:
                assert "not a TOSA flatbuffer" in message
            else:
                assert "truncated or corrupt flatbuffer: " in message, message


def test_wrong_file_identifier() -> None:
    with pytest.raises(FlatbufferError) as info:
        deserialize(_SAMPLE[:4] + b"TFL3" + _SAMPLE[8:], source="m.tosa", revision="1.0")
    assert str(info.value) == (
        "m.tosa: not a TOSA flatbuffer (file identifier is 'TFL3', expected 'TOSA')"
    )


def test_bad_root_offset() -> None:
    bad = struct.pack("<I", len(_SAMPLE) + 100) + _SAMPLE[4:]
    with pytest.raises(FlatbufferError, match=r"^<bytes>: truncated or corrupt flatbuffer: "):
        deserialize(bad)


@given(st.data())
@MANY
def test_corrupted_files_never_crash(data: st.DataObject) -> None:
    raw = bytearray(data.draw(st.sampled_from(_SAMPLES), label="sample"))
    for _ in range(data.draw(st.integers(1, 6), label="corruptions")):
        pos = data.draw(st.integers(8, len(raw) - 1), label="position")
        raw[pos] = data.draw(st.integers(0, 255), label="byte")
    revision = data.draw(st.sampled_from([None, "1.0"]), label="revision")
    try:
        deserialize(bytes(raw), source="bad.tosa", revision=revision)
    except FlatbufferError as exc:
        assert str(exc).startswith("bad.tosa: ") and "\n" not in str(exc)


@given(st.binary(max_size=300))
@MANY
def test_random_bytes_with_the_identifier_never_crash(tail: bytes) -> None:
    data = tail[:4].ljust(4, b"\0") + b"TOSA" + tail[4:]
    try:
        deserialize(data, revision="1.0")
    except FlatbufferError as exc:
        assert str(exc).startswith("<bytes>: ") and "\n" not in str(exc)


def _handmade(
    tensor: dict[str, object] | None = None,
    op: dict[str, object] | None = None,
    graph: dict[str, object] | None = None,
    shape: dict[str, object] | None = None,
) -> bytes:
    """A 1.0 file written field by field: one block with the given tensor, shape and
    operator fields (strings and string lists are written as such)."""
    b = Builder()

    def fields(table: object, values: dict[str, object]) -> dict[str, fbbuild.Value]:
        out: dict[str, fbbuild.Value] = {}
        for key, value in values.items():
            if key == "shape" and isinstance(value, list):
                out[key] = b.scalar_vector("int32", value)
            elif isinstance(value, str):
                out[key] = b.string(value)
            elif isinstance(value, list):
                out[key] = b.string_vector(value)
            elif isinstance(value, bytes):
                out[key] = b.byte_vector(value, 8)
            else:
                assert isinstance(value, int | float)
                out[key] = value
        return out

    version = b.table(L.VERSION, {"_major": 1, "_minor": 0, "_patch": 2, "_draft": False})
    tensors = [b.table(L.TENSOR, fields(L.TENSOR, tensor))] if tensor else []
    shapes = [b.table(L.SHAPE, fields(L.SHAPE, shape))] if shape else []
    ops = [b.table(L.OPERATOR, fields(L.OPERATOR, op))] if op else []
    block = b.table(
        L.BLOCK,
        {
            "name": b.string("main"),
            "operators": b.offset_vector(ops),
            "tensors": b.offset_vector(tensors),
            "shapes": b.offset_vector(shapes),
        },
    )
    region = b.table(L.REGION, {"name": b.string("main"), "blocks": b.offset_vector([block])})
    extra: dict[str, int] = {}
    for key, value in (graph or {}).items():
        assert key == "compatibility" and isinstance(value, int)
        extra[key] = b.table(L.COMPATIBILITY, {"features": value})
    root = b.table(L.GRAPH, {"version": version, "regions": b.offset_vector([region]), **extra})
    return b.finish(root, b"TOSA")


DT = L.DTYPE.values
OPS = L.OP.values


@pytest.mark.parametrize(
    ("buffer", "problem"),
    [
        (_handmade(op={"op": 999}), "block 'main': operator 0: unknown Op value 999"),
        (_handmade(op={"op": 0}), "block 'main': operator 0: unknown Op UNKNOWN"),
        (
            _handmade(tensor={"name": "t", "type": DT["INT64"], "shape": []}),
            "block 'main': tensor 't': DType INT64 is not an element type of TOSA 1.0",
        ),
        (
            _handmade(tensor={"name": "t", "type": DT["SHAPE"]}),
            "block 'main': tensor 't': DType SHAPE in a TosaTensor: TOSA 1.0 keeps shape",
        ),
        (
            _handmade(tensor={"name": "t", "type": 77}),
            "block 'main': tensor 't': unknown DType value 77",
        ),
        (
            _handmade(tensor={"name": "t", "type": DT["INT8"], "offset": 64, "size": 4}),
            "block 'main': tensor 't': TosaTensor.offset (external or block-scaled data) is not",
        ),
        (
            _handmade(tensor={"name": "t", "type": DT["INT8"], "data": b"\x01\x02"}),
            "block 'main': tensor 't': 2 data bytes where shape () of i8 needs 1",
        ),
        (
            _handmade(shape={"name": "s", "rank": 2, "data": b"\x01" * 8}),
            "block 'main': shape value 's': 8 data bytes where shape (2,) of shape needs 16",
        ),
        (
            _handmade(
                op={"op": OPS["ADD"], "attribute_type": L.ATTRIBUTE.members["ArgMaxAttribute"]}
            ),
            "operator 0 (ADD): ADD operator carries ArgMaxAttribute, expected AddAttribute",
        ),
        (
            _handmade(
                op={"op": OPS["ADD"], "attribute_type": L.ATTRIBUTE.members["AddAttribute"]}
            ),
            "operator 0 (ADD): ADD operator declares AddAttribute but has no attribute table",
        ),
        (
            _handmade(op={"op": OPS["VARIABLE_READ"], "inputs": ["x"], "outputs": ["y"]}),
            "operator 0 (VARIABLE_READ): first input 'x' is not a variable tensor of the block",
        ),
        (
            _handmade(graph={"compatibility": 1 << L.COMPATIBILITY_FEATURE.values["MXFP"]}),
            "the file requires the serialization features MXFP (TosaGraph.compatibility)",
        ),
    ],
    ids=[
        "op-999",
        "op-unknown",
        "dtype-int64",
        "dtype-shape",
        "dtype-77",
        "external-data",
        "data-length",
        "shape-data-length",
        "wrong-attribute-table",
        "missing-attribute-table",
        "variable-read-without-variable",
        "compatibility-features",
    ],
)
def test_files_the_ir_cannot_hold(buffer: bytes, problem: str) -> None:
    with pytest.raises(FlatbufferError) as info:
        deserialize(buffer, source="model.tosa")
    text = str(info.value)
    assert text.startswith("model.tosa: ") and "\n" not in text
    assert problem in text


def test_handmade_buffer_reads() -> None:
    graph = deserialize(
        _handmade(
            tensor={"name": "t", "type": DT["FP32"], "shape": []},
            op={"op": OPS["ABS"], "inputs": ["t"], "outputs": ["t"]},
        )
    )
    assert graph.version == VERSION_1_0
    assert graph.main.tensors["t"].dtype is D.FP32
    assert graph.main.operators[0].op == "ABS" and graph.main.operators[0].attributes == {}

# ===================================================================== with tosa-tools
# The decisive checks, skipped (with the reason shown) when the optional tosa-tools
# package is absent: Arm's reference model runs graphs we wrote (compared with numpy),
# tosa-tools' generated Python reader decodes our bytes to the same operators and
# tensors, and our reader reads what Arm's serializer writes.

NO_TOSA_TOOLS = "tosa-tools is not installed: Arm's model and reader cannot check the 1.0 format"


def run(graph: Graph, *inputs: np.ndarray) -> list[np.ndarray]:
    """Our bytes through Arm's in-process model; the graph must be VALID."""
    model = pytest.importorskip("tosa_reference_model", reason=NO_TOSA_TOOLS)
    os.environ.setdefault("TOSA_MODEL_NO_BACKTRACE", "1")  # see conformance/backends/arm/run.py
    outputs, status = model.run(serialize(graph, revision="1.0"), list(inputs))
    assert status.name == "TOSA_VALID", status
    return [np.asarray(o) for o in outputs]


RNG = np.random.default_rng(20260801)


# ------------------------------------------------------------------------ the model


def test_add_int32() -> None:
    a = RNG.integers(-1000, 1000, (2, 3)).astype(np.int32)
    graph = graph_of(_add_small)
    (out,) = run(graph, a)
    np.testing.assert_array_equal(out, a + np.array([[1, -2, 3], [4, 0, -6]], np.int32))


def _add_small(b: BlockBuilder) -> None:
    b.input("a", [2, 3], "i32")
    consts(b, k=("i32", [[1, -2, 3], [4, 0, -6]]))
    b.tensor("out", [2, 3], "i32")
    b.op("ADD", ["a", "k"], ["out"])
    b.output("out")


def test_conv2d_int8_with_zero_points() -> None:
    graph = CASES["conv2d-int8-zero-points"]()
    block = graph.main
    x = RNG.integers(-128, 128, (1, 4, 4, 2)).astype(np.int8)
    (out,) = run(graph, x)
    w = block.tensors["w"].data
    bias = block.tensors["bias"].data
    assert w is not None and bias is not None
    xs = x.astype(np.int64) - 5
    ws = w.astype(np.int64) + 3
    want = np.zeros((1, 3, 3, 3), np.int64)
    for oy in range(3):
        for ox in range(3):
            for oc in range(3):
                window = xs[0, oy : oy + 2, ox : ox + 2, :]
                want[0, oy, ox, oc] = (window * ws[oc]).sum() + bias[oc]
    np.testing.assert_array_equal(out, want.astype(np.int32))


@pytest.mark.parametrize("rounding", ["SINGLE_ROUND", "DOUBLE_ROUND"])
def test_rescale(rounding: str) -> None:
    graph = CASES["rescale-rounding-mode"]()
    op = graph.main.operators[0]
    op.attributes["rounding_mode"] = rounding
    # multiplier 1 << 30, shift 33: a scale of 1/8, where the two roundings differ
    graph.main.tensors["shift"].data = np.array([33], np.int8)
    x = np.array([-128, -3, 3, 23], np.int8)
    (out,) = run(graph, x)
    value = x.astype(np.int64) - 3
    shift = 33
    rnd = np.full_like(value, 1 << (shift - 1))
    if rounding == "DOUBLE_ROUND":
        rnd += np.where(value >= 0, 1 << 30, -(1 << 30))
    want = np.clip(((value * (1 << 30) + rnd) >> shift) - 2, -128, 127)
    np.testing.assert_array_equal(out, want.astype(np.int8))


def test_pad_with_pad_const_and_shape_values() -> None:
    graph = CASES["reshape-slice-pad-shapes"]()
    x = RNG.integers(-1000, 1000, (4, 6)).astype(np.int16)
    (out,) = run(graph, x)
    sliced = x.reshape(6, 4)[1:4, 2:4]
    want = np.pad(sliced, ((1, 0), (0, 3)), constant_values=-7)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("nan_mode", ["IGNORE", "PROPAGATE"])
def test_max_pool2d_fp32_nan_mode(nan_mode: str) -> None:
    graph = CASES["max-pool2d-nan-mode"]()
    graph.main.operators[0].attributes["nan_mode"] = nan_mode
    x = RNG.standard_normal((1, 4, 4, 1)).astype(np.float32)
    x[0, 0, 0, 0] = np.nan  # one NaN in the first window
    x[0, 2:4, 2:4, 0] = np.nan  # a window of NaNs only
    (out,) = run(graph, x)
    windows = x.reshape(1, 2, 2, 2, 2, 1).transpose(0, 1, 3, 2, 4, 5).reshape(1, 2, 2, 4, 1)
    reduce = np.fmax.reduce if nan_mode == "IGNORE" else np.max
    with np.errstate(invalid="ignore"):
        want = reduce(windows, axis=3)
    np.testing.assert_array_equal(out, want)
    assert np.isnan(out[0, 0, 0, 0]) == (nan_mode == "PROPAGATE")


def test_mul_shift_and_clamp() -> None:
    graph = CASES["mul-shift-clamp-int"]()
    x = np.array([3, -5, 1000], np.int32)
    h = np.array([-32768, 5, 32767], np.int16)
    m, c = run(graph, x, h)
    np.testing.assert_array_equal(m, ((x.astype(np.int64) ** 2 + 2) >> 2).astype(np.int32))
    np.testing.assert_array_equal(c, np.clip(h, -32768, 12345))


@pytest.mark.parametrize("condition", [True, False])
def test_cond_if_regions(condition: bool) -> None:
    x = np.array([5, 6], np.int32)
    y = np.array([1, 2], np.int32)
    (out,) = run(CASES["cond-if-regions"](), np.array(condition), x, y)
    np.testing.assert_array_equal(out, x + y if condition else x - y)


def test_while_loop_regions() -> None:
    (out,) = run(CASES["while-loop-regions"](), np.array(1, np.int32))
    assert int(out) == 5


# ------------------------------------------------------- Arm's generated Python reader


def _names(cls: Any) -> dict[int, str]:
    return {v: k for k, v in vars(cls).items() if not k.startswith("_") and isinstance(v, int)}


def _decode_with_arm(data: bytes) -> dict[str, Any]:
    """Regions, blocks, tensors, shapes and operators as tosa-tools' reader sees them."""
    graph_mod = importlib.import_module("tosa.TosaGraph")
    ops = _names(importlib.import_module("tosa.Op").Op)
    types = _names(importlib.import_module("tosa.DType").DType)
    attrs = _names(importlib.import_module("tosa.Attribute").Attribute)
    g = graph_mod.TosaGraph.GetRootAs(data, 0)
    v = g.Version()
    out: dict[str, Any] = {"version": (v._Major(), v._Minor(), v._Patch(), v._Draft())}
    regions = []
    for r in range(g.RegionsLength()):
        region = g.Regions(r)
        blocks = []
        for k in range(region.BlocksLength()):
            b = region.Blocks(k)
            tensors = []
            for i in range(b.TensorsLength()):
                t = b.Tensors(i)
                data_bytes = t.DataAsNumpy().tobytes() if t.DataLength() else None
                shape = tuple(int(d) for d in t.ShapeAsNumpy()) if t.ShapeLength() else ()
                tensors.append((t.Name().decode(), shape, types[t.Type()], data_bytes))
            shapes = []
            for i in range(b.ShapesLength()):
                s = b.Shapes(i)
                data_bytes = s.DataAsNumpy().tobytes() if s.DataLength() else None
                shapes.append((s.Name().decode(), s.Rank(), data_bytes))
            operators = []
            for i in range(b.OperatorsLength()):
                o = b.Operators(i)
                operators.append(
                    (
                        ops[o.Op()],
                        attrs[o.AttributeType()],
                        [o.Inputs(j).decode() for j in range(o.InputsLength())],
                        [o.Outputs(j).decode() for j in range(o.OutputsLength())],
                    )
                )
            blocks.append(
                {
                    "name": b.Name().decode(),
                    "inputs": [b.Inputs(j).decode() for j in range(b.InputsLength())],
                    "outputs": [b.Outputs(j).decode() for j in range(b.OutputsLength())],
                    "tensors": tensors,
                    "shapes": shapes,
                    "operators": operators,
                }
            )
        regions.append((region.Name().decode(), blocks))
    out["regions"] = regions
    return out


@pytest.mark.parametrize(
    "case",
    ["conv2d-int8-zero-points", "reshape-slice-pad-shapes", "cond-if-regions", "variables-by-name"],
)
def test_arms_reader_sees_our_graph(case: str) -> None:
    pytest.importorskip("tosa_serializer", reason=NO_TOSA_TOOLS)
    pytest.importorskip("tosa.TosaGraph", reason="tosa-tools' generated Python is missing")
    graph = CASES[case]()
    data = serialize(graph, revision="1.0")
    arm = _decode_with_arm(data)
    assert arm["version"] == (1, 0, 2, False)
    in_file = file_regions(graph)
    assert [name for name, _ in arm["regions"]] == [r.name for r in in_file]
    ours = deserialize(data)
    for (_, arm_blocks), region in zip(arm["regions"], in_file, strict=True):
        for arm_block, block in zip(arm_blocks, region.blocks, strict=True):
            assert arm_block["name"] == block.name
            assert (arm_block["inputs"], arm_block["outputs"]) == (block.inputs, block.outputs)
            tensors = {t.name: t for t in block.tensors.values() if t.dtype.name != "shape"}
            arm_tensors = {t[0]: t for t in arm_block["tensors"]}
            for name, t in tensors.items():
                _, shape, dtype, raw = arm_tensors[name]
                assert shape == tuple(t.shape) and dtype == L.DTYPE_NAMES[t.dtype.name]
                if t.data is not None:
                    assert raw == np.ascontiguousarray(t.data).tobytes(), name
            shapes = [t for t in block.tensors.values() if t.dtype.name == "shape"]
            want_shapes = [(s.name, s.shape[0]) for s in shapes]
            assert [(s[0], s[1]) for s in arm_block["shapes"]] == want_shapes
            for s, (_, _, raw) in zip(shapes, arm_block["shapes"], strict=True):
                if s.data is not None:
                    assert raw == np.asarray(s.data, "<i8").tobytes()
            # Every operator of ours is there, in order, after the CONSTs of the constants.
            arm_ops = [(op, i, o) for op, _, i, o in arm_block["operators"]]
            ir_ops = [
                op for op in arm_ops if not (op[0] in ("CONST", "CONST_SHAPE") and op[1] == [])
            ]
            if case != "variables-by-name":
                assert ir_ops == [(op.op, op.inputs, op.outputs) for op in block.operators]
            for op, attribute, _, _ in arm_block["operators"]:
                table = L.attribute_table(op)
                assert table is not None and attribute == table.name
    assert serialize(ours, revision="1.0") == data


# ------------------------------------------------------------ Arm's serializer -> ours


def _arm_bytes(build: Callable[[Any, Any], None]) -> bytes:
    ts = pytest.importorskip("tosa_serializer", reason=NO_TOSA_TOOLS)
    ser = ts.TosaSerializer("", targetMajor=1, targetMinor=0, targetPatch=2, targetDraft=False)
    build(ts, ser.currRegion.currBasicBlock)
    return bytes(ser.serialize())


def _attr(ts: Any, op: Any, *args: Any) -> Any:
    attr = ts.TosaSerializerAttribute()
    attr.setAttribute(op, *args)
    return attr


def test_we_read_what_arms_serializer_writes() -> None:
    def build(ts: Any, blk: Any) -> None:
        blk.addTensor("a", [2, 3], ts.DType.INT32, None)
        blk.addInput("a")
        k = np.array([[1, -2, 3], [4, 0, -6]], np.int32)
        blk.addTensor("k", [2, 3], ts.DType.INT32, k)
        blk.addOperator(ts.Op.CONST, [], ["k"], _attr(ts, ts.Op.CONST))
        blk.addTensor("out", [2, 3], ts.DType.INT32, None)
        blk.addOperator(ts.Op.ADD, ["a", "k"], ["out"], _attr(ts, ts.Op.ADD))
        blk.addOutput("out")

    data = _arm_bytes(build)
    graph = deserialize(data, source="arm.tosa")  # detected as 1.0 by its Version
    ours = graph_of(_add_small)
    assert graph.version == ours.version
    assert list(graph.main.tensors) == list(ours.main.tensors)
    for name, t in ours.main.tensors.items():
        theirs = graph.main.tensors[name]
        assert (theirs.shape, theirs.dtype) == (t.shape, t.dtype)
        assert (theirs.data is None) == (t.data is None)
        if t.data is not None:
            assert theirs.data is not None
            np.testing.assert_array_equal(theirs.data, t.data)
    assert [(o.op, o.inputs, o.outputs, o.attributes) for o in graph.main.operators] == [
        ("ADD", ["a", "k"], ["out"], {})
    ]


def test_we_read_arms_default_version_files() -> None:
    """tosa-tools' own default (1.1.0 draft, with its software_version table) is the 1.0
    schema too: detection sends it to the 1.0 reader."""
    ts = pytest.importorskip("tosa_serializer", reason=NO_TOSA_TOOLS)
    ser = ts.TosaSerializer("")
    blk = ser.currRegion.currBasicBlock
    blk.addTensor("x", [1, 4, 4, 1], ts.DType.FP32, None)
    blk.addInput("x")
    blk.addTensor("y", [1, 2, 2, 1], ts.DType.FP32, None)
    attr = _attr(
        ts, ts.Op.MAX_POOL2D, [2, 2], [2, 2], [0, 0, 0, 0], ts.NanPropagationMode.IGNORE
    )
    blk.addOperator(ts.Op.MAX_POOL2D, ["x"], ["y"], attr)
    blk.addOutput("y")
    graph = deserialize(bytes(ser.serialize()))
    assert (graph.version.major, graph.version.minor) == (1, 1)
    (op,) = graph.main.operators
    assert op.op == "MAX_POOL2D"
    assert op.attributes == {
        "kernel": (2, 2),
        "stride": (2, 2),
        "pad": (0, 0, 0, 0),
        "nan_mode": "IGNORE",
    }

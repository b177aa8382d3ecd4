"""The Arm backend's test cases: single-operator graphs (and a few control-flow graphs)
built with the builder, as vectors whose expected results and checks come from our
evaluator (tests/backends/test_arm_backend.py runs them against tosa-reference-model).
"""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from conformance import dtypes
from conformance.backends.arm import ArmBackend
from conformance.builder import GraphBuilder, single_operator_graph
from conformance.graph import Graph
from conformance.verdicts import judge
from reference.expectations import expect
from vectors.pack_model import Check, LoadedVector, Provenance, Requirements

DOC = Path(__file__).resolve().parents[2] / "docs" / "arm-reference-model.md"

RNG = np.random.default_rng(20260807)


# -- building vectors ------------------------------------------------------------------


def values(dt: str, shape: tuple[int, ...], lo: float = -8, hi: float = 8) -> np.ndarray:
    """Random values of type ``dt`` in [lo, hi] (integers) or around it (floats)."""
    t = dtypes.dtype(dt)
    if t is dtypes.BOOL:
        return RNG.integers(0, 2, size=shape).astype(bool)
    if t.is_int:
        low, high = int(max(lo, float(t.min or 0))), int(min(hi, float(t.max or 0)))
        return RNG.integers(low, high + 1, size=shape).astype(t.storage)
    return RNG.uniform(lo, hi, size=shape).astype(np.float64).astype(t.storage)


def vector_of(graph: Graph, inputs: dict[str, np.ndarray], level: str = "8K") -> LoadedVector:
    """A vector as a pack would hold it: our evaluator's results and checks."""
    exp = expect(graph, inputs, level=level)
    kind = "valid" if exp.outcome.valid else "error"
    op = graph.main.operators[-1].op
    return LoadedVector(
        name=f"{op}-test",
        operator=op,
        mode="",
        kind=kind,  # type: ignore[arg-type]
        graph=graph,
        inputs=inputs,
        expected=dict(exp.outcome.outputs),
        checks={n: Check(c.descriptor, c.bound) for n, c in exp.checks.items()},
        requirements=Requirements((), (), level),
        provenance=Provenance("test", 0, 0, ""),
        rule=None if exp.outcome.rule is None else exp.outcome.rule.to_json(),
    )


Spec = tuple[str, tuple[int, ...], str]


def single(
    op: str,
    ins: list[Spec],
    outs: list[Spec],
    attrs: dict[str, Any] | None = None,
    consts: dict[str, np.ndarray] | None = None,
    lo: float = -8,
    hi: float = 8,
    feed: dict[str, np.ndarray] | None = None,
) -> LoadedVector:
    consts = consts or {}
    graph = single_operator_graph(op, ins, outs, attrs or {}, constants=consts)
    inputs = {n: values(dt, s, lo, hi) for n, s, dt in ins if n not in consts}
    inputs.update(feed or {})
    return vector_of(graph, inputs)


def run(backend: ArmBackend, vector: LoadedVector, tmp: Path) -> Any:
    reason = backend.unsupported(vector)
    assert reason is None, reason
    return judge(vector, backend.run(vector, tmp))


# -- the cases -------------------------------------------------------------------------

S = (2, 3, 4)
I8, I16, I32, F16, F32, BF = "i8", "i16", "i32", "fp16", "fp32", "bf16"
SHIFT0 = {"shift": np.zeros((), np.int8)}


def _table(size: int, dt: type) -> dict[str, np.ndarray]:
    return {"table": RNG.integers(-100, 100, size=size).astype(dt)}


def _conv_case(in_t: str, w_t: str, out_t: str, acc: str, izp: int = 0) -> Callable[[], Any]:
    def make() -> LoadedVector:
        bias_t = out_t
        return single(
            "CONV2D",
            [("input", (1, 5, 5, 3), in_t), ("weight", (4, 3, 3, 3), w_t), ("bias", (4,), bias_t)],
            [("output", (1, 3, 3, 4), out_t)],
            {
                "pad": (0, 0, 0, 0),
                "stride": (1, 1),
                "dilation": (1, 1),
                "acc_type": acc,
                "input_zp": izp,
                "weight_zp": 0,
                "local_bound": False,
            },
            lo=-7,
            hi=7,
        )

    return make


def _resize(in_t: str, out_t: str, mode: str) -> LoadedVector:
    shapes = {
        "scale": np.array([2, 1, 2, 1]),
        "offset": np.array([0, 0]),
        "border": np.array([0, 0]),
    }
    return single(
        "RESIZE",
        [
            ("input", (1, 3, 3, 2), in_t),
            ("scale", (4,), "shape"),
            ("offset", (2,), "shape"),
            ("border", (2,), "shape"),
        ],
        [("output", (1, 5, 5, 2), out_t)],
        {"mode": mode},
        shapes,
    )


def _rescale(
    in_t: str,
    out_t: str,
    *,
    scale32: bool = True,
    double_round: bool = False,
    per_channel: bool = False,
    in_zp: int = 0,
    out_zp: int = 0,
    in_uns: bool = False,
    out_uns: bool = False,
    lo: int = -100,
    hi: int = 100,
) -> LoadedVector:
    nc = S[-1] if per_channel else 1
    mul_t = np.int32 if scale32 else np.int16
    mult = (1 << 30) + 12345 if scale32 else (1 << 14) + 77
    consts = {
        "multiplier": np.full(nc, mult, mul_t),
        "shift": np.arange(nc, dtype=np.int8) + (31 if scale32 else 15),
    }
    return single(
        "RESCALE",
        [
            ("input", S, in_t),
            ("multiplier", (nc,), "i32" if scale32 else "i16"),
            ("shift", (nc,), "i8"),
        ],
        [("output", S, out_t)],
        {
            "input_zp": in_zp,
            "output_zp": out_zp,
            "scale32": scale32,
            "double_round": double_round,
            "per_channel": per_channel,
            "input_unsigned": in_uns,
            "output_unsigned": out_uns,
        },
        consts,
        lo=lo,
        hi=hi,
    )


def _fc(in_t: str, w_t: str, out_t: str) -> LoadedVector:
    return single(
        "FULLY_CONNECTED",
        [("input", (3, 5), in_t), ("weight", (4, 5), w_t), ("bias", (4,), out_t)],
        [("output", (3, 4), out_t)],
        {"input_zp": 0, "weight_zp": 0},
        lo=-7,
        hi=7,
    )


def _cast(src: str, dst: str, lo: float = -100, hi: float = 100) -> Callable[[], Any]:
    return lambda: single("CAST", [("input", S, src)], [("output", S, dst)], lo=lo, hi=hi)


def _unary(op: str, dt: str, lo: float = -4, hi: float = 4) -> Callable[[], Any]:
    return lambda: single(op, [("input1", S, dt)], [("output", S, dt)], lo=lo, hi=hi)


def _binary(op: str, dt: str, out: str | None = None) -> Callable[[], Any]:
    return lambda: single(op, [("input1", S, dt), ("input2", S, dt)], [("output", S, out or dt)])


CASES: dict[str, Callable[[], LoadedVector]] = {
    "ADD-i32": _binary("ADD", I32),
    "ADD-fp32": _binary("ADD", F32),
    "ADD-fp16": _binary("ADD", F16),
    "ADD-bf16": _binary("ADD", BF),
    "SUB-i32": _binary("SUB", I32),
    "SUB-fp32": _binary("SUB", F32),
    "MAXIMUM-fp32": _binary("MAXIMUM", F32),
    "MINIMUM-i32": _binary("MINIMUM", I32),
    "INTDIV-i32": lambda: single(
        "INTDIV",
        [("input1", S, I32), ("input2", S, I32)],
        [("output", S, I32)],
        feed={"input2": values(I32, S, 1, 9)},
    ),
    "BITWISE_AND-i16": _binary("BITWISE_AND", I16),
    "LOGICAL_XOR-bool": _binary("LOGICAL_XOR", "bool"),
    "ARITHMETIC_RIGHT_SHIFT-i8": lambda: single(
        "ARITHMETIC_RIGHT_SHIFT",
        [("input1", S, I8), ("input2", S, I8)],
        [("output", S, I8)],
        {"round": True},
        feed={"input2": values(I8, S, 0, 7)},
    ),
    "MUL-i8": lambda: single(
        "MUL",
        [("input1", S, I8), ("input2", S, I8), ("shift", (), I8)],
        [("output", S, I32)],
        consts=SHIFT0,
    ),
    "MUL-i32-shift": lambda: single(
        "MUL",
        [("input1", S, I32), ("input2", S, I32), ("shift", (), I8)],
        [("output", S, I32)],
        consts={"shift": np.array(3, np.int8)},
        lo=-1000,
        hi=1000,
    ),
    "MUL-fp32": lambda: single(
        "MUL",
        [("input1", S, F32), ("input2", S, F32), ("shift", (), I8)],
        [("output", S, F32)],
        consts=SHIFT0,
    ),
    "POW-fp32": lambda: single(
        "POW",
        [("input1", S, F32), ("input2", S, F32)],
        [("output", S, F32)],
        lo=0.5,
        hi=3,
    ),
    "TABLE-i8": lambda: single(
        "TABLE",
        [("input", S, I8), ("table", (256,), I8)],
        [("output", S, I8)],
        consts=_table(256, np.int8),
        lo=-128,
        hi=127,
    ),
    "TABLE-i16": lambda: single(
        "TABLE",
        [("input", S, I16), ("table", (513,), I16)],
        [("output", S, I32)],
        consts=_table(513, np.int16),
        lo=-32768,
        hi=32767,
    ),
    "ABS-i32": _unary("ABS", I32),
    "ABS-fp16": _unary("ABS", F16),
    "BITWISE_NOT-i8": _unary("BITWISE_NOT", I8),
    "CLZ-i32": _unary("CLZ", I32, 0, 1 << 20),
    "CEIL-bf16": _unary("CEIL", BF),
    "EXP-fp32": _unary("EXP", F32),
    "LOG-fp16": _unary("LOG", F16, 0.1, 9),
    "RECIPROCAL-fp32": _unary("RECIPROCAL", F32, 0.5, 4),
    "RSQRT-fp32": _unary("RSQRT", F32, 0.5, 4),
    "LOGICAL_NOT-bool": _unary("LOGICAL_NOT", "bool"),
    "SIN-fp32": lambda: single("SIN", [("input", S, F32)], [("output", S, F32)]),
    "COS-fp16": lambda: single("COS", [("input", S, F16)], [("output", S, F16)]),
    "ERF-fp32": lambda: single("ERF", [("input", S, F32)], [("output", S, F32)]),
    "SIGMOID-fp32": lambda: single("SIGMOID", [("input", S, F32)], [("output", S, F32)]),
    "TANH-bf16": lambda: single("TANH", [("input", S, BF)], [("output", S, BF)]),
    "NEGATE-i8-zp": lambda: single(
        "NEGATE",
        [("input1", S, I8)],
        [("output", S, I8)],
        {"input1_zp": 5, "output_zp": -3},
        lo=-60,
        hi=60,
    ),
    "NEGATE-fp32": lambda: single(
        "NEGATE", [("input1", S, F32)], [("output", S, F32)], {"input1_zp": 0, "output_zp": 0}
    ),
    "CLAMP-i8": lambda: single(
        "CLAMP",
        [("input", S, I8)],
        [("output", S, I8)],
        {"min_val": -5, "max_val": 6},
    ),
    "CLAMP-bf16": lambda: single(
        "CLAMP",
        [("input", S, BF)],
        [("output", S, BF)],
        {"min_val": -2.5, "max_val": 3.0},
    ),
    "SELECT-fp16": lambda: single(
        "SELECT",
        [("input1", S, "bool"), ("input2", S, F16), ("input3", S, F16)],
        [("output", S, F16)],
    ),
    "EQUAL-fp32": _binary("EQUAL", F32, "bool"),
    "GREATER-i32": _binary("GREATER", I32, "bool"),
    "CAST-i8-fp32": _cast(I8, F32),
    "CAST-fp32-i16": _cast(F32, I16),
    "CAST-fp32-bf16": _cast(F32, BF),
    "CAST-fp16-fp8e4m3": _cast(F16, "fp8e4m3", -20, 20),
    "CAST-fp8e5m2-fp32": _cast("fp8e5m2", F32, -20, 20),
    "CAST-bool-i32": _cast("bool", I32),
    "CAST-i32-bool": _cast(I32, "bool"),
    "RESCALE-i8-i8-per-channel": lambda: _rescale(
        I8, I8, per_channel=True, double_round=True, in_zp=3, out_zp=-2
    ),
    "RESCALE-i8u-i8": lambda: _rescale(I8, I8, in_uns=True, in_zp=128, lo=-128, hi=127),
    "RESCALE-i16-i16u": lambda: _rescale(I16, I16, out_uns=True, out_zp=32768),
    "RESCALE-i32-i8-scale16": lambda: _rescale(I32, I8, scale32=False),
    "RESCALE-i48-i32": lambda: _rescale("i48", I32, scale32=False),
    "REDUCE_SUM-i32": lambda: single(
        "REDUCE_SUM", [("input", S, I32)], [("output", (2, 1, 4), I32)], {"axis": 1}
    ),
    "REDUCE_MAX-fp16": lambda: single(
        "REDUCE_MAX", [("input", S, F16)], [("output", (1, 3, 4), F16)], {"axis": 0}
    ),
    "REDUCE_ANY-bool": lambda: single(
        "REDUCE_ANY", [("input", S, "bool")], [("output", (2, 3, 1), "bool")], {"axis": 2}
    ),
    "REDUCE_PRODUCT-fp32": lambda: single(
        "REDUCE_PRODUCT", [("input", S, F32)], [("output", (2, 1, 4), F32)], {"axis": 1}
    ),
    "ARGMAX-fp32": lambda: single(
        "ARGMAX", [("input", S, F32)], [("output", (2, 4), I32)], {"axis": 1}
    ),
    "CONCAT-i8": lambda: single(
        "CONCAT", [("a", (2, 3), I8), ("b", (2, 2), I8)], [("output", (2, 5), I8)], {"axis": 1}
    ),
    "PAD-fp32": lambda: single(
        "PAD",
        [("input1", (2, 3), F32), ("padding", (4,), "shape")],
        [("output", (3, 6), F32)],
        {"pad_const": 1.5},
        {"padding": np.array([1, 0, 2, 1])},
    ),
    "PAD-i8": lambda: single(
        "PAD",
        [("input1", (2, 3), I8), ("padding", (4,), "shape")],
        [("output", (2, 4), I8)],
        {"pad_const": -3},
        {"padding": np.array([0, 0, 0, 1])},
    ),
    "PAD-fp8e5m2": lambda: single(
        "PAD",
        [("input1", (2, 3), "fp8e5m2"), ("padding", (4,), "shape")],
        [("output", (2, 4), "fp8e5m2")],
        {"pad_const": 0.0234375},
        {"padding": np.array([0, 0, 0, 1])},
    ),
    "RESHAPE-fp8e4m3": lambda: single(
        "RESHAPE",
        [("input1", S, "fp8e4m3"), ("shape", (2,), "shape")],
        [("output", (6, 4), "fp8e4m3")],
        consts={"shape": np.array([6, 4])},
    ),
    "REVERSE-bf16": lambda: single("REVERSE", [("input", S, BF)], [("output", S, BF)], {"axis": 2}),
    "SLICE-i16": lambda: single(
        "SLICE",
        [("input1", S, I16), ("start", (3,), "shape"), ("size", (3,), "shape")],
        [("output", (1, 2, 2), I16)],
        consts={"start": np.array([1, 0, 2]), "size": np.array([1, 2, 2])},
    ),
    "TILE-bool": lambda: single(
        "TILE",
        [("input1", (2, 3), "bool"), ("multiples", (2,), "shape")],
        [("output", (4, 3), "bool")],
        consts={"multiples": np.array([2, 1])},
    ),
    "TRANSPOSE-i16": lambda: single(
        "TRANSPOSE", [("input1", S, I16)], [("output", (4, 2, 3), I16)], {"perms": (2, 0, 1)}
    ),
    "GATHER-fp32": lambda: single(
        "GATHER",
        [("values", (2, 5, 3), F32), ("indices", (2, 4), "shape")],
        [("output", (2, 4, 3), F32)],
        feed={"indices": RNG.integers(0, 5, (2, 4))},
    ),
    "SCATTER-i32": lambda: single(
        "SCATTER",
        [("values_in", (1, 5, 2), I32), ("indices", (1, 2), "shape"), ("input", (1, 2, 2), I32)],
        [("values_out", (1, 5, 2), I32)],
        feed={"indices": np.array([[3, 1]])},
    ),
    "RESIZE-i8-bilinear": lambda: _resize(I8, I32, "BILINEAR"),
    "RESIZE-i16-nearest": lambda: _resize(I16, I16, "NEAREST_NEIGHBOR"),
    "RESIZE-fp32-bilinear": lambda: _resize(F32, F32, "BILINEAR"),
    "CONV2D-i8x8": _conv_case(I8, I8, I32, "INT32", izp=2),
    "CONV2D-i8x4": _conv_case(I8, "i4", I32, "INT32"),
    "CONV2D-i16x8-i48-out": _conv_case(I16, I8, "i48", "INT48"),
    "CONV2D-fp32": _conv_case(F32, F32, F32, "FP32"),
    "CONV2D-fp16-acc32": _conv_case(F16, F16, F16, "FP32"),
    "CONV2D-bf16": _conv_case(BF, BF, BF, "FP32"),
    "CONV2D-fp8e4m3": _conv_case("fp8e4m3", "fp8e4m3", F16, "FP16"),
    "DEPTHWISE_CONV2D-fp32": lambda: single(
        "DEPTHWISE_CONV2D",
        [("input", (1, 4, 4, 2), F32), ("weight", (2, 2, 2, 3), F32), ("bias", (6,), F32)],
        [("output", (1, 3, 3, 6), F32)],
        {
            "pad": (0, 0, 0, 0),
            "stride": (1, 1),
            "dilation": (1, 1),
            "acc_type": "FP32",
            "input_zp": 0,
            "weight_zp": 0,
        },
    ),
    "CONV3D-i8": lambda: single(
        "CONV3D",
        [("input", (1, 3, 4, 4, 2), I8), ("weight", (2, 2, 2, 2, 2), I8), ("bias", (2,), I32)],
        [("output", (1, 2, 3, 3, 2), I32)],
        {
            "pad": (0,) * 6,
            "stride": (1, 1, 1),
            "dilation": (1, 1, 1),
            "acc_type": "INT32",
            "input_zp": 0,
            "weight_zp": 0,
        },
    ),
    "TRANSPOSE_CONV2D-fp32": lambda: single(
        "TRANSPOSE_CONV2D",
        [("input", (1, 3, 3, 2), F32), ("weight", (2, 2, 2, 2), F32), ("bias", (2,), F32)],
        [("output", (1, 6, 6, 2), F32)],
        {
            "out_pad": (0, 0, 0, 0),
            "stride": (2, 2),
            "acc_type": "FP32",
            "input_zp": 0,
            "weight_zp": 0,
        },
    ),
    "MATMUL-i8-zp": lambda: single(
        "MATMUL",
        [("A", (1, 2, 3), I8), ("B", (1, 3, 4), I8)],
        [("output", (1, 2, 4), I32)],
        {"A_zp": -4, "B_zp": 7},
    ),
    "MATMUL-i16-i48-out": lambda: single(
        "MATMUL",
        [("A", (1, 2, 3), I16), ("B", (1, 3, 4), I16)],
        [("output", (1, 2, 4), "i48")],
        {"A_zp": 0, "B_zp": 0},
        lo=-3000,
        hi=3000,
    ),
    "MATMUL-fp32": lambda: single(
        "MATMUL",
        [("A", (2, 2, 3), F32), ("B", (2, 3, 4), F32)],
        [("output", (2, 2, 4), F32)],
        {"A_zp": 0, "B_zp": 0},
    ),
    "AVG_POOL2D-i8-zp": lambda: single(
        "AVG_POOL2D",
        [("input", (1, 4, 4, 2), I8)],
        [("output", (1, 2, 2, 2), I8)],
        {
            "kernel": (2, 2),
            "stride": (2, 2),
            "pad": (0, 0, 0, 0),
            "acc_type": "INT32",
            "input_zp": 3,
            "output_zp": -1,
        },
    ),
    "AVG_POOL2D-fp16": lambda: single(
        "AVG_POOL2D",
        [("input", (1, 4, 4, 2), F16)],
        [("output", (1, 3, 3, 2), F16)],
        {
            "kernel": (2, 2),
            "stride": (1, 1),
            "pad": (0, 0, 0, 0),
            "acc_type": "FP32",
            "input_zp": 0,
            "output_zp": 0,
        },
    ),
    "MAX_POOL2D-fp32": lambda: single(
        "MAX_POOL2D",
        [("input", (1, 4, 4, 2), F32)],
        [("output", (1, 2, 2, 2), F32)],
        {"kernel": (2, 2), "stride": (2, 2), "pad": (0, 0, 0, 0)},
    ),
    "FFT2D-fp32": lambda: single(
        "FFT2D",
        [("input_real", (1, 4, 8), F32), ("input_imag", (1, 4, 8), F32)],
        [("output_real", (1, 4, 8), F32), ("output_imag", (1, 4, 8), F32)],
        {"inverse": False, "local_bound": False},
    ),
    "RFFT2D-fp32": lambda: single(
        "RFFT2D",
        [("input_real", (1, 4, 8), F32)],
        [("output_real", (1, 4, 5), F32), ("output_imag", (1, 4, 5), F32)],
    ),
    "FULLY_CONNECTED-i8": lambda: _fc(I8, I8, I32),
    "FULLY_CONNECTED-fp32": lambda: _fc(F32, F32, F32),
    "IDENTITY-bf16": lambda: single("IDENTITY", [("input1", S, BF)], [("output", S, BF)]),
    "IDENTITY-i48": lambda: single(
        "IDENTITY", [("input1", S, "i48")], [("output", S, "i48")], lo=-(1 << 40), hi=1 << 40
    ),
    "IDENTITY-i4": lambda: single("IDENTITY", [("input1", S, "i4")], [("output", S, "i4")]),
    "CONST-fp16": lambda: vector_of(
        single_operator_graph("CONST", [], [("output", S, F16)], {"values": values(F16, S)}), {}
    ),
    "DIM-fp32": lambda: single(
        "DIM", [("input1", S, F32)], [("output", (1,), "shape")], {"axis": 2}
    ),
}


def _cond_if() -> LoadedVector:
    g = GraphBuilder()
    main = g.block("main")
    then, other = g.block("then"), g.block("else")
    for b, op in ((then, "ADD"), (other, "SUB")):
        b.input("a", (3,), I32)
        b.input("b", (3,), I32)
        b.tensor("r", (3,), I32)
        b.op(op, ["a", "b"], ["r"])
        b.output("r")
    main.input("c", (1,), "bool")
    main.input("x", (3,), I32)
    main.input("y", (3,), I32)
    main.tensor("out", (3,), I32)
    main.op("COND_IF", ["c", "x", "y"], ["out"], then_graph="then", else_graph="else")
    main.output("out")
    inputs = {"c": np.array([False]), "x": values(I32, (3,)), "y": values(I32, (3,))}
    return vector_of(g.build(), inputs)


def _while_loop() -> LoadedVector:
    g = GraphBuilder()
    main, cond, body = g.block("main"), g.block("cond"), g.block("body")
    for b in (cond, body):
        b.input("i", (), I32)
        b.input("acc", (2,), I32)
    cond.tensor("limit", (), I32, data=np.array(4, np.int32))
    cond.tensor("go", (), "bool")
    cond.op("GREATER", ["limit", "i"], ["go"])
    cond.output("go")
    body.tensor("one", (), I32, data=np.array(1, np.int32))
    body.tensor("i2", (), I32)
    body.tensor("acc2", (2,), I32)
    body.op("ADD", ["i", "one"], ["i2"])
    body.op("ADD", ["acc", "acc"], ["acc2"])
    body.output("i2")
    body.output("acc2")
    main.input("i0", (), I32)
    main.input("a0", (2,), I32)
    main.tensor("i_out", (), I32)
    main.tensor("a_out", (2,), I32)
    main.op("WHILE_LOOP", ["i0", "a0"], ["i_out", "a_out"], cond_graph="cond", body_graph="body")
    main.output("i_out")
    main.output("a_out")
    return vector_of(g.build(), {"i0": np.array(0, np.int32), "a0": values(I32, (2,))})


CASES["COND_IF-i32"] = _cond_if
CASES["WHILE_LOOP-i32"] = _while_loop

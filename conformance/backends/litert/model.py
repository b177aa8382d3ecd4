"""A one-operator TOSA graph as a .tflite model, through the flatbuffer schema that
ai-edge-litert ships (``ai_edge_litert.schema_py_generated``, its object API).

Each TOSA operator the nnapi manifest maps has a translator to the TFLite builtin the
NNAPI operation is implemented by (docs/litert.md).  Shape operands and the weights of
convolutions become constant buffers; explicit padding becomes a PAD/PADV2 in front of
a VALID convolution or pooling.  fp16 tensors are widened to fp32 (exactly) for
LiteRT's fp32 kernels, the result rounded once to fp16 by the backend: LiteRT's CPU
kernels have no fp16 arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from conformance.graph import Block, Operator
from conformance.operator_table import OperatorTable


class Unsupported(Exception):
    """A graph this translation cannot express (the vector is skipped, with the why)."""


def _schema() -> Any:
    from ai_edge_litert import schema_py_generated as fb

    return fb


# TOSA storage dtype name -> (TFLite TensorType name, numpy dtype of the model tensor)
TYPES: dict[str, tuple[str, Any]] = {
    "fp32": ("FLOAT32", np.float32),
    "fp16": ("FLOAT32", np.float32),  # widened; see the module docstring
    "i32": ("INT32", np.int32),
    "i16": ("INT16", np.int16),
    "i8": ("INT8", np.int8),
    "bool": ("BOOL", np.bool_),
}


@dataclass
class Model:
    """What is built: the model bytes, and per graph input/output its tensor index."""

    content: bytes
    inputs: dict[str, int]
    outputs: dict[str, int]


@dataclass
class _Builder:
    block: Block
    fb: Any = field(default_factory=_schema)
    tensors: list[Any] = field(default_factory=list)
    buffers: list[Any] = field(default_factory=list)
    codes: dict[int, int] = field(default_factory=dict)
    ops: list[Any] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)
    constants: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.buffers.append(self.fb.BufferT())  # buffer 0: the empty one

    def _new(self, name: str, shape: tuple[int, ...], tname: str, data: np.ndarray | None) -> int:
        fb = self.fb
        t = fb.TensorT()
        t.name, t.shape = name, list(shape)
        t.type = getattr(fb.TensorType, tname)
        if tname in ("INT8", "INT16"):  # TOSA integers: scale 1, zero point 0
            q = fb.QuantizationParametersT()
            q.scale, q.zeroPoint = [1.0], [0]
            t.quantization = q
        t.buffer = 0
        if data is not None:
            buf = fb.BufferT()
            buf.data = np.frombuffer(np.ascontiguousarray(data).tobytes(), np.uint8)
            self.buffers.append(buf)
            t.buffer = len(self.buffers) - 1
        self.tensors.append(t)
        return len(self.tensors) - 1

    def tensor(self, name: str) -> int:
        """The model tensor of a TOSA tensor (a constant one gets its data)."""
        if name in self.index:
            return self.index[name]
        t = self.block.tensors[name]
        if t.dtype.name not in TYPES and t.dtype.kind != "shape":
            raise Unsupported(f"LiteRT holds no {t.dtype.name} tensor")
        tname, np_type = TYPES.get(t.dtype.name, ("INT32", np.int32))
        data = None
        if name in self.constants:
            data = self.constants[name].astype(np_type)
        elif t.data is not None:
            data = np.asarray(t.data).astype(np_type)
        self.index[name] = self._new(name, t.shape, tname, data)
        return self.index[name]

    def const(self, name: str, values: Any, tname: str = "INT32") -> int:
        np_type = {
            "INT32": np.int32,
            "FLOAT32": np.float32,
            "INT8": np.int8,
            "BOOL": np.bool_,
            "INT16": np.int16,
        }[tname]
        arr = np.asarray(values, np_type)
        return self._new(name, arr.shape, tname, arr)

    def temp(self, name: str, shape: tuple[int, ...], like: str) -> int:
        tname = TYPES[self.block.tensors[like].dtype.name][0]
        return self._new(name, shape, tname, None)

    def op(self, code: str, inputs: list[int], outputs: list[int], options: Any = None) -> None:
        fb = self.fb
        builtin = getattr(fb.BuiltinOperator, code)
        if builtin not in self.codes:
            self.codes[builtin] = len(self.codes)
        o = fb.OperatorT()
        o.opcodeIndex, o.inputs, o.outputs = self.codes[builtin], inputs, outputs
        if options is not None:
            kind = type(options).__name__.removesuffix("T")
            o.builtinOptionsType = getattr(fb.BuiltinOptions, kind)
            o.builtinOptions = options
        self.ops.append(o)

    def options(self, kind: str, **values: Any) -> Any:
        opt = getattr(self.fb, f"{kind}T")()
        for k, v in values.items():
            setattr(opt, k, v)
        return opt

    def finish(self, inputs: list[str], outputs: list[str]) -> Model:
        import flatbuffers

        fb = self.fb
        sub = fb.SubGraphT()
        sub.tensors, sub.operators = self.tensors, self.ops
        sub.inputs = [self.tensor(n) for n in inputs]
        sub.outputs = [self.tensor(n) for n in outputs]
        model = fb.ModelT()
        model.version, model.subgraphs, model.buffers = 3, [sub], self.buffers
        model.operatorCodes = []
        for builtin in sorted(self.codes, key=self.codes.get):  # type: ignore[arg-type]
            c = fb.OperatorCodeT()
            c.builtinCode, c.deprecatedBuiltinCode, c.version = builtin, min(builtin, 127), 1
            model.operatorCodes.append(c)
        b = flatbuffers.Builder(1024)
        b.Finish(model.Pack(b), file_identifier=b"TFL3")
        return Model(
            bytes(b.Output()),
            {n: self.tensor(n) for n in inputs},
            {n: self.tensor(n) for n in outputs},
        )


Translator = Callable[[_Builder, Operator], None]
TRANSLATORS: OperatorTable[Translator] = OperatorTable()


# Files a translator under each operator it serves (an operator is filed once).
_register = TRANSLATORS.register


# TOSA operator -> TFLite builtin, for operators that take their inputs as they are.
SAME_OPERANDS: OperatorTable[str] = OperatorTable(
    {
        "ADD": "ADD",
        "SUB": "SUB",
        "MAXIMUM": "MAXIMUM",
        "MINIMUM": "MINIMUM",
        "POW": "POW",
        "EQUAL": "EQUAL",
        "GREATER": "GREATER",
        "GREATER_EQUAL": "GREATER_EQUAL",
        "LOGICAL_AND": "LOGICAL_AND",
        "LOGICAL_OR": "LOGICAL_OR",
        "ABS": "ABS",
        "EXP": "EXP",
        "LOG": "LOG",
        "NEGATE": "NEG",
        "RSQRT": "RSQRT",
        "SIN": "SIN",
        "FLOOR": "FLOOR",
        "SIGMOID": "LOGISTIC",
        "TANH": "TANH",
        "LOGICAL_NOT": "LOGICAL_NOT",
        "SELECT": "SELECT_V2",
        "CAST": "CAST",
        "MATMUL": "BATCH_MATMUL",
    }
)


def _plain(b: _Builder, op: Operator) -> None:
    code = SAME_OPERANDS[op.op]
    data = [n for n in op.inputs if b.block.tensors[n].dtype.kind != "shape"]
    if any(int(v) for k, v in op.attributes.items() if k.endswith("_zp")):
        raise Unsupported("nonzero zero points")  # NEG and BATCH_MATMUL take none
    b.op(code, [b.tensor(n) for n in data], [b.tensor(op.outputs[0])])


for _name in SAME_OPERANDS:
    TRANSLATORS[_name] = _plain


def _shape_values(b: _Builder, name: str) -> list[int]:
    data = b.block.tensors[name].data
    if data is None:
        raise Unsupported(f"{name} is not a constant shape")
    return [int(x) for x in np.asarray(data).reshape(-1)]


@_register("RESHAPE")
def _reshape(b: _Builder, op: Operator) -> None:
    out = _shape_values(b, op.inputs[1])  # TOSA's shape operand, not the declared output
    shape = b.const("new_shape", list(out))
    b.op(
        "RESHAPE",
        [b.tensor(op.inputs[0]), shape],
        [b.tensor(op.outputs[0])],
        b.options("ReshapeOptions", newShape=list(out)),
    )


@_register("TRANSPOSE")
def _transpose(b: _Builder, op: Operator) -> None:
    perm = b.const("perm", [int(p) for p in op.attributes["perms"]])
    b.op("TRANSPOSE", [b.tensor(op.inputs[0]), perm], [b.tensor(op.outputs[0])])


@_register("CONCAT")
def _concat(b: _Builder, op: Operator) -> None:
    b.op(
        "CONCATENATION",
        [b.tensor(n) for n in op.inputs],
        [b.tensor(op.outputs[0])],
        b.options("ConcatenationOptions", axis=int(op.attributes["axis"])),
    )


@_register("PAD")
def _pad(b: _Builder, op: Operator) -> None:
    padding = _shape_values(b, op.inputs[1])
    src = b.block.tensors[op.inputs[0]]
    pairs = b.const("paddings", np.asarray(padding, np.int32).reshape(len(src.shape), 2))
    tname = TYPES[src.dtype.name][0]
    value = b.const("pad_value", [op.attributes["pad_const"]], tname)
    b.tensors[value].shape = []
    b.op("PADV2", [b.tensor(op.inputs[0]), pairs, value], [b.tensor(op.outputs[0])])


@_register("SLICE")
def _slice(b: _Builder, op: Operator) -> None:
    begin = b.const("begin", _shape_values(b, op.inputs[1]))
    size = b.const("size", _shape_values(b, op.inputs[2]))
    b.op("SLICE", [b.tensor(op.inputs[0]), begin, size], [b.tensor(op.outputs[0])])


@_register("TILE")
def _tile(b: _Builder, op: Operator) -> None:
    multiples = b.const("multiples", _shape_values(b, op.inputs[1]))
    b.op("TILE", [b.tensor(op.inputs[0]), multiples], [b.tensor(op.outputs[0])])


REDUCERS = OperatorTable(
    {
        "REDUCE_MAX": "REDUCE_MAX",
        "REDUCE_MIN": "REDUCE_MIN",
        "REDUCE_SUM": "SUM",
        "REDUCE_PRODUCT": "REDUCE_PROD",
        "REDUCE_ANY": "REDUCE_ANY",
        "REDUCE_ALL": "REDUCE_ALL",
    }
)


@_register(*REDUCERS)
def _reduce(b: _Builder, op: Operator) -> None:
    axis = b.const("axis", [int(op.attributes["axis"])])
    b.op(
        REDUCERS[op.op],
        [b.tensor(op.inputs[0]), axis],
        [b.tensor(op.outputs[0])],
        b.options("ReducerOptions", keepDims=True),
    )


@_register("ARGMAX")
def _argmax(b: _Builder, op: Operator) -> None:
    axis = b.const("axis", [int(op.attributes["axis"])])
    b.op(
        "ARG_MAX",
        [b.tensor(op.inputs[0]), axis],
        [b.tensor(op.outputs[0])],
        b.options("ArgMaxOptions", outputType=b.fb.TensorType.INT32),
    )


def _geometry(op: Operator, *names: str) -> None:
    """The 2-D attributes have the lengths the spec gives them (a must-fail graph may
    not): pad 4, kernel, stride and dilation 2."""
    for name in names:
        want = 4 if name == "pad" else 2
        got = len(op.attributes[name])
        if got != want:
            raise Unsupported(f"{op.op} {name} has {got} values, not {want}")


def _padded(b: _Builder, name: str, pad: tuple[int, ...], value: float) -> int:
    """``name`` with NHWC explicit padding [top, bottom, left, right] in front."""
    x = b.tensor(name)
    if not any(pad):
        return x
    t = b.block.tensors[name]
    n, h, w, c = t.shape
    shape = (n, h + pad[0] + pad[1], w + pad[2] + pad[3], c)
    out = b.temp(f"{name}_padded", shape, name)
    pairs = b.const("paddings", [[0, 0], [pad[0], pad[1]], [pad[2], pad[3]], [0, 0]])
    tname = TYPES[t.dtype.name][0]
    fill = b.const("pad_value", [value], tname)
    b.tensors[fill].shape = []
    b.op("PADV2", [x, pairs, fill], [out])
    return out


@_register("CONV2D", "DEPTHWISE_CONV2D")
def _conv(b: _Builder, op: Operator) -> None:
    a = op.attributes
    _geometry(op, "pad", "stride", "dilation")
    if a.get("input_zp", 0) or a.get("weight_zp", 0):
        raise Unsupported("nonzero zero points")
    x = _padded(b, op.inputs[0], tuple(int(p) for p in a["pad"]), 0.0)
    stride, dilation = [int(s) for s in a["stride"]], [int(d) for d in a["dilation"]]
    weight = b.block.tensors[op.inputs[1]]
    if op.op == "DEPTHWISE_CONV2D":  # TOSA [KH, KW, C, M] -> TFLite [1, KH, KW, C*M]
        kh, kw, c, m = weight.shape
        w = b.constants[op.inputs[1]].reshape(1, kh, kw, c * m)
        b.constants[op.inputs[1]] = w
        b.block.tensors[op.inputs[1]] = type(weight)(weight.name, w.shape, weight.dtype)
        opts = b.options(
            "DepthwiseConv2DOptions",
            padding=b.fb.Padding.VALID,
            strideH=stride[0],
            strideW=stride[1],
            depthMultiplier=m,
            dilationHFactor=dilation[0],
            dilationWFactor=dilation[1],
        )
        code = "DEPTHWISE_CONV_2D"
    else:
        opts = b.options(
            "Conv2DOptions",
            padding=b.fb.Padding.VALID,
            strideH=stride[0],
            strideW=stride[1],
            dilationHFactor=dilation[0],
            dilationWFactor=dilation[1],
        )
        code = "CONV_2D"
    bias = b.block.tensors[op.inputs[2]]
    out_c = b.block.tensors[op.outputs[0]].shape[-1]
    if bias.shape[0] != out_c:  # TOSA broadcasts a one-element bias
        b.constants[op.inputs[2]] = np.broadcast_to(b.constants[op.inputs[2]], (out_c,))
        b.block.tensors[op.inputs[2]] = type(bias)(bias.name, (out_c,), bias.dtype)
    b.op(code, [x, b.tensor(op.inputs[1]), b.tensor(op.inputs[2])], [b.tensor(op.outputs[0])], opts)


@_register("MAX_POOL2D", "AVG_POOL2D")
def _pool(b: _Builder, op: Operator) -> None:
    a = op.attributes
    _geometry(op, "pad", "kernel", "stride")
    pad = tuple(int(p) for p in a["pad"])
    if op.op == "AVG_POOL2D":
        if any(pad):  # PAD + AVERAGE_POOL_2D would count the padding; NNAPI's does not
            raise Unsupported("AVG_POOL2D with padding: TFLite has only SAME/VALID padding")
        if a.get("input_zp", 0) or a.get("output_zp", 0):
            raise Unsupported("nonzero zero points")
        x = b.tensor(op.inputs[0])
    else:
        src = b.block.tensors[op.inputs[0]]
        low = -np.inf if src.dtype.name in ("fp32", "fp16") else float(src.dtype.min)  # type: ignore[arg-type]
        x = _padded(b, op.inputs[0], pad, low)
    k, s = [int(v) for v in a["kernel"]], [int(v) for v in a["stride"]]
    opts = b.options(
        "Pool2DOptions",
        padding=b.fb.Padding.VALID,
        strideH=s[0],
        strideW=s[1],
        filterHeight=k[0],
        filterWidth=k[1],
    )
    code = "MAX_POOL_2D" if op.op == "MAX_POOL2D" else "AVERAGE_POOL_2D"
    b.op(code, [x], [b.tensor(op.outputs[0])], opts)


CONSTANT_INPUTS = OperatorTable({"CONV2D": (1, 2), "DEPTHWISE_CONV2D": (1, 2)})  # weights and bias


def build(block: Block, inputs: dict[str, np.ndarray]) -> tuple[Model, dict[str, np.ndarray]]:
    """The model of a one-operator block, and the values to feed its graph inputs."""
    if len(block.operators) != 1:
        raise Unsupported("graphs of more than one operator")
    op = block.operators[0]
    if op.op not in TRANSLATORS:
        raise Unsupported(f"no translation of {op.op}")
    b = _Builder(replace(block, tensors=dict(block.tensors)))  # the vector's stays as it is
    fixed = {op.inputs[i] for i in CONSTANT_INPUTS.get(op.op, ())}
    for name in fixed:
        value = inputs[name] if name in inputs else block.tensors[name].data
        b.constants[name] = np.asarray(value, np.float64)
    TRANSLATORS[op.op](b, op)
    feeds = [n for n in block.inputs if n not in fixed]
    model = b.finish(feeds, list(block.outputs))
    values = {}
    for n in feeds:
        np_type = TYPES[block.tensors[n].dtype.name][1]
        values[n] = np.asarray(inputs[n]).astype(np_type)
    return model, values

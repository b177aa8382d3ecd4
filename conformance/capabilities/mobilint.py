"""The built-in ``mobilint`` manifest, from the vendored Mobilint IR operation list.

The list (data/mobilint-ir-operations.md) names the operations the NPU runs natively
and says they all take NHWC data with batch 1; it gives no element types.  Which TOSA
operator each operation is, and which TOSA subgraph a composite operation stands for,
is in the one table below; the operation names are checked against the list.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from conformance.spec import Spec

LIST_PATH = Path(__file__).parent / "data" / "mobilint-ir-operations.md"

# Mobilint operation -> the TOSA operators it is.
NATIVE: dict[str, tuple[str, ...]] = {
    "Adding": ("ADD",),
    "Sub": ("SUB",),
    "Multiply": ("MUL",),
    "Convolution": ("CONV2D",),
    "DepthwiseConvolution": ("DEPTHWISE_CONV2D",),
    "TransposeConvolution": ("TRANSPOSE_CONV2D",),
    "Pooling": ("MAX_POOL2D", "AVG_POOL2D"),
    "Concatenate": ("CONCAT",),
    "Pad": ("PAD",),
    "Reshape": ("RESHAPE",),
    "Transpose": ("TRANSPOSE",),
    "Slice": ("SLICE",),
    "Clip": ("CLAMP",),
    "Exp": ("EXP",),
    "Log": ("LOG",),
    "Neg": ("NEGATE",),
    "Pow": ("POW",),
    "Rsqrt": ("RSQRT",),
    "Sigmoid": ("SIGMOID",),
    "Tanh": ("TANH",),
    "Erf": ("ERF",),
    "MatMul": ("MATMUL",),
    "ReduceMax": ("REDUCE_MAX",),
    "ReduceSum": ("REDUCE_SUM",),
    "ReduceProd": ("REDUCE_PRODUCT",),
    "Resize": ("RESIZE",),
    "Identity": ("IDENTITY",),
}

# Mobilint composite operation -> the TOSA operators of the subgraph it stands for.
COMPOSITE: dict[str, tuple[tuple[str, ...], str]] = {
    "Gelu": (("ERF", "MUL", "ADD"), "0.5 * x * (1 + erf(x / sqrt(2)))"),
    "QuickGelu": (("MUL", "SIGMOID"), "x * sigmoid(1.702 * x)"),
    "HardSwish": (("ADD", "CLAMP", "MUL"), "x * clamp(x + 3, 0, 6) / 6"),
    "HardSigmoid": (("MUL", "ADD", "CLAMP"), "clamp(alpha * x + beta, 0, 1)"),
    "Swish": (("SIGMOID", "MUL"), "x * sigmoid(x)"),
    "Softplus": (("EXP", "ADD", "LOG"), "log(1 + exp(x))"),
    "Mish": (("EXP", "ADD", "LOG", "TANH", "MUL"), "x * tanh(softplus(x))"),
    "LogSigmoid": (("SIGMOID", "LOG"), "log(sigmoid(x))"),
    "LeakyRelu": (("MUL", "MAXIMUM"), "max(x, alpha * x)"),
    "Elu": (("EXP", "SUB", "MUL", "GREATER", "SELECT"), "x > 0 ? x : alpha * (exp(x) - 1)"),
    "Softmax": (
        ("REDUCE_MAX", "SUB", "EXP", "REDUCE_SUM", "RECIPROCAL", "MUL"),
        "exp(x - max) / sum(exp(x - max)) along the axis",
    ),
    "LayerNormalization": (
        ("REDUCE_SUM", "MUL", "SUB", "ADD", "RSQRT"),
        "(x - mean) * rsqrt(var + eps) * gamma + beta",
    ),
    "Batchnorm": (("SUB", "MUL", "ADD", "RSQRT"), "(x - mean) * rsqrt(var + eps) * gamma + beta"),
    "ReduceMean": (("REDUCE_SUM", "MUL"), "sum / count"),
    "Sqrt": (("RSQRT", "RECIPROCAL"), "1 / rsqrt(x)"),
    "GlobalAveragePooling": (("AVG_POOL2D",), "AVG_POOL2D with the kernel the input's H, W"),
}

# The list names no element types; the NPU's int8 arithmetic (i8 data, i32 results)
# and fp32 models are what is claimed.  A vendor edits this in its own manifest.
ELEMENT_TYPES = ("fp32_t", "i32_t", "i8_t")


def operation_names(text: str) -> list[str]:
    """The operations of the list's table, in its order: each row starts
    ``| Name | num inputs``."""
    return re.findall(r"\|\s*([A-Z][A-Za-z0-9]*)\s*\|\s*num inputs", text)


def mobilint_data(spec: Spec) -> dict[str, Any]:
    names = set(operation_names(LIST_PATH.read_text(encoding="utf-8")))
    unknown = sorted((set(NATIVE) | set(COMPOSITE)) - names)
    if unknown:  # the vendored list changed under the table
        raise ValueError(f"{LIST_PATH}: no operation {', '.join(unknown)} in the list")
    operators: dict[str, Any] = {}
    for operation, tosa_ops in NATIVE.items():
        for op in (o for o in tosa_ops if o in spec.operators):  # --spec may have fewer
            modes = {
                m.mode: [operation]
                for m in spec.operator(op).modes
                if {t for t in m.bindings.values() if t.endswith("_t")} <= set(ELEMENT_TYPES)
            }
            entry = operators.setdefault(op, {"modes": {}})
            for mode, targets in modes.items():
                entry["modes"].setdefault(mode, []).extend(targets)
    composites = {
        name: {"subgraph": list(ops), "note": note}
        for name, (ops, note) in COMPOSITE.items()
        if set(ops) <= set(spec.operators)
    }
    return {
        "name": "mobilint",
        "description": "Mobilint NPU IR operations (mobilint-ir-operations.md); NHWC, batch 1",
        "source": "conformance/capabilities/data/mobilint-ir-operations.md",
        "max_rank": 4,
        "layout": "NHWC",
        "max_batch": 1,
        "element_types": list(ELEMENT_TYPES),
        "operators": {op: e for op, e in operators.items() if e["modes"]},
        "composites": composites,
    }

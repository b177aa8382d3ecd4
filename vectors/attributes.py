"""Operator attributes: tosa.xml argument names -> schema attribute tables.

:data:`OPERATOR_ATTRIBUTES` is the one explicit table of the mapping.  For every operator
with attributes in tosa.xml it names the schema table and, per XML attribute argument, the
schema field(s) and how the value is encoded (:class:`Kind`).  Operators absent from it
have no attributes and are written with attribute type ``NONE``.  Schema fields no XML
argument maps to (for example ``PadAttribute.padding`` or ``ResizeAttribute.scale``, which
tosa.xml turned into input tensors) are left absent.  The codec is in
:mod:`vectors.attribute_codec`; docs/flatbuffer.md renders this table.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from conformance.operator_table import OperatorTable
from vectors import layout as L


class Kind(Enum):
    """How an attribute value is stored."""

    I32 = "int32 scalar"
    BOOL = "bool"
    I32_LIST = "int32 vector"
    ACC_TYPE = "acc_type_t name as DType"
    RESIZE_MODE = "resize_mode_t name as ResizeMode"
    VAR_TYPE = "var_t name as DType"
    STRING = "string"
    STRING_BYTES = "string as UTF-8 [ubyte]"
    # A value in the element type of the operator's first input: integer (and bool) types
    # use the int32 ``field``, floating-point types the raw bytes in ``fp_field``.
    ELEMENT = "element value"
    # VARIABLE's initial value: raw bytes in the declared type, plus a presence flag.
    INITIAL_VALUE = "tensor bytes + flag"
    # CONST / CONST_SHAPE values: the output tensor's data, not an attribute table.
    OUTPUT_DATA = "output tensor data"


@dataclass(frozen=True)
class ArgMap:
    arg: str  # tosa.xml argument name, the key in Operator.attributes
    kind: Kind
    field: str  # schema field (for OUTPUT_DATA: the TosaTensor field)
    fp_field: str = ""  # ELEMENT: field for floating-point element types
    flag_field: str = ""  # INITIAL_VALUE: bool field recording whether a value is present


@dataclass(frozen=True)
class OpAttributes:
    table: L.SchemaTable | None  # None: nothing goes into an attribute table
    args: tuple[ArgMap, ...]


def _a(arg: str, kind: Kind, field: str | None = None, **extra: str) -> ArgMap:
    return ArgMap(arg, kind, field or arg, **extra)


_I, _B, _V = Kind.I32, Kind.BOOL, Kind.I32_LIST
_AXIS = OpAttributes(L.AXIS, (_a("axis", _I),))
_CONV = OpAttributes(
    L.CONV,
    (
        _a("pad", _V),
        _a("stride", _V),
        _a("dilation", _V),
        _a("acc_type", Kind.ACC_TYPE),
        _a("input_zp", _I),
        _a("weight_zp", _I),
        _a("local_bound", _B),
    ),
)
_VAR_UID = OpAttributes(L.VARIABLE, (_a("uid", _I),))
_CONST = OpAttributes(None, (_a("values", Kind.OUTPUT_DATA, "data"),))

OPERATOR_ATTRIBUTES: OperatorTable[OpAttributes] = OperatorTable(
    {
        "ARGMAX": _AXIS,
        "AVG_POOL2D": OpAttributes(
            L.POOL,
            (
                _a("kernel", _V),
                _a("stride", _V),
                _a("pad", _V),
                _a("acc_type", Kind.ACC_TYPE, "accum_dtype"),
                _a("input_zp", _I),
                _a("output_zp", _I),
            ),
        ),
        "CONV2D": _CONV,
        "CONV3D": _CONV,
        "DEPTHWISE_CONV2D": _CONV,
        "FFT2D": OpAttributes(L.FFT, (_a("inverse", _B), _a("local_bound", _B))),
        "FULLY_CONNECTED": OpAttributes(
            L.FULLY_CONNECTED, (_a("input_zp", _I), _a("weight_zp", _I))
        ),
        "MATMUL": OpAttributes(L.MATMUL, (_a("A_zp", _I, "a_zp"), _a("B_zp", _I, "b_zp"))),
        "MAX_POOL2D": OpAttributes(L.POOL, (_a("kernel", _V), _a("stride", _V), _a("pad", _V))),
        "RFFT2D": OpAttributes(L.RFFT, (_a("local_bound", _B),)),
        "TRANSPOSE_CONV2D": OpAttributes(
            L.TRANSPOSE_CONV,
            (
                _a("out_pad", _V),
                _a("stride", _V),
                _a("acc_type", Kind.ACC_TYPE),
                _a("input_zp", _I),
                _a("weight_zp", _I),
                _a("local_bound", _B),
            ),
        ),
        "CLAMP": OpAttributes(
            L.CLAMP,
            (
                _a("min_val", Kind.ELEMENT, "min_int", fp_field="min_fp"),
                _a("max_val", Kind.ELEMENT, "max_int", fp_field="max_fp"),
            ),
        ),
        "ARITHMETIC_RIGHT_SHIFT": OpAttributes(L.ARITHMETIC_RIGHT_SHIFT, (_a("round", _B),)),
        "NEGATE": OpAttributes(L.NEGATE, (_a("input1_zp", _I), _a("output_zp", _I))),
        "REDUCE_ALL": _AXIS,
        "REDUCE_ANY": _AXIS,
        "REDUCE_MAX": _AXIS,
        "REDUCE_MIN": _AXIS,
        "REDUCE_PRODUCT": _AXIS,
        "REDUCE_SUM": _AXIS,
        "CONCAT": _AXIS,
        "PAD": OpAttributes(
            L.PAD, (_a("pad_const", Kind.ELEMENT, "pad_const_int", fp_field="pad_const_fp"),)
        ),
        "REVERSE": _AXIS,
        "TRANSPOSE": OpAttributes(L.TRANSPOSE, (_a("perms", _V),)),
        "RESIZE": OpAttributes(L.RESIZE, (_a("mode", Kind.RESIZE_MODE),)),
        "RESCALE": OpAttributes(
            L.RESCALE,
            (
                _a("input_zp", _I),
                _a("output_zp", _I),
                _a("scale32", _B),
                _a("double_round", _B),
                _a("per_channel", _B),
                _a("input_unsigned", _B),
                _a("output_unsigned", _B),
            ),
        ),
        "CONST": _CONST,
        "CUSTOM": OpAttributes(
            L.CUSTOM,
            (
                _a("operator_name", Kind.STRING),
                _a("domain_name", Kind.STRING),
                _a("implementation_attrs", Kind.STRING_BYTES),
            ),
        ),
        "COND_IF": OpAttributes(
            L.COND_IF,
            (
                _a("then_graph", Kind.STRING, "then_branch"),
                _a("else_graph", Kind.STRING, "else_branch"),
            ),
        ),
        "WHILE_LOOP": OpAttributes(
            L.WHILE_LOOP,
            (
                _a("cond_graph", Kind.STRING, "cond_branch"),
                _a("body_graph", Kind.STRING, "body_branch"),
            ),
        ),
        "VARIABLE": OpAttributes(
            L.VARIABLE,
            (
                _a("uid", _I),
                _a("var_shape", _V),
                _a("type", Kind.VAR_TYPE),
                _a("initial_value", Kind.INITIAL_VALUE, flag_field="has_initial_value"),
            ),
        ),
        "VARIABLE_WRITE": _VAR_UID,
        "VARIABLE_READ": _VAR_UID,
        "CONST_SHAPE": _CONST,
        "DIM": _AXIS,
    }
)
NO_ATTRIBUTES = OpAttributes(None, ())

# Enumerated attribute values (tosa.xml enum names) -> schema enum names.
ACC_TYPES: dict[str, str] = {"INT32": "INT32", "FP16": "FP16", "FP32": "FP32", "INT48": "INT48"}
RESIZE_MODES: dict[str, str] = {"NEAREST_NEIGHBOR": "NEAREST", "BILINEAR": "BILINEAR"}
VAR_TYPES: dict[str, str] = {
    "BOOLEAN": "BOOL",
    "INT8": "INT8",
    "INT16": "INT16",
    "INT32": "INT32",
    "FP16": "FP16",
    "BF16": "BF16",
    "FP32": "FP32",
}


def mapping(op: str) -> OpAttributes:
    return OPERATOR_ATTRIBUTES.get(op, NO_ATTRIBUTES)

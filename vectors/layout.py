"""Slot layout of the schema tables in vectors/schema/tosa.fbs, and its enum values.

The codec reads through a bounds-checked reader (:mod:`vectors.fbreader`) instead of the
flatc accessors, because the Python runtime has no verifier and the accessors turn corrupt
offsets into silent garbage.  That reader addresses fields by slot, so the slot order of
every table the codec touches is spelled out here; tests/vectors/test_flatbuffer.py checks
these lists against the .fbs file so they cannot drift.

Enum values are taken from the flatc-generated classes, which are the schema's own numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.operator_table import OperatorTable
from vectors.tosa_fb.tosa.Attribute import Attribute
from vectors.tosa_fb.tosa.DType import DType as SchemaDType
from vectors.tosa_fb.tosa.Op import Op
from vectors.tosa_fb.tosa.ResizeMode import ResizeMode


@dataclass(frozen=True)
class SchemaTable:
    """A table's fields in slot order.  A union field ``u`` takes two slots, ``u_type``
    then ``u``, exactly as flatc lays it out."""

    name: str
    fields: tuple[str, ...]

    def slot(self, field: str) -> int:
        try:
            return self.fields.index(field)
        except ValueError:
            raise KeyError(f"schema table {self.name} has no field {field!r}") from None


def _enum(cls: type) -> dict[str, int]:
    return {k: v for k, v in vars(cls).items() if not k.startswith("_") and isinstance(v, int)}


OP_VALUES: OperatorTable[int] = OperatorTable(_enum(Op))
OP_NAMES: dict[int, str] = {v: k for k, v in OP_VALUES.items()}
DTYPE_VALUES: dict[str, int] = _enum(SchemaDType)
DTYPE_NAMES: dict[int, str] = {v: k for k, v in DTYPE_VALUES.items()}
RESIZE_MODE_VALUES: dict[str, int] = _enum(ResizeMode)
ATTRIBUTE_VALUES: dict[str, int] = _enum(Attribute)
ATTRIBUTE_NAMES: dict[int, str] = {v: k for k, v in ATTRIBUTE_VALUES.items()}

FILE_IDENTIFIER = b"TOSA"

# Container tables.
VERSION = SchemaTable("Version", ("_major", "_minor", "_patch", "_draft"))
TENSOR = SchemaTable(
    "TosaTensor",
    ("name", "shape", "type", "data", "variable", "is_unranked", "variable_name"),
)
OPERATOR = SchemaTable("TosaOperator", ("op", "attribute_type", "attribute", "inputs", "outputs"))
BLOCK = SchemaTable("TosaBasicBlock", ("name", "operators", "tensors", "inputs", "outputs"))
REGION = SchemaTable("TosaRegion", ("name", "blocks"))
GRAPH = SchemaTable("TosaGraph", ("version", "regions"))

# Attribute tables the operator mapping uses (vectors/attributes.py).
POOL = SchemaTable(
    "PoolAttribute", ("pad", "kernel", "stride", "input_zp", "output_zp", "accum_dtype")
)
CONV = SchemaTable(
    "ConvAttribute",
    ("pad", "stride", "dilation", "input_zp", "weight_zp", "local_bound", "acc_type"),
)
TRANSPOSE_CONV = SchemaTable(
    "TransposeConvAttribute",
    ("out_pad", "stride", "output_shape", "input_zp", "weight_zp", "local_bound", "acc_type"),
)
PAD = SchemaTable("PadAttribute", ("padding", "pad_const_int", "pad_const_fp"))
AXIS = SchemaTable("AxisAttribute", ("axis",))
RESIZE = SchemaTable("ResizeAttribute", ("scale", "offset", "border", "mode"))
CLAMP = SchemaTable("ClampAttribute", ("min_int", "max_int", "min_fp", "max_fp"))
RESCALE = SchemaTable(
    "RescaleAttribute",
    (
        "input_zp",
        "output_zp",
        "multiplier",
        "shift",
        "scale32",
        "double_round",
        "per_channel",
        "input_unsigned",
        "output_unsigned",
    ),
)
ARITHMETIC_RIGHT_SHIFT = SchemaTable("ArithmeticRightShiftAttribute", ("round",))
COND_IF = SchemaTable("CondIfAttribute", ("then_branch", "else_branch"))
WHILE_LOOP = SchemaTable("WhileLoopAttribute", ("cond_branch", "body_branch"))
TRANSPOSE = SchemaTable("TransposeAttribute", ("perms",))
MATMUL = SchemaTable("MatMulAttribute", ("a_zp", "b_zp"))
FULLY_CONNECTED = SchemaTable("FullyConnectedAttribute", ("input_zp", "weight_zp"))
NEGATE = SchemaTable("NegateAttribute", ("input1_zp", "output_zp"))
CUSTOM = SchemaTable("CustomAttribute", ("operator_name", "domain_name", "implementation_attrs"))
FFT = SchemaTable("FFTAttribute", ("inverse", "local_bound"))
RFFT = SchemaTable("RFFTAttribute", ("local_bound",))
VARIABLE = SchemaTable(
    "VariableAttribute", ("uid", "var_shape", "type", "initial_value", "has_initial_value")
)

ALL_TABLES: tuple[SchemaTable, ...] = (
    VERSION,
    TENSOR,
    OPERATOR,
    BLOCK,
    REGION,
    GRAPH,
    POOL,
    CONV,
    TRANSPOSE_CONV,
    PAD,
    AXIS,
    RESIZE,
    CLAMP,
    RESCALE,
    ARITHMETIC_RIGHT_SHIFT,
    COND_IF,
    WHILE_LOOP,
    TRANSPOSE,
    MATMUL,
    FULLY_CONNECTED,
    NEGATE,
    CUSTOM,
    FFT,
    RFFT,
    VARIABLE,
)

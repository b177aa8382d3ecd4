"""Encoding and decoding of operator attributes, driven by :mod:`vectors.attributes`.

Every attribute the IR holds is written with the field present, and only present fields are
read back, so an absent optional attribute (``local_bound``) stays absent and a present
``false`` stays present (see :mod:`vectors.fbwriter`).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from typing import SupportsInt, cast

import flatbuffers
import numpy as np

from conformance import dtypes
from conformance.dtypes import DType
from vectors import encoding, fbwriter
from vectors import layout as L
from vectors.attributes import (
    ACC_TYPES,
    RESIZE_MODES,
    VAR_TYPES,
    ArgMap,
    Kind,
    mapping,
)
from vectors.errors import DecodeError, EncodeError
from vectors.fbreader import Table
from vectors.fbwriter import FieldValue

_ENUMS: dict[Kind, tuple[dict[str, str], dict[str, int]]] = {
    Kind.ACC_TYPE: (ACC_TYPES, L.DTYPE_VALUES),
    Kind.RESIZE_MODE: (RESIZE_MODES, L.RESIZE_MODE_VALUES),
    Kind.VAR_TYPE: (VAR_TYPES, L.DTYPE_VALUES),
}

ElementType = Callable[[], DType]  # element type of the operator's first input, on demand


# ---------------------------------------------------------------------------- writing


def encode_attributes(
    builder: flatbuffers.Builder,
    op: str,
    attrs: Mapping[str, object],
    element_type: ElementType,
) -> tuple[int, int]:
    """Write ``op``'s attribute table: (union type, table offset), or (NONE, 0)."""
    spec = mapping(op)
    unknown = sorted(set(attrs) - {a.arg for a in spec.args})
    if unknown:
        raise EncodeError(f"tosa.xml defines no attribute {unknown[0]!r} for {op}")
    if spec.table is None:
        return L.ATTRIBUTE_VALUES["NONE"], 0
    fields: list[FieldValue] = []
    # Field order follows the mapping, not the dict, so the bytes do not depend on how the
    # caller happened to build the attribute dict.
    for arg in spec.args:
        if arg.arg in attrs:
            try:
                fields += _encode_arg(builder, arg, attrs[arg.arg], attrs, element_type)
            except EncodeError as exc:
                raise EncodeError(f"attribute {arg.arg!r}: {exc}") from None
        elif arg.kind is Kind.INITIAL_VALUE:
            fields.append((arg.flag_field, "bool", False))
    offset = fbwriter.table(builder, spec.table, fields)
    return L.ATTRIBUTE_VALUES[spec.table.name], offset


def _encode_arg(
    builder: flatbuffers.Builder,
    arg: ArgMap,
    value: object,
    attrs: Mapping[str, object],
    element_type: ElementType,
) -> list[FieldValue]:
    kind = arg.kind
    if kind is Kind.I32:
        return [(arg.field, "i32", _int32(value, zero_point=arg.arg.endswith("_zp")))]
    if kind is Kind.BOOL:
        return [(arg.field, "bool", _bool(value))]
    if kind is Kind.I32_LIST:
        return [(arg.field, "offset", fbwriter.int32_vector(builder, _int32_list(value)))]
    if kind in _ENUMS:
        names, values = _ENUMS[kind]
        if not isinstance(value, str) or value not in names:
            raise EncodeError(f"expected one of {', '.join(names)}, got {value!r}")
        return [(arg.field, "u32", values[names[value]])]
    if kind is Kind.STRING:
        return [(arg.field, "offset", builder.CreateString(_str(value)))]
    if kind is Kind.STRING_BYTES:
        data = _str(value).encode("utf-8")
        return [(arg.field, "offset", fbwriter.byte_vector(builder, data, 1))]
    if kind is Kind.ELEMENT:
        return [_encode_element(builder, arg, value, element_type())]
    if kind is Kind.INITIAL_VALUE:
        dtype, shape = _variable_type(attrs)
        arr = encoding.coerce(value, dtype, shape, "value")
        offset = fbwriter.byte_vector(builder, encoding.encode(arr, dtype))
        return [(arg.field, "offset", offset), (arg.flag_field, "bool", True)]
    raise EncodeError(f"{kind.value} values are not written into an attribute table")


def _encode_element(
    builder: flatbuffers.Builder, arg: ArgMap, value: object, dtype: DType
) -> FieldValue:
    if dtype.is_float:
        if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
            raise EncodeError(f"expected a {dtype} number, got {value!r}")
        arr = encoding.coerce(np.asarray(float(value)), dtype, (), "value")
        return (arg.fp_field, "offset", fbwriter.byte_vector(builder, encoding.encode(arr, dtype)))
    if dtype is dtypes.BOOL:
        # Stored as 0/1 and read back as bool, so only values that survive that are allowed.
        if not isinstance(value, bool | np.bool_ | numbers.Integral) or value not in (0, 1):
            raise EncodeError(f"expected a bool, got {value!r}")
        return (arg.field, "i32", int(value))
    return (arg.field, "i32", _int32(value))


def _variable_type(attrs: Mapping[str, object]) -> tuple[DType, tuple[int, ...]]:
    """Element type and shape VARIABLE's ``type`` and ``var_shape`` declare."""
    type_name, shape = attrs.get("type"), attrs.get("var_shape")
    if not isinstance(type_name, str) or type_name not in VAR_TYPES or shape is None:
        raise EncodeError("needs the 'type' and 'var_shape' attributes to encode it")
    return _var_dtype(type_name), tuple(_int32_list(shape))


def _var_dtype(type_name: str) -> DType:
    return encoding.ir_dtype(L.DTYPE_VALUES[VAR_TYPES[type_name]])


def _int32(value: object, *, zero_point: bool = False) -> int:
    # A zero point of a floating-point mode is typed like the tensor (in_t), so the IR
    # may hold 0.0; the schema field is int32, and an integral float fits it exactly.
    integral_float = (
        zero_point
        and isinstance(value, numbers.Real)
        and not isinstance(value, numbers.Integral)
        and float(value).is_integer()
    )
    if isinstance(value, bool | np.bool_) or not (
        isinstance(value, numbers.Integral) or integral_float
    ):
        raise EncodeError(f"expected an integer, got {value!r}")
    # Checked above: an Integral, or a Real that is integral (typeshed's numbers ABCs do
    # not declare __int__).
    v = int(cast(SupportsInt, value))
    if not -(1 << 31) <= v < (1 << 31):
        raise EncodeError(f"{v} does not fit in int32")
    return v


def _int32_list(value: object) -> list[int]:
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            raise EncodeError(f"expected a 1-D sequence of integers, got shape {value.shape}")
        value = value.tolist()
    if not isinstance(value, list | tuple):
        raise EncodeError(f"expected a sequence of integers, got {value!r}")
    return [_int32(v) for v in value]


def _bool(value: object) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise EncodeError(f"expected a bool, got {value!r}")
    return bool(value)


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise EncodeError(f"expected a string, got {value!r}")
    return value


# ---------------------------------------------------------------------------- reading


def decode_attributes(op: str, operator: Table, element_type: ElementType) -> dict[str, object]:
    """The IR attributes of ``op`` from its TosaOperator table (OUTPUT_DATA excluded)."""
    spec = mapping(op)
    union_type = operator.u8("attribute_type")
    if union_type == L.ATTRIBUTE_VALUES["NONE"]:
        # Written for operators without attributes; tolerated for the others, whose IR
        # then simply holds no attributes.
        return {}
    found = L.ATTRIBUTE_NAMES.get(union_type, f"unknown attribute type {union_type}")
    if spec.table is None or L.ATTRIBUTE_VALUES[spec.table.name] != union_type:
        expected = "no attributes" if spec.table is None else spec.table.name
        raise DecodeError(f"{op} operator carries {found}, expected {expected}")
    table = operator.table("attribute", spec.table)
    if table is None:
        raise DecodeError(f"{op} operator declares {found} but has no attribute table")
    attrs: dict[str, object] = {}
    for arg in spec.args:
        try:
            value = _decode_arg(table, arg, attrs, element_type)
        except DecodeError as exc:
            raise DecodeError(f"{op} attribute {arg.arg!r}: {exc}") from None
        if value is not None:
            attrs[arg.arg] = value
    return attrs


def _decode_arg(
    table: Table, arg: ArgMap, attrs: Mapping[str, object], element_type: ElementType
) -> object:
    """The attribute's value, or None when the file does not hold it."""
    kind = arg.kind
    if kind is Kind.ELEMENT:
        # Only ask for the element type when there is a value, as the writer does: an
        # operator holding no such attribute need not have its input tensor around.
        if not (table.present(arg.field) or table.present(arg.fp_field)):
            return None
        return _decode_element(table, arg, element_type())
    if kind is Kind.INITIAL_VALUE:
        return _decode_initial_value(table, arg, attrs)
    if not table.present(arg.field):
        return None
    if kind is Kind.I32:
        return table.i32(arg.field)
    if kind is Kind.BOOL:
        return table.boolean(arg.field)
    if kind is Kind.I32_LIST:
        return table.i32s(arg.field)
    if kind in _ENUMS:
        names, values = _ENUMS[kind]
        number = table.u32(arg.field)
        for ir_name, schema_name in names.items():
            if values[schema_name] == number:
                return ir_name
        raise DecodeError(f"enum value {number} is not one of {', '.join(names)}")
    if kind is Kind.STRING:
        return table.string(arg.field)
    raw = table.raw_bytes(arg.field)  # STRING_BYTES
    try:
        return None if raw is None else raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DecodeError("bytes are not valid UTF-8") from None


def _decode_element(table: Table, arg: ArgMap, dtype: DType) -> object:
    if dtype.is_float:
        raw = table.raw_bytes(arg.fp_field)
        return None if raw is None else float(encoding.decode(raw, dtype, ()))
    if not table.present(arg.field):
        return None
    value = table.i32(arg.field)
    return bool(value) if dtype is dtypes.BOOL else value


def _decode_initial_value(table: Table, arg: ArgMap, attrs: Mapping[str, object]) -> object:
    if not table.boolean(arg.flag_field):
        return None
    raw = table.raw_bytes(arg.field)
    type_name, shape = attrs.get("type"), attrs.get("var_shape")
    if raw is None or not isinstance(type_name, str) or not isinstance(shape, tuple):
        raise DecodeError("flagged present but the value, type or var_shape is missing")
    return encoding.decode(raw, _var_dtype(type_name), shape)

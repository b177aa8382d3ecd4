"""Small helpers over ``flatbuffers.Builder`` used by the graph and attribute writers.

Builders made by :func:`new_builder` force defaults: a field is present in the output
exactly when the writer adds it, whatever its value.  The reader relies on that to tell an
attribute the IR does not hold (absent) from one that holds the schema default (``false``,
``0``), so optional attributes such as ``local_bound`` survive a round trip.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import flatbuffers
import numpy as np

from vectors.layout import SchemaTable

ScalarKind = Literal["offset", "bool", "u8", "i32", "u32"]
FieldValue = tuple[str, ScalarKind, int]  # (schema field, how to store it, value)

# Tensor payloads are read in place as typed arrays by C++ consumers, so they follow the
# schema's ``force_align: 8`` (which flatc's Python generator ignores).
DATA_ALIGNMENT = 8


def new_builder(size_hint: int = 1024) -> flatbuffers.Builder:
    builder = flatbuffers.Builder(max(1024, size_hint))
    builder.ForceDefaults(True)
    return builder


def byte_vector(builder: flatbuffers.Builder, data: bytes, alignment: int = DATA_ALIGNMENT) -> int:
    builder.StartVector(1, len(data), alignment)
    builder.head = builder.Head() - len(data)
    builder.Bytes[builder.Head() : builder.Head() + len(data)] = data
    return int(builder.EndVector())


def int32_vector(builder: flatbuffers.Builder, values: Sequence[int]) -> int:
    return int(builder.CreateNumpyVector(np.asarray(values, dtype="<i4").reshape(-1)))


def offset_vector(builder: flatbuffers.Builder, offsets: Sequence[int]) -> int:
    builder.StartVector(4, len(offsets), 4)
    for off in reversed(offsets):
        builder.PrependUOffsetTRelative(off)
    return int(builder.EndVector())


def string_vector(builder: flatbuffers.Builder, strings: Sequence[str]) -> int:
    return offset_vector(builder, [builder.CreateString(s) for s in strings])


def table(builder: flatbuffers.Builder, schema: SchemaTable, fields: Sequence[FieldValue]) -> int:
    """Write one table; every offset in ``fields`` must already be in the builder."""
    builder.StartObject(len(schema.fields))
    for name, kind, value in fields:
        slot = schema.slot(name)
        if kind == "offset":
            builder.PrependUOffsetTRelativeSlot(slot, value, 0)
        elif kind == "bool":
            builder.PrependBoolSlot(slot, bool(value), False)
        elif kind == "u8":
            builder.PrependUint8Slot(slot, value, 0)
        elif kind == "i32":
            builder.PrependInt32Slot(slot, value, 0)
        else:
            builder.PrependUint32Slot(slot, value, 0)
    return int(builder.EndObject())

"""The built-in ``nnapi`` manifest, derived from the vendored ``OperationType.aidl``.

What the file says is parsed (conformance.capabilities.aidl): per operation its operand
types with their HAL versions and roles, and its ranks.  What it cannot say, which TOSA
operator an NNAPI operation expresses and how a TOSA element type is held in an NNAPI
operand, is in :data:`NNAPI_OPERATIONS` and :data:`OPERAND_TYPES` below, each row with
the aidl section (the operation's doc comment) it rests on.  A TOSA mode is claimed
when every tensor it binds is held by an operand type the NNAPI operation supports in
that role (input, filter, bias, output).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conformance.capabilities.aidl import Operation, load_aidl
from conformance.spec import OperatorSpec, Spec, TypeSupport

# TOSA element type -> NNAPI operand type ("OperandType" section).  The quantized
# operands hold TOSA integers with scale 1.0 and zero point 0.
OPERAND_TYPES: dict[str, str] = {
    "fp32_t": "TENSOR_FLOAT32",
    "fp16_t": "TENSOR_FLOAT16",
    "i32_t": "TENSOR_INT32",
    "bool_t": "TENSOR_BOOL8",
    "i8_t": "TENSOR_QUANT8_ASYMM_SIGNED",
    "i16_t": "TENSOR_QUANT16_SYMM",
}


@dataclass(frozen=True)
class Row:
    operator: str  # TOSA
    operation: str  # NNAPI, the aidl section the row rests on
    note: str  # the operand values that make it the TOSA operator


NNAPI_OPERATIONS: tuple[Row, ...] = (
    Row("ADD", "ADD", "input 2 FusedActivationFunc NONE"),
    Row("SUB", "SUB", "input 2 FusedActivationFunc NONE"),
    Row("MAXIMUM", "MAXIMUM", ""),
    Row("MINIMUM", "MINIMUM", ""),
    Row("POW", "POW", ""),
    Row("ABS", "ABS", ""),
    Row("EXP", "EXP", ""),
    Row("LOG", "LOG", ""),
    Row("NEGATE", "NEG", ""),
    Row("RSQRT", "RSQRT", ""),
    Row("SIN", "SIN", ""),
    Row("FLOOR", "FLOOR", ""),
    Row("SIGMOID", "LOGISTIC", ""),
    Row("TANH", "TANH", ""),
    Row("EQUAL", "EQUAL", "output TENSOR_BOOL8"),
    Row("GREATER", "GREATER", "output TENSOR_BOOL8"),
    Row("GREATER_EQUAL", "GREATER_EQUAL", "output TENSOR_BOOL8"),
    Row("LOGICAL_AND", "LOGICAL_AND", ""),
    Row("LOGICAL_OR", "LOGICAL_OR", ""),
    Row("LOGICAL_NOT", "LOGICAL_NOT", ""),
    Row("SELECT", "SELECT", "input 0 TENSOR_BOOL8"),
    Row("CAST", "CAST", ""),
    Row("CONCAT", "CONCATENATION", "axis as input n"),
    Row("CONV2D", "CONV_2D", "explicit padding, NHWC, FusedActivationFunc NONE"),
    Row("DEPTHWISE_CONV2D", "DEPTHWISE_CONV_2D", "explicit padding, NHWC, depth multiplier M"),
    Row("TRANSPOSE_CONV2D", "TRANSPOSE_CONV_2D", "explicit padding, NHWC"),
    Row("AVG_POOL2D", "AVERAGE_POOL_2D", "explicit padding, NHWC; padding not counted"),
    Row("MAX_POOL2D", "MAX_POOL_2D", "explicit padding, NHWC"),
    Row("RESHAPE", "RESHAPE", ""),
    Row("TRANSPOSE", "TRANSPOSE", ""),
    Row("PAD", "PAD_V2", "pad_const as input 2"),
    Row("SLICE", "SLICE", ""),
    Row("TILE", "TILE", ""),
    Row("REDUCE_MAX", "REDUCE_MAX", "keep_dims true"),
    Row("REDUCE_MIN", "REDUCE_MIN", "keep_dims true"),
    Row("REDUCE_SUM", "REDUCE_SUM", "keep_dims true"),
    Row("REDUCE_PRODUCT", "REDUCE_PROD", "keep_dims true"),
    Row("REDUCE_ALL", "REDUCE_ALL", "keep_dims true"),
    Row("REDUCE_ANY", "REDUCE_ANY", "keep_dims true"),
    Row("ARGMAX", "ARGMAX", ""),
    Row("MATMUL", "BATCH_MATMUL", "adj_x and adj_y false"),
)

_ROLE = {"weight": "filter", "bias": "bias"}


def _tensor_roles(op_spec: OperatorSpec, mode: TypeSupport) -> list[tuple[str, str]] | None:
    """(TOSA element type, NNAPI role) of every data tensor the mode binds; None when
    one has no NNAPI operand type."""
    out = []
    for arg in (*op_spec.inputs, *op_spec.outputs):
        if arg.type not in ("tensor_t", "tensor_list_t"):
            continue  # shape operands are NNAPI scalars or INT32 vectors
        et = arg.element_type
        t = mode.bindings.get(et, et)
        if not t.endswith("_t"):
            continue
        if t not in OPERAND_TYPES:
            return None
        role = "output" if arg.category == "output" else _ROLE.get(arg.name, "input")
        out.append((t, role))
    return out


def _since(op: Operation, roles: list[tuple[str, str]]) -> str | None:
    """The HAL version from which the operation holds every (type, role); None if never."""
    versions = []
    for t, role in roles:
        found = op.supports(OPERAND_TYPES[t], role)
        if found is None:
            return None
        versions.append(found.since)
    return max(versions, key=lambda v: (v.startswith("FL"), v)) if versions else op.since


def nnapi_data(spec: Spec) -> dict[str, Any]:
    ops = load_aidl()
    operators: dict[str, Any] = {}
    for row in NNAPI_OPERATIONS:
        if row.operator not in spec.operators:  # a cut-down or other tosa.xml (--spec)
            continue
        op = ops[row.operation]
        op_spec = spec.operator(row.operator)
        modes: dict[str, list[str]] = {}
        for m in op_spec.modes:
            roles = _tensor_roles(op_spec, m)
            since = None if roles is None else _since(op, roles)
            if since is None:
                continue
            types = ", ".join(dict.fromkeys(OPERAND_TYPES[t] for t, _ in roles or ()))
            hal = f"NNAPI feature level {since[2:]}" if since.startswith("FL") else f"HAL {since}"
            note = f"; {row.note}" if row.note else ""
            modes[m.mode] = [f"{row.operation} ({types}; since {hal}{note})"]
        if not modes:
            continue
        entry: dict[str, Any] = {"modes": modes}
        if op.rank_min and op.rank_min != op.rank_max:  # "4, NHWC" is the operand's own rank
            entry["min_rank"] = op.rank_min
        if op.rank_max is not None:
            entry["max_rank"] = op.rank_max
        entry["note"] = f"aidl: {row.operation}: Supported tensor rank: {op.rank_text}"
        operators[row.operator] = entry
    return {
        "name": "nnapi",
        "description": "Android NNAPI operations (OperationType.aidl) that express a TOSA "
        "operator natively",
        "source": "conformance/capabilities/data/OperationType.aidl",
        # Every mapped operation states a rank, at most 4 (or none: CAST, SELECT, ARGMAX
        # say "from 1"; NNAPI drivers are written for up to 4 dimensions).
        "max_rank": 4,
        "layout": "NHWC",
        "element_types": sorted(OPERAND_TYPES),
        "operators": operators,
    }

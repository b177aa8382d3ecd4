"""Variable operators (EXT-VARIABLE): VARIABLE, VARIABLE_WRITE, VARIABLE_READ.

Variable tensors live in the graph-wide ``ctx.state["variables"]``, by the attribute
that addresses them: an i32 ``uid`` in the draft, a String ``name`` in TOSA 1.0
(:func:`address_attribute`).  One
evaluation of a graph is one graph execution in a fresh context, so every variable
starts unallocated and unseen; the spec's clearing of the ``seen`` flags at the start
of a graph execution is the start of the evaluation (blocks run by COND_IF or
WHILE_LOOP belong to the same execution and clear nothing).

Every rule the pseudocode of these operators states is a REQUIRE: declaring a uid
twice, writing or reading an undeclared variable, a shape or type that differs from
the declaration, and reading a variable that was never written all make the graph
unpredictable, not an error.  The ERROR_IFs here are tosa_execute_graph's checks of
VARIABLE's attributes, which the engine cannot make for it (VARIABLE has no tensor
operand to bind ``var_t`` from).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from conformance import dtypes
from conformance.dtypes import DType
from conformance.spec import OperatorSpec
from reference.arguments import ATTRIBUTES_CLAUSE, TYPES_CLAUSE
from reference.context import OpContext
from reference.registry import implements

Result = dict[str, np.ndarray | list[np.ndarray]]

STATE_KEY = "variables"

# The var_t enumeration (tosa.xml <enum name="var_t">) by value name -> element type.
VAR_TYPES: dict[str, DType] = {
    "BOOLEAN": dtypes.BOOL,
    "INT8": dtypes.I8,
    "INT16": dtypes.I16,
    "INT32": dtypes.I32,
    "FP16": dtypes.FP16,
    "BF16": dtypes.BF16,
    "FP32": dtypes.FP32,
}


@dataclass
class Variable:
    """A variable tensor as variable_tensor_allocate makes it."""

    uid: int | str  # the uid or name that addresses it
    shape: tuple[int, ...]
    dtype: DType
    data: np.ndarray  # in the storage of dtype
    is_written: bool = False
    seen: bool = False


def variables(ctx: OpContext) -> dict[int | str, Variable]:
    table: dict[int | str, Variable] = ctx.state.setdefault(STATE_KEY, {})
    return table


def address_attribute(op_spec: OperatorSpec) -> str:
    """The attribute a variable is addressed by: ``name`` where the operator declares
    one (TOSA 1.0, a String), else ``uid`` (the draft, an i32)."""
    return "name" if any(a.name == "name" for a in op_spec.attributes) else "uid"


def element_type_variable(op_spec: OperatorSpec) -> str:
    """The type variable of the variable's elements: the operator's only declared one
    (``var_t`` in the draft; TOSA 1.0 declares ``in_t`` or ``out_t``)."""
    return op_spec.types[0]


def variable_address(ctx: OpContext) -> int | str:
    """The uid or name of the variable this operator addresses."""
    value = ctx.attr(address_attribute(ctx.op_spec))
    return str(value) if isinstance(value, str) else int(value)


def _shown(address: int | str) -> str:
    return f"uid {address}" if isinstance(address, int) else f"name {address!r}"


def _lookup(ctx: OpContext) -> Variable | None:
    return variables(ctx).get(variable_address(ctx))


def _var_type(ctx: OpContext) -> DType:
    """var_t from the ``type`` attribute; it must be a type one of the modes supports."""
    name = ctx.attr("type")
    ctx.error_if(
        name not in VAR_TYPES,
        ATTRIBUTES_CLAUSE,
        f"type {name!r} is not a var_t value ({', '.join(VAR_TYPES)})",
    )
    var_t = VAR_TYPES[name]
    var = element_type_variable(ctx.op_spec)
    supported = [m.dtype(var) for m in ctx.op_spec.modes]
    ctx.error_if(
        var_t not in supported,
        TYPES_CLAUSE,
        f"var_t={var_t}; the modes support {', '.join(str(d) for d in supported)}",
    )
    return var_t


def _var_shape(ctx: OpContext) -> tuple[int, ...]:
    raw = np.asarray(ctx.attr("var_shape")).reshape(-1)
    ok = raw.size == 0 or (raw.dtype.kind in "iu" and bool(np.all(raw >= 0)))
    ctx.error_if(not ok, ATTRIBUTES_CLAUSE, f"var_shape {raw.tolist()} is not a list of sizes")
    return tuple(int(d) for d in raw)


def _is_exactly(values: np.ndarray, dt: DType) -> bool:
    """Whether every value is one of ``dt``'s values (as the graph file must store it)."""
    if values.dtype == dt.storage:
        return True
    try:
        numeric = values.dtype.kind in "iuf" or dtypes.from_numpy(values.dtype).is_float
    except KeyError:  # strings, objects
        numeric = False
    if not numeric:  # also bools for a numeric type
        return False
    with np.errstate(invalid="ignore", over="ignore"):
        if dt.is_int:
            wide = values.astype(np.int64)
            return bool(np.array_equal(wide, values) and np.all(dt.in_range(wide)))
        if dt.is_float:
            back = values.astype(dt.storage).astype(np.float64)
            return bool(np.array_equal(back, values.astype(np.float64), equal_nan=True))
    return False  # numbers for a bool variable: not of its type


@implements("VARIABLE")
def variable(ctx: OpContext) -> Result:
    initial = ctx.attr("initial_value")
    if initial is not None:
        # initial_value's <levellimit>: the engine binds no attribute shapes for levels.
        rank = np.ndim(initial)
        limit = ctx.level["MAX_RANK"]
        ctx.level_check(rank <= limit, "rank(shape) <= MAX_RANK", f"initial_value rank {rank}")
    var_shape = _var_shape(ctx)
    var_t = _var_type(ctx)

    uid = variable_address(ctx)
    var = variables(ctx).get(uid)
    if var is None:
        var = Variable(uid, var_shape, var_t, np.zeros(var_shape, var_t.storage))
        variables(ctx)[uid] = var
        if initial is not None:
            values = np.asarray(initial)
            # The IR holds initial_value as numbers: it is of type var_t when every value
            # is one (the erratum variable-var_t types the argument var_t).
            ctx.require(
                _is_exactly(values, var_t),
                "var_t == in_t",
                f"initial_value ({values.dtype}) holds values that are not {var_t}",
            )
            ctx.require(
                var_shape == values.shape,
                "var_shape == shape",
                f"var_shape {list(var_shape)}, initial_value shape {list(values.shape)}",
            )
            var.data = values.astype(var_t.storage)
            var.is_written = True
    else:
        ctx.require(not var.seen, "!var_tensor.seen", f"{_shown(uid)} is declared twice")
    var.seen = True
    return {}


@implements("VARIABLE_WRITE")
def variable_write(ctx: OpContext) -> Result:
    var = _lookup(ctx)
    uid = variable_address(ctx)
    ctx.require(var is not None, "variable_tensor", f"{_shown(uid)} is not declared")
    assert var is not None
    # Unreachable within one execution (a declared variable was seen in it); kept
    # because it is the pseudocode's rule.
    ctx.require(
        var.seen, "variable_tensor.seen", f"{_shown(uid)} is not declared in this execution"
    )
    t = ctx.input_tensor("input1")
    ctx.require(
        var.shape == t.shape,
        "variable_tensor.shape == shape",
        f"{_shown(uid)} is {list(var.shape)}, input1 is {list(t.shape)}",
    )
    ctx.require(
        var.dtype is t.dtype,
        "variable_tensor.type == in_t",
        f"{_shown(uid)} is {var.dtype}, input1 is {t.dtype}",
    )
    var.data = ctx.arg("input1").copy()
    var.is_written = True
    return {}


@implements("VARIABLE_READ")
def variable_read(ctx: OpContext) -> Result:
    var = _lookup(ctx)
    uid = variable_address(ctx)
    ctx.require(var is not None, "variable_tensor != NULL", f"{_shown(uid)} is not declared")
    assert var is not None
    ctx.require(var.is_written, "variable_tensor.is_written", f"{_shown(uid)} was never written")
    t = ctx.output_tensor("output1")
    ctx.require(
        var.shape == t.shape,
        "variable_tensor.shape == shape",
        f"{_shown(uid)} is {list(var.shape)}, output1 is {list(t.shape)}",
    )
    ctx.require(
        var.dtype is t.dtype,
        "variable_tensor.type == out_t",
        f"{_shown(uid)} is {var.dtype}, output1 is {t.dtype}",
    )
    return {"output1": var.data.copy()}

"""Per-operator translation: one of our operators -> Arm operator(s).

Each translator gets the block emitter and our :class:`~conformance.graph.Operator`
(attributes keyed by tosa.xml argument names) and adds what the later revision needs:
zero points and pad values as constant input tensors, ``nan_mode``, ``rounding_mode``,
shape constants for the FULLY_CONNECTED rewrite.  The revision differences they
implement are listed, with reasons, in :mod:`conformance.backends.revision.revisions`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from conformance import dtypes
from conformance.backends.revision.elements import storage, value_bytes, wrap_to
from conformance.backends.revision.emitter import BlockEmitter, Untranslatable
from conformance.dtypes import DType
from conformance.graph import Block, Operator, Tensor
from conformance.operator_table import OperatorTable, family

Translator = Callable[[BlockEmitter, Operator], None]
TRANSLATORS: OperatorTable[Translator] = OperatorTable()

# Operators whose inputs, outputs and (absent) attributes are the same in both revisions.
_PLAIN = family(
    (  # noqa: SIM905 - a word list reads better than 44 one-name lines
        "ERF SIGMOID TANH ADD SUB BITWISE_AND BITWISE_OR BITWISE_XOR INTDIV LOGICAL_AND "
        "LOGICAL_LEFT_SHIFT LOGICAL_RIGHT_SHIFT LOGICAL_OR LOGICAL_XOR POW TABLE ABS "
        "BITWISE_NOT CEIL CLZ COS EXP FLOOR LOG LOGICAL_NOT RECIPROCAL RSQRT SIN SELECT EQUAL "
        "GREATER GREATER_EQUAL RESHAPE SLICE TILE GATHER SCATTER CAST IDENTITY ADD_SHAPE "
        "SUB_SHAPE MUL_SHAPE CONCAT_SHAPE"
    ).split()
)
_AXIS_ONLY = family(
    ("REDUCE_ALL", "REDUCE_ANY", "REDUCE_PRODUCT", "REDUCE_SUM", "CONCAT", "REVERSE")
)
_AXIS_NAN = family(("ARGMAX", "REDUCE_MAX", "REDUCE_MIN"))
_CONVS = family(("CONV2D", "CONV3D", "DEPTHWISE_CONV2D"))


# Files a translator under each operator it serves (an operator is filed once).
_register = TRANSLATORS.register


def _attr(op: Operator, name: str) -> Any:
    try:
        return op.attributes[name]
    except KeyError:
        raise Untranslatable(f"{op.op} has no {name!r} attribute") from None


def _ints(value: Any) -> list[int]:
    return [int(v) for v in np.asarray(value).reshape(-1)]


def _propagate(em: BlockEmitter) -> Any:
    # Our revision's apply_max_s / apply_min_s return NaN when either operand is NaN.
    return em.ts.NanPropagationMode.PROPAGATE


def _acc(em: BlockEmitter, op: Operator) -> Any:
    name = str(_attr(op, "acc_type"))
    try:
        return getattr(em.ts.DType, name)
    except AttributeError:
        raise Untranslatable(f"{op.op}: acc_type {name} has no DType in tosa-tools") from None


def _scalar_in(value: Any, dt: DType, what: str) -> float | int | bool:
    """A scalar attribute value exactly as ``dt`` holds it, or Untranslatable."""
    if dt is dtypes.BOOL:
        return bool(value)
    if dt.is_float:
        f = float(value)
        held = float(storage(np.array([f]), dt)[0])
        if held != f and not (math.isnan(f) and math.isnan(held)):
            raise Untranslatable(
                f"{what} {value!r} is not a {dt} value; the later revision "
                f"holds it in a {dt} tensor"
            )
        return f
    if float(value) != int(value) or not bool(dt.in_range(np.array(int(value)))):
        raise Untranslatable(
            f"{what} {value!r} does not fit {dt}; the later revision holds it in a {dt} tensor"
        )
    return int(value)


def zero_point(
    em: BlockEmitter, op: Operator, attr: str, dt: DType, *, unsigned: bool = False
) -> str:
    """Our zero-point attribute as the later revision's [1] tensor of type ``dt``."""
    value = op.attributes.get(attr, 0)
    if dt.is_float:
        data: Any = [float(value)]
    else:
        v = float(value)
        lo = -(1 << (dt.bits - 1))
        hi = (1 << dt.bits) - 1 if unsigned else (1 << (dt.bits - 1)) - 1
        if v != int(v) or not lo <= int(v) <= hi:
            raise Untranslatable(
                f"{op.op} {attr}={value!r} does not fit {dt}: the later revision holds zero "
                f"points in {dt} tensors, so this vector cannot be written"
            )
        data = [wrap_to(int(v), dt)]
    return em.const(attr, np.array(data), dt, (1,))


def _emit_plain(em: BlockEmitter, op: Operator) -> None:
    em.op(op.op, op.inputs, op.outputs)


for _name in _PLAIN:
    TRANSLATORS[_name] = _emit_plain


@_register(*_AXIS_ONLY)
def _axis(em: BlockEmitter, op: Operator) -> None:
    em.op(op.op, op.inputs, op.outputs, int(_attr(op, "axis")))


@_register(*_AXIS_NAN)
def _axis_nan(em: BlockEmitter, op: Operator) -> None:
    em.op(op.op, op.inputs, op.outputs, int(_attr(op, "axis")), _propagate(em))


@_register("MAXIMUM", "MINIMUM")
def _max_min(em: BlockEmitter, op: Operator) -> None:
    em.op(op.op, op.inputs, op.outputs, _propagate(em))


@_register("ARITHMETIC_RIGHT_SHIFT")
def _ars(em: BlockEmitter, op: Operator) -> None:
    em.op(op.op, op.inputs, op.outputs, bool(_attr(op, "round")))


@_register("MUL")
def _mul(em: BlockEmitter, op: Operator) -> None:
    # tensor_overrides already declares a rank-0 shift as [1].  A shift that *is* [1]
    # in our graph breaks our rank-0 rule, yet is the later revision's only valid form.
    shift = em.ours.get(op.inputs[2]) if len(op.inputs) == 3 else None
    if shift is not None and shift.shape == (1,):
        raise Untranslatable(
            "MUL shift of shape [1] breaks our revision's rank-0 rule but is exactly the "
            "later revision's form, so the ERROR_IF cannot be expressed"
        )
    em.op(op.op, op.inputs, op.outputs)


@_register("TRANSPOSE")
def _transpose(em: BlockEmitter, op: Operator) -> None:
    em.op(op.op, op.inputs, op.outputs, _ints(_attr(op, "perms")))


@_register("DIM")
def _dim(em: BlockEmitter, op: Operator) -> None:
    em.op(op.op, op.inputs, op.outputs, int(_attr(op, "axis")))


@_register("DIV_SHAPE")
def _div_shape(em: BlockEmitter, op: Operator) -> None:
    em.op("DIV_FLOOR_SHAPE", op.inputs, op.outputs)


@_register("RESIZE")
def _resize(em: BlockEmitter, op: Operator) -> None:
    modes = {"NEAREST_NEIGHBOR": "NEAREST", "BILINEAR": "BILINEAR"}
    mode = str(_attr(op, "mode"))
    if mode not in modes:
        raise Untranslatable(f"RESIZE mode {mode} has no counterpart in tosa-tools")
    em.op(op.op, op.inputs, op.outputs, getattr(em.ts.ResizeMode, modes[mode]))


@_register("CLAMP")
def _clamp(em: BlockEmitter, op: Operator) -> None:
    dt = em.dtype(op.inputs[0])
    lo = _scalar_in(_attr(op, "min_val"), dt, "CLAMP min_val")
    hi = _scalar_in(_attr(op, "max_val"), dt, "CLAMP max_val")
    em.op(op.op, op.inputs, op.outputs, value_bytes(lo, dt), value_bytes(hi, dt), _propagate(em))


@_register("PAD")
def _pad(em: BlockEmitter, op: Operator) -> None:
    dt = em.dtype(op.inputs[0])
    value = _scalar_in(op.attributes.get("pad_const", 0), dt, "PAD pad_const")
    pad_const = em.const("pad_const", np.array([value]), dt, (1,))
    em.op(op.op, [*op.inputs, pad_const], op.outputs)


@_register("NEGATE")
def _negate(em: BlockEmitter, op: Operator) -> None:
    dt = em.dtype(op.inputs[0])
    izp = zero_point(em, op, "input1_zp", dt)
    ozp = zero_point(em, op, "output_zp", em.dtype(op.outputs[0]))
    em.op(op.op, [*op.inputs, izp, ozp], op.outputs)


@_register("AVG_POOL2D")
def _avg_pool(em: BlockEmitter, op: Operator) -> None:
    izp = zero_point(em, op, "input_zp", em.dtype(op.inputs[0]))
    ozp = zero_point(em, op, "output_zp", em.dtype(op.outputs[0]))
    em.op(
        op.op,
        [*op.inputs, izp, ozp],
        op.outputs,
        _ints(_attr(op, "kernel")),
        _ints(_attr(op, "stride")),
        _ints(_attr(op, "pad")),
        _acc(em, op),
    )


@_register("MAX_POOL2D")
def _max_pool(em: BlockEmitter, op: Operator) -> None:
    em.op(
        op.op,
        op.inputs,
        op.outputs,
        _ints(_attr(op, "kernel")),
        _ints(_attr(op, "stride")),
        _ints(_attr(op, "pad")),
        _propagate(em),
    )


def _conv_zps(em: BlockEmitter, op: Operator) -> list[str]:
    if len(op.inputs) < 2:
        raise Untranslatable(f"{op.op} has {len(op.inputs)} inputs")
    return [
        zero_point(em, op, "input_zp", em.dtype(op.inputs[0])),
        zero_point(em, op, "weight_zp", em.dtype(op.inputs[1])),
    ]


@_register(*_CONVS)
def _conv(em: BlockEmitter, op: Operator) -> None:
    zps = _conv_zps(em, op)
    em.op(
        op.op,
        [*op.inputs, *zps],
        op.outputs,
        _ints(_attr(op, "pad")),
        _ints(_attr(op, "stride")),
        _ints(_attr(op, "dilation")),
        bool(op.attributes.get("local_bound", False)),
        _acc(em, op),
    )


@_register("TRANSPOSE_CONV2D")
def _transpose_conv(em: BlockEmitter, op: Operator) -> None:
    zps = _conv_zps(em, op)
    em.op(
        op.op,
        [*op.inputs, *zps],
        op.outputs,
        _ints(_attr(op, "out_pad")),
        _ints(_attr(op, "stride")),
        bool(op.attributes.get("local_bound", False)),
        _acc(em, op),
    )


@_register("MATMUL")
def _matmul(em: BlockEmitter, op: Operator) -> None:
    a_zp = zero_point(em, op, "A_zp", em.dtype(op.inputs[0]))
    b_zp = zero_point(em, op, "B_zp", em.dtype(op.inputs[1]))
    em.op(op.op, [*op.inputs, a_zp, b_zp], op.outputs)


@_register("FFT2D")
def _fft(em: BlockEmitter, op: Operator) -> None:
    em.op(
        op.op,
        op.inputs,
        op.outputs,
        bool(_attr(op, "inverse")),
        bool(op.attributes.get("local_bound", False)),
    )


@_register("RFFT2D")
def _rfft(em: BlockEmitter, op: Operator) -> None:
    em.op(op.op, op.inputs, op.outputs, bool(op.attributes.get("local_bound", False)))


@_register("RESCALE")
def _rescale(em: BlockEmitter, op: Operator) -> None:
    in_uns = bool(op.attributes.get("input_unsigned", False))
    out_uns = bool(op.attributes.get("output_unsigned", False))
    izp = zero_point(em, op, "input_zp", em.dtype(op.inputs[0]), unsigned=in_uns)
    ozp = zero_point(em, op, "output_zp", em.dtype(op.outputs[0]), unsigned=out_uns)
    rounding = "DOUBLE_ROUND" if bool(_attr(op, "double_round")) else "SINGLE_ROUND"
    em.op(
        op.op,
        [*op.inputs, izp, ozp],
        op.outputs,
        bool(_attr(op, "scale32")),
        getattr(em.ts.RoundingMode, rounding),
        bool(_attr(op, "per_channel")),
        in_uns,
        out_uns,
    )


@_register("CONST", "CONST_SHAPE")
def _const(em: BlockEmitter, op: Operator) -> None:
    if len(op.outputs) != 1:
        raise Untranslatable(f"{op.op} with {len(op.outputs)} outputs")
    t = em.tensor(op.outputs[0])
    values = op.attributes.get("values", t.data)
    if values is None:
        raise Untranslatable(f"{op.op} without values")
    arr = np.asarray(values)
    if arr.shape != t.shape:
        raise Untranslatable(
            f"{op.op} values of shape {list(arr.shape)} for an output of shape "
            f"{list(t.shape)}: the later revision stores the values as the output tensor's "
            "contents, so the two cannot differ"
        )
    # The operator stays what it is, even over an output of the wrong kind (a must-fail
    # vector): the model is to judge that, not the translation.
    em.declare(t, arr)
    em.op(op.op, [], [t.name])


@_register("COND_IF")
def _cond_if(em: BlockEmitter, op: Operator) -> None:
    em.op(
        op.op,
        op.inputs,
        op.outputs,
        em.region_name(str(_attr(op, "then_graph"))),
        em.region_name(str(_attr(op, "else_graph"))),
    )


@_register("WHILE_LOOP")
def _while(em: BlockEmitter, op: Operator) -> None:
    em.op(
        op.op,
        op.inputs,
        op.outputs,
        em.region_name(str(_attr(op, "cond_graph"))),
        em.region_name(str(_attr(op, "body_graph"))),
    )


# FULLY_CONNECTED is gone from the later revision: the same dot products as a 1x1 CONV2D.
_FC_ACC = {"i8": "INT32", "i16": "INT48", "fp16": "FP32", "bf16": "FP32", "fp32": "FP32"}


@_register("FULLY_CONNECTED")
def _fully_connected(em: BlockEmitter, op: Operator) -> None:
    if len(op.inputs) != 3 or len(op.outputs) != 1:
        raise Untranslatable("FULLY_CONNECTED needs input, weight, bias and one output")
    inp, weight, bias = op.inputs
    out = op.outputs[0]
    shapes = {n: em.shape(n) for n in (inp, weight, out)}
    if any(len(s) != 2 for s in shapes.values()):
        raise Untranslatable(
            "FULLY_CONNECTED with input/weight/output not of rank 2 cannot be rewritten as "
            f"CONV2D (shapes {shapes})"
        )
    in_dt = em.dtype(inp)
    acc = _FC_ACC.get(in_dt.name)
    if acc is None:
        raise Untranslatable(f"FULLY_CONNECTED on {in_dt} has no accumulator to rewrite with")
    n, ic = shapes[inp]
    oc, wic = shapes[weight]
    on, ooc = shapes[out]
    # Keep every declared size, so that CONV2D checks the same shape rules ours does.
    x4 = _reshaped(em, inp, (n, 1, 1, ic))
    w4 = _reshaped(em, weight, (oc, 1, 1, wic))
    # The output keeps its name and is declared [N,1,1,OC]: the same values in the same
    # order as [N,OC], which the runner reads back in our shape.  (A final RESHAPE would
    # not do: the model's RESHAPE has no INT48 form, the 16x8 output type.)
    em.declare(Tensor(out, (on, 1, 1, ooc), em.dtype(out)))
    zps = _conv_zps(em, op)
    em.op(
        "CONV2D",
        [x4, w4, bias, *zps],
        [out],
        [0, 0, 0, 0],
        [1, 1],
        [1, 1],
        False,
        getattr(em.ts.DType, acc),
    )


def _reshaped(em: BlockEmitter, name: str, shape: tuple[int, ...]) -> str:
    data = em.const_values.get(name)
    if data is not None:
        # A constant (every input is, on the executable path FULLY_CONNECTED takes) is
        # reshaped here: the model's RESHAPE has no INT4 form, and 8x4 weights are INT4.
        return em.const(f"{name}_nhwc", data.reshape(shape), em.dtype(name), shape)
    new = em.intermediate(f"{name}_nhwc", shape, em.dtype(name))
    size = em.const(f"{name}_shape", np.array(shape), dtypes.SHAPE, (len(shape),))
    em.op("RESHAPE", [name, size], [new])
    return new


# -- tensors the later revision declares differently ------------------------------


def tensor_overrides(block: Block) -> dict[str, Tensor]:
    """Our tensors that the Arm graph must declare with another type or shape."""
    out: dict[str, Tensor] = {}
    for op in block.operators:
        if op.op == "MUL" and len(op.inputs) == 3:
            t = block.tensors.get(op.inputs[2])
            if t is not None and t.shape == ():
                out[t.name] = _with(t, shape=(1,))  # shift: rank 0 -> [1]
        if op.op in ("GATHER", "SCATTER") and len(op.inputs) >= 2:
            t = block.tensors.get(op.inputs[1])
            if t is not None and t.dtype is dtypes.SHAPE:
                out[t.name] = _with(t, dtype=dtypes.I32)  # indices: size_t -> int32
    return out


def _with(t: Tensor, *, shape: tuple[int, ...] | None = None, dtype: DType | None = None) -> Tensor:
    return Tensor(
        t.name,
        t.shape if shape is None else shape,
        t.dtype if dtype is None else dtype,
        t.data,
        t.variable,
        t.is_unranked,
        t.variable_name,
    )


def convert_values(values: np.ndarray, ours: Tensor, theirs: Tensor) -> np.ndarray:
    """Values of tensor ``ours`` as the retyped/reshaped tensor ``theirs`` holds them."""
    arr = np.asarray(values)
    if theirs.dtype is not ours.dtype:
        if not theirs.dtype.is_int:
            raise Untranslatable(f"cannot convert {ours.dtype} values to {theirs.dtype}")
        wide = arr.astype(np.int64)
        if wide.size and not np.all(theirs.dtype.in_range(wide)):
            raise Untranslatable(
                f"tensor {ours.name!r} holds values outside {theirs.dtype}, the type the later "
                "revision gives it"
            )
        arr = wide.astype(theirs.dtype.storage)
    return arr.reshape(theirs.shape)

"""How our spec revision maps onto the one tosa-tools implements, as data.

Our vectors follow the tosa.xml this project ships (1.1.0 draft, BI/MI profiles, zero
points as attributes).  Arm's ``tosa-tools`` 2026.8 implements a later draft of the
same version number: zero points are input tensors, profiles are PRO-INT/PRO-FP, the
NaN-sensitive operators take a ``nan_mode``, RESCALE a ``rounding_mode``, FULLY_CONNECTED
and DIV_SHAPE are gone, and the Op / DType / Attribute enumerations are renumbered.

:data:`DIFFERENCES` lists every difference the backend deals with, one line each: what
differs and how the backend maps it, or why it skips the vector.  docs/arm-reference-model.md
renders the same table (a test checks they agree).  :data:`SKIPPED_OPERATORS` holds the
operators no vector of which can be run, with the reason the runner reports.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal

from conformance.graph import Block, Graph, Operator
from conformance.operator_table import OperatorTable, family
from reference.ops.custom import UNTESTABLE

Handling = Literal["mapped", "skipped", "mapped, some vectors skipped"]


@dataclass(frozen=True)
class Difference:
    operators: str  # operator names, or "all"
    ours: str  # our revision
    theirs: str  # tosa-tools 2026.8
    handling: Handling
    how: str  # the mapping, or the reason for skipping


_ZP_OPS = "AVG_POOL2D, CONV2D, CONV3D, DEPTHWISE_CONV2D, TRANSPOSE_CONV2D, MATMUL, NEGATE, RESCALE"
_NAN_OPS = "ARGMAX, MAX_POOL2D, CLAMP, MAXIMUM, MINIMUM, REDUCE_MAX, REDUCE_MIN"

DIFFERENCES: tuple[Difference, ...] = (
    Difference(
        "all",
        "seed schema: Op, DType and Attribute enumerations of tosa.fbs 0.x numbering; "
        "shared attribute tables (ConvAttribute, PoolAttribute, AxisAttribute)",
        "renumbered enumerations; one attribute table per operator",
        "mapped",
        "the graph is rebuilt with Arm's serializer by enumeration *name*, never number",
    ),
    Difference(
        "all",
        "profiles BI / MI (+ extensions)",
        "profiles PRO-INT / PRO-FP (+ extensions)",
        "mapped",
        "the model takes no claim: every operator and type is implemented, so the "
        "vector's requirements are only reported; the level is passed (8K -> EIGHTK, "
        "none -> NONE)",
    ),
    Difference(
        "all",
        "shape_t values are tensors of type SHAPE in the block's tensor list",
        "shape values are TosaShape entries in a separate list of the block",
        "mapped",
        "SHAPE tensors are declared as shapes of rank = their length",
    ),
    Difference(
        "all",
        "a constant is a tensor holding data (no producing operator needed)",
        "a constant is the output of a CONST / CONST_SHAPE operator",
        "mapped",
        "each tensor with data and no producer gets a CONST (CONST_SHAPE) operator",
    ),
    Difference(
        "all",
        "shape_t values of any tensor shape (a mistyped SHAPE tensor of rank 0 or 2 in a "
        "must-fail vector)",
        "a shape value is a list: it has a length, never a tensor shape",
        "mapped, some vectors skipped",
        "a SHAPE tensor that is not rank 1 cannot be written; the vector is skipped",
    ),
    Difference(
        "all",
        "graph inputs/outputs of every type",
        "the in-process binding cannot pass INT4, INT48 or SHAPE tensors",
        "mapped",
        "INT4/INT48 graph inputs are embedded as constants; graphs with INT4, INT48 or "
        "SHAPE outputs run through the tosa_reference_model executable (.npy files)",
    ),
    Difference(
        "all",
        "graphs of several operators (control flow, the FULLY_CONNECTED rewrite)",
        "the 2026.8 binding crashes (SIGSEGV) when an ERROR_IF fails during evaluation "
        "and a graph output was left unevaluated",
        "mapped",
        "every graph with more than one operator (CONST aside) runs through the "
        "executable, which reports the ERROR status",
    ),
    Difference(
        _ZP_OPS,
        "zero points are int attributes (input_zp, weight_zp, output_zp, A_zp, B_zp, "
        "input1_zp); RESCALE's unsigned zero points are written as unsigned numbers",
        "zero points are rank-1 [1] input tensors of the zero-pointed tensor's type",
        "mapped, some vectors skipped",
        "each zero point becomes a CONST [1] tensor of in_t / weight_t / out_t holding "
        "the value's bits (unsigned 8/16-bit values wrap to the signed bit pattern); a "
        "zero point that does not fit the type at all (an ERROR_IF of ours on the "
        "attribute's declared type) cannot be written, and the vector is skipped",
    ),
    Difference(
        _NAN_OPS,
        "no nan_mode: apply_max_s/apply_min_s return NaN when either operand is NaN",
        "nan_mode attribute (PROPAGATE or IGNORE)",
        "mapped",
        "nan_mode = PROPAGATE, the behaviour of our revision",
    ),
    Difference(
        "CLAMP",
        "min_val/max_val attributes: int32 fields for integer types, raw bytes for "
        "floating-point types",
        "min_val/max_val as raw bytes of in_out_t for every type",
        "mapped, some vectors skipped",
        "the value's bytes in in_out_t; a bound not representable in in_out_t is skipped",
    ),
    Difference(
        "PAD",
        "pad_const attribute (int32 field or raw fp bytes)",
        "pad_const input tensor [1] of in_out_t",
        "mapped, some vectors skipped",
        "a CONST [1] tensor of in_out_t; a value not representable in in_out_t is skipped",
    ),
    Difference(
        "MUL",
        "shift: an i8 input tensor of rank 0",
        "shift: an INT8 input tensor of shape [1]",
        "mapped, some vectors skipped",
        "a rank-0 shift tensor is declared with shape [1] (its one value unchanged); a "
        "must-fail vector whose shift has shape [1] is the later revision's valid form, "
        "so it is skipped",
    ),
    Difference(
        "RESCALE",
        "double_round: bool",
        "rounding_mode: SINGLE_ROUND / INEXACT_ROUND / DOUBLE_ROUND",
        "mapped",
        "double_round = true -> DOUBLE_ROUND, false -> SINGLE_ROUND; multiplier and shift "
        "are input tensors in both revisions",
    ),
    Difference(
        "GATHER, SCATTER",
        "indices: size_t (a SHAPE-typed tensor)",
        "indices: INT32 tensor",
        "mapped, some vectors skipped",
        "indices are declared INT32 and their values converted; values beyond int32 "
        "cannot be written and the vector is skipped",
    ),
    Difference(
        "RESIZE",
        "mode NEAREST_NEIGHBOR / BILINEAR; scale, offset, border as shape inputs",
        "mode NEAREST / BILINEAR; scale, offset, border as shape inputs",
        "mapped",
        "NEAREST_NEIGHBOR -> NEAREST",
    ),
    Difference(
        "CONV2D, CONV3D, DEPTHWISE_CONV2D, TRANSPOSE_CONV2D, FFT2D, RFFT2D",
        "local_bound is optional",
        "local_bound is always present",
        "mapped",
        "an absent local_bound is written as false (its default)",
    ),
    Difference(
        "FULLY_CONNECTED",
        "FULLY_CONNECTED(input [N,IC], weight [OC,IC], bias [OC]) with input_zp/weight_zp",
        "no FULLY_CONNECTED operator",
        "mapped",
        "input [N,IC] and weight [OC,IC] become [N,1,1,IC] and [OC,1,1,IC] (constants "
        "reshaped in the graph: the model's RESHAPE has no INT4 form), CONV2D with a 1x1 "
        "kernel (pad 0, stride 1, dilation 1; acc_type INT32 for i8, INT48 for i16, FP32 "
        "for floating point, at least as precise as our modes allow) writes the output "
        "declared [N,1,1,OC], read back as [N,OC]",
    ),
    Difference(
        "COND_IF, WHILE_LOOP",
        "then_graph/else_graph/cond_graph/body_graph name blocks of the one graph",
        "the names are of regions, each holding one block",
        "mapped",
        "every block but the entry block is written as its own region of the same name",
    ),
    Difference(
        "DIV_SHAPE",
        "DIV_SHAPE: C division (truncates toward zero)",
        "DIV_FLOOR_SHAPE and DIV_CEIL_SHAPE",
        "mapped",
        "DIV_FLOOR_SHAPE (equal to truncation for the non-negative sizes shapes hold; "
        "the model also truncates negative quotients)",
    ),
    Difference(
        "CONST",
        "values attribute, checked against the output's shape and type (ERROR_IF)",
        "the values are the output tensor's contents",
        "mapped, some vectors skipped",
        "values become the output tensor's data; values of another shape than the "
        "output, or outside its type, cannot be written and the vector is skipped",
    ),
    Difference(
        "CONCAT",
        "inputs of rank 0 are concatenated into a vector (output rank max(1, rank))",
        "inputs and output must have the same rank",
        "mapped, some vectors skipped",
        "vectors with rank-0 inputs are skipped",
    ),
    Difference(
        "CONCAT_SHAPE",
        "an empty input list, or an empty shape among the inputs, is valid",
        "ERROR_IF(inputs.empty()); rank-0 (empty) shapes are not supported",
        "mapped, some vectors skipped",
        "vectors with no inputs or with an empty shape input are skipped",
    ),
    Difference(
        "RESHAPE",
        "input1 and output of rank >= 1 (ERROR_IF otherwise)",
        "rank-0 input and output are accepted",
        "mapped, some vectors skipped",
        "vectors with a rank-0 input1 or output are skipped",
    ),
    Difference(
        "COND_IF",
        "condition of rank >= 1 (ERROR_IF otherwise)",
        "a rank-0 condition is accepted",
        "mapped, some vectors skipped",
        "vectors with a rank-0 condition are skipped",
    ),
    Difference(
        "COND_IF, WHILE_LOOP",
        "ERROR_IF(tosa_nesting_depth >= MAX_NESTING) (erratum max_nesting-no-levellimit)",
        "no nesting check: the graph runs",
        "mapped, some vectors skipped",
        "graphs whose control flow runs at depth MAX_NESTING or deeper are skipped",
    ),
    Difference(
        "LOGICAL_LEFT_SHIFT, LOGICAL_RIGHT_SHIFT",
        "REQUIRE(0 <= shift <= 31) for i8, i16 and i32",
        "REQUIRE(0 <= shift <= bits - 1): 7 for INT8, 15 for INT16",
        "mapped, some vectors skipped",
        "valid vectors shifting 8/16-bit values by more than bits - 1 are skipped (the "
        "model calls them unpredictable)",
    ),
    Difference(
        "POW",
        "our reference computes every base (NaN for a negative base with a non-integral "
        "exponent, inf or 1 for a zero base)",
        "REQUIRE(x >= 0), REQUIRE(!(x == 0 && y <= 0)) and finite inputs",
        "mapped, some vectors skipped",
        "valid vectors with a negative base, a zero base and a non-positive exponent, or "
        "a non-finite input are skipped (the model calls them unpredictable)",
    ),
    Difference(
        "VARIABLE, VARIABLE_WRITE, VARIABLE_READ",
        "variables declared by VARIABLE with a uid, read and written by uid",
        "variable tensors; the 2026.8 model's operator factory cannot build any of the "
        "three operators",
        "skipped",
        "the model rejects every graph holding them, whatever their form",
    ),
    Difference(
        "CUSTOM",
        "CUSTOM with operator_name, domain_name, implementation_attrs",
        "CUSTOM needs a shared library registered with the model",
        "skipped",
        "what a custom operator computes is implementation-defined; nothing to compare",
    ),
)

SKIPPED_OPERATORS: OperatorTable[str] = OperatorTable(
    {
        "VARIABLE": "tosa-tools 2026.8 cannot run variable operators (its operator factory "
        "has no VARIABLE, VARIABLE_WRITE or VARIABLE_READ)",
        "VARIABLE_WRITE": "tosa-tools 2026.8 cannot run variable operators (its operator "
        "factory has no VARIABLE, VARIABLE_WRITE or VARIABLE_READ)",
        "VARIABLE_READ": "tosa-tools 2026.8 cannot run variable operators (its operator "
        "factory has no VARIABLE, VARIABLE_WRITE or VARIABLE_READ)",
        "CUSTOM": UNTESTABLE,
    }
)


def operators_named(diff: Difference) -> list[str]:
    """The operator names a difference lists ([] for 'all')."""
    if diff.operators == "all":
        return []
    return [name.strip() for name in diff.operators.split(",")]


# -- TOSA 1.1 draft graphs, which the model reads as they are -------------------------
#
# What tosa-tools 2026.8's model does not implement of the 1.1 draft, measured by running
# a 1.1 pack of every operator (`generate --tosa 1.1-draft --examples 1`): it runs every
# operator we can write, i64 everywhere, and the MX types in the *_BLOCK_SCALED
# operators, but not all of the 1.1 draft's mixed-precision convolutions (its operator
# factory answers "Unsupported operation type or rank"), and it returns fp4 / fp6
# outputs only through .npy files whose last dimension is a multiple of 32.

_FLOATS = ("bf16", "fp16", "fp32", "fp8e4m3", "fp8e5m2")
_HALF = ("fp16", "fp8e4m3", "fp8e5m2")  # the types with an fp16 form of CONV2D
_INTEGER_CONVS = (
    ("i8", "i8", "i32", "i32"),
    ("i8", "i4", "i32", "i32"),
    ("i16", "i8", "i48", "i48"),
)
# The type combinations of TOSA 1.0's convolutions, and their fp32-accumulated fp8 forms.
_SAME_TYPE_CONVS = (
    *_INTEGER_CONVS,
    ("bf16", "bf16", "fp32", "bf16"),
    ("fp16", "fp16", "fp32", "fp16"),
    ("fp32", "fp32", "fp32", "fp32"),
    ("fp8e4m3", "fp8e4m3", "fp32", "fp32"),
    ("fp8e5m2", "fp8e5m2", "fp32", "fp32"),
    *((t, t, "fp16", "fp16") for t in _HALF),
)

# (in_t, weight_t, acc_t, out_t) the 2026.8 model has a kernel for, per convolution.
# CONV2D mixes any two floating-point types into fp32 (and the fp16-sized ones into
# fp16 with an fp32 accumulator); CONV3D and TRANSPOSE_CONV2D mix none; no convolution
# accumulates in bf16.  DEPTHWISE_CONV2D implements every 1.1 mode.
IMPLEMENTED_CONVOLUTIONS: OperatorTable[frozenset[tuple[str, str, str, str]]] = OperatorTable(
    {
        "CONV2D": frozenset(
            {
                *_SAME_TYPE_CONVS,
                *((a, b, "fp32", "fp32") for a in _FLOATS for b in _FLOATS),
                *((a, b, "fp32", "fp16") for a in _HALF for b in _HALF),
            }
        ),
        "CONV3D": frozenset(_SAME_TYPE_CONVS),
        "TRANSPOSE_CONV2D": frozenset(_SAME_TYPE_CONVS),
    }
)

# The operators whose block-scaled modes (bs32_*: one tensor of values and scales) the
# 2026.8 model has a kernel for: its generator makes such tests of CONCAT and RESHAPE
# only, and its operator factory answers "Unsupported operation type or rank" for
# REVERSE, SLICE, TILE, TRANSPOSE, IDENTITY, CONST and DIM of them (fp8 REVERSE aborts
# on an assertion instead), measured on a 1.1 pack of those operators' modes.
BLOCK_SCALED_KERNELS = family(frozenset({"CONCAT", "RESHAPE"}))
# It aborts (std::invalid_argument, no graph status) on loading a block-scaled tensor
# that does not hold whole blocks of 32: rank 0, or an innermost dimension of another
# size, which the operators' ERROR_IFs make a must-fail graph.
WHOLE_BLOCKS = 32

# Element types the model returns only through its .npy files, packed, and only with a
# last dimension that is a multiple of 32 (its numpy writer aborts on a rank-0 tensor
# and truncates other shapes).
_PACKED_OUTPUTS = frozenset({"fp4e2m1", "fp6e2m3", "fp6e3m2"})


def _convolution_types(graph: Graph, op: Operator, block: Block) -> tuple[str, ...] | None:
    """(in_t, weight_t, acc_t, out_t) of a convolution, as its tensors and acc_type say."""
    names = [*op.inputs[:2], *op.outputs[:1]]
    tensors = [block.tensors.get(n) for n in names]
    acc = op.attributes.get("acc_type")
    if len(names) != 3 or any(t is None for t in tensors) or not isinstance(acc, str):
        return None
    in_t, weight_t, out_t = (t.dtype.name for t in tensors if t is not None)
    acc_t = acc.lower().replace("int", "i")  # acc_type_t INT32 -> i32, FP16 -> fp16
    return (in_t, weight_t, acc_t, out_t)


@functools.cache
def _spec_modes(op: str) -> frozenset[tuple[str, ...]]:
    """The (in_t, weight_t, acc_t, out_t) of the 1.1 draft's modes of a convolution."""
    from conformance.spec import load_revision  # the 1.1 draft's own tosa.xml

    spec = load_revision("1.1-draft").operators.get(op)
    if spec is None:
        return frozenset()
    keys = ("in_t", "weight_t", "acc_t", "out_t")
    return frozenset(
        tuple(m.bindings[k].removesuffix("_t") for k in keys)
        for m in spec.modes
        if all(k in m.bindings for k in keys)
    )


def skipped_1_1(graph: Graph) -> str | None:
    """Why Arm's model cannot run a 1.1 draft graph (a mode of an operator, or an output
    it cannot hand back), else None.  Only a type combination that is a mode of the 1.1
    draft's operator is skipped: a must-fail vector with types of no mode is the model's
    to reject."""
    for block in graph.blocks():
        for op in block.operators:
            composite = next(
                (
                    t
                    for n in [*op.inputs, *op.outputs]
                    if (t := block.tensors.get(n)) is not None and t.dtype.kind == "block"
                ),
                None,
            )
            if composite is not None and op.op not in BLOCK_SCALED_KERNELS:
                return (
                    f"tosa-tools 2026.8's model has no block-scaled {op.op} ({composite.dtype} "
                    f"tensor {composite.name!r}; its operator factory: Unsupported operation "
                    "type or rank)"
                )
        for t in block.tensors.values():
            if t.dtype.kind == "block" and (not t.shape or t.shape[-1] % WHOLE_BLOCKS):
                return (
                    f"tosa-tools 2026.8's model aborts (std::invalid_argument) on the "
                    f"block-scaled tensor {t.name!r} of shape {list(t.shape)}, which does not "
                    f"hold whole blocks of {WHOLE_BLOCKS}, instead of rejecting the graph"
                )
        for op in block.operators:
            implemented = IMPLEMENTED_CONVOLUTIONS.get(op.op)
            if implemented is None:
                continue
            types = _convolution_types(graph, op, block)
            if types is None or types in implemented or types not in _spec_modes(op.op):
                continue
            in_t, weight_t, acc_t, out_t = types
            return (
                f"tosa-tools 2026.8's model has no {op.op} of in_t={in_t}, weight_t={weight_t}, "
                f"acc_t={acc_t}, out_t={out_t} (a TOSA 1.1 mode; its operator factory: "
                "Unsupported operation type or rank)"
            )
    main = graph.main
    for name in main.outputs:
        t = main.tensors.get(name)
        if t is not None and t.dtype.name in _PACKED_OUTPUTS and (not t.shape or t.shape[-1] % 32):
            return (
                f"tosa-tools 2026.8's model returns {t.dtype} outputs only in .npy files whose "
                f"last dimension is a multiple of 32 (output {name!r} is {list(t.shape)}), and "
                "its binding returns none"
            )
    return None

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

from dataclasses import dataclass
from typing import Literal

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

SKIPPED_OPERATORS: dict[str, str] = {
    "VARIABLE": "tosa-tools 2026.8 cannot run variable operators (its operator factory "
    "has no VARIABLE, VARIABLE_WRITE or VARIABLE_READ)",
    "VARIABLE_WRITE": "tosa-tools 2026.8 cannot run variable operators (its operator "
    "factory has no VARIABLE, VARIABLE_WRITE or VARIABLE_READ)",
    "VARIABLE_READ": "tosa-tools 2026.8 cannot run variable operators (its operator "
    "factory has no VARIABLE, VARIABLE_WRITE or VARIABLE_READ)",
    "CUSTOM": "CUSTOM operators are implementation-defined; the reference model has no "
    "library for ours",
}


def operators_named(diff: Difference) -> list[str]:
    """The operator names a difference lists ([] for 'all')."""
    if diff.operators == "all":
        return []
    return [name.strip() for name in diff.operators.split(",")]

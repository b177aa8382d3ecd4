"""The TOSA 1.1 operators whose data arguments are block-scaled tensor lists:
RESHAPE_BLOCK_SCALED and ROW_GATHER_BLOCK_SCALED.

A list (``tensor_list_t`` with a ``tensor-element-scale-type``) holds one tensor, the
values (a mode whose ``scale_t`` is "-": Boolean, the integers, fp8, fp16, bf16,
fp32), or two: the values and their fp8ue8m0 scales, one per ``block_size`` values of
the innermost dimension (the modes "... with fp8ue8m0 scale factor").  The engine binds
the first member to ``in_out_t`` and the second to ``scale_t``, and a list of one only
to a mode whose ``scale_t`` is "-" (``conformance.builder.find_mode``).  Both operators
move values and scales without arithmetic, bit for bit.

RESHAPE_BLOCK_SCALED.tosac, in order: the list lengths (1 or 2, output as long as
input), block_size 1 exactly for a list of one, the value count kept; for a list of two,
no rank 0, the scales of the values' rank, both innermost dimensions multiples of the
block size, the input scales' innermost dimension the values' over the block size, and
the scale count kept.  Then each member is copied in row-major order into its new
shape: ``new_value_shape`` for the values, the same with the innermost dimension over
the block size for the scales.

ROW_GATHER_BLOCK_SCALED.tosac, in order: ``C % block_size``, the list length, block_size
against the length, ``row_count < 1``, and per index ``REQUIRE(0 <= k && (k+row_count)
<= K)``.  Index ``w`` of batch ``n`` copies rows ``k .. k + row_count - 1`` of the
values, and the same rows of the scales, to rows ``w * row_count + r`` of the outputs.

Readings:

* The argument shapes the lists' descriptions give and the engine's argument check
  cannot evaluate (list members; ``C/block_size`` and ``W*row_count`` need the
  enumeration attribute and the row_count input) are checked here as the argument
  rules: the members' rank 3 (erratum ``row_gather_block_scaled-rank``) and ``N``
  against the indices before the pseudocode (tosa_execute_graph checks arguments
  first), the shapes that need ``block_size`` or ``row_count`` after its ERROR_IFs, as
  ROW_GATHER and MATMUL_T_BLOCK_SCALED do.
* RESHAPE_BLOCK_SCALED's output shapes are those the pseudocode writes
  (``new_value_shape``, ``new_scale_shape``): checked last, as the output rule.  The
  input scales' dimensions other than the innermost are not compared with the values':
  the pseudocode checks only their rank, innermost dimension and count, and copies by
  row-major offset whatever they are.
* An i64_t index near 2**63 is compared as ``k <= K - row_count`` (no int64 overflow),
  as in ROW_GATHER.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from reference.arguments import INPUTS_CLAUSE, OUTPUTS_CLAUSE
from reference.context import OpContext
from reference.ops.block_scaled import MATMUL_C_CLAUSE, block_size
from reference.ops.data_layout import tensor_size
from reference.ops.row_gather import ROW_COUNT_CLAUSE, gather_rows
from reference.registry import implements

Result = dict[str, np.ndarray | list[np.ndarray]]

# RESHAPE_BLOCK_SCALED's ERROR_IFs, as the pseudocode states them.
RESHAPE_LEN_CLAUSE = "input_len != 1 && input_len != 2"
RESHAPE_OUT_LEN_CLAUSE = "output_len != input_len"
RESHAPE_ONE_BLOCK_CLAUSE = "(input_len == 1) && (block_size != 1)"
RESHAPE_TWO_BLOCK_CLAUSE = "(input_len == 2) && (block_size == 1)"
RESHAPE_SIZE_CLAUSE = "tensor_size(value_shape1) != tensor_size(new_value_shape)"
RESHAPE_RANK0_CLAUSE = "rank(value_shape1) == 0 || rank(new_value_shape) == 0"
RESHAPE_SCALE_RANK_CLAUSE = "rank(value_shape1) != rank(scale_shape1)"
RESHAPE_IN_BLOCK_CLAUSE = "(value_shape1_last % block_size) != 0"
RESHAPE_NEW_BLOCK_CLAUSE = "(new_value_shape_last % block_size) != 0"
RESHAPE_SCALE_LAST_CLAUSE = "scale_shape1[-1] != (value_shape1_last / block_size)"
RESHAPE_SCALE_SIZE_CLAUSE = "tensor_size(scale_shape1) != tensor_size(new_scale_shape)"

# ROW_GATHER_BLOCK_SCALED's (row_count < 1 and the REQUIRE are ROW_GATHER's clauses;
# C's is worded as MATMUL_T_BLOCK_SCALED's).
GATHER_C_CLAUSE = MATMUL_C_CLAUSE
GATHER_LEN_CLAUSE = "values_len != 1 && values_len != 2"
GATHER_ONE_BLOCK_CLAUSE = "(values_len == 1) && (block_size != 1)"
GATHER_TWO_BLOCK_CLAUSE = "(values_len == 2) && (block_size == 1)"


def _check_block_size(
    ctx: OpContext, length: int, bs: int, one_clause: str, two_clause: str
) -> None:
    """block_size 1 exactly for a list of values alone."""
    ctx.error_if(length == 1 and bs != 1, one_clause, f"values alone, block_size={bs}")
    ctx.error_if(length == 2 and bs == 1, two_clause, "values and scales, block_size=1")


def new_scale_shape(new_value_shape: Sequence[int], bs: int) -> tuple[int, ...]:
    """The scales' shape after the reshape: ``new_value_shape`` with its innermost
    dimension divided by the block size (apply_intdiv_s: checked a multiple)."""
    *lead, last = (int(d) for d in new_value_shape)
    return (*lead, last // bs)


@implements("RESHAPE_BLOCK_SCALED")
def reshape_block_scaled(ctx: OpContext) -> Result:
    members = ctx.arg_list("input")
    shapes_in = [t.shape for t in ctx.input_tensors("input")]
    shapes_out = [t.shape for t in ctx.output_tensors("output")]
    input_len, output_len = len(shapes_in), len(shapes_out)
    bs = block_size(ctx)
    ctx.error_if(input_len not in (1, 2), RESHAPE_LEN_CLAUSE, f"input holds {input_len} tensors")
    ctx.error_if(
        output_len != input_len,
        RESHAPE_OUT_LEN_CLAUSE,
        f"input holds {input_len} tensors, output {output_len}",
    )
    _check_block_size(ctx, input_len, bs, RESHAPE_ONE_BLOCK_CLAUSE, RESHAPE_TWO_BLOCK_CLAUSE)
    value_shape1 = shapes_in[0]
    new_shape = tuple(int(d) for d in np.asarray(ctx.arg("new_value_shape")).reshape(-1))
    size1 = tensor_size(ctx, value_shape1, "value_shape1")
    size = tensor_size(ctx, new_shape, "new_value_shape")
    ctx.error_if(
        size1 != size,
        RESHAPE_SIZE_CLAUSE,
        f"{list(value_shape1)} has {size1} values, {list(new_shape)} has {size}",
    )
    wanted = [new_shape]
    if input_len == 2:
        scale_shape1 = shapes_in[1]
        ctx.error_if(
            len(value_shape1) == 0 or len(new_shape) == 0,
            RESHAPE_RANK0_CLAUSE,
            f"value_shape1 {list(value_shape1)}, new_value_shape {list(new_shape)}",
        )
        ctx.error_if(
            len(value_shape1) != len(scale_shape1),
            RESHAPE_SCALE_RANK_CLAUSE,
            f"value_shape1 {list(value_shape1)}, scale_shape1 {list(scale_shape1)}",
        )
        ctx.error_if(
            value_shape1[-1] % bs != 0,
            RESHAPE_IN_BLOCK_CLAUSE,
            f"value_shape1 {list(value_shape1)}, block_size={bs}",
        )
        ctx.error_if(
            new_shape[-1] % bs != 0,
            RESHAPE_NEW_BLOCK_CLAUSE,
            f"new_value_shape {list(new_shape)}, block_size={bs}",
        )
        ctx.error_if(
            scale_shape1[-1] != value_shape1[-1] // bs,
            RESHAPE_SCALE_LAST_CLAUSE,
            f"scale_shape1 {list(scale_shape1)}, value_shape1 {list(value_shape1)}, "
            f"block_size={bs}",
        )
        scales_new = new_scale_shape(new_shape, bs)
        ctx.error_if(
            math.prod(scale_shape1) != math.prod(scales_new),
            RESHAPE_SCALE_SIZE_CLAUSE,
            f"{list(scale_shape1)} has {math.prod(scale_shape1)} scales, "
            f"{list(scales_new)} has {math.prod(scales_new)}",
        )
        wanted.append(scales_new)
    for i, (got, want) in enumerate(zip(shapes_out, wanted, strict=True)):
        ctx.error_if(
            got != want,
            OUTPUTS_CLAUSE,
            f"output[{i}] has shape {list(got)}, the reshape writes {list(want)}",
        )
    # Row-major offsets on both sides: numpy's C-order reshape is the same mapping.
    return {
        "output": [np.array(m.reshape(s), copy=True) for m, s in zip(members, wanted, strict=True)]
    }


def _member_ranks(ctx: OpContext, arg: str, shapes: Sequence[tuple[int, ...]]) -> None:
    clause = INPUTS_CLAUSE if arg == "values" else OUTPUTS_CLAUSE
    for i, shape in enumerate(shapes):
        ctx.error_if(len(shape) != 3, clause, f"{arg}[{i}] has rank {len(shape)}, declared 3")


@implements("ROW_GATHER_BLOCK_SCALED")
def row_gather_block_scaled(ctx: OpContext) -> Result:
    members = ctx.arg_list("values")
    shapes_in = [t.shape for t in ctx.input_tensors("values")]
    shapes_out = [t.shape for t in ctx.output_tensors("output")]
    # No values[0]: C cannot be read, the list's length is what is wrong.
    ctx.error_if(not shapes_in, GATHER_LEN_CLAUSE, "values holds 0 tensors")
    _member_ranks(ctx, "values", shapes_in)
    n_batches, k_range, channels = shapes_in[0]
    n_indices, width = ctx.input_tensor("indices").shape
    ctx.error_if(
        n_indices != n_batches,
        INPUTS_CLAUSE,
        f"indices [N,W] has N={n_indices}, values[0] [N,K,C] has N={n_batches}",
    )
    _member_ranks(ctx, "output", shapes_out)
    bs = block_size(ctx)
    ctx.error_if(channels % bs != 0, GATHER_C_CLAUSE, f"C={channels}, block_size={bs}")
    values_len = len(shapes_in)
    ctx.error_if(values_len not in (1, 2), GATHER_LEN_CLAUSE, f"values holds {values_len} tensors")
    _check_block_size(ctx, values_len, bs, GATHER_ONE_BLOCK_CLAUSE, GATHER_TWO_BLOCK_CLAUSE)
    row_count = int(ctx.attr("row_count"))
    ctx.error_if(row_count < 1, ROW_COUNT_CLAUSE, f"row_count {row_count}")
    blocks = channels // bs
    if values_len == 2:
        want = (n_batches, k_range, blocks)
        ctx.error_if(
            shapes_in[1] != want,
            INPUTS_CLAUSE,
            f"values[1] has shape {list(shapes_in[1])}, [N,K,C/block_size] is {list(want)}",
        )
    wanted = [(n_batches, width * row_count, channels), (n_batches, width * row_count, blocks)]
    ctx.error_if(
        len(shapes_out) != values_len,
        OUTPUTS_CLAUSE,
        f"values holds {values_len} tensors, output {len(shapes_out)}",
    )
    for i, got in enumerate(shapes_out):
        ctx.error_if(
            got != wanted[i],
            OUTPUTS_CLAUSE,
            f"output[{i}] has shape {list(got)}, declared {list(wanted[i])} "
            f"(W {width}, row_count {row_count}, block_size {bs})",
        )
    # A block's scale sits on its values' row: the scales take the same rows.
    return {"output": gather_rows(ctx, members, k_range, row_count)}

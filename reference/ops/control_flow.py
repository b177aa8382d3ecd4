"""Control flow: COND_IF and WHILE_LOOP.

Both take blocks of the graph as attributes and run them through the engine one
nesting level deeper (``ctx.run_block``).  ``ctx.depth`` is the spec's
``tosa_nesting_depth`` while the operator runs: the entry block is depth 0 (the
compliance test starts the count at 0), an operator in a block that a control-flow
operator of the entry block runs is at depth 1, and so on.  The nesting ERROR_IF
therefore fires for a control-flow operator that itself sits at depth MAX_NESTING or
deeper, i.e. MAX_NESTING nested COND_IF/WHILE_LOOP operators are allowed and one more
is an error (erratum max_nesting-no-levellimit: an ERROR_IF, not a LEVEL_CHECK).

The list checks compare a tensor list with a block's declared inputs or outputs:
the number of tensors, each shape and each element type (a tensor of another type
cannot be passed into a block, even though ``tensor_list_shape`` only names shapes).
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Sequence

import numpy as np

from conformance.dtypes import BOOL
from conformance.graph import Block, Tensor
from reference.arguments import ATTRIBUTES_CLAUSE
from reference.context import OpContext
from reference.engine import EvaluationError
from reference.registry import implements

# ERROR_IF clauses as the pseudocode states them (recipes and breakers import them).
CONDITION_SIZE_CLAUSE = "tensor_size(shape) != 1"
COND_GRAPH_SIZE_CLAUSE = "tensor_size(tosa_output_shape(cond_graph)) != 1"
COND_GRAPH_TYPE_CLAUSE = "tosa_output_type(cond_graph) != bool_t"
# The list-shape ERROR_IFs: COND_IF's lists against each branch graph's own ...
THEN_INPUT_CLAUSE = "tensor_list_shape(input_list) != tosa_input_shape(then_graph)"
ELSE_INPUT_CLAUSE = "tensor_list_shape(input_list) != tosa_input_shape(else_graph)"
THEN_OUTPUT_CLAUSE = "tensor_list_shape(output_list) != tosa_output_shape(then_graph)"
ELSE_OUTPUT_CLAUSE = "tensor_list_shape(output_list) != tosa_output_shape(else_graph)"
# ... and WHILE_LOOP's input_list against its output_list (the pseudocode spells the
# right-hand side tosa_list_shape(output_list)) and its graphs'.
LOOP_LIST_CLAUSE = "tensor_list_shape(input_list) != tensor_list_shape(output_list)"
COND_INPUT_CLAUSE = "tensor_list_shape(input_list) != tosa_input_shape(cond_graph)"
BODY_INPUT_CLAUSE = "tensor_list_shape(input_list) != tosa_input_shape(body_graph)"
BODY_OUTPUT_CLAUSE = "tensor_list_shape(input_list) != tosa_output_shape(body_graph)"

Result = dict[str, np.ndarray | list[np.ndarray]]

NESTING_CLAUSE = "tosa_nesting_depth >= MAX_NESTING"

# A WHILE_LOOP whose condition never turns false has no result, and the reference
# cannot tell that apart from a long loop; it gives up after this many iterations or
# this much time, whichever comes first, with an EvaluationError (a failure of the
# evaluator, never a spec outcome).  Both are far beyond any generated test.
MAX_ITERATIONS = 1 << 20
TIME_BUDGET_SECONDS = 120.0


def graph_block(ctx: OpContext, attr: str) -> Block:
    """The block a ``tosa_graph_t`` attribute names.

    The operator's checks need the block's declared tensors before it runs.  OpContext
    has no public accessor for other blocks yet, so this uses ``ctx.graph_block`` when
    the engine provides it and otherwise reads the graph from the evaluator that the
    context's block runner belongs to.
    """
    name = ctx.attr(attr)
    lookup = getattr(ctx, "graph_block", None)
    if lookup is None:
        runner = ctx._run_block  # the engine's closure; holds the Evaluator as `self`
        evaluator = inspect.getclosurevars(runner).nonlocals.get("self") if runner else None
        graph = getattr(evaluator, "graph", None)
        if graph is None:
            raise EvaluationError(f"{ctx.name}: this context cannot reach the graph's blocks")
        lookup = graph.block
    try:
        block: Block = lookup(name)
        return block
    except KeyError:
        pass
    ctx.error_if(True, ATTRIBUTES_CLAUSE, f"{attr} names block {name!r}, which does not exist")
    raise AssertionError("error_if(True) raises")


def _describe(t: Tensor) -> str:
    return f"{t.name!r} {t.dtype}{list(t.shape)}"


def list_mismatch(have: Sequence[Tensor], want: Sequence[Tensor]) -> str:
    """How two tensor lists differ in count, shape or element type ('' if they agree)."""
    if len(have) != len(want):
        return f"{len(have)} tensors against {len(want)}"
    for k, (a, b) in enumerate(zip(have, want, strict=True)):
        if a.shape != b.shape or a.dtype is not b.dtype:
            return f"tensor {k}: {_describe(a)} against {_describe(b)}"
    return ""


def check_list(
    ctx: OpContext, have: Sequence[Tensor], want: Sequence[Tensor], clause: str, what: str
) -> None:
    problem = list_mismatch(have, want)
    ctx.error_if(bool(problem), clause, f"{what}: {problem}")


def block_inputs(block: Block) -> list[Tensor]:
    return [block.tensors[n] for n in block.inputs]


def block_outputs(block: Block) -> list[Tensor]:
    return [block.tensors[n] for n in block.outputs]


def check_nesting(ctx: OpContext) -> None:
    limit = ctx.level["MAX_NESTING"]
    ctx.error_if(
        ctx.depth >= limit,
        NESTING_CLAUSE,
        f"operator at nesting depth {ctx.depth}, level {ctx.level.name} allows {limit}",
    )


@implements("COND_IF")
def cond_if(ctx: OpContext) -> Result:
    check_nesting(ctx)
    then_block = graph_block(ctx, "then_graph")
    else_block = graph_block(ctx, "else_graph")
    inputs = ctx.input_tensors("input_list")
    outputs = ctx.output_tensors("output_list")
    branches = (
        (then_block, THEN_INPUT_CLAUSE, THEN_OUTPUT_CLAUSE),
        (else_block, ELSE_INPUT_CLAUSE, ELSE_OUTPUT_CLAUSE),
    )
    for block, clause, _ in branches:
        check_list(
            ctx,
            inputs,
            block_inputs(block),
            clause,
            f"input_list against the inputs of {block.name!r}",
        )
    for block, _, clause in branches:
        check_list(
            ctx,
            outputs,
            block_outputs(block),
            clause,
            f"output_list against the outputs of {block.name!r}",
        )
    shape = ctx.input_tensor("condition").shape
    size = int(np.prod(shape, dtype=np.int64))
    ctx.error_if(size != 1, CONDITION_SIZE_CLAUSE, f"condition has shape {list(shape)}")

    taken = then_block if bool(ctx.arg("condition").reshape(-1)[0]) else else_block
    return {"output_list": ctx.run_block(taken.name, ctx.arg_list("input_list"))}


@implements("WHILE_LOOP")
def while_loop(ctx: OpContext) -> Result:
    check_nesting(ctx)
    cond_block = graph_block(ctx, "cond_graph")
    body_block = graph_block(ctx, "body_graph")
    inputs = ctx.input_tensors("input_list")
    check_list(
        ctx,
        inputs,
        ctx.output_tensors("output_list"),
        LOOP_LIST_CLAUSE,
        "input_list against output_list",
    )
    check_list(
        ctx,
        inputs,
        block_inputs(cond_block),
        COND_INPUT_CLAUSE,
        f"input_list against the inputs of {cond_block.name!r}",
    )
    check_list(
        ctx,
        inputs,
        block_inputs(body_block),
        BODY_INPUT_CLAUSE,
        f"input_list against the inputs of {body_block.name!r}",
    )
    check_list(
        ctx,
        inputs,
        block_outputs(body_block),
        BODY_OUTPUT_CLAUSE,
        f"input_list against the outputs of {body_block.name!r}",
    )
    # The condition graph yields one tensor: a list of several has no single size.
    cond_out = block_outputs(cond_block)
    ctx.error_if(
        len(cond_out) != 1 or cond_out[0].size != 1,
        COND_GRAPH_SIZE_CLAUSE,
        f"{cond_block.name!r} outputs {', '.join(_describe(t) for t in cond_out) or 'nothing'}",
    )
    ctx.error_if(
        cond_out[0].dtype is not BOOL,
        COND_GRAPH_TYPE_CLAUSE,
        f"{cond_block.name!r} outputs {_describe(cond_out[0])}",
    )

    values = ctx.arg_list("input_list")
    start = time.monotonic()
    iterations = 0
    while bool(ctx.run_block(cond_block.name, values)[0].reshape(-1)[0]):
        if iterations >= MAX_ITERATIONS or time.monotonic() - start > TIME_BUDGET_SECONDS:
            raise EvaluationError(
                f"WHILE_LOOP (operator {ctx.index}) still running after {iterations} "
                f"iterations / {time.monotonic() - start:.0f} s (caps: {MAX_ITERATIONS} "
                f"iterations, {TIME_BUDGET_SECONDS:.0f} s); the reference gives up on a loop "
                "that may not terminate"
            )
        values = ctx.run_block(body_block.name, values)
        iterations += 1
    return {"output_list": list(values)}

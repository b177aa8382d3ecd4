"""Mutants of the control-flow operators (reference/ops/control_flow.py): COND_IF and
WHILE_LOOP."""

from __future__ import annotations

import numpy as np

from conformance.backends.mutants import Result, mutant, with_inputs, with_values
from conformance.graph import Block
from reference.context import OpContext
from reference.ops.control_flow import MAX_ITERATIONS, graph_block
from reference.registry import OpFunction


@mutant(
    "while-loop-do-while",
    ["WHILE_LOOP"],
    "a condition that is false on entry",
    "the loop is lowered as do-while (body first, condition after, as a bottom-tested "
    "loop without its guard): the body runs once even when the initial condition is "
    "false",
    "WHILE_LOOP vectors whose condition is false for the input list (zero iterations)",
    breaks="WHILE_LOOP.tosac: tosa_execute_graph(cond_graph, list[i], [ condition[i] ]) "
    "before the first body (initial condition)",
)
def _do_while(original: OpFunction, ctx: OpContext) -> Result:
    result = original(ctx)  # its ERROR_IFs, and the loop as it should run
    names = ctx.operands.inputs["input_list"]
    first = ctx.run_block(str(ctx.attr("body_graph")), ctx.arg_list("input_list"))
    return original(with_values(ctx, dict(zip(names, first, strict=True)))) if first else result


_BRANCHES = "mutant:cond-if-first-branch-cached"


@mutant(
    "cond-if-first-branch-cached",
    ["COND_IF"],
    "a COND_IF run more than once in one execution (in a WHILE_LOOP body) whose condition changes",
    "the branch a COND_IF takes the first time it runs is specialised into the code and "
    "reused every later time in the execution (a trace-compiled loop body): the "
    "condition is only read once",
    "WHILE_LOOP vectors whose body holds a COND_IF whose condition differs between iterations",
    breaks="COND_IF.tosac: if (condition[0]) at every execution of the operator",
)
def _first_branch_cached(original: OpFunction, ctx: OpContext) -> Result:
    taken: dict[tuple[str, int], bool] = ctx.state.setdefault(_BRANCHES, {})
    key = (ctx.block.name, ctx.index)
    condition = bool(np.asarray(ctx.arg("condition")).reshape(-1)[0])
    first = taken.setdefault(key, condition)
    if first == condition:
        return original(ctx)
    original(ctx)  # its ERROR_IFs (shapes, nesting) on this execution
    return original(with_inputs(ctx, condition=np.full_like(ctx.arg("condition"), first)))


def _aliased_outputs(body: Block) -> dict[int, int]:
    """Body output position -> the earlier body input position it passes through
    unchanged (the body's output tensor is its input tensor k, with k < j)."""
    position = {name: k for k, name in enumerate(body.inputs)}
    return {
        j: position[name]
        for j, name in enumerate(body.outputs)
        if name in position and position[name] < j
    }


@mutant(
    "while-loop-carried-in-place",
    ["WHILE_LOOP"],
    "a body that passes input k through unchanged to output j > k (a permuted carry, "
    "e.g. (a, b) -> (a + b, a))",
    "the loop-carried buffers are updated in place, one after the other: an output that "
    "is a pass-through of an earlier input reads that input's buffer after it was "
    "already overwritten with this iteration's value (missing copy insertion)",
    "WHILE_LOOP vectors whose body permutes its carried tensors (a swap or rotation, as "
    "in a Fibonacci loop)",
    breaks="WHILE_LOOP.tosac: tosa_execute_graph(body_graph, list[i], list[i+1]): the next "
    "list is a new list, every output computed from list[i]",
)
def _carried_in_place(original: OpFunction, ctx: OpContext) -> Result:
    body = graph_block(ctx, "body_graph")
    aliased = _aliased_outputs(body)
    if not aliased:
        return original(ctx)
    result = original(ctx)  # its ERROR_IFs, and the loop as it should run
    cond = str(ctx.attr("cond_graph"))
    values = list(ctx.arg_list("input_list"))
    for _ in range(MAX_ITERATIONS):
        if not bool(np.asarray(ctx.run_block(cond, values)[0]).reshape(-1)[0]):
            return {"output_list": values}
        new = ctx.run_block(body.name, values)
        for j, v in enumerate(new):  # in place, in list order
            values[j] = values[aliased[j]] if j in aliased else v
    return result  # the reference gave up too (EvaluationError) before this


@mutant(
    "condition-rank-above-1-rejected",
    ["COND_IF", "WHILE_LOOP"],
    "a one-element condition of rank 2 or more (COND_IF's condition, WHILE_LOOP's cond_graph "
    "output)",
    "the lowering extracts the predicate with one index (tensor.extract %c[0], as a "
    "scalar-or-vector pattern does) and refuses any other condition shape, so a [1, 1] "
    "condition fails to compile",
    "COND_IF / WHILE_LOOP vectors whose condition has rank 2 to MAX_RANK (obligation "
    "condition:rank=R)",
    effect="rejects valid graph",
    breaks="COND_IF.tosac: ERROR_IF(tensor_size(shape) != 1) only (any rank); WHILE_LOOP.tosac: "
    "ERROR_IF(tensor_size(tosa_output_shape(cond_graph)) != 1)",
)
def _condition_rank_above_1(original: OpFunction, ctx: OpContext) -> Result:
    if ctx.operator.op == "COND_IF":
        rank = ctx.input_tensor("condition").rank
    else:
        cond = graph_block(ctx, "cond_graph")
        rank = cond.tensors[cond.outputs[0]].rank if cond.outputs else 0
    ctx.error_if(rank > 1, "backend support: a condition of rank <= 1", f"rank {rank}")
    return original(ctx)

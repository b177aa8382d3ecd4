"""Shared recipe pieces derived from the spec model's argument shapes."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from strategies.case import CaseSpec, TensorDraw
from strategies.recipes import RecipeContext
from strategies.shapes import broadcast_shapes, shapes
from strategies.values import ValueRange


def elementwise(
    draw: st.DrawFn,
    rc: RecipeContext,
    *,
    ranges: dict[str, ValueRange] | None = None,
    attributes: dict[str, Any] | None = None,
    rank_cap: int | None = None,
) -> CaseSpec:
    """A case for an operator whose tensors are all shaped by named shapes: the
    output's shape is drawn, inputs with the same shape name share it, inputs with
    another name (shape1, shape2, ...) are drawn broadcast-compatible, scalar inputs
    ('-') are rank 0."""
    ranges = ranges or {}
    out_args = rc.op_spec.outputs
    lo, hi = rc.rank_range(out_args[0].name, rank_cap)
    out_shape = draw(shapes(lo, hi, rc.budget, label="output shape"))
    out_name = out_args[0].shape.name
    # Inputs named by another shape (shape1, shape2, ...) broadcast to the output.
    other = sorted(
        {a.shape.name for a in rc.op_spec.inputs if a.shape.kind == "named"} - {out_name},
        key=str,
    )
    # A "broadcast:ARG" target makes that input the one that broadcasts.
    aim = rc.target.removeprefix("broadcast:") if rc.target else None
    names = [a.name for a in rc.op_spec.inputs if a.shape.kind == "named"]
    shape_of = {a.name: a.shape.name for a in rc.op_spec.inputs}
    broadcaster = other.index(shape_of[aim]) if aim in names and shape_of[aim] in other else None
    drawn = (
        draw(broadcast_shapes(out_shape, len(other), label="inputs", broadcaster=broadcaster))
        if other
        else []
    )
    by_name = dict(zip(other, drawn, strict=True))
    inputs: list[TensorDraw] = []
    for arg in rc.op_spec.inputs:
        if arg.shape.kind == "scalar":
            shape: tuple[int, ...] = ()
        elif arg.shape.kind == "named" and arg.shape.name == out_name:
            shape = out_shape
        elif arg.shape.kind == "named":
            shape = by_name[arg.shape.name]
        else:
            raise ValueError(f"{rc.name}: argument {arg.name} is not element-wise shaped")
        inputs.append(
            rc.tensor(draw, arg.name, rc.arg_dtype(arg.name), shape, ranges.get(arg.name))
        )
    outputs = [TensorDraw(a.name, out_shape, rc.arg_dtype(a.name)) for a in out_args]
    return rc.spec_of(inputs, outputs, attributes=dict(attributes or {}))

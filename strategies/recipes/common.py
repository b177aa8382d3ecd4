"""Recipe pieces that several recipe modules share: the element-wise case derived from
the spec model's argument shapes, the attributes a job may aim at ("attr:NAME=VALUE"
targets), and operands that meet each other's values."""

from __future__ import annotations

from typing import Any

import numpy as np
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
    if rc.target == "large" and len(other) > 1:
        # The large budget is the output's (conformance.generate_jobs.job_budget): one input
        # that size, the others 1 along its longest axis.
        full = draw(st.integers(0, len(other) - 1), label="large: the full-size input")
        axis = int(np.argmax(out_shape))
        small = tuple(1 if i == axis else d for i, d in enumerate(out_shape))
        drawn = [out_shape if k == full else small for k in range(len(other))]
    elif other:
        drawn = draw(
            broadcast_shapes(out_shape, len(other), label="inputs", broadcaster=broadcaster)
        )
    else:
        drawn = []
    by_name = dict(zip(other, drawn, strict=True))
    inputs: list[TensorDraw] = []
    for arg in rc.op_spec.inputs:
        if attributes and arg.name in attributes:
            continue  # drawn by the recipe; CaseSpec.in_revision makes it an input
        if arg.shape.kind == "scalar":
            shape: tuple[int, ...] = ()
        elif arg.shape.kind == "dims" and arg.shape.text.replace(" ", "") == "[1]":
            shape = (1,)  # a one-element input (TOSA 1.0's MUL shift)
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


# -- targeted attributes ------------------------------------------------------------


def aimed(rc: RecipeContext, name: str) -> str | None:
    """VALUE when the job aims at attribute ``name`` taking it ("attr:NAME=VALUE")."""
    if rc.target and rc.target.startswith("attr:"):
        key, _, value = rc.target.removeprefix("attr:").partition("=")
        if key == name:
            return value
    return None


def drawn_bool(draw: st.DrawFn, rc: RecipeContext, name: str, *, allowed: bool = True) -> bool:
    """A boolean attribute: the targeted value where the job aims at it, else drawn;
    always false where the case cannot have it true (``allowed``)."""
    if not allowed:
        return False
    value = aimed(rc, name)
    if value in ("true", "false"):
        return value == "true"
    return draw(st.booleans(), label=name)


def zero_point(draw: st.DrawFn, rc: RecipeContext, name: str, lo: int, hi: int) -> int:
    """A zero point in [lo, hi]: the targeted class ("zero", "nonzero", "min", "max")
    where the job aims at it, else an end, 0, or any value (non-zero most often)."""
    value = aimed(rc, name)
    if value == "min":
        return lo
    if value == "max":
        return hi
    if value == "zero" and lo <= 0 <= hi:
        return 0
    nonzero = st.integers(lo, hi).filter(lambda v: v != 0)
    if value == "nonzero" and (lo, hi) != (0, 0):
        return draw(nonzero, label=name)
    return draw(st.one_of(st.sampled_from([lo, 0, hi]), nonzero, nonzero), label=name)


# -- operands that meet --------------------------------------------------------------


def project(values: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Values laid out at the output shape, read back at the positions an operand of
    ``shape`` (broadcast to the output) holds: the first index along its size-1 axes."""
    index = tuple(
        slice(None) if d == full else slice(0, 1)
        for d, full in zip(shape, values.shape, strict=True)
    )
    return values[index]


def share_values(draw: st.DrawFn, spec: CaseSpec, src: int, dst: int) -> None:
    """Copy some of input ``src``'s values into input ``dst`` where they meet, so that
    ties (equal operands, -0 against +0, equal infinities) occur, not just by luck."""
    if not draw(st.booleans(), label="operands share values"):
        return
    a, b = spec.inputs[src], spec.inputs[dst]
    assert a.values is not None and b.values is not None
    out_shape = spec.outputs[0].shape
    seen = project(np.broadcast_to(a.values, out_shape), b.shape)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="shared positions"))
    mask = rng.random(b.shape) < 0.5
    b.values = np.where(mask, seen, b.values).astype(b.values.dtype)

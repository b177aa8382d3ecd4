"""Recipes and breakers for the shape operators: ADD_SHAPE, CONCAT_SHAPE,
CONST_SHAPE, DIM, DIV_SHAPE, MUL_SHAPE, SUB_SHAPE.

shape_t values are int64 vectors.  Their inputs are constant shape tensors (in real
graphs the outputs of CONST_SHAPE or DIM).  The values mix realistic sizes with the
whole int64 range: the arithmetic REQUIREs its result in range (and DIV_SHAPE a
non-zero divisor), so the second operand of each element is drawn from the range
that keeps the first one's result valid rather than shrinking both.
"""

from __future__ import annotations

from hypothesis import strategies as st

from conformance import dtypes
from reference.arguments import ATTRIBUTES_CLAUSE, INPUTS_CLAUSE, OUTPUTS_CLAUSE
from reference.ops.shape import CONCAT_LENGTH_CLAUSE, DIM_AXIS_CLAUSE, LENGTH_CLAUSE
from strategies.case import CaseSpec, TensorDraw, shape_tensor
from strategies.invalid import TYPE_CLAUSE, Breaker, breaks, broken, retype_breaker, scalar_breaker
from strategies.recipes import RecipeContext, recipe
from strategies.shapes import shapes

MIN = dtypes.SHAPE.int_range.min
MAX = dtypes.SHAPE.int_range.max
ARITHMETIC = ("ADD_SHAPE", "SUB_SHAPE", "MUL_SHAPE", "DIV_SHAPE")
CONCAT_SHAPE_MAX_LIST = 4
SPECIALS = sorted({MIN, MIN + 1, -1, 0, 1, 2, MAX - 1, MAX, 1 << 31, (1 << 31) - 1})


def _in(lo: int, hi: int) -> st.SearchStrategy[int]:
    """An int64 in [lo, hi]: usually a size-like one, sometimes anywhere or an end."""
    lo, hi = max(lo, MIN), min(hi, MAX)  # e.g. MUL_SHAPE by -1: MIN // -1 is above MAX
    options = [st.integers(lo, hi), st.sampled_from(sorted({lo, hi}))]
    small_lo, small_hi = max(lo, -4), min(hi, 64)
    if small_lo <= small_hi:
        options.insert(0, st.integers(small_lo, small_hi))
    return st.one_of(options)


def _element() -> st.SearchStrategy[int]:
    return st.one_of(st.integers(0, 64), st.sampled_from(SPECIALS), st.integers(MIN, MAX))


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


def _partner(op: str, a: int) -> st.SearchStrategy[int]:
    """Second operands b for which ``a op b`` keeps its REQUIREs."""
    if op == "ADD_SHAPE":
        return _in(max(MIN, MIN - a), min(MAX, MAX - a))
    if op == "SUB_SHAPE":
        return _in(max(MIN, a - MAX), min(MAX, a - MIN))
    if op == "MUL_SHAPE":
        if a == 0:
            return _in(MIN, MAX)
        if a > 0:
            return _in(_ceil_div(MIN, a), MAX // a)
        return _in(_ceil_div(MAX, a), MIN // a)
    # DIV_SHAPE: b != 0, and MIN / -1 is the one quotient out of range.
    forbidden = {0, -1} if a == MIN else {0}
    return _in(MIN, MAX).map(lambda b: 1 if b in forbidden else b)


def _length(draw: st.DrawFn, rc: RecipeContext, label: str) -> int:
    # Shape vectors describe tensors of rank 0..MAX_RANK.
    return draw(st.integers(0, rc.level["MAX_RANK"]), label=label)


@recipe(*ARITHMETIC)
def shape_arithmetic(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    n = _length(draw, rc, "length")
    a = [draw(_element(), label=f"input1[{i}]") for i in range(n)]
    b = [draw(_partner(rc.name, x), label=f"input2[{i}]") for i, x in enumerate(a)]
    inputs = [shape_tensor("input1", a), shape_tensor("input2", b)]
    return rc.spec_of(inputs, [TensorDraw("output", (n,), dtypes.SHAPE)])


@recipe("CONCAT_SHAPE")
def concat_shape(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    # An empty list is valid too (it makes the shape of a rank-0 tensor).
    count = draw(st.integers(0, CONCAT_SHAPE_MAX_LIST), label="list size")
    inputs = []
    for k in range(count):
        n = _length(draw, rc, f"input {k} length")
        inputs.append(
            shape_tensor(f"input1_{k}", [draw(_element(), label=f"{k}[{i}]") for i in range(n)])
        )
    total = sum(t.shape[0] for t in inputs)
    return rc.spec_of(inputs, [TensorDraw("output", (total,), dtypes.SHAPE)])


@recipe("CONST_SHAPE")
def const_shape(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    n = _length(draw, rc, "length")
    values = tuple(draw(_element(), label=f"values[{i}]") for i in range(n))
    return rc.spec_of([], [TensorDraw("output", (n,), dtypes.SHAPE)], attributes={"values": values})


@recipe("DIM")
def dim(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    lo, hi = rc.rank_range("input1")
    shape = draw(shapes(lo, hi, rc.budget, label="input shape"))
    axis = draw(st.integers(0, len(shape) - 1), label="axis")
    inputs = [rc.tensor(draw, "input1", rc.dtype("in_t"), shape)]
    out = [TensorDraw("output", (1,), dtypes.SHAPE)]
    return rc.spec_of(inputs, out, attributes={"axis": axis})


# -- breakers -----------------------------------------------------------------------


@breaks(*ARITHMETIC, clause=LENGTH_CLAUSE)
def operand_lengths(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    out = broken(spec, LENGTH_CLAUSE)
    name = draw(st.sampled_from(["input1", "input2"]), label="changed operand")
    values = [int(v) for v in spec.tensor(name).values]  # type: ignore[union-attr]
    shorter = bool(values) and draw(st.booleans(), label="shorter")
    out.set_shape_input(name, values[:-1] if shorter else [*values, 1])
    if name == "input1":  # the output follows input1, so only the lengths disagree
        out.replace_tensor("output", shape=out.tensor("input1").shape)
    return out


CONCAT_LENGTH = CONCAT_LENGTH_CLAUSE


@breaks("CONCAT_SHAPE", clause=CONCAT_LENGTH)
def concat_shape_length(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    out = broken(spec, CONCAT_LENGTH)
    (n,) = spec.outputs[0].shape
    delta = draw(st.sampled_from([1, -1] if n > 0 else [1]), label="off by")
    out.replace_tensor("output", shape=(n + delta,))
    return out


def _shape_retypes(names: list[str]) -> Breaker:
    # The generic type breaker leaves shape tensors alone; a shape_t argument holding
    # an integer tensor binds no mode.
    return retype_breaker([(n, dt) for n in names for dt in (dtypes.I32, dtypes.I8)])


breaks(*ARITHMETIC, clause=TYPE_CLAUSE)(_shape_retypes(["input1", "input2", "output"]))
breaks("CONST_SHAPE", clause=TYPE_CLAUSE)(_shape_retypes(["output"]))


breaks("CONCAT_SHAPE", clause=TYPE_CLAUSE)(
    _shape_retypes(["output", *(f"input1_{k}" for k in range(CONCAT_SHAPE_MAX_LIST))])
)


# DIM accepts every usual type as in_t: i4, i48 or a shape input binds no mode, nor
# does an output that is not a shape.
breaks("DIM", clause=TYPE_CLAUSE)(
    retype_breaker([("input1", dtypes.I4), ("input1", dtypes.I48), ("output", dtypes.I32)])
)


@breaks("DIM", clause=DIM_AXIS_CLAUSE)
def dim_axis(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    out = broken(spec, DIM_AXIS_CLAUSE)
    rank = len(spec.inputs[0].shape)
    out.attributes["axis"] = draw(st.integers(rank, 2**31 - 1), label="axis")
    return out


@breaks("DIM", clause=ATTRIBUTES_CLAUSE)
def dim_negative_axis(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """The pseudocode bounds axis only above; the attribute is declared in 0..rank-1."""
    out = broken(spec, ATTRIBUTES_CLAUSE)
    out.attributes["axis"] = draw(st.integers(-(2**31), -1), label="axis")
    return out


@breaks("DIM", clause=OUTPUTS_CLAUSE)
def dim_output(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """The output is declared a shape of one value."""
    out = broken(spec, OUTPUTS_CLAUSE)
    shape = draw(st.sampled_from([(), (2,), (1, 1), (0,)]), label="output shape")
    out.replace_tensor("output", shape=shape)
    return out


breaks("DIM", clause=INPUTS_CLAUSE)(scalar_breaker("input1", INPUTS_CLAUSE))

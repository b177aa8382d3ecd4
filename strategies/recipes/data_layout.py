"""Recipes and breakers for the data layout operators: CONCAT, PAD, RESHAPE, REVERSE,
SLICE, TILE, TRANSPOSE.

They move elements without computing on them, so every value (NaN, -0.0, integer
extremes) stays valid; what the recipes draw with care is the shape arithmetic.  The
shape arguments (padding, shape, start, size, multiples) are constant shape tensors.

The block-scaled modes of TOSA 1.1 (``bs32_*``, all operators but PAD) draw whole
blocks: every innermost dimension (and CONCAT's pieces along it, SLICE's window on it)
a multiple of the block size, and TRANSPOSE keeps the innermost axis last; values and
scales come from :mod:`strategies.block_tensors`.  Their breakers break those rules
one at a time.

The breakers edit cases with :class:`~strategies.case.CaseSpec`'s methods and take
the factories other groups share too (``scalar_breaker``, ``retype_breaker``) from
``strategies/invalid.py``; ``output_rank_breaker`` and the helpers here are this
module's own.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
from hypothesis import strategies as st

from conformance import dtypes
from conformance.block_tensor import is_block_scaled
from conformance.dtypes import DType
from reference.arguments import ATTRIBUTES_CLAUSE, INPUTS_CLAUSE, OUTPUTS_CLAUSE, TYPES_CLAUSE
from reference.ops.data_layout import (
    BLOCK_RANK1_CLAUSE,
    BLOCK_RANK_CLAUSE,
    BLOCK_SHAPE1_CLAUSE,
    BLOCK_SHAPE_CLAUSE,
    CONCAT_AXIS_CLAUSE,
    CONCAT_BLOCK_INPUT_CLAUSE,
    CONCAT_CLAUSES,
    CONCAT_CLAUSES_1_0,
    PAD_RANK_CLAUSE,
    PAD_SHAPE_CLAUSE,
    PADDING_NEGATIVE_CLAUSE,
    PERMS_NEGATIVE_CLAUSE,
    PERMS_RANGE_CLAUSE,
    PERMS_REPEATED_CLAUSE,
    RANK_CLAUSE,
    REVERSE_AXIS_CLAUSE,
    SIZE_CLAUSE,
    SLICE_BLOCK_START_CLAUSE,
    SLICE_END_CLAUSE,
    SLICE_LENGTH_CLAUSE,
    SLICE_SHAPE_CLAUSE,
    SLICE_SIZE_CLAUSE,
    SLICE_START_CLAUSE,
    TILE_SHAPE_CLAUSE,
    TRANSPOSE_BLOCK_PERMS_CLAUSE,
    TRANSPOSE_SHAPE_CLAUSE,
    ConcatClauses,
    concat_clauses,
)
from reference.ops.shape import DIM_BLOCK_SIZE_CLAUSE
from strategies.block_tensors import blocked_shapes
from strategies.case import CaseSpec, TensorDraw, shape_tensor
from strategies.invalid import (
    Breaker,
    bad_axis,
    breaks,
    broken,
    other_rank,
    retype_breaker,
    scalar_breaker,
)
from strategies.recipes import RecipeContext, recipe
from strategies.shapes import Budget, shapes

# -- helpers -------------------------------------------------------------------------


def block_of(rc: RecipeContext, var: str = "in_out_t") -> int:
    """The block size of the mode's type, 0 when it is not block-scaled."""
    dt = rc.dtype(var)
    return dt.block_size if is_block_scaled(dt) else 0


def drawn_shape(
    draw: st.DrawFn, rc: RecipeContext, lo: int, hi: int, budget: Budget, label: str
) -> tuple[int, ...]:
    """A shape for the mode: whole blocks innermost for a block-scaled type."""
    bs = block_of(rc, "out_t" if "out_t" in rc.mode.bindings else "in_out_t")
    if bs:
        return draw(blocked_shapes(lo, hi, budget, bs, label=label))
    return draw(shapes(lo, hi, budget, label=label))


def _block_scaled(rc: RecipeContext) -> bool:
    return block_of(rc) > 0


def _off_block(draw: st.DrawFn, d: int, bs: int, label: str) -> int:
    """``d`` (a multiple of ``bs``) moved off the block grid, staying >= 1."""
    delta = draw(st.integers(1, bs - 1), label=label)
    return d - delta if d > delta else d + delta


def _innermost(shape: tuple[int, ...], d: int) -> tuple[int, ...]:
    return (*shape[:-1], d)


def element_attribute(draw: st.DrawFn, rc: RecipeContext, dt: DType, label: str) -> Any:
    """A scalar attribute typed like ``dt`` (pad_const): a value the type holds
    exactly, special values included."""
    # Drawn as a one-element tensor: rank-0 draws do not always get special values.
    v = rc.values(draw, dt, (1,), label=label)[0]
    if dt.kind == "bool":
        return bool(v)
    if dt.is_int:
        return int(v)
    return float(v.astype(np.float64))


# -- CONCAT -------------------------------------------------------------------------


def _concat_output_axis(spec: CaseSpec) -> None:
    """Make the output's axis dimension the sum the inputs give (shape_dim: a missing
    dimension counts 1), after a breaker changed an input, so the sum rule holds."""
    axis = int(spec.attributes["axis"])
    total = sum(t.shape[axis] if axis < len(t.shape) else 1 for t in spec.inputs)
    o = spec.outputs[0]
    spec.replace_tensor(
        o.name, shape=tuple(total if i == axis else d for i, d in enumerate(o.shape))
    )


@recipe("CONCAT")
def concat(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    count = draw(st.integers(1, min(5, rc.level["MAX_TENSOR_LIST_SIZE"])), label="list size")
    lo, hi = rc.rank_range("input1")
    # Each input gets its share of the budget, so the output fits it too.
    share = Budget(
        max(1, rc.budget.max_elements // count),
        rc.budget.max_dim,
        min_elements=max(1, rc.budget.min_elements // count),
        min_dim=rc.budget.min_dim,
    )
    base = drawn_shape(draw, rc, lo, hi, share, "input shape")
    rank = len(base)
    # Rank-0 inputs concatenate into a vector along axis 0.
    axis = draw(st.integers(0, max(1, rank) - 1), label="axis")
    # A block-scaled input's innermost dimension holds whole blocks.
    unit = block_of(rc) if rank and axis == rank - 1 else 0
    inputs = []
    for k in range(count):
        shape = base
        if rank:
            # A large case keeps every input whole: its elements are the point.
            top = base[axis] // unit if unit else base[axis]
            low = top if rc.target == "large" else 1
            d = draw(st.integers(low, top), label=f"input {k} size along the axis")
            d *= unit or 1
            shape = tuple(d if i == axis else b for i, b in enumerate(base))
        inputs.append(rc.tensor(draw, f"input1_{k}", dt, shape))
    # A tensor listed twice (CONCAT(x, y, x)): a backend that places each input in its
    # slot of the output cannot place it twice.  A large case keeps its elements.
    if count > 1 and rc.target != "large" and draw(st.booleans(), label="an input repeated"):
        later = draw(st.integers(1, count - 1), label="repeated slot")
        inputs[later] = inputs[draw(st.integers(0, later - 1), label="tensor repeated")]
    total = sum(t.shape[axis] if rank else 1 for t in inputs)
    out_shape = tuple(total if i == axis else d for i, d in enumerate(base or (1,)))
    return rc.spec_of(inputs, [TensorDraw("output", out_shape, dt)], attributes={"axis": axis})


def _concat_words(field: str) -> Callable[[Breaker], Breaker]:
    """Register a CONCAT list-rule breaker once per wording of the rule (ConcatClauses):
    each applies to the revisions that word it so, and breaks it in their words."""

    def register(fn: Breaker) -> Breaker:
        # in a fixed order (a set's would follow the string hashes, which differ
        # between processes, and the breakers' order is the vectors' numbering)
        for words in dict.fromkeys([*CONCAT_CLAUSES.values(), CONCAT_CLAUSES_1_0]):
            breaks("CONCAT", clause=getattr(words, field), applies=_worded(words))(fn)
        return fn

    return register


def _worded(words: ConcatClauses) -> Callable[[RecipeContext], bool]:
    return lambda rc: concat_clauses(rc.spec.revision) is words


def _words(rc: RecipeContext) -> ConcatClauses:
    return concat_clauses(rc.spec.revision)


@_concat_words("empty")
def concat_empty(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    out = broken(spec, _words(rc).empty)
    out.inputs = []
    return out


@breaks("CONCAT", clause=TYPES_CLAUSE)
def concat_mixed_types(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """One list element of another type the operator supports (the list is not bound
    to in_out_t by type binding, the description requires it)."""
    dt = spec.outputs[0].dtype
    others = [m.dtype("in_out_t") for m in rc.op_spec.modes if m.dtype("in_out_t") is not dt]
    k = draw(st.integers(0, len(spec.inputs) - 1), label="retyped input")
    out = _distinct_inputs(broken(spec, TYPES_CLAUSE))
    out.retype_tensor(out.inputs[k].name, draw(st.sampled_from(others), label="its type"))
    return out


breaks("CONCAT", clause=TYPES_CLAUSE)(
    retype_breaker([("output", dtypes.I48), ("output", dtypes.I4), ("output", dtypes.SHAPE)])
)
breaks("CONCAT", clause=OUTPUTS_CLAUSE)(scalar_breaker("output", OUTPUTS_CLAUSE))


@breaks("CONCAT", clause=CONCAT_AXIS_CLAUSE)
def concat_axis(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    out = broken(spec, CONCAT_AXIS_CLAUSE)
    out.attributes["axis"] = bad_axis(draw, max(1, len(spec.inputs[0].shape)))
    return out


@_concat_words("axis_sum")
def concat_sum(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    out = broken(spec, _words(rc).axis_sum)
    o = out.outputs[0]
    axis = int(spec.attributes["axis"])
    # off by a whole block along a block-scaled innermost axis (its block rule is first)
    unit = block_of(rc) if block_of(rc) and axis == len(o.shape) - 1 else 1
    choices = [unit, -unit] if o.shape[axis] > unit else [unit]
    delta = draw(st.sampled_from(choices), label="off by")
    shape = tuple(d + delta if i == axis else d for i, d in enumerate(o.shape))
    out.replace_tensor(o.name, shape=shape)
    return out


def _distinct_inputs(out: CaseSpec) -> CaseSpec:
    """``out`` with a repeated list member replaced by a copy under a name of its own,
    so that a breaker editing one member by name edits that member only."""
    seen: set[str] = set()
    for k, t in enumerate(out.inputs):
        if t.name in seen:
            values = None if t.values is None else t.values.copy()
            out.inputs[k] = replace(t, name=f"{t.name}_again{k}", values=values)
        seen.add(out.inputs[k].name)
    return out


def _concat_second_input(out: CaseSpec) -> None:
    """The list rules compare inputs with input 0: make sure there is another."""
    if len(out.inputs) < 2:
        first = out.inputs[0]
        values = None if first.values is None else first.values.copy()
        out.inputs.append(replace(first, name=f"input1_{len(out.inputs)}", values=values))


@_concat_words("rank")
def concat_rank(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    out = _distinct_inputs(broken(spec, _words(rc).rank))
    _concat_second_input(out)
    k = draw(st.integers(1, len(out.inputs) - 1), label="input of another rank")
    t = out.inputs[k]
    out.reshape_tensor(t.name, other_rank(t.shape, rc.level["MAX_RANK"]))
    _concat_output_axis(out)
    return out


@_concat_words("dims")
def concat_dims(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    axis = int(spec.attributes["axis"])
    rank = len(spec.inputs[0].shape)
    if rank < 2:
        return None  # no dimension besides the axis
    out = _distinct_inputs(broken(spec, _words(rc).dims))
    _concat_second_input(out)
    k = draw(st.integers(1, len(out.inputs) - 1), label="input of another shape")
    j = draw(st.sampled_from([i for i in range(rank) if i != axis]), label="dimension")
    t = out.inputs[k]
    out.reshape_tensor(t.name, tuple(d + 1 if i == j else d for i, d in enumerate(t.shape)))
    _concat_output_axis(out)
    return out


@breaks("CONCAT", clause=BLOCK_SHAPE_CLAUSE, applies=_block_scaled)
def concat_output_blocks(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """The output's innermost dimension off the block grid (checked before the sum)."""
    out = broken(spec, BLOCK_SHAPE_CLAUSE)
    o = out.outputs[0]
    d = _off_block(draw, o.shape[-1], block_of(rc), "output off the block grid by")
    out.replace_tensor(o.name, shape=_innermost(o.shape, d))
    return out


@breaks("CONCAT", clause=CONCAT_BLOCK_INPUT_CLAUSE, applies=_block_scaled)
def concat_input_blocks(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """Input 0's innermost dimension off the block grid, the output's left whole: along
    the innermost axis another input takes what it loses, so the sum still holds."""
    out = _distinct_inputs(broken(spec, CONCAT_BLOCK_INPUT_CLAUSE))
    first = out.inputs[0]
    inner = first.shape[-1]
    d = _off_block(draw, inner, block_of(rc), "input 0 off the block grid by")
    if int(spec.attributes["axis"]) == len(first.shape) - 1:
        _concat_second_input(out)
        second = out.inputs[1]
        if second.name == first.name or second.shape[-1] + inner - d < 1:
            return None
        out.reshape_tensor(second.name, _innermost(second.shape, second.shape[-1] + inner - d))
    out.reshape_tensor(first.name, _innermost(first.shape, d))
    if int(spec.attributes["axis"]) == len(first.shape) - 1 and len(spec.inputs) < 2:
        _concat_output_axis(out)  # the second input was added
    return out


# -- DIM (its recipe: strategies/recipes/shape.py) -----------------------------------


@breaks("DIM", clause=DIM_BLOCK_SIZE_CLAUSE, applies=lambda rc: block_of(rc, "in_t") > 0)
def dim_off_block(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """A block-scaled input whose innermost dimension is off the block grid (its
    rank-0 rule is unreachable: the input is declared with rank >= 1)."""
    t = spec.inputs[0]
    d = _off_block(draw, t.shape[-1], block_of(rc, "in_t"), "off the block grid by")
    out = broken(spec, DIM_BLOCK_SIZE_CLAUSE)
    out.reshape_tensor(t.name, _innermost(t.shape, d))
    return out


# -- PAD ----------------------------------------------------------------------------


@recipe("PAD")
def pad(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    lo, hi = rc.rank_range("output")
    # The output is drawn within the budget and split into padding and input.
    out_shape = draw(shapes(lo, hi, rc.budget, label="output shape"))
    shape1: list[int] = []
    padding: list[int] = []
    for i, d in enumerate(out_shape):
        # A large case pads by a little, so the input keeps most of the output's size.
        low = max(1, d - 2) if rc.target == "large" else 1
        n = draw(st.integers(low, d), label=f"input dim {i}")
        before = draw(st.integers(0, d - n), label=f"padding before dim {i}")
        shape1.append(n)
        padding += [before, d - n - before]
    inputs = [
        rc.tensor(draw, "input1", dt, tuple(shape1)),
        shape_tensor("padding", padding),
    ]
    pad_const = element_attribute(draw, rc, dt, "pad_const")
    return rc.spec_of(
        inputs, [TensorDraw("output", out_shape, dt)], attributes={"pad_const": pad_const}
    )


@breaks("PAD", clause=INPUTS_CLAUSE)
def pad_padding_length(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """padding is [start, end] per input dimension: one value more or fewer."""
    out = broken(spec, INPUTS_CLAUSE)
    values = list(spec.tensor("padding").values)  # type: ignore[arg-type]
    values = values[:-1] if draw(st.booleans(), label="shorter") else [*values, 0]
    out.set_shape_input("padding", values)
    return out


breaks("PAD", clause=INPUTS_CLAUSE)(scalar_breaker("input1", INPUTS_CLAUSE))
breaks("PAD", clause=OUTPUTS_CLAUSE)(scalar_breaker("output", OUTPUTS_CLAUSE))


def output_rank_breaker(clause: str) -> Breaker:
    """A breaker giving the output another rank than the input's."""

    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
        out = broken(spec, clause)
        o = out.outputs[0]
        out.replace_tensor(o.name, shape=other_rank(o.shape, rc.level["MAX_RANK"]))
        return out

    return fn


# PAD states the rule one way round, the others the other way.
breaks("PAD", clause=PAD_RANK_CLAUSE)(output_rank_breaker(PAD_RANK_CLAUSE))
breaks("SLICE", "TILE", "TRANSPOSE", clause=RANK_CLAUSE)(output_rank_breaker(RANK_CLAUSE))


@breaks("PAD", clause=PADDING_NEGATIVE_CLAUSE)
def pad_negative(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    out = broken(spec, PADDING_NEGATIVE_CLAUSE)
    values = spec.tensor("padding").values.copy()  # type: ignore[union-attr]
    i = draw(st.integers(0, len(values) - 1), label="negative padding")
    values[i] = draw(st.integers(-(2**31), -1), label="its value")
    out.replace_tensor("padding", values=values)
    return out


@breaks("PAD", clause=PAD_SHAPE_CLAUSE)
def pad_output(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    return _dim_off_by_one(draw, spec, PAD_SHAPE_CLAUSE)


@breaks(
    "PAD",
    clause=ATTRIBUTES_CLAUSE,
    # Where pad_const is an attribute: TOSA 1.0's in_out_t input tensor holds no such value
    applies=lambda rc: (
        rc.dtype("in_out_t").is_int and not any(a.name == "pad_const" for a in rc.op_spec.inputs)
    ),
    # pad_const is an int32 field: an i32 value out of range cannot be written
    packable=lambda rc: rc.dtype("in_out_t").bits < 32,
)
def pad_const_range(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """pad_const is typed like the input: an integer it cannot hold (floats and
    booleans take any number, rounded or tested for zero)."""
    dt = spec.outputs[0].dtype
    out = broken(spec, ATTRIBUTES_CLAUSE)
    out.attributes["pad_const"] = draw(
        st.sampled_from([dt.int_range.max + 1, dt.int_range.min - 1]),
        label="pad_const out of range",
    )
    return out


def _dim_off_by_one(draw: st.DrawFn, spec: CaseSpec, clause: str) -> CaseSpec:
    """One output dimension made one larger (or smaller, where it stays >= 1)."""
    out = broken(spec, clause)
    o = out.outputs[0]
    i = draw(st.integers(0, len(o.shape) - 1), label="wrong output dimension")
    delta = draw(st.sampled_from([1, -1] if o.shape[i] > 1 else [1]), label="off by")
    out.replace_tensor(
        o.name, shape=tuple(d + delta if j == i else d for j, d in enumerate(o.shape))
    )
    return out


# -- RESHAPE ------------------------------------------------------------------------


def _prime_factors(n: int) -> list[int]:
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out + ([n] if n > 1 else [])


@recipe("RESHAPE")
def reshape(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    lo, hi = rc.rank_range("input1")
    shape1 = drawn_shape(draw, rc, lo, hi, rc.budget, "input shape")
    olo, ohi = rc.rank_range("output")
    # TOSA 1.0 allows rank 0, which holds one element only; a block-scaled tensor has
    # rank 1 at least.
    olo = olo if math.prod(shape1) == 1 else min(max(olo, 1), ohi)
    bs = block_of(rc)
    if bs:
        olo = max(olo, 1)
        ohi = max(ohi, olo)
    rank = draw(st.integers(olo, ohi), label="output rank")
    # The same element count factored another way: each prime factor goes to a drawn
    # dimension (dimensions left without one are 1).  Block-scaled: the blocks are
    # factored, and the innermost dimension keeps one block's elements per block.
    dims = [1] * rank
    for k, f in enumerate(_prime_factors(math.prod(shape1) // max(1, bs))):
        dims[draw(st.integers(0, rank - 1), label=f"factor {k}")] *= f
    if bs:
        dims[-1] *= bs
    out_shape = tuple(dims)
    inputs = [rc.tensor(draw, "input1", dt, shape1), shape_tensor("shape", out_shape)]
    return rc.spec_of(inputs, [TensorDraw("output", out_shape, dt)])


@breaks("RESHAPE", clause=OUTPUTS_CLAUSE)
def reshape_output(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """The output is declared with the shape input's values: declare another shape."""
    o = spec.outputs[0]
    out = _dim_off_by_one(draw, spec, OUTPUTS_CLAUSE)
    if draw(st.booleans(), label="another rank instead"):
        out.replace_tensor(o.name, shape=other_rank(o.shape, rc.level["MAX_RANK"]))
    return out


def _declared_rank_min(rc: RecipeContext, name: str) -> int:
    r = rc.op_spec.argument(name).rank_range(rc.level)
    return 0 if r is None else r[0]


# Where input1 is declared with rank >= 1 (the draft; TOSA 1.0 allows rank 0).
breaks("RESHAPE", clause=INPUTS_CLAUSE, applies=lambda rc: _declared_rank_min(rc, "input1") >= 1)(
    scalar_breaker("input1", INPUTS_CLAUSE)
)


@breaks("RESHAPE", clause=SIZE_CLAUSE)
def reshape_size(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """Another element count, the shape input and the output agreeing on it."""
    clause = SIZE_CLAUSE
    out = _dim_off_by_one(draw, spec, clause)
    out.set_shape_input("shape", out.outputs[0].shape)
    return out


@breaks("RESHAPE", clause=BLOCK_RANK1_CLAUSE, applies=_block_scaled)
def reshape_scalar_block(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """A rank-0 block-scaled input, reshaped to one element."""
    out = broken(spec, BLOCK_RANK1_CLAUSE)
    out.reshape_tensor("input1", ())
    out.replace_tensor("output", shape=(1,))
    out.set_shape_input("shape", (1,))
    return out


@breaks("RESHAPE", clause=BLOCK_RANK_CLAUSE, applies=_block_scaled)
def reshape_to_scalar_block(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """A block-scaled input of one element reshaped to rank 0 (the output's rank rule
    comes before the input's block rule)."""
    out = broken(spec, BLOCK_RANK_CLAUSE)
    out.reshape_tensor("input1", (1,))
    out.replace_tensor("output", shape=())
    out.set_shape_input("shape", ())
    return out


def _reshape_off_block(clause: str, name: str) -> Breaker:
    """The innermost dimension of ``name`` (input1 or output) off the block grid,
    the other dimension of that tensor changed so the element count is kept."""

    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
        t = spec.tensor(name)
        bs, size = block_of(rc), math.prod(t.shape)
        # the innermost dimension a divisor of the size that is no multiple of bs
        options = [d for d in range(1, min(size, 4 * bs) + 1) if size % d == 0 and d % bs]
        d = draw(st.sampled_from(options), label=f"{name} innermost dimension")
        shape = (size // d, d) if len(t.shape) >= 2 or size // d > 1 else (d,)
        out = broken(spec, clause)
        if name == "output":
            out.replace_tensor(name, shape=shape)
            out.set_shape_input("shape", shape)
        else:
            out.reshape_tensor(name, shape)
        return out

    fn.__name__ = f"reshape_{name}_off_block"
    return fn


breaks("RESHAPE", clause=BLOCK_SHAPE1_CLAUSE, applies=_block_scaled)(
    _reshape_off_block(BLOCK_SHAPE1_CLAUSE, "input1")
)
breaks("RESHAPE", clause=BLOCK_SHAPE_CLAUSE, applies=_block_scaled)(
    _reshape_off_block(BLOCK_SHAPE_CLAUSE, "output")
)


# -- REVERSE ------------------------------------------------------------------------


@recipe("REVERSE")
def reverse(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    name = rc.op_spec.inputs[0].name  # 'input' in the draft, 'input1' in TOSA 1.0
    lo, hi = rc.rank_range(name)
    shape = drawn_shape(draw, rc, lo, hi, rc.budget, "shape")
    axis = draw(st.integers(0, len(shape) - 1), label="axis")
    inputs = [rc.tensor(draw, name, dt, shape)]
    return rc.spec_of(inputs, [TensorDraw("output", shape, dt)], attributes={"axis": axis})


@breaks("REVERSE", clause=BLOCK_SHAPE_CLAUSE, applies=_block_scaled)
def reverse_off_block(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """The tensor's innermost dimension off the block grid (input and output alike)."""
    t = spec.inputs[0]
    d = _off_block(draw, t.shape[-1], block_of(rc), "off the block grid by")
    out = broken(spec, BLOCK_SHAPE_CLAUSE)
    out.reshape_tensor(t.name, _innermost(t.shape, d))
    out.replace_tensor("output", shape=_innermost(t.shape, d))
    return out


@breaks("REVERSE", clause=REVERSE_AXIS_CLAUSE)
def reverse_axis(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    out = broken(spec, REVERSE_AXIS_CLAUSE)
    out.attributes["axis"] = bad_axis(draw, len(spec.inputs[0].shape))
    return out


@breaks("REVERSE", clause=INPUTS_CLAUSE)
def scalar_input(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """The input made rank 0 (it is declared with rank >= 1), whatever its name."""
    return scalar_breaker(spec.inputs[0].name, INPUTS_CLAUSE)(draw, rc, spec)


# -- SLICE --------------------------------------------------------------------------


@recipe("SLICE")
def slice_(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    lo, hi = rc.rank_range("input1")
    shape1 = drawn_shape(draw, rc, lo, hi, rc.budget, "input shape")
    # A block-scaled window holds whole blocks of the innermost dimension.
    bs = block_of(rc)
    units = [bs if bs and i == len(shape1) - 1 else 1 for i in range(len(shape1))]
    size = [
        u * draw(st.integers(1, d // u), label=f"size {i}")
        for i, (d, u) in enumerate(zip(shape1, units, strict=True))
    ]
    start = [
        u * draw(st.integers(0, (d - n) // u), label=f"start {i}")
        for i, (d, n, u) in enumerate(zip(shape1, size, units, strict=True))
    ]
    inputs = [
        rc.tensor(draw, "input1", dt, shape1),
        shape_tensor("start", start),
        shape_tensor("size", size),
    ]
    return rc.spec_of(inputs, [TensorDraw("output", tuple(size), dt)])


SLICE_LENGTH = SLICE_LENGTH_CLAUSE


@breaks("SLICE", clause=SLICE_LENGTH)
def slice_length(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    out = broken(spec, SLICE_LENGTH)
    name = draw(st.sampled_from(["start", "size"]), label="longer or shorter vector")
    values = [int(v) for v in spec.tensor(name).values]  # type: ignore[union-attr]
    values = values[:-1] if draw(st.booleans(), label="shorter") else [*values, 1]
    out.set_shape_input(name, values)
    return out


def _slice_vector_breaker(clause: str) -> Breaker:
    """Change start or size at one index so that rule ``clause`` is the first to fail
    there (the earlier indices stay valid)."""

    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
        shape1 = spec.inputs[0].shape
        start = spec.tensor("start").values.copy()  # type: ignore[union-attr]
        size = spec.tensor("size").values.copy()  # type: ignore[union-attr]
        i = draw(st.integers(0, len(shape1) - 1), label="index")
        out = broken(spec, clause)
        if clause == SLICE_START_CLAUSE:
            start[i] = draw(st.integers(-(2**31), -1), label="start")
        elif clause == SLICE_SIZE_CLAUSE:
            size[i] = draw(st.integers(-(2**31), 0), label="size")
        else:  # the window ends past the input
            start[i] = shape1[i] - size[i] + draw(st.integers(1, 4), label="past the end by")
        out.replace_tensor("start", values=start)
        out.replace_tensor("size", values=size)
        return out

    return fn


SLICE_WINDOW = (SLICE_START_CLAUSE, SLICE_SIZE_CLAUSE, SLICE_END_CLAUSE)
for _clause in SLICE_WINDOW:
    breaks("SLICE", clause=_clause)(_slice_vector_breaker(_clause))


@breaks("SLICE", clause=SLICE_SHAPE_CLAUSE)
def slice_output(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    return _dim_off_by_one(draw, spec, SLICE_SHAPE_CLAUSE)


@breaks("SLICE", clause=BLOCK_SHAPE1_CLAUSE, applies=_block_scaled)
def slice_input_off_block(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """The input's innermost dimension a little longer, off the block grid (the
    window still fits in it)."""
    t = spec.inputs[0]
    bs = block_of(rc)
    d = t.shape[-1] + draw(st.integers(1, bs - 1), label="input longer by")
    out = broken(spec, BLOCK_SHAPE1_CLAUSE)
    out.reshape_tensor(t.name, _innermost(t.shape, d))
    return out


def _slice_window(spec: CaseSpec) -> tuple[list[int], list[int]]:
    start = [int(v) for v in spec.tensor("start").values]  # type: ignore[union-attr]
    size = [int(v) for v in spec.tensor("size").values]  # type: ignore[union-attr]
    return start, size


@breaks("SLICE", clause=BLOCK_SHAPE_CLAUSE, applies=_block_scaled)
def slice_window_off_block(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """A window (and output) of a length off the block grid, on a block boundary."""
    _, size = _slice_window(spec)
    size[-1] -= draw(st.integers(1, min(block_of(rc) - 1, size[-1] - 1)), label="shorter by")
    out = broken(spec, BLOCK_SHAPE_CLAUSE)
    out.set_shape_input("size", size)
    out.replace_tensor("output", shape=tuple(size))
    return out


@breaks("SLICE", clause=SLICE_BLOCK_START_CLAUSE, applies=_block_scaled)
def slice_start_off_block(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """A window of whole blocks that starts between two block boundaries: the input
    grows by a block so that it still fits."""
    start, _ = _slice_window(spec)
    bs = block_of(rc)
    start[-1] += draw(st.integers(1, bs - 1), label="start moved by")
    t = spec.inputs[0]
    out = broken(spec, SLICE_BLOCK_START_CLAUSE)
    out.reshape_tensor(t.name, _innermost(t.shape, t.shape[-1] + bs))
    out.set_shape_input("start", start)
    return out


breaks("SLICE", "TILE", "TRANSPOSE", clause=INPUTS_CLAUSE)(scalar_breaker("input1", INPUTS_CLAUSE))
breaks("SLICE", "TILE", "TRANSPOSE", clause=OUTPUTS_CLAUSE)(
    scalar_breaker("output", OUTPUTS_CLAUSE)
)


# -- TILE ---------------------------------------------------------------------------


@recipe("TILE")
def tile(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    lo, hi = rc.rank_range("input1")
    shape1 = drawn_shape(draw, rc, lo, hi, rc.budget, "input shape")
    total = math.prod(shape1)
    multiples = []
    for i, _ in enumerate(shape1):
        # Keep the output within the budget: a multiple above 1 only where room is left.
        m = draw(st.integers(1, max(1, min(8, rc.budget.max_elements // total))), label=f"m{i}")
        multiples.append(m)
        total *= m
    out_shape = tuple(d * m for d, m in zip(shape1, multiples, strict=True))
    inputs = [rc.tensor(draw, "input1", dt, shape1), shape_tensor("multiples", multiples)]
    return rc.spec_of(inputs, [TensorDraw("output", out_shape, dt)])


@breaks("TILE", clause=INPUTS_CLAUSE)
def tile_multiples_length(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """multiples is declared with shape [rank(shape1)]: one value more or fewer."""
    out = broken(spec, INPUTS_CLAUSE)
    values = [int(v) for v in spec.tensor("multiples").values]  # type: ignore[union-attr]
    values = values[:-1] if draw(st.booleans(), label="shorter") else [*values, 1]
    out.set_shape_input("multiples", values)
    return out


@breaks("TILE", clause=TILE_SHAPE_CLAUSE)
def tile_output(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    return _dim_off_by_one(draw, spec, TILE_SHAPE_CLAUSE)


@breaks("TILE", clause=BLOCK_SHAPE1_CLAUSE, applies=_block_scaled)
def tile_off_block(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """The input's innermost dimension off the block grid, the output tiling it."""
    t = spec.inputs[0]
    d = _off_block(draw, t.shape[-1], block_of(rc), "off the block grid by")
    multiples = [int(v) for v in spec.tensor("multiples").values]  # type: ignore[union-attr]
    out = broken(spec, BLOCK_SHAPE1_CLAUSE)
    out.reshape_tensor(t.name, _innermost(t.shape, d))
    o = out.outputs[0]
    out.replace_tensor(o.name, shape=_innermost(o.shape, d * multiples[-1]))
    return out


# -- TRANSPOSE ----------------------------------------------------------------------


@recipe("TRANSPOSE")
def transpose(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    lo, hi = rc.rank_range("input1")
    shape1 = drawn_shape(draw, rc, lo, hi, rc.budget, "input shape")
    # A block-scaled tensor's innermost axis stays innermost: its blocks stay whole.
    rank1 = len(shape1)
    moving = rank1 - 1 if _block_scaled(rc) else rank1
    perms = tuple(draw(st.permutations(range(moving)), label="perms")) + tuple(range(moving, rank1))
    out_shape = tuple(shape1[p] for p in perms)
    inputs = [rc.tensor(draw, "input1", dt, shape1)]
    return rc.spec_of(inputs, [TensorDraw("output", out_shape, dt)], attributes={"perms": perms})


@breaks("TRANSPOSE", clause=ATTRIBUTES_CLAUSE)
def transpose_perms_length(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """perms is declared with shape [rank(shape1)]: one value more or fewer."""
    perms = tuple(spec.attributes["perms"])
    out = broken(spec, ATTRIBUTES_CLAUSE)
    shorter = len(perms) > 1 and draw(st.booleans(), label="shorter")
    out.attributes["perms"] = perms[:-1] if shorter else (*perms, len(perms))
    return out


@breaks("TRANSPOSE", clause=SIZE_CLAUSE)
def transpose_size(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    return _dim_off_by_one(draw, spec, SIZE_CLAUSE)


def _perms_breaker(clause: str) -> Breaker:
    """Change one position of perms so that ``clause`` is the first rule to fail."""

    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
        perms = list(spec.attributes["perms"])
        rank = len(perms)
        if clause == PERMS_REPEATED_CLAUSE:
            if rank < 2:
                return None  # one position cannot repeat another
            j = draw(st.integers(1, rank - 1), label="repeating position")
            perms[j] = perms[draw(st.integers(0, j - 1), label="repeated position")]
        else:
            j = draw(st.integers(0, rank - 1), label="position")
            if clause == PERMS_NEGATIVE_CLAUSE:
                perms[j] = draw(st.integers(-(2**31), -1), label="value")
            else:
                perms[j] = draw(st.integers(rank, 2**31 - 1), label="value")
        out = broken(spec, clause)
        out.attributes["perms"] = tuple(perms)
        return out

    return fn


for _clause in (PERMS_RANGE_CLAUSE, PERMS_NEGATIVE_CLAUSE, PERMS_REPEATED_CLAUSE):
    breaks("TRANSPOSE", clause=_clause)(_perms_breaker(_clause))


@breaks("TRANSPOSE", clause=BLOCK_SHAPE1_CLAUSE, applies=_block_scaled)
def transpose_off_block(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """The input's innermost dimension off the block grid, the output permuted alike."""
    t = spec.inputs[0]
    d = _off_block(draw, t.shape[-1], block_of(rc), "off the block grid by")
    perms = tuple(spec.attributes["perms"])
    out = broken(spec, BLOCK_SHAPE1_CLAUSE)
    shape1 = _innermost(t.shape, d)
    out.reshape_tensor(t.name, shape1)
    out.replace_tensor(out.outputs[0].name, shape=tuple(shape1[p] for p in perms))
    return out


@breaks("TRANSPOSE", clause=TRANSPOSE_BLOCK_PERMS_CLAUSE, applies=_block_scaled)
def transpose_moves_blocks(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """perms that move the innermost axis (a rank-1 tensor has no other place for it)."""
    shape1 = spec.inputs[0].shape
    rank = len(shape1)
    if rank < 2:
        return None
    j = draw(st.integers(0, rank - 2), label="axis moved innermost")
    perms = list(range(rank))
    perms[j], perms[-1] = perms[-1], perms[j]
    out = broken(spec, TRANSPOSE_BLOCK_PERMS_CLAUSE)
    out.attributes["perms"] = tuple(perms)
    out.replace_tensor(out.outputs[0].name, shape=tuple(shape1[p] for p in perms))
    return out


@breaks("TRANSPOSE", clause=TRANSPOSE_SHAPE_CLAUSE)
def transpose_output(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """Swap two different output dimensions: same size, not the permuted shape."""
    o = spec.outputs[0]
    pairs = [
        (i, j)
        for i in range(len(o.shape))
        for j in range(i + 1, len(o.shape))
        if o.shape[i] != o.shape[j]
    ]
    if not pairs:
        return None  # every permutation of this shape is the same shape
    i, j = draw(st.sampled_from(pairs), label="swapped dimensions")
    shape = list(o.shape)
    shape[i], shape[j] = shape[j], shape[i]
    out = broken(spec, TRANSPOSE_SHAPE_CLAUSE)
    out.replace_tensor(o.name, shape=tuple(shape))
    return out

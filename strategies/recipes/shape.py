"""Recipes and breakers for the shape operators: ADD_SHAPE, CONCAT_SHAPE,
CONST_SHAPE, DIM, DIV_SHAPE, MUL_SHAPE, SUB_SHAPE (the 2024 draft), and TOSA 1.1's
EXT-SHAPE: those but DIV_SHAPE, with ASSERT_EQUAL_SHAPE, DIV_CEIL_SHAPE,
DIV_FLOOR_SHAPE, EXP2_SHAPE, LOG2_CEIL_SHAPE, LOG2_FLOOR_SHAPE, MAX_SHAPE, MIN_SHAPE,
MOD_SHAPE and SLICE_SHAPE.

shape_t values are int64 vectors.  Their inputs are constant shape tensors (in real
graphs the outputs of CONST_SHAPE or DIM).  The values mix realistic sizes with the
whole range of the element type: the arithmetic REQUIREs its result in range (and
DIV_SHAPE a non-zero divisor), so the second operand of each element is drawn from the
range that keeps the first one's result valid rather than shrinking both.

The draft's element type is size_t (int64) and its vectors are shapes of tensors, of
length 0..MAX_RANK.  TOSA 1.1's is tensor_size_t, whose range depends on the level
(reference.ops.shape.tensor_size_range: int32's at 8K), and a vector's length is
bounded by its ``length(x) <= MAX_SHAPE_LEN`` level limit; the 1.1 recipes reach both
ends of each, and keep to the REQUIREs of the 1.1 pseudocode (non-negative dividends,
positive divisors, EXP2_SHAPE's exponent below MAX_LOG2_SIZE, LOG2's positive inputs).
Their "edge" target places tensor_size_t's classes and the values that break real
implementations by construction (see "the edge target" below).
The draft's recipes and breakers are kept as they were, draw for draw.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import TypeVar

import numpy as np
from hypothesis import strategies as st

from conformance import dtypes
from conformance.dtypes import IntRange
from conformance.operator_table import family
from conformance.spec import Level
from reference.arguments import ATTRIBUTES_CLAUSE, INPUTS_CLAUSE, OUTPUTS_CLAUSE, TYPES_CLAUSE
from reference.ops.shape import (
    ASSERT_BROADCAST_CLAUSE,
    ASSERT_EQUAL_CLAUSE,
    CONCAT_EMPTY_INPUT_CLAUSE,
    CONCAT_LENGTH_CLAUSE,
    CONCAT_LENGTH_CLAUSE_1_1,
    CONCAT_NO_INPUT_CLAUSE,
    DIM_AXIS_CLAUSE,
    DIM_NEGATIVE_AXIS_CLAUSE,
    LENGTH_CLAUSE,
    SLICE_END_CLAUSE,
    SLICE_SIZE_CLAUSE,
    SLICE_START_CLAUSE,
    tensor_size_range,
)
from reference.pseudocode_revisions import draft_pseudocode
from strategies.block_tensors import blocked_shapes
from strategies.case import CaseSpec, TensorDraw, shape_tensor
from strategies.invalid import Breaker, breaks, broken, retype_breaker, scalar_breaker
from strategies.recipes import RecipeContext, recipe
from strategies.shapes import shapes

MIN = dtypes.SHAPE.int_range.min
MAX = dtypes.SHAPE.int_range.max
SIZE_T = IntRange(MIN, MAX)  # the draft's shape_t elements
ARITHMETIC = family(("ADD_SHAPE", "SUB_SHAPE", "MUL_SHAPE", "DIV_SHAPE"))
CONCAT_SHAPE_MAX_LIST = 4
SPECIALS = sorted({MIN, MIN + 1, -1, 0, 1, 2, MAX - 1, MAX, 1 << 31, (1 << 31) - 1})
# TOSA 1.1's element-wise shape operators of two operands (ADD_SHAPE, SUB_SHAPE and
# MUL_SHAPE are the draft's too), and those whose operands are sizes and divisors.
DIVIDING = family(("DIV_CEIL_SHAPE", "DIV_FLOOR_SHAPE", "MOD_SHAPE"))
BINARY_1_1 = family(("ADD_SHAPE", "SUB_SHAPE", "MUL_SHAPE", "MIN_SHAPE", "MAX_SHAPE", *DIVIDING))
NEW_BINARY = family(("MIN_SHAPE", "MAX_SHAPE", *DIVIDING))  # not in the draft
UNARY_1_1 = family(("EXP2_SHAPE", "LOG2_CEIL_SHAPE", "LOG2_FLOOR_SHAPE"))
I32 = IntRange(dtypes.I32.int_range.min, dtypes.I32.int_range.max)
T = TypeVar("T")


def _in(lo: int, hi: int, bounds: IntRange = SIZE_T) -> st.SearchStrategy[int]:
    """An element in [lo, hi]: usually a size-like one, sometimes anywhere or an end."""
    # e.g. MUL_SHAPE by -1: MIN // -1 is above MAX
    lo, hi = max(lo, bounds.min), min(hi, bounds.max)
    options = [st.integers(lo, hi), st.sampled_from(sorted({lo, hi}))]
    small_lo, small_hi = max(lo, -4), min(hi, 64)
    if small_lo <= small_hi:
        options.insert(0, st.integers(small_lo, small_hi))
    return st.one_of(options)


def _element() -> st.SearchStrategy[int]:
    return st.one_of(st.integers(0, 64), st.sampled_from(SPECIALS), st.integers(MIN, MAX))


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


def _partner(op: str, a: int, bounds: IntRange = SIZE_T) -> st.SearchStrategy[int]:
    """Second operands b for which ``a op b`` keeps its REQUIREs."""
    lo, hi = bounds
    if op == "ADD_SHAPE":
        return _in(max(lo, lo - a), min(hi, hi - a), bounds)
    if op == "SUB_SHAPE":
        return _in(max(lo, a - hi), min(hi, a - lo), bounds)
    if op == "MUL_SHAPE":
        if a == 0:
            return _in(lo, hi, bounds)
        if a > 0:
            return _in(_ceil_div(lo, a), hi // a, bounds)
        return _in(_ceil_div(hi, a), lo // a, bounds)
    # DIV_SHAPE: b != 0, and MIN / -1 is the one quotient out of range.
    forbidden = {0, -1} if a == MIN else {0}
    return _in(MIN, MAX).map(lambda b: 1 if b in forbidden else b)


def _draft(rc: RecipeContext) -> bool:
    return draft_pseudocode(rc.spec.revision)


def _length(draw: st.DrawFn, rc: RecipeContext, label: str) -> int:
    # Shape vectors describe tensors of rank 0..MAX_RANK.
    return draw(st.integers(0, rc.level["MAX_RANK"]), label=label)


@recipe(*ARITHMETIC)
def shape_arithmetic(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    if not _draft(rc):
        return binary_1_1(draw, rc)
    n = _length(draw, rc, "length")
    a = [draw(_element(), label=f"input1[{i}]") for i in range(n)]
    b = [draw(_partner(rc.name, x), label=f"input2[{i}]") for i, x in enumerate(a)]
    inputs = [shape_tensor("input1", a), shape_tensor("input2", b)]
    return rc.spec_of(inputs, [TensorDraw("output", (n,), dtypes.SHAPE)])


@recipe("CONCAT_SHAPE")
def concat_shape(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    if not _draft(rc):
        return concat_shape_1_1(draw, rc)
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
    in_t = rc.dtype("in_t")
    lo, hi = rc.rank_range("input1")
    if in_t.kind == "block":  # whole blocks innermost (strategies.block_tensors)
        shape = draw(blocked_shapes(lo, hi, rc.budget, in_t.block_size, label="input shape"))
    else:
        shape = draw(shapes(lo, hi, rc.budget, label="input shape"))
    axis = draw(st.integers(0, len(shape) - 1), label="axis")
    if in_t.kind == "fixed":  # mxint8: its int8 storage, any bits (DIM reads no value)
        seed = draw(st.integers(0, 2**32 - 1), label="input1 values")
        raw = np.random.default_rng(seed).integers(-128, 127, size=shape, endpoint=True)
        inputs = [TensorDraw("input1", shape, in_t, raw.astype(in_t.storage))]
    else:
        inputs = [rc.tensor(draw, "input1", in_t, shape)]
    out = [TensorDraw("output", (1,), dtypes.SHAPE)]
    return rc.spec_of(inputs, out, attributes={"axis": axis})


# -- TOSA 1.1 recipes ---------------------------------------------------------------


def _bounds(rc: RecipeContext) -> IntRange:
    return tensor_size_range(rc.level)


def _limit(rc: RecipeContext, value: str) -> int | None:
    """The level's maximum for the level limit ``value`` (``length(input1)``), None
    where the operator has none (the draft's)."""
    for _, lim in rc.op_spec.level_limits():
        if lim.text.replace(" ", "") == value:
            return rc.level[lim.limit]
    return None


def _max_length(rc: RecipeContext, arg: str) -> int:
    """How long shape value ``arg`` may be at the level: its MAX_SHAPE_LEN limit."""
    cap = _limit(rc, f"length({arg})")
    return rc.level["MAX_RANK"] if cap is None else cap


def _length_1_1(draw: st.DrawFn, rc: RecipeContext, lo: int, hi: int, label: str) -> int:
    """A length in [lo, hi]: often a tensor's rank (1 to 6), sometimes anything, or an
    end (an empty shape, MAX_SHAPE_LEN itself).  A level case (``force_max_rank``, see
    :func:`shape_length_case`) takes hi."""
    if rc.force_max_rank:
        return hi
    rank = st.integers(max(lo, 1), min(hi, 6))
    return draw(st.one_of(rank, rank, st.integers(lo, hi), st.sampled_from([lo, hi])), label=label)


def _specials(b: IntRange) -> list[int]:
    """tensor_size_t's ends, the int32 ends where the level holds them, and sizes."""
    wide = (-(1 << 31), (1 << 31) - 1, 1 << 31, 1 << 32)
    near = {b.min, b.min + 1, -1, 0, 1, 2, b.max - 1, b.max}
    return sorted(near | {v for v in wide if b.min <= v <= b.max})


def _near_power(lo: int, b: IntRange) -> st.SearchStrategy[int]:
    """A power of two or one of its neighbours (2**k - 1, 2**k + 1 ...), at least lo:
    LOG2's exact and inexact inputs, and the sizes an fp32 conversion rounds to one."""
    top = b.max.bit_length()
    pairs = st.tuples(st.integers(0, top), st.integers(-2, 2))
    return pairs.map(lambda kd: min(max((1 << kd[0]) + kd[1], lo), b.max))


@functools.cache  # strategies are built once: Hypothesis validates each new one
def _value(lo: int, b: IntRange) -> st.SearchStrategy[int]:
    """An element in [lo, tensor_size_t's maximum] (lo: its minimum, 0 or 1): a
    dimension-like size, an end of the range, anything, a size past fp32's exact
    integers or in the top half of the range (where a sum of two wraps), or a power of
    two's neighbourhood.  Drawn from several regimes, as Hypothesis' plain integers
    keep to small magnitudes."""
    options = [
        st.integers(max(lo, -4), 64),
        st.sampled_from([v for v in _specials(b) if v >= lo]),
        st.integers(lo, b.max),
        st.one_of(st.integers(b.max // 2, b.max), st.integers(1 << 24, b.max)),
        _near_power(lo, b),
    ]
    if lo < 0:  # the same magnitudes negative
        options.append(st.one_of(st.integers(b.min, -(1 << 24)), st.integers(b.min, b.min // 2)))
    return st.one_of(options)


def _element_1_1(b: IntRange) -> st.SearchStrategy[int]:
    """Any tensor_size_t of the level."""
    return _value(b.min, b)


@functools.cache
def _relative(b: IntRange, divisor: bool) -> st.SearchStrategy[tuple[str, int]]:
    """Second operands drawn in relation to the first, a: ("a", d) is a + d, ("v", v)
    is v.  Divisors (>= 1): 1, a itself or a + 1 (an exact quotient, one just below 1),
    small ones, or any size.  MIN/MAX partners: a itself (a tie), any value, or a small
    one of either sign."""

    def value(s: st.SearchStrategy[int]) -> st.SearchStrategy[tuple[str, int]]:
        return s.map(lambda v: ("v", v))

    if divisor:
        near = st.sampled_from([("v", 1), ("a", 0), ("a", 1)])
        return st.one_of(value(_value(1, b)), value(st.integers(1, 16)), near)
    return st.one_of(st.just(("a", 0)), value(_element_1_1(b)), value(st.integers(-64, 64)))


def _partner_1_1(draw: st.DrawFn, op: str, a: int, b: IntRange, label: str) -> int:
    """A second operand for ``a`` that keeps the operator's REQUIREs."""
    if op not in DIVIDING and op not in ("MIN_SHAPE", "MAX_SHAPE"):
        return int(draw(_partner(op, a, b), label=label))
    kind, v = draw(_relative(b, op in DIVIDING), label=label)
    if kind == "v":
        return v
    return min(max(a + v, 1 if op in DIVIDING else b.min), b.max)


def _an_end(draw: st.DrawFn, values: list[int], ends: list[int]) -> None:
    """In three cases of four, one element of ``values`` becomes an end of its range
    (the largest tensor_size_t or exponent): where sums wrap and conversions round."""
    if not values:
        return
    at_end: int = draw(st.integers(0, 3), label="an element at the end of its range")
    if at_end:
        i = draw(st.integers(0, len(values) - 1), label="its index")
        values[i] = draw(st.sampled_from(ends), label="the end")


def binary_1_1(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    """Two shape values of one length, each element pair within the REQUIREs."""
    bounds = _bounds(rc)
    if _edge(rc):
        pairs = _edge_part(draw, rc, edge_pairs(rc.name, bounds), _max_length(rc, "input1"))
        a, b = [x for x, _ in pairs], [y for _, y in pairs]
        inputs = [shape_tensor("input1", a), shape_tensor("input2", b)]
        return rc.spec_of(inputs, [TensorDraw("output", (len(a),), dtypes.SHAPE)])
    n = _length_1_1(draw, rc, 0, _max_length(rc, "input1"), "length")
    lo = 0 if rc.name in DIVIDING else bounds.min
    a = [draw(_value(lo, bounds), label=f"input1[{i}]") for i in range(n)]
    _an_end(draw, a, sorted({lo, bounds.max} if lo < 0 else {bounds.max}))
    b = [_partner_1_1(draw, rc.name, x, bounds, f"input2[{i}]") for i, x in enumerate(a)]
    inputs = [shape_tensor("input1", a), shape_tensor("input2", b)]
    return rc.spec_of(inputs, [TensorDraw("output", (n,), dtypes.SHAPE)])


recipe(*NEW_BINARY)(binary_1_1)


@recipe(*UNARY_1_1)
def unary_1_1(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    bounds = _bounds(rc)
    if _edge(rc):
        items = edge_unary(rc.name, bounds, rc.level["MAX_LOG2_SIZE"])
        split = rc.name == "EXP2_SHAPE"  # every exponent, over as many cases as it takes
        x = _edge_part(draw, rc, items, _max_length(rc, "input"), split)
        return rc.spec_of(
            [shape_tensor("input", x)], [TensorDraw("output", (len(x),), dtypes.SHAPE)]
        )
    if rc.name == "EXP2_SHAPE":  # 0 <= input < MAX_LOG2_SIZE
        values = _in(0, rc.level["MAX_LOG2_SIZE"] - 1, bounds)
    else:  # LOG2_*: input >= 1
        values = _value(1, bounds)
    n = _length_1_1(draw, rc, 0, _max_length(rc, "input"), "length")
    x = [draw(values, label=f"input[{i}]") for i in range(n)]
    _an_end(draw, x, [rc.level["MAX_LOG2_SIZE"] - 1 if rc.name == "EXP2_SHAPE" else bounds.max])
    return rc.spec_of([shape_tensor("input", x)], [TensorDraw("output", (n,), dtypes.SHAPE)])


def _i32_input(name: str, value: int) -> TensorDraw:
    """SLICE_SHAPE's start and size: constant i32 tensors of shape [1]."""
    return TensorDraw(name, (1,), dtypes.I32, np.array([value], dtype=np.int32), const=True)


@recipe("SLICE_SHAPE")
def slice_shape(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    bounds = _bounds(rc)
    if _edge(rc):
        return _slice_edge(draw, rc, bounds)
    n = _length_1_1(draw, rc, 1, _max_length(rc, "input"), "length")
    x = [draw(_element_1_1(bounds), label=f"input[{i}]") for i in range(n)]
    starts = st.sampled_from(sorted({0, min(1, n - 1), n - 1}))  # the first, second, last
    start = draw(st.one_of(st.integers(0, n - 1), starts), label="start")
    room = n - start
    size = draw(st.one_of(st.integers(1, room), st.sampled_from([1, room])), label="size")
    inputs = [shape_tensor("input", x), _i32_input("start", start), _i32_input("size", size)]
    return rc.spec_of(inputs, [TensorDraw("output", (size,), dtypes.SHAPE)])


@recipe("ASSERT_EQUAL_SHAPE")
def assert_equal_shape(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    """Equal shapes, or (allow_broadcast) shapes where each pair is equal or has a 1."""
    bounds = _bounds(rc)
    allow = draw(st.booleans(), label="allow_broadcast")
    if _edge(rc):
        return _assert_edge(draw, rc, bounds, allow)
    n = _length_1_1(draw, rc, 0, _max_length(rc, "input1"), "length")
    a = [draw(_element_1_1(bounds), label=f"input1[{i}]") for i in range(n)]
    b = list(a)
    for i in range(n if allow else 0):
        how = draw(st.sampled_from(["same", "input1 is 1", "input2 is 1"]), label=f"pair {i}")
        if how == "input1 is 1":
            a[i], b[i] = 1, draw(_element_1_1(bounds), label=f"input2[{i}]")
        elif how == "input2 is 1":
            b[i] = 1
    inputs = [shape_tensor("input1", a), shape_tensor("input2", b)]
    return rc.spec_of(inputs, [], attributes={"allow_broadcast": allow})


def concat_shape_1_1(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    """One to MAX_TENSOR_LIST_SIZE shapes, none empty, MAX_SHAPE_LEN long together."""
    bounds = _bounds(rc)
    arg = rc.op_spec.inputs[0].name
    if _edge(rc):
        return _concat_edge(draw, rc, bounds, arg)
    total = _length_1_1(draw, rc, 1, _max_length(rc, "output"), "output length")
    most = min(total, _limit(rc, f"length({arg})") or total)
    count = draw(st.one_of(st.integers(1, most), st.sampled_from([1, most])), label="list size")
    inputs, left = [], total
    for k in range(count):
        rest = count - k - 1  # members still to come, one element each at least
        n = left if not rest else draw(st.integers(1, left - rest), label=f"input {k} length")
        left -= n
        values = [draw(_element_1_1(bounds), label=f"{k}[{i}]") for i in range(n)]
        inputs.append(shape_tensor(f"{arg}_{k}", values))
    return rc.spec_of(inputs, [TensorDraw("output", (total,), dtypes.SHAPE)])


# -- the edge target: values placed by construction ---------------------------------
#
# An "edge" case (strategies.recipes.RecipeContext.target) holds tensor_size_t's
# classes at the level (its min and max, 0, 1, -1: the coverage obligations of
# strategies.obligations) and the values that break real implementations: sizes an
# fp32 conversion rounds (2**24 + 1, the range's top), divided by 1 and by small
# divisors so that a float division shows; powers of two and their neighbours; sums and
# products at the ends of the range; signs mixed for MIN_SHAPE / MAX_SHAPE; every
# exponent of EXP2_SHAPE.  Each list is in order of importance and kept to the
# operator's REQUIREs at the level; a list longer than MAX_SHAPE_LEN is split into
# parts of at most that length, one part per case (the aimed jobs reach the others:
# EXP2_SHAPE owes every exponent).


def _edge(rc: RecipeContext) -> bool:
    return rc.target == "edge" and not _draft(rc)


FP32_EXACT = 1 << 24  # the largest run of integers fp32 holds: 2**24 + 1 is not one


def _keeps(op: str, a: int, b: int, bounds: IntRange) -> bool:
    """Whether ``a op b`` keeps the 1.1 REQUIREs at ``bounds``: DIV/MOD's a >= 0 and
    b >= 1, a sum, difference or product within tensor_size_t; MIN/MAX any pair."""
    lo, hi = bounds
    if not (lo <= a <= hi and lo <= b <= hi):
        return False
    if op in DIVIDING:
        return a >= 0 and b >= 1
    exact = {"ADD_SHAPE": a + b, "SUB_SHAPE": a - b, "MUL_SHAPE": a * b}.get(op)
    return exact is None or lo <= exact <= hi


def _unique(items: list[T]) -> list[T]:
    return list(dict.fromkeys(items))


def edge_pairs(op: str, bounds: IntRange) -> list[tuple[int, int]]:
    """The (input1, input2) pairs of a binary 1.1 shape operator's edge cases."""
    lo, hi = bounds
    f = FP32_EXACT + 1
    half = 1 << (hi.bit_length() - 1)  # the top power of two: 2**30 at 8K
    root = 1 << (hi.bit_length() // 2)  # about sqrt(hi): 2**15 at 8K
    if op in DIVIDING:
        pairs = [
            (hi, 1),  # floor: 2**31 - 1 at 8K, 2**31 through fp32
            (f, 1),  # 2**24 + 1, 2**24 through fp32
            (hi, 2),  # (a + b - 1) / b wraps; fp32 gives 2**30
            (hi, 3),
            (hi, hi),  # input2's max: 1, remainder 0
            (hi - 1, hi),  # 0 (fp32: 1), remainder hi - 1
            (0, 1),  # input1's zero
            (1, hi),  # input1's one: 0, ceil 1
            (f, 2),  # ceil 2**23 + 1 (fp32: 2**23)
            (f, 3),
            (7, 3),  # inexact, not by a power of two (7 % 3 = 1; 7 & 2 = 2)
            (half, root),  # powers of two: exact
            (half + 1, half),  # 1 remainder 1
            (half - 1, 2),
            (root * root - 1, root),  # 2**30 - 1 by 2**15 at 8K: 2**15 - 1 remainder
            (0, hi),
        ]
    elif op in ("MIN_SHAPE", "MAX_SHAPE"):
        pairs = [
            (-1, hi),  # signs mixed: unsigned, -1 is above everything
            (hi, -1),
            (lo, hi),  # both ends
            (hi, lo),
            (-1, 0),
            (0, -1),
            (1, -1),
            (-1, 1),
            (lo, 0),
            (0, lo),
            (hi, hi - 1),  # the top two: equal through fp32
            (f, FP32_EXACT),  # equal through fp32
            (-f, -FP32_EXACT),
            (lo + 1, lo),
            (5, 5),  # a tie
            (1, hi),
        ]
    elif op == "ADD_SHAPE":
        pairs = [
            (hi, 0),
            (0, hi),
            (lo, 0),
            (0, lo),
            (hi, lo),  # -1
            (hi - 1, 1),  # the top itself
            (1, hi - 1),
            (lo + 1, -1),  # the bottom itself
            (-1, lo + 1),
            (FP32_EXACT, 1),  # 2**24 + 1 (fp32: 2**24)
            (f, f),  # 2**25 + 2 (fp32: 2**25)
            (half, half - 1),  # the top from two halves
            (-half, -half),  # the bottom from two halves
            (-1, 1),
            (hi, -1),
            (lo, hi),
            (I32.max, 1),  # past int32, where the level holds it
            (I32.min, -1),
        ]
    elif op == "SUB_SHAPE":
        pairs = [
            (hi, 0),
            (0, hi),  # -hi
            (lo, 0),
            (-1, lo),  # the top
            (lo, -1),
            (hi, hi),
            (0, 1),  # -1
            (-1, hi),  # the bottom
            (hi - 1, -1),  # the top
            (1, -(hi - 1)),  # the top
            (f, 1),  # 2**24 (fp32: 2**24 - 1)
            (FP32_EXACT + 2, f),  # 1 (fp32: 2)
            (lo, lo),
            (0, lo + 1),  # the top
            (half, -(half - 1)),  # the top
            (1, 1),
            (I32.min, 1),  # past int32, where the level holds it
            (I32.max, -1),
        ]
    elif op == "MUL_SHAPE":
        pairs = [
            (hi, 1),
            (1, hi),
            (lo, 1),
            (hi, -1),
            (-1, hi),
            (lo, 0),
            (0, lo),
            (0, hi),
            (half, -2),  # the bottom
            (-half, 2),
            (root, 2 * root - 1),  # 2**31 - 2**15 at 8K
            (f, 3),  # 50331651 (fp32: 50331648)
            (3, hi // 3),  # 3 * 715827882 = 2**31 - 2 at 8K
            ((1 << 12) + 1, (1 << 12) + 1),  # 2**24 + 2**13 + 1
            (-1, -1),
            (hi, 0),
            (1 << 16, 1 << 16),  # past int32, where the level holds it
            (-(1 << 16), (1 << 15) + 1),
        ]
    else:
        raise ValueError(f"{op} is not a binary 1.1 shape operator")
    return _unique([(a, b) for a, b in pairs if _keeps(op, a, b, bounds)])


def edge_values(bounds: IntRange) -> list[int]:
    """tensor_size_t values for the shape inputs that do not compute (SLICE_SHAPE,
    CONCAT_SHAPE, ASSERT_EQUAL_SHAPE): the classes, then sizes fp32 rounds, powers of
    two and their neighbours, and some of each sign."""
    lo, hi = bounds
    f = FP32_EXACT + 1
    half = 1 << (hi.bit_length() - 1)
    values = [hi, lo, 0, 1, -1, f, hi - 1, lo + 1, FP32_EXACT, -f, half, half + 1, 2, 3, 7]
    values += [(1 << 16) + 1, (1 << 32) + 1, (1 << 53) + 1]  # past 16 bits, 32, fp64's
    return _unique([v for v in values if lo <= v <= hi])


def edge_unary(op: str, bounds: IntRange, max_log2: int) -> list[int]:
    """EXP2_SHAPE: every exponent 0 .. MAX_LOG2_SIZE - 1, the largest first (where a
    narrow shift or a float path breaks).  LOG2_*: inputs >= 1 around powers of two,
    the range's top, and sizes fp32 rounds up to a power of two."""
    if op == "EXP2_SHAPE":
        return list(range(max_log2 - 1, -1, -1))
    lo, hi = bounds
    top = hi.bit_length()  # 31 at 8K
    values = [1, hi, hi - 1, 2, 3, 4, 5, 7, 8]
    values += [FP32_EXACT - 1, FP32_EXACT, FP32_EXACT + 1, (1 << 25) - 1]
    values += [(1 << (top - 1)) - 1, 1 << (top - 1), (1 << (top - 1)) + 1]
    for k in range(4, top):  # the other powers of two and their neighbours
        values += [(1 << k) - 1, 1 << k, (1 << k) + 1]
    return _unique([v for v in values if max(lo, 1) <= v <= hi])


def _edge_part(
    draw: st.DrawFn, rc: RecipeContext, items: list[T], cap: int, split: bool = False
) -> list[T]:
    """The first ``cap`` of ``items`` (the most important), or with ``split`` one part
    of at most ``cap`` (drawn: an aimed job finds the part its obligation is in, as
    EXP2_SHAPE owes every exponent), rotated by a drawn offset: each value meets other
    positions from case to case, and a targeted job, which skips the first draw, has a
    second."""
    parts = [items[i : i + cap] for i in range(0, len(items), cap)] if split else [items[:cap]]
    part = parts[draw(st.integers(0, len(parts) - 1), label="edge part")] if parts[1:] else parts[0]
    turn = draw(st.integers(0, max(0, len(part) - 1)), label="edge rotation")
    return part[turn:] + part[:turn]


def _slice_edge(draw: st.DrawFn, rc: RecipeContext, bounds: IntRange) -> CaseSpec:
    """The edge values as the input; start and size at their small classes and the
    ends of the shape (0 and 1; a whole slice, the last element, all but the first)."""
    x = _edge_part(draw, rc, edge_values(bounds), _max_length(rc, "input"))
    n = len(x)
    windows = _unique([(0, n), (1, max(1, n - 1)), (0, 1), (1, 1), (n - 1, 1)])
    start, size = draw(st.sampled_from([w for w in windows if w[0] + w[1] <= n]), label="slice")
    inputs = [shape_tensor("input", x), _i32_input("start", start), _i32_input("size", size)]
    return rc.spec_of(inputs, [TensorDraw("output", (size,), dtypes.SHAPE)])


def _assert_edge(draw: st.DrawFn, rc: RecipeContext, bounds: IntRange, allow: bool) -> CaseSpec:
    """Equal edge values; with allow_broadcast, four pairs more where one side is 1:
    against the ends, -1 and 0, on either side."""
    lo, hi = bounds
    ones = [(hi, 1), (1, lo), (-1, 1), (1, 0)] if allow else []
    cap = _max_length(rc, "input1")
    same = _edge_part(draw, rc, edge_values(bounds), max(1, cap - len(ones)))
    pairs = [(v, v) for v in same] + ones
    a, b = [x for x, _ in pairs][:cap], [y for _, y in pairs][:cap]
    inputs = [shape_tensor("input1", a), shape_tensor("input2", b)]
    return rc.spec_of(inputs, [], attributes={"allow_broadcast": allow})


def _concat_edge(draw: st.DrawFn, rc: RecipeContext, bounds: IntRange, arg: str) -> CaseSpec:
    """The edge values over shapes of 1, 2, 3 ... elements (at most
    MAX_TENSOR_LIST_SIZE of them; the last takes the rest)."""
    values = _edge_part(draw, rc, edge_values(bounds), _max_length(rc, "output"))
    most = _limit(rc, f"length({arg})") or len(values)
    parts: list[list[int]] = []
    at, size = 0, 1
    while at < len(values):
        take = len(values) - at if len(parts) == most - 1 else size
        parts.append(values[at : at + take])
        at, size = at + take, size + 1
    inputs = [shape_tensor(f"{arg}_{k}", p) for k, p in enumerate(parts)]
    return rc.spec_of(inputs, [TensorDraw("output", (len(values),), dtypes.SHAPE)])


# -- level cases: length(x) <= MAX_SHAPE_LEN ---------------------------------------


@st.composite
def shape_length_case(draw: st.DrawFn, rc: RecipeContext, case: object, v: int) -> CaseSpec:
    """A level case of a 1.1 shape operator (strategies.level_limits): its shape values
    ``v`` long, MAX_SHAPE_LEN or one past it.  The recipe draws at a level whose
    MAX_SHAPE_LEN is ``v``, every length at that maximum."""
    maxima = {**rc.level.maxima, "MAX_SHAPE_LEN": v}
    wide = replace(rc, level=Level(rc.level.name, rc.level.description, maxima))
    recipe_of = {**dict.fromkeys(BINARY_1_1, binary_1_1), **dict.fromkeys(UNARY_1_1, unary_1_1)}
    recipe_of |= {
        "SLICE_SHAPE": slice_shape,
        "ASSERT_EQUAL_SHAPE": assert_equal_shape,
        "CONCAT_SHAPE": concat_shape_1_1,
    }
    drawn = recipe_of[rc.name](draw, replace(wide, force_max_rank=True))
    assert isinstance(drawn, CaseSpec)  # the shape recipes draw single operators
    return drawn


_SECOND_OPERAND = (
    "ERROR_IF(length(input1) != length(input2)): input2 at the limit puts input1 there "
    "too, and input1's LEVEL_CHECK is the one reported (the MAX_SHAPE_LEN case of input1 "
    "holds both at the limit)"
)
# (operator, level limit case) -> why no level vector can be made for it; merged into
# strategies.level_limits.EXEMPT.
LEVEL_EXEMPT: dict[tuple[str, str], str] = {
    **{(op, "MAX_SHAPE_LEN:input2"): _SECOND_OPERAND for op in BINARY_1_1},
    ("ASSERT_EQUAL_SHAPE", "MAX_SHAPE_LEN:input2"): _SECOND_OPERAND,
    ("CONCAT_SHAPE", "MAX_TENSOR_LIST_SIZE"): (
        "ERROR_IF(input[i] == []): every shape of the list holds an element, so "
        "MAX_TENSOR_LIST_SIZE shapes make an output longer than MAX_SHAPE_LEN (64 > 16 at "
        "8K, 256 > 64 at no level), whose LEVEL_CHECK fails too"
    ),
}


# -- breakers -----------------------------------------------------------------------


def _in_1_1(rc: RecipeContext) -> bool:
    return not _draft(rc)


@breaks(*ARITHMETIC, clause=LENGTH_CLAUSE)
def operand_lengths(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    out = broken(spec, LENGTH_CLAUSE)
    name = draw(st.sampled_from(["input1", "input2"]), label="changed operand")
    values = [int(v) for v in spec.tensor(name).values]  # type: ignore[union-attr]
    # 1.1: at MAX_SHAPE_LEN a longer operand would fail its level limit first.
    cap = _limit(rc, f"length({name})")
    at_cap = cap is not None and len(values) >= cap
    shorter = bool(values) and (at_cap or draw(st.booleans(), label="shorter"))
    out.set_shape_input(name, values[:-1] if shorter else [*values, 1])
    if name == "input1" and out.outputs:  # the output follows input1: only the lengths disagree
        out.replace_tensor("output", shape=out.tensor("input1").shape)
    return out


breaks(*NEW_BINARY, "ASSERT_EQUAL_SHAPE", clause=LENGTH_CLAUSE)(operand_lengths)

CONCAT_LENGTH = CONCAT_LENGTH_CLAUSE


@breaks("CONCAT_SHAPE", clause=CONCAT_LENGTH, applies=_draft)
def concat_shape_length(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    out = broken(spec, CONCAT_LENGTH)
    (n,) = spec.outputs[0].shape
    delta = draw(st.sampled_from([1, -1] if n > 0 else [1]), label="off by")
    out.replace_tensor("output", shape=(n + delta,))
    return out


@breaks("CONCAT_SHAPE", clause=CONCAT_LENGTH_CLAUSE_1_1, applies=_in_1_1)
def concat_shape_length_1_1(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """One more or one fewer output element than the shapes hold (one fewer at
    MAX_SHAPE_LEN, whose level limit a longer output would fail first)."""
    out = broken(spec, CONCAT_LENGTH_CLAUSE_1_1)
    (n,) = spec.outputs[0].shape
    options = [d for d in (1, -1) if 0 <= n + d <= _max_length(rc, "output")]
    delta = draw(st.sampled_from(options), label="off by")
    out.replace_tensor("output", shape=(n + delta,))
    return out


@breaks("CONCAT_SHAPE", clause=CONCAT_NO_INPUT_CLAUSE, applies=_in_1_1)
def concat_shape_no_input(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """An empty list (valid in the draft, where it makes a rank-0 tensor's shape)."""
    out = broken(spec, CONCAT_NO_INPUT_CLAUSE)
    out.inputs = []
    return out


@breaks("CONCAT_SHAPE", clause=CONCAT_EMPTY_INPUT_CLAUSE, applies=_in_1_1)
def concat_shape_empty_input(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """An empty shape among the others: the lengths still add up to the output's."""
    arg = rc.op_spec.inputs[0].name
    if len(spec.inputs) >= (_limit(rc, f"length({arg})") or len(spec.inputs) + 1):
        return None  # the list is at MAX_TENSOR_LIST_SIZE already
    out = broken(spec, CONCAT_EMPTY_INPUT_CLAUSE)
    at = draw(st.integers(0, len(spec.inputs)), label="empty shape at")
    out.inputs.insert(at, shape_tensor(f"{arg}_empty", []))
    return out


def _shape_retypes(names: list[str]) -> Breaker:
    # The generic type breaker leaves shape tensors alone; a shape_t argument holding
    # an integer tensor binds no mode.
    return retype_breaker([(n, dt) for n in names for dt in (dtypes.I32, dtypes.I8)])


breaks(*ARITHMETIC, clause=TYPES_CLAUSE)(_shape_retypes(["input1", "input2", "output"]))
breaks("CONST_SHAPE", clause=TYPES_CLAUSE)(_shape_retypes(["output"]))
breaks(*NEW_BINARY, clause=TYPES_CLAUSE)(_shape_retypes(["input1", "input2", "output"]))
breaks("ASSERT_EQUAL_SHAPE", clause=TYPES_CLAUSE)(_shape_retypes(["input1", "input2"]))
breaks(*UNARY_1_1, clause=TYPES_CLAUSE)(_shape_retypes(["input", "output"]))
# SLICE_SHAPE: a shape retyped, or start / size of another integer type than i32_t.
breaks("SLICE_SHAPE", clause=TYPES_CLAUSE)(
    retype_breaker(
        [
            *((n, dt) for n in ("input", "output") for dt in (dtypes.I32, dtypes.I8)),
            *((n, dt) for n in ("start", "size") for dt in (dtypes.I16, dtypes.I8)),
        ]
    )
)


breaks("CONCAT_SHAPE", clause=TYPES_CLAUSE)(
    _shape_retypes(["output", *(f"input1_{k}" for k in range(CONCAT_SHAPE_MAX_LIST))])
)


@breaks("CONCAT_SHAPE", clause=TYPES_CLAUSE, applies=_in_1_1)
def concat_shape_member_retyped(
    draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec
) -> CaseSpec | None:
    """1.1's lists are longer than the draft's: any member, or the output, retyped."""
    names = [t.name for t in spec.inputs + spec.outputs]
    return _shape_retypes(names)(draw, rc, spec)


# DIM accepts every usual type as in_t: i4, i48 or a shape input binds no mode, nor
# does an output that is not a shape.
breaks("DIM", clause=TYPES_CLAUSE)(
    retype_breaker([("input1", dtypes.I4), ("input1", dtypes.I48), ("output", dtypes.I32)])
)


@breaks("DIM", clause=DIM_AXIS_CLAUSE)
def dim_axis(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    out = broken(spec, DIM_AXIS_CLAUSE)
    rank = len(spec.inputs[0].shape)
    out.attributes["axis"] = draw(st.integers(rank, 2**31 - 1), label="axis")
    return out


@breaks("DIM", clause=ATTRIBUTES_CLAUSE, applies=_draft)
def dim_negative_axis(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """The pseudocode bounds axis only above; the attribute is declared in 0..rank-1."""
    out = broken(spec, ATTRIBUTES_CLAUSE)
    out.attributes["axis"] = draw(st.integers(-(2**31), -1), label="axis")
    return out


@breaks("DIM", clause=DIM_NEGATIVE_AXIS_CLAUSE, applies=_in_1_1)
def dim_negative_axis_1_1(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """TOSA 1.1 states ERROR_IF(axis < 0) itself."""
    out = broken(spec, DIM_NEGATIVE_AXIS_CLAUSE)
    out.attributes["axis"] = draw(st.integers(-(2**31), -1), label="axis")
    return out


@breaks("DIM", clause=OUTPUTS_CLAUSE)
def dim_output(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """The output is declared a shape of one value.  (TOSA 1.1's schema holds shape
    values as lists, so only a list of another length can be written there.)"""
    out = broken(spec, OUTPUTS_CLAUSE)
    wrong = [(), (2,), (1, 1), (0,)] if _draft(rc) else [(2,), (0,), (3,)]
    shape = draw(st.sampled_from(wrong), label="output shape")
    out.replace_tensor("output", shape=shape)
    return out


breaks("DIM", clause=INPUTS_CLAUSE)(scalar_breaker("input1", INPUTS_CLAUSE))


def _i32_value(spec: CaseSpec, name: str) -> int:
    return int(np.asarray(spec.tensor(name).values).reshape(-1)[0])


@breaks("SLICE_SHAPE", clause=SLICE_SIZE_CLAUSE)
def slice_shape_size(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    out = broken(spec, SLICE_SIZE_CLAUSE)
    size = draw(st.one_of(st.just(0), st.integers(I32.min, -1)), label="size")
    out.replace_tensor("size", values=np.array([size], dtype=np.int32))
    return out


@breaks("SLICE_SHAPE", clause=SLICE_START_CLAUSE)
def slice_shape_start(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    out = broken(spec, SLICE_START_CLAUSE)
    start = draw(st.one_of(st.just(-1), st.integers(I32.min, -1)), label="start")
    out.replace_tensor("start", values=np.array([start], dtype=np.int32))
    return out


@breaks("SLICE_SHAPE", clause=SLICE_END_CLAUSE)
def slice_shape_end(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """A slice that runs past the end: a later start or a larger size, by one or by
    far (start + size stays an int32_t)."""
    out = broken(spec, SLICE_END_CLAUSE)
    n = spec.tensor("input").shape[0]
    start, size = _i32_value(spec, "start"), _i32_value(spec, "size")
    if draw(st.booleans(), label="later start"):
        lo, hi = n - size + 1, I32.max - size
        start = draw(st.one_of(st.just(lo), st.integers(lo, hi)), label="start")
    else:
        lo, hi = n - start + 1, I32.max - start
        size = draw(st.one_of(st.just(lo), st.integers(lo, hi)), label="size")
    out.replace_tensor("start", values=np.array([start], dtype=np.int32))
    out.replace_tensor("size", values=np.array([size], dtype=np.int32))
    return out


def _other(b: IntRange, *avoid: int) -> st.SearchStrategy[int]:
    """A tensor_size_t other than the ``avoid`` values (never rejected: a clash moves
    to the next value, or wraps to the range's start)."""

    def away(v: int) -> int:
        while v in avoid:
            v = v + 1 if v < b.max else b.min
        return v

    return _element_1_1(b).map(away)


def _one_pair(draw: st.DrawFn, spec: CaseSpec, clause: str) -> tuple[CaseSpec, int]:
    """A copy labelled ``clause`` whose operands are at least one element long, and
    the index to break."""
    out = broken(spec, clause)
    if not out.tensor("input1").shape[0]:  # two empty shapes: make them [1] and [1]
        out.set_shape_input("input1", [1])
        out.set_shape_input("input2", [1])
    index = draw(st.integers(0, out.tensor("input1").shape[0] - 1), label="index broken")
    return out, index


def _ints(spec: CaseSpec, name: str) -> list[int]:
    return [int(v) for v in np.asarray(spec.tensor(name).values).reshape(-1)]


@breaks("ASSERT_EQUAL_SHAPE", clause=ASSERT_EQUAL_CLAUSE)
def assert_unequal(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """allow_broadcast false: input2 equal to input1 but at one index."""
    out, i = _one_pair(draw, spec, ASSERT_EQUAL_CLAUSE)
    a = _ints(out, "input1")
    b = list(a)
    b[i] = draw(_other(_bounds(rc), a[i]), label=f"input2[{i}]")
    out.set_shape_input("input2", b)
    out.attributes["allow_broadcast"] = False
    return out


@breaks("ASSERT_EQUAL_SHAPE", clause=ASSERT_BROADCAST_CLAUSE)
def assert_not_broadcast(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """allow_broadcast true: at one index neither value is 1 and they differ."""
    out, i = _one_pair(draw, spec, ASSERT_BROADCAST_CLAUSE)
    bounds = _bounds(rc)
    a, b = _ints(out, "input1"), _ints(out, "input2")
    if a[i] == 1:
        a[i] = draw(_other(bounds, 1), label=f"input1[{i}]")
    b[i] = draw(_other(bounds, 1, a[i]), label=f"input2[{i}]")
    out.set_shape_input("input1", a)
    out.set_shape_input("input2", b)
    out.attributes["allow_broadcast"] = True
    return out

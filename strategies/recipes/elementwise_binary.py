"""Recipes and breakers for the element-wise binary operators.  Their broadcast
breakers come from :func:`strategies.invalid.register_broadcast_breakers`, which
comparison and SELECT share; the helpers at the top build operand values that meet
(ties, partners, shift ends) for this module's recipes."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import numpy as np
from hypothesis import strategies as st

from conformance import dtypes
from conformance.dtypes import DType
from reference.arguments import INPUTS_CLAUSE
from reference.ops.elementwise_binary import BROADCAST
from reference.pseudocode_revisions import draft_pseudocode
from strategies.case import CaseSpec, TensorDraw
from strategies.invalid import breaks, broken, register_broadcast_breakers
from strategies.recipes import RecipeContext, recipe
from strategies.recipes.common import aimed, drawn_bool, elementwise, project, share_values
from strategies.shapes import shapes
from strategies.tie_values import (
    add_partner,
    division_ties,
    mul_factors,
    mul_partner,
    shifted_product_factors,
    shifted_product_partner,
    shifted_ties,
)
from strategies.values import ValueRange, add_specials, float_regime

# -- operand values that meet ----------------------------------------------------------


def place_ends(draw: st.DrawFn, t: TensorDraw, ends: list[int], label: str) -> None:
    """In some cases, write each of ``ends`` (a range's boundaries) at its own drawn
    position of ``t``, so that both ends turn up, not only by luck."""
    assert t.values is not None
    if not t.values.size or not draw(st.booleans(), label=f"{label}: ends placed"):
        return
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label=f"{label}: positions"))
    flat = t.values.reshape(-1)  # a view
    for pos, v in zip(rng.permutation(flat.size), ends, strict=False):
        flat[pos] = v


def rebuild(
    draw: st.DrawFn,
    spec: CaseSpec,
    src: int,
    dst: int,
    make: Callable[[np.random.Generator, np.ndarray], np.ndarray],
    *,
    full: bool = False,
) -> None:
    """Input ``dst`` made from input ``src``: ``make`` sees src broadcast to the output
    shape and returns values there, read back at dst's own shape (``project``), so
    that every dst element meets the src value it was made for (where dst broadcasts,
    also others).  ``full``: dst takes the output shape, so that it meets no other."""
    a, b = spec.inputs[src], spec.inputs[dst]
    assert a.values is not None and b.values is not None
    out_shape = spec.outputs[0].shape
    if full:
        b = spec.inputs[dst] = replace(b, shape=out_shape)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="partner values"))
    kind = np.float64 if a.dtype.is_float else np.int64
    with np.errstate(all="ignore"):
        wide = np.broadcast_to(a.values.astype(kind), out_shape)
        b.values = np.asarray(project(make(rng, wide), b.shape)).astype(b.dtype.storage)


# -- nan_mode ----------------------------------------------------------------------


def nan_mode_attribute(draw: st.DrawFn, rc: RecipeContext) -> dict[str, str]:
    """``{"nan_mode": value}`` where the operator declares the attribute (TOSA 1.0 on;
    nothing, and nothing drawn, elsewhere): the value an "attr:nan_mode=..." job aims
    at, else one of the enumeration's values (those a capability manifest allows)."""
    arg = next((a for a in rc.op_spec.attributes if a.name == "nan_mode"), None)
    if arg is None:
        return {}
    names = list(rc.spec.enums[arg.element_type].names())
    allowed = rc.allowed("nan_mode")
    if allowed:
        names = [n for n in names if n in allowed] or names
    value = aimed(rc, "nan_mode")
    if value not in names:
        value = draw(st.sampled_from(names), label="nan_mode")
    return {"nan_mode": value}


def place_nans(draw: st.DrawFn, spec: CaseSpec, names: tuple[str, ...]) -> None:
    """NaN in some operands at a few output positions, so that PROPAGATE (NaN) and
    IGNORE (the other operand) differ there; at some positions in every operand at
    once, where IGNORE gives NaN too.  Each operand gets the NaN at the element the
    output position reads (the first along its broadcast axes)."""
    out_shape = spec.outputs[0].shape
    size = math.prod(out_shape)
    if not size:
        return
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="NaN positions"))
    count = int(rng.integers(1, min(4, size) + 1))
    tensors = [spec.tensor(n) for n in names]
    for flat in rng.choice(size, size=count, replace=False):
        where = np.unravel_index(int(flat), out_shape)
        # One operand, or (a draw in three) all of them.
        chosen = tensors if rng.random() < 1 / 3 else [tensors[int(rng.integers(len(tensors)))]]
        for t in chosen:
            assert t.values is not None
            index = tuple(0 if d == 1 else i for i, d in zip(where, t.shape, strict=True))
            values = np.array(t.values)  # writable
            values[index] = np.nan
            t.values = values


# -- recipes ------------------------------------------------------------------------


def _within_type(draw: st.DrawFn, spec: CaseSpec, dt: DType, sub: bool) -> None:
    """Keep every sum (difference) in the type, as apply_add_s / apply_sub_s REQUIRE,
    with full-range operands: one operand keeps its values (the type's ends among
    them), and each value of the other that some result would leave the type with is
    redrawn within what all the values it meets allow, often at an end of that range
    (so results reach the type's ends too)."""
    keep = draw(st.sampled_from([0, 1]), label="operand kept")
    a, b = spec.inputs[keep], spec.inputs[1 - keep]
    out_shape = spec.outputs[0].shape
    assert a.values is not None and b.values is not None
    if not a.values.size or not b.values.size:
        return
    wide = np.broadcast_to(a.values.astype(np.int64), out_shape)
    axes = tuple(i for i, d in enumerate(b.shape) if d != out_shape[i])
    a_lo, a_hi = wide.min(axis=axes, keepdims=True), wide.max(axis=axes, keepdims=True)
    lo, hi = dt.int_range
    # Each bound already clipped to the type (both contain 0), and computed so that no
    # step leaves int64 (i64 operands): max(lo - a, lo) is lo - min(a, 0), and so on.
    if not sub:  # a + y
        r_lo, r_hi = lo - np.minimum(a_lo, 0), hi - np.maximum(a_hi, 0)
    elif keep == 0:  # a - y
        r_lo, r_hi = np.maximum(a_hi, -1) - hi, np.minimum(a_lo, -1) - lo
    else:  # y - a
        r_lo, r_hi = lo + np.maximum(a_hi, 0), hi + np.minimum(a_lo, 0)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="redrawn values"))
    inside = _uniform_between(rng.random(b.shape), r_lo, r_hi)
    end = np.where(rng.random(b.shape) < 0.5, r_lo, r_hi)
    pick = np.where(rng.random(b.shape) < 0.5, end, inside)
    v = b.values.astype(np.int64)
    b.values = np.where((v < r_lo) | (v > r_hi), pick, v).astype(b.dtype.storage)


def _uniform_between(u: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """lo + floor(u * (hi - lo + 1)) for u in [0, 1): an integer of [lo, hi] (hi where
    rounding reaches past it).  An i64 span can pass int64, so it is taken in uint64."""
    lo, hi = np.asarray(lo, np.int64), np.asarray(hi, np.int64)
    if hi.size and (int(hi.max()) - int(lo.min()) + 1) < 2**62:  # i8..i32: as it was
        return np.minimum(lo + (u * (hi - lo + 1)).astype(np.int64), hi)
    with np.errstate(over="ignore"):
        span = (hi.astype(np.uint64) - lo.astype(np.uint64)).astype(np.float64) + 1.0
        offset = np.minimum(u * span, 2.0**64 - 2048).astype(np.uint64)
        inside = (lo.astype(np.uint64) + offset).astype(np.int64)  # wraps back into place
    # An offset rounded up past the span wraps below lo: hi then.
    return np.where((inside < lo) | (inside > hi), hi, inside)


@recipe("ADD", "SUB")
def add_sub(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    sub = rc.name == "SUB"
    if dt.is_int:
        if draw(st.booleans(), label="full-range operands"):
            spec = elementwise(draw, rc)  # the type's ends, 0 and +-1 among the specials
            _within_type(draw, spec, dt, sub)
            return spec
        # apply_add_s / apply_sub_s REQUIRE the result in range: halve the operands.
        half = ValueRange(low=dt.int_range.min // 2, high=dt.int_range.max // 2)
        return elementwise(draw, rc, ranges={"input1": half, "input2": half})
    if rc.target == "ties":  # b half an ulp of a (or just off that) away
        plain = ValueRange(specials=False)
        spec = elementwise(draw, rc, ranges={"input1": plain, "input2": plain})
        sign = -1.0 if sub else 1.0
        rebuild(draw, spec, 0, 1, lambda rng, a: sign * add_partner(rng, a, dt))
        return spec
    r = float_regime(draw, dt, rc=rc)
    spec = elementwise(draw, rc, ranges={"input1": r, "input2": r} if r else {})
    add_specials(draw, spec, ("input1", "input2"), rc)
    return spec


@recipe("ARITHMETIC_RIGHT_SHIFT")
def arithmetic_right_shift(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    ties = rc.target == "ties"
    rnd = ties or drawn_bool(draw, rc, "round")
    # REQUIRE(0 <= value2 <= bits - 1) per type; value1 takes its full range.
    shift = ValueRange(low=1 if ties else 0, high=dt.bits - 1)
    spec = elementwise(draw, rc, ranges={"input2": shift}, attributes={"round": rnd})
    if ties:  # the bits shifted out 10...0, 10...01 or 01...1
        lo, hi = dt.int_range
        rebuild(draw, spec, 1, 0, lambda rng, s: shifted_ties(rng, s, lo, hi))
    else:
        place_ends(draw, spec.inputs[1], [0, 1, dt.bits - 2, dt.bits - 1], "shift")
    return spec


@recipe("LOGICAL_LEFT_SHIFT", "LOGICAL_RIGHT_SHIFT")
def logical_shift(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    bits = rc.dtype("in_out_t").bits
    if not draft_pseudocode(rc.spec.revision):
        # TOSA 1.0: REQUIRE(0 <= value2 <= bits - 1), the operand type's own range.
        spec = elementwise(draw, rc, ranges={"input2": ValueRange(low=0, high=bits - 1)})
        place_ends(draw, spec.inputs[1], sorted({0, 1, bits - 2, bits - 1}), "shift")
        return spec
    # The draft: REQUIRE(0 <= value2 <= 31) for every type, i8 and i16 included.
    spec = elementwise(draw, rc, ranges={"input2": ValueRange(low=0, high=31)})
    place_ends(draw, spec.inputs[1], sorted({0, 1, bits - 1, bits, 30, 31} - {32}), "shift")
    return spec


@recipe("BITWISE_AND", "BITWISE_OR", "BITWISE_XOR", "LOGICAL_AND", "LOGICAL_OR", "LOGICAL_XOR")
def bitwise_logical(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    spec = elementwise(draw, rc)  # no REQUIREs: full-range integers, any booleans
    share_values(draw, spec, 0, 1)
    return spec


@recipe("MAXIMUM", "MINIMUM")
def maximum_minimum(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    attrs = nan_mode_attribute(draw, rc)
    r = float_regime(draw, dt, rc=rc) if dt.is_float else None
    ranges = {"input1": r, "input2": r} if r else {}
    spec = elementwise(draw, rc, ranges=ranges, attributes=attrs)
    add_specials(draw, spec, ("input1", "input2"), rc)
    share_values(draw, spec, 0, 1)  # ties decide which operand (-0 or +0) is returned
    if attrs and dt.is_float and (aimed(rc, "nan_mode") or draw(st.booleans(), label="NaNs")):
        place_nans(draw, spec, ("input1", "input2"))
    return spec


@recipe("INTDIV")
def intdiv(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    if rc.target == "ties":  # quotients k + 1/2 and just off, of either sign
        divisor = ValueRange(low=-(2**15), high=2**15, nonzero=True, specials=False)
        spec = elementwise(draw, rc, ranges={"input2": divisor})
        b = spec.inputs[1]
        assert b.values is not None
        # Even divisors (half of them, the first one always) have quotients at k + 1/2.
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="even divisors"))
        even = np.asarray(rng.random(b.shape) < 0.5)
        even.flat[0] = True
        b.values = np.where(even, 2 * b.values.astype(np.int64), b.values).astype(b.values.dtype)
        lo, hi = dt.int_range
        rebuild(draw, spec, 1, 0, lambda rng, b: division_ties(rng, b, lo, hi))
    else:
        spec = elementwise(draw, rc, ranges={"input2": ValueRange(nonzero=True)})
    if dt is dtypes.I64:  # the ends of i64 as dividends and divisors (-1 among them)
        lo, hi = dt.int_range
        place_ends(draw, spec.inputs[0], [lo, hi, lo + 1, -1], "dividend")
        place_ends(draw, spec.inputs[1], [-1, hi, lo, 2, 1], "divisor")
    # REQUIRE the quotient fits: only INT_MIN / -1 does not.  Divisors of -1 that meet
    # an INT_MIN dividend become -2, so INT_MIN and -1 both still appear elsewhere.
    a, b = spec.inputs[0], spec.inputs[1]
    assert a.values is not None and b.values is not None
    out_shape = spec.outputs[0].shape
    bad = (np.broadcast_to(a.values, out_shape) == dt.min) & (
        np.broadcast_to(b.values, out_shape) == -1
    )
    if bad.any():
        axes = tuple(i for i, d in enumerate(b.shape) if d != out_shape[i])
        bad_b = bad.any(axis=axes, keepdims=True) if axes else bad
        b.values = np.where(bad_b, -2, b.values).astype(b.values.dtype)
    return spec


def _mul_i32_ranges(draw: st.DrawFn, shift: int) -> dict[str, ValueRange]:
    """Operand ranges for which the rounded, shifted i32 product stays in i32.

    With |a| <= 2**ba, |b| <= 2**bb - 1 and ba + bb = 31 + shift (ba >= shift), the
    result magnitude is at most 2**31 - 2**(ba - shift) rounded, which reaches the type's
    ends without leaving it.  Shifts of 32 and more need no bound at all."""
    if shift == 0 or shift >= 32:
        return {}
    ba = draw(st.integers(shift, 31), label="bits of the wider operand")
    bb = 31 + shift - ba
    wide = ValueRange(low=-(2**ba), high=2**ba - 1)
    narrow = ValueRange(low=-(2**bb - 1), high=2**bb - 1)
    if draw(st.booleans(), label="which operand is wider"):
        return {"input1": wide, "input2": narrow}
    return {"input1": narrow, "input2": wide}


# MUL's shift: REQUIRE(0 <= shift <= 63); these are its ends and the i32 boundaries.
SHIFT_ENDS = (0, 1, 31, 32, 62, 63)


def _mul_shift(draw: st.DrawFn, rc: RecipeContext, in_t: DType) -> int:
    """REQUIRE(in_t == i32_t || shift == 0); i32: an end or any, and for ties one
    that rounds (most often at most 31, where near-ties can be built too)."""
    if in_t is not dtypes.I32:
        return 0
    if rc.target == "ties":
        low = st.integers(1, 31)
        return draw(st.one_of(low, low, st.integers(32, 63)), label="shift")
    return draw(st.one_of(st.sampled_from(SHIFT_ENDS), st.integers(0, 63)), label="shift")


@recipe("MUL")
def mul(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    in_t = rc.dtype("in_t")
    shift = _mul_shift(draw, rc, in_t)
    ties = rc.target == "ties" and (in_t.is_float or shift > 0)
    ranges: dict[str, ValueRange] = {"shift": ValueRange(low=shift, high=shift, specials=False)}
    if ties:
        ranges |= {"input1": ValueRange(specials=False), "input2": ValueRange(specials=False)}
    elif in_t is dtypes.I32:
        ranges |= _mul_i32_ranges(draw, shift)
    elif in_t.is_float:
        r = float_regime(draw, in_t, rc=rc)
        if r is not None:
            ranges |= {"input1": r, "input2": r}
    spec = elementwise(draw, rc, ranges=ranges)
    a = spec.inputs[0]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="factor values"))
    if ties and in_t.is_float:  # significands whose product has p + 1 or 2p bits
        a.values = np.asarray(mul_factors(rng, a.shape, in_t)).astype(in_t.storage)
        rebuild(draw, spec, 0, 1, lambda rng, x: mul_partner(rng, x, in_t))
    elif ties:  # products whose low shift bits are 10...0 or one off
        a.values = np.asarray(shifted_product_factors(rng, a.shape, shift)).astype(in_t.storage)
        # Each product is built to fit i32 (the REQUIRE): input2 meets one input1 value.
        make = lambda rng, x: shifted_product_partner(rng, x, shift)  # noqa: E731
        rebuild(draw, spec, 0, 1, make, full=True)
    elif in_t.is_float:
        add_specials(draw, spec, ("input1", "input2"), rc)
    elif in_t is dtypes.I64:  # no REQUIRE: the ends, and products past 32 and 64 bits
        lo, hi = in_t.int_range
        place_ends(draw, spec.inputs[0], [lo, hi, -1, 1 << 32], "input1")
        place_ends(draw, spec.inputs[1], [hi, lo, 1 << 31, -(1 << 31)], "input2")
    # The shift is an input tensor, but a constant one: a backend may fold it.  Rank 0
    # in the draft, [1] from TOSA 1.0.
    k = next(i for i, t in enumerate(spec.inputs) if t.name == "shift")
    held = np.full(spec.inputs[k].shape, shift, np.int8)
    spec.inputs[k] = replace(spec.inputs[k], values=held, const=True)
    return spec


@recipe("POW")
def pow_(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    """POW has no REQUIRE; the accuracy rule asks for NaN where x < 0 and y is not an
    integer.  Regimes: positive bases with moderate exponents (the defined, finite
    results most tests are about), any base with integral exponents (negative bases
    with defined results), large positive bases, and everything with special values."""
    dt = rc.dtype("in_out_t")
    regime = draw(st.sampled_from(["positive", "integral", "wide", "special"]), label="regime")
    top = dt.fp.normal_max
    if regime == "positive":
        ranges = {"input1": ValueRange(low=0.0, high=8.0), "input2": ValueRange(-4.0, 4.0)}
    elif regime == "integral":
        ranges = {"input1": ValueRange(low=-8.0, high=8.0), "input2": ValueRange(-8.0, 8.0)}
    elif regime == "wide":
        ranges = {"input1": ValueRange(low=0.0, high=top), "input2": ValueRange(-2.0, 2.0)}
    else:
        ranges = {}
    spec = elementwise(draw, rc, ranges=ranges)
    if regime == "integral":
        y = spec.inputs[1]
        assert y.values is not None
        y.values = np.round(y.values.astype(np.float64)).astype(y.values.dtype)
    add_specials(draw, spec, ("input1", "input2"), rc)
    if not draft_pseudocode(rc.spec.revision):
        _pow_domain(spec)
    return spec


def _pow_domain(spec: CaseSpec) -> None:
    """Operands that keep TOSA 1.0's REQUIREs: a base >= 0 (negative bases and -0
    lose their sign), both finite and not NaN (a base becomes 2, an exponent 0.5),
    and a zero base only against positive exponents (elsewhere it becomes 1)."""
    x, y = spec.inputs[0], spec.inputs[1]
    assert x.values is not None and y.values is not None
    with np.errstate(invalid="ignore"):
        xv = np.abs(x.values.astype(np.float64))
        xv = np.where(np.isfinite(xv), xv, 2.0)
        yv = y.values.astype(np.float64)
        yv = np.where(np.isfinite(yv), yv, 0.5)
    out_shape = spec.outputs[0].shape
    bad = (np.broadcast_to(xv, out_shape) == 0) & (np.broadcast_to(yv, out_shape) <= 0)
    if bad.any():
        axes = tuple(i for i, d in enumerate(x.shape) if d != out_shape[i])
        bad_x = bad.any(axis=axes, keepdims=True) if axes else bad
        xv = np.where(bad_x, 1.0, xv)
    x.values = xv.astype(x.dtype.storage)
    y.values = yv.astype(y.dtype.storage)


def _table_i16(draw: st.DrawFn, size: int, *, sloped: bool = False) -> np.ndarray:
    """A 513-entry i16 table whose neighbouring entries differ by an i16 (the slope
    REQUIRE of apply_lookup_s), shaped as real tables are or pushed to the limits;
    ``sloped``: not a constant one."""
    kinds = ["smooth", "half-range", "walk", "extreme"] + ([] if sloped else ["constant"])
    kind = draw(st.sampled_from(kinds), label="table kind")
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="table seed"))
    if kind == "smooth":  # a sigmoid-like activation, as TABLE is used for
        x = np.linspace(-8.0, 8.0, size)
        scale = float(rng.uniform(1.0, 32767.0))
        values = np.round(np.tanh(x * rng.uniform(0.1, 2.0)) * scale)
    elif kind == "half-range":  # any two entries in [-2**14, 2**14) differ by an i16
        values = rng.integers(-(2**14), 2**14, size=size)
    elif kind == "walk":  # clipping a step only shortens it, so slopes stay in range
        steps = rng.integers(-(2**15), 2**15, size=size)
        values = np.empty(size, np.int64)
        v = int(rng.integers(-(2**15), 2**15))
        for i, s in enumerate(steps):
            v = min(max(v + int(s), -(2**15)), 2**15 - 1)
            values[i] = v
    elif kind == "extreme":  # slopes of exactly +-32767 and 0 at the ends of the type
        lo = int(rng.choice([-(2**15), -(2**14)]))
        values = np.where(np.arange(size) % 2 == 0, lo, lo + 2**15 - 1)
    else:
        values = np.full(size, int(rng.choice([-(2**15), 0, 2**15 - 1])))
    return np.asarray(values).astype(np.int16)


@recipe("TABLE")
def table(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    in_t, table_t, out_t = rc.dtype("in_t"), rc.dtype("table_t"), rc.dtype("out_t")
    size = int(rc.mode.bindings["TABLE_SIZE"])  # REQUIRE(length(table) == TABLE_SIZE)
    lo, hi = rc.rank_range("output")
    shape = draw(shapes(lo, hi, rc.budget, label="shape"))
    x = rc.tensor(draw, rc.op_spec.inputs[0].name, in_t, shape)  # input / input1
    if table_t is dtypes.I8:
        values = rc.values(draw, table_t, (size,), label="table")
    else:
        values = _table_i16(draw, size, sloped=rc.target == "ties")
    if rc.target == "ties" and table_t is dtypes.I16:
        # No rounding in apply_lookup_s (its 16.7 result is exact), but interpolation
        # fractions at the half (64 of 128) and one off are where one that rounded
        # would show.
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="fractions"))
        index = rng.integers(0, size - 1, shape)
        fraction = np.asarray(64 + rng.integers(-1, 2, shape))
        fraction.flat[0] = 64
        x.values = (index * 128 - 32768 + fraction).astype(in_t.storage)
    tab = TensorDraw("table", (size,), table_t, values, const=True)
    return rc.spec_of([x, tab], [TensorDraw("output", shape, out_t)])


# -- breakers -----------------------------------------------------------------------

register_broadcast_breakers(
    (
        "ADD",
        "SUB",
        "ARITHMETIC_RIGHT_SHIFT",
        "BITWISE_AND",
        "BITWISE_OR",
        "BITWISE_XOR",
        "INTDIV",
        "LOGICAL_AND",
        "LOGICAL_OR",
        "LOGICAL_XOR",
        "LOGICAL_LEFT_SHIFT",
        "LOGICAL_RIGHT_SHIFT",
        "MAXIMUM",
        "MINIMUM",
        "MUL",
        "POW",
    ),
    BROADCAST,
)


@breaks("MUL", clause=INPUTS_CLAUSE)
def mul_shift_not_scalar(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A shift of one rank more: the argument declares rank 0 in the draft (the
    pseudocode's own ERROR_IF(rank(shift) != 0) never gets there, the argument check
    comes first), rank 1 ([1]) from TOSA 1.0."""
    out = broken(spec, INPUTS_CLAUSE)
    out.reshape_tensor("shift", (1, *out.tensor("shift").shape))  # the same values
    return out


@breaks("TABLE", clause=INPUTS_CLAUSE)
def table_not_rank1(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A table of rank 2 (one row of the right length): the argument declares rank 1."""
    out = broken(spec, INPUTS_CLAUSE)
    table = out.inputs[1]
    out.reshape_tensor(table.name, (1, *table.shape))  # the same values
    return out

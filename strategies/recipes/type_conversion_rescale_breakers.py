"""Breakers for RESCALE: one must-fail case per ERROR_IF (and argument rule).

Most rules concern some type pairs only; a breaker's ``applies`` test lists it for
exactly the modes it can break, where it always does.  Each rule is registered under
the clause of every revision that states it (reference.ops.type_conversion's
RESCALE_RULES): the draft's, and TOSA 1.0's (is_same<> spellings, rounding_mode,
and the three unsigned-reading ERROR_IFs that replace the draft's make_unsigned
refusal), each entry applying to the revision it belongs to.  Where a zero point is
an input tensor (1.0) it is written as its bits in the signed type (zp_as_declared).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
from hypothesis import strategies as st

from conformance import dtypes
from conformance.dtypes import I32_MAX, I32_MIN, DType
from conformance.errata import MUL_T_BY_SCALE32
from reference.arguments import ATTRIBUTES_CLAUSE, INPUTS_CLAUSE
from reference.ops import type_conversion as tc
from strategies.case import CaseSpec
from strategies.invalid import Breaker, breaks, broken
from strategies.recipes import RecipeContext
from strategies.recipes.type_conversion_rescale import NARROW, zp_as_declared

I8, I16, I32, I48 = dtypes.I8, dtypes.I16, dtypes.I32, dtypes.I48
Test = Callable[[DType, DType], bool]


def _types(rc: RecipeContext) -> tuple[DType, DType]:
    return rc.dtype("in_t"), rc.dtype("out_t")


def _when(test: Test) -> Callable[[RecipeContext], bool]:
    """A breaker's static test on the mode's (in_t, out_t)."""
    return lambda rc: test(*_types(rc))


def _rule(key: str, test: Test | None = None) -> Callable[[Breaker], Breaker]:
    """Register a breaker of rule ``key`` under each revision's clause for it, each
    applying where the operator is of that revision and ``test`` holds."""

    def register(fn: Breaker) -> Breaker:
        for pick, newer in ((1, False), (2, True)):
            clause = next(r[pick] for r in tc.RESCALE_RULES if r[0] == key)
            if clause is None:
                continue

            def applies(rc: RecipeContext, newer: bool = newer) -> bool:
                if tc.declares_rounding_mode(rc.op_spec) != newer:
                    return False
                return test is None or test(*_types(rc))

            breaks("RESCALE", clause=clause, applies=applies)(fn)
        return fn

    return register


def _clause(rc: RecipeContext, key: str) -> str:
    clause = tc.rescale_clause(rc.op_spec, key)
    assert clause is not None, f"{key} is no rule of this revision"
    return clause


def _with(rc: RecipeContext, spec: CaseSpec, key: str, **attributes: object) -> CaseSpec:
    """``spec`` broken at rule ``key``, with these attributes (zero points as the
    revision carries them)."""
    out = broken(spec, _clause(rc, key))
    in_t, out_t = _types(rc)
    for name, dt in (("input_zp", in_t), ("output_zp", out_t)):
        value = attributes.get(name)
        if isinstance(value, int):
            attributes[name] = zp_as_declared(rc, name, value, dt)
    out.attributes.update(attributes)
    return out


def _retyped_multiplier(spec: CaseSpec, scale32: bool) -> None:
    """The multiplier in the type scale32 asks for (values cut to fit i16)."""
    k = next(i for i, t in enumerate(spec.inputs) if t.name == "multiplier")
    t = spec.inputs[k]
    mul_t = dtypes.dtype(MUL_T_BY_SCALE32[scale32])  # erratum rescale-mul_t
    values = np.clip(np.asarray(t.values, np.int64), 0, mul_t.int_range.max).astype(mul_t.storage)
    spec.inputs[k] = replace(t, dtype=mul_t, values=values)


def _signed_side(spec: CaseSpec, side: str) -> dict[str, object]:
    """Attributes that make ``side`` ("input"/"output") signed again, its zero point
    reset where the unsigned one would not fit the signed type."""
    if not spec.attributes[f"{side}_unsigned"]:
        return {}
    return {f"{side}_unsigned": False, f"{side}_zp": 0}


def _nonzero_zp(draw: st.DrawFn, dt: DType, label: str) -> int:
    """A nonzero zero point of ``dt`` that the i32 attribute field can carry."""
    lo, hi = max(dt.int_range.min, I32_MIN), min(dt.int_range.max, I32_MAX)
    return draw(st.sampled_from([1, -1, lo, hi]), label=label)


def _uint16_bad_zp(draw: st.DrawFn, label: str) -> int:
    zp = draw(st.one_of(st.sampled_from([1, 32767, 65535]), st.integers(1, 65534)), label=label)
    return zp + 1 if zp == 32768 else zp


@_rule("in_zp", lambda i, o: i is not I8)
def input_zp_not_zero(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A nonzero input zero point for a signed input other than i8."""
    attrs = _signed_side(spec, "input") | {"input_zp": _nonzero_zp(draw, _types(rc)[0], "zp")}
    return _with(rc, spec, "in_zp", **attrs)


@_rule("out_zp", lambda i, o: o is not I8)
def output_zp_not_zero(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A nonzero output zero point for a signed output other than i8."""
    attrs = _signed_side(spec, "output") | {"output_zp": _nonzero_zp(draw, _types(rc)[1], "zp")}
    return _with(rc, spec, "out_zp", **attrs)


@_rule("in_zp16", lambda i, o: i is I16 and o is not I32)
def uint16_input_zp(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A uint16 input whose zero point is neither 0 nor 32768 (where an unsigned i16
    input is otherwise allowed: not into i32)."""
    attrs = _signed_side(spec, "output") | {"input_unsigned": True}
    attrs["input_zp"] = _uint16_bad_zp(draw, "input_zp")
    return _with(rc, spec, "in_zp16", **attrs)


@_rule("out_zp16", lambda i, o: o is I16 and i in NARROW)
def uint16_output_zp(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A uint16 output whose zero point is neither 0 nor 32768 (from an i8 or i16
    input, the only ones an unsigned output allows)."""
    attrs = _signed_side(spec, "input") | {"output_unsigned": True}
    attrs["output_zp"] = _uint16_bad_zp(draw, "output_zp")
    return _with(rc, spec, "out_zp16", **attrs)


@_rule("scale32_i48", lambda i, o: i is I48)
def scale32_with_i48(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """scale32 on an i48 input, the multiplier in i32 as scale32 asks."""
    out = _with(rc, spec, "scale32_i48", scale32=True)
    _retyped_multiplier(out, True)
    return out


@_rule("double_round")
def double_round_without_scale32(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """Double rounding (the draft's flag, 1.0's DOUBLE_ROUND) with a 16-bit multiplier."""
    if tc.declares_rounding_mode(rc.op_spec):
        out = _with(rc, spec, "double_round", scale32=False, rounding_mode="DOUBLE_ROUND")
    else:
        out = _with(rc, spec, "double_round", scale32=False, double_round=True)
    _retyped_multiplier(out, False)
    return out


@_rule("both_unsigned", lambda i, o: {i, o} <= NARROW)
def both_unsigned(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """Both sides unsigned, between 8- and 16-bit types (each of which may be unsigned
    alone).  The zero points stay: a signed one fits the unsigned reading too, and the
    recipe's i16 zero points are 0 or 32768."""
    return _with(rc, spec, "both_unsigned", input_unsigned=True, output_unsigned=True)


@_rule("out_i32_in_uns", lambda i, o: o is I32 and i in NARROW)
def unsigned_into_i32(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """An unsigned i8 or i16 input into i32."""
    return _with(rc, spec, "out_i32_in_uns", input_unsigned=True)


def _unsigned_out_breaker(src: DType, key: str) -> None:
    @_rule(key, lambda i, o: i is src and o in NARROW)
    def wide_into_unsigned(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        """An i32 or i48 input into an unsigned i8 or i16 output."""
        return _with(rc, spec, key, output_unsigned=True)


_unsigned_out_breaker(I32, "in_i32_out_uns")
_unsigned_out_breaker(I48, "in_i48_out_uns")


def _unsigned_wide_input(key: str, src: DType) -> None:
    @_rule(key, lambda i, o: i is src and o is not I32)
    def unsigned_wide_input(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        """TOSA 1.0: an unsigned i48 or i32 input (into i8 or i16: into i32 an earlier
        ERROR_IF fires), the output signed."""
        attrs = _signed_side(spec, "output") | {"input_unsigned": True}
        return _with(rc, spec, key, **attrs)


_unsigned_wide_input("in_i48_in_uns", I48)
_unsigned_wide_input("in_i32_in_uns", I32)


@_rule("out_i32_out_uns", lambda i, o: o is I32 and i in NARROW)
def unsigned_i32_output(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """TOSA 1.0: an unsigned i32 output (from i8 or i16: from i32 or i48 an earlier
    ERROR_IF fires), the input signed."""
    attrs = _signed_side(spec, "input") | {"output_unsigned": True}
    return _with(rc, spec, "out_i32_out_uns", **attrs)


@_rule("per_channel_rank")
def per_channel_rank0(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """per_channel on a rank-0 input (one of its values kept)."""
    out = _with(rc, spec, "per_channel_rank", per_channel=True)
    t = out.inputs[0]
    assert t.values is not None
    out.inputs[0] = replace(t, shape=(), values=np.asarray(t.values).reshape(-1)[:1].reshape(()))
    out.outputs[0] = replace(out.outputs[0], shape=())
    return out


@_rule("make_unsigned_in", lambda i, o: (i in NARROW) != (o in NARROW))
def unsigned_wide(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """The draft: an unsigned i32 or i48 input into i8 or i16, or an unsigned i32
    output from i8 or i16: rules the ERROR_IFs let through, but only 8- and 16-bit
    values have an unsigned form.  (i32 and i48 into i32 meet an ERROR_IF first.)"""
    if _types(rc)[0] in NARROW:
        return _with(rc, spec, "make_unsigned_out", output_unsigned=True)
    return _with(rc, spec, "make_unsigned_in", input_unsigned=True)


def _zp_is_attribute(rc: RecipeContext) -> bool:
    return not any(a.name == "input_zp" for a in rc.op_spec.inputs)


@breaks(
    "RESCALE",
    clause=ATTRIBUTES_CLAUSE,
    applies=lambda rc: I8 in _types(rc) and _zp_is_attribute(rc),
)
def zp_beyond_its_type(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """An i8 zero point its type cannot hold, signed or (for an unsigned side)
    unsigned.  Only an i8 side may have a nonzero zero point, so only it is tried.
    Only where zero points are attributes: an i8 input tensor holds no such value."""
    sides = [s for s, dt in zip(("input", "output"), _types(rc), strict=True) if dt is I8]
    side = draw(st.sampled_from(sides), label="side")
    hi = 255 if spec.attributes[f"{side}_unsigned"] else 127
    zp = draw(st.one_of(st.integers(hi + 1, 1000), st.integers(-1000, -129)), label="zp")
    out = broken(spec, ATTRIBUTES_CLAUSE)
    out.attributes[f"{side}_zp"] = zp
    return out


@breaks("RESCALE", clause=INPUTS_CLAUSE)
def channel_count_wrong(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """multiplier and shift of a length other than NC (the last dimension per channel,
    else 1)."""
    out = broken(spec, INPUTS_CLAUSE)
    nc = out.inputs[1].shape[0]
    wrong = draw(st.sampled_from([k for k in (nc - 1, nc + 1, nc + 2) if k >= 1]), label="NC")
    for k in (1, 2):
        out.reshape_tensor(out.inputs[k].name, (wrong,))
    return out

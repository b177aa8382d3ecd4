"""Recipe for CAST (RESCALE's recipe and breakers are in type_conversion_rescale).

CAST had no ERROR_IF of its own up to TOSA 1.0 (the two generic breakers cover it);
1.1 adds ERROR_IF(input_unsigned && !is_integer<in_t>()) and the unsigned reading of an
integer input, drawn where the revision's format can write it.  Its recipe is
about values: every special value the input type has (NaN kept out of float -> integer
casts only, where the result is unpredictable; infinities saturate), ties between two
neighbours of the output type and values just off them, values that overflow or
underflow the output type, and full-range integers.

TOSA 1.1's block-scaled modes (in_t or out_t a bs32_* composite) draw whole blocks:
rank >= 1 and the innermost dimension a multiple of the block size.  A cast to one takes
CAST_TO_BLOCK_SCALED's input blocks (strategies.recipes.block_scaled.cast_to_values:
zero, NaN, infinite, huge, scale-boundary and tie blocks), each block moved by a power
of two into the range of an input type narrower than fp32 (which keeps what makes a
block special, the scale moving with it); a cast from one takes every encoding of
the value type and the scale extremes (strategies.block_tensors), its other scales
drawn either freely or, mostly, within the output type's exponent range so that most
results are neither overflows nor zeros.  Breakers: the composite's rank 0 and its
innermost dimension off the block grid, for in_t and for out_t.  The branch's
ERROR_IF(is_floating_point<in_t>()) has none: every mode's input is floating point
(reference.ops.type_conversion.FP_TO_BLOCK_CLAUSE says how it is read).

Targets: "ties" draws only tie regimes (x.5 and x.5 +- one input ulp into integers;
midpoints of a narrower float type and midpoint +- one ulp of the wider input; for
integer inputs, the integer midpoints such as 2**24 + 1 for fp32, and +- 1); "edge"
places every special value of the input type and the output type's edges.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from hypothesis import strategies as st

from conformance import dtypes
from conformance.block_tensor import BlockScaled, is_block_scaled, value_type
from conformance.dtypes import DType
from conformance.rounding import round_to
from reference import mx
from reference.ops.type_conversion import (
    BLOCK_RANK_IN_CLAUSE,
    BLOCK_RANK_OUT_CLAUSE,
    BLOCK_SHAPE_IN_CLAUSE,
    BLOCK_SHAPE_OUT_CLAUSE,
    INPUT_UNSIGNED_CLAUSE,
    declares_input_unsigned,
    is_integer,
)
from strategies.block_tensors import block_scaled_values, blocked_shapes
from strategies.case import CaseSpec, TensorDraw
from strategies.invalid import breaks, broken
from strategies.recipes import RecipeContext, recipe
from strategies.recipes.block_scaled import SPECIAL_BLOCKS, cast_to_values
from strategies.recipes.common import drawn_bool
from strategies.shapes import shapes
from strategies.tie_values import float_midpoints
from strategies.ties import cast_rounds, ulp
from strategies.values import ValueRange, edge_pool, special_values, wants_every_special


def _edges(in_t: DType, out_t: DType) -> list[float]:
    """Values at the edges of the output type, as far as the input type reaches."""
    if out_t.kind == "bool":
        return []
    if not out_t.is_float:
        lo, hi = out_t.finite_range
        return [hi, hi + 0.5, hi + 1, lo, lo - 0.5, lo - 1, 0.5, -0.5, 1.5, -2.5]
    top = out_t.fp.normal_max
    emax = math.floor(math.log2(top))
    half_ulp = 2.0 ** (emax - out_t.fp.normal_frac - 1)
    sub = out_t.fp.normal_min * 2.0**-out_t.fp.normal_frac  # the smallest subnormal
    out = [top, top + half_ulp, top + 2 * half_ulp, out_t.fp.normal_min, sub, sub / 2, sub / 4]
    out += [out_t.fp.normal_min - sub, out_t.fp.normal_min - sub / 2]
    return out + [-v for v in out]


def _in_range(values: np.ndarray, dt: DType) -> np.ndarray:
    """fp64 values as ``dt`` holds them (integers clipped, floats rounded); integer
    values (Python ints) are taken exactly, as i64's ends are not floats."""
    if dt.is_float:
        with np.errstate(over="ignore"):
            return values.astype(dt.storage)
    lo, hi = dt.int_range
    if values.dtype.kind == "f" and dt.bits >= 64:
        # float64 reaches 2**63, one past i64: its largest value below is the top.
        return np.clip(np.round(values), lo, float(np.nextafter(2.0**63, 0))).astype(dt.storage)
    return np.clip(np.round(values), lo, hi).astype(dt.storage)


def _signed(rng: np.random.Generator, mags: np.ndarray) -> np.ndarray:
    return np.where(rng.integers(0, 2, mags.shape) == 0, -1.0, 1.0) * mags


def _max_of(dt: DType) -> float:
    return float(dt.fp.normal_max if dt.is_float else dt.max)  # type: ignore[arg-type]


def tie_values(rng: np.random.Generator, in_t: DType, out_t: DType, size: int) -> np.ndarray:
    """fp64 values of ``in_t`` that are ties of the cast to ``out_t`` (about a third),
    or one step below or above one (one ulp of a float input, 1 for an integer one)."""
    side = rng.integers(-1, 2, size)  # -1 below, 0 on the tie, +1 above
    side[:2] = [0, rng.choice([-1, 1])][:size]  # a tie and a near-tie in every tensor
    if out_t.is_int:  # x.5, where the input type holds it
        top = min(2.0**in_t.fp.normal_frac, out_t.finite_range[1])
        low = max(-top, out_t.finite_range[0])
        t = np.floor(rng.uniform(low, top - 1, size)) + 0.5
        step = ulp(t, in_t)
    elif in_t.is_int:  # integer midpoints, from the first binade whose ulp is 2
        t = float_midpoints(rng, out_t, size, _max_of(in_t), integral=True)
        # One unit off is nearer the midpoint than a neighbour where the ulp is 4 or
        # more: a midpoint doubled is one of the next binade.
        t = np.where((side != 0) & (ulp(t, out_t) < 4), 2 * t, t)
        t = np.clip(t, in_t.finite_range[0] + 1, in_t.finite_range[1] - 1)
        step = np.ones(size)
    else:
        t = float_midpoints(rng, out_t, size, min(_max_of(in_t), _max_of(out_t)))
        step = ulp(t, in_t)
    return _in_range(t + side * step, in_t)


def _bulk(
    rng: np.random.Generator, regime: str, in_t: DType, out_t: DType, size: int
) -> np.ndarray:
    """The values of one of the non-default regimes, in the input's storage type."""
    in_max = _max_of(in_t)
    if regime == "full":  # magnitudes across every binade of the input type
        e = rng.uniform(math.log2(in_t.fp.normal_min) - 2, math.log2(in_max), size)
        return _in_range(_signed(rng, 2.0**e), in_t)
    if regime == "target":  # around the output type's range: under- and overflow
        if out_t.is_float:
            lo = math.log2(out_t.fp.normal_min) - out_t.fp.normal_frac - 2
            hi = min(math.log2(in_max), math.log2(out_t.fp.normal_max) + 1)
            return _in_range(_signed(rng, 2.0 ** rng.uniform(lo, hi, size)), in_t)
        top = min(in_max, 1.25 * out_t.finite_range[1])
        return _in_range(_signed(rng, rng.uniform(0, top, size)), in_t)
    assert regime == "ties"
    return tie_values(rng, in_t, out_t, size)


def _place(flat: np.ndarray, values: list[float], dt: DType, positions: np.ndarray) -> None:
    """Write ``values`` (as ``dt`` holds them) at distinct ``positions`` of ``flat``."""
    for pos, v in zip(positions, values, strict=False):
        flat[int(pos)] = _in_range(np.array([v]), dt)[0]


@st.composite
def _cast_values(draw: st.DrawFn, rc: RecipeContext, shape: tuple[int, ...]) -> np.ndarray:
    in_t, out_t = rc.dtype("in_t"), rc.dtype("out_t")
    regimes = ["default"]  # every special value, full-range integers
    if in_t.is_float:
        regimes += ["full", "target"]
    rounds = cast_rounds(in_t, out_t)
    if rounds:  # halfway cases, and values one step off them
        regimes.append("ties")
    if rc.target == "ties" and rounds:
        regime = "ties"
    elif rc.target == "edge":
        regime = "default"
    else:
        regime = draw(st.sampled_from(regimes), label="value regime")
    size = int(np.prod(shape, dtype=np.int64))
    if regime == "default":
        flat = rc.values(draw, in_t, shape).reshape(-1)
    else:
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="values seed"))
        flat = _bulk(rng, regime, in_t, out_t, size)
    # An integer input's special values stay integers (i64's ends are not floats).
    pool = [v if in_t.is_int else float(v) for v in special_values(in_t)] + _edges(in_t, out_t)
    if rc.target == "edge":
        # rc.values put the input type's special values first; the output type's
        # edges (overflow, underflow, saturation) follow them.
        start = len(edge_pool(in_t, ValueRange()))
        _place(flat, _edges(in_t, out_t), in_t, np.arange(start, size))
    elif size and wants_every_special(draw, rc, "every special value"):
        # Every special value and edge at once (a random part of them where the tensor
        # is smaller), so that NaN, infinities and subnormals are in most vectors.
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="positions"))
        order = [pool[int(k)] for k in rng.permutation(len(pool))]
        _place(flat, order, in_t, rng.permutation(size))
    elif size and regime != "default" and rc.target != "ties":  # default placed its own
        picks = draw(
            st.lists(
                st.tuples(st.integers(0, size - 1), st.sampled_from(pool)), max_size=min(8, size)
            ),
            label="special values",
        )
        for pos, v in picks:
            flat[pos] = _in_range(np.array([v]), in_t)[0]
    if in_t.is_float and out_t.is_int:
        # A NaN converted to an integer is unpredictable: an infinity (which saturates)
        # takes its place.  (To bool, 1.1's fp32 to bool, NaN != 0 is true.)
        f = flat.astype(np.float64)
        flat = np.where(np.isnan(f), np.inf, f).astype(in_t.storage)
    return flat.reshape(shape)


def format_writes(rc: RecipeContext, attribute: str) -> bool:
    """Whether the revision's flatbuffer format has a field for the operator's
    ``attribute`` (TOSA 1.1's CAST input_unsigned has none in the schema tosa-tools
    ships: only its default, false, can be written, by leaving it out)."""
    from vectors.layout_1_0 import layout_for

    layout = layout_for(rc.spec.revision)
    return layout is None or any(f.name == attribute for f in layout.attribute_fields(rc.name))


def _input_unsigned(draw: st.DrawFn, rc: RecipeContext) -> dict[str, object]:
    """``{"input_unsigned": ...}`` where CAST declares it (TOSA 1.1): true only for an
    integer input (the ERROR_IF) and where the format can write it; else false."""
    if not declares_input_unsigned(rc.op_spec):
        return {}
    allowed = is_integer(rc.dtype("in_t")) and format_writes(rc, "input_unsigned")
    unsigned = drawn_bool(draw, rc, "input_unsigned", allowed=allowed)
    return {"input_unsigned": True} if unsigned else {}  # false is its absence


# -- the block-scaled modes (TOSA 1.1) ------------------------------------------------


def composite_of(rc: RecipeContext) -> DType | None:
    """The mode's block-scaled type (in_t or out_t), None for a plain mode."""
    for var in ("in_t", "out_t"):
        if is_block_scaled(rc.dtype(var)):
            return rc.dtype(var)
    return None


def _fold_blocks(x: np.ndarray, in_t: DType) -> np.ndarray:
    """fp64 values in blocks, each block whose largest finite magnitude is outside
    [normal_min, normal_max] of ``in_t`` multiplied by the power of two that brings it
    just inside; then rounded into ``in_t`` (fp64 values of it)."""
    blocks = mx.block_view(x, mx.BLOCK_SIZE)
    with np.errstate(invalid="ignore"):
        m = np.max(np.where(np.isfinite(blocks), np.abs(blocks), 0.0), axis=-1)
    safe = np.where(m > 0, m, 1.0)
    lo, hi = float(in_t.fp.normal_min), float(in_t.fp.normal_max)
    down = np.floor(np.log2(hi / safe))  # m * 2**down <= hi, up to log2's rounding
    down = np.where(np.ldexp(safe, down.astype(np.int64)) > hi, down - 1, down)
    up = np.ceil(np.log2(lo / safe))
    shift = np.where(m > hi, down, np.where((m > 0) & (m < lo), up, 0.0)).astype(np.int64)
    with np.errstate(invalid="ignore", over="ignore"):
        moved = np.ldexp(blocks, shift[..., None]).reshape(x.shape)
        return round_to(in_t, moved).astype(np.float64)


def to_block_input(draw: st.DrawFn, rc: RecipeContext, shape: tuple[int, ...]) -> np.ndarray:
    """The float input of a cast to a block-scaled type, in ``in_t``'s storage."""
    in_t, vt = rc.dtype("in_t"), value_type(rc.dtype("out_t"))
    if float(in_t.fp.normal_max) >= 2.0**127:  # fp32, bf16: CAST_TO_BLOCK_SCALED's own types
        return cast_to_values(draw, rc, in_t, vt, shape)
    # Drawn as fp32 (its infinity block a NaN one where in_t has no infinity), then
    # folded into in_t's range block by block.
    wide = cast_to_values(draw, rc, dtypes.FP32, vt, shape).astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return _fold_blocks(wide, in_t).astype(in_t.storage)


def _exponent_range(dt: DType) -> tuple[int, int]:
    """Binary exponents from the smallest normal of ``dt`` to its largest binade."""
    return math.frexp(float(dt.fp.normal_min))[1] - 1, math.frexp(float(dt.fp.normal_max))[1] - 1


def from_block_input(
    draw: st.DrawFn, rc: RecipeContext, shape: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """(values, scales) of a block-scaled input (strategies.block_tensors: every
    encoding, the scale extremes in blocks of their own); unless drawn free, the other
    scales brought within the output's range: from where the largest value lands on
    the output's smallest subnormal (the output's subnormals and their ties) to where
    it lands in the output's top binade (the extremes 2**-127, 2**127 and NaN left
    where they are)."""
    in_t, out_t = rc.dtype("in_t"), rc.dtype("out_t")
    extremes = True if rc.target == "edge" else None
    pair: BlockScaled = draw(block_scaled_values(in_t, shape, label="input", extremes=extremes))
    codes = pair.scales.view(np.uint8).astype(np.int64)
    free = draw(st.integers(0, 3), label="input: scales free (0) or in the output's range")
    if free == 0 and rc.target != "ties":
        return pair.values, pair.scales
    lo, hi = _exponent_range(out_t)
    vt = value_type(in_t)
    top = 1 if vt is dtypes.MXINT8 else _exponent_range(vt)[1]
    least, most = lo - out_t.fp.normal_frac - top, hi - top
    kept = np.isin(codes, [0x00, 0xFE, mx.UE8M0_NAN])
    inside = np.clip(codes - mx.UE8M0_BIAS, least, most) + mx.UE8M0_BIAS
    scales = np.where(kept, codes, inside)
    return pair.values, mx.from_bits(scales.astype(np.uint8), dtypes.FP8UE8M0)


def _block_case(draw: st.DrawFn, rc: RecipeContext, bs_t: DType) -> CaseSpec:
    in_t, out_t = rc.dtype("in_t"), rc.dtype("out_t")
    lo, hi = rc.rank_range("input")
    bs = bs_t.block_size
    shape = draw(blocked_shapes(lo, hi, rc.budget, bs, label="shape"))
    if rc.target == "edge":  # a block for each of CAST_TO_BLOCK_SCALED's special blocks
        blocks = math.prod(shape) // bs
        more = -(-len(SPECIAL_BLOCKS) // blocks)
        if math.prod(shape) * more <= max(rc.budget.max_elements, bs * len(SPECIAL_BLOCKS)):
            shape = (*shape[:-1], shape[-1] * more)
    if is_block_scaled(out_t):
        x = TensorDraw("input", shape, in_t, to_block_input(draw, rc, shape))
    else:
        values, scales = from_block_input(draw, rc, shape)
        x = TensorDraw("input", shape, in_t, values, scales=scales)
    attributes = _input_unsigned(draw, rc)  # false: neither input is an integer
    return rc.spec_of([x], [TensorDraw("output", shape, out_t)], attributes=attributes)


@recipe("CAST")
def cast(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    bs_t = composite_of(rc)
    if bs_t is not None:
        return _block_case(draw, rc, bs_t)
    lo, hi = rc.rank_range("input")
    shape = draw(shapes(lo, hi, rc.budget, label="shape"))
    x = TensorDraw("input", shape, rc.dtype("in_t"), draw(_cast_values(rc, shape)))
    attributes = _input_unsigned(draw, rc)
    out = [TensorDraw("output", shape, rc.dtype("out_t"))]
    return rc.spec_of([x], out, attributes=attributes)


def _blocked(var: str) -> Callable[[RecipeContext], bool]:
    return lambda rc: is_block_scaled(rc.dtype(var))


def _rank_breaker(var: str, clause: str) -> None:
    @breaks("CAST", clause=clause, applies=_blocked(var))
    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        """The input and output of rank 0, which a block-scaled tensor cannot have."""
        out = broken(spec, clause)
        out.reshape_tensor("input", ())
        out.replace_tensor("output", shape=())
        return out

    fn.__name__ = f"cast_{var}_block_rank_0"


def _shape_breaker(var: str, clause: str) -> None:
    @breaks("CAST", clause=clause, applies=_blocked(var))
    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        """The innermost dimension (the input's and the output's) off the block grid."""
        t = spec.tensor("input")
        bs = rc.dtype(var).block_size
        delta = draw(st.integers(1, bs - 1), label="innermost off the block grid by")
        inner = t.shape[-1] - delta if t.shape[-1] > delta else t.shape[-1] + delta
        shape = (*t.shape[:-1], inner)
        out = broken(spec, clause)
        out.reshape_tensor("input", shape)
        out.replace_tensor("output", shape=shape)
        return out

    fn.__name__ = f"cast_{var}_off_block"


_rank_breaker("in_t", BLOCK_RANK_IN_CLAUSE)
_shape_breaker("in_t", BLOCK_SHAPE_IN_CLAUSE)
_rank_breaker("out_t", BLOCK_RANK_OUT_CLAUSE)
_shape_breaker("out_t", BLOCK_SHAPE_OUT_CLAUSE)


@breaks(
    "CAST",
    clause=INPUT_UNSIGNED_CLAUSE,
    applies=lambda rc: declares_input_unsigned(rc.op_spec) and not is_integer(rc.dtype("in_t")),
    packable=lambda rc: format_writes(rc, "input_unsigned"),
)
def unsigned_non_integer(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """input_unsigned on a float or bool input, which only an integer can be read as."""
    out = broken(spec, INPUT_UNSIGNED_CLAUSE)
    out.attributes["input_unsigned"] = True
    return out

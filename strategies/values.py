"""Tensor values per TOSA element type, as Hypothesis strategies.

A conformance vector needs realistic bulk data (full-range integers, floats across
many binades) *and* the special values backends get wrong (+-0, +-inf, NaN,
subnormals, the largest and smallest values, integer extremes).  Drawing every
element through Hypothesis would make large tensors slow and mostly constant, so a
tensor is drawn as: a numpy seed and a distribution for the bulk, plus a short list
of (position, special value) overrides.  Shapes, seeds and overrides all shrink, so a
failing case still reduces to a small tensor with the one value that matters.

The recipes also choose per case: a value regime for a float operand
(:func:`float_regime`), and special values put into a drawn case's inputs
(:func:`add_specials`, :func:`wants_every_special`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from hypothesis import strategies as st

from conformance.dtypes import DType

if TYPE_CHECKING:  # strategies.recipes imports this module
    from strategies.case import CaseSpec
    from strategies.recipes import RecipeContext


def special_values(dt: DType) -> list[float | int | bool]:
    """The values of ``dt`` that implementations most often get wrong (those the type
    has: fp4e2m1 and the fp6 types have no NaN, fp8ue8m0 no zero, sign or subnormal)."""
    if dt.kind == "bool":
        return [False, True]
    if dt.kind in ("int", "shape"):
        lo, hi = dt.int_range
        return sorted({lo, lo + 1, -1, 0, 1, hi - 1, hi})
    if dt.kind == "fixed":  # mxint8: codes, the value being code / 2**frac_bits
        lo, hi = _codes(dt)
        one = 1 << dt.frac_bits
        return sorted({lo, lo + 1, -one, -1, 0, 1, one, hi})
    smallest_sub = dt.fp.normal_min * 2.0**-dt.fp.normal_frac
    out: list[float] = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        dt.fp.normal_min,
        -dt.fp.normal_min,
        smallest_sub,
        -smallest_sub,
        dt.fp.normal_min - smallest_sub,  # largest subnormal
        dt.fp.normal_max,
        -dt.fp.normal_max,
        float("nan"),
    ]
    if dt.has_inf:
        out += [float("inf"), float("-inf")]
    return [v for v in out if _holds(dt, v)]


def _codes(dt: DType) -> tuple[int, int]:
    """The code range of a fixed-point type (mxint8: the int8 codes -128..127)."""
    info = np.iinfo(dt.storage)
    return int(info.min), int(info.max)


def _holds(dt: DType, v: float) -> bool:
    """Whether ``v`` is a value of float type ``dt`` (NaN where it has one, a zero or a
    negative value where it has them, a subnormal where it has mantissa bits)."""
    if np.isnan(v):
        return dt.has_nan
    if not dt.signed and (v < 0 or np.signbit(v)):
        return False
    if v == 0:  # fp8ue8m0 has none: 0.0 becomes its NaN
        return bool(np.asarray(0.0).astype(dt.storage).astype(np.float64) == 0.0)
    if abs(v) < dt.fp.normal_min:
        return dt.fp.normal_frac > 0
    return True


def narrow_encodings(dt: DType) -> list[float]:
    """Every value of a float type of at most 6 bits (fp4e2m1's 16 encodings, the fp6
    types' 64), in code order: few enough that an edge case holds them all, and each
    is a code a decoder can get wrong.  Empty for wider types."""
    from reference.mx import encodings

    if not dt.is_float or dt.bits > 6:
        return []
    return [float(v) for v in encodings(dt).astype(np.float64)]


@dataclass(frozen=True)
class ValueRange:
    """Bounds a recipe puts on a tensor's values so the case stays valid."""

    low: float | None = None
    high: float | None = None
    specials: bool = True  # may special values be placed
    finite: bool = False  # no inf/NaN even among specials
    nonzero: bool = False


def _bulk(
    rng: np.random.Generator, dt: DType, shape: tuple[int, ...], r: ValueRange, dist: int
) -> np.ndarray:
    if dt.kind == "bool":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dt.kind in ("int", "shape"):
        return _bulk_int(rng, dt, shape, r, dist)
    if dt.kind == "fixed":
        return _bulk_codes(rng, dt, shape, r, dist)
    # floats: dist 0 uniform in the range, 1 standard normal, 2 log-uniform magnitudes
    lo = -4.0 if r.low is None else r.low
    hi = 4.0 if r.high is None else r.high
    if dist == 0:
        vals = rng.uniform(lo, hi, size=shape)
    elif dist == 1:
        vals = np.clip(rng.standard_normal(size=shape) * (hi - lo) / 4 + (hi + lo) / 2, lo, hi)
    else:
        top = max(abs(lo), abs(hi), 1e-30)
        emin = np.log2(dt.fp.normal_min)
        mags = 2.0 ** rng.uniform(emin, np.log2(top), size=shape)
        signs = np.where(rng.integers(0, 2, size=shape) == 0, -1.0, 1.0)
        vals = np.clip(mags * signs, lo, hi)
    if r.nonzero:
        vals = np.where(vals == 0, hi, vals)
    with np.errstate(over="ignore"):
        return vals.astype(dt.storage)


def _bulk_int(
    rng: np.random.Generator, dt: DType, shape: tuple[int, ...], r: ValueRange, dist: int
) -> np.ndarray:
    tlo, thi = dt.int_range
    lo = tlo if r.low is None else int(max(r.low, tlo))
    hi = thi if r.high is None else int(min(r.high, thi))
    if dist == 1:  # small magnitudes: where most integer arithmetic happens
        lo, hi = max(lo, -16), min(hi, 16)
        if lo > hi:
            lo, hi = hi, lo
    vals = rng.integers(lo, hi, size=shape, endpoint=True)
    if r.nonzero:
        vals = np.where(vals == 0, hi if hi != 0 else lo, vals)
    return vals.astype(dt.storage)


def _bulk_codes(
    rng: np.random.Generator, dt: DType, shape: tuple[int, ...], r: ValueRange, dist: int
) -> np.ndarray:
    """Fixed-point codes; the range's bounds are values (code / 2**frac_bits)."""
    lo, hi = _code_bounds(dt, r)
    if dist == 1:  # small magnitudes, as for integers
        lo, hi = max(lo, -16), min(hi, 16)
    vals = rng.integers(lo, hi, size=shape, endpoint=True)
    if r.nonzero:
        vals = np.where(vals == 0, hi if hi != 0 else lo, vals)
    return vals.astype(dt.storage)


def _code_bounds(dt: DType, r: ValueRange) -> tuple[int, int]:
    lo, hi = _codes(dt)
    unit = 1 << dt.frac_bits
    if r.low is not None:
        lo = max(lo, int(np.ceil(r.low * unit)))
    if r.high is not None:
        hi = min(hi, int(np.floor(r.high * unit)))
    return lo, hi


def boundary_values(dt: DType, r: ValueRange) -> list[float | int]:
    """A recipe's value bounds and their inner neighbours: where a recipe bounds a
    tensor, the bound is the operator's own boundary (a shift limit, a saturation
    point, an overflow edge), so both sides of it belong in the data."""
    out: list[float | int] = []
    if dt.kind in ("int", "shape"):
        # An integer bound is taken as it is: i64 bounds are not exact in float64.
        lo = None if r.low is None else _int_bound(r.low, np.ceil)
        hi = None if r.high is None else _int_bound(r.high, np.floor)
        if lo is not None:
            out += [lo, lo + 1]
        if hi is not None:
            out += [hi, hi - 1]
        return [v for v in out if dt.int_range.min <= v <= dt.int_range.max]
    if dt.kind == "fixed":
        lo, hi = _code_bounds(dt, r)
        return [c for c, b in ((lo, r.low), (hi, r.high)) if b is not None]
    if dt.is_float:
        for b in (r.low, r.high):
            if b is not None and np.isfinite(b):
                out.append(float(np.asarray(b).astype(dt.storage)))
    return out


def _int_bound(bound: float, rounding: Callable[[float], float]) -> int:
    """A value bound as an integer: itself when it is one, else rounded inward."""
    if isinstance(bound, int | np.integer):
        return int(bound)
    return int(rounding(bound))


def edge_pool(dt: DType, r: ValueRange) -> list[float | int | bool]:
    """Every special value of ``dt`` the range allows, and the range's own bounds; for
    fp4e2m1 and the fp6 types every other encoding as well (always: the whole type)."""
    pool: list[float | int | bool] = []
    for v in [*special_values(dt), *boundary_values(dt, r), *narrow_encodings(dt)]:
        if not _allowed_special(v, dt, r):
            continue
        if any(_same(v, w) for w in pool):
            continue
        pool.append(v)
    return pool


def _same(a: float | int | bool, b: float | int | bool) -> bool:
    fa, fb = float(a), float(b)
    if np.isnan(fa) or np.isnan(fb):
        return bool(np.isnan(fa) and np.isnan(fb))
    return fa == fb and np.signbit(fa) == np.signbit(fb)


def place_edge_values(
    arr: np.ndarray, dt: DType, r: ValueRange, position: int, span: int = 2
) -> None:
    """Overwrite the first elements of ``arr`` with the edge pool so that, across the
    inputs of one operator (``position`` 0, 1, 2 ...), every pair of special values
    meets: input k cycles through the pool every P**k elements (P the pool size), as
    digits of a base-P counter over the first P**span elements (``span``: how many
    operands are paired, at least ``position + 1``).  The pool's NaN takes the type's
    NaN encodings in turn (NAN_ENCODINGS).  A NaN also goes to the first, the middle
    and the last element, so reductions and windows see it at each place along an
    axis."""
    pool = edge_pool(dt, r)
    flat = arr.reshape(-1)
    if not pool or not flat.size:
        return
    n = len(pool)
    # The pattern starts at element 1 in every operand, so element 0 is free for the
    # first NaN and the pairs still line up across operands.
    start = 1 if flat.size > 1 else 0
    # A lone float operand runs through the pool once per NaN encoding (below), where
    # the tensor has room: its one NaN per pass would otherwise take only the first.
    lone = dt.is_float and max(span, position + 1) == 1
    passes = len(NAN_ENCODINGS.get(dt.name, (0,))) if lone else 1
    count = min(flat.size - start, n ** max(span, position + 1) * passes)
    # An operand too small for its digit (a bias of OC elements, third of three) cycles
    # through the pool one value per element instead, so it still holds each of them.
    step = n**position if count >= n ** (position + 1) else 1
    digits = (np.arange(count) // step) % n
    with np.errstate(over="ignore", invalid="ignore"):
        vals = np.asarray(pool, dtype=np.float64 if dt.is_float else object)
        flat[start : start + count] = vals[digits].astype(dt.storage)
        if not dt.is_float or not any(np.isnan(float(v)) for v in pool):
            if dt.is_float and not dt.has_nan and start:  # element 0 has no NaN to
                flat[0] = np.asarray(pool[-1]).astype(dt.storage)  # hold: 64 fp6 codes in 64
            return
        # The pool's NaN takes each of the type's NaN encodings in turn, so each meets
        # the other operands' values: a kernel that tests one bit pattern (the quiet
        # bit, the sign) for NaN, or converts by bits, meets the encodings it gets wrong.
        encodings = np.asarray(NAN_ENCODINGS[dt.name], dtype=f"u{dt.storage.itemsize}")
        bits = flat.view(encodings.dtype)
        where = start + np.flatnonzero(np.isnan(vals[digits].astype(np.float64)))
        bits[where] = encodings[np.arange(where.size) % encodings.size]
        if arr.ndim and start:
            nan = np.asarray(np.nan).astype(dt.storage)
            centre = tuple(d // 2 for d in arr.shape)
            arr[centre] = nan
            flat[0] = nan
            flat[-1] = nan


def _allowed_special(v: float | int | bool, dt: DType, r: ValueRange) -> bool:
    if dt.kind == "bool":
        return True
    fv = float(v) / (1 << dt.frac_bits) if dt.kind == "fixed" else float(v)
    if r.finite and not np.isfinite(fv):
        return False
    if r.nonzero and fv == 0:
        return False
    if np.isnan(fv):
        return not r.finite and r.low is None and r.high is None
    if r.low is not None and fv < r.low:
        return False
    return not (r.high is not None and fv > r.high)


@st.composite
def tensor_values(
    draw: st.DrawFn,
    dt: DType,
    shape: tuple[int, ...],
    value_range: ValueRange | None = None,
    *,
    label: str = "values",
    edge: int | None = None,
    edge_span: int = 2,
) -> np.ndarray:
    """An array of ``shape`` in ``dt``'s storage type.  With ``edge`` (the operand's
    position among the operator's inputs) every special value the range allows is
    placed by construction (:func:`place_edge_values`) rather than drawn."""
    r = value_range or ValueRange()
    seed = draw(st.integers(0, 2**32 - 1), label=f"{label}: seed")
    dist = draw(st.integers(0, 2), label=f"{label}: distribution")
    # asarray: a rank-0 draw must stay an array, so the overrides below land in it
    arr = np.asarray(_bulk(np.random.default_rng(seed), dt, shape, r, dist))
    size = arr.size
    if edge is not None and r.specials:
        place_edge_values(arr, dt, r, edge, edge_span)
        return arr
    if size and r.specials:
        pool = [v for v in edge_pool(dt, r)]
        if pool:
            overrides = draw(
                st.lists(
                    st.tuples(st.integers(0, size - 1), st.sampled_from(pool)),
                    max_size=min(8, size),
                ),
                label=f"{label}: special values",
            )
            flat = arr.reshape(-1)
            for pos, v in overrides:
                with np.errstate(over="ignore", invalid="ignore"):
                    flat[pos] = np.asarray(v).astype(dt.storage)
    return arr


# Per float type with a NaN: a quiet NaN, a negative quiet NaN, and a NaN whose payload
# is only in the low bits (signalling where the format has signalling NaNs: a truncating
# conversion makes it an infinity; fp8e4m3 has one NaN per sign, fp8ue8m0 one: 0xFF).
# fp4e2m1 and the fp6 types have no NaN.
NAN_ENCODINGS: dict[str, tuple[int, ...]] = {
    "fp32": (0x7FC00000, 0xFFC00000, 0x7F800001),
    "fp16": (0x7E00, 0xFE00, 0x7C01),
    "bf16": (0x7FC0, 0xFFC0, 0x7F81),
    "fp8e4m3": (0x7F, 0xFF, 0x7F),
    "fp8e5m2": (0x7E, 0xFE, 0x7D),
    "fp8ue8m0": (0xFF,),
}


# Bit patterns that data movement must carry unchanged: a NaN with a payload (signalling
# where the format has one) and -0.0, per floating-point type.
SPECIAL_BITS: dict[str, list[int]] = {
    "fp16": [0x7C01, 0x8000],
    "bf16": [0x7F81, 0x8000],
    "fp32": [0x7F800001, 0x80000000],
    "fp8e4m3": [0xFF, 0x80],
    "fp8e5m2": [0x7D, 0x80],
}


def sample_storage(rng: np.random.Generator, dt: DType, shape: tuple[int, ...]) -> np.ndarray:
    """Plain numpy sample of ``dt`` values (full integer range; floats with the
    SPECIAL_BITS patterns in their first elements), for tests that need data but no
    shrinking."""
    if dt.kind == "bool":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dt.kind in ("int", "shape"):
        lo, hi = dt.int_range
        return rng.integers(lo, hi, size=shape, endpoint=True).astype(dt.storage)
    x = np.asarray((rng.standard_normal(shape) * 4).astype(dt.storage))
    flat = x.view(f"u{dt.storage.itemsize}").reshape(-1)
    special = SPECIAL_BITS.get(dt.name, [])[: flat.size]
    flat[: len(special)] = special
    return x


# -- value regimes and special values, per case -------------------------------------


def float_regime(
    draw: st.DrawFn, dt: DType, *extra: ValueRange | None, rc: RecipeContext | None = None
) -> ValueRange | None:
    """One value regime per case for a float operand: the default (small values and
    every special value, NaN and infinities included), the whole finite range, or one
    of the operator's own ranges (where its interesting results are).  A ValueRange
    with bounds drops NaN and out-of-range infinities, hence a choice per case rather
    than one range for all; an "edge" target always takes the default."""
    if rc is not None and rc.target == "edge":
        return None
    full = ValueRange(low=-dt.fp.normal_max, high=dt.fp.normal_max)
    return draw(st.sampled_from([None, full, *extra]), label="value regime")


def add_specials(
    draw: st.DrawFn, spec: CaseSpec, names: tuple[str, ...], rc: RecipeContext | None = None
) -> None:
    """Put special values (NaN, infinities, signed zeros, subnormals, extremes) into
    the named float inputs: a few at drawn positions, or, in some cases, every one of
    them at once, so that each turns up in a handful of cases rather than by luck (and
    also where the bulk was drawn in a bounded range, which drops NaN and infinities).
    Nothing for an "edge" target: rc.values has placed them all, paired across the
    inputs.  Only for operators with no REQUIRE on these values: the behaviour tables
    define every special result."""
    if rc is not None and rc.target == "edge":
        return  # rc.values placed every special value, paired across the inputs
    for t in spec.inputs:
        if t.name not in names or not t.dtype.is_float or t.values is None or not t.values.size:
            continue
        pool = special_values(t.dtype)
        flat = t.values.reshape(-1)  # a view: what is written lands in t.values
        label = f"{t.name}: every special value"
        every = wants_every_special(draw, rc, label) if rc else draw(st.booleans(), label=label)
        if every:
            rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="positions"))
            # Distinct positions, the pool shuffled: a tensor smaller than the pool
            # gets a random part of it.
            order = zip(rng.permutation(flat.size), rng.permutation(len(pool)), strict=False)
            overrides = [(int(p), pool[int(k)]) for p, k in order]
        else:
            where = st.integers(0, flat.size - 1)
            overrides = draw(
                st.lists(st.tuples(where, st.sampled_from(pool)), max_size=min(4, flat.size)),
                label=f"{t.name}: special values",
            )
        for pos, v in overrides:
            with np.errstate(over="ignore", invalid="ignore"):
                flat[pos] = np.asarray(v).astype(t.dtype.storage)


def wants_every_special(draw: st.DrawFn, rc: RecipeContext, label: str) -> bool:
    """Whether a case places every special value of its inputs' types at random
    positions: never for "edge" (rc.values places them in order) and "ties" (whose
    values are built), else in some cases."""
    if rc.target in ("edge", "ties"):
        return False
    return draw(st.booleans(), label=label)

"""tosa_reference_check_fp_bnd, element-wise: is each result inside the interval the
spec allows around its fp64 reference, and how much of that interval it used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from conformance.dtypes import DType

from .denormals import FLUSH_ALLOWED, MUST_SUPPORT

if TYPE_CHECKING:
    from .revision_rules import FpCheck

_JUST_OVER_ONE = float(np.nextafter(1.0, 2.0))


@dataclass(frozen=True)
class BoundResult:
    """Per-element outcome of a bound check, all arrays shaped like the output.

    ``low`` / ``high`` are the allowed interval in the output's own sign (the check
    itself works on magnitudes); ``margin`` is described in ``within_bound``.
    """

    ok: np.ndarray
    margin: np.ndarray
    low: np.ndarray
    high: np.ndarray


def within_bound(
    ref: np.ndarray,
    actual: np.ndarray,
    err_bnd: np.ndarray,
    out: DType,
    *,
    zero_sign: bool = False,
    err_low: np.ndarray | None = None,
    style: FpCheck = "widened",
) -> BoundResult:
    """Check ``actual`` (fp64 copy of the output) against ``ref`` +/- ``err_bnd``.

    The interval follows the pseudocode: the reference is made non-negative (flipping
    the result with it), then ``ref +/- err_bnd`` is widened where it leaves the
    normal range: an upper end past ``normal_max`` becomes infinity (a result may
    overflow), a lower end past it too (it must overflow); an upper end below
    ``normal_min`` is raised to it, and a lower end below it drops to zero (or stays
    negative), which is what lets subnormal results be flushed to zero.  Not for
    fp8e4m3 / fp8e5m2, whose denormals must be supported (introduction, Supported
    Number Formats): their interval is ``ref +/- err_bnd`` below normal_min too.

    Where the spec's arithmetic is undefined this chooses its evident intent:

    * an infinite reference allows only the same infinity, even when ``err_bnd`` is
      infinite too (``inf - inf`` would otherwise make every result fail);
    * for a type without infinity (fp8e4m3) NaN stands for the infinity the interval
      reaches, since the spec's non-saturating conversion overflows to NaN there.

    With ``zero_sign`` a zero result for a non-zero reference (an underflow) must also
    carry the reference's sign, as the precision table demands of several operators;
    the interval alone accepts either zero because -0.0 >= 0.  A reference that is
    itself zero is left to the interval: the table only constrains underflows.

    ``margin`` is the distance from the reference over the distance to the interval's
    end on the same side: 0 for an exact result, 1 at the edge, above 1 outside (inf
    for a NaN mismatch or a finite result where only infinity is allowed).  On a side
    that is unbounded (overflow allowed) a value inside has margin 0.

    ``err_low``, when given, is the allowed error on the side toward zero (1.0's CAST
    between float types allows a whole ulp there, half an ulp away from zero).

    ``style`` is the revision's version of the check (revision_rules.FpCheck): with
    "flush-zero" (TOSA 1.0) an infinite or NaN ``err_bnd`` accepts any result (but a
    NaN reference still needs a NaN, an infinite one its infinity), the interval is
    not widened below normal_min, a lower end past -normal_max becomes -infinity, and
    for fp16 / bf16 / fp32 a zero result (of either sign) passes exactly where the
    lower end is below normal_min.
    """
    ref_nan = np.isnan(ref)
    flip = ref < 0  # -0.0 is not < 0, exactly as in the pseudocode
    r = np.where(flip, -ref, ref)
    t = np.where(flip, -actual, actual)
    low_bnd = err_bnd if err_low is None else err_low
    with np.errstate(invalid="ignore", over="ignore"):
        hi = r + err_bnd
        lo = r - low_bnd
    hi = np.where(hi > out.normal_max, np.inf, hi)
    lo = np.where(lo > out.normal_max, np.inf, lo)
    if style == "flush-zero":
        return _within_flush_zero(ref, actual, r, t, flip, err_bnd, lo, hi, out, zero_sign)
    if out not in MUST_SUPPORT:
        # The pseudocode's widening below normal_min is what lets a subnormal result
        # flush to zero; fp8 denormals must be supported, so fp8 keeps the plain interval.
        hi = np.where(hi < out.fp.normal_min, out.fp.normal_min, hi)
        lo = np.where(lo < out.normal_min, np.minimum(0.0, lo), lo)
    lo = np.where(np.isinf(r), np.inf, lo)

    ok = (t >= lo) & (t <= hi)
    if not out.has_inf:
        ok |= np.isnan(t) & np.isposinf(hi)
    t_nan = np.isnan(t)
    ok = np.where(ref_nan, t_nan, ok)
    wrong_zero = _wrong_zero(actual, ref, ok.shape, zero_sign)
    ok &= ~wrong_zero

    raw, sane = _error_ratio(t, r, lo, hi)
    # Inside the interval a non-finite ratio only comes from an unbounded side.
    margin = np.where(ok, np.where(sane, raw, 0.0), np.where(sane & (raw > 1), raw, np.inf))
    # A result just past the edge can round to a ratio of exactly 1; keep margin > 1
    # for every failure so that "margin <= 1" and "passed" always agree.
    margin = np.where(~ok & sane & (raw <= 1), _JUST_OVER_ONE, margin)
    margin = np.where(ref_nan, np.where(t_nan, 0.0, np.inf), margin)
    margin = np.where(wrong_zero, np.inf, margin)  # a sign error has no error ratio

    low = np.where(flip, -hi, lo)
    high = np.where(flip, -lo, hi)
    return BoundResult(ok=ok, margin=margin, low=low, high=high)


def _wrong_zero(
    actual: np.ndarray, ref: np.ndarray, shape: tuple[int, ...], zero_sign: bool
) -> np.ndarray:
    """Where a zero result carries the other sign than a non-zero reference (an
    underflow), for the operators whose precision rule keeps the sign."""
    if not zero_sign:
        return np.zeros(shape, dtype=bool)
    return np.asarray((actual == 0) & (ref != 0) & (np.signbit(actual) != np.signbit(ref)))


def _error_ratio(
    t: np.ndarray, r: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The distance from the reference over the distance to the interval's end on the
    same side, and where that ratio means something (finite, and room to err)."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        d = t - r
        room = np.where(d > 0, hi - r, r - lo)
        raw = np.where(d == 0, 0.0, np.abs(d) / room)
    return raw, np.isfinite(raw) & ((room > 0) | (d == 0))


def _within_flush_zero(
    ref: np.ndarray,
    actual: np.ndarray,
    r: np.ndarray,
    t: np.ndarray,
    flip: np.ndarray,
    err_bnd: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    out: DType,
    zero_sign: bool,
) -> BoundResult:
    """TOSA 1.0's tosa_reference_check_fp_bnd on the flipped values (see within_bound)."""
    ref_nan = np.isnan(ref)
    # An infinite reference keeps its infinity whatever the bound: the operators'
    # behavior tables give it (EXP(+inf) = +inf), reading v1-infinite-reference.
    unbounded = ~np.isfinite(err_bnd) & np.isfinite(ref)
    lo = np.where(lo < -out.fp.normal_max, -np.inf, lo)
    lo = np.where(np.isinf(r), np.inf, lo)
    in_interval = (t >= lo) & (t <= hi)
    ok = in_interval
    flushed = np.zeros(ok.shape, dtype=bool)
    if out in FLUSH_ALLOWED:
        # A zero result stands for a flushed subnormal wherever the interval reaches
        # below normal_min; it is judged by that alone.
        flushed = (t == 0) & (lo < out.fp.normal_min)
        ok = np.where(t == 0, flushed, ok)
    t_nan = np.isnan(t)
    if not out.has_inf:
        ok = np.where(t_nan, np.isposinf(hi), ok)
    ok = np.where(unbounded, True, ok)
    ok = np.where(ref_nan, t_nan, ok)
    wrong_zero = _wrong_zero(actual, ref, ok.shape, zero_sign)
    ok &= ~wrong_zero

    raw, sane = _error_ratio(t, r, lo, hi)
    margin = np.where(ok, np.where(sane, raw, 0.0), np.where(sane & (raw > 1), raw, np.inf))
    # An accepted flush can lie outside the interval: it uses the whole bound.
    margin = np.where(ok & flushed & ~in_interval, 1.0, margin)
    margin = np.where(~ok & sane & (raw <= 1), _JUST_OVER_ONE, margin)
    margin = np.where(unbounded, 0.0, margin)
    margin = np.where(ref_nan, np.where(t_nan, 0.0, np.inf), margin)
    margin = np.where(wrong_zero, np.inf, margin)

    low = np.where(flip, -hi, lo)
    high = np.where(flip, -lo, hi)
    return BoundResult(ok=ok, margin=margin, low=low, high=high)

"""The precision rules TOSA 1.1 gives the block-scaled (MX) operators, element-wise
and vectorised: ``tosa_reference_check_fp_bnd``, ``tosa_reference_check_fp``,
``tosa_reference_check_from_block`` and ``tosa_reference_check_scale``
(pseudocode/library/tosa_reference_check.tosac of the 1.1 draft).  (The block-scaled
dot products' relaxed ABS_BOUND / VARIANCE_ERROR_BOUND rows are the dot product
check's, keyed by the descriptor's input_dtypes: reference/compliance/dot_product.py.)

What 1.1 adds to 1.0's bound check is for the types without infinity or NaN (fp4e2m1,
fp6e2m3, fp6e3m2, mxint8): the interval is clamped to the type's range instead of
widened to infinity (a saturated result passes), and a NaN reference accepts any
result of such a type.  ``has_Inf`` / ``has_NaN`` are generic_helpers.tosac's lists,
read as written (fp8ue8m0 is a floating-point type not in the no-infinity list, so
``has_Inf<fp8ue8m0_t>()`` is true: reading ``mx-ue8m0-has-inf``).

CAST_FROM_BLOCK_SCALED's rule needs one output and its input scales, so it is an
ordinary ABS_ERROR check whose bound tensor is :func:`from_block_error_bound` (for its
bf16 / fp32 outputs 1.1's bound check is 1.0's).  CAST_TO_BLOCK_SCALED's rule checks
the values an implementation returns against the scale it returned, two outputs at
once: :func:`check_scale` is that check, and :func:`check_scaled_values` applies it to
a SCALED_VALUES output and the BLOCK_SCALES output its descriptor names (the scale is
judged there, once, with its block's values).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from conformance import dtypes
from conformance.compliance_descriptor import ComplianceDescriptor, ScaledValuesParams
from conformance.dtypes import DType

from .verdict import MAX_REPORTED, ScalesVerdict, Verdict, _fmt, _nd_indices

# generic_helpers.tosac: has_Inf is false for these, has_NaN for all but fp8e4m3.
NO_INF: frozenset[str] = frozenset({"fp8e4m3", "fp6e2m3", "fp6e3m2", "fp4e2m1", "mxint8"})
NO_NAN: frozenset[str] = frozenset({"fp6e2m3", "fp6e3m2", "fp4e2m1", "mxint8"})
# The types whose zero results may stand for flushed subnormals.
FLUSHABLE: frozenset[str] = frozenset({"bf16", "fp16", "fp32"})

CAST_FROM_RULE = (
    "1.1 type_conversion, CAST_FROM_BLOCK_SCALED Precision Requirements: "
    "tosa_reference_check_from_block"
)
CAST_TO_RULE = (
    "1.1 type_conversion, CAST_TO_BLOCK_SCALED Precision Requirements: tosa_reference_check_scale"
)


def has_inf(dt: DType) -> bool:
    return dt.name not in NO_INF


def has_nan(dt: DType) -> bool:
    return dt.name not in NO_NAN


def normal_lowest(dt: DType) -> float:
    """normal_lowest<dt>: -2 for mxint8, -normal_max otherwise."""
    if dt is dtypes.MXINT8:
        return -2.0
    return -float(dt.fp.normal_max)


def _normal_max(dt: DType) -> float:
    if dt is dtypes.MXINT8:
        return 1.0 + 63.0 / 64.0
    return float(dt.fp.normal_max)


def _normal_min(dt: DType) -> float:
    if dt is dtypes.MXINT8:
        return 1.0 / 64.0
    return float(dt.fp.normal_min)


def _frac(dt: DType) -> int:
    return 0 if dt is dtypes.MXINT8 else int(dt.normal_frac or 0)


def _pow2_floor(mag: np.ndarray) -> np.ndarray:
    """exp2(ilog2(mag)) for positive finite magnitudes (1 elsewhere)."""
    ok = np.isfinite(mag) & (mag > 0)
    _, e = np.frexp(np.where(ok, mag, 1.0))
    return np.where(ok, np.ldexp(1.0, e - 1), 1.0)


def ulp(ref: np.ndarray, dt: DType) -> np.ndarray:
    """tosa_reference_check_fp's val_ulp: 1/64 for mxint8; one ulp of the reference's
    binade (never below normal_min's) for the floats; 0 at zero, infinity and NaN."""
    r = np.asarray(ref, dtype=np.float64)
    if dt is dtypes.MXINT8:
        return np.full(r.shape, 1.0 / 64.0)
    mag = np.abs(r)
    pow2 = np.maximum(_pow2_floor(mag), _normal_min(dt))
    return np.where(np.isfinite(mag) & (mag != 0), np.ldexp(pow2, -_frac(dt)), 0.0)


def check_fp_bnd(test: np.ndarray, ref: np.ndarray, err_bnd: np.ndarray, dt: DType) -> np.ndarray:
    """tosa_reference_check_fp_bnd<dt> of TOSA 1.1, element-wise (``test`` in fp64)."""
    t = np.asarray(test, dtype=np.float64)
    r = np.asarray(ref, dtype=np.float64)
    err = np.broadcast_to(np.asarray(err_bnd, dtype=np.float64), r.shape)
    t, r = np.broadcast_arrays(t, r)
    neg = r < 0.0
    top, low = _normal_max(dt), normal_lowest(dt)
    high_cap = np.where(neg, -low, top)
    low_cap = np.where(neg, -top, low)
    rv = np.where(neg, -r, r)
    tv = np.where(neg, -t, t)
    with np.errstate(invalid="ignore", over="ignore"):
        ref_max = rv + err
        ref_min = rv - err
    if not has_inf(dt) and not has_nan(dt):
        ref_max = np.where(ref_max > high_cap, high_cap, ref_max)
        ref_min = np.where(ref_min > high_cap, high_cap, ref_min)
        ref_min = np.where(ref_min < low_cap, low_cap, ref_min)
    else:
        ref_max = np.where(ref_max > high_cap, np.inf, ref_max)
        ref_min = np.where(ref_min > high_cap, np.inf, ref_min)
        ref_min = np.where(ref_min < low_cap, -np.inf, ref_min)
    with np.errstate(invalid="ignore"):
        ok = (tv >= ref_min) & (tv <= ref_max)
    if dt.name in FLUSHABLE:
        ok = np.where(t == 0, ref_min < _normal_min(dt), ok)
    if not has_inf(dt):
        ok = np.where(np.isnan(t), ref_max == np.inf, ok)
    ok = np.where(~np.isfinite(err), True, ok)
    nan_ref = np.isnan(r)
    ok = np.where(nan_ref, (not has_nan(dt)) | np.isnan(t), ok)
    return np.asarray(ok, dtype=bool)


def check_fp(test: np.ndarray, ref: np.ndarray, num_ulp: float, dt: DType) -> np.ndarray:
    """tosa_reference_check_fp<dt>(test, ref, num_ulp), element-wise."""
    return check_fp_bnd(test, ref, ulp(ref, dt) * num_ulp, dt)


def from_block_error_bound(ref: np.ndarray, scale: np.ndarray, out_t: DType) -> np.ndarray:
    """tosa_reference_check_from_block's err_bnd: one ulp of out_t at ``ref / scale``
    (the block value) times the scale, at least normal_min<out_t>; 0 where the
    reference is zero, not finite, or the scale NaN.  ``scale`` per element."""
    r = np.asarray(ref, dtype=np.float64)
    s = np.broadcast_to(np.asarray(scale, dtype=np.float64), r.shape)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        value = np.abs(r / s)
        pow2 = np.maximum(_pow2_floor(value), _normal_min(out_t))
        err = np.maximum(np.ldexp(pow2, -_frac(out_t)) * s, _normal_min(out_t))
    bounded = np.isfinite(r) & (r != 0) & ~np.isnan(s)
    return np.where(bounded, err, 0.0)


def check_from_block(
    test: np.ndarray, ref: np.ndarray, scale: np.ndarray, out_t: DType
) -> np.ndarray:
    """tosa_reference_check_from_block<in_t, out_t>, element-wise."""
    return check_fp_bnd(test, ref, from_block_error_bound(ref, scale, out_t), out_t)


# The value check's ulp allowance (2 for fp8e4m3, 1 for the others).
def value_ulps(value_t: DType) -> int:
    return 2 if value_t is dtypes.FP8E4M3 else 1


@dataclass(frozen=True)
class ScaleCheck:
    """tosa_reference_check_scale over a tensor: per block, whether the scale passes;
    per element, whether its value passes against the scale the implementation gave
    (where the scale passed); ``ok`` per element is both."""

    scale_ok: np.ndarray  # [..., C / block_size]
    value_ok: np.ndarray  # [..., C]
    ok: np.ndarray  # [..., C]

    @property
    def passed(self) -> bool:
        return bool(self.ok.all())


def check_scale(
    test_scale: np.ndarray,
    test_value: np.ndarray,
    ref_scale: np.ndarray,
    x: np.ndarray,
    value_t: DType,
    block_size: int,
    scale_t: DType = dtypes.FP8UE8M0,
) -> ScaleCheck:
    """CAST_TO_BLOCK_SCALED's precision rule for every element: ``test_scale`` and
    ``ref_scale`` per block, ``test_value`` (the implementation's values, as values)
    and ``x`` (the input, so ``ref_scale * ref_value``) per element, all fp64.

    The pseudocode's last line passes the recomputed reference value where the test
    value goes and the implementation's value where the reference goes
    (``tosa_reference_check_fp<out_t>(reference_value, test_value, num_ulp)``): read
    with the two in their places (reading ``mx-check-scale-arguments``), the ulp is
    the one of ``x / test_scale``.  As written, a correct fp4e2m1 result 6 for 6.9 and
    a correct 0 for 0.1 would fail.  A NaN reference scale accepts the whole block.
    """
    ts = np.asarray(test_scale, dtype=np.float64)
    rs = np.asarray(ref_scale, dtype=np.float64)
    scale_ok = check_fp(ts, rs, 1, scale_t) | np.isnan(rs)
    per_elem_scale = np.repeat(ts, block_size, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        reference_value = np.asarray(x, dtype=np.float64) / per_elem_scale
    value_ok = check_fp(test_value, reference_value, value_ulps(value_t), value_t)
    free = np.repeat(np.isnan(rs), block_size, axis=-1)
    value_ok = value_ok | free
    ok = value_ok & np.repeat(scale_ok, block_size, axis=-1)
    return ScaleCheck(scale_ok, value_ok, ok)


@dataclass(frozen=True)
class Partner:
    """The output a SCALED_VALUES output is judged with: its name, type, reference
    result (fp64 scales) and what the implementation returned (in its storage)."""

    name: str
    dtype: DType
    expected: np.ndarray
    actual: np.ndarray


def check_scaled_values(
    desc: ComplianceDescriptor,
    actual: np.ndarray,
    x: np.ndarray,
    partner: Partner,
) -> Verdict:
    """A SCALED_VALUES output ``actual`` (its type's storage) and its scale output
    ``partner`` under :func:`check_scale`; ``x`` is the bound tensor, the input values
    in fp64.  The verdict is the values'; ``verdict.scales`` is the scales' part."""
    assert isinstance(desc.params, ScaledValuesParams)
    bs, value_t, scale_t = desc.params.block_size, desc.dtype, partner.dtype
    act, xs = np.asarray(actual), np.asarray(x, dtype=np.float64)
    ts_raw, rs = np.asarray(partner.actual), np.asarray(partner.expected)
    _require_storage(act, value_t, "actual")
    _require_storage(ts_raw, scale_t, f"{partner.name} (actual)")
    if xs.shape != act.shape:
        raise ValueError(f"shape mismatch: bound has shape {xs.shape}, actual {act.shape}")
    want = (*act.shape[:-1], act.shape[-1] // bs) if act.ndim else None
    if want is None or act.shape[-1] % bs:
        raise ValueError(f"values of shape {list(act.shape)} are not blocks of {bs}")
    for what, arr in (("actual", ts_raw), ("expected", rs)):
        if arr.shape != want:
            raise ValueError(
                f"{partner.name} ({what}) has shape {list(arr.shape)}; the blocks of "
                f"{list(act.shape)} need {list(want)}"
            )
    if rs.dtype != np.float64:
        raise ValueError(f"{partner.name} (expected) has dtype {rs.dtype}, not float64")
    # mx.decode, inlined: mxint8 is its code over 64, the floats widen exactly.
    tv = act.astype(np.float64) / 64.0 if value_t is dtypes.MXINT8 else act.astype(np.float64)
    with np.errstate(invalid="ignore"):
        ts = ts_raw.astype(np.float64)
    sc = check_scale(ts, tv, rs, xs, value_t, bs, scale_t)
    n_ulp = value_ulps(value_t)
    per_elem_ts = np.repeat(ts, bs, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        ref_value = xs / per_elem_ts
    free = np.repeat(np.isnan(rs), bs, axis=-1)
    margin = np.where(free, 0.0, _value_margin(tv, ref_value, sc, value_t, n_ulp, bs))
    return _scaled_verdict(desc, sc, margin, tv, ref_value, ts, rs, xs, partner, n_ulp, bs)


def _require_storage(arr: np.ndarray, dt: DType, what: str) -> None:
    if arr.dtype != dt.storage:
        raise ValueError(f"{what} has dtype {arr.dtype}, but {dt} is stored as {dt.storage}")


def _value_margin(
    tv: np.ndarray, ref: np.ndarray, sc: ScaleCheck, value_t: DType, n_ulp: int, bs: int
) -> np.ndarray:
    """How much of its ulp allowance each value used: at most 1 where it passed (a
    saturated value passes beyond it), above 1 or inf where it failed; inf through a
    block whose scale failed."""
    allowed = ulp(ref, value_t) * n_ulp
    with np.errstate(invalid="ignore", divide="ignore"):
        raw = np.where(allowed > 0, np.abs(tv - ref) / np.where(allowed > 0, allowed, 1.0), 0.0)
    raw = np.where(np.isnan(raw), np.inf, raw)
    margin = np.where(sc.value_ok, np.minimum(raw, 1.0), np.where(raw > 1, raw, np.inf))
    return np.where(np.repeat(sc.scale_ok, bs, axis=-1), margin, np.inf)


def _show(value: float, dt: DType) -> str:
    """A value or a scale for a message; a scale as the power of two it is."""
    if dt is dtypes.FP8UE8M0 and math.isfinite(value) and value > 0:
        mant, exp = math.frexp(value)
        if mant == 0.5:
            return f"2**{exp - 1}"
    return _fmt(value, dt) if dt.is_float else f"{value:.9g}"


def _scaled_verdict(
    desc: ComplianceDescriptor,
    sc: ScaleCheck,
    margin: np.ndarray,
    tv: np.ndarray,
    ref_value: np.ndarray,
    ts: np.ndarray,
    rs: np.ndarray,
    xs: np.ndarray,
    partner: Partner,
    n_ulp: int,
    bs: int,
) -> Verdict:
    """One line for the values and one for their scales; a failure names the first
    block whose scale fails and the first value that fails against a passing scale."""
    value_t, scale_t = desc.dtype, partner.dtype
    shape, count, blocks = sc.ok.shape, int(sc.ok.size), int(sc.scale_ok.size)
    bad = np.flatnonzero(~sc.ok.reshape(-1))
    bad_blocks = np.flatnonzero(~sc.scale_ok.reshape(-1))
    # values that fail though their block's scale passed
    bad_values = np.flatnonzero((~sc.value_ok & np.repeat(sc.scale_ok, bs, axis=-1)).reshape(-1))
    values_of = f"{count} value{'s' if count != 1 else ''} in {blocks} block{'s' * (blocks != 1)}"
    worst: tuple[int, ...] | None = None
    max_margin = 0.0
    if count:
        flat = margin.reshape(-1)
        w = int(np.argmax(flat))
        worst = tuple(int(i) for i in np.unravel_index(w, shape))
        max_margin = float(flat[w])
    if not bad.size:
        used = "" if worst is None else f": worst value {_ratio(max_margin * n_ulp)} of {n_ulp} ulp"
        used += "" if worst is None else f" at {list(worst)}"
        message = f"pass ({values_of}, scales from {partner.name}){used}"
        scale_msg = f"pass ({blocks} block{'s' * (blocks != 1)})"
    else:
        parts = []
        if bad_blocks.size:
            b = tuple(int(i) for i in np.unravel_index(int(bad_blocks[0]), sc.scale_ok.shape))
            parts.append(
                f"block {list(b)} scale {_show(float(ts[b]), scale_t)} ({partner.name}), "
                f"reference {_show(float(rs[b]), scale_t)}: not within 1 ulp of {scale_t}"
            )
        if bad_values.size:
            i = tuple(int(k) for k in np.unravel_index(int(bad_values[0]), shape))
            blk = (*i[:-1], i[-1] // bs)
            parts.append(
                f"value at {list(i)} {_show(float(tv[i]), value_t)}, x / scale = "
                f"{_fmt(float(xs[i]), dtypes.FP32)} / {_show(float(ts[blk]), scale_t)} = "
                f"{float(ref_value[i]):.6g}: not within {n_ulp} ulp of {value_t}"
            )
        why = []
        if bad_blocks.size:
            why.append(f"{bad_blocks.size} block scale{'s' * (bad_blocks.size != 1)} wrong")
        if bad_values.size:
            n = bad_values.size
            why.append(f"{n} value{'s' * (n != 1)} wrong against a right scale")
        head = f"FAIL ({bad.size} of {values_of}: {', '.join(why)})"
        message = f"{head}: " + "; ".join(parts)
        scale_msg = (
            f"FAIL ({bad_blocks.size} of {blocks} blocks)"
            if bad_blocks.size
            else f"pass ({blocks} block{'s' * (blocks != 1)})"
        )
    scales = ScalesVerdict(
        partner.name, not bad_blocks.size, blocks, int(bad_blocks.size), scale_msg
    )
    return Verdict(
        not bad.size,
        desc.mode,
        count,
        int(bad.size),
        _nd_indices(bad[:MAX_REPORTED], shape),
        max_margin,
        worst,
        message,
        scales=scales,
    )


def _ratio(v: float) -> str:
    return f"{v:.3g}" if math.isfinite(v) else str(v)

"""``check``: compare an implementation's output with the fp64 reference under a
compliance descriptor."""

from __future__ import annotations

import numpy as np

from conformance.block_tensor import BlockScaled, TensorValue, is_block_scaled
from conformance.compliance_descriptor import (
    AbsErrorParams,
    ComplianceDescriptor,
    DotProductParams,
    IntRangeParams,
    Mode,
    ReduceProductParams,
    ResizeParams,
    UlpParams,
)
from conformance.dtypes import DType

from . import revision_rules
from .block_scaled import Partner, check_scaled_values
from .bounds import (
    abs_error_bound,
    reduce_product_error_bound,
    resize_error_bound,
    ulp_error_bound,
    ulp_size,
)
from .composite import check_block_scaled, check_scaled_block
from .dot_product import check_dot_product
from .fp_check import within_bound
from .verdict import Verdict, build_verdict


def check(
    expected: TensorValue,
    descriptor: ComplianceDescriptor,
    actual: TensorValue,
    bound: np.ndarray | None = None,
    *,
    partner: Partner | None = None,
) -> Verdict:
    """Check ``actual`` against ``expected``.

    ``expected`` is the reference result: fp64 for floating-point outputs, and bool,
    integer or fp64 holding integers for EXACT.  ``actual`` must be stored exactly as
    the descriptor's output type stores it (float16, ml_dtypes.bfloat16, int8, ...).
    ``bound`` is required for ABS_ERROR and DOT_PRODUCT (see ``bound_inputs``) and
    refused otherwise.  Inputs that cannot be checked raise ValueError.

    Where the spec revisions state a rule differently, the process's spec decides
    (``revision_rules.current()``).

    SCALED_VALUES judges two outputs together: ``partner`` is the scale output its
    descriptor names (reference and returned scales); the verdict's ``scales`` is that
    output's part.  A BLOCK_SCALES output is judged there, never on its own.

    A block-scaled composite output (``bs32_*``: a BlockScaled expected and actual) is
    judged by :func:`.composite.check_block_scaled`, or, SCALED_VALUES (TOSA 1.1 CAST to
    a block-scaled type), by :func:`.composite.check_scaled_block` with the input x as
    its bound.
    """
    if is_block_scaled(descriptor.dtype):  # values and scales: .composite
        if partner is not None:
            raise ValueError(f"a {descriptor.dtype} output is judged alone, without a partner")
        if descriptor.mode is Mode.SCALED_VALUES:
            return check_scaled_block(expected, descriptor, actual, bound)
        if bound is not None:
            raise ValueError(f"a {descriptor.dtype} output is judged exactly, without a bound")
        return check_block_scaled(expected, descriptor, actual)
    if isinstance(expected, BlockScaled) or isinstance(actual, BlockScaled):
        raise ValueError(f"block-scaled values for a {descriptor.dtype} output")
    if descriptor.mode is Mode.BLOCK_SCALES:
        raise ValueError(
            f"BLOCK_SCALES outputs are judged with their values output "
            f"{descriptor.partner!r}, not on their own"
        )
    if descriptor.mode is Mode.SCALED_VALUES:
        return _check_scaled(expected, descriptor, actual, bound, partner)
    if partner is not None:
        raise ValueError(f"{descriptor.mode.value} judges one output; a partner was given")
    exp, act, bnd = _validated(expected, descriptor, actual, bound)
    mode = descriptor.mode
    if mode is Mode.EXACT:
        ok = np.asarray(act == exp)
        return build_verdict(descriptor, ok, _exact_margin(ok), exp, act)
    if mode is Mode.INT_RANGE:
        assert bnd is not None and isinstance(descriptor.params, IntRangeParams)
        low, high = int_range(bnd, descriptor.params, descriptor.dtype)
        value = _int_reading(act, descriptor.dtype, descriptor.params.unsigned)
        ok = (value >= low) & (value <= high)
        return build_verdict(descriptor, ok, _exact_margin(ok), exp, act, interval=(low, high))
    if mode is Mode.EXACT_NAN:
        act64 = act.astype(np.float64)
        same = (act64 == exp) & (np.signbit(act64) == np.signbit(exp))
        ok = np.where(np.isnan(exp), np.isnan(act64), same)
        return build_verdict(descriptor, ok, _exact_margin(ok), exp, act)

    act64 = act.astype(np.float64)
    p = descriptor.params
    out = descriptor.dtype
    rules = revision_rules.current()
    style = rules.fp_check.value
    # 1.0's check treats a non-finite err_bnd as "no requirement"; the draft REQUIREs
    # a bound >= 0, so there a NaN bound is the caller's mistake.
    nan_ok = style == "flush-zero"
    if isinstance(p, DotProductParams):
        assert bnd is not None
        _require_valid_bound(bnd, exp, "bound (abs-input pass result)", nan_ok=nan_ok)
        res = check_dot_product(exp, act64, bnd, p, out, rules.dot_product.value)
        return build_verdict(descriptor, res.ok, res.margin, exp, act, stats=res.stats)

    zero_sign = False
    err_low = None
    if isinstance(p, UlpParams):
        err_bnd = ulp_error_bound(exp, p.ulp, out)
        if p.toward_zero is not None:
            err_low = ulp_size(exp, out) * p.toward_zero
        zero_sign = p.zero_sign
    elif isinstance(p, AbsErrorParams):
        assert bnd is not None
        err_bnd = abs_error_bound(exp, bnd, p, out, rules.abs_helper.value)
        what = "error bound derived from the bound tensor"
        _require_valid_bound(err_bnd, exp, what, nan_ok=nan_ok)
    elif isinstance(p, ReduceProductParams):
        floor = rules.reduce_product_floor.value
        err_bnd = reduce_product_error_bound(exp, p.n, out, floor=floor)
        zero_sign = p.zero_sign
    elif isinstance(p, ResizeParams):
        err_bnd = resize_error_bound(exp, p.input_abs_max, out, rules.resize_ulp.value)
    else:  # pragma: no cover - the descriptor validates mode against params
        raise AssertionError(f"unhandled mode {mode}")
    bounded = within_bound(
        exp, act64, err_bnd, out, zero_sign=zero_sign, err_low=err_low, style=style
    )
    interval = (bounded.low, bounded.high)
    return build_verdict(descriptor, bounded.ok, bounded.margin, exp, act, interval=interval)


def _check_scaled(
    expected: np.ndarray,
    desc: ComplianceDescriptor,
    actual: np.ndarray,
    bound: np.ndarray | None,
    partner: Partner | None,
) -> Verdict:
    name = desc.partner
    if partner is None:
        raise ValueError(f"SCALED_VALUES needs its scale output {name!r}, but it was not given")
    if partner.name != name:
        raise ValueError(f"SCALED_VALUES names scale output {name!r}, got {partner.name!r}")
    if bound is None:
        raise ValueError("SCALED_VALUES needs a bound tensor (the input values), none was given")
    if np.shape(expected) != np.shape(actual):
        shapes = f"expected has shape {np.shape(expected)}, actual {np.shape(actual)}"
        raise ValueError(f"shape mismatch: {shapes}")
    return check_scaled_values(desc, actual, bound, partner)


# exp2(-normal_frac<fp32>() - 1): RESCALE's INEXACT_ROUND error bound per magnitude.
INEXACT_ROUND_ULP = 2.0**-24


def int_range(scaled: np.ndarray, p: IntRangeParams, out: DType) -> tuple[np.ndarray, np.ndarray]:
    """RESCALE's INEXACT_ROUND range: ``scaled`` is out_ref + output_zp in fp64;
    err_bnd = 0.5 + (3 |out_ref| + |out_ref + output_zp|) * 2**-24, and the result must
    lie in [ceil(scaled - err_bnd), floor(scaled + err_bnd)] clipped to the output
    type (its unsigned range for an unsigned output: the readings table)."""
    low, high = inexact_round_bounds(scaled, p.output_zp)
    lo_t, hi_t = (0, (1 << out.bits) - 1) if p.unsigned else (out.min, out.max)
    return np.clip(low, lo_t, hi_t), np.clip(high, lo_t, hi_t)


def inexact_round_bounds(scaled: np.ndarray, output_zp: int) -> tuple[np.ndarray, np.ndarray]:
    """ceil(scaled - err_bnd) and floor(scaled + err_bnd), before any clipping: every
    integer INEXACT_ROUND allows for ``scaled`` = out_ref + output_zp in fp64."""
    ref = scaled - output_zp
    err = 0.5 + (3.0 * np.abs(ref) + np.abs(scaled)) * INEXACT_ROUND_ULP
    return np.ceil(scaled - err), np.floor(scaled + err)


def _int_reading(act: np.ndarray, out: DType, unsigned: bool) -> np.ndarray:
    """An integer output as a value: its stored bits read unsigned where it is."""
    value = act.astype(np.int64)
    return value & ((1 << out.bits) - 1) if unsigned else value


def _exact_margin(ok: np.ndarray) -> np.ndarray:
    # An exact rule allows no error, so any mismatch has an unbounded margin.
    return np.where(ok, 0.0, np.inf)


def _validated(
    expected: np.ndarray,
    desc: ComplianceDescriptor,
    actual: np.ndarray,
    bound: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    exp = np.asarray(expected)
    act = np.asarray(actual)
    if exp.shape != act.shape:
        raise ValueError(f"shape mismatch: expected has shape {exp.shape}, actual {act.shape}")
    storage = desc.dtype.storage
    if act.dtype != storage:
        raise ValueError(
            f"actual has dtype {act.dtype}, but {desc.dtype} outputs are stored as {storage}"
        )
    if desc.mode in (Mode.EXACT, Mode.INT_RANGE):
        if exp.dtype.kind not in "biuf":
            raise ValueError(
                f"expected has dtype {exp.dtype}; EXACT needs bool, integer or float64"
            )
    elif exp.dtype != np.float64:
        raise ValueError(
            f"expected has dtype {exp.dtype}; {desc.mode.value} needs the fp64 reference (float64)"
        )

    if not desc.needs_bound:
        if bound is not None:
            raise ValueError(f"{desc.mode.value} takes no bound tensor, but one was given")
        return exp, act, None
    if bound is None:
        raise ValueError(f"{desc.mode.value} needs a bound tensor, but none was given")
    bnd = np.asarray(bound)
    if bnd.dtype.kind != "f":
        raise ValueError(f"bound has dtype {bnd.dtype}; it must be floating-point (float64)")
    if bnd.shape != exp.shape:
        raise ValueError(f"shape mismatch: bound has shape {bnd.shape}, expected {exp.shape}")
    return exp, act, bnd.astype(np.float64, copy=False)


def _require_valid_bound(
    bound: np.ndarray, expected: np.ndarray, what: str, *, nan_ok: bool = False
) -> None:
    """The spec REQUIREs a non-negative bound; where the reference is NaN the bound is
    never used, so it may be anything there.  ``nan_ok``: a NaN bound is allowed too
    (TOSA 1.0: no accuracy requirement)."""
    bad = ~(bound >= 0) & ~np.isnan(expected)
    if nan_ok:
        bad &= ~np.isnan(bound)
    if np.any(bad):
        first = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), bad.shape))
        raise ValueError(
            f"{what} is negative or NaN at {list(first)} (value {bound[first]!r}); "
            "it must be >= 0 wherever the reference is not NaN"
        )

"""``check``: compare an implementation's output with the fp64 reference under a
compliance descriptor."""

from __future__ import annotations

import numpy as np

from .bounds import (
    abs_error_bound,
    reduce_product_error_bound,
    resize_error_bound,
    ulp_error_bound,
)
from .descriptor import (
    AbsErrorParams,
    ComplianceDescriptor,
    DotProductParams,
    Mode,
    ReduceProductParams,
    ResizeParams,
    UlpParams,
)
from .dot_product import check_dot_product
from .fp_check import within_bound
from .verdict import Verdict, build_verdict


def check(
    expected: np.ndarray,
    descriptor: ComplianceDescriptor,
    actual: np.ndarray,
    bound: np.ndarray | None = None,
) -> Verdict:
    """Check ``actual`` against ``expected``.

    ``expected`` is the reference result: fp64 for floating-point outputs, and bool,
    integer or fp64 holding integers for EXACT.  ``actual`` must be stored exactly as
    the descriptor's output type stores it (float16, ml_dtypes.bfloat16, int8, ...).
    ``bound`` is required for ABS_ERROR and DOT_PRODUCT (see ``bound_inputs``) and
    refused otherwise.  Inputs that cannot be checked raise ValueError.
    """
    exp, act, bnd = _validated(expected, descriptor, actual, bound)
    mode = descriptor.mode
    if mode is Mode.EXACT:
        ok = np.asarray(act == exp)
        return build_verdict(descriptor, ok, _exact_margin(ok), exp, act)
    if mode is Mode.EXACT_NAN:
        act64 = act.astype(np.float64)
        same = (act64 == exp) & (np.signbit(act64) == np.signbit(exp))
        ok = np.where(np.isnan(exp), np.isnan(act64), same)
        return build_verdict(descriptor, ok, _exact_margin(ok), exp, act)

    act64 = act.astype(np.float64)
    p = descriptor.params
    out = descriptor.dtype
    if isinstance(p, DotProductParams):
        assert bnd is not None
        _require_valid_bound(bnd, exp, "bound (abs-input pass result)")
        res = check_dot_product(exp, act64, bnd, p, out)
        return build_verdict(descriptor, res.ok, res.margin, exp, act, stats=res.stats)

    zero_sign = False
    if isinstance(p, UlpParams):
        err_bnd = ulp_error_bound(exp, p.ulp, out)
        zero_sign = p.zero_sign
    elif isinstance(p, AbsErrorParams):
        assert bnd is not None
        err_bnd = abs_error_bound(exp, bnd, p, out)
        _require_valid_bound(err_bnd, exp, "error bound derived from the bound tensor")
    elif isinstance(p, ReduceProductParams):
        err_bnd = reduce_product_error_bound(exp, p.n, out)
        zero_sign = p.zero_sign
    elif isinstance(p, ResizeParams):
        err_bnd = resize_error_bound(exp, p.input_abs_max)
    else:  # pragma: no cover - the descriptor validates mode against params
        raise AssertionError(f"unhandled mode {mode}")
    bounded = within_bound(exp, act64, err_bnd, out, zero_sign=zero_sign)
    interval = (bounded.low, bounded.high)
    return build_verdict(descriptor, bounded.ok, bounded.margin, exp, act, interval=interval)


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
    if desc.mode is Mode.EXACT:
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


def _require_valid_bound(bound: np.ndarray, expected: np.ndarray, what: str) -> None:
    """The spec REQUIREs a non-negative bound; where the reference is NaN the bound is
    never used, so it may be anything there."""
    bad = ~(bound >= 0) & ~np.isnan(expected)
    if np.any(bad):
        first = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), bad.shape))
        raise ValueError(
            f"{what} is negative or NaN at {list(first)} (value {bound[first]!r}); "
            "it must be >= 0 wherever the reference is not NaN"
        )

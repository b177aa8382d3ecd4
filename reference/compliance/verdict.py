"""The outcome of checking one output tensor, and its one-line summary."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from conformance.compliance_descriptor import ComplianceDescriptor, Mode, UlpParams
from conformance.dtypes import DType

from .dot_product import DotProductStats

# Failing positions kept in a verdict; the count is always complete.
MAX_REPORTED = 100


@dataclass(frozen=True)
class ScalesVerdict:
    """The partner scale output's part of a SCALED_VALUES verdict: the rule checks each
    block's scale once, with the block's values, and this is that result (its message
    is the head only: the values' message names the failing block)."""

    name: str  # the scale output
    passed: bool
    count: int  # blocks
    failing_count: int
    message: str


@dataclass(frozen=True)
class Verdict:
    """Result of ``check``.

    ``max_margin`` is the largest per-element margin: how much of its allowed error an
    element used (0 exact, 1 at the limit, above 1 failed, inf for a failure with no
    finite ratio such as a NaN mismatch or any mismatch in an exact mode).  For ULP it
    is ulp used / ulp allowed; for DOT_PRODUCT it is |error| / ksb and covers only the
    per-element test: the statistical tests are in ``dot_product``.
    ``failing_indices`` holds the first ``MAX_REPORTED`` failing positions in C order,
    one row of nd indices each.
    """

    passed: bool
    mode: Mode
    count: int
    failing_count: int
    failing_indices: np.ndarray
    max_margin: float
    worst_index: tuple[int, ...] | None
    message: str
    dot_product: DotProductStats | None = None
    scales: ScalesVerdict | None = None  # SCALED_VALUES: its scale output's blocks

    def __bool__(self) -> bool:
        return self.passed


def build_verdict(
    desc: ComplianceDescriptor,
    ok: np.ndarray,
    margin: np.ndarray,
    expected: np.ndarray,
    actual: np.ndarray,
    *,
    interval: tuple[np.ndarray, np.ndarray] | None = None,
    stats: DotProductStats | None = None,
) -> Verdict:
    """Summarise per-element results ``ok`` / ``margin`` into a Verdict."""
    shape = ok.shape
    count = int(ok.size)
    bad = np.flatnonzero(~ok.reshape(-1))
    failing = _nd_indices(bad[:MAX_REPORTED], shape)
    elements_ok = bad.size == 0
    passed = elements_ok and (stats is None or stats.passed)
    if count == 0:
        return Verdict(True, desc.mode, 0, 0, failing, 0.0, None, "pass: empty output", stats)

    flat_margin = margin.reshape(-1)
    worst_flat = int(np.argmax(flat_margin))
    worst = tuple(int(i) for i in _nd_indices(np.array([worst_flat]), shape)[0])
    max_margin = float(flat_margin[worst_flat])

    detail = _element_detail(desc, max_margin, worst, expected, actual, interval, stats)
    elements = f"{count} element{'s' if count != 1 else ''}"
    if not elements_ok:
        head = f"FAIL ({bad.size} of {elements})"
    elif not passed:
        head = f"FAIL (dot product statistics, {elements})"
    else:
        head = f"pass ({elements})"
    message = f"{head}: {detail}"
    if stats is not None:
        message += f"; {stats.describe()}"
    return Verdict(
        passed, desc.mode, count, int(bad.size), failing, max_margin, worst, message, stats
    )


def _nd_indices(flat: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Rows of nd indices for C-order flat indices (no columns for a scalar)."""
    if not shape:
        return np.zeros((flat.size, 0), dtype=np.int64)
    return np.stack(np.unravel_index(flat, shape), axis=-1).astype(np.int64)


def _element_detail(
    desc: ComplianceDescriptor,
    margin: float,
    index: tuple[int, ...],
    expected: np.ndarray,
    actual: np.ndarray,
    interval: tuple[np.ndarray, np.ndarray] | None,
    stats: DotProductStats | None,
) -> str:
    e = _fmt(expected[index].item(), desc.dtype, extra=2)
    a = _fmt(actual[index].item(), desc.dtype)
    where = f"at {list(index)}: expected {e}, got {a}"
    if desc.mode in (Mode.EXACT, Mode.EXACT_NAN):
        return ("exact" if margin == 0 else "mismatch") + f" {where}"
    if math.isinf(margin):
        used = "outside the allowed range"
    elif isinstance(desc.params, UlpParams):
        n = desc.params.ulp
        used = f"{_ratio(margin, n)} of {n:g} ulp used"
    elif stats is not None:
        if stats.abs_bound == 1.0:
            used = f"{_ratio(margin, stats.ksb)} of ksb {stats.ksb} error units used"
        else:
            lim = stats.abs_bound * stats.ksb
            used = f"{_ratio(margin, lim)} of ABS_BOUND {lim:g} (ksb {stats.ksb}) error units used"
    else:
        used = f"{_ratio(margin, 1.0)} of the bound used"
    text = f"{used} {where}"
    if interval is not None:
        lo = _fmt(interval[0][index].item(), desc.dtype, extra=2)
        hi = _fmt(interval[1][index].item(), desc.dtype, extra=2)
        text += f" (allowed [{lo}, {hi}])"
    return text


def _ratio(margin: float, scale: float) -> str:
    """margin * scale with three digits, or more when three would hide which side of the
    limit it is on."""
    digits = 3 if margin == 1 or abs(margin - 1) >= 0.005 else 9
    return f"{margin * scale:.{digits}g}"


def _fmt(value: Any, out: DType, extra: int = 0) -> str:
    """A result for a message: integers in full, floats with enough significant digits
    to tell neighbouring values of ``out`` apart."""
    if out.kind == "bool":
        return "true" if bool(value) else "false"
    v = float(value)
    if not out.is_float:
        return str(int(value)) if v.is_integer() else repr(v)
    if not math.isfinite(v):
        return str(v)
    digits = math.ceil((out.fp.normal_frac + 1) * math.log10(2)) + 1 + extra
    return f"{v:.{digits}g}"

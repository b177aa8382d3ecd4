"""Denormal (subnormal) values: which types may flush them, and flushing itself.

The spec's number formats table (introduction, "Supported Number Formats") says of
fp16_t, bf16_t and fp32_t "Denormal values must either be supported or flushed to
zero", and of fp8e4m3_t and fp8e5m2_t "Denormal values must be supported".  tosa.xml
does not carry that table, so it is stated once here.

A backend's *denormal mode* for a type is ``supported`` or ``flush``; a backend may
declare it per type (``parse_modes``), and the runner holds it to the declaration
(conformance.rejudge).  Flushing is sign-preserving, as FTZ/DAZ hardware does it
(Arm FZ, x86 FTZ/DAZ): a subnormal x becomes a zero with x's sign.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import numpy as np

from conformance.dtypes import BF16, FP8E4M3, FP8E5M2, FP16, FP32, DType, dtype

DenormalMode = Literal["supported", "flush"]
SUPPORTED: DenormalMode = "supported"
FLUSH: DenormalMode = "flush"
MODES: tuple[DenormalMode, ...] = (SUPPORTED, FLUSH)

NUMBER_FORMATS = "introduction: Supported Number Formats"
# Types whose denormals may be flushed to zero, and types that must support them.
FLUSH_ALLOWED: frozenset[DType] = frozenset({FP16, BF16, FP32})
MUST_SUPPORT: frozenset[DType] = frozenset({FP8E4M3, FP8E5M2})
DENORMAL_TYPES: tuple[DType, ...] = (FP8E4M3, FP8E5M2, FP16, BF16, FP32)


def subnormal(values: np.ndarray, dt: DType) -> np.ndarray:
    """Where ``values`` (any float dtype, fp64 included) lie strictly between zero and
    ``dt``'s smallest normal magnitude."""
    wide = np.asarray(values).astype(np.float64)
    return (wide != 0) & (np.abs(wide) < dt.fp.normal_min)


def flush(values: np.ndarray, dt: DType) -> np.ndarray:
    """``values`` with ``dt``'s subnormals replaced by a zero of the same sign, in the
    dtype they came in; the very same array when there is nothing to flush (callers
    use ``is`` to know whether anything changed)."""
    arr = np.asarray(values)
    tiny = subnormal(arr, dt)
    if not tiny.any():
        return arr
    wide = arr.astype(np.float64)
    return np.where(tiny, np.copysign(0.0, wide), wide).astype(arr.dtype)


def flushable(declared: Mapping[DType, DenormalMode]) -> frozenset[DType]:
    """The types a reading may flush for a backend with these declared modes: those the
    spec allows to flush, minus the ones the backend declares ``supported``."""
    return frozenset(t for t in FLUSH_ALLOWED if declared.get(t) != SUPPORTED)


def parse_modes(text: str) -> dict[DType, DenormalMode]:
    """A declaration such as ``flush`` (every type that may flush), ``supported``
    (every type), or ``fp16=flush,bf16=flush,fp32=supported``.

    ValueError names the problem: an unknown type or mode, or ``flush`` for an fp8
    type, whose denormals the spec requires to be supported.
    """
    text = text.strip()
    if text in MODES:
        types = DENORMAL_TYPES if text == SUPPORTED else tuple(FLUSH_ALLOWED)
        return {t: text for t in sorted(types, key=lambda t: t.name)}
    out: dict[DType, DenormalMode] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, mode = part.partition("=")
        if not sep or mode not in MODES:
            raise ValueError(
                f"denormal mode {part!r}: expected TYPE=supported or TYPE=flush "
                f"(types {', '.join(t.name for t in DENORMAL_TYPES)}), or one mode for all"
            )
        try:
            t = dtype(name.strip())
        except (KeyError, ValueError):
            t = None
        if t not in DENORMAL_TYPES:
            known = ", ".join(x.name for x in DENORMAL_TYPES)
            raise ValueError(f"denormal mode {part!r}: {name!r} is not one of {known}")
        assert t is not None
        if mode == FLUSH and t in MUST_SUPPORT:
            raise ValueError(
                f"denormal mode {part!r}: {t} denormals must be supported ({NUMBER_FORMATS})"
            )
        out[t] = mode
    if not out:
        raise ValueError("empty denormal mode declaration")
    return out


def declared_modes(
    raw: Mapping[str, str] | Mapping[DType, str] | None,
) -> dict[DType, DenormalMode]:
    """A backend's ``denormals`` attribute (type names or DTypes to modes) checked and
    keyed by DType; None or empty is 'undeclared'."""
    if not raw:
        return {}
    text = ",".join(f"{getattr(k, 'name', k)}={v}" for k, v in raw.items())
    return parse_modes(text)


def format_modes(modes: Mapping[DType, DenormalMode]) -> dict[str, str]:
    """The JSON form: type name to mode."""
    return {t.name: m for t, m in sorted(modes.items(), key=lambda kv: kv[0].name)}


def flushed_reference(expected: np.ndarray, actual: np.ndarray, dt: DType) -> np.ndarray:
    """The fp64 reference as a backend that flushes ``dt`` results sees it: each
    subnormal expected value the backend returned as a zero of the same sign becomes
    that zero; everything else is kept (the very same array when nothing changes).

    The reference is exact, so "subnormal" means strictly between zero and normal_min
    before rounding: a result that FTZ hardware flushes before rounding (Arm) or after
    (x86) is covered either way.
    """
    exp = np.asarray(expected)
    act = np.asarray(actual).astype(np.float64)
    take = subnormal(exp, dt) & (act == 0) & (np.signbit(act) == np.signbit(exp))
    if not take.any():
        return exp
    return np.where(take, act, exp)

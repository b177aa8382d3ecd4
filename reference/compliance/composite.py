"""Judging a block-scaled composite output (TOSA 1.1 ``bs32_*``): its values and its
scales, together.

The operators with such outputs so far move elements without arithmetic (CONCAT,
CONST, IDENTITY, RESHAPE, REVERSE, SLICE, TILE, TRANSPOSE: tensor_read_value_scale /
tensor_write_value_scale copy each value and its block's scale).  Their results must
be the reference's exactly (introduction, "TOSA Graph Compliance": a bit-exact match
of the output tensors; the precision table has no row for them): every value as
EXACT_NAN judges a float (equal, zeros of the same sign, a NaN where the reference has
a NaN) or as EXACT an mxint8 code, and every scale equal (fp8ue8m0's one NaN matching
NaN).  A wrong scale fails every element of its block: each of them then holds
another number.  The descriptor is EXACT with the composite type (``rules.exact``).

A cast to a block-scaled type (TOSA 1.1 CAST, fp to MX) computes its scales and values:
its precision rule is CAST_TO_BLOCK_SCALED's, tosa_reference_check_scale, applied to the
composite's own scales and values (:func:`check_scaled_block`: SCALED_VALUES with the
composite type, the input x as the bound tensor).
"""

from __future__ import annotations

import numpy as np

from conformance.block_tensor import BlockScaled, is_block_scaled, scale_type, value_type
from conformance.compliance_descriptor import ComplianceDescriptor, Mode, ScaledValuesParams
from conformance.dtypes import DType

from .block_scaled import Partner, check_scaled_values
from .verdict import MAX_REPORTED, Verdict, _fmt, _nd_indices


def as_block_scaled(actual: object, dt: DType) -> BlockScaled:
    """A backend's block-scaled output in the type's storage, exactly; ValueError for
    anything else (an array alone, another composite type, values that are not of
    the value or scale type)."""
    if not isinstance(actual, BlockScaled):
        raise ValueError(f"a {dt} output is values and scales, got {type(actual).__name__}")
    if actual.dtype is not dt:
        raise ValueError(f"a {dt} output, got a {actual.dtype} one")
    return BlockScaled.of(dt, actual.values, actual.scales)


def check_block_scaled(
    expected: object, descriptor: ComplianceDescriptor, actual: object
) -> Verdict:
    """An EXACT check of a block-scaled output (module text); ValueError for inputs
    that cannot be checked."""
    dt = descriptor.dtype
    if not is_block_scaled(dt):
        raise ValueError(f"{dt} is not a block-scaled type")
    if descriptor.mode is not Mode.EXACT:
        raise ValueError(f"a block-scaled output is judged EXACT, not {descriptor.mode.value}")
    exp = as_block_scaled(expected, dt)
    act = as_block_scaled(actual, dt)
    if exp.shape != act.shape:
        raise ValueError(f"shape mismatch: expected has shape {exp.shape}, actual {act.shape}")
    vt, st = value_type(dt), scale_type(dt)
    value_ok = _same(_wide(exp.values, vt), _wide(act.values, vt), signed_zero=True)
    scale_ok = _same(_wide(exp.scales, st), _wide(act.scales, st), signed_zero=False)
    ok = value_ok & _per_element(scale_ok, exp.shape, dt.block_size)
    return _verdict(descriptor, ok, exp, act, int(scale_ok.size - np.count_nonzero(scale_ok)))


def check_scaled_block(
    expected: object, descriptor: ComplianceDescriptor, actual: object, bound: np.ndarray | None
) -> Verdict:
    """tosa_reference_check_scale on a composite output: each block's returned scale
    against the reference's, each returned value against ``bound`` (the input x) over
    the returned scale (:func:`.block_scaled.check_scaled_values`, the composite's
    scales standing for the scale output).  ValueError for inputs that cannot be
    checked."""
    dt = descriptor.dtype
    if not is_block_scaled(dt) or descriptor.mode is not Mode.SCALED_VALUES:
        raise ValueError(f"check_scaled_block judges a block-scaled SCALED_VALUES output, not {dt}")
    assert isinstance(descriptor.params, ScaledValuesParams)  # the descriptor checks it
    if descriptor.params.block_size != dt.block_size:
        raise ValueError(f"blocks of {descriptor.params.block_size}, but {dt} has {dt.block_size}")
    if bound is None:
        raise ValueError("SCALED_VALUES needs a bound tensor (the input values), none was given")
    exp = as_block_scaled(expected, dt)
    act = as_block_scaled(actual, dt)
    if exp.shape != act.shape:
        raise ValueError(f"shape mismatch: expected has shape {exp.shape}, actual {act.shape}")
    st = scale_type(dt)
    own = Partner(descriptor.params.scale_tensor_name, st, _wide(exp.scales, st), act.scales)
    values = ComplianceDescriptor(
        descriptor.mode, value_type(dt), descriptor.rule, descriptor.params
    )
    return check_scaled_values(values, act.values, np.asarray(bound, dtype=np.float64), own)


def _per_element(per_block: np.ndarray, shape: tuple[int, ...], block_size: int) -> np.ndarray:
    """A result per block spread over the block's elements."""
    if not shape:
        return per_block
    return np.repeat(per_block, block_size, axis=-1)[..., : shape[-1]]


def _wide(arr: np.ndarray, dt: DType) -> np.ndarray:
    """Values in fp64: floats widened exactly, mxint8 codes over 64."""
    if dt.kind == "fixed":
        return arr.astype(np.float64) / (1 << dt.frac_bits)
    with np.errstate(invalid="ignore"):
        return arr.astype(np.float64)


def _same(exp: np.ndarray, act: np.ndarray, *, signed_zero: bool) -> np.ndarray:
    same = exp == act
    if signed_zero:
        same &= np.signbit(exp) == np.signbit(act)
    return np.where(np.isnan(exp), np.isnan(act), same)


def _verdict(
    desc: ComplianceDescriptor, ok: np.ndarray, exp: BlockScaled, act: BlockScaled, bad_scales: int
) -> Verdict:
    count = int(ok.size)
    bad = np.flatnonzero(~ok.reshape(-1))
    failing = _nd_indices(bad[:MAX_REPORTED], ok.shape)
    blocks = int(exp.scales.size)
    sizes = f"{_plural(count, 'element')} in {_plural(blocks, 'block')}"
    if count == 0:
        return Verdict(True, desc.mode, 0, 0, failing, 0.0, None, "pass: empty output")
    if bad.size == 0:
        return Verdict(True, desc.mode, count, 0, failing, 0.0, None, f"pass ({sizes}): exact")
    first = tuple(int(i) for i in _nd_indices(bad[:1], ok.shape)[0])
    vt, st = value_type(desc.dtype), scale_type(desc.dtype)
    e_v, a_v = (_wide(x.values, vt)[first] for x in (exp, act))
    e_s, a_s = (_wide(x.element_scales(), st)[first] for x in (exp, act))
    where = (
        f"at {list(first)}: expected {_fmt(e_v, vt, extra=2)} x scale {_fmt(e_s, st)}, "
        f"got {_fmt(a_v, vt)} x scale {_fmt(a_s, st)}"
    )
    scales = f", {bad_scales} of {blocks} scales wrong" if bad_scales else ""
    message = f"FAIL ({bad.size} of {sizes}{scales}): mismatch {where}"
    return Verdict(False, desc.mode, count, int(bad.size), failing, float("inf"), first, message)


def _plural(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"

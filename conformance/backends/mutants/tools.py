"""Numeric tools the mutant modules share: reading operands and results, rounding
to fewer mantissa bits, moving results by ulps, accumulating in fp16, and the operator
families several groups' mutants name.

These are documented seams for third-party mutants as much as for ours.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from conformance.backends.mutants import Result
from conformance.dtypes import FP8E4M3, FP8E5M2, I32_MAX, I32_MIN, DType
from conformance.operator_table import family
from conformance.spec import Spec
from reference import arithmetic as ar
from reference.broadcast import apply_broadcast
from reference.context import OpContext
from reference.engine import to_storage

__all__ = [
    "CONV_OPS",
    "DOT_OPS",
    "FP8",
    "I32_MAX",
    "I32_MIN",
    "WEIGHTED_OPS",
    "add_ulps",
    "attr_in_type",
    "broadcast_pair",
    "fp8_operators",
    "fp16_accumulated",
    "ignoring_requires",
    "lowest",
    "nan_replaced",
    "output_of",
    "round_mantissa",
]

CONV_OPS = family(("CONV2D", "CONV3D", "DEPTHWISE_CONV2D", "TRANSPOSE_CONV2D"))
WEIGHTED_OPS = family((*CONV_OPS, "FULLY_CONNECTED"))
DOT_OPS = family((*WEIGHTED_OPS, "MATMUL"))
FP8 = (FP8E4M3, FP8E5M2)


def fp8_operators(spec: Spec) -> tuple[str, ...]:
    """Operators with a mode that binds an fp8 type (asked of the spec model when the
    catalogue is built, not at import)."""
    return tuple(
        sorted(
            op.name
            for op in spec.operators.values()
            if any(dt.startswith("fp8") for m in op.modes for dt in m.bindings.values())
        )
    )


def nan_replaced(x: np.ndarray, where: np.ndarray | np.generic, value: float) -> np.ndarray:
    """``x`` (in its storage type) with the NaNs at ``where`` replaced by ``value``."""
    return np.where(np.isnan(x.astype(np.float64)) & where, value, x).astype(x.dtype)


# -- reading operands and results ----------------------------------------------------------


def output_of(result: Result, name: str = "output") -> np.ndarray:
    value = result[name]
    assert not isinstance(value, list)
    return np.asarray(value)


def broadcast_pair(ctx: OpContext, as_type: Callable[[np.ndarray], np.ndarray]) -> tuple[Any, Any]:
    """input1 and input2 broadcast to the output (the original has checked the shapes)."""
    shape = ctx.out_shape()
    a = as_type(apply_broadcast(ctx.arg("input1"), shape))
    b = as_type(apply_broadcast(ctx.arg("input2"), shape))
    return a, b


def attr_in_type(ctx: OpContext, name: str, dt: DType) -> Any:
    """An in_out_t attribute as the operator sees it (floats rounded to the type)."""
    raw = np.asarray(ctx.attr(name))
    if dt.is_float:
        return to_storage(raw.astype(np.float64), dt).astype(np.float64)
    return raw.astype(np.int64)


def lowest(dt: DType) -> float:
    """The bottom of ``dt``'s order: -inf, or the lowest finite value of a type without
    infinities (fp8e4m3), where a scan for a maximum starts."""
    return -np.inf if dt.has_inf else dt.finite_range[0]


def ignoring_requires(ctx: OpContext) -> OpContext:
    """The context whose REQUIREs do not stop the operator: a backend that computes on
    whatever values it was given (integer results wrap when the engine stores them)."""
    altered = copy.copy(ctx)

    def require(condition: bool | np.ndarray, clause: str, detail: str = "") -> None:
        return None

    setattr(altered, "require", require)  # noqa: B010 - an instance attribute shadows the method
    return altered


# -- floating-point rounding ----------------------------------------------------------------


def _ulp(y: np.ndarray, dt: DType) -> np.ndarray:
    """One ulp of ``dt`` in the binade of ``y`` (never below that of normal_min)."""
    _, e = np.frexp(y)  # |y| = m * 2**e with 0.5 <= m < 1
    e_min = int(np.log2(dt.fp.normal_min))
    return np.ldexp(1.0, np.maximum(e.astype(np.int64) - 1, e_min) - dt.fp.normal_frac)


def add_ulps(y: np.ndarray, dt: DType, n: float) -> np.ndarray:
    """``y`` moved ``n`` ulp of ``dt`` away from zero (zeros and non-finite kept)."""
    y = np.asarray(y, dtype=np.float64)
    moved = y + np.sign(y) * n * _ulp(y, dt)
    return np.where(np.isfinite(y) & (y != 0), moved, y)


def round_mantissa(
    x: np.ndarray, frac_bits: int, rounding: Callable[[np.ndarray], np.ndarray] = np.rint
) -> np.ndarray:
    """``x`` (fp64) with ``frac_bits`` stored mantissa bits, the exponent range left
    as it is; ``rounding`` np.rint (nearest even) or np.trunc (toward zero)."""
    m, e = np.frexp(np.asarray(x, dtype=np.float64))
    return np.ldexp(rounding(np.ldexp(m, frac_bits + 1)), e - frac_bits - 1)


def _fp16_sum(terms: Iterable[np.ndarray], shape: tuple[int, ...]) -> np.ndarray:
    """Sequential accumulation in fp16: every partial sum is rounded to fp16."""
    acc = np.zeros(shape, np.float16)
    with np.errstate(all="ignore"):
        for t in terms:
            acc = (acc.astype(np.float64) + t).astype(np.float16)
    return acc.astype(np.float64)


def fp16_accumulated(ctx: OpContext) -> Result:
    """MATMUL or FULLY_CONNECTED with its dot products accumulated in fp16 (products in
    fp64, every running sum rounded to fp16, the bias added in fp16)."""
    with np.errstate(all="ignore"):
        if ctx.name == "MATMUL":
            a, b = ar.as_float(ctx.arg("A")), ar.as_float(ctx.arg("B"))
            n, h, c = a.shape
            products = (a[:, :, k, None] * b[:, None, k, :] for k in range(c))
            return {"output": _fp16_sum(products, (n, h, b.shape[2]))}
        x, w = ar.as_float(ctx.arg("input")), ar.as_float(ctx.arg("weight"))
        terms = (x[:, None, k] * w[None, :, k] for k in range(x.shape[1]))
        acc = _fp16_sum(terms, (x.shape[0], w.shape[0]))
        bias = ar.as_float(ctx.arg("bias")).reshape(-1)
        return {"output": (acc + bias).astype(np.float16).astype(np.float64)}

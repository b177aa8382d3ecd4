"""The composed bound of a floating-point chain (introduction, "Operator sequence
precision requirement").

An implementation of a sequence A[0] .. A[n-1] is compliant when it gives what some
sequence M[0] .. M[n-1] gives, where each M[k] computes A[k] in the same or a higher
precision and meets A[k]'s accuracy once its output is rounded to A[k]'s type.  So an
intermediate result of a rounding operator need not be a value of its type: it is any
real y whose rounding to the type lies within the operator's bound of the exact result
on M[k]'s actual inputs.  Carried through the chain per element, as an interval:

* a graph input or constant is its own value, [v, v];
* ADD, SUB and MUL (the ulp rule, n ulp) take the range of the exact result over their
  operands' intervals, [f_lo, f_hi]; the results a compliant M[k] may pass on are those
  that round into [f_lo - n ulp(f_lo), f_hi + n ulp(f_hi)]: from the first value of the
  type in it less half the gap below that value, to the last one plus half the gap above.
  Where the interval reaches the subnormal range it also holds 0 (a backend may flush);
* exact operators map the interval: the monotone ones (MAXIMUM, MINIMUM, CLAMP, CEIL,
  FLOOR, IDENTITY; NEGATE reversed; ABS folded at 0) by their ends, data movement
  (RESHAPE, TRANSPOSE, REVERSE, SLICE, TILE) by moving both ends;
* the last operator's result is its type's value within n ulp of the exact result over
  its operands' intervals: [f_lo - n ulp(f_lo), f_hi + n ulp(f_hi)].

The check is ABS_ERROR with the bound tensor err_bnd = the larger distance from the
reference result to the ends (Magnitude.BOUND): the reference's sequence (every
intermediate rounded to its type) is one compliant sequence, so the interval holds it.
A fused multiply-add, or the whole chain computed in fp32 and rounded once, stays
inside; a reassociation that cancels differently leaves it.  Not composed (None): any
other operator after a rounding one, an interval that reaches infinity or NaN.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from conformance.dtypes import DType
from conformance.graph import Block, Operator
from conformance.operator_table import family
from reference.compliance.bounds import ulp_size
from reference.compliance.rules import ulp_operators
from reference.engine import to_storage

ROUNDING = family(("ADD", "SUB", "MUL"))  # the ulp operators a chain may hold mid-way
INCREASING = family(("MAXIMUM", "MINIMUM", "CLAMP", "CEIL", "FLOOR", "IDENTITY"))
MOVING = family(("RESHAPE", "TRANSPOSE", "REVERSE", "SLICE", "TILE"))
COMPOSED_RULE = (
    "introduction, Operator sequence precision requirement: each operator's bound carried "
    "through the chain (reference/compliance/chain_bound.py)"
)

Interval = tuple[np.ndarray, np.ndarray]


def needs_composing(block: Block) -> bool:
    """Whether a rounding float result feeds another operator of ``block``: its last
    operator's rule alone cannot judge the output."""
    produced = {o: op for op in block.operators for o in op.outputs}
    for op in block.operators:
        for name in op.inputs:
            src = produced.get(name)
            if src is not None and src.op in ROUNDING and block.tensors[name].dtype.is_float:
                return True
    return False


def _step(v: np.ndarray, dt: DType, up: bool) -> np.ndarray:
    """The neighbour of each value of ``dt`` (given in fp64) toward +inf or -inf."""
    stored = to_storage(v, dt)
    bits = stored.view(f"u{stored.dtype.itemsize}").astype(np.int64)
    positive = ~np.signbit(stored.astype(np.float64))
    zero = stored.astype(np.float64) == 0
    away = positive == up  # moving away from zero: the magnitude's bits grow
    bits = np.where(away, bits + 1, bits - 1)
    tiny = float(np.asarray(1, f"u{stored.dtype.itemsize}").view(stored.dtype).astype(np.float64))
    moved = bits.astype(f"u{stored.dtype.itemsize}").view(stored.dtype).astype(np.float64)
    return np.where(zero, tiny if up else -tiny, moved)


def _type_floor_ceil(v: np.ndarray, dt: DType, ceil: bool) -> np.ndarray:
    """The first value of ``dt`` at or above ``v`` (ceil) or at or below it."""
    r = to_storage(v, dt).astype(np.float64)
    wrong = r < v if ceil else r > v
    return np.where(wrong, _step(r, dt, ceil), r)


def _passable(lo: np.ndarray, hi: np.ndarray, dt: DType) -> Interval:
    """The reals a compliant M[k] may pass on: those that round into [lo, hi]."""
    with np.errstate(invalid="ignore", over="ignore"):  # an infinite end: not composed
        first = _type_floor_ceil(lo, dt, ceil=True)
        last = _type_floor_ceil(hi, dt, ceil=False)
        low = first - (first - _step(first, dt, up=False)) / 2
        high = last + (_step(last, dt, up=True) - last) / 2
    small = dt.fp.normal_min  # flushed to zero: a subnormal result may be 0
    low = np.where((low < small) & (high > -small), np.minimum(low, 0.0), low)
    high = np.where((low < small) & (high > -small), np.maximum(high, 0.0), high)
    return low, high


def _exact_range(op: str, a: Interval, b: Interval) -> Interval:
    (a0, a1), (b0, b1) = a, b
    if op == "ADD":
        return a0 + b0, a1 + b1
    if op == "SUB":
        return a0 - b1, a1 - b0
    with np.errstate(invalid="ignore", over="ignore"):  # inf * 0: not composed
        products = np.stack(np.broadcast_arrays(a0 * b0, a0 * b1, a1 * b0, a1 * b1))
    return products.min(axis=0), products.max(axis=0)


def _moved(op: Operator, x: np.ndarray, ints: Any, out_shape: tuple[int, ...]) -> np.ndarray:
    if op.op == "RESHAPE":
        return x.reshape(out_shape)
    if op.op == "TRANSPOSE":
        return np.transpose(x, [int(p) for p in op.attributes["perms"]])
    if op.op == "REVERSE":
        return np.flip(x, int(op.attributes["axis"]))
    if op.op == "SLICE":
        start, size = ints(1), ints(2)
        return x[tuple(slice(s, s + n) for s, n in zip(start, size, strict=True))]
    return np.tile(x, ints(1))  # TILE


def composed_interval(block: Block, values: Mapping[str, Any], output: str) -> Interval | None:
    """Per element of ``output``, the interval of results a compliant sequence gives;
    ``values`` are the reference's (inputs, constants and every result).  None where it
    is not composed (see the module's docstring)."""
    known: dict[str, Interval] = {}
    rounding_seen = False
    last = next(op for op in block.operators if output in op.outputs)

    def interval(name: str) -> Interval:
        if name not in known:
            v = np.asarray(values[name]).astype(np.float64)
            known[name] = (v, v)
        return known[name]

    def ints(op: Operator, k: int) -> list[int]:
        return [int(v) for v in np.asarray(values[op.inputs[k]]).reshape(-1)]

    for op in block.operators:
        out = block.tensors[op.outputs[0]]
        exact_inputs = all(
            n not in known or np.array_equal(known[n][0], known[n][1]) for n in op.inputs
        )
        if op.op in ROUNDING and out.dtype.is_float:
            rounding_seen = True
            lo, hi = _exact_range(op.op, interval(op.inputs[0]), interval(op.inputs[1]))
            n = float(ulp_operators()[op.op])
            lo = lo - n * ulp_size(lo, out.dtype)
            hi = hi + n * ulp_size(hi, out.dtype)
            if op is not last:
                lo, hi = _passable(lo, hi, out.dtype)
        elif exact_inputs:
            continue  # its own value: the reference's result (interval() reads it)
        elif op.op in INCREASING or op.op in ("NEGATE", "ABS"):
            lo, hi = _monotone(op, [interval(n) for n in op.inputs])
        elif op.op in MOVING:
            a0, a1 = interval(op.inputs[0])
            lo = _moved(op, a0, lambda k, o=op: ints(o, k), out.shape)
            hi = _moved(op, a1, lambda k, o=op: ints(o, k), out.shape)
        else:
            return None  # a comparison, a CAST, a reduction of a rounded value ...
        if not (np.isfinite(lo).all() and np.isfinite(hi).all()):
            return None
        shape = out.shape
        known[op.outputs[0]] = (np.broadcast_to(lo, shape), np.broadcast_to(hi, shape))
        if op is last:
            break
    if not rounding_seen or output not in known:
        return None
    return known[output]


def _monotone(op: Operator, operands: list[Interval]) -> Interval:
    (a0, a1) = operands[0]
    if op.op == "NEGATE":
        return -a1, -a0
    if op.op == "ABS":
        low = np.where(a0 > 0, a0, np.where(a1 < 0, -a1, 0.0))
        return low, np.maximum(np.abs(a0), np.abs(a1))
    if op.op in ("MAXIMUM", "MINIMUM"):
        (b0, b1) = operands[1]
        f = np.maximum if op.op == "MAXIMUM" else np.minimum
        return f(a0, b0), f(a1, b1)
    if op.op == "CLAMP":
        lo_v = float(op.attributes["min_val"])
        hi_v = float(op.attributes["max_val"])
        return np.clip(a0, lo_v, hi_v), np.clip(a1, lo_v, hi_v)
    if op.op == "CEIL":
        return np.ceil(a0), np.ceil(a1)
    if op.op == "FLOOR":
        return np.floor(a0), np.floor(a1)
    return a0, a1  # IDENTITY


def composed_error_bound(interval: Interval, reference: np.ndarray) -> np.ndarray:
    """err_bnd around the reference result that covers the interval."""
    lo, hi = interval
    ref = np.asarray(reference, dtype=np.float64)
    return np.maximum(ref - lo, hi - ref)

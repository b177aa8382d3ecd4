"""The conditions of the graph-rewrite obligations (strategies.rewrites), read from a
written chain's graph and data: one ``shows_*`` per rewrite, true when the pattern ends
at the graph's output and its data holds the condition under which a wrong rewrite
changes the result."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from conformance.dtypes import DType
from conformance.graph import Block, Operator
from conformance.spec import Spec
from reference.engine import Evaluator
from reference.ops.type_conversion import apply_scale_32
from strategies.case import Case
from strategies.chains import (
    conv_input_zp,
    padded_convolutions,
    pool_fold_legal,
)


def _ending(case: Case, op: str) -> tuple[Block, Operator, list[Operator]] | None:
    """The block, the operator that produces the graph's output if it is ``op``, and
    the block's operators before it."""
    block = case.graph.main
    out = block.outputs[0] if block.outputs else None
    for k, o in enumerate(block.operators):
        if out in o.outputs:
            return (block, o, block.operators[:k]) if o.op == op else None
    return None


def producer(block: Block, tensor: str, op: str | None = None) -> Operator | None:
    """The operator of ``block`` that writes ``tensor`` (of kind ``op`` if given)."""
    found = next((o for o in block.operators if tensor in o.outputs), None)
    return found if found is not None and (op is None or found.op == op) else None


def _pair(case: Case, last: str, first: str) -> tuple[Block, Operator, Operator] | None:
    """The block, the operator ``last`` that produces the graph's output, and the ``first``
    that produces its first operand: the pattern FIRST > LAST at the graph's end."""
    found = _ending(case, last)
    if found is None:
        return None
    block, op, _ = found
    before = producer(block, op.inputs[0], first)
    return None if before is None else (block, op, before)


def values_of(case: Case, tensor: str) -> np.ndarray | None:
    """A graph input's or a constant's values (None for a computed tensor)."""
    if tensor in case.inputs:
        return np.asarray(case.inputs[tensor])
    data = case.graph.main.tensors[tensor].data
    return None if data is None else np.asarray(data)


def _ints(case: Case, block: Block, op: Operator, index: int) -> list[int] | None:
    """A shape operand's elements (PAD's padding, SLICE's start and size)."""
    if index >= len(op.inputs):
        return None
    v = values_of(case, op.inputs[index])
    return None if v is None else [int(x) for x in v.reshape(-1)]


def _floats(v: np.ndarray | None) -> np.ndarray | None:
    """``v`` as float64 if it holds a floating-point type (bf16 and fp8 included)."""
    if v is None or v.dtype.kind in "biu":
        return None
    return np.asarray(v).astype(np.float64)


def _non_finite(v: np.ndarray | None) -> bool:
    f = _floats(v)
    return f is not None and not np.isfinite(f).all()


def shows_mul_zero(spec: Spec, case: Case) -> bool:
    found = _ending(case, "MUL")
    if found is None:
        return False
    _, op, _ = found
    a, b = (values_of(case, t) for t in op.inputs[:2])
    for zero, x in ((a, b), (b, a)):
        z = _floats(zero)
        if z is not None and not z.any() and _non_finite(x):
            return True
    return False


def shows_sub_self(spec: Spec, case: Case) -> bool:
    found = _ending(case, "SUB")
    if found is None:
        return False
    _, op, _ = found
    return op.inputs[0] == op.inputs[1] and _non_finite(values_of(case, op.inputs[0]))


def clamp_bounds(op: Operator) -> tuple[float, float]:
    return float(op.attributes["min_val"]), float(op.attributes["max_val"])


def shows_clamp_clamp(spec: Spec, case: Case) -> bool:
    pair = _pair(case, "CLAMP", "CLAMP")
    if pair is None:
        return False
    _block, op, inner = pair
    lo1, hi1 = clamp_bounds(inner)
    lo2, hi2 = clamp_bounds(op)
    return hi1 < lo2 or hi2 < lo1


def _const_scalar(case: Case, op: Operator) -> tuple[str, float] | None:
    """(the other operand, the constant's value) when one operand of ``op`` is a
    constant holding one value."""
    for k in (0, 1):
        v = values_of(case, op.inputs[k]) if op.inputs[k] not in case.inputs else None
        if v is not None and v.size >= 1 and (v == v.reshape(-1)[0]).all():
            return op.inputs[1 - k], float(v.reshape(-1)[0])
    return None


def shows_min_max(spec: Spec, case: Case) -> bool:
    found = _ending(case, "MAXIMUM")
    if found is None:
        return False
    block, op, _ = found
    outer = _const_scalar(case, op)
    if outer is None:
        return False
    inner_op = producer(block, outer[0], "MINIMUM")
    inner = _const_scalar(case, inner_op) if inner_op is not None else None
    return inner is not None and outer[1] > inner[1]


def composed(p1: Iterable[int], p2: Iterable[int]) -> tuple[int, ...]:
    """The one permutation TRANSPOSE(TRANSPOSE(x, p1), p2) is: output axis i is input
    axis p1[p2[i]]."""
    a, b = list(p1), list(p2)
    return tuple(a[i] for i in b)


def shows_transpose_transpose(spec: Spec, case: Case) -> bool:
    pair = _pair(case, "TRANSPOSE", "TRANSPOSE")
    if pair is None:
        return False
    _block, op, inner = pair
    x = values_of(case, inner.inputs[0])
    if x is None:
        return False
    p1, p2 = list(inner.attributes["perms"]), list(op.attributes["perms"])
    right = np.transpose(x, composed(p1, p2))
    wrong = np.transpose(x, composed(p2, p1))
    return bool(right.shape != wrong.shape or (right != wrong).any())


def shows_reverse_reverse(spec: Spec, case: Case) -> bool:
    pair = _pair(case, "REVERSE", "REVERSE")
    if pair is None:
        return False
    _, op, inner = pair
    x = values_of(case, inner.inputs[0])
    if x is None:
        return False
    right = np.flip(np.flip(x, int(inner.attributes["axis"])), int(op.attributes["axis"]))
    return bool((right != x).any())


def shows_reshape_transpose_reshape(spec: Spec, case: Case) -> bool:
    pair = _pair(case, "RESHAPE", "TRANSPOSE")
    if pair is None:
        return False
    block, _, t = pair
    r = producer(block, t.inputs[0], "RESHAPE")
    x = values_of(case, r.inputs[0]) if r is not None else None
    if t is None or r is None or x is None:
        return False
    mid = block.tensors[t.inputs[0]].shape
    right = np.transpose(x.reshape(mid), list(t.attributes["perms"])).reshape(-1)
    return bool((right != x.reshape(-1)).any())


def seams(sizes: Iterable[int]) -> list[int]:
    """Where each input after the first begins along the concatenation axis."""
    out, at = [], 0
    for s in list(sizes)[:-1]:
        at += s
        out.append(at)
    return out


def shows_slice_concat(spec: Spec, case: Case) -> bool:
    pair = _pair(case, "SLICE", "CONCAT")
    if pair is None:
        return False
    block, op, cat = pair
    start, size = _ints(case, block, op, 1), _ints(case, block, op, 2)
    if start is None or size is None:
        return False
    axis = int(cat.attributes["axis"])
    sizes = [block.tensors[t].shape[axis] for t in cat.inputs]
    lo, hi = start[axis], start[axis] + size[axis]
    for k, s in enumerate(seams(sizes)):
        if lo < s < hi:  # crosses: the part past it must not be what a wrong read gives
            later = values_of(case, cat.inputs[k + 1])
            return later is None or bool(later.any())
    return False


def window(x: np.ndarray, start: list[int], size: list[int]) -> np.ndarray:
    return x[tuple(slice(a, a + n) for a, n in zip(start, size, strict=True))]


def shows_slice_slice(spec: Spec, case: Case) -> bool:
    pair = _pair(case, "SLICE", "SLICE")
    if pair is None:
        return False
    block, op, inner = pair
    x = values_of(case, inner.inputs[0])
    s1, z1 = _ints(case, block, inner, 1), _ints(case, block, inner, 2)
    s2, z2 = _ints(case, block, op, 1), _ints(case, block, op, 2)
    if x is None or s1 is None or z1 is None or s2 is None or z2 is None:
        return False
    right = window(window(x, s1, z1), s2, z2)
    wrong = window(x, s2, z2)  # the first offset dropped
    return bool(right.shape != wrong.shape or (right != wrong).any())


def pad_const_of(case_or_values: Any, block: Block, op: Operator) -> float | None:
    """PAD's pad_const: an attribute (the 2024 draft) or its [1] input (TOSA 1.0)."""
    if "pad_const" in op.attributes:
        return float(op.attributes["pad_const"])
    if len(op.inputs) < 3:
        return None
    name = op.inputs[2]
    if isinstance(case_or_values, Case):
        v = values_of(case_or_values, name)
    else:
        v = case_or_values.get(name)
    return None if v is None else float(np.asarray(v).reshape(-1)[0])


def shows_pad_pad(spec: Spec, case: Case) -> bool:
    pair = _pair(case, "PAD", "PAD")
    if pair is None:
        return False
    block, op, inner = pair
    p1 = _ints(case, block, inner, 1)
    c1, c2 = pad_const_of(case, block, inner), pad_const_of(case, block, op)
    return bool(p1 and any(p1) and c1 is not None and c1 != c2)


def shows_cast_cast(spec: Spec, case: Case) -> bool:
    pair = _pair(case, "CAST", "CAST")
    if pair is None:
        return False
    block, _op, inner = pair
    x = values_of(case, inner.inputs[0])
    narrow = block.tensors[inner.outputs[0]].dtype
    if x is None or not narrow.is_int or x.dtype.kind not in "iu":
        return False
    lo, hi = narrow.int_range
    return bool(((x < lo) | (x > hi)).any())


def pool_shows(spec: Spec, case: Case, pool: str) -> bool:
    pair = _pair(case, pool, "PAD")
    if pair is None:
        return False
    block, op, pad = pair
    padding = _ints(case, block, pad, 1)
    c = pad_const_of(case, block, pad)
    if padding is None or c is None or not pool_fold_legal(padding, op):
        return False
    if not any(padding[2:6]):
        return False
    if pool == "AVG_POOL2D":  # pad_const the zero point: only the divisor tells them apart
        return c == float(conv_input_zp(case, block, op))
    x = values_of(case, pad.inputs[0])  # a window's interior max below pad_const
    return x is not None and bool((x.astype(np.float64) < c).any())


def shows_pad_conv(spec: Spec, case: Case) -> bool:
    block = case.graph.main
    last = block.operators[-1] if block.operators else None
    if last is None or last.op not in padded_convolutions(spec):
        return False
    pad = producer(block, last.inputs[0], "PAD")
    if pad is None:
        return False
    padding = _ints(case, block, pad, 1)
    c = pad_const_of(case, block, pad)
    rank = len(block.tensors[pad.inputs[0]].shape)
    if padding is None or c is None:
        return False
    spatial = padding[2 : 2 * (rank - 1)]
    zp = conv_input_zp(case, block, last)
    return any(spatial) and not any(padding[:2]) and not any(padding[-2:]) and c != zp


def shows_transpose_reshape(spec: Spec, case: Case) -> bool:
    pair = _pair(case, "RESHAPE", "TRANSPOSE")
    if pair is None:
        return False
    block, _op, t = pair
    shape = block.tensors[t.inputs[0]].shape
    long_axes = [a for a in t.attributes["perms"] if shape[a] > 1]
    return long_axes != sorted(long_axes)


def epilogue(acc: np.ndarray, m: np.ndarray, s: np.ndarray, zp: int, out: DType) -> np.ndarray:
    """RESCALE of ``acc`` (its last axis the channels) to ``out``: scaled, plus the output
    zero point, then saturated (RESCALE.tosac)."""
    lo, hi = out.int_range
    return np.clip(_scaled(acc, m, s) + zp, lo, hi)


def _scaled(acc: np.ndarray, m: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The reference's apply_scale_32, single round (its REQUIREs hold in a valid chain)."""
    v, mult, shift = (np.asarray(a, np.int64) for a in (acc, m, s))
    return apply_scale_32(v, mult, shift, False)[0].astype(np.int64)


def _epilogue_parts(
    spec: Spec, case: Case
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, DType] | None:
    """(accumulator, multipliers, shifts, output zero point, output type) of a CONV2D >
    RESCALE chain's per-channel epilogue; None for any other graph."""
    pair = _pair(case, "RESCALE", "CONV2D")
    if pair is None:
        return None
    block, op, _ = pair
    if not op.attributes.get("per_channel"):
        return None
    run = Evaluator(case.graph, spec, spec.level("8K"))
    if not run.run(case.inputs).valid:
        return None
    values = run.main_values
    acc = np.asarray(values[op.inputs[0]]).astype(np.int64)
    m = np.asarray(values[op.inputs[1]]).astype(np.int64).reshape(-1)
    s = np.asarray(values[op.inputs[2]]).astype(np.int64).reshape(-1)
    zp = op.attributes.get("output_zp")
    if zp is None:
        zp = int(np.asarray(values[op.inputs[4]]).reshape(-1)[0])
    return acc, m, s, int(zp), block.tensors[op.outputs[0]].dtype


def shows_epilogue_per_tensor(spec: Spec, case: Case) -> bool:
    parts = _epilogue_parts(spec, case)
    if parts is None:
        return False
    acc, m, s, zp, out = parts
    right = epilogue(acc, m, s, zp, out)
    wrong = epilogue(acc, m[:1], s[:1], zp, out)
    return bool((right != wrong).any())


def wrapped(v: np.ndarray, dt: DType) -> np.ndarray:
    """``v`` kept to ``dt``'s low bits, as a store to an integer register does."""
    return np.asarray(v, np.int64).astype(dt.storage).astype(np.int64)


def shows_epilogue_zp_late(spec: Spec, case: Case) -> bool:
    parts = _epilogue_parts(spec, case)
    if parts is None:
        return False
    acc, m, s, zp, out = parts
    lo, hi = out.int_range
    right = epilogue(acc, m, s, zp, out)
    wrong = wrapped(np.clip(_scaled(acc, m, s), lo, hi) + zp, out)
    return bool((right != wrong).any())

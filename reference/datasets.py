"""Appendix A test data: ``set_data``, ``tosa_mi_data`` and the per-operator data sets
S = 0..5 that the dot product accuracy rule is checked on.

Everything is vectorised over index arrays.  ``set_data``'s recurrence
``r <- r * m + 1 (mod 2**32)`` is the affine map ``x -> m*x + 1`` applied ``index + 1``
times to 1, so ``r`` for every index at once comes from composing powers of that map
by repeated squaring (33 doublings cover any uint32 index).

Precision choices the appendix leaves open (see the module's tests and the report):

* ``set_data`` is computed as its C code does, in fp32 (the value is a C ``float``);
* ``tosa_mi_data``'s arithmetic (``B/sqrt(KS+1)``, ``exp``) is done in fp64 from those
  fp32 values and rounded once, to nearest even, to the tensor's type;
* the bias line ``tosa_mi_data(S, KS, 2, oc)`` lacks an argument: ``oc`` is taken as
  the tensor index ``i`` (only S=1 reads it) and ``k`` as 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from conformance import dtypes as dts
from conformance.dtypes import DType
from conformance.operator_table import OperatorTable
from reference.compliance import MIN_DOT_PRODUCTS
from reference.compliance.revision_rules import DataSetRule, current
from reference.engine import to_storage

__all__ = [
    "B_TABLE",
    "DATA_SETS",
    "MIN_DOT_PRODUCTS",
    "bound_b",
    "dataset_inputs",
    "kernel_size",
    "set_data",
    "tosa_mi_data",
    "tosa_pro_fp_data",
]

_MASK32 = np.uint64(0xFFFFFFFF)
_SET_MULTIPLIER = 0x705A5E75  # "TOSASETS"


def _lcg_state(set_: int, index: np.ndarray) -> np.ndarray:
    """``r`` after ``index`` steps of the recurrence, as uint64 holding a uint32."""
    m = ((8 * set_ + 1) * _SET_MULTIPLIER) & 0xFFFFFFFF
    steps = index.astype(np.uint64) + np.uint64(1)  # r = f^(index+1)(1), f(x) = m*x + 1
    # (a, b) is the map x -> a*x + b; the result starts as the identity.
    res_a = np.ones(steps.shape, np.uint64)
    res_b = np.zeros(steps.shape, np.uint64)
    pow_a, pow_b = np.uint64(m), np.uint64(1)  # f^(2**bit)
    bits = int(steps.max()).bit_length() if steps.size else 0  # at most 33
    for bit in range(bits):
        use = ((steps >> np.uint64(bit)) & np.uint64(1)).astype(bool)
        # Powers of one map commute, so the order of composition does not matter:
        # f^p(f^q(x)) = pow_a*(res_a*x + res_b) + pow_b.  Both factors are < 2**32, so
        # the uint64 products are exact before the reduction mod 2**32.
        new_a = (pow_a * res_a) & _MASK32
        new_b = (pow_a * res_b + pow_b) & _MASK32
        res_a = np.where(use, new_a, res_a)
        res_b = np.where(use, new_b, res_b)
        pow_a, pow_b = (pow_a * pow_a) & _MASK32, (pow_a * pow_b + pow_b) & _MASK32
    return (res_a + res_b) & _MASK32  # applied to x = 1


def set_data(set_: int, index: Any) -> np.ndarray:
    """Appendix A ``set_data(set, index)`` for an array of indices, as fp32 values in
    [-1, 1] (the C function returns a ``float``, so it is computed in fp32)."""
    idx = np.asarray(index)
    if idx.size and (np.min(idx) < 0 or np.max(idx) > 0xFFFFFFFF):
        raise ValueError("set_data indices are uint32")
    r = _lcg_state(int(set_), idx)
    sign = np.where((r >> np.uint64(31)) == 0, np.float32(1.0), np.float32(-1.0))
    # (float)(r & 0x7FFFFFFF) / (float)0x7FFFFFFF: both converted to fp32 first (the
    # divisor becomes 2**31) and divided in fp32.
    magnitude = (r & np.uint64(0x7FFFFFFF)).astype(np.float32) / np.float32(0x7FFFFFFF)
    return (sign * magnitude).astype(np.float32)


# -- the bound B ------------------------------------------------------------------------

# Appendix A's table, by (input type, accumulator type) in the draft and by (input
# type, output type) in 1.0; every entry of either is the rule largest_square_safe
# states (tests/reference/test_datasets.py checks them), and the two tables agree
# where both have a row.
B_TABLE: dict[tuple[str, str], float] = {
    ("fp16", "fp16"): 255.875,  # (1<<8) - (1/8)
    ("fp16", "fp32"): 65504.0,  # (1<<16) - (1<<5)
    ("bf16", "fp32"): 2.0**64 - 2.0**56,
    ("fp32", "fp32"): 2.0**64 - 2.0**40,
}
# 1.0's further rows (appendix_a, B table).
B_TABLE_1_0: dict[tuple[str, str], float] = {
    **B_TABLE,
    ("fp8e4m3", "fp16"): 240.0,  # (1<<8) - (1<<4)
    ("fp8e4m3", "fp32"): 448.0,
    ("fp8e5m2", "fp16"): 224.0,  # (1<<8) - (1<<5)
    ("fp8e5m2", "fp32"): 57344.0,
    ("fp8e4m3", "fp8e4m3"): 20.0,
    ("fp8e5m2", "fp8e5m2"): 224.0,
    ("bf16", "bf16"): 2.0**64 - 2.0**56,
}


def largest_square_safe(in_dt: DType, limit: float) -> float:
    """The appendix's rule for B: the largest value representable in ``in_dt`` whose
    square does not exceed ``limit``."""
    target = min(float(in_dt.fp.normal_max), math.sqrt(limit))
    # Round down to in_dt's significand (normal_frac + 1 bits) in the binade of target.
    exp = math.floor(math.log2(target))
    ulp = math.ldexp(1.0, exp - in_dt.fp.normal_frac)
    b = math.floor(target / ulp) * ulp
    while b * b > limit:  # exact: both significands are at most 24 bits
        b -= ulp
    return b


def bound_b(in_dt: DType, acc_dt: DType, out_dt: DType | None = None) -> float:
    """B for data sets S=1, 4, 5.

    The appendix defines B by the accumulator; where the output type has a smaller
    range than the accumulator (CONV2D fp16 with fp32 accumulate writes fp16), B*B
    must also fit the output or S=1 could only ever overflow it, so the narrower of
    the two decides.  Pairs the table does not list (the fp8 inputs) follow the
    table's own rule.
    """
    rule = current().data_sets.value
    limit_dt = acc_dt
    # TOSA 1.0 keys B by the output type alone.
    if (
        out_dt is not None
        and out_dt.is_float
        and (rule.b_by == "output" or out_dt.fp.normal_max < acc_dt.fp.normal_max)
    ):
        limit_dt = out_dt
    key = (in_dt.name, limit_dt.name)
    table = B_TABLE_1_0 if rule.b_by == "output" else B_TABLE
    if key in table:
        return table[key]
    return largest_square_safe(in_dt, float(limit_dt.fp.normal_max))


# -- tosa_mi_data -----------------------------------------------------------------------


def tosa_mi_data(s: int, ks: int, p: int, k: Any, i: Any, *, b: float | None = None) -> np.ndarray:
    """Appendix A ``tosa_mi_data(S, KS, p, k, i)`` (1.0: ``tosa_pro_fp_data``) in fp64
    for arrays ``k`` and ``i`` (broadcast together); ``b`` is the bound B, needed by
    S=1, 4 and 5.  The process's spec decides the revision's generator
    (revision_rules.DataSetRule: which set_data sequences S = 0, 2, 3, 4 read, and
    1.0's signed S = 1)."""
    rule: DataSetRule = current().data_sets.value
    m = rule.set_stride  # the draft's 2*S, 1.0's 3*S
    if s not in range(6):
        raise ValueError(f"test set S must be 0..5, got {s}")
    if p not in (0, 1, 2):
        raise ValueError(f"parameter number p must be 0, 1 or 2, got {p}")
    if s in (1, 4, 5) and b is None:
        raise ValueError(f"test set S={s} needs the bound B")
    k_arr, i_arr = np.broadcast_arrays(np.asarray(k, np.int64), np.asarray(i, np.int64))

    def sd(set_: int, idx: np.ndarray) -> np.ndarray:
        return set_data(set_, idx).astype(np.float64)

    zeros = np.zeros(i_arr.shape)
    if p == 2 and s != 1:
        return zeros
    if s == 0:
        neg = sd(m * s, i_arr) < 0
        value = sd(m * s + 1, i_arr)
        return np.where(neg, 0.0, value) if p == 0 else np.where(neg, value, 0.0)
    if s == 1:
        assert b is not None  # checked above for S=1, 4 and 5
        scale = b * b / (ks + 1) if p == 2 else b / math.sqrt(ks + 1)
        if not rule.signed_s1:
            return scale * (0.75 + 0.25 * sd(3 * s + p, i_arr))
        # 1.0: the sign from set_data at 2i, the spread from 2i+1 (uint32 indices).
        i2 = (2 * i_arr) & 0xFFFFFFFF
        base = np.where(sd(3 * s + p, i2) < 0, -0.75, 0.75)
        return scale * (base + 0.25 * sd(3 * s + p, (i2 + 1) & 0xFFFFFFFF))
    if s == 2:
        return np.where(k_arr == 0, 1.0, sd(m * s + p, i_arr) / math.sqrt(ks))
    if s == 3:
        # Indices 2i and 2i+1 wrap as the uint32 arithmetic of the C code would.
        i2 = (2 * i_arr) & 0xFFFFFFFF
        first = sd(m * s + p, i2)
        big = np.where(first < 0, -16.0, 16.0)
        return np.where(k_arr == 0, big, np.exp(2.0 * first) * sd(m * s + p, (i2 + 1) & 0xFFFFFFFF))
    assert b is not None
    if s == 4:
        neg = sd(m * s, i_arr) < 0
        middle = k_arr == ks // 2
        scaled = (b / math.sqrt(ks)) * sd(m * s + 1, i_arr)
        if p == 0:
            return np.where(middle, np.where(neg, -0.5, 0.5), np.where(neg, 0.0, scaled))
        return np.where(middle, np.where(neg, 0.5, -0.5), np.where(neg, scaled, 0.0))
    return (b / math.sqrt(ks)) * sd(3 * s + p, i_arr)  # s == 5


# 1.0's name for the same generator.
tosa_pro_fp_data = tosa_mi_data


# -- per-operator data ------------------------------------------------------------------

# (k, i) index arrays for one tensor, from its shape.
IndexFn = Callable[[tuple[int, ...]], tuple[np.ndarray, np.ndarray]]


def _flat(shape: Sequence[int]) -> np.ndarray:
    """The row-major offset of every element (the appendix's i for most tensors)."""
    return np.arange(math.prod(shape), dtype=np.int64).reshape(tuple(shape))


def _grid(shape: Sequence[int]) -> list[np.ndarray]:
    return list(np.ogrid[tuple(slice(0, d) for d in shape)])


def _conv_input(kernel: Sequence[int]) -> IndexFn:
    """Data input of a convolution: k walks the kernel window by position modulo the
    kernel size, then channel; ``kernel`` is (KD,) KH, KW, and the last axis is IC."""

    def fn(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        grid = _grid(shape)
        spatial, ic = grid[1:-1], grid[-1]
        k = np.zeros((1,) * len(shape), np.int64)
        for pos, size in zip(spatial, kernel, strict=True):
            k = k * size + pos % size
        return np.broadcast_to(k * shape[-1] + ic, shape), _flat(shape)

    return fn


def _conv_weight(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """[OC, (KD,) KH, KW, IC] weights: k is the offset within one output channel."""
    flat = _flat(shape)
    per_oc = math.prod(shape[1:])
    return flat % per_oc, flat


def _depthwise_input(kh: int, kw: int) -> IndexFn:
    def fn(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        _, iy, ix, _ = _grid(shape)
        return np.broadcast_to((iy % kh) * kw + ix % kw, shape), _flat(shape)

    return fn


def _depthwise_weight(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    ky, kx, _, _ = _grid(shape)
    return np.broadcast_to(ky * shape[1] + kx, shape), _flat(shape)


def _last_axis(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """k is the index along the last axis (FULLY_CONNECTED input/weight, MATMUL A)."""
    return np.broadcast_to(_grid(shape)[-1], shape), _flat(shape)


def _matmul_b(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    _, c, _ = _grid(shape)
    return np.broadcast_to(c, shape), _flat(shape)


def _bias(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(shape, np.int64), _flat(shape)


def _fft_input(part: int) -> IndexFn:
    def fn(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        n_, h, w = shape
        n, y, x = _grid(shape)
        k = np.broadcast_to(y * w + x, shape)
        return k, ((part * n_ + n) * h + y) * w + x

    return fn


def _avg_pool_input(ky: int, kx: int) -> IndexFn:
    def fn(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        _, iy, ix, c = _grid(shape)
        return np.broadcast_to(((iy % ky) * kx + ix % kx) * shape[3] + c, shape), _flat(shape)

    return fn


def _reduce_input(axis: int) -> IndexFn:
    def fn(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        return np.broadcast_to(_grid(shape)[axis], shape), _flat(shape)

    return fn


# What Appendix A fills for one operator: KS, and for each input argument it fills its
# parameter number p and the function giving (k, i) for every element.
Layout = dict[str, tuple[int, IndexFn]]
DataSet = Callable[[Mapping[str, Sequence[int]], Mapping[str, Any]], tuple[int, Layout]]

# Operator -> its Appendix A data set (a new dot-product operator registers here).
DATA_SETS: OperatorTable[DataSet] = OperatorTable()


@DATA_SETS.register("CONV2D", "TRANSPOSE_CONV2D")
def _conv2d(shapes: Mapping[str, Sequence[int]], attrs: Mapping[str, Any]) -> tuple[int, Layout]:
    _, kh, kw, ic = shapes["weight"]
    inputs = {"input": (0, _conv_input((kh, kw))), "weight": (1, _conv_weight), "bias": (2, _bias)}
    return kw * kh * ic, inputs


@DATA_SETS.register("CONV3D")
def _conv3d(shapes: Mapping[str, Sequence[int]], attrs: Mapping[str, Any]) -> tuple[int, Layout]:
    _, kd, kh, kw, ic = shapes["weight"]
    inputs = {
        "input": (0, _conv_input((kd, kh, kw))),
        "weight": (1, _conv_weight),
        "bias": (2, _bias),
    }
    return kd * kw * kh * ic, inputs


@DATA_SETS.register("DEPTHWISE_CONV2D")
def _depthwise(shapes: Mapping[str, Sequence[int]], attrs: Mapping[str, Any]) -> tuple[int, Layout]:
    kh, kw, _, _ = shapes["weight"]
    inputs = {
        "input": (0, _depthwise_input(kh, kw)),
        "weight": (1, _depthwise_weight),
        "bias": (2, _bias),
    }
    return kw * kh, inputs


@DATA_SETS.register("FULLY_CONNECTED")
def _fully_connected(
    shapes: Mapping[str, Sequence[int]], attrs: Mapping[str, Any]
) -> tuple[int, Layout]:
    inputs: Layout = {"input": (0, _last_axis), "weight": (1, _last_axis), "bias": (2, _bias)}
    return int(shapes["input"][1]), inputs


@DATA_SETS.register("MATMUL")
def _matmul(shapes: Mapping[str, Sequence[int]], attrs: Mapping[str, Any]) -> tuple[int, Layout]:
    return int(shapes["A"][2]), {"A": (0, _last_axis), "B": (1, _matmul_b)}


@DATA_SETS.register("MATMUL_T")
def _matmul_t(shapes: Mapping[str, Sequence[int]], attrs: Mapping[str, Any]) -> tuple[int, Layout]:
    # TOSA 1.1: B is [D, W, C], so k is its last index, as A's.
    return int(shapes["A"][2]), {"A": (0, _last_axis), "B": (1, _last_axis)}


@DATA_SETS.register("AVG_POOL2D")
def _avg_pool2d(
    shapes: Mapping[str, Sequence[int]], attrs: Mapping[str, Any]
) -> tuple[int, Layout]:
    ky, kx = (int(v) for v in attrs["kernel"])
    return kx * ky, {"input": (0, _avg_pool_input(ky, kx))}


@DATA_SETS.register("REDUCE_SUM")
def _reduce_sum(
    shapes: Mapping[str, Sequence[int]], attrs: Mapping[str, Any]
) -> tuple[int, Layout]:
    axis = int(attrs["axis"])
    return int(shapes["input"][axis]), {"input": (0, _reduce_input(axis))}


@DATA_SETS.register("FFT2D")
def _fft2d(shapes: Mapping[str, Sequence[int]], attrs: Mapping[str, Any]) -> tuple[int, Layout]:
    _, h, w = shapes["input_real"]
    return 2 * h * w, {"input_real": (0, _fft_input(0)), "input_imag": (0, _fft_input(1))}


@DATA_SETS.register("RFFT2D")
def _rfft2d(shapes: Mapping[str, Sequence[int]], attrs: Mapping[str, Any]) -> tuple[int, Layout]:
    _, h, w = shapes["input_real"]
    return h * w, {"input_real": (0, _fft_input(0))}


def _appendix_a(op: str) -> DataSet:
    try:
        return DATA_SETS[op.upper()]
    except KeyError:
        raise ValueError(f"Appendix A defines no test data for {op}") from None


def kernel_size(op: str, shapes: Mapping[str, Sequence[int]], attrs: Mapping[str, Any]) -> int:
    """KS for ``op`` as Appendix A defines it."""
    return _appendix_a(op)(shapes, attrs)[0]


def _as_dtype(dt: DType | str) -> DType:
    return dts.dtype(dt) if isinstance(dt, str) else dt


def dataset_inputs(
    op: str,
    s: int,
    shapes: Mapping[str, Sequence[int]],
    dtypes: Mapping[str, DType | str],
    *,
    acc_dtype: DType | str,
    out_dtype: DType | str | None = None,
    attrs: Mapping[str, Any] | None = None,
) -> dict[str, np.ndarray]:
    """The inputs of test set ``s`` for ``op``, keyed by tosa.xml argument name and
    rounded to each argument's type (``dtypes``, by argument name).

    ``shapes`` gives every input's shape (arguments Appendix A does not fill, such as
    an absent bias, may be left out).  ``acc_dtype`` is the mode's accumulator (out_t
    for FULLY_CONNECTED and MATMUL, whose modes name none); ``out_dtype`` defaults to
    the bias type, else the accumulator for MATMUL, else the input type.  ``attrs``
    supplies AVG_POOL2D's ``kernel`` and REDUCE_SUM's ``axis``.
    """
    name = op.upper()
    attrs = attrs or {}
    ks, layout = _appendix_a(name)(shapes, attrs)
    types = {a: _as_dtype(t) for a, t in dtypes.items()}
    acc = _as_dtype(acc_dtype)
    first = next(iter(layout))
    if out_dtype is not None:
        out = _as_dtype(out_dtype)
    elif "bias" in types:
        out = types["bias"]
    elif name in ("MATMUL", "MATMUL_T"):
        out = acc
    else:
        out = types[first]
    in_dt = types[first]
    if not in_dt.is_float:
        raise ValueError(f"Appendix A data sets are floating-point; {first} is {in_dt}")
    b = bound_b(in_dt, acc, out)
    if current().data_sets.value.b_by == "output":
        # 1.0: with mixed input types, B must be representable by each of them.
        for arg in layout:
            t = types.get(arg)
            if arg != "bias" and t is not None and t.is_float and t != in_dt:
                b = min(b, bound_b(t, acc, out))
    result: dict[str, np.ndarray] = {}
    for arg, (p, index_fn) in layout.items():
        if arg not in shapes:
            continue
        shape = tuple(int(d) for d in shapes[arg])
        k, i = index_fn(shape)
        values = tosa_mi_data(s, ks, p, k, i, b=b)
        result[arg] = to_storage(values, types.get(arg, out if arg == "bias" else in_dt))
    return result

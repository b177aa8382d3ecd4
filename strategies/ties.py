"""Rounding ties: where an operator's exact result lies half-way between two output
values, or just off such a point, read from a vector's own data (inputs, attributes,
expected outputs), so that a pack's obligation check can verify them.

Which operators round, in this revision
---------------------------------------
Integer rounding is in the pseudocode (tosa.xml cannot say it), see INTEGER_ROUNDING:
RESCALE (apply_scale_32 / apply_scale_16: round half up of value * multiplier /
2**shift; double_round with shift > 31 moves the rounding term 2**30 away from zero),
AVG_POOL2D's integer modes (apply_scale_32 with reciprocal_scale(count), a fixed-point
acc / count), ARITHMETIC_RIGHT_SHIFT with round = true, MUL i32 with shift > 0, INTDIV
(truncation toward zero), CAST float -> integer (round to nearest, ties to even) and
RESIZE NEAREST_NEIGHBOR (the sample position goes to the upper neighbour from
2 * remainder >= scale_n on).  TABLE does not round: apply_lookup_s returns the 16.7
interpolation exactly, and the i8 table is a plain lookup.

Floating-point outputs round where the exact result can fall between two values of
the output type and the precision table asks for the nearest:
* the "within 0.5 ulp" rows (``compliance.ULP_OPERATORS``): ADD, SUB, MUL, and CAST
  to a float type of lower precision than the input (integer inputs: more magnitude
  bits than the float's significand); not CEIL and FLOOR, whose integral results the
  type always holds;
* float modes whose acc_t has more precision than the output type (the spec model's
  bindings): the accumulated value is rounded to out_t (dot products, AVG_POOL2D,
  REDUCE_SUM bf16);
* RESIZE BILINEAR in a float mode.
RECIPROCAL, EXP and the other functions round too, but their exact results are not
known exactly and their bounds span more than an ulp: they carry no tie facts.

The facts
---------
``tie``: some element's exact result is a point ``t`` half-way between two adjacent
values of the output type, both of them representable (saturation and zero points
included).  ``near-tie``: some element's exact result is off such a ``t`` by at most
``delta`` (and nearer ``t`` than either neighbour), where ``delta`` is

* float outputs: ``ulp(t) * 2**-p``, ``p`` the output's precision (normal_frac + 1).
  That holds a double rounding through fp32 for fp16/bf16/fp8 outputs, a tie off by
  one ulp of a wider input (CAST fp32 -> fp16 of 1 + 2**-11 + 2**-23) and a sum whose
  sticky bits decide (fp16 ADD of 1 and 2**-11 + 2**-21); for integer inputs cast to
  a float, at least 1 (one input unit, e.g. 2**25 + 1 into fp32);
* CAST float -> integer: one ulp of the input type at ``t`` (x.5 +- 1 ulp, where
  adding 0.5 and truncating in the input type goes wrong);
* integer rounding by a shift of s bits: the shifted-out bits 10...0 +- 1 (011...1,
  10...01); with RESCALE double_round and shift > 31, also every element the 2**30
  bias carries across the half (the double-rounding trap itself);
* AVG_POOL2D integer: the mean acc / count one accumulator unit off x.5 (half a
  unit for odd counts, whose means are never x.5);
* INTDIV: a quotient half a dividend unit or one unit off x.5 (|2|r| - |b|| <= 2);
* RESIZE NEAREST_NEIGHBOR: 2 * remainder == scale_n +- 1, between distinct neighbours.

``tie_facts`` reports only what ``tie_kinds`` says the (operator, mode) can have.
Float detectors use the exact value: recomputed from the inputs where fp64 holds it
(CAST, MUL; ADD and SUB with the TwoSum error term), else the reference's fp64
expected output (accumulations, RESIZE BILINEAR), which is exact up to fp64's own
rounding.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from conformance import dtypes
from conformance.block_tensor import BlockScaled, is_block_scaled, value_type
from conformance.dtypes import DType
from conformance.operator_table import OperatorTable, family
from conformance.spec import OperatorSpec, Spec, TypeSupport, load_spec
from reference.compliance.rules import ULP_OPERATORS
from reference.ops.tensor_conv import read_block_scaled
from reference.ops.type_conversion import BLOCK_ACC_T
from strategies.case import Case

TIE, NEAR_TIE = "tie", "near-tie"
FACTS: frozenset[str] = frozenset({TIE, NEAR_TIE})
NO_FACTS: frozenset[str] = frozenset()

# Where the pseudocode rounds an integer (or decides a sample position).
INTEGER_ROUNDING: OperatorTable[str] = OperatorTable(
    {
        "RESCALE": "apply_scale_32 / apply_scale_16: (value * multiplier + round) >> shift",
        "AVG_POOL2D": "apply_scale_32(acc, reciprocal_scale(count)) in the integer modes",
        "AVG_POOL2D_ADAPTIVE": (
            "AVG_POOL2D.tosac (TOSA 1.1): the same, kernel, stride, pad as inputs"
        ),
        "ARITHMETIC_RIGHT_SHIFT": "round == true adds the last bit shifted out",
        "MUL": "in_t == i32_t && shift > 0: (product + (1 << (shift - 1))) >> shift",
        "INTDIV": "apply_intdiv_s: division truncating toward zero",
        "CAST": "round_to_nearest_int (ties to even) and round_to_nearest_float",
        "RESIZE": "NEAREST_NEIGHBOR: iy1 when 2 * dy >= scale_y_n (ix likewise)",
    }
)
# 0.5-ulp rows whose results the type always holds: no value between two neighbours.
INTEGRAL_RESULTS = family(frozenset({"CEIL", "FLOOR"}))
# The precision table's "within 0.5 ulp" rows that can round: the float results that
# must be the nearest value of the output type.
CORRECTLY_ROUNDED = family(
    frozenset(op for op, n in ULP_OPERATORS.items() if n == 0.5) - INTEGRAL_RESULTS
)

Masks = tuple[np.ndarray, np.ndarray]  # (tie, near-tie) per element
Arrays = Mapping[str, np.ndarray]


def precision(dt: DType) -> int:
    """Significand bits of a float type; magnitude bits of an integer type."""
    if dt.is_float:
        return dt.fp.normal_frac + 1
    return dt.bits - 1


def output_type(op: OperatorSpec, mode: TypeSupport) -> DType:
    """The element type of the operator's (first) output under ``mode``."""
    et = op.outputs[0].element_type
    return mode.dtype(et) if et in mode.bindings else dtypes.dtype(et)


def wide_accumulator(op: OperatorSpec, mode: TypeSupport) -> bool:
    """A float mode whose acc_t holds more precision than its output type."""
    if "acc_t" not in mode.bindings:
        return False
    acc, out = mode.dtype("acc_t"), output_type(op, mode)
    return acc.is_float and out.is_float and precision(acc) > precision(out)


def cast_rounds(in_t: DType, out_t: DType) -> bool:
    """CAST modes with a rounding: float -> integer, and into a float type with fewer
    significand bits than the input has (magnitude bits for an integer input).  A
    block-scaled input (TOSA 1.1) counts its value type's bits: a scale is a power of
    two."""
    if is_block_scaled(in_t):
        in_t = value_type(in_t)
    if in_t.kind == "bool" or out_t.kind == "bool":
        return False
    if in_t.is_float and out_t.is_int:
        return True
    return out_t.is_float and precision(in_t) > precision(out_t)


_ROUNDING: dict[int, frozenset[str]] = {}


def rounding_operators(spec: Spec | None = None) -> frozenset[str]:
    """The operators some mode of which rounds (the module docstring's rule)."""
    spec = spec or load_spec()
    if id(spec) not in _ROUNDING:
        wide = {
            op.name
            for op in spec.operators.values()
            if any(wide_accumulator(op, m) for m in op.modes)
        }
        names = set(INTEGER_ROUNDING) | CORRECTLY_ROUNDED | wide
        _ROUNDING[id(spec)] = frozenset(n for n in names if n in spec.operators)
    return _ROUNDING[id(spec)]


ROUNDING_OPERATORS: frozenset[str] = family(rounding_operators())


def _mode_rounds(op: OperatorSpec, mode: TypeSupport) -> bool:
    out_t = output_type(op, mode)
    name = op.name
    if wide_accumulator(op, mode):
        return True
    if name == "CAST":
        return cast_rounds(mode.dtype("in_t"), out_t)
    if name in CORRECTLY_ROUNDED and out_t.is_float:
        return True
    if name == "MUL":
        return mode.dtype("in_t") is dtypes.I32
    if name == "RESIZE":  # float rows serve both modes; the integer bilinear rows are exact
        return out_t.is_float or "bilinear" not in mode.mode.lower()
    if name in ("AVG_POOL2D", "AVG_POOL2D_ADAPTIVE"):
        return out_t.is_int
    return name in ("RESCALE", "ARITHMETIC_RIGHT_SHIFT", "INTDIV")


def tie_kinds(operator: str, mode: TypeSupport, spec: Spec | None = None) -> frozenset[str]:
    """The facts a vector of this (operator, mode) can have: FACTS where the mode
    rounds, else none.  (Attributes may still switch the rounding off, e.g. ARS with
    round = false, MUL with shift 0.)"""
    spec = spec or load_spec()
    if operator not in rounding_operators(spec):
        return NO_FACTS
    return FACTS if _mode_rounds(spec.operator(operator), mode) else NO_FACTS


def tie_facts(
    operator: str,
    mode: TypeSupport,
    inputs: Arrays,
    attributes: Mapping[str, Any],
    expected: Arrays,
    spec: Spec | None = None,
) -> set[str]:
    """The subset of {"tie", "near-tie"} that some element of the vector shows.

    ``inputs``: graph inputs and constant tensors by argument name; ``attributes``: the
    operator's attributes; ``expected``: the reference's outputs (float outputs in
    fp64, before rounding to the output type), or nothing for a case not evaluated
    yet: then only the facts the inputs decide (every integer rounding, CAST, ADD,
    SUB, MUL, RESIZE NEAREST_NEIGHBOR) are reported."""
    spec = spec or load_spec()
    kinds = tie_kinds(operator, mode, spec)
    if not kinds:
        return set()
    op = spec.operator(operator)
    out_t = output_type(op, mode)
    detector = _DETECTORS.get(operator)
    if detector is None:  # an accumulation: its fp64 expected outputs
        masks = [float_classes(np.asarray(e, np.float64), out_t) for e in expected.values()]
    else:
        masks = [detector(_Vector(mode, inputs, attributes, expected, out_t))]
    facts = set()
    if any(t.any() for t, _ in masks):
        facts.add(TIE)
    if any(n.any() for _, n in masks):
        facts.add(NEAR_TIE)
    return facts & kinds


# -- element classifiers -----------------------------------------------------------------


def ulp(x: np.ndarray, dt: DType) -> np.ndarray:
    """The spacing of ``dt``'s values in the binade of each |x| (the subnormal spacing
    below normal_min); x must be finite."""
    emin = int(np.log2(dt.fp.normal_min))
    mag = np.abs(np.asarray(x, np.float64))
    _, e = np.frexp(mag)  # mag = m * 2**e, m in [0.5, 1): binade e - 1
    k = np.where(mag > 0, np.maximum(e - 1, emin), emin)
    return np.ldexp(1.0, k - dt.fp.normal_frac)


def float_classes(
    exact: np.ndarray, dt: DType, *, at_least: float = 0.0, err: np.ndarray | None = None
) -> Masks:
    """Ties and near-ties of exact values (fp64, plus an optional exact error term)
    rounded to float type ``dt``; ``at_least`` widens the near-tie distance (one unit
    of an integer input)."""
    x = np.asarray(exact, np.float64)
    finite = np.isfinite(x)
    if err is not None:
        finite &= np.isfinite(err)
    xs = np.where(finite, x, 0.0)
    u = ulp(xs, dt)
    q = xs / u  # exact: a power-of-two scaling
    lo = np.floor(q)
    off = (q - (lo + 0.5)) * u  # from the nearest half-way point, exact
    if err is not None:
        off = off + np.where(finite, err, 0.0)
    both = np.maximum(np.abs(lo), np.abs(lo + 1)) * u <= dt.fp.normal_max
    ok = finite & both
    delta = np.maximum(u * 2.0 ** -(dt.fp.normal_frac + 1), at_least)
    near = ok & (off != 0) & (np.abs(off) <= delta) & (np.abs(off) < u / 2)
    return ok & (off == 0), near


def float_to_int_classes(x: np.ndarray, in_t: DType, out_t: DType) -> Masks:
    """round_to_nearest_int: x.5 between two values of the integer type, and x.5 off
    by at most one ulp of the input type."""
    v = np.asarray(x, np.float64)
    finite = np.isfinite(v)
    vs = np.where(finite, v, 0.0)
    fl = np.floor(vs)
    off = vs - (fl + 0.5)
    ok = finite & (fl >= out_t.finite_range[0]) & (fl + 1 <= out_t.finite_range[1])
    near = ok & (off != 0) & (np.abs(off) <= ulp(fl + 0.5, in_t)) & (np.abs(off) < 0.5)
    return ok & (off == 0), near


def _pow2(k: np.ndarray) -> np.ndarray:
    return np.left_shift(np.int64(1), k.astype(np.int64))


def shift_classes(
    p: np.ndarray,
    shift: np.ndarray | np.integer,
    *,
    lo: int | None = None,
    hi: int | None = None,
    double_round: bool = False,
) -> Masks:
    """Ties and near-ties of ``p / 2**shift`` rounded by a right shift (int64 ``p``,
    1 <= shift <= 63; elements with shift 0 do not round).  ``lo``/``hi``: the range
    both neighbours (floor and floor + 1, offset by any zero point beforehand) must lie
    in.  ``double_round``: RESCALE's, whose 2**30 bias acts for shifts above 31."""
    p, s = np.broadcast_arrays(np.asarray(p, np.int64), np.asarray(shift, np.int64))
    active = s >= 1
    ss = np.where(active, s, 1)
    mask = np.where(ss >= 63, np.iinfo(np.int64).max, _pow2(np.minimum(ss, 62)) - 1)
    dropped = p & mask  # p mod 2**shift, in [0, 2**shift)
    half = _pow2(ss - 1)
    floor = np.right_shift(p, ss)
    ok = active.copy()
    if lo is not None:
        ok &= floor >= lo
    if hi is not None:
        ok &= floor + 1 <= hi
    tie = ok & (dropped == half)
    near = ok & (ss >= 2) & ((dropped == half - 1) | (dropped == half + 1))
    if double_round:
        bias = np.int64(1 << 30)
        up = (p >= 0) & (dropped >= half - bias) & (dropped < half)
        down = (p < 0) & (dropped > half) & (dropped <= half + bias)
        near |= ok & (ss > 31) & (up | down)
    return tie, near


def mean_classes(acc: np.ndarray, count: np.ndarray, lo: int, hi: int) -> Masks:
    """acc / count exactly x.5 (both neighbours in [lo, hi]), or as near as a mean
    of that count can be to x.5 without being it: one unit of acc off (even counts),
    half a unit (odd counts, whose means are never x.5)."""
    acc, count = np.broadcast_arrays(np.asarray(acc, np.int64), np.asarray(count, np.int64))
    c = np.maximum(count, 1)
    rem = np.mod(2 * acc, 2 * c)  # 2 * acc = (2k + 1) * count exactly at a half
    floor = np.floor_divide(acc, c)
    ok = (count >= 1) & (floor >= lo) & (floor + 1 <= hi)
    gap = np.abs(rem - c)
    near = ok & (c >= 3) & (gap >= 1) & (gap <= 2)
    return ok & (rem == c), near


def truncation_classes(a: np.ndarray, b: np.ndarray) -> Masks:
    """a / b (truncated toward zero) with the quotient exactly half-way between two
    integers, or within one dividend unit of that."""
    a, b = np.broadcast_arrays(np.asarray(a, np.int64), np.asarray(b, np.int64))
    safe = np.where(b == 0, 1, b)
    q = a // safe
    q = q + ((q * safe != a) & ((a < 0) != (safe < 0)))  # toward zero
    r = np.abs(a - q * safe)
    gap = np.abs(2 * r - np.abs(safe))
    valid = (b != 0) & (r != 0)
    return valid & (gap == 0), valid & (gap >= 1) & (gap <= 2)


def position_classes(in_size: int, out_size: int, n: int, d: int, offset: int) -> Masks:
    """RESIZE NEAREST_NEIGHBOR along one axis: the output rows (columns) whose sample
    position is half-way between two distinct input rows, or one step of the position
    grid (1 / scale_n) off it."""
    pos = np.arange(out_size, dtype=np.int64) * d + offset
    i = pos // n
    r = pos - i * n
    distinct = (i >= 0) & (i + 1 <= in_size - 1)
    return distinct & (2 * r == n), distinct & (n >= 3) & (np.abs(2 * r - n) == 1)


# -- per-operator detectors ----------------------------------------------------------------


class _Vector:
    def __init__(
        self,
        mode: TypeSupport,
        inputs: Arrays,
        attributes: Mapping[str, Any],
        expected: Arrays,
        out_t: DType,
    ) -> None:
        self.mode, self.inputs, self.attributes = mode, inputs, attributes
        self.expected, self.out_t = expected, out_t

    def arg(self, name: str) -> np.ndarray:
        return np.asarray(self.inputs[name])

    def ints(self, *names: str) -> list[np.ndarray]:
        arrays = [self.arg(n).astype(np.int64) for n in names]
        return list(np.broadcast_arrays(*arrays))

    def floats(self, *names: str) -> list[np.ndarray]:
        with np.errstate(invalid="ignore"):
            arrays = [self.arg(n).astype(np.float64) for n in names]
        return list(np.broadcast_arrays(*arrays))

    def output(self) -> np.ndarray:
        """The (first) expected output in fp64; empty for a case not yet evaluated."""
        for e in self.expected.values():
            return np.asarray(e, np.float64)
        return np.zeros(0)


def _empty() -> Masks:
    return np.zeros(0, bool), np.zeros(0, bool)


def _cast(v: _Vector) -> Masks:
    in_t = v.mode.dtype("in_t")
    given = v.inputs["input"]
    if isinstance(given, BlockScaled):  # each element as CAST reads it: in fp32
        return float_classes(read_block_scaled(given, BLOCK_ACC_T), v.out_t)
    if v.out_t.is_int:
        return float_to_int_classes(v.floats("input")[0], in_t, v.out_t)
    return float_classes(v.floats("input")[0], v.out_t, at_least=1.0 if in_t.is_int else 0.0)


def _zero_point(raw: int, dt: DType, unsigned: bool) -> int:
    """The attribute's bits in ``dt``, zero-extended when read as unsigned."""
    bits = int(raw) & ((1 << dt.bits) - 1)
    if unsigned:
        return bits
    return bits - (1 << dt.bits) if bits >= 1 << (dt.bits - 1) else bits


def _rescale(v: _Vector) -> Masks:
    in_t, out_t = v.mode.dtype("in_t"), v.out_t
    a = v.attributes
    in_uns, out_uns = bool(a.get("input_unsigned")), bool(a.get("output_unsigned"))
    raw = v.arg("input").astype(np.int64)
    value = (raw & ((1 << in_t.bits) - 1) if in_uns else raw) - _zero_point(
        a.get("input_zp", 0), in_t, in_uns
    )
    m = v.arg("multiplier").astype(np.int64).reshape(-1)
    s = v.arg("shift").astype(np.int64).reshape(-1)
    if not a.get("per_channel"):
        m, s = m[:1].reshape(()), s[:1].reshape(())
    out_zp = _zero_point(a.get("output_zp", 0), out_t, out_uns)
    lo, hi = (0, (1 << out_t.bits) - 1) if out_uns else out_t.int_range
    double = bool(a.get("double_round")) and bool(a.get("scale32"))
    return shift_classes(value * m, s, lo=lo - out_zp, hi=hi - out_zp, double_round=double)


def _arithmetic_right_shift(v: _Vector) -> Masks:
    if not v.attributes.get("round"):
        return _empty()
    a, b = v.ints("input1", "input2")
    return shift_classes(a, b)


def _mul(v: _Vector) -> Masks:
    if v.out_t.is_float:
        a, b = v.floats("input1", "input2")
        with np.errstate(all="ignore"):
            return float_classes(a * b, v.out_t)  # fp64 holds these products exactly
    shift = int(v.arg("shift").reshape(-1)[0])
    if shift == 0:
        return _empty()
    a, b = v.ints("input1", "input2")
    return shift_classes(a * b, np.int64(shift), lo=v.out_t.int_range.min, hi=v.out_t.int_range.max)


def _add_sub(sign: float) -> Callable[[_Vector], Masks]:
    def detect(v: _Vector) -> Masks:
        a, b = v.floats("input1", "input2")
        b = sign * b
        with np.errstate(all="ignore"):
            s = a + b  # TwoSum: a + b == s + err exactly
            bb = s - a
            err = (a - (s - bb)) + (b - bb)
        return float_classes(s, v.out_t, err=err)

    return detect


def _intdiv(v: _Vector) -> Masks:
    return truncation_classes(*v.ints("input1", "input2"))


def _window_sums(x: np.ndarray, kernel: list[int], stride: list[int], pad: list[int]) -> np.ndarray:
    """Sums over AVG_POOL2D's windows of [N, H, W, C] ``x`` (padding adds nothing)."""
    ky, kx = kernel
    sy, sx = stride
    top, bottom, left, right = pad
    padded = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)))
    s = np.zeros((x.shape[0], padded.shape[1] + 1, padded.shape[2] + 1, x.shape[3]), np.int64)
    s[:, 1:, 1:] = padded.cumsum(1).cumsum(2)
    oy = np.arange((padded.shape[1] - ky) // sy + 1) * sy
    ox = np.arange((padded.shape[2] - kx) // sx + 1) * sx
    y0, y1 = oy[:, None], oy[:, None] + ky
    x0, x1 = ox[None, :], ox[None, :] + kx
    return s[:, y1, x1] - s[:, y0, x1] - s[:, y1, x0] + s[:, y0, x0]


def _avg_pool2d(v: _Vector) -> Masks:
    if v.out_t.is_float:
        return float_classes(v.output(), v.out_t)
    a = v.attributes
    kernel, stride, pad = (list(map(int, a[k])) for k in ("kernel", "stride", "pad"))
    x = v.arg("input").astype(np.int64) - int(a.get("input_zp", 0))
    acc = _window_sums(x, kernel, stride, pad)
    count = _window_sums(np.ones((1, *x.shape[1:3], 1), np.int64), kernel, stride, pad)
    zp = int(a.get("output_zp", 0))
    return mean_classes(acc, count, v.out_t.int_range.min - zp, v.out_t.int_range.max - zp)


def _avg_pool2d_adaptive(v: _Vector) -> Masks:
    """AVG_POOL2D's, with kernel, stride, pad and the zero points read from the inputs
    TOSA 1.1 passes them in."""
    names = ("kernel", "stride", "pad", "input_zp", "output_zp")
    given = {n: np.asarray(v.inputs[n]).reshape(-1) for n in names if n in v.inputs}
    params: dict[str, Any] = {n: given[n] for n in ("kernel", "stride", "pad") if n in given}
    params |= {n: int(given[n][0]) for n in ("input_zp", "output_zp") if n in given}
    return _avg_pool2d(_Vector(v.mode, v.inputs, {**params, **v.attributes}, v.expected, v.out_t))


def _resize(v: _Vector) -> Masks:
    if v.attributes.get("mode") == "BILINEAR":
        if not v.out_t.is_float:
            return _empty()
        return float_classes(v.output(), v.out_t)
    y_n, y_d, x_n, x_d = (int(e) for e in v.arg("scale").reshape(-1))
    off_y, off_x = (int(e) for e in v.arg("offset").reshape(-1))
    bor_y, bor_x = (int(e) for e in v.arg("border").reshape(-1))
    # The shape, not the array: a block-scaled input is a (values, scales) pair.
    _, ih, iw, _ = v.inputs["input"].shape
    # The output size formula (the ERROR_IFs hold it for a valid vector).
    oh = ((ih - 1) * y_n - off_y + bor_y) // y_d + 1
    ow = ((iw - 1) * x_n - off_x + bor_x) // x_d + 1
    ty, ny = position_classes(ih, oh, y_n, y_d, off_y)
    tx, nx = position_classes(iw, ow, x_n, x_d, off_x)
    return np.concatenate([ty, tx]), np.concatenate([ny, nx])


_DETECTORS: OperatorTable[Callable[[_Vector], Masks]] = OperatorTable(
    {
        "CAST": _cast,
        "RESCALE": _rescale,
        "ARITHMETIC_RIGHT_SHIFT": _arithmetic_right_shift,
        "MUL": _mul,
        "ADD": _add_sub(1.0),
        "SUB": _add_sub(-1.0),
        "INTDIV": _intdiv,
        "AVG_POOL2D": _avg_pool2d,
        "AVG_POOL2D_ADAPTIVE": _avg_pool2d_adaptive,
        "RESIZE": _resize,
    }
)


def case_tie_facts(case: Case, spec: Spec | None = None, level: str = "8K") -> set[str]:
    """tie_facts of a one-operator case, its expected outputs from the reference
    (ValueError when the case is not valid)."""
    from reference.engine import evaluate

    spec = spec or load_spec()
    block = case.graph.main
    operator = block.operators[0]
    op = spec.operator(operator.op)
    outcome = evaluate(case.graph, case.inputs, spec=spec, level=level)
    if outcome.kind != "valid":
        raise ValueError(f"{case.describe()}: {outcome}")
    values: dict[str, np.ndarray] = {}
    for arg, name in zip((a.name for a in op.inputs), operator.inputs, strict=False):
        data = case.inputs.get(name, block.tensors[name].data)
        values[arg] = np.asarray(data)
    expected = {op.outputs[0].name: np.asarray(outcome.outputs[operator.outputs[0]])}
    return tie_facts(operator.op, op.mode(case.mode), values, operator.attributes, expected, spec)

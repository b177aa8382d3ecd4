"""Recipes and breakers for the tensor operators without weights: ARGMAX, AVG_POOL2D,
MAX_POOL2D, FFT2D, RFFT2D.

Pooling geometry is drawn so that the output-size formula holds exactly: per axis a
kernel, a stride and two pads below the kernel are drawn, then the output size, and
the input size follows as ``(O - 1) * stride + kernel - pads`` (so ``idiv_check``
divides evenly and every window holds at least one real tap).  The FFTs take powers
of two up to the element budget.  AVG_POOL2D's float modes and both FFTs are
dot-product operators: their inputs come from an Appendix A data set when one is
asked for (or drawn), with enough outputs for the statistical tests of sets 3..5.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import strategies as st

from conformance.dtypes import I32_MAX, I32_MIN, DType
from conformance.operator_table import family
from reference.arguments import ATTRIBUTES_CLAUSE, INPUTS_CLAUSE, TYPES_CLAUSE
from reference.datasets import dataset_inputs
from reference.ops.elementwise_unary import OUTPUT_ZP_CLAUSE
from reference.ops.reduction import AXIS_CLAUSE
from reference.ops.tensor_conv import zero_point_is_input
from reference.ops.tensor_pool_fft import (
    ACC_TYPES,
    ARGMAX_SHAPE_CLAUSE,
    FFT_HEIGHT_CLAUSE,
    FFT_WIDTH_CLAUSE,
    INPUT_ZP_CLAUSE,
)
from strategies.case import CaseSpec, TensorDraw
from strategies.invalid import breaks, broken, one_element_off
from strategies.recipes import RecipeContext, recipe
from strategies.recipes.data_sets import (
    DotAim,
    boolean_attribute,
    data_set,
    dot_aim,
    local_bound,
    near,
    place_specials,
    zero_point,
)
from strategies.recipes.pool_geometry import (
    avg_pool_geometry,
    pool_attributes,
    pool_geometry,
    register_window_breakers,
    window_cap,
    window_parameter,
)
from strategies.shapes import shapes
from strategies.values import ValueRange, float_regime

POOLS = family(("AVG_POOL2D", "MAX_POOL2D"))
FFTS = family(("FFT2D", "RFFT2D"))
ACC_NAMES = {dt: name for name, dt in ACC_TYPES.items()}
SPECIAL_PLANE = 32 * 32  # largest FFT plane drawn with inf/NaN among its values


# -- small helpers ---------------------------------------------------------------------


def _coarse(draw: st.DrawFn, dt: DType, values: np.ndarray) -> np.ndarray:
    """Sometimes round floats to halves: equal values (ties, +-0) become common, which
    is where max/argmax implementations differ.  Specials and zero signs survive."""
    if not dt.is_float or not draw(st.booleans(), label="coarse values (ties)"):
        return values
    wide = values.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        return (np.round(wide * 2.0) / 2.0).astype(values.dtype)


# -- nan_mode ----------------------------------------------------------------------------


def declares_nan_mode(rc: RecipeContext) -> bool:
    """The operator has a nan_mode attribute (TOSA 1.0 on; the draft has none)."""
    return any(a.name == "nan_mode" for a in rc.op_spec.attributes)


def _add_nan_mode(draw: st.DrawFn, rc: RecipeContext, attributes: dict[str, Any]) -> None:
    """Both values of the nan_mode enumeration, where the operator declares it (drawn
    last, so that the draws before it are the draft's; an "attr:nan_mode=..." target
    answers the draw labelled with its name)."""
    if declares_nan_mode(rc):
        names = rc.spec.enums[rc.op_spec.argument("nan_mode").element_type].names()
        attributes["nan_mode"] = draw(st.sampled_from(names), label="nan_mode")


def _nan_windows(draw: st.DrawFn, values: np.ndarray, ky: int, kx: int) -> np.ndarray:
    """NaN scattered over about an eighth of the input, and a kernel-sized all-NaN
    block at the top left: windows holding NaN among numbers are NaN under PROPAGATE
    and their largest number under IGNORE; the first window holds NaN only (its real
    taps lie in that block), NaN under both."""
    seed = draw(st.integers(0, 2**32 - 1), label="NaN windows: seed")
    rng = np.random.default_rng(seed)
    out = values.copy()
    nan_value = np.asarray(np.nan).astype(values.dtype)
    out[rng.random(out.shape) < 0.125] = nan_value
    out[:, :ky, :kx, :] = nan_value
    return out


# -- ARGMAX ----------------------------------------------------------------------------


def _argmax_values(
    draw: st.DrawFn, rc: RecipeContext, dt: DType, shape: tuple[int, ...], axis: int
) -> np.ndarray:
    values = rc.values(draw, dt, shape, label="input")
    if not dt.is_float:
        return values
    values = _coarse(draw, dt, values)
    several = declares_nan_mode(rc)
    # NaN is where readings of ARGMAX part ways (docs/compliance.md, Readings): the
    # prose makes NaN greater than every number and an all-NaN axis give its last
    # index; a row holding several NaNs among numbers is the case nobody settles.  So
    # each row has no NaN, exactly one (first, middle, last or anywhere: where a
    # scan that starts at the second element, or skips NaN, goes wrong), or only NaNs.
    # (The NaNs the value draw placed become the largest finite value: a tie.)
    # Where the operator declares nan_mode (TOSA 1.0) the pseudocode settles every row,
    # so rows with several NaNs among numbers are drawn too, and the first row starts
    # with a NaN: PROPAGATE gives its index 0, IGNORE the index of its largest number.
    wide = values.astype(np.float64)
    nan = np.isnan(wide)
    if nan.any():
        values = np.where(nan, np.asarray(dt.normal_max).astype(values.dtype), values)
    if values.size and draw(st.booleans(), label="NaN rows"):
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="NaN rows: seed"))
        moved = np.moveaxis(values.copy(), axis, -1)
        n = moved.shape[-1]
        rows = moved.reshape(-1, n)
        # 0, 1: none; 2..4: one; 5: all; 6 (nan_mode declared): several among numbers
        kind = rng.integers(0, 7 if several else 6, size=rows.shape[0])
        if several and n > 1:
            kind[0] = 2
        where = np.select(
            [kind == 2, kind == 3, kind == 4], [0, n // 2, n - 1], rng.integers(0, n, rows.shape[0])
        )
        one = (kind >= 2) & (kind <= 5)
        nan_value = np.asarray(np.nan).astype(values.dtype)
        if several:
            # Half the elements NaN, the drawn one ('where') kept a number.
            many = (kind == 6)[:, None] & (rng.random(rows.shape) < 0.5)
            many[np.arange(rows.shape[0]), where] = False
            rows[many] = nan_value
        rows[np.nonzero(one)[0], where[one]] = nan_value
        rows[kind == 5] = nan_value
        values = np.moveaxis(rows.reshape(moved.shape), -1, axis)
    return np.ascontiguousarray(values)


@recipe("ARGMAX")
def argmax(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    in_t, out_t = rc.dtype("in_t"), rc.dtype("out_t")
    lo, hi = rc.rank_range("input")
    shape1 = draw(shapes(lo, hi, rc.budget, label="input shape"))
    axis = draw(st.integers(0, len(shape1) - 1), label="axis")
    out_shape = shape1[:axis] + shape1[axis + 1 :]
    values = _argmax_values(draw, rc, in_t, shape1, axis)
    attributes: dict[str, Any] = {"axis": axis}
    _add_nan_mode(draw, rc, attributes)
    return rc.spec_of(
        [TensorDraw("input", shape1, in_t, values)],
        [TensorDraw("output", out_shape, out_t)],
        attributes=attributes,
    )


@breaks("ARGMAX", clause=AXIS_CLAUSE)
def argmax_axis(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    out = broken(spec, AXIS_CLAUSE)
    rank = len(spec.inputs[0].shape)
    out.attributes["axis"] = draw(
        st.one_of(st.integers(I32_MIN, -1), st.integers(rank, I32_MAX)), label="bad axis"
    )
    return out


@breaks("ARGMAX", clause=ARGMAX_SHAPE_CLAUSE)
def argmax_output(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """An output that is not the input without its axis: the axis kept as 1 (a
    reduction's shape), or one dimension off."""
    clause = ARGMAX_SHAPE_CLAUSE
    out = broken(spec, clause)
    shape1 = spec.inputs[0].shape
    axis = int(spec.attributes["axis"])
    shape = list(spec.outputs[0].shape)
    if not shape or draw(st.booleans(), label="keep the axis"):
        shape = [*shape1[:axis], 1, *shape1[axis + 1 :]]
    else:
        dim = draw(st.integers(0, len(shape) - 1), label="dimension made wrong")
        shape[dim] += draw(st.integers(1, 3), label="added to it")
    out.reshape_tensor("output", tuple(shape))
    return out


@breaks("ARGMAX", clause=INPUTS_CLAUSE)
def argmax_scalar(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A rank-0 input: the argument declares rank 1 at least."""
    out = broken(spec, INPUTS_CLAUSE)
    out.reshape_tensor("input", ())
    return out


# -- MAX_POOL2D ----------------------------------------------------------------------------


@recipe("MAX_POOL2D")
def max_pool2d(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    n, y, x, c = pool_geometry(draw, rc)
    shape = (n, y.size, x.size, c)
    # Max has no REQUIRE: every value (NaN, both zeros, infinities, extremes) is valid.
    r = float_regime(draw, dt) if dt.is_float else None
    values = rc.values(draw, dt, shape, r, label="input")
    if dt.is_float:
        values = _coarse(draw, dt, values)
    # Always where there is padding after (its border windows are where a padding
    # value that takes part in the maximum shows), else in some cases.
    padded_after = bool(y.pad_after or x.pad_after)
    if rc.target != "edge" and (
        padded_after or draw(st.booleans(), label="a window of the lowest value")
    ):
        values = _lowest_corner(dt, values, y.kernel, x.kernel)
    attributes = pool_attributes(y, x)
    nan_windows = dt.is_float and rc.target != "edge" and declares_nan_mode(rc)
    if nan_windows and draw(st.booleans(), label="NaN windows"):
        values = _nan_windows(draw, values, y.kernel, x.kernel)
    _add_nan_mode(draw, rc, attributes)
    return rc.spec_of(
        [TensorDraw("input", shape, dt, values)],
        [TensorDraw("output", (n, y.out, x.out, c), dt)],
        attributes=attributes,
    )


def _lowest_corner(dt: DType, values: np.ndarray, ky: int, kx: int) -> np.ndarray:
    """``values`` with a kernel-sized bottom-right block of the type's lowest value
    (-inf, -448 for fp8e4m3, the integer minimum): the last output window (and, with
    padding after, the padded border windows there) holds nothing else, so a maximum
    that starts from the lowest finite value, or pads with a value above the minimum
    (-127 for i8), shows.  Bottom-right: the first elements keep what the edge
    pattern placed."""
    lowest = -np.inf if dt.is_float and dt.has_inf else None
    if lowest is None:
        lowest = -dt.fp.normal_max if dt.is_float else dt.int_range.min
    out = values.copy()
    out[:, -ky:, -kx:, :] = np.asarray(lowest).astype(dt.storage)
    return out


# -- AVG_POOL2D ----------------------------------------------------------------------------


def _int_avg_values(
    draw: st.DrawFn, rc: RecipeContext, dt: DType, shape: tuple[int, ...], area: int, zp: int
) -> np.ndarray:
    """apply_add_s<int32> REQUIREs every running window sum of (value - input_zp) in
    range; |value - zp| <= bound keeps even a full window there.  With the budget's
    kernels (at most 64 x 64) the whole type fits; the bound is for larger budgets."""
    bound = I32_MAX // area
    lo = max(dt.int_range.min, zp - bound)
    hi = min(dt.int_range.max, zp + bound)
    r = None if (lo, hi) == (dt.min, dt.max) else ValueRange(low=lo, high=hi)
    return rc.values(draw, dt, shape, r, label="input")


@recipe("AVG_POOL2D")
def avg_pool2d(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt, acc = rc.dtype("in_out_t"), rc.dtype("acc_t")
    s = data_set(draw, rc, dt)
    aim = dot_aim(draw, rc, dt.is_float, window_cap(rc))
    n, y, x, c = avg_pool_geometry(draw, rc, aim)
    shape = (n, y.size, x.size, c)
    attributes = pool_attributes(y, x)
    # acc_type must name the mode's accumulator: the builder binds acc_t from it.
    attributes["acc_type"] = ACC_NAMES[acc]
    input_zp = zero_point(draw, rc, dt, "input_zp")
    output_zp = zero_point(draw, rc, dt, "output_zp")
    if s >= 0:
        values = dataset_inputs(
            "AVG_POOL2D",
            s,
            {"input": shape},
            {"input": dt},
            acc_dtype=acc,
            attrs={"kernel": attributes["kernel"]},
        )["input"]
    elif dt.is_float:
        # No REQUIRE on the float path: specials give inf/NaN averages, still valid;
        # the rule takes local_bound true here, so each leaves only its windows
        # without an accuracy limit.
        values = rc.values(draw, dt, shape, float_regime(draw, dt), label="input")
        values = place_specials(draw, dt, values, "input")
    else:
        values = _int_avg_values(draw, rc, dt, shape, y.kernel * x.kernel, int(input_zp))
    attributes["input_zp"] = input_zp
    attributes["output_zp"] = output_zp
    return rc.spec_of(
        [TensorDraw("input", shape, dt, values)],
        [TensorDraw("output", (n, y.out, x.out, c), dt)],
        attributes=attributes,
        data_set=s,
    )


# -- pooling breakers ------------------------------------------------------------------

# The window rules (kernel, stride, pad, the output size, the ranks): shared with the
# _ADAPTIVE operators, whose kernel, stride and pad are shape_t inputs.
register_window_breakers(*POOLS)


@breaks(*POOLS, clause=ATTRIBUTES_CLAUSE)
def pool_attribute_length(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """kernel, stride or pad with one element too many or too few."""
    return one_element_off(draw, spec, ["kernel", "stride", "pad"], window_parameter)


def _zp_attribute(rc: RecipeContext) -> bool:
    # TOSA 1.0 passes the zero points as [1] input tensors: strategies.recipes.
    # tensor_zero_points breaks their rules there, as that revision spells them.
    return not zero_point_is_input(rc.op_spec, "input_zp")


def _is_int(rc: RecipeContext) -> bool:
    return rc.dtype("in_out_t").is_int and _zp_attribute(rc)


def _not_i8(rc: RecipeContext) -> bool:
    dt = rc.dtype("in_out_t")
    return not (dt.is_int and dt.bits == 8) and _zp_attribute(rc)


# Static ``applies`` tests rather than a None from the breaker: a breaker that can
# never apply to a mode would make Hypothesis redraw valid cases until it gives up.
@breaks("AVG_POOL2D", clause=ATTRIBUTES_CLAUSE, applies=_is_int)
def zero_point_range(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
    """An i8 zero point outside the type: the attribute is in_out_t."""
    dt = rc.dtype("in_out_t")
    if not dt.is_int:
        return None
    out = broken(spec, ATTRIBUTES_CLAUSE)
    name = draw(st.sampled_from(["input_zp", "output_zp"]), label="zero point")
    lo, hi = dt.int_range
    out.attributes[name] = draw(
        st.one_of(st.integers(hi + 1, I32_MAX), st.integers(I32_MIN, lo - 1)), label="zp"
    )
    return out


def _zero_point_breaker(name: str, clause: str) -> None:
    @breaks("AVG_POOL2D", clause=clause, applies=_not_i8)
    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec | None:
        """A non-zero zero point where the type is not i8 (i16 or float)."""
        dt = rc.dtype("in_out_t")
        if dt.is_int and dt.bits == 8:
            return None
        out = broken(spec, clause)
        if dt.is_int:
            zp: int | float = draw(
                st.integers(*dt.int_range).filter(bool),
                label=name,
            )
        else:
            zp = draw(st.sampled_from([1.0, -1.0, 0.5, -128.0, 127.0]), label=name)
        out.attributes[name] = zp
        if name == "output_zp":
            # input_zp is checked first and stays valid (zero).
            out.attributes["input_zp"] = 0.0 if dt.is_float else 0
        return out

    fn.__name__ = f"{name}_not_i8"


_zero_point_breaker("input_zp", INPUT_ZP_CLAUSE)
_zero_point_breaker("output_zp", OUTPUT_ZP_CLAUSE)


@breaks("AVG_POOL2D", clause=TYPES_CLAUSE)
def acc_type_unsupported(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """An acc_type no mode pairs with this in_out_t (fp16 with INT32, i8 with FP32 ...)."""
    dt = rc.dtype("in_out_t")
    allowed = {m.dtype("acc_t") for m in rc.op_spec.modes if m.dtype("in_out_t") is dt}
    others = sorted(name for name, acc in ACC_TYPES.items() if acc not in allowed)
    out = broken(spec, TYPES_CLAUSE)
    out.attributes["acc_type"] = draw(st.sampled_from(others), label="acc_type")
    return out


# -- FFT2D / RFFT2D -------------------------------------------------------------------------


def _out_width(op: str, w: int) -> int:
    return w if op == "FFT2D" else w // 2 + 1


def _fft_cap(rc: RecipeContext, max_plane: int) -> int:
    """The largest plane H * W (a power of two) the level, the budget and
    ``max_plane`` allow."""
    side = max(1, min(rc.budget.max_dim, rc.level["MAX_KERNEL"], rc.budget.max_elements))
    side = 1 << (side.bit_length() - 1)
    plane = max(1, min(side * side, max_plane, rc.budget.max_elements))
    return 1 << (plane.bit_length() - 1)


def _fft_geometry(
    draw: st.DrawFn, rc: RecipeContext, aim: DotAim, max_plane: int
) -> tuple[int, int, int]:
    """(N, H, W) with H, W powers of two, KS (2 * H * W for FFT2D, H * W for RFFT2D)
    near the aim, H * W <= ``max_plane``, and at least aim.outputs outputs per output
    tensor where the budget holds them."""
    budget = rc.budget.max_elements
    side = max(1, min(rc.budget.max_dim, rc.level["MAX_KERNEL"], budget))
    side_log = side.bit_length() - 1
    plane_log = _fft_cap(rc, max_plane).bit_length() - 1
    per_ks = 2 if rc.name == "FFT2D" else 1
    e = min(plane_log, max(0, round(math.log2(max(1, aim.ks_goal / per_ks)))))
    eh = draw(st.integers(max(0, e - side_log), min(e, side_log)), label="log2 H")
    h, w = 1 << eh, 1 << (e - eh)
    per_out = h * _out_width(rc.name, w)
    hi = rc.batch_cap(max(1, min(budget // (h * w), aim.outputs_cap // per_out)))
    lo = min(hi, max(-(-aim.outputs // per_out), -(-aim.inputs // (per_ks * h * w))))
    goal = max(1.0, aim.outputs_goal / per_out)
    return near(draw, lo, min(hi, max(lo, 4, round(goal))), goal, "N"), h, w


@recipe("FFT2D", "RFFT2D")
def fft(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    s = data_set(draw, rc, dt)
    # No REQUIRE: inf and NaN make their plane's outputs inf/NaN, which is valid; the
    # unit range keeps most sums well inside the type.
    r = float_regime(draw, dt, ValueRange(-1.0, 1.0)) if s < 0 else None
    # The reference sums a plane holding inf or NaN term by term (IEEE specials, not
    # rounding, decide it), O((H*W)**2): with special values (the free-values set
    # always has them), planes stay at 32 x 32.
    max_plane = SPECIAL_PLANE if s < 0 else rc.budget.max_elements
    per_ks = 2 if rc.name == "FFT2D" else 1
    aim = dot_aim(draw, rc, True, per_ks * _fft_cap(rc, max_plane))
    n, h, w = _fft_geometry(draw, rc, aim, max_plane)
    shape = (n, h, w)
    names = ["input_real", "input_imag"] if rc.name == "FFT2D" else ["input_real"]
    attributes: dict[str, Any] = {}
    if rc.name == "FFT2D":
        attributes["inverse"] = boolean_attribute(draw, rc, "inverse")
    lb = local_bound(draw, rc)
    if lb is not None:  # absent: the default, false
        attributes["local_bound"] = lb
    if s >= 0:
        drawn = dataset_inputs(
            rc.name,
            s,
            dict.fromkeys(names, shape),
            dict.fromkeys(names, dt),
            acc_dtype=dt,
        )
    else:
        # Without local_bound the largest input magnitude sets every bound: only the
        # specials that cannot raise it.
        drawn = {
            a: place_specials(draw, dt, rc.values(draw, dt, shape, r, a), a, peak_safe=not lb)
            for a in names
        }
    inputs = [TensorDraw(a, shape, dt, drawn[a]) for a in names]
    out_shape = (n, h, _out_width(rc.name, w))
    outputs = [TensorDraw(a, out_shape, dt) for a in ("output_real", "output_imag")]
    return rc.spec_of(inputs, outputs, attributes=attributes, data_set=s)


def _not_power_of_two(draw: st.DrawFn, size: int, label: str) -> int:
    """A size that is no power of two, near ``size`` (3, 5, 6, 7, 9, ...)."""
    candidates = [v for v in range(3, max(8, 2 * size) + 1) if v & (v - 1)]
    return draw(st.sampled_from(candidates), label=label)


def _fft_dim_breaker(dim: int, clause: str) -> None:
    """dim 1: H, 2: W; every tensor changes with it, so only the power-of-two rule
    breaks (RFFT2D's outputs take W/2 + 1 of the new W)."""

    @breaks(*FFTS, clause=clause)
    def fn(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
        out = broken(spec, clause)
        size = _not_power_of_two(draw, spec.inputs[0].shape[dim], "size")
        for t in spec.inputs:
            out.reshape_tensor(
                t.name, tuple(size if i == dim else d for i, d in enumerate(t.shape))
            )
        out_size = size if dim == 1 else _out_width(rc.name, size)
        for t in spec.outputs:
            shape = tuple(out_size if i == dim else d for i, d in enumerate(t.shape))
            out.reshape_tensor(t.name, shape)
        return out

    fn.__name__ = f"fft_dim_breaker_{dim}"


_fft_dim_breaker(1, FFT_HEIGHT_CLAUSE)
_fft_dim_breaker(2, FFT_WIDTH_CLAUSE)


@breaks(*FFTS, clause=INPUTS_CLAUSE)
def fft_inputs(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """input_real of rank 2 or 4, or (FFT2D) an imaginary part of another shape."""
    out = broken(spec, INPUTS_CLAUSE)
    shape = spec.inputs[0].shape
    if rc.name == "FFT2D" and draw(st.booleans(), label="imaginary part mismatched"):
        dim = draw(st.integers(0, 2), label="dimension made wrong")
        # Doubling keeps H and W powers of two: only the shape agreement breaks.
        out.reshape_tensor(
            "input_imag", tuple(d * 2 if i == dim else d for i, d in enumerate(shape))
        )
        return out
    if draw(st.booleans(), label="rank 4 rather than 2"):
        out.reshape_tensor("input_real", (1, *shape))
    else:
        out.reshape_tensor("input_real", (shape[0] * shape[1], shape[2]))
    return out

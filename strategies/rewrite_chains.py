"""The chains of the graph-rewrite obligations (strategies.rewrites): one builder per
rewrite, which draws a chain that meets the rewrite's condition by construction, within
the claim's pairs and the revision's argument layout.  Every intermediate result is
exact (data movement, CLAMP, MINIMUM, integer CAST) or an integer accumulator."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import reject
from hypothesis import strategies as st

from conformance import dtypes
from conformance.dtypes import DType
from conformance.spec import Level, Spec, TypeSupport
from reference.engine import evaluate
from strategies.case import Case, CaseSpec, TensorDraw, shape_tensor
from strategies.chains import pad_then_cases
from strategies.graphs import (
    Chain,
    Step,
    build_chain,
    graph_cases,
    in_revision_step,
    refactor,
    renamed,
)
from strategies.recipes import RecipeContext, load_all
from strategies.rewrite_conditions import composed, seams
from strategies.shapes import Budget
from strategies.values import ValueRange, tensor_values


@dataclass(frozen=True)
class RewriteContext:
    spec: Spec
    level: Level
    budget: Budget
    pairs: frozenset[tuple[str, str]]  # the claim's (operator, mode)s
    mode: TypeSupport  # of the last operator, the pair the vector is for
    variant: int = 0  # which of the rewrite's variants (Rewrite.variants) to build

    @property
    def chain(self) -> Chain:
        return Chain(self.spec, self.level, self.budget, None, self.pairs)

    def same_type(self, op: str, dt: DType) -> TypeSupport | None:
        """The claimed mode of ``op`` on ``dt`` (its in_out_t, else in_t)."""
        return self.chain.mode(op, "in_out_t", dt) or self.chain.mode(op, "in_t", dt)


Builder = Callable[[st.DrawFn, RewriteContext], Case]


def main_type(mode: TypeSupport) -> DType:
    for var in ("in_out_t", "in_t"):
        if mode.bindings.get(var) not in (None, "-"):
            return mode.dtype(var)
    raise KeyError(f"{mode.operator} [{mode.mode}] binds no in_out_t or in_t")


def _draw_shape(
    draw: st.DrawFn, rank: tuple[int, int], dims: tuple[int, int], label: str
) -> tuple[int, ...]:
    r = draw(st.integers(*rank), label=f"{label}: rank")
    return tuple(draw(st.integers(*dims), label=f"{label}: dim {i}") for i in range(r))


def _values(
    draw: st.DrawFn, dt: DType, shape: tuple[int, ...], label: str, r: ValueRange | None = None
) -> np.ndarray:
    return np.asarray(draw(tensor_values(dt, shape, r or ValueRange(specials=False), label=label)))


def _single(
    spec: Spec,
    op: str,
    mode: TypeSupport,
    inputs: list[TensorDraw],
    out: TensorDraw,
    attributes: dict[str, Any] | None = None,
) -> CaseSpec:
    """A first operator of a chain, laid out as the revision declares it."""
    step = in_revision_step(spec, Step(op, [t.name for t in inputs], inputs, out, attributes or {}))
    order = {t.name: t for t in step.operands}
    return CaseSpec(op, mode.mode, [order[n] for n in step.inputs], [out], step.attributes)


def _finish(ctx: RewriteContext, first: CaseSpec, steps: list[Step]) -> Case:
    case = build_chain(ctx.spec, first, [in_revision_step(ctx.spec, s) for s in steps])
    if evaluate(case.graph, case.inputs, spec=ctx.spec, level=ctx.level).kind != "valid":
        reject()
    return case


def _specials(dt: DType) -> list[float]:
    out = [float("nan")] if dt.fp.has_nan else []
    return out + ([float("inf"), float("-inf")] if dt.fp.has_inf else [])


def _with_specials(draw: st.DrawFn, x: np.ndarray, dt: DType, label: str) -> np.ndarray:
    """``x`` with a few NaN and infinite elements (at least one), where the type has them."""
    pool = _specials(dt)
    flat = np.array(x, copy=True).reshape(-1)
    count = draw(st.integers(1, max(1, min(4, flat.size))), label=f"{label}: specials")
    for k in range(count):
        at = draw(st.integers(0, flat.size - 1), label=f"{label}: special {k} at")
        flat[at] = draw(st.sampled_from(pool), label=f"{label}: special {k}")
    return flat.reshape(x.shape).astype(dt.storage)


def build_mul_zero(draw: st.DrawFn, ctx: RewriteContext) -> Case:
    dt = main_type(ctx.mode)
    shape = _draw_shape(draw, (1, 3), (1, 5), "x")
    x = TensorDraw(
        "op0_input1", shape, dt, _with_specials(draw, _values(draw, dt, shape, "x"), dt, "x")
    )
    zero_shape = tuple(
        d if draw(st.booleans(), label=f"zero: dim {i} kept") else 1 for i, d in enumerate(shape)
    )
    zero = TensorDraw("op0_input2", zero_shape, dt, np.zeros(zero_shape, dt.storage), const=True)
    operands = [x, zero]
    if any(a.name == "shift" for a in ctx.spec.operator("MUL").inputs):
        scalar = ctx.spec.operator("MUL").argument("shift").shape.kind == "scalar"
        shift_shape = () if scalar else (1,)
        zeros = np.zeros(shift_shape, np.int8)
        operands.append(TensorDraw("op0_shift", shift_shape, dtypes.I8, zeros, const=True))
    first = _single(ctx.spec, "MUL", ctx.mode, operands, TensorDraw("op0_output", shape, dt))
    return _finish(ctx, first, [])


def build_sub_self(draw: st.DrawFn, ctx: RewriteContext) -> Case:
    dt = main_type(ctx.mode)
    shape = _draw_shape(draw, (1, 3), (1, 5), "x")
    x = TensorDraw(
        "op0_input1", shape, dt, _with_specials(draw, _values(draw, dt, shape, "x"), dt, "x")
    )
    first = CaseSpec("SUB", ctx.mode.mode, [x, x], [TensorDraw("op0_output", shape, dt)], {})
    return _finish(ctx, first, [])


def _bound(draw: st.DrawFn, dt: DType, lo: float, hi: float, label: str) -> float:
    """A value of ``dt`` in [lo, hi]."""
    if dt.is_int:
        return float(draw(st.integers(int(lo), int(hi)), label=label))
    v = draw(st.floats(lo, hi, allow_nan=False, allow_infinity=False), label=label)
    return float(np.clip(np.float64(v).astype(dt.storage).astype(np.float64), lo, hi))


def build_clamp_clamp(draw: st.DrawFn, ctx: RewriteContext) -> Case:
    dt = main_type(ctx.mode)
    top, bottom = dt.int_range if dt.is_int else (-1000.0, 1000.0)
    shape = _draw_shape(draw, (1, 3), (1, 6), "x")
    x = TensorDraw("op0_input", shape, dt, _values(draw, dt, shape, "x"))
    # Two disjoint ranges, in either order: the merged range is empty.
    cut = _bound(draw, dt, top + 2, bottom - 2, "cut")
    low = (top, cut - 1)
    high = (cut + 1, bottom)
    # A merged clip that applies max_val last is wrong when the second range is above
    # the first, one that applies min_val last when it is below: variant 0, 1.
    first_low = ctx.variant % 2 == 0
    ranges = []
    for lo, hi in (low, high) if first_low else (high, low):
        a = _bound(draw, dt, lo, hi, "bound a")
        b = _bound(draw, dt, lo, hi, "bound b")
        ranges.append((min(a, b), max(a, b)))
    cast = int if dt.is_int else float
    (lo1, hi1), (lo2, hi2) = ranges
    first = _single(
        ctx.spec,
        "CLAMP",
        ctx.mode,
        [x],
        TensorDraw("op0_output", shape, dt),
        {"min_val": cast(lo1), "max_val": cast(hi1)},
    )
    step = Step(
        "CLAMP",
        ["op0_output"],
        [],
        TensorDraw("op1_output", shape, dt),
        {"min_val": cast(lo2), "max_val": cast(hi2)},
    )
    return _finish(ctx, first, [step])


def build_min_max(draw: st.DrawFn, ctx: RewriteContext) -> Case:
    dt = main_type(ctx.mode)
    top, bottom = dt.int_range if dt.is_int else (-1000.0, 1000.0)
    shape = _draw_shape(draw, (1, 3), (1, 6), "x")
    ones = (1,) * len(shape)
    x = TensorDraw("op0_input1", shape, dt, _values(draw, dt, shape, "x"))
    hi = _bound(draw, dt, top, bottom - 1, "hi")
    lo = _bound(draw, dt, hi + (1 if dt.is_int else 0.5), bottom, "lo above hi")
    if lo <= hi:
        reject()
    hi_t = TensorDraw("op0_input2", ones, dt, np.full(ones, hi).astype(dt.storage), const=True)
    lo_t = TensorDraw("op1_lo", ones, dt, np.full(ones, lo).astype(dt.storage), const=True)
    first = _single(
        ctx.spec,
        "MINIMUM",
        _claimed(ctx, "MINIMUM", dt),
        [x, hi_t],
        TensorDraw("op0_output", shape, dt),
    )
    step = Step("MAXIMUM", ["op0_output", lo_t.name], [lo_t], TensorDraw("op1_output", shape, dt))
    return _finish(ctx, first, [step])


def _claimed(ctx: RewriteContext, op: str, dt: DType) -> TypeSupport:
    m = ctx.same_type(op, dt)
    if m is None:
        reject()
    assert m is not None
    return m


def build_transpose_transpose(draw: st.DrawFn, ctx: RewriteContext) -> Case:
    dt = main_type(ctx.mode)
    rank = min(4, int(ctx.level["MAX_RANK"]))
    if rank < 3:
        reject()  # every pair of permutations of two axes commutes
    shape = _draw_shape(draw, (3, rank), (2, 4), "x")
    x = TensorDraw("op0_input1", shape, dt, _values(draw, dt, shape, "x"))
    p1 = tuple(draw(st.permutations(range(len(shape))), label="perms 1"))
    p2 = tuple(draw(st.permutations(range(len(shape))), label="perms 2"))
    if composed(p1, p2) == composed(p2, p1):
        reject()
    mid = tuple(shape[i] for i in p1)
    out = tuple(mid[i] for i in p2)
    first = _single(
        ctx.spec, "TRANSPOSE", ctx.mode, [x], TensorDraw("op0_output", mid, dt), {"perms": list(p1)}
    )
    step = Step(
        "TRANSPOSE", ["op0_output"], [], TensorDraw("op1_output", out, dt), {"perms": list(p2)}
    )
    return _finish(ctx, first, [step])


def build_reverse_reverse(draw: st.DrawFn, ctx: RewriteContext) -> Case:
    dt = main_type(ctx.mode)
    shape = _draw_shape(draw, (2, 3), (2, 5), "x")
    first_input = ctx.spec.operator("REVERSE").inputs[0].name
    x = TensorDraw(f"op0_{first_input}", shape, dt, _values(draw, dt, shape, "x"))
    a1 = draw(st.integers(0, len(shape) - 1), label="axis 1")
    a2 = draw(st.sampled_from([a for a in range(len(shape)) if a != a1]), label="axis 2")
    first = _single(
        ctx.spec, "REVERSE", ctx.mode, [x], TensorDraw("op0_output", shape, dt), {"axis": a1}
    )
    step = Step("REVERSE", ["op0_output"], [], TensorDraw("op1_output", shape, dt), {"axis": a2})
    return _finish(ctx, first, [step])


def build_reshape_transpose_reshape(draw: st.DrawFn, ctx: RewriteContext) -> Case:
    dt = main_type(ctx.mode)
    rank = int(ctx.level["MAX_RANK"])
    shape = _draw_shape(draw, (1, 3), (2, 6), "x")
    size = int(np.prod(shape))
    mid = refactor(draw, size, min(4, rank), "reshape 1", min_rank=2)
    perms = tuple(draw(st.permutations(range(len(mid))), label="perms"))
    long_axes = [a for a in perms if mid[a] > 1]
    if long_axes == sorted(long_axes):
        reject()  # moves no element: every rewrite is right
    moved = tuple(mid[i] for i in perms)
    out = refactor(draw, size, min(4, rank), "reshape 2")
    x = TensorDraw("op0_input1", shape, dt, _values(draw, dt, shape, "x"))
    first = _single(
        ctx.spec,
        "RESHAPE",
        _claimed(ctx, "RESHAPE", dt),
        [x, shape_tensor("op0_shape", list(mid))],
        TensorDraw("op0_output", mid, dt),
    )
    t = Step(
        "TRANSPOSE", ["op0_output"], [], TensorDraw("op1_output", moved, dt), {"perms": list(perms)}
    )
    new_shape = shape_tensor("op2_shape", list(out))
    r = Step(
        "RESHAPE", ["op1_output", new_shape.name], [new_shape], TensorDraw("op2_output", out, dt)
    )
    return _finish(ctx, first, [t, r])


def build_slice_concat(draw: st.DrawFn, ctx: RewriteContext) -> Case:
    dt = main_type(ctx.mode)
    rank = draw(st.integers(1, 3), label="rank")
    axis = draw(st.integers(0, rank - 1), label="axis")
    base = tuple(draw(st.integers(1, 4), label=f"dim {i}") for i in range(rank))
    count = draw(st.integers(2, 3), label="inputs")
    parts = []
    for k in range(count):
        d = draw(st.integers(1, 4), label=f"input {k} along the axis")
        shape = tuple(d if i == axis else b for i, b in enumerate(base))
        # no zero: a window read past its input as zeros must differ
        r = (
            ValueRange(low=1, specials=False)
            if dt.is_int
            else ValueRange(low=0.5, high=8.0, specials=False)
        )
        values = (
            np.ones(shape, bool) if dt.kind == "bool" else _values(draw, dt, shape, f"input {k}", r)
        )
        parts.append(TensorDraw(f"op0_input1_{k}", shape, dt, values))
    sizes = [p.shape[axis] for p in parts]
    total = sum(sizes)
    seam = draw(st.sampled_from(seams(sizes)), label="seam crossed")
    start_axis = draw(st.integers(0, seam - 1), label="start before the seam")
    end_axis = draw(st.integers(seam + 1, total), label="end past the seam")
    cat_shape = tuple(total if i == axis else b for i, b in enumerate(base))
    start, size = [], []
    for i, d in enumerate(cat_shape):
        if i == axis:
            start.append(start_axis)
            size.append(end_axis - start_axis)
        else:
            s = draw(st.integers(0, d - 1), label=f"start {i}")
            start.append(s)
            size.append(draw(st.integers(1, d - s), label=f"size {i}"))
    concat_mode = _claimed(ctx, "CONCAT", dt)
    first = CaseSpec(
        "CONCAT", concat_mode.mode, parts, [TensorDraw("op0_output", cat_shape, dt)], {"axis": axis}
    )
    return _finish(ctx, first, [_slice_step(start, size, dt)])


def _slice_step(start: list[int], size: list[int], dt: DType) -> Step:
    """SLICE of the first operator's output, the chain's second step."""
    st_t, sz_t = shape_tensor("op1_start", start), shape_tensor("op1_size", size)
    out = TensorDraw("op1_output", tuple(size), dt)
    return Step("SLICE", ["op0_output", st_t.name, sz_t.name], [st_t, sz_t], out)


def build_slice_slice(draw: st.DrawFn, ctx: RewriteContext) -> Case:
    dt = main_type(ctx.mode)
    shape = _draw_shape(draw, (1, 3), (3, 7), "x")
    x = TensorDraw("op0_input1", shape, dt, _values(draw, dt, shape, "x"))
    s1, z1, s2, z2 = [], [], [], []
    for i, d in enumerate(shape):
        a = draw(st.integers(0 if i else 1, d - 2), label=f"start 1 axis {i}")
        n = draw(st.integers(1, d - a), label=f"size 1 axis {i}")
        b = draw(st.integers(0, n - 1), label=f"start 2 axis {i}")
        s1.append(a)
        z1.append(n)
        s2.append(b)
        z2.append(draw(st.integers(1, n - b), label=f"size 2 axis {i}"))
    first = _single(
        ctx.spec,
        "SLICE",
        ctx.mode,
        [x, shape_tensor("op0_start", s1), shape_tensor("op0_size", z1)],
        TensorDraw("op0_output", tuple(z1), dt),
    )
    return _finish(ctx, first, [_slice_step(s2, z2, dt)])


def _pad_value(draw: st.DrawFn, dt: DType, label: str) -> int | float | bool:
    if dt.kind == "bool":
        return draw(st.booleans(), label=label)
    if dt.is_int:
        return draw(st.integers(*dt.int_range), label=label)
    return float(np.float64(draw(st.floats(-8, 8), label=label)).astype(dt.storage))


def build_pad_pad(draw: st.DrawFn, ctx: RewriteContext) -> Case:
    dt = main_type(ctx.mode)
    shape = _draw_shape(draw, (1, 3), (1, 4), "x")
    x = TensorDraw("op0_input1", shape, dt, _values(draw, dt, shape, "x"))
    p1 = [draw(st.integers(0, 2), label=f"pad 1 [{i}]") for i in range(2 * len(shape))]
    p2 = [draw(st.integers(0, 2), label=f"pad 2 [{i}]") for i in range(2 * len(shape))]
    if not any(p1):
        p1[draw(st.integers(0, len(p1) - 1), label="a padded side")] = 1
    c1 = _pad_value(draw, dt, "pad_const 1")
    c2 = _pad_value(draw, dt, "pad_const 2")
    if c1 == c2:
        reject()
    mid = tuple(d + p1[2 * i] + p1[2 * i + 1] for i, d in enumerate(shape))
    out = tuple(d + p2[2 * i] + p2[2 * i + 1] for i, d in enumerate(mid))
    first = _single(
        ctx.spec,
        "PAD",
        ctx.mode,
        [x, shape_tensor("op0_padding", p1)],
        TensorDraw("op0_output", mid, dt),
        {"pad_const": c1},
    )
    pad2 = shape_tensor("op1_padding", p2)
    step = Step(
        "PAD",
        ["op0_output", pad2.name],
        [pad2],
        TensorDraw("op1_output", out, dt),
        {"pad_const": c2},
    )
    return _finish(ctx, first, [step])


def build_cast_cast(draw: st.DrawFn, ctx: RewriteContext) -> Case:
    narrow, wide = ctx.mode.dtype("in_t"), ctx.mode.dtype("out_t")
    first_mode = next(
        (
            m
            for m in ctx.spec.operator("CAST").modes
            if m.dtype("in_t") is wide
            and m.dtype("out_t") is narrow
            and (m.operator, m.mode) in ctx.pairs
        ),
        None,
    )
    if first_mode is None:
        reject()
    assert first_mode is not None
    shape = _draw_shape(draw, (1, 3), (1, 6), "x")
    values = _values(draw, wide, shape, "x")
    lo, hi = narrow.int_range
    flat = values.reshape(-1)
    at = draw(st.integers(0, flat.size - 1), label="a value outside the narrow type")
    flat[at] = draw(st.sampled_from([hi + 1, lo - 1, *wide.int_range]), label="its value")
    x = TensorDraw("op0_input", shape, wide, flat.reshape(shape).astype(wide.storage))
    first = _single(ctx.spec, "CAST", first_mode, [x], TensorDraw("op0_output", shape, narrow))
    step = Step("CAST", ["op0_output"], [], TensorDraw("op1_output", shape, wide))
    return _finish(ctx, first, [step])


def build_pad_pool(pool: str) -> Builder:
    def build(draw: st.DrawFn, ctx: RewriteContext) -> Case:
        pad_mode = _claimed(ctx, "PAD", main_type(ctx.mode))
        pairs = frozenset({(pool, ctx.mode.mode), ("PAD", pad_mode.mode)})
        return draw(pad_then_cases(ctx.spec, ctx.level, ctx.budget, pairs, pool))

    return build


def build_pad_conv(draw: st.DrawFn, ctx: RewriteContext) -> Case:
    pad_mode = _claimed(ctx, "PAD", ctx.mode.dtype("in_t"))
    pairs = frozenset({(ctx.mode.operator, ctx.mode.mode), ("PAD", pad_mode.mode)})
    return draw(pad_then_cases(ctx.spec, ctx.level, ctx.budget, pairs, ctx.mode.operator))


def build_transpose_reshape(draw: st.DrawFn, ctx: RewriteContext) -> Case:
    dt = main_type(ctx.mode)
    t_mode = _claimed(ctx, "TRANSPOSE", dt)
    pairs = {(ctx.mode.operator, ctx.mode.mode), ("TRANSPOSE", t_mode.mode)}
    return draw(
        graph_cases(
            ctx.spec,
            ctx.level,
            ctx.budget,
            pairs=pairs,
            begin=("TRANSPOSE", "RESHAPE"),
            length=(2, 2),
        )
    )


def _rescale_attributes(spec: Spec, out_zp: int) -> dict[str, Any]:
    declared = {a.name for a in spec.operator("RESCALE").attributes}
    attrs: dict[str, Any] = {
        "input_zp": 0,
        "output_zp": out_zp,
        "scale32": True,
        "per_channel": True,
        "input_unsigned": False,
        "output_unsigned": False,
    }
    if "rounding_mode" in declared:
        attrs["rounding_mode"] = "SINGLE_ROUND"
    else:
        attrs["double_round"] = False
    return attrs


def build_conv_epilogue(draw: st.DrawFn, ctx: RewriteContext) -> Case:
    conv_modes = [
        m
        for m in ctx.spec.operator("CONV2D").modes
        if m.dtype("out_t") is ctx.mode.dtype("in_t") and ("CONV2D", m.mode) in ctx.pairs
    ]
    if not conv_modes:
        reject()
    m = draw(st.sampled_from(conv_modes), label="convolution mode")
    op_spec = ctx.spec.operator("CONV2D")
    drawn = load_all()["CONV2D"](draw, RecipeContext(ctx.spec, op_spec, m, ctx.level, ctx.budget))
    assert isinstance(drawn, CaseSpec)
    first = renamed(drawn.in_revision(ctx.spec), "op0_")
    built = first.build(ctx.spec)
    outcome = evaluate(built.graph, built.inputs, spec=ctx.spec, level=ctx.level)
    out = first.outputs[0]
    value = outcome.outputs.get(out.name)
    if outcome.kind != "valid" or not isinstance(value, np.ndarray):
        reject()
    acc = np.asarray(value).astype(np.int64)
    channels = acc.shape[-1]
    if channels < 2:
        reject()  # one channel: per channel and per tensor are one scale
    # Distinct normalised multipliers, each with the shift that brings the channel's
    # largest accumulator near the output's largest magnitude: the channels' scales
    # differ, and with the output zero point some results saturate.
    target = ctx.mode.dtype("out_t")
    room = target.int_range[1]
    mults = draw(
        st.lists(
            st.integers(1 << 30, (1 << 31) - 1), min_size=channels, max_size=channels, unique=True
        ),
        label="multipliers",
    )
    shifts = []
    for c in range(channels):
        vmax = int(np.abs(acc[..., c]).max()) if acc.size else 1
        need = -(-max(vmax, 1) * mults[c] // room)
        shifts.append(min(62, max(2, (need - 1).bit_length(), max(vmax, 1).bit_length() + 1)))
    out_zp = 0  # RESCALE ERROR_IFs a non-zero zero point of a signed output wider than i8
    if target.bits == 8:
        out_zp = draw(st.integers(-room // 2, room // 2).filter(bool), label="output_zp")
    mul = TensorDraw(
        "op1_multiplier", (channels,), dtypes.I32, np.array(mults, np.int32), const=True
    )
    shift = TensorDraw("op1_shift", (channels,), dtypes.I8, np.array(shifts, np.int8), const=True)
    operands, attrs = [mul, shift], _rescale_attributes(ctx.spec, out_zp)
    declared = [a.name for a in ctx.spec.operator("RESCALE").inputs]
    for name, dt in (("input_zp", ctx.mode.dtype("in_t")), ("output_zp", target)):
        if name in declared:  # TOSA 1.0: a [1] input of its own type, not the output's
            value = np.array([attrs.pop(name)], dt.storage)
            operands.append(TensorDraw(f"op1_{name}", (1,), dt, value, const=True))
    step = Step(
        "RESCALE",
        [out.name, *(t.name for t in operands)],
        operands,
        TensorDraw("op1_output", out.shape, target),
        attrs,
    )
    return _finish(ctx, first, [step])

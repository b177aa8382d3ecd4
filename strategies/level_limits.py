"""Level cases of the limits other than MAX_RANK: kernel, stride, scale, tensor lists.

Which argument a limit bounds comes from tosa.xml (``OperatorSpec.level_limits()``);
each bounded argument becomes one *limit case*, named after the limit and, past the
first argument of that limit, the argument (``MAX_KERNEL``, ``MAX_KERNEL:pad``).  A
bound that is a product with an attribute element (``dilation_y * KH``) gets a case
reached through that attribute too (``MAX_KERNEL:dilation``).  The rank and the list
limits bound every argument at once, so they are one case each.

A case is drawn from the operator's recipe on a tiny budget and then edited: the names
of the operator's expressions (``IH``, ``KH``, ``stride_y``, ``pad_top``,
``scale_y_n``...) are bound from the drawn case, one axis gets the value at the limit
(or one above it), the input and output sizes follow from the operator's output-size
formula, and every shape is evaluated again from tosa.xml's shape expressions.  Only
one dimension grows, so a vector stays small: a kernel of 8192 slides over about
8192 input elements, a stride of 8192 over 8193.

Values are drawn again for the new shapes, in ranges that keep every integer sum in
its accumulator (level cases test geometry; overflow belongs to other vectors) and
floats finite (a NaN everywhere would hide a wrong window).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from hypothesis import strategies as st

from conformance.errata import BY_ID
from conformance.expressions import BinOp, Environment, Name, names_in, parse_expr
from conformance.operator_table import family
from conformance.spec import Argument, Level, OperatorSpec, Spec, active_spec
from strategies.case import Case, CaseSpec, TensorDraw
from strategies.recipes import RecipeContext, load_all
from strategies.recipes import shape as shape_recipes
from strategies.recipes.control_flow import CASE_BUILDERS, NEST_CAP
from strategies.recipes.conv_geometry import input_size, least_output
from strategies.recipes.custom import NO_RECIPE
from strategies.recipes.image import MAX_N
from strategies.shapes import Budget
from strategies.values import ValueRange

# Limits one case reaches on every argument at once: recipes force every rank to the
# maximum together, and a control-flow operator's lists travel together.
MERGED_LIMITS = ("MAX_RANK", "MAX_TENSOR_LIST_SIZE")

# The operators whose nesting the errata bound (erratum max_nesting-no-levellimit):
# their list cases nest MAX_NESTING deep, so the at-limit vector holds both maxima.
NESTED = family(frozenset(BY_ID["max_nesting-no-levellimit"].operators))

_POOL_PAD = (
    "ERROR_IF(pad_top >= kernel_y ...): a pad stays below its kernel, itself at most "
    "MAX_KERNEL, so no valid pad reaches MAX_KERNEL, and a pad above it needs a kernel "
    "above it too (the kernel's check fires first)"
)
# (operator, limit case) -> why no vector can sit at (or just above) that limit.
EXEMPT: dict[tuple[str, str], str] = {
    ("AVG_POOL2D", "MAX_KERNEL:pad"): _POOL_PAD,
    ("MAX_POOL2D", "MAX_KERNEL:pad"): _POOL_PAD,
    ("AVG_POOL2D_ADAPTIVE", "MAX_KERNEL:pad"): _POOL_PAD,  # TOSA 1.1: the same pseudocode
    ("MAX_POOL2D_ADAPTIVE", "MAX_KERNEL:pad"): _POOL_PAD,
    ("CUSTOM", "MAX_TENSOR_LIST_SIZE"): NO_RECIPE,
    **shape_recipes.LEVEL_EXEMPT,  # TOSA 1.1's shape operators
}

# How tosa.xml names the spatial axes: stride_y goes with IH, OH and KH.
AXIS_DIMENSIONS = {"d": "D", "y": "H", "x": "W"}
ACC_ROOM = 2**30  # half an i32 accumulator: the other half is the bias's
# No level vector holds a tensor above this: a limit that needs one (level "none":
# kernels and strides of 2**31 - 1) gets no vector, and its job says why.
MAX_LEVEL_ELEMENTS = 1 << 16
BASE_BUDGET = Budget(max_elements=2, max_dim=2)  # the drawn case before one axis grows
LIST_BUDGET = Budget(max_elements=256, max_dim=8)  # a list's members before it grows


@dataclass(frozen=True)
class LimitCase:
    """One thing a level vector sits at: a limit reached on some arguments."""

    name: str  # "MAX_KERNEL", "MAX_KERNEL:dilation", "MAX_KERNEL:pad"
    limit: str  # the level maximum, "MAX_KERNEL"
    arguments: tuple[str, ...]  # the arguments whose level limits it reaches
    expressions: tuple[str, ...]  # their <levellimit> values, as tosa.xml writes them
    through: str | None = None  # the attribute a product is reached through ("dilation")

    def names(self, clause: str) -> bool:
        """Whether a LEVEL_CHECK clause the reference reported is one of this case's."""
        return any(clause.startswith(f"{e} <= {self.limit}") for e in self.expressions)


def limit_cases(op_spec: OperatorSpec) -> list[LimitCase]:
    """Every limit case of the operator, exemptions included, in tosa.xml's order."""
    by_limit: dict[str, list[tuple[Argument, str]]] = {}
    for arg, lim in op_spec.level_limits():
        by_limit.setdefault(lim.limit, []).append((arg, lim.text))
    out: list[LimitCase] = []
    for limit, items in by_limit.items():
        if limit in MERGED_LIMITS:
            args = tuple(dict.fromkeys(a.name for a, _ in items))
            out.append(LimitCase(limit, limit, args, tuple(t for _, t in items)))
            continue
        first = items[0][0].name
        for name in dict.fromkeys(a.name for a, _ in items):
            texts = tuple(t for a, t in items if a.name == name)
            label = limit if name == first else f"{limit}:{name}"
            out.append(LimitCase(label, limit, (name,), texts))
            products = [parse_expr(t) for t in texts if isinstance(parse_expr(t), BinOp)]
            used = set().union(*(names_in(p) for p in products))
            for other in op_spec.attributes:
                if other.name != name and used & set(other.element_names):
                    out.append(
                        LimitCase(f"{limit}:{other.name}", limit, (name,), texts, other.name)
                    )
    return out


def limit_case(op_spec: OperatorSpec, name: str) -> LimitCase:
    for c in limit_cases(op_spec):
        if c.name == name:
            return c
    known = ", ".join(c.name for c in limit_cases(op_spec)) or "none"
    raise KeyError(f"{op_spec.name} has no level limit case {name!r}; its cases: {known}")


# -- binding a drawn case to tosa.xml's names ---------------------------------------------


def bind(op_spec: OperatorSpec, spec: CaseSpec) -> dict[str, int]:
    """The value of every name the operator's expressions use, in a drawn case."""
    env = Environment()
    by_name = {t.name: t for t in spec.inputs + spec.outputs}
    for arg in op_spec.inputs + op_spec.outputs:
        t = by_name.get(arg.name)
        if t is None:
            continue
        if arg.type == "shape_t":
            for n, v in zip(arg.element_names, np.asarray(t.values).reshape(-1), strict=False):
                env.values[n] = int(v)
        elif arg.shape.kind == "dims":
            arg.shape.bind(t.shape, env)
    for arg in op_spec.attributes:
        value = spec.attributes.get(arg.name)
        if arg.element_names and value is not None:
            for n, v in zip(arg.element_names, np.asarray(value).reshape(-1), strict=False):
                env.values[n] = int(v)
        elif isinstance(value, str) and arg.element_type in active_spec().enums:
            # An enumerated attribute a shape divides by (TOSA 1.1's block_size in
            # [N,IH,IW,IC/block_size]): the number its value name stands for.
            env.values[arg.name] = active_spec().enums[arg.element_type].value_of(value)
    return env.values


def safe_range(spec: CaseSpec, t: TensorDraw, ks: int) -> ValueRange | None:
    """Floats in [-1, 1]; integers within isqrt(ACC_ROOM / ks) of their zero point
    (``NAME_zp``), so a sum of ks products of two such deviations stays in half an
    i32 accumulator and a bias of the same size cannot push it out."""
    dt = t.dtype
    if dt.is_float:
        return ValueRange(-1.0, 1.0)
    if dt.kind != "int":
        return None
    zp = int(spec.attributes.get(f"{t.name}_zp", 0))
    room = max(1, math.isqrt(ACC_ROOM // max(1, ks)))
    return ValueRange(max(dt.int_range.min, zp - room), min(dt.int_range.max, zp + room))


def rebuilt(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec, values: dict[str, int]) -> CaseSpec:
    """``spec`` with every shape, array attribute and shape input evaluated again from
    ``values``, and new data for every tensor input."""
    op_spec, env = rc.op_spec, Environment(values)
    shaped: dict[str, tuple[int, ...]] = {}
    for t in spec.inputs + spec.outputs:
        arg = op_spec.argument(t.name)
        if arg.type != "shape_t":
            shaped[t.name] = arg.shape.evaluate(env)
    largest = max(shaped.items(), key=lambda kv: math.prod(kv[1]))
    if math.prod(largest[1]) > MAX_LEVEL_ELEMENTS:
        raise ValueError(
            f"{op_spec.name}: the limit needs {largest[0]} of shape {list(largest[1])}, "
            f"more than {MAX_LEVEL_ELEMENTS} elements: no vector can hold it"
        )
    # The most products one sum can add: within the largest input's elements (a
    # kernel's taps times its channels, a pooling window's taps within the input).
    ks = max(math.prod(s) for n, s in shaped.items() if n in {t.name for t in spec.inputs})
    inputs = []
    for t in spec.inputs:
        arg = op_spec.argument(t.name)
        if arg.type == "shape_t":
            data = np.array([values[n] for n in arg.element_names], np.int64)
            inputs.append(replace(t, values=data))
            continue
        shape = shaped[t.name]
        data = rc.values(draw, t.dtype, shape, safe_range(spec, t, ks), label=t.name)
        inputs.append(replace(t, shape=shape, values=data))
    outputs = [replace(t, shape=shaped[t.name]) for t in spec.outputs]
    attributes = dict(spec.attributes)
    for arg in op_spec.attributes:
        if arg.element_names and arg.name in attributes:
            attributes[arg.name] = tuple(values[n] for n in arg.element_names)
    return replace(spec, inputs=inputs, outputs=outputs, attributes=attributes, data_set=-1)


def _base(draw: st.DrawFn, rc: RecipeContext, budget: Budget) -> CaseSpec:
    small = RecipeContext(rc.spec, rc.op_spec, rc.mode, rc.level, budget, data_set=-1)
    drawn = load_all()[rc.name](draw, small)
    if not isinstance(drawn, CaseSpec):
        raise TypeError(f"{rc.name}'s recipe builds graphs; its level cases need a builder")
    return drawn


# -- windows: convolutions and pooling ----------------------------------------------------


@dataclass(frozen=True)
class AxisNames:
    """The names tosa.xml gives one spatial axis of a windowed operator."""

    size_in: str  # IH
    size_out: str  # OH
    kernel: str  # KH, or kernel_y for pooling
    stride: str  # stride_y
    dilation: str | None  # dilation_y
    pads: tuple[str, str]  # pad_top, pad_bottom (out_pad_top, out_pad_bottom)


def window_parameters(op_spec: OperatorSpec) -> dict[str, Argument]:
    """The arguments that hold a windowed operator's kernel, stride, pad and dilation:
    attributes, or shape_t inputs (TOSA 1.1's _ADAPTIVE pooling operators)."""
    shapes = [a for a in op_spec.inputs if a.type == "shape_t"]
    return {a.name: a for a in [*op_spec.attributes, *shapes]}


def window_axes(op_spec: OperatorSpec) -> list[AxisNames]:
    """The spatial axes in the stride argument's order; the pad argument holds two
    elements per axis in the same order (pad_d0, pad_d1, pad_top, ...)."""
    attrs = window_parameters(op_spec)
    pad = next(a for a in attrs.values() if a.name.endswith("pad"))
    dilation = attrs.get("dilation")
    axes = []
    for j, stride in enumerate(attrs["stride"].element_names):
        a = stride.removeprefix("stride_")
        dim = AXIS_DIMENSIONS[a]
        axes.append(
            AxisNames(
                f"I{dim}",
                f"O{dim}",
                f"kernel_{a}" if "kernel" in attrs else f"K{dim}",
                stride,
                dilation.element_names[j] if dilation else None,
                (pad.element_names[2 * j], pad.element_names[2 * j + 1]),
            )
        )
    return axes


def _small(draw: st.DrawFn, lo: int, hi: int, label: str) -> int:
    return draw(st.integers(lo, max(lo, hi)), label=label)


def _factors(v: int) -> list[tuple[int, int]]:
    """(K, dilation) pairs, both at least 2 and K at most 16, with K * dilation = v."""
    return [(k, v // k) for k in range(2, 17) if v % k == 0 and v // k >= 2]


@st.composite
def window_axis(
    draw: st.DrawFn, variant: str, v: int, *, transposed: bool, pooled: bool
) -> dict[str, int]:
    """One axis with ``variant`` ("kernel", "dilation", "pad" or "stride") at ``v``,
    the others small, as (in, out, kernel, stride, dilation, pad0, pad1).

    Forward (CONV*, pooling): O = (I - 1 + pad0 + pad1 - (K - 1) * dilation) / stride
    + 1, divided exactly, with pads below the kernel for pooling.  Transposed
    (TRANSPOSE_CONV2D): O = (I - 1) * stride + out_pad0 + out_pad1 + K, out_pads
    above -K."""
    # The small kernel and pads stay within v where the same maximum bounds them.
    same = v if variant != "stride" else 3
    k = v if variant == "kernel" else _small(draw, 1, min(3, same), "kernel")
    d = 1
    if variant == "dilation":
        # no such factors (v prime, or none up to 16): the product just above v
        pairs = _factors(v) or [(2, -(-v // 2))]
        k, d = draw(st.sampled_from(pairs), label="kernel and dilation")
    s = v if variant == "stride" else _small(draw, 1, 8 if variant == "pad" else 3, "stride")
    low = max(1 - k, -2) if transposed else 0  # negative out_pads crop the output
    high = min(2, k - 1, same) if pooled else min(2, same)
    p = [_small(draw, low, high, "pad 0"), _small(draw, low, high, "pad 1")]
    if variant == "pad":
        p[draw(st.integers(0, 1), label="pad at the limit")] = v
    if transposed:
        i = 2 if variant == "stride" else _small(draw, 1, 2, "input size")
        o = (i - 1) * s + p[0] + p[1] + k
        if o < 1:  # cropped away: crop less (pad 0 < -(I - 1) * stride keeps pad 1 > -K)
            p[1] += 1 - o
            o = 1
    else:
        extent = (k - 1) * d + 1
        o_lo = least_output(extent, p[0], p[1], s)
        # a stride only matters between two outputs
        o = max(2, o_lo) if variant == "stride" else _small(draw, o_lo, o_lo + 2, "output size")
        i = input_size(o, extent, p[0], p[1], s)
    return {"in": i, "out": o, "kernel": k, "stride": s, "dilation": d, "p0": p[0], "p1": p[1]}


def _variant(case: LimitCase) -> str:
    if case.limit == "MAX_STRIDE":
        return "stride"
    if case.through is not None:
        return case.through
    return "pad" if case.arguments[0].endswith("pad") else "kernel"


@st.composite
def window_case(draw: st.DrawFn, rc: RecipeContext, case: LimitCase, v: int) -> CaseSpec:
    """A windowed operator's case with one axis at ``v`` for ``case``."""
    op_spec = rc.op_spec
    base = _base(draw, rc, BASE_BUDGET)
    values = bind(op_spec, base)
    axes = window_axes(op_spec)
    names = axes[draw(st.integers(0, len(axes) - 1), label="axis at the limit")]
    attrs = set(window_parameters(op_spec))
    variant = _variant(case)
    g = draw(window_axis(variant, v, transposed="out_pad" in attrs, pooled="kernel" in attrs))
    values.update({names.size_in: g["in"], names.size_out: g["out"], names.kernel: g["kernel"]})
    values.update({names.stride: g["stride"], names.pads[0]: g["p0"], names.pads[1]: g["p1"]})
    if names.dilation:
        values[names.dilation] = g["dilation"]
    if "N" in values:
        values["N"] = 1  # one image: only the axis at the limit needs to be long
    return rebuilt(draw, rc, base, values)


# -- RESIZE's scale ---------------------------------------------------------------------


@st.composite
def scale_case(draw: st.DrawFn, rc: RecipeContext, case: LimitCase, v: int) -> CaseSpec:
    """RESIZE with scale_n / scale_d = ``v`` (integer division, as the LEVEL_CHECK
    computes it) on one axis, from an input of 2 along it: OH = ((IH - 1) * n - offset
    + border) / d + 1 exactly, n <= 2048, offset in [-n, 16n), border in [-16n, n)."""
    base = _base(draw, rc, BASE_BUDGET)
    values = bind(rc.op_spec, base)
    text = draw(st.sampled_from(case.expressions), label="axis at the limit")
    ratio = parse_expr(text)
    assert isinstance(ratio, BinOp) and isinstance(ratio.left, Name)
    assert isinstance(ratio.right, Name)
    n_name, d_name = ratio.left.name, ratio.right.name
    a = n_name.split("_")[1]  # scale_y_n: the y axis
    d_cap = MAX_N // v
    if d_cap < 1:
        raise ValueError(f"a scale of {v} needs scale_n above {MAX_N} (ERROR_IF)")
    d = draw(st.integers(1, min(d_cap, 8)), label="scale_d")
    n = draw(st.integers(v * d, min(MAX_N, v * d + d - 1)), label="scale_n")
    offset = draw(st.integers(-n, n - 1), label="offset")
    base_num = n - offset  # (IH - 1) * n - offset with IH = 2
    border = -(base_num % d) + d * draw(st.integers(0, 1), label="border step")
    if border >= n:
        border -= d
    dim = AXIS_DIMENSIONS[a]
    values.update({n_name: n, d_name: d, f"offset_{a}": offset, f"border_{a}": border})
    values.update({f"I{dim}": 2, f"O{dim}": (base_num + border) // d + 1, "N": 1})
    return rebuilt(draw, rc, base, values)


# -- FFT sizes --------------------------------------------------------------------------


@st.composite
def size_case(draw: st.DrawFn, rc: RecipeContext, case: LimitCase, v: int) -> CaseSpec:
    """FFT2D / RFFT2D with H or W at ``v``: both must be powers of two (ERROR_IF), so
    the size just above the limit is the next power of two.  The other sizes are 1 or
    2 (1 above the limit, where the long axis has twice the elements)."""
    power = v & (v - 1) == 0
    # 8K's 8192 is 2**13, so only the case above it (8193) is no power of two: its
    # nearest valid size is the next one.  (A maximum that were no power of two could
    # have no size at it; the at-check would then turn every draw down.)
    if not power:
        v = 1 << v.bit_length()
    base = _base(draw, rc, BASE_BUDGET)
    values = bind(rc.op_spec, base)
    long = draw(st.sampled_from(case.expressions), label="axis at the limit")
    values.update({long: v, "N": 1})
    for n in case.expressions:
        if n != long:
            values[n] = draw(st.sampled_from([1, 2] if power else [1]), label=n)
    return rebuilt(draw, rc, base, values)


# -- tensor lists -----------------------------------------------------------------------


@st.composite
def list_case(draw: st.DrawFn, rc: RecipeContext, case: LimitCase, v: int) -> CaseSpec | Case:
    """Lists of ``v`` tensors: COND_IF / WHILE_LOOP nested MAX_NESTING deep (the
    innermost reached), or CONCAT's input1 grown from a drawn case by copies of its
    members' shapes, the output's axis the sum of theirs (CONCAT's ERROR_IF)."""
    build = CASE_BUILDERS.get(rc.name)
    if build is not None:
        depth = int(rc.level["MAX_NESTING"]) if rc.name in NESTED else 1
        if depth > NEST_CAP:
            raise ValueError(f"{rc.name}: a nest {depth} deep is too large for a vector")
        built = build(draw, rc, None, depth=depth, reach=True, lists=v)
        assert built is not None
        return built
    base = _base(draw, rc, LIST_BUDGET)
    members = list_members(rc.op_spec, base)
    grown = []
    for k in range(v):
        t = members[k % len(members)]
        name = f"{t.name.rpartition('_')[0]}_{k}"
        grown.append(replace(t, name=name, values=rc.values(draw, t.dtype, t.shape, label=name)))
    return joined(base, grown)


def list_members(op_spec: OperatorSpec, spec: CaseSpec) -> list[TensorDraw]:
    """The tensors of the operator's list input (named LIST_k), for an operator whose
    output follows from its list by an ``axis`` attribute (CONCAT)."""
    (listed,) = [a.name for a in op_spec.inputs if a.is_list]
    if "axis" not in spec.attributes:
        raise TypeError(f"{op_spec.name}: no rule known for the output of another list")
    return [t for t in spec.inputs if t.name.startswith(f"{listed}_")]


def joined(spec: CaseSpec, members: list[TensorDraw]) -> CaseSpec:
    """``spec`` with the list ``members``: the output's axis is the sum of theirs (a
    missing dimension counts 1), its other dimensions theirs (CONCAT's ERROR_IFs)."""
    axis = int(spec.attributes["axis"])
    total = sum(t.shape[axis] if axis < len(t.shape) else 1 for t in members)
    shape = list(members[0].shape) or [1]
    shape[axis] = total
    out = replace(spec.outputs[0], shape=tuple(shape))
    return replace(spec, inputs=members, outputs=[out])


def widened(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec, size: int) -> CaseSpec:
    """A list case whose members have every dimension but the axis ``size`` (a recipe
    that splits its budget over the list can leave rank-6 members of one element)."""
    axis = int(spec.attributes["axis"])
    members = []
    for t in list_members(rc.op_spec, spec):
        # a block-scaled member keeps its innermost dimension: whole blocks (TOSA 1.1)
        keep = {axis, len(t.shape) - 1} if t.dtype.kind == "block" else {axis}
        shape = tuple(d if i in keep else size for i, d in enumerate(t.shape))
        data = rc.values(draw, t.dtype, shape, label=t.name)
        members.append(replace(t, shape=shape, values=data))
    return joined(spec, members)


Builder = Callable[..., st.SearchStrategy[CaseSpec | Case]]


def builder(op_spec: OperatorSpec, case: LimitCase) -> Builder:
    """How the cases of ``case`` are drawn, from what tosa.xml says of the operator."""
    if case.limit == "MAX_SHAPE_LEN":  # TOSA 1.1: length(x) of a shape value
        return shape_recipes.shape_length_case
    if case.limit == "MAX_TENSOR_LIST_SIZE":
        return list_case
    if case.limit == "MAX_SCALE":
        return scale_case
    if case.limit in ("MAX_KERNEL", "MAX_STRIDE"):
        if "stride" in window_parameters(op_spec):
            return window_case
        return size_case  # a bound on tensor dimensions themselves (FFT sizes)
    raise KeyError(f"no level cases are drawn for {case.limit}")


def draw_limit_case(
    spec: Spec, op_spec: OperatorSpec, mode: str, level: Level, case: LimitCase, value: int
) -> st.SearchStrategy[CaseSpec | Case]:
    rc = RecipeContext(spec, op_spec, op_spec.mode(mode), level, BASE_BUDGET)
    return builder(op_spec, case)(rc, case, value)

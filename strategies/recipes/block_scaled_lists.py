"""Recipes and breakers for TOSA 1.1's block-scaled tensor-list operators
(reference/ops/block_scaled_lists.py): RESHAPE_BLOCK_SCALED and ROW_GATHER_BLOCK_SCALED.

Each data argument is a list: the values alone (a mode whose ``scale_t`` is "-",
``block_size`` BLOCK_SIZE_1), or the values and their fp8ue8m0 scales, one per 32
values of the innermost dimension (BLOCK_SIZE_32).  The members are separate tensors,
laid out as Arm's generator lays them: ``[values, scales, <other inputs>]`` in, and
``[values, scales]`` out.

Both operators only move elements, so every encoding is valid data.  In the
block-scaled modes the values are raw encodings: every one of the value type (16 for
fp4e2m1, 64 for fp6, 256 for fp8 and mxint8) in an edge case and often otherwise; the
scales spread over a few or all of fp8ue8m0's binades, with the extremes 2**-127,
2**127, 1.0 and the NaN scale 0xFF placed in an edge case and often otherwise (the
exact rule lets a NaN through: it must come out as NaN).  The modes of values alone
draw their values as every recipe does (``RecipeContext.values``).

RESHAPE_BLOCK_SCALED: the block count is factored into a new shape (each prime factor
given to a drawn dimension) whose innermost dimension is then multiplied by 32, so
both innermost dimensions are multiples of the block size and the scale count is kept.
ROW_GATHER_BLOCK_SCALED: as ROW_GATHER's recipe (strategies/recipes/row_gather.py),
with C a multiple of 32 in the block-scaled modes; row_count is mostly above 1 with
several indices per batch, so a window's rows (and their scales' rows) must land in
order.

Breakers: one per ERROR_IF of the two pseudocode files, labelled with the reference's
clause constants; the argument rules the reference checks for the lists (scale and
output shapes, the members' rank, N against the indices); a type no mode has for a
list member.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from hypothesis import strategies as st

from conformance import dtypes
from conformance.dtypes import I32_MIN, DType
from reference import mx
from reference.arguments import INPUTS_CLAUSE, OUTPUTS_CLAUSE, TYPES_CLAUSE
from reference.ops import block_scaled_lists as bsl
from reference.ops.row_gather import ROW_COUNT_CLAUSE
from strategies.case import CaseSpec, TensorDraw, shape_tensor
from strategies.invalid import breaks, broken
from strategies.recipes import RecipeContext, recipe
from strategies.recipes.block_scaled import SCALE_EXTREMES, block_size_name, every_encoding
from strategies.recipes.row_gather import row_count_tensor
from strategies.recipes.scatter_gather import WIDE_K, WIDE_W, index_rng, indices_tensor, wide
from strategies.shapes import Budget, shapes

BS = mx.BLOCK_SIZE
RESHAPE = "RESHAPE_BLOCK_SCALED"
ROW_GATHER = "ROW_GATHER_BLOCK_SCALED"


def scaled(rc: RecipeContext) -> bool:
    """Whether the mode's lists hold scales (its scale_t is a type, not "-")."""
    return rc.mode.bindings.get("scale_t", "-") != "-"


def _unscaled(rc: RecipeContext) -> bool:
    return not scaled(rc)


def _rng(draw: st.DrawFn, label: str) -> np.random.Generator:
    return np.random.default_rng(draw(st.integers(0, 2**32 - 1), label=f"{label}: seed"))


def value_codes(
    draw: st.DrawFn, rc: RecipeContext, dt: DType, shape: tuple[int, ...], label: str
) -> np.ndarray:
    """Encodings of a block-scaled mode's value type: every one of them where the
    tensor holds them (always in an edge case), else at random."""
    rng = _rng(draw, label)
    n, size = mx.code_count(dt), math.prod(shape)
    every = size >= n and (
        rc.target == "edge" or draw(st.booleans(), label=f"{label}: every encoding")
    )
    codes = every_encoding(rng, dt, size) if every else rng.integers(0, n, size)
    return mx.from_bits(codes.reshape(shape), dt)


def scale_codes(
    draw: st.DrawFn, rc: RecipeContext, shape: tuple[int, ...], label: str
) -> np.ndarray:
    """fp8ue8m0 scales within a few binades of 1.0 or over the whole range, with the
    extremes (2**-127, 2**127, 1.0, NaN) placed where asked (always in an edge case)."""
    rng = _rng(draw, label)
    size = math.prod(shape)
    spread = draw(st.sampled_from([6, 40, 127]), label=f"{label}: binades")
    codes = np.clip(mx.UE8M0_BIAS + rng.integers(-spread, spread + 1, size), 0, 0xFE)
    if rc.target == "edge" or draw(st.booleans(), label=f"{label}: extremes"):
        spots = rng.permutation(size)[: len(SCALE_EXTREMES)]
        codes[spots] = SCALE_EXTREMES[: len(spots)]
    return mx.from_bits(codes.reshape(shape), mx.SCALE_T)


def _edge_blocks(rc: RecipeContext, dt: DType) -> int:
    """The blocks an edge case needs: every encoding of the value type, and a block for
    each scale extreme."""
    if rc.target != "edge":
        return 1
    return max(-(-mx.code_count(dt) // BS), len(SCALE_EXTREMES))


def _factored(draw: st.DrawFn, count: int, lo: int, hi: int, label: str) -> tuple[int, ...]:
    """A shape of rank in [lo, hi] holding ``count`` elements: each prime factor of the
    count goes to a drawn dimension (the others are 1); rank 0 only for one element."""
    lo = lo if count == 1 else max(lo, 1)
    rank = draw(st.integers(lo, max(lo, hi)), label=f"{label}: rank")
    dims = [1] * rank
    p, n, k = 2, count, 0
    while n > 1:
        while n % p == 0:
            dims[draw(st.integers(0, rank - 1), label=f"{label}: factor {k}")] *= p
            n //= p
            k += 1
        p += 1
    return tuple(dims)


def _blocked(shape: tuple[int, ...]) -> tuple[int, ...]:
    """A values shape from its scales' (block) shape: the innermost times 32."""
    return (*shape[:-1], shape[-1] * BS)


# -- RESHAPE_BLOCK_SCALED ----------------------------------------------------------------


@recipe(RESHAPE)
def reshape_block_scaled(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    lo, hi = rc.rank_range("input")
    olo, ohi = rc.rank_range("output")
    if not scaled(rc):
        shape1 = draw(shapes(lo, hi, rc.budget, label="input shape"))
        new = _factored(draw, math.prod(shape1), olo, ohi, "new_value_shape")
        values = rc.values(draw, dt, shape1, label="input")
        return rc.spec_of(
            [TensorDraw("input_values", shape1, dt, values), shape_tensor("new_value_shape", new)],
            [TensorDraw("output_values", new, dt)],
            attributes={"block_size": block_size_name(rc, 1)},
        )
    scale_t = rc.dtype("scale_t")
    # Rank 0 is an ERROR_IF with scales: a rank-0 target draws rank 1.
    lo, hi, olo, ohi = max(lo, 1), max(hi, 1), max(olo, 1), max(ohi, 1)
    if rc.force_max_rank:  # a level case: every dimension of the scales 2
        blocks = (2,) * hi
    else:
        least = max(_edge_blocks(rc, dt), -(-rc.budget.min_elements // BS))
        room = Budget(
            max_elements=max(least, rc.budget.max_elements // BS),
            max_dim=rc.budget.max_dim,
            min_elements=least,
            min_dim=rc.budget.min_dim,
        )
        blocks = draw(shapes(lo, hi, room, label="input scales shape"))
    new_blocks = _factored(draw, math.prod(blocks), olo, ohi, "new_value_shape")
    shape1, new = _blocked(blocks), _blocked(new_blocks)
    return rc.spec_of(
        [
            TensorDraw("input_values", shape1, dt, value_codes(draw, rc, dt, shape1, "input")),
            TensorDraw("input_scales", blocks, scale_t, scale_codes(draw, rc, blocks, "scales")),
            shape_tensor("new_value_shape", new),
        ],
        [TensorDraw("output_values", new, dt), TensorDraw("output_scales", new_blocks, scale_t)],
        attributes={"block_size": block_size_name(rc, BS)},
    )


def _list_member(spec: CaseSpec, name: str, like: str) -> TensorDraw:
    """A copy of tensor ``like`` named ``name``, for a list one member too long."""
    return replace(spec.tensor(like), name=name)


@breaks(RESHAPE, clause=bsl.RESHAPE_LEN_CLAUSE)
def reshape_list_length(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """An input list of three (the scales twice) or, for values alone, of none: a
    second member there would bind a scale type no mode of the values' type has."""
    out = broken(spec, bsl.RESHAPE_LEN_CLAUSE)
    if scaled(rc):
        out.inputs.insert(2, _list_member(spec, "input_extra", "input_scales"))
    else:
        out.inputs = [t for t in out.inputs if t.name != "input_values"]
    return out


@breaks(RESHAPE, clause=bsl.RESHAPE_OUT_LEN_CLAUSE, applies=scaled)
def reshape_output_length(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """Values and scales in, the values alone out."""
    out = broken(spec, bsl.RESHAPE_OUT_LEN_CLAUSE)
    out.outputs = [t for t in out.outputs if t.name != "output_scales"]
    return out


@breaks(RESHAPE, clause=bsl.RESHAPE_ONE_BLOCK_CLAUSE, applies=_unscaled)
def reshape_one_block_size(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """Values alone with block_size BLOCK_SIZE_32."""
    out = broken(spec, bsl.RESHAPE_ONE_BLOCK_CLAUSE)
    out.attributes["block_size"] = block_size_name(rc, BS)
    return out


@breaks(RESHAPE, clause=bsl.RESHAPE_TWO_BLOCK_CLAUSE, applies=scaled)
def reshape_two_block_size(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """Values and scales with block_size BLOCK_SIZE_1."""
    out = broken(spec, bsl.RESHAPE_TWO_BLOCK_CLAUSE)
    out.attributes["block_size"] = block_size_name(rc, 1)
    return out


def _new_shape(spec: CaseSpec) -> list[int]:
    v = spec.tensor("new_value_shape").values
    assert v is not None
    return [int(x) for x in v.reshape(-1)]


def _set_new_shape(spec: CaseSpec, new: list[int], scales: tuple[int, ...] | None) -> None:
    """``new_value_shape`` and the output shapes that follow from it."""
    spec.set_shape_input("new_value_shape", new)
    spec.replace_tensor("output_values", shape=tuple(new))
    if scales is not None:
        spec.replace_tensor("output_scales", shape=scales)


@breaks(RESHAPE, clause=bsl.RESHAPE_SIZE_CLAUSE)
def reshape_value_count(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A new shape with one block (or, for values alone, one value) more or fewer in a
    drawn dimension; a rank-0 new shape becomes [2]."""
    out = broken(spec, bsl.RESHAPE_SIZE_CLAUSE)
    new = _new_shape(spec)
    if not new:
        new = [2]
    else:
        axis = draw(st.integers(0, len(new) - 1), label="dimension made wrong")
        step = BS if scaled(rc) and axis == len(new) - 1 else 1
        fewer = new[axis] > step and draw(st.booleans(), label="fewer")
        new[axis] += -step if fewer else step
    scales = bsl.new_scale_shape(new, BS) if scaled(rc) else None
    _set_new_shape(out, new, scales)
    return out


@breaks(RESHAPE, clause=bsl.RESHAPE_RANK0_CLAUSE, applies=scaled)
def reshape_rank_0(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """One value of rank 0 reshaped to [1] (the counts agree, so the rank rule is the
    first to fail); its scale of rank 0 too."""
    out = broken(spec, bsl.RESHAPE_RANK0_CLAUSE)
    out.reshape_tensor("input_values", ())
    out.reshape_tensor("input_scales", ())
    _set_new_shape(out, [1], (1,))
    return out


@breaks(RESHAPE, clause=bsl.RESHAPE_SCALE_RANK_CLAUSE, applies=scaled)
def reshape_scale_rank(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """The input scales one rank more (a leading 1, so that the innermost still
    matches) or, at the top rank, one fewer."""
    out = broken(spec, bsl.RESHAPE_SCALE_RANK_CLAUSE)
    shape = spec.tensor("input_scales").shape
    top = len(shape) >= rc.level["MAX_RANK"]
    out.reshape_tensor("input_scales", shape[1:] if top else (1, *shape))
    return out


def _off_block_pair(spec: CaseSpec) -> tuple[int, ...]:
    """The values' count as [count / 16, 16]: the innermost 16 is no multiple of 32."""
    return (math.prod(spec.tensor("input_values").shape) // (BS // 2), BS // 2)


@breaks(RESHAPE, clause=bsl.RESHAPE_IN_BLOCK_CLAUSE, applies=scaled)
def reshape_input_off_block(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """The input values as [S / 16, 16] (the same count), their scales of rank 2."""
    out = broken(spec, bsl.RESHAPE_IN_BLOCK_CLAUSE)
    scales = math.prod(spec.tensor("input_scales").shape)
    out.reshape_tensor("input_values", _off_block_pair(spec))
    out.reshape_tensor("input_scales", (1, scales))
    return out


@breaks(RESHAPE, clause=bsl.RESHAPE_NEW_BLOCK_CLAUSE, applies=scaled)
def reshape_new_off_block(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A new shape [S / 16, 16]: the count kept, the innermost no multiple of 32."""
    out = broken(spec, bsl.RESHAPE_NEW_BLOCK_CLAUSE)
    new = list(_off_block_pair(spec))
    _set_new_shape(out, new, (new[0], 1))
    return out


@breaks(RESHAPE, clause=bsl.RESHAPE_SCALE_LAST_CLAUSE, applies=scaled)
def reshape_scale_innermost(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """The input scales' innermost dimension one more or one fewer than the values'
    block count."""
    out = broken(spec, bsl.RESHAPE_SCALE_LAST_CLAUSE)
    *lead, last = spec.tensor("input_scales").shape
    fewer = last > 1 and draw(st.booleans(), label="one scale fewer")
    out.reshape_tensor("input_scales", (*lead, last - 1 if fewer else last + 1))
    return out


@breaks(RESHAPE, clause=bsl.RESHAPE_SCALE_SIZE_CLAUSE, applies=scaled)
def reshape_scale_count(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """The input scales one row longer in an outer dimension (their innermost right):
    more scales than the new shape has blocks.  Rank-1 values become [1, C] first."""
    out = broken(spec, bsl.RESHAPE_SCALE_SIZE_CLAUSE)
    values = spec.tensor("input_values").shape
    scales = spec.tensor("input_scales").shape
    if len(values) < 2:
        values, scales = (1, *values), (1, *scales)
        out.reshape_tensor("input_values", values)
    axis = draw(st.integers(0, len(scales) - 2), label="scale dimension made longer")
    grown = list(scales)
    grown[axis] += 1
    out.reshape_tensor("input_scales", tuple(grown))
    return out


@breaks(RESHAPE, clause=OUTPUTS_CLAUSE)
def reshape_output_shape(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """An output member of another shape than the reshape writes: the input's shape
    kept (the reshape not applied), or a dimension one more (rank 0: [1])."""
    out = broken(spec, OUTPUTS_CLAUSE)
    name = draw(st.sampled_from([t.name for t in spec.outputs]), label="output made wrong")
    shape = spec.tensor(name).shape
    source = spec.tensor(name.replace("output", "input")).shape
    if source != shape and draw(st.booleans(), label="input shape kept"):
        wrong = source
    elif not shape:
        wrong = (1,)
    else:
        axis = draw(st.integers(0, len(shape) - 1), label="dimension made wrong")
        wrong = tuple(d + (i == axis) for i, d in enumerate(shape))
    out.replace_tensor(name, shape=wrong)
    return out


@breaks(RESHAPE, clause=TYPES_CLAUSE)
def reshape_member_type(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """An output member of another type than its input's (no mode binds one type
    variable twice), or scales of fp16 (no mode's scale_t)."""
    out = broken(spec, TYPES_CLAUSE)
    choices = ["output_values", *(["input_scales"] if scaled(rc) else [])]
    name = draw(st.sampled_from(choices), label="member retyped")
    if name == "input_scales":
        out.retype_tensor(name, dtypes.FP16)
    else:
        dt = spec.tensor(name).dtype
        out.retype_tensor(name, dtypes.I16 if dt is not dtypes.I16 else dtypes.I32)
    return out


# -- ROW_GATHER_BLOCK_SCALED -------------------------------------------------------------


def _wide_case(draw: st.DrawFn, rc: RecipeContext, dt: DType) -> CaseSpec:
    """Values alone, K past 2**16 (N = C = 1): windows starting at both ends, at 2**15,
    just below 2**16 (crossing it) and at 2**16."""
    row_count = draw(st.integers(1, 4), label="row_count")
    last = WIDE_K - row_count
    width = WIDE_W // row_count
    rng = index_rng(draw)
    fixed = np.array([0, 1 << 15, (1 << 16) - row_count + 1, (1 << 16) - 1, 1 << 16, last])
    fixed = np.unique(np.clip(fixed, 0, last))
    rest = rng.integers(0, last + 1, size=max(0, width - fixed.size))
    starts = rng.permutation(np.concatenate([fixed, rest])[:width]).reshape(1, -1)
    values = rc.values(draw, dt, (1, WIDE_K, 1), label="values")
    return rc.spec_of(
        [
            TensorDraw("values_values", (1, WIDE_K, 1), dt, values),
            indices_tensor(rc, starts),
            row_count_tensor(row_count),
        ],
        [TensorDraw("output_values", (1, width * row_count, 1), dt)],
        attributes={"block_size": block_size_name(rc, 1)},
    )


@recipe(ROW_GATHER)
def row_gather_block_scaled(draw: st.DrawFn, rc: RecipeContext) -> CaseSpec:
    dt = rc.dtype("in_out_t")
    with_scales = scaled(rc)
    if wide(rc) and not with_scales:
        return _wide_case(draw, rc, dt)
    unit = BS if with_scales else 1  # C counted in blocks where it is blocked
    # A quarter of the budget for the values leaves the output room for several windows
    # per batch (a large job's values take the whole of it).
    room = rc.budget.max_elements if rc.target == "large" else max(1, rc.budget.max_elements // 4)
    least = max(_edge_blocks(rc, dt) if with_scales else 1, -(-rc.budget.min_elements // unit))
    budget = Budget(
        max_elements=max(least, room // unit), max_dim=rc.budget.max_dim, min_elements=least
    )
    n, k, cb = draw(shapes(3, 3, budget, label="values [N,K,C]"))
    c = cb * unit
    # 1 (GATHER's case) a quarter of the time: windows of several rows are the point.
    kind = draw(st.sampled_from(["one", "few", "few", "any"]), label="row_count kind")
    row_count = 1
    if kind == "few":
        row_count = draw(st.integers(min(2, k), min(4, k)), label="row_count")
    elif kind == "any":
        row_count = draw(st.integers(1, k), label="row_count")
    # W = 1 always fits (n * k * c is in the budget, row_count <= k); mostly above 1.
    w_max = max(
        1,
        min(rc.budget.max_dim // row_count, rc.budget.max_elements // (n * c * row_count)),
    )
    several = w_max > 1 and draw(st.integers(0, 3), label="W above 1") > 0
    w = draw(st.integers(2, w_max), label="W") if several else 1
    rng = index_rng(draw)
    last = k - row_count  # the last start whose rows all lie in the tensor
    indices = rng.integers(0, last + 1, size=(n, w))
    ends = draw(st.sampled_from(["none", "first", "last", "both"]), label="indices: ends")
    if ends in ("first", "both"):
        indices[:, 0] = 0
    if ends in ("last", "both"):
        indices[:, -1] = last
    rows = w * row_count
    if not with_scales:
        values = rc.values(draw, dt, (n, k, c), label="values")
        members = [TensorDraw("values_values", (n, k, c), dt, values)]
        outputs = [TensorDraw("output_values", (n, rows, c), dt)]
    else:
        scale_t = rc.dtype("scale_t")
        data = value_codes(draw, rc, dt, (n, k, c), "values")
        scales = scale_codes(draw, rc, (n, k, cb), "scales")
        members = [
            TensorDraw("values_values", (n, k, c), dt, data),
            TensorDraw("values_scales", (n, k, cb), scale_t, scales),
        ]
        outputs = [
            TensorDraw("output_values", (n, rows, c), dt),
            TensorDraw("output_scales", (n, rows, cb), scale_t),
        ]
    return rc.spec_of(
        [*members, indices_tensor(rc, indices), row_count_tensor(row_count)],
        outputs,
        attributes={"block_size": block_size_name(rc, unit)},
    )


def _row_count(spec: CaseSpec) -> int:
    return int(np.asarray(spec.tensor("row_count").values).reshape(-1)[0])


def _with_channels(
    draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec, channels: int, blocks: int | None
) -> None:
    """Values (and output values) of ``channels`` channels, drawn again; the scales
    (and output scales) of ``blocks`` where given."""
    n, k, _ = spec.tensor("values_values").shape
    dt = spec.tensor("values_values").dtype
    shape = (n, k, channels)
    data = value_codes(draw, rc, dt, shape, "values") if scaled(rc) else rc.values(draw, dt, shape)
    spec.replace_tensor("values_values", shape=shape, values=data)
    n_out, rows, _ = spec.tensor("output_values").shape
    spec.replace_tensor("output_values", shape=(n_out, rows, channels))
    if blocks is not None:
        spec.reshape_tensor("values_scales", (n, k, blocks))
        spec.replace_tensor("output_scales", shape=(n_out, rows, blocks))


@breaks(ROW_GATHER, clause=bsl.GATHER_C_CLAUSE, applies=scaled)
def gather_channels_off_block(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """C not a multiple of the block size (the scales keep C / 32 rounded up)."""
    out = broken(spec, bsl.GATHER_C_CLAUSE)
    c = spec.tensor("values_values").shape[2] + draw(st.integers(1, BS - 1), label="C off a block")
    _with_channels(draw, rc, out, c, -(-c // BS))
    return out


@breaks(ROW_GATHER, clause=bsl.GATHER_LEN_CLAUSE)
def gather_list_length(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A values list of three (the scales twice) or, for values alone, of none."""
    out = broken(spec, bsl.GATHER_LEN_CLAUSE)
    if scaled(rc):
        out.inputs.insert(2, _list_member(spec, "values_extra", "values_scales"))
    else:
        out.inputs = [t for t in out.inputs if t.name != "values_values"]
    return out


@breaks(ROW_GATHER, clause=bsl.GATHER_ONE_BLOCK_CLAUSE, applies=_unscaled)
def gather_one_block_size(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """Values alone with block_size BLOCK_SIZE_32, C made a multiple of 32 (so that the
    C rule, checked first, holds)."""
    out = broken(spec, bsl.GATHER_ONE_BLOCK_CLAUSE)
    out.attributes["block_size"] = block_size_name(rc, BS)
    c = spec.tensor("values_values").shape[2]
    if c % BS:
        _with_channels(draw, rc, out, BS * draw(st.integers(1, 2), label="C blocks"), None)
    return out


@breaks(ROW_GATHER, clause=bsl.GATHER_TWO_BLOCK_CLAUSE, applies=scaled)
def gather_two_block_size(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """Values and scales with block_size BLOCK_SIZE_1."""
    out = broken(spec, bsl.GATHER_TWO_BLOCK_CLAUSE)
    out.attributes["block_size"] = block_size_name(rc, 1)
    return out


@breaks(ROW_GATHER, clause=ROW_COUNT_CLAUSE)
def gather_row_count_below_one(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """row_count 0, a small negative or i32's minimum (checked before the output shapes
    that need it)."""
    out = broken(spec, ROW_COUNT_CLAUSE)
    bad = draw(
        st.one_of(st.sampled_from([0, -1, I32_MIN]), st.integers(I32_MIN, 0)), label="row_count"
    )
    out.replace_tensor("row_count", values=np.array([bad], dtype=np.int32))
    return out


@breaks(ROW_GATHER, clause=INPUTS_CLAUSE)
def gather_input_shapes(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """A values member of rank 4 (a leading 1), indices with another N, row_count of
    two values, or scales one block or one row longer than [N,K,C/block_size]."""
    out = broken(spec, INPUTS_CLAUSE)
    which = ["rank", "indices", "row_count", *(["scales"] if scaled(rc) else [])]
    how = draw(st.sampled_from(which), label="input made wrong")
    if how == "rank":
        name = draw(st.sampled_from([t.name for t in spec.inputs[:-2]]), label="member")
        out.reshape_tensor(name, (1, *spec.tensor(name).shape))
    elif how == "indices":
        n, w = spec.tensor("indices").shape
        out.reshape_tensor("indices", (n + 1, w))
    elif how == "row_count":
        out.reshape_tensor("row_count", (2,))
    else:
        n, k, cb = spec.tensor("values_scales").shape
        longer = draw(st.sampled_from(["K", "C"]), label="scales made longer")
        out.reshape_tensor("values_scales", (n, k + 1, cb) if longer == "K" else (n, k, cb + 1))
    return out


@breaks(ROW_GATHER, clause=OUTPUTS_CLAUSE)
def gather_output_shapes(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """An output member whose rows are W, not W * row_count (row_count ignored), or one
    more; another C; a member of rank 2; or, with scales, the scales left out."""
    out = broken(spec, OUTPUTS_CLAUSE)
    names = [t.name for t in spec.outputs]
    how = draw(
        st.sampled_from(["W", "+1", "C", "rank", *(["dropped"] if scaled(rc) else [])]),
        label="output made wrong",
    )
    name = draw(st.sampled_from(names), label="output member")
    n, rows, c = spec.tensor(name).shape
    row_count = _row_count(spec)
    if how == "dropped":
        out.outputs = [t for t in out.outputs if t.name != "output_scales"]
    elif how == "rank":
        out.replace_tensor(name, shape=(n * rows, c))
    elif how == "C":
        out.replace_tensor(name, shape=(n, rows, c + 1))
    elif how == "W" and row_count > 1:
        out.replace_tensor(name, shape=(n, rows // row_count, c))
    else:
        out.replace_tensor(name, shape=(n, rows + 1, c))
    return out


@breaks(ROW_GATHER, clause=TYPES_CLAUSE, applies=scaled)
def gather_member_type(draw: st.DrawFn, rc: RecipeContext, spec: CaseSpec) -> CaseSpec:
    """The scales of fp16 (no mode's scale_t), in or out."""
    out = broken(spec, TYPES_CLAUSE)
    name = draw(st.sampled_from(["values_scales", "output_scales"]), label="member retyped")
    out.retype_tensor(name, dtypes.FP16)
    return out

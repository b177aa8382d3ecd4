"""What the dot-product recipes share: the Appendix A data set a case takes, how many
dot products it aims for and how long they are, and the attribute targets
(local_bound, zero points) a job may force.

The dot product accuracy rule only binds a data set with at least MIN_DOT_PRODUCTS
outputs (Appendix A, and the introduction's S = -1 sets), so every floating-point
draw aims for that many wherever the element budget can hold them; integer modes are
exact and may be as small as one output.  The number of outputs and the kernel size
KS are drawn log-uniformly, so a pack holds short and long dot products, few and
many outputs; a "ks:long" job draws KS from the hundreds to the thousands.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from conformance.compliance_descriptor import DATA_SETS as _SETS
from conformance.dtypes import DType
from reference.compliance import MIN_DOT_PRODUCTS
from strategies.recipes import RecipeContext
from strategies.recipes.common import aimed
from strategies.values import special_values

DATA_SETS = tuple(sorted(_SETS))  # -1: free values with special values, else Appendix A's S
KS_LONG = "ks:long"
KS_LONG_LOW = 256  # a "ks:long" job's KS: from the hundreds ...
KS_LONG_HIGH = 4096  # ... to the thousands, as far as the budget allows
OUTPUTS_HIGH = 16384  # the most outputs an ordinary draw aims for (16 bytes each in a pack)
LARGE_OUTPUTS = 1024  # a "large" job's least number of outputs
_DATA_SET = st.sampled_from(DATA_SETS)
_SEED = st.integers(0, 2**32 - 1)
_GOLDEN = 0x9E3779B1  # Fibonacci hashing: consecutive seeds spread over [0, 1)


def unit(draw: st.DrawFn, label: str) -> float:
    """A number in [0, 1), uniform however Hypothesis favours small integers (it
    draws 0, 1, 2 ... far more often than uniformly); seed 0, where shrinking goes,
    gives 0, the low end."""
    return ((draw(_SEED, label=label) * _GOLDEN) & 0xFFFFFFFF) / 2**32


def log_uniform(draw: st.DrawFn, low: int, high: int, label: str) -> int:
    """An integer in [low, high], uniform in log scale (as many draws below 10 as
    between 100 and 1000)."""
    low = max(1, low)
    if high <= low:
        return low
    return min(high, max(low, round(low * (high / low) ** unit(draw, label))))


def data_set(draw: st.DrawFn, rc: RecipeContext, dt: DType) -> int:
    """The Appendix A set asked for, else one drawn; -1 for integer modes (the data
    sets are floating-point).  An "edge" job without a set takes free values: its
    special values come from rc.values."""
    if not dt.is_float:
        return -1
    if rc.data_set is not None:
        return rc.data_set
    if rc.target == "edge":
        return -1
    return draw(_DATA_SET, label="data set")


@dataclass(frozen=True)
class DotAim:
    """What a dot-product case aims for; the recipe's geometry meets ``outputs`` and
    ``inputs`` where the budget can, and comes near the goals."""

    outputs: int  # at least this many dot products (outputs)
    outputs_goal: int  # about this many
    outputs_cap: int  # at most this many (at least twice ``outputs``, within the budget)
    ks_low: int  # KS within [ks_low, ks_high] where the geometry allows
    ks_goal: int
    inputs: int  # at least this many input elements in total ("large" jobs)


def dot_aim(draw: st.DrawFn, rc: RecipeContext, is_float: bool, ks_cap: int) -> DotAim:
    """Draw the aims of one case; ``ks_cap`` is the longest KS the operator's geometry
    can hold with ``least_outputs(rc, is_float)`` outputs in the budget."""
    budget = rc.budget.max_elements
    least = least_outputs(rc, is_float)
    high = min(budget, max(2 * least, OUTPUTS_HIGH))
    goal = log_uniform(draw, least, high, "outputs aimed at")
    inputs = 0
    if rc.target == "large":
        # min_elements is per tensor (as strategies.shapes reads it): the inputs
        # together aim at that times their number.  As many outputs as an ordinary
        # draw at most, unless the inputs need more (pooling reads about one input per
        # output).
        goal = high
        tensors = sum(a.type == "tensor_t" for a in rc.op_spec.inputs)
        inputs = min(rc.budget.min_elements, budget) * max(1, tensors)
        high = min(budget, max(high, 2 * inputs))
    # Even ordinary draws go up to KS_LONG_HIGH: the pack holds every length class.
    # Large cases take long dot products too: their weights hold a share of the inputs.
    ks_high = max(1, min(ks_cap, KS_LONG_HIGH))
    ks_low = min(KS_LONG_LOW, ks_high) if rc.target in (KS_LONG, "large") else 1
    ks_goal = log_uniform(draw, ks_low, ks_high, "KS aimed at")
    return DotAim(least, goal, high, ks_low, ks_goal, inputs)


def least_outputs(rc: RecipeContext, is_float: bool) -> int:
    """MIN_DOT_PRODUCTS for floating-point modes (1,024 for "large" jobs) where the
    budget holds twice that (so that shapes have room to vary), else what it holds;
    1 for integer modes (exact: any size says something)."""
    need = MIN_DOT_PRODUCTS if is_float else 1
    if rc.target == "large":
        need = max(need, LARGE_OUTPUTS)
    return max(1, min(need, rc.budget.max_elements // 2))


def near(draw: st.DrawFn, low: int, high: int, goal: float, label: str) -> int:
    """An integer in [low, high], mostly within a factor of two of ``goal``, now and
    then either end (the extremes of what the budget allows)."""
    if high <= low:
        return low
    u = unit(draw, label)
    if u < 1 / 16:
        return low
    if u < 2 / 16:
        return high
    a = min(high, max(low, math.floor(goal / 2)))
    b = min(high, max(low, math.ceil(goal * 2)))
    return log_uniform(draw, a, b, f"{label}: near") if a < b else a


def sizes_with_product(
    draw: st.DrawFn, caps: Sequence[int], low: int, high: int, goal: float, label: str
) -> list[int]:
    """One size per cap (1 <= size <= cap) whose product is in [low, high] and near
    ``goal``.  With ``high >= 2 * low`` and ``prod(caps) >= low`` such sizes always
    exist: every size but the last keeps the product so far within ``high - low``
    (so that some multiple of it lies in [low, high]) and the sizes after it able to
    reach ``low``; the last one closes the range.  Otherwise the product is kept at
    most ``high`` and as close to ``low`` as the caps allow."""
    sizes: list[int] = []
    prefix = 1
    # The last size that can be above 1 closes the range; the ones after it are 1.
    last = max((j for j, c in enumerate(caps) if c > 1), default=len(caps) - 1)
    for j, cap in enumerate(caps):
        rest = math.prod(caps[j + 1 :])
        lo = min(cap, max(1, -(-low // (prefix * rest))))
        if j >= last:
            hi = min(cap, max(1, high // prefix))
        else:
            hi = min(cap, max(1, (high - low) // prefix))
        lo = min(lo, hi)
        share = max(1.0, goal / prefix) ** (1.0 / (len(caps) - j))
        d = near(draw, lo, hi, share, f"{label}: size {j}")
        sizes.append(d)
        prefix *= d
    return sizes


# -- attribute targets ------------------------------------------------------------------


_THREE = st.integers(0, 2)


def local_bound(draw: st.DrawFn, rc: RecipeContext) -> bool | None:
    """local_bound as asked by an "attr:local_bound=..." target, else absent (the
    default, false), false or true."""
    target = aimed(rc, "local_bound")
    if target is not None:
        return target == "true"
    return (None, False, True)[draw(_THREE, label="local_bound")]


def boolean_attribute(draw: st.DrawFn, rc: RecipeContext, name: str) -> bool:
    target = aimed(rc, name)
    if target is not None:
        return target == "true"
    return draw(st.booleans(), label=name)


# Zero points of types that may have one: either extreme, 0, or any other value.
_ZP_KIND = st.integers(0, 7)


def zero_point(draw: st.DrawFn, rc: RecipeContext, dt: DType, name: str) -> int | float:
    """The zero point attribute ``name`` of an operand of type ``dt``.  Only 8-bit
    integers may have a non-zero one (ERROR_IF otherwise): for them an
    "attr:NAME=zero|nonzero|min|max" target is honoured, and ordinary draws take 0,
    the type's extremes and other values about equally often."""
    if dt.is_float:
        return 0.0
    if not (dt.is_int and dt.bits == 8):
        return 0
    lo, hi = dt.int_range
    target = aimed(rc, name)
    kind = {"zero": 0, "min": 1, "max": 2, "nonzero": 3}.get(target or "")
    if kind is None:
        kind = min(3, draw(_ZP_KIND, label=f"{name}: kind"))
    if kind == 0:
        return 0
    if kind == 1:
        return lo
    if kind == 2:
        return hi
    zp = draw(st.integers(lo + 1, hi - 1), label=name)
    return zp if zp != 0 else 1


# -- special values ---------------------------------------------------------------------


def place_specials(
    draw: st.DrawFn, dt: DType, values: np.ndarray, label: str, *, peak_safe: bool = False
) -> np.ndarray:
    """``values`` with every special value of ``dt`` (+-0, +-inf, NaN, subnormals,
    extremes) at drawn positions, one each: the free-values set S = -1 carries them by
    construction, not by the luck of the value draw.  ``peak_safe`` keeps to the ones
    that cannot raise the tensor's largest magnitude above 1 (NaN, zeros,
    subnormals, the smallest normals), for a tensor whose peak sets every bound."""
    specials = special_values(dt)
    if peak_safe:
        specials = [v for v in specials if math.isnan(v) or abs(v) < 1]
    if values.size < 2 * len(specials):
        return values
    seed = draw(st.integers(0, 2**32 - 1), label=f"{label}: special positions")
    rng = np.random.default_rng(seed)
    positions = rng.choice(values.size, size=len(specials), replace=False)
    out = values.copy().reshape(-1)
    with np.errstate(over="ignore", invalid="ignore"):
        out[positions] = np.asarray(specials, dtype=np.float64).astype(dt.storage)
    return out.reshape(values.shape)

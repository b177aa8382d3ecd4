"""Tensor shapes within a rank range and an element budget."""

from __future__ import annotations

from dataclasses import dataclass, replace

from hypothesis import strategies as st

DEFAULT_MAX_ELEMENTS = 4096


@dataclass(frozen=True)
class Budget:
    """How large a generated tensor may be; keeps packs and runs small by default."""

    max_elements: int = DEFAULT_MAX_ELEMENTS
    max_dim: int = 64  # no single dimension beyond this unless a recipe needs it
    # Large-tensor jobs: shapes() reaches at least this many elements where the rank
    # range allows it (tiling and remainder paths only show on real sizes).
    min_elements: int = 1
    # Rank jobs: every dimension at least this where the rank's shape still fits, so a
    # rank-6 tensor is not [1, 1, 1, 1, 1, 1].
    min_dim: int = 1
    # A capability manifest's limits (conformance.capabilities): the rank range every
    # rank_range() keeps to, and the largest batch N; shapes() holds a rank-4 shape's
    # first dimension (an NHWC activation's N) to it.
    min_rank: int = 0
    max_rank: int | None = None
    max_batch: int | None = None
    # The manifest's attribute restrictions: (attribute, the values allowed); recipes
    # that can draw within one ask RecipeContext.allowed().
    attributes: tuple[tuple[str, tuple[object, ...]], ...] = ()


@st.composite
def shapes(
    draw: st.DrawFn,
    rank_min: int,
    rank_max: int,
    budget: Budget,
    *,
    min_dim: int = 1,
    label: str = "shape",
) -> tuple[int, ...]:
    """A shape of rank in [rank_min, rank_max] whose element count fits the budget,
    and reaches ``budget.min_elements`` where some rank in the range can hold it."""
    need = min(budget.min_elements, budget.max_elements)
    if budget.min_dim > min_dim:
        floor = budget.min_dim
        while floor > min_dim and floor**rank_max > budget.max_elements:
            floor -= 1
        min_dim = floor
    if need > 1:  # the smallest rank whose largest shape can hold ``need`` elements
        low = rank_min
        while low < rank_max and budget.max_dim**low < need:
            low += 1
        rank_min = low
    rank = draw(st.integers(rank_min, rank_max), label=f"{label}: rank")
    dims: list[int] = []
    if rank == 4 and budget.max_batch is not None:  # NHWC: N is the manifest's batch
        n = draw(st.integers(1, budget.max_batch), label=f"{label}: batch")
        rest = replace(budget, max_elements=budget.max_elements // n, min_elements=-(-need // n))
        return (n, *draw(shapes(3, 3, rest, min_dim=min_dim, label=label)))
    room = budget.max_elements
    for i in range(rank):
        left = rank - i - 1
        # Spread the budget over the dimensions left (about the (rank-i)-th root of what
        # remains, doubled), so that high ranks still get dimensions above 1.
        share = round(room ** (1.0 / (rank - i))) * 2
        top = max(min_dim, min(budget.max_dim, share, room // (min_dim**left)))
        low_d = min_dim
        if need > 1:  # enough here that the dimensions left can still reach ``need``
            low_d = max(min_dim, min(budget.max_dim, room, -(-need // budget.max_dim**left)))
            top = max(top, min(low_d * 2, budget.max_dim, room))
        d = draw(st.integers(low_d, max(low_d, top)), label=f"{label}: dim {i}")
        dims.append(d)
        room = max(1, room // d)
        need = -(-need // d)
    return tuple(dims)


@st.composite
def broadcast_shapes(
    draw: st.DrawFn,
    out_shape: tuple[int, ...],
    count: int,
    *,
    label: str = "broadcast",
    broadcaster: int | None = None,
) -> list[tuple[int, ...]]:
    """``count`` input shapes that TOSA broadcasts to exactly ``out_shape``: same rank,
    each dimension equal or 1, and every dimension above 1 kept by at least one.  Input
    ``broadcaster`` (when given, and there are two inputs or more) is 1 along the first
    dimension above 1, which another input keeps."""
    result = [list(out_shape) for _ in range(count)]
    forced = next((i for i, d in enumerate(out_shape) if d > 1), None)
    if broadcaster is not None and count > 1 and forced is not None:
        result[broadcaster][forced] = 1
    for i, d in enumerate(out_shape):
        if d == 1 or (i == forced and broadcaster is not None and count > 1):
            continue
        keeper = draw(st.integers(0, count - 1), label=f"{label}: dim {i} kept by")
        for k in range(count):
            if k != keeper and draw(st.booleans(), label=f"{label}: input {k} dim {i} is 1"):
                result[k][i] = 1
    return [tuple(r) for r in result]

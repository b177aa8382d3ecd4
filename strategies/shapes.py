"""Tensor shapes within a rank range and an element budget."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

DEFAULT_MAX_ELEMENTS = 4096


@dataclass(frozen=True)
class Budget:
    """How large a generated tensor may be; keeps packs and runs small by default."""

    max_elements: int = DEFAULT_MAX_ELEMENTS
    max_dim: int = 64  # no single dimension beyond this unless a recipe needs it


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
    """A shape of rank in [rank_min, rank_max] whose element count fits the budget."""
    rank = draw(st.integers(rank_min, rank_max), label=f"{label}: rank")
    dims: list[int] = []
    room = budget.max_elements
    for i in range(rank):
        # Spread the budget over the dimensions left (about the (rank-i)-th root of what
        # remains, doubled), so that high ranks still get dimensions above 1.
        share = round(room ** (1.0 / (rank - i))) * 2
        top = max(min_dim, min(budget.max_dim, share, room // (min_dim ** (rank - i - 1))))
        d = draw(st.integers(min_dim, top), label=f"{label}: dim {i}")
        dims.append(d)
        room = max(1, room // d)
    return tuple(dims)


@st.composite
def broadcast_shapes(
    draw: st.DrawFn, out_shape: tuple[int, ...], count: int, *, label: str = "broadcast"
) -> list[tuple[int, ...]]:
    """``count`` input shapes that TOSA broadcasts to exactly ``out_shape``: same rank,
    each dimension equal or 1, and every dimension above 1 kept by at least one."""
    result = [list(out_shape) for _ in range(count)]
    for i, d in enumerate(out_shape):
        if d == 1:
            continue
        keeper = draw(st.integers(0, count - 1), label=f"{label}: dim {i} kept by")
        for k in range(count):
            if k != keeper and draw(st.booleans(), label=f"{label}: input {k} dim {i} is 1"):
                result[k][i] = 1
    return [tuple(r) for r in result]

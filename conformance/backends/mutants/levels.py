"""Mutants of a backend that supports less than a level requires (MAX_KERNEL,
MAX_STRIDE, MAX_SCALE, MAX_RANK): they refuse valid graphs above half the limit (or
rank 5 and 6).  The operators each one affects are those tosa.xml gives that level
limit, so they span groups."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from conformance.backends.mutants import (
    Result,
    Wrapper,
    mutant,
)
from conformance.spec import Spec
from reference.context import OpContext
from reference.levels import level_violations
from reference.registry import OpFunction


def limited_by(limit: str) -> Callable[[Spec], tuple[str, ...]]:
    """The operators with a level limit on ``limit`` (asked of the spec model when the
    catalogue is built)."""

    def operators(spec: Spec) -> tuple[str, ...]:
        return tuple(
            sorted(
                op.name
                for op in spec.operators.values()
                if any(lim.limit == limit for _, lim in op.level_limits())
            )
        )

    return operators


def _limit_lowered(limit: str, lowered: Callable[[int], int]) -> Wrapper:
    """A backend whose support for ``limit`` stops at ``lowered(level maximum)``: the
    level's own checks, at the lower maximum, refuse the graph before it runs."""

    def wrapper(original: OpFunction, ctx: OpContext) -> Result:
        if limit in ctx.level.maxima:
            low = lowered(ctx.level[limit])
            level = dataclasses.replace(ctx.level, maxima={**ctx.level.maxima, limit: low})
            found = [
                v
                for v in level_violations(
                    ctx.op_spec, ctx.operands, ctx.block.tensors, ctx.attrs, ctx.values, level
                )
                if f"<= {limit} (" in v
            ]
            ctx.error_if(bool(found), f"backend support: {limit} <= {low}", "; ".join(found))
        return original(ctx)

    return wrapper


for _limit, _what in (
    ("MAX_KERNEL", "kernel sizes, dilated kernels, pads and FFT sizes"),
    ("MAX_STRIDE", "strides"),
    ("MAX_SCALE", "RESIZE scale factors"),
):
    mutant(
        f"{_limit.lower().replace('_', '-')}-halved",
        limited_by(_limit),
        f"{_limit} / 2 < value <= {_limit}",
        f"the backend supports {_what} only up to half the level's {_limit}, and refuses "
        f"graphs above that",
        f"valid vectors with a value above {_limit} / 2 (at {_limit} itself)",
        effect="rejects valid graph",
        breaks=f"introduction, levels: an implementation of a level supports every value up "
        f"to its {_limit} (LEVEL_CHECK({_limit}))",
    )(_limit_lowered(_limit, lambda m: m // 2))


mutant(
    "max-rank-4",
    limited_by("MAX_RANK"),
    "rank 5 and 6",
    "tensors of rank 5 or 6 are refused (a backend built on 4-D kernels, as NNAPI's are)",
    "valid vectors of rank 5 and 6",
    effect="rejects valid graph",
    breaks="introduction, levels: 8K requires MAX_RANK = 6 (LEVEL_CHECK(rank(shape) <= MAX_RANK))",
)(_limit_lowered("MAX_RANK", lambda m: min(m, 4)))

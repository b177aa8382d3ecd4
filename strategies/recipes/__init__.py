"""Recipes: how to draw a valid case of each operator, registered by operator name.

A recipe is a function ``(draw, rc) -> CaseSpec`` that draws shapes, attributes and
values satisfying the operator's ERROR_IF clauses and keeping its REQUIREs (no
integer overflow), within the level's limits and the element budget.  Shapes and
ranks come from the spec model through :class:`RecipeContext`; what the XML cannot
say (output-size formulas, value ranges that avoid overflow) is the recipe's job.

Importing this package registers every recipe module in it.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import strategies as st

from conformance.block_tensor import is_block_scaled
from conformance.dtypes import DType
from conformance.operator_table import OperatorTable
from conformance.spec import Level, OperatorSpec, Spec, TypeSupport
from strategies.block_tensors import block_scaled_values
from strategies.case import Case, CaseSpec, TensorDraw
from strategies.shapes import Budget
from strategies.values import ValueRange, tensor_values


@dataclass(frozen=True)
class RecipeContext:
    spec: Spec
    op_spec: OperatorSpec
    mode: TypeSupport
    level: Level
    budget: Budget
    data_set: int | None = None  # None: the recipe may choose; else the Appendix A set
    # Level cases: every rank drawn through rank_range() is its upper bound (the level's
    # MAX_RANK where the argument allows it), whatever cap the recipe asks for.
    force_max_rank: bool = False
    # The coverage obligation a targeted job aims at (see strategies/obligations.py):
    # None for an ordinary draw; "edge" (every special value of each input's type,
    # placed by construction), "large" (the budget's min_elements is the aim),
    # "rank:R" (every rank drawn through rank_range() is R where the argument allows
    # it), "ties" (results exactly half-way between two output values, and just off
    # such a tie), "long-axis" (a reduced axis or GATHER/SCATTER's K past 2**16),
    # "attr:NAME=VALUE" (that attribute takes that value). A recipe that
    # cannot aim at a target draws as usual; the pack's obligation check says what
    # was met.
    target: str | None = None

    @property
    def name(self) -> str:
        return self.op_spec.name

    @property
    def target_rank(self) -> int | None:
        """The rank a ``rank:R`` target aims at, else None."""
        if self.target and self.target.startswith("rank:"):
            return int(self.target.removeprefix("rank:"))
        return None

    def batch_cap(self, hi: int) -> int:
        """``hi``, or the capability manifest's largest batch N when that is smaller."""
        cap = self.budget.max_batch
        return hi if cap is None else max(1, min(hi, cap))

    def allowed(self, attribute: str) -> tuple[object, ...] | None:
        """The values a capability manifest allows the attribute (None: any)."""
        return next((v for n, v in self.budget.attributes if n == attribute), None)

    def dtype(self, var: str) -> DType:
        return self.mode.dtype(var)

    def arg_dtype(self, arg_name: str) -> DType:
        """The element type of an argument under this mode (type variables resolved)."""
        from conformance import dtypes

        arg = self.op_spec.argument(arg_name)
        et = arg.element_type
        if arg.type in ("shape_t", "shape_list_t"):
            return dtypes.SHAPE
        if et == "mul_t":
            raise KeyError("mul_t depends on scale32: use errata.MUL_T_BY_SCALE32")
        if et in self.mode.bindings:
            return self.mode.dtype(et)
        return dtypes.dtype(et)

    def rank_range(self, arg_name: str, cap: int | None = None) -> tuple[int, int]:
        """The argument's rank bounds at the level, optionally capped (budget)."""
        r = self.op_spec.argument(arg_name).rank_range(self.level)
        if r is None:
            raise KeyError(f"{self.name} argument {arg_name} has no rank bounds")
        lo, hi = r
        # A capability manifest's rank range (Budget.min_rank/max_rank) comes first:
        # level and rank targets then aim within it.
        lo = max(lo, min(hi, self.budget.min_rank))
        if self.budget.max_rank is not None:
            hi = max(lo, min(hi, self.budget.max_rank))
        if self.force_max_rank:
            return hi, hi
        aimed = self.target_rank
        if aimed is not None and lo <= aimed <= hi:
            return aimed, aimed
        if cap is not None:
            hi = max(lo, min(hi, cap))
        return lo, hi

    def values(
        self,
        draw: st.DrawFn,
        dt: DType,
        shape: tuple[int, ...],
        r: ValueRange | None = None,
        label: str = "values",
    ) -> np.ndarray:
        if is_block_scaled(dt):  # its values (tensor() draws its scales with them)
            extremes = True if self.target == "edge" else None
            return draw(block_scaled_values(dt, shape, label=label, extremes=extremes)).values
        edge = self.edge_position(label) if self.target == "edge" else None
        span = min(3, max(1, len(self.op_spec.inputs)))
        return draw(tensor_values(dt, shape, r, label=label, edge=edge, edge_span=span))

    def edge_position(self, label: str) -> int:
        """The operand's place among the inputs (0 for a name that is not one), so
        that an edge case's inputs pair every special value with every other."""
        names = [a.name for a in self.op_spec.inputs]
        base = label.split(":")[0].strip()
        return names.index(base) if base in names else 0

    def tensor(
        self,
        draw: st.DrawFn,
        name: str,
        dt: DType,
        shape: tuple[int, ...],
        r: ValueRange | None = None,
        *,
        const: bool = False,
    ) -> TensorDraw:
        if is_block_scaled(dt):  # values and scales (strategies.block_tensors)
            edge = True if self.target == "edge" else None
            bs = draw(block_scaled_values(dt, shape, label=name, extremes=edge))
            return TensorDraw(name, shape, dt, bs.values, const, bs.scales)
        return TensorDraw(name, shape, dt, self.values(draw, dt, shape, r, name), const)

    def spec_of(self, inputs: list[TensorDraw], outputs: list[TensorDraw], **kw: Any) -> CaseSpec:
        strategy = f"recipe:{self.name}"
        return CaseSpec(self.name, self.mode.mode, inputs, outputs, strategy=strategy, **kw)


Recipe = Callable[[st.DrawFn, RecipeContext], CaseSpec | Case]
RECIPES: OperatorTable[Recipe] = OperatorTable()


def recipe(*names: str) -> Callable[[Recipe], Recipe]:
    def register(fn: Recipe) -> Recipe:
        for name in names:
            if name in RECIPES:
                raise RuntimeError(f"{name} has two recipes")
            RECIPES[name] = fn
        return fn

    return register


_loaded = False


def load_all() -> dict[str, Recipe]:
    global _loaded
    if not _loaded:
        for module in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{module.name}")
        _loaded = True
    return RECIPES

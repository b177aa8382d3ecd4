"""Strategies for valid cases of every (operator, mode) pair."""

from __future__ import annotations

from typing import cast

import numpy as np
from hypothesis import strategies as st

from conformance.dtypes import dtype
from conformance.operator_table import family
from conformance.spec import Level, Spec, TypeSupport
from strategies.case import DYNAMIC_TARGET, Case, CaseSpec, ctc_freeing
from strategies.recipes import RecipeContext, load_all
from strategies.shapes import Budget


class NoRecipe(LookupError):
    """No recipe draws cases of this operator yet."""


# The operators whose block-scaled modes (TOSA 1.1's bs32_fp8ue8m0_*_t: values with
# one scale per 32 of them, one tensor) the reference evaluates and the recipes draw:
# the ones that move elements (tensor_read_value_scale / tensor_write_value_scale).
BLOCK_SCALED_OPERATORS = family(
    frozenset(
        {"CONCAT", "CONST", "DIM", "IDENTITY", "RESHAPE", "REVERSE", "SLICE", "TILE", "TRANSPOSE"}
        | {"CONV2D", "CONV3D", "TRANSPOSE_CONV2D", "MATMUL_T"}
        | {"RESIZE", "ROW_GATHER"}
        | {"CAST"}
    )
)


def binds_block_scaled(mode: TypeSupport) -> bool:
    """Whether ``mode`` binds a block-scaled composite type (TOSA 1.1's bs32_*)."""
    return any(dtype(v).kind == "block" for k, v in mode.bindings.items() if _is_type(k, v))


def unbuildable_reason(mode: TypeSupport) -> str | None:
    """Why no vector of ``mode`` can be made whatever its recipe does, or None: a
    block-scaled mode of an operator the reference has no block-scaled form of."""
    if binds_block_scaled(mode) and mode.operator not in BLOCK_SCALED_OPERATORS:
        return (
            f"it binds a block-scaled type (bs32_*), and the reference has no block-scaled "
            f"{mode.operator} yet"
        )
    return None


def _is_type(var: str, value: str) -> bool:
    return var != "TABLE_SIZE" and value != "-"


def has_recipe(operator: str) -> bool:
    return operator in load_all()


def valid_cases(
    spec: Spec,
    operator: str,
    mode: str,
    level: Level,
    budget: Budget | None = None,
    data_set: int | None = None,
    target: str | None = None,
) -> st.SearchStrategy[Case]:
    """Cases of ``operator`` in ``mode`` that the reference should find valid.

    Recipes keep to the ERROR_IF clauses and avoid REQUIRE failures by construction;
    the generator still evaluates every case and drops any that is not valid.
    """
    recipes = load_all()
    op_spec = spec.operator(operator)
    if op_spec.name not in recipes:
        raise NoRecipe(f"no recipe draws {op_spec.name} cases yet")
    rc = RecipeContext(
        spec, op_spec, op_spec.mode(mode), level, budget or Budget(), data_set, target=target
    )
    fn = recipes[op_spec.name]
    aimed = _attribute_aim(rc)
    # The "dynamic" target: the case with its CTC inputs as graph inputs (EXT-DYNAMIC).
    variable = ctc_freeing(spec) if target == DYNAMIC_TARGET else frozenset()

    @st.composite
    def draw_case(draw: st.DrawFn) -> Case:
        # _AimedDraw answers the draws a DrawFn does (its __call__ has their signature).
        aimed_draw = draw if aimed is None else cast(st.DrawFn, _AimedDraw(draw, *aimed))
        drawn = fn(aimed_draw, rc)
        return drawn.build(spec, variable) if isinstance(drawn, CaseSpec) else drawn

    return draw_case()


def _attribute_aim(rc: RecipeContext) -> tuple[str, object] | None:
    """For an ``attr:NAME=VALUE`` target, the draw label and the value to answer it
    with: True/False for booleans, an enumeration value's name, 0 or the type's
    extreme for zero points (None: no value to force, "nonzero" is checked after)."""
    if not rc.target or not rc.target.startswith("attr:"):
        return None
    name, _, value = rc.target.removeprefix("attr:").partition("=")
    if value in ("true", "false"):
        return name, value == "true"
    if value in ("zero", "min", "max"):
        try:
            dt = rc.arg_dtype(name)
        except KeyError:
            return None
        if not dt.is_int:
            return None
        return name, {"zero": 0, "min": dt.int_range.min, "max": dt.int_range.max}[value]
    if value == "nonzero":
        return None
    return name, value


class _AimedDraw:
    """A draw function that answers the recipe's draw labelled with an attribute's
    name with the target's value, when the drawn value is of the same kind (a recipe
    that draws an index for the attribute keeps its own draw).  Every draw still runs,
    so the rest of the case is what the seed gives."""

    def __init__(self, draw: st.DrawFn, label: str, value: object) -> None:
        self.draw, self.label, self.value = draw, label, value

    def __call__(self, strategy: st.SearchStrategy[object], label: object = None) -> object:
        drawn = self.draw(strategy, label=label)
        if label != self.label:
            return drawn
        if type(self.value) is bool:
            return self.value if type(drawn) is bool else drawn
        if isinstance(self.value, int):
            ok = isinstance(drawn, int | np.integer) and type(drawn) is not bool
            return self.value if ok else drawn
        return self.value if isinstance(drawn, str) else drawn

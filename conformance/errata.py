"""The one place where tosa.xml is corrected.

Each erratum records what the XML says, what the project uses instead, and why.
Operator-level corrections are applied by :func:`apply_operator_errata` while the
spec model is built; the others are facts the rest of the project reads from here
(:data:`MUL_T_BY_SCALE32`, :data:`IMPLICIT_LEVEL_LIMITS`, :func:`same_mode`).
``tosa-conformance spec errata`` lists them; ``docs/errata.md`` explains them.

An erratum only applies when the XML still has the quirk it corrects, so a fixed
tosa.xml passed with ``--spec`` is taken as it is; :func:`applied_errata` reports
which ones fired.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from conformance.expressions import Name, Num, parse_expr

if TYPE_CHECKING:
    from conformance.spec import OperatorSpec, TypeSupport


@dataclass(frozen=True)
class Erratum:
    id: str
    operators: tuple[str, ...]
    xml_says: str
    we_use: str
    why: str
    # Rewrites one operator; returns it unchanged when the quirk is absent.
    fix: Callable[[OperatorSpec], OperatorSpec] | None = None
    # The fix is tried on every operator (a quirk of the XML's form, not of one operator).
    every_operator: bool = False


def _declare_acc_t(op: OperatorSpec) -> OperatorSpec:
    bound = any("acc_t" in m.bindings for m in op.modes)
    if bound and "acc_t" not in op.types:
        return replace(op, types=(*op.types, "acc_t"))
    return op


# TRANSPOSE_CONV2D's fp8 modes, completed as CONV2D's modes of the same input type are.
_TRANSPOSE_CONV_FP8 = {
    "fp8e4m3 with fp16 accumulate": {"weight_t": "fp8e4m3_t", "acc_t": "fp16_t"},
    "fp8e5m2": {"weight_t": "fp8e5m2_t", "acc_t": "fp16_t"},
}


def _complete_transpose_conv_fp8(op: OperatorSpec) -> OperatorSpec:
    modes = []
    for m in op.modes:
        extra = _TRANSPOSE_CONV_FP8.get(m.mode, {})
        missing = {k: v for k, v in extra.items() if k not in m.bindings}
        if missing:
            m = replace(m, bindings={**m.bindings, **missing})
        modes.append(m)
    return replace(op, modes=tuple(modes))


def _variable_types(op: OperatorSpec) -> OperatorSpec:
    if "var_t" not in op.types:  # TOSA 1.0 declares and binds in_t / out_t itself
        return op
    args = tuple(
        replace(a, element_type="var_t") if a.element_type in ("in_t", "out_t") else a
        for a in op.arguments
    )
    return replace(op, arguments=args)


def _bf16_requires_ext_bf16(op: OperatorSpec) -> OperatorSpec:
    # A mode with a bf16 type whose requirement leaves EXT-BF16 out, where its siblings
    # (the other value types of the same cast) name it.
    modes = []
    for m in op.modes:
        if "bf16_t" in m.bindings.values() and not any("EXT-BF16" in r for r in m.requirements):
            m = replace(m, requirements=tuple(r | {"EXT-BF16"} for r in m.requirements))
        modes.append(m)
    return replace(op, modes=tuple(modes)) if modes != list(op.modes) else op


def _merge_repeated_modes(op: OperatorSpec) -> OperatorSpec:
    # Same name and same types: one mode, required by any of the entries' profiles.
    merged: dict[tuple[str, tuple[tuple[str, str], ...]], TypeSupport] = {}
    for m in op.modes:
        key = (m.mode.casefold(), tuple(sorted(m.bindings.items())))
        first = merged.get(key)
        if first is None:
            merged[key] = m
            continue
        reqs = first.requirements + tuple(r for r in m.requirements if r not in first.requirements)
        merged[key] = replace(first, requirements=reqs)
    return replace(op, modes=tuple(merged.values())) if len(merged) < len(op.modes) else op


def _drop_listed_combinations(op: OperatorSpec) -> OperatorSpec:
    # A type-set combination with exactly the types of a mode listed on its own.
    listed = {tuple(sorted(m.bindings.items())) for m in op.modes if not m.family}
    modes = tuple(
        m for m in op.modes if not m.family or tuple(sorted(m.bindings.items())) not in listed
    )
    return replace(op, modes=modes) if len(modes) < len(op.modes) else op


def _name_repeated_modes(op: OperatorSpec) -> OperatorSpec:
    # Same name, other types: the first keeps the name, each later one is named by the
    # types in which it differs from the first ("signed 8 (out_t=i64_t)").
    first: dict[str, TypeSupport] = {}
    modes = []
    for m in op.modes:
        seen = first.get(m.mode.casefold())
        if seen is None:
            first[m.mode.casefold()] = m
            modes.append(m)
            continue
        differ = [k for k, v in m.bindings.items() if seen.bindings.get(k) != v]
        shown = ", ".join(f"{k}={m.bindings[k]}" for k in differ)
        modes.append(replace(m, mode=f"{m.mode} ({shown})", family=m.mode))
    return replace(op, modes=tuple(modes)) if modes != list(op.modes) else op


# ROW_GATHER_BLOCK_SCALED's list members: [N,K,C] / [N,K,C/block_size] values and
# [N,W*row_count,C] / [N,W*row_count,C/block_size] outputs, all of rank 3.
_ROW_GATHER_LISTS = ("values", "output")


def _row_gather_lists_rank_3(op: OperatorSpec) -> OperatorSpec:
    args = []
    for a in op.arguments:
        wrong = (
            a.name in _ROW_GATHER_LISTS
            and isinstance(a.rank_min, Num)
            and isinstance(a.rank_max, Num)
            and (a.rank_min.value, a.rank_max.value) == (4, 4)
        )
        args.append(replace(a, rank_min=Num(3), rank_max=Num(3)) if wrong else a)
    return replace(op, arguments=tuple(args)) if args != list(op.arguments) else op


def _max_rank_level_limit(op: OperatorSpec) -> OperatorSpec:
    # Every other operator bounds its tensors' rank with a MAX_RANK levellimit on the
    # argument whose rank runs to MAX_RANK; these give the rank range alone. (Imported
    # here: conformance.spec imports this module.)
    from conformance.spec import LevelLimit

    if any(lim.limit == "MAX_RANK" for a in op.arguments for lim in a.level_limits):
        return op
    args = list(op.arguments)
    for i, a in enumerate(args):
        if a.type == "tensor_t" and a.rank_max == Name("MAX_RANK") and a.shape.kind == "named":
            text = f"rank({a.shape.name})"
            limit = LevelLimit(parse_expr(text), text, "MAX_RANK")
            args[i] = replace(a, level_limits=(*a.level_limits, limit))
            return replace(op, arguments=tuple(args))
    return op


ERRATA: tuple[Erratum, ...] = (
    Erratum(
        id="undeclared-acc_t",
        operators=("CONV3D", "DEPTHWISE_CONV2D", "TRANSPOSE_CONV2D"),
        xml_says="typesupport binds acc_t but <types> does not declare it",
        we_use="acc_t is a declared type of these operators",
        why="CONV2D declares it and every mode binds it; the pseudocode accumulates in acc_t",
        fix=_declare_acc_t,
    ),
    Erratum(
        id="transpose_conv2d-fp8-bindings",
        operators=("TRANSPOSE_CONV2D",),
        xml_says="mode 'fp8e4m3 with fp16 accumulate' binds neither weight_t nor acc_t; "
        "mode 'fp8e5m2' does not bind weight_t",
        we_use="weight_t = the input type, acc_t = fp16_t, as in CONV2D's fp8 modes",
        why="the weight argument needs a type; the CONV2D/CONV3D/DEPTHWISE_CONV2D fp8 modes "
        "use the same type for input and weight with fp16 accumulation",
        fix=_complete_transpose_conv_fp8,
    ),
    Erratum(
        id="variable-var_t",
        operators=("VARIABLE", "VARIABLE_WRITE", "VARIABLE_READ"),
        xml_says="arguments are typed in_t/out_t, but only var_t is declared and bound",
        we_use="those arguments are typed var_t",
        why="the variable's element type is var_t; in_t/out_t are never bound for these operators",
        fix=_variable_types,
    ),
    Erratum(
        id="rescale-mul_t",
        operators=("RESCALE",),
        xml_says="the multiplier argument is typed mul_t, which no mode binds",
        we_use="mul_t = i32_t when scale32 is true, i16_t when it is false",
        why="the scale32 attribute's description says so; it depends on an attribute, not "
        "on the mode",
    ),
    Erratum(
        id="max_log2_size-no-levellimit",
        operators=(),
        xml_says="the 8K level sets max_log2_size=31 but no <levellimit> refers to MAX_LOG2_SIZE",
        we_use="a level check on every tensor: elements x element bytes (sub-byte types count "
        "1) <= (1 << (MAX_LOG2_SIZE + 1)) - 1, and every dimension <= (1 << MAX_LOG2_SIZE) - 1",
        why="introduction, 'Tensor size limit'",
    ),
    Erratum(
        id="max_rank-no-levellimit",
        operators=(),
        every_operator=True,
        xml_says="REDUCE_ALL/ANY/MAX/MIN/PRODUCT/SUM, CONST and IDENTITY give a tensor rank "
        'max="MAX_RANK" but, unlike every other operator, no <levellimit> on MAX_RANK',
        we_use="a level check rank(shape) <= MAX_RANK on the first tensor argument whose "
        "rank runs to MAX_RANK (a rank past it is a LEVEL_CHECK, not a valid graph)",
        why="introduction, 'Levels': the level maxima are checked with LEVEL_CHECK; the "
        "rank range names the level's MAX_RANK as for every other operator",
        fix=_max_rank_level_limit,
    ),
    Erratum(
        id="max_nesting-no-levellimit",
        operators=("COND_IF", "WHILE_LOOP"),
        xml_says="the levels set max_nesting but no <levellimit> refers to MAX_NESTING",
        we_use="COND_IF and WHILE_LOOP fail (ERROR_IF) when nested MAX_NESTING deep or more",
        why="their pseudocode has ERROR_IF(tosa_nesting_depth >= MAX_NESTING): an error, not "
        "a LEVEL_CHECK",
    ),
    Erratum(
        id="cast_to_block_scaled-bf16",
        operators=("CAST_TO_BLOCK_SCALED",),
        xml_says="mode 'bf16 to fp4e2m1 with fp8ue8m0 scale' requires EXT-MX-COMMON and "
        "EXT-MX-FP4E2M1 only",
        we_use="it requires EXT-BF16 too",
        why="the other five bf16 modes of the operator name EXT-BF16 (and_name2), as every "
        "bf16 mode of the specification does",
        fix=_bf16_requires_ext_bf16,
    ),
    Erratum(
        id="row_gather_block_scaled-rank",
        operators=("ROW_GATHER_BLOCK_SCALED",),
        xml_says="values and output (tensor lists) have rank 4..4",
        we_use="rank 3..3: each member of either list has rank 3",
        why="the same arguments' descriptions give the members' shapes as [N,K,C] and "
        "[N,K,C/block_size] (values), [N,W*row_count,C] and [N,W*row_count,C/block_size] "
        "(output), and the pseudocode reads and writes them with those three-index shapes",
        fix=_row_gather_lists_rank_3,
    ),
    Erratum(
        id="repeated-mode",
        operators=(),
        every_operator=True,
        xml_says="TOSA 1.1 lists one mode twice with the same types, once per profile "
        "(GATHER, SCATTER, ROW_GATHER_BLOCK_SCALED 'signed 8': PRO-INT since 1.0, PRO-FP "
        "since 1.1)",
        we_use="one mode, required by a claim of either profile",
        why="a mode is a type combination; two entries with the same name and types are "
        "the same mode with two alternative requirements",
        fix=_merge_repeated_modes,
    ),
    Erratum(
        id="combination-listed-twice",
        operators=(),
        every_operator=True,
        xml_says="a type-set mode (CONV2D 'Mixed precision fp with fp32 accumulate') "
        "includes type combinations that another mode lists on its own",
        we_use="the combination is the listed mode, with the listed mode's requirements",
        why="the listed mode names the profile; a vector is made once per combination",
        fix=_drop_listed_combinations,
    ),
    Erratum(
        id="mode-name-shared",
        operators=(),
        every_operator=True,
        xml_says="TOSA 1.1 gives two modes of different types the same name (ARGMAX "
        "'signed 8' with out_t i32_t and with i64_t; GATHER/SCATTER with index_t i64_t)",
        we_use="the first keeps its name; a later one is named by the types it differs in: "
        "'signed 8 (out_t=i64_t)'",
        why="a vector names its mode, so names must be unique; the first is the one earlier "
        "revisions have, so 1.0's names keep their meaning",
        fix=_name_repeated_modes,
    ),
    Erratum(
        id="mode-case",
        operators=(),
        xml_says="the same mode is spelled 'boolean' by some operators and 'Boolean' by others",
        we_use="mode strings are kept exactly as the XML spells them per operator; looking a "
        "mode up by name ignores case",
        why="vectors must name the mode as tosa.xml does, but users should not have to know "
        "which spelling an operator uses",
    ),
)

BY_ID: dict[str, Erratum] = {e.id: e for e in ERRATA}

# rescale-mul_t: the multiplier type as a function of the scale32 attribute.
MUL_T_BY_SCALE32: dict[bool, str] = {True: "i32_t", False: "i16_t"}


@dataclass(frozen=True)
class ImplicitLevelLimit:
    limit: str  # the level maximum, e.g. "MAX_LOG2_SIZE"
    erratum: str
    check: str  # "LEVEL_CHECK" (unpredictable when exceeded) or "ERROR_IF"


IMPLICIT_LEVEL_LIMITS: tuple[ImplicitLevelLimit, ...] = (
    ImplicitLevelLimit("MAX_LOG2_SIZE", "max_log2_size-no-levellimit", "LEVEL_CHECK"),
    ImplicitLevelLimit("MAX_NESTING", "max_nesting-no-levellimit", "ERROR_IF"),
)


def same_mode(a: str, b: str) -> bool:
    """Mode names compare without case (erratum mode-case)."""
    return a.casefold() == b.casefold()


def apply_operator_errata(op: OperatorSpec) -> tuple[OperatorSpec, list[str]]:
    """Apply every operator-level erratum that concerns ``op``; return the fixed
    operator and the ids of the errata that changed it."""
    fired: list[str] = []
    for e in ERRATA:
        if e.fix is None or (op.name not in e.operators and not e.every_operator):
            continue
        fixed = e.fix(op)
        if fixed != op:
            fired.append(e.id)
            op = fixed
    return op, fired

"""Coverage obligations: what a pack must contain for each (operator, mode) pair.

A pack is worth the bugs it catches, and a random draw misses the values, attributes
and shapes backends get wrong unless the seed is lucky.  So every pair gets a list of
obligations, derived from the spec model and the dtype table (not hand lists):

- ``value:ARG:CLASS``: input ARG holds a value of CLASS somewhere: the type's min, max,
  0, 1 and -1 (signed) for integers; both booleans; +-0, +-inf, NaN, the smallest and
  largest subnormal, the smallest normal and the largest finite for floats; for the
  shape values of TOSA 1.1's shape operators, tensor_size_t's min and max at the level
  (-(1 << MAX_LOG2_SIZE) and (1 << MAX_LOG2_SIZE) - 1), 0, 1 and -1, and for
  EXP2_SHAPE every exponent of its domain (``value:input:exponent=K``, 0 <= K <
  MAX_LOG2_SIZE);
- ``attr:NAME=VALUE``: every boolean attribute both ways, every enumeration value the
  mode does not fix, zero points at 0, non-zero and at their extremes (8-bit zero points;
  wider types must have a zero point of 0 by ERROR_IF);
- ``shape:rank=R`` for every rank the output may have at the level, with dimensions
  above 1; ``shape:output>=1024`` and ``shape:input>=65536`` (tiling and remainder
  paths); ``shape:broadcast=ARG`` for every input that may broadcast;
- ``round:tie`` / ``round:near-tie`` for the operators that round
  (``strategies.ties``);
- ``nan:first|middle|last`` for the operators whose result picks among values (NaN at
  the start, middle and end of an axis);
- ``dot:set=S`` for every Appendix A data set (and -1) with at least
  MIN_DOT_PRODUCTS outputs, and ``dot:ks-long``, for dot-product float modes.

An obligation is *checked* against the vectors' data (:func:`vector_facts`), never
taken on trust: ``pack.json`` records per pair which are met, and ``generate`` names the
unmet ones with a reason.  The obligations that cannot apply to a mode (fp8e4m3 has no
infinity) are listed with that reason instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from conformance import dtypes
from conformance.block_tensor import BlockScaled
from conformance.block_tensor import is_block_scaled as is_block_scaled_type
from conformance.dtypes import DType, IntRange
from conformance.operator_table import family
from conformance.spec import Argument, Level, OperatorSpec, Spec, TypeSupport
from strategies.domain import DOMAIN_FACT, domain_argument, domain_facts

LARGE_INPUT = 65536  # input elements (all inputs together) of the large vector
LARGE_OUTPUT = 1024  # output elements of the large vector
LONG_KS = 256  # a dot product at least this long counts as long
# The pooling operators (TOSA 1.1's _ADAPTIVE ones take the same windows).
POOLING_OPERATORS = family(
    ("MAX_POOL2D", "AVG_POOL2D", "MAX_POOL2D_ADAPTIVE", "AVG_POOL2D_ADAPTIVE")
)
# Operators whose result selects among input values, where a NaN's position decides
# what a careless implementation returns (a max that skips NaN, an argmax that starts
# its scan at the second element).  tosa.xml has no such property to derive it from.
NAN_POSITION_OPERATORS = family(
    frozenset(
        {
            "ARGMAX",
            "MAX_POOL2D",
            "AVG_POOL2D",
            "MAX_POOL2D_ADAPTIVE",  # TOSA 1.1: the pooling pseudocode, parameters as inputs
            "AVG_POOL2D_ADAPTIVE",
            "REDUCE_MAX",
            "REDUCE_MIN",
            "REDUCE_SUM",
            "REDUCE_PRODUCT",
            "MAXIMUM",
            "MINIMUM",
            "CLAMP",
        }
    )
)

# Enumerations whose values name element types: the mode binds them (acc_type names
# the mode's accumulator, a variable's type its var_t).
TYPE_ENUMS = frozenset({"acc_type_t", "var_t"})

# Float operators whose result can leave the output type's range from finite inputs
# (a sum, a product, an exponential, a narrowing cast); the others' results are bounded
# by their inputs (ABS, MAXIMUM, CEIL, SIN, ...).
OVERFLOWING_OPERATORS = family(
    frozenset(
        {"ADD", "SUB", "MUL", "RECIPROCAL", "CAST", "EXP", "POW", "REDUCE_SUM", "REDUCE_PRODUCT"}
    )
)
# Integer operators that saturate to the output type rather than REQUIRE a fit.
SATURATING_OPERATORS = family(frozenset({"RESCALE", "CAST"}))

INT_CLASSES = ("min", "max", "zero", "one", "minus-one")
FLOAT_CLASSES = (
    "+0",
    "-0",
    "+inf",
    "-inf",
    "nan",
    "subnormal-min",
    "subnormal-max",
    "normal-min",
    "finite-max",
)
ZP_CLASSES = ("zero", "nonzero", "min", "max")
# TOSA 1.1's shape operators whose shape input is an exponent: REQUIRE(0 <= input <
# MAX_LOG2_SIZE) makes the domain small enough to owe each value (1 << input is where
# a narrow shift or a float path goes wrong, each at its own exponent).
EXPONENT_OPERATORS = family(frozenset({"EXP2_SHAPE"}))
SHAPE_ARG_TYPES = ("shape_t", "shape_list_t")


@dataclass(frozen=True)
class Obligation:
    key: str  # e.g. "value:input1:nan"
    target: str | None  # the RecipeContext target of a job that aims at it
    what: str  # for people


@dataclass(frozen=True)
class PairObligations:
    operator: str
    mode: str
    obligations: tuple[Obligation, ...]
    not_applicable: Mapping[str, str]  # key -> why it cannot apply to this mode

    def obligation_keys(self) -> list[str]:
        return [o.key for o in self.obligations]


def _value_args(op_spec: OperatorSpec) -> list[Argument]:
    """Inputs whose values an implementation computes with (not shapes, not graphs, not
    the zero points TOSA 1.0 passes as inputs: those are parameters, see below)."""
    return [
        a
        for a in op_spec.inputs
        if a.type in ("tensor_t", "tensor_list_t") and not _is_zero_point(a)
    ]


def _parameters(op_spec: OperatorSpec) -> list[Argument]:
    """Attributes, and the zero points a revision passes as one-element inputs (1.0):
    each is one value, with the obligations of an attribute whichever it is."""
    return [*op_spec.attributes, *(a for a in op_spec.inputs if _is_zero_point(a))]


def arg_dtype(mode: TypeSupport, arg: Argument) -> DType | None:
    """The element type of ``arg`` under ``mode``, None where it does not resolve."""
    if arg.type in ("shape_t", "shape_list_t"):
        return dtypes.SHAPE
    et = arg.element_type
    if et in mode.bindings:
        v = mode.bindings[et]
        return None if v == "-" else mode.dtype(et)
    try:
        return dtypes.dtype(et)
    except (KeyError, ValueError):
        return None


def value_classes(dt: DType) -> tuple[list[str], dict[str, str]]:
    """The value classes ``dt`` has, and the ones it lacks with the reason."""
    if dt.kind == "bool":
        return ["true", "false"], {}
    if dt.kind == "int":
        classes = [c for c in INT_CLASSES if c != "minus-one" or dt.finite_range[0] < 0]
        return classes, {}
    if not dt.is_float:
        return [], {}
    missing: dict[str, str] = {}
    classes = []
    # fp8ue8m0 (a power of two, 2**-127 .. 2**127) has no zero, no sign and no
    # subnormals: read from the type (0.0 does not survive a cast to it; no stored
    # mantissa bit leaves no value between 0 and the smallest normal).
    zero = float(np.asarray(0.0).astype(dt.storage)) == 0.0
    for c in FLOAT_CLASSES:
        if c.endswith("inf") and not dt.has_inf:
            missing[c] = f"{dt.name} has no infinity"
        elif c == "nan" and not dt.has_nan:
            missing[c] = f"{dt.name} has no NaN"
        elif c in ("+0", "-0") and not zero:
            missing[c] = f"{dt.name} has no zero"
        elif c == "-0" and not dt.signed:
            missing[c] = f"{dt.name} has no sign"
        elif c.startswith("subnormal") and not dt.fp.normal_frac:
            missing[c] = f"{dt.name} has no subnormals (no mantissa bits)"
        else:
            classes.append(c)
    return classes, missing


def _revision_1_1(spec: Spec) -> bool:
    from reference.pseudocode_revisions import pseudocode_1_1

    return pseudocode_1_1(spec.revision)


def shape_value_range(spec: Spec, level: Level) -> IntRange | None:
    """The range of the shape values of TOSA 1.1's shape operators at ``level``
    (tensor_size_t: reading v11-tensor-size-t-range), None for a revision before 1.1
    (the 2024 draft's size_t shape operators owe no value classes: their packs stay
    as they were)."""
    from reference.ops.shape import tensor_size_range

    return tensor_size_range(level) if _revision_1_1(spec) else None


def shape_value_args(spec: Spec, op_spec: OperatorSpec) -> list[Argument]:
    """The shape_t (and CONCAT_SHAPE's shape_list_t) inputs of a TOSA 1.1 shape
    operator, whose values it computes with; none before 1.1."""
    if op_spec.group != "shape" or not _revision_1_1(spec):
        return []
    return [a for a in op_spec.inputs if a.type in SHAPE_ARG_TYPES]


def _shape_obligations(spec: Spec, level: Level, op_spec: OperatorSpec) -> list[Obligation]:
    """The value obligations of a 1.1 shape operator's shape inputs: EXP2_SHAPE's
    exponents first (an aimed job goes to them before a class a REQUIRE forbids), then
    tensor_size_t's classes.  A class a REQUIRE forbids (DIV_FLOOR_SHAPE's divisor 0)
    stays an obligation: the edge case's fill tries it, and the rule the reference
    names is its reason (``forbidden_by_rule``), read from the reference rather than
    typed here."""
    args = shape_value_args(spec, op_spec)
    obs: list[Obligation] = []
    if op_spec.name in EXPONENT_OPERATORS:
        for arg in args:
            for k in range(level["MAX_LOG2_SIZE"]):
                key = f"value:{arg.name}:exponent={k}"
                obs.append(Obligation(key, "edge", f"{arg.name} holds the exponent {k}"))
    for arg in args:
        for c in INT_CLASSES:
            what = f"{arg.name} holds tensor_size_t's {c} at the level"
            obs.append(Obligation(f"value:{arg.name}:{c}", "edge", what))
    return obs


def _ranked_arg(op_spec: OperatorSpec) -> Argument | None:
    """The argument whose rank the rank obligations are about: the first data input
    (ARGMAX's input of rank 1..MAX_RANK, not its output of one rank less), else the
    first output."""
    args = _value_args(op_spec) or [a for a in op_spec.outputs if a.type == "tensor_t"]
    return args[0] if args else None


# tensor_write_value_scale (TOSA 1.1): ERROR_IF(rank(shape) == 0) for a block-scaled
# tensor, and each operator's innermost-dimension ERROR_IF needs a dimension: every
# tensor of such a mode has the composite's rank or a fixed one.
BLOCK_RANK_0 = "a block-scaled tensor has rank >= 1 (ERROR_IF rank(shape) == 0)"


def _binds_block_scaled(mode: TypeSupport) -> bool:
    return any(
        v != "-" and k != "TABLE_SIZE" and dtypes.dtype(v).kind == "block"
        for k, v in mode.bindings.items()
    )


def _rank_values(op_spec: OperatorSpec, level: Level) -> list[int]:
    arg = _ranked_arg(op_spec)
    r = None if arg is None else arg.rank_range(level)
    if r is None or r[0] == r[1]:
        return []
    return list(range(r[0], r[1] + 1))


def _is_zero_point(arg: Argument) -> bool:
    return arg.name.endswith("_zp")


# (spec, level, operator, mode) -> the spec and its pair's obligations: the generator asks
# for a pair's obligations when it plans the jobs, aims them, fills edge vectors and
# totals the coverage; they are computed once.  The spec is kept with them, so that its
# id is not reused while the entry lives.
_PairKey = tuple[int, str, tuple[tuple[str, int], ...], str, str]
_PAIRS: dict[_PairKey, tuple[Spec, PairObligations]] = {}


def pair_obligations(
    spec: Spec, level: Level, op_spec: OperatorSpec, mode: TypeSupport
) -> PairObligations:
    """Every coverage obligation of (operator, mode), from the spec model."""
    key = (id(spec), level.name, tuple(sorted(level.maxima.items())), op_spec.name, mode.mode)
    if key not in _PAIRS:
        _PAIRS[key] = (spec, _pair_obligations(spec, level, op_spec, mode))
    return _PAIRS[key][1]


def _pair_obligations(
    spec: Spec, level: Level, op_spec: OperatorSpec, mode: TypeSupport
) -> PairObligations:
    # late: boundaries and rewrites import Obligation from this module
    from reference.compliance import DOT_PRODUCT_OPERATORS
    from strategies.boundaries import boundary_obligations
    from strategies.rewrites import rewrite_obligations
    from strategies.ties import tie_kinds

    obs: list[Obligation] = []
    na: dict[str, str] = {}
    single = op_spec.name not in GRAPH_OPERATORS
    if single:
        obs += _shape_obligations(spec, level, op_spec)
        for arg in _value_args(op_spec):
            dt = arg_dtype(mode, arg)
            if dt is None:
                continue
            classes, missing = value_classes(dt)
            for c in classes:
                obs.append(Obligation(f"value:{arg.name}:{c}", "edge", f"{arg.name} holds {c}"))
            for c, why in missing.items():
                na[f"value:{arg.name}:{c}"] = why
    for arg in _parameters(op_spec):
        if arg.type != "tensor_t":
            continue
        if arg.element_type == "bool_t":
            for v in ("true", "false"):
                obs.append(Obligation(f"attr:{arg.name}={v}", f"attr:{arg.name}={v}", ""))
        elif arg.element_type in spec.enums and arg.element_type not in TYPE_ENUMS:
            names = spec.enums[arg.element_type].names()
            # A mode that names one value (RESIZE's "signed 8, nearest") fixes it.
            fixed = [n for n in names if n.lower().split("_")[0] in mode.mode.lower()]
            for name in fixed or names:
                obs.append(Obligation(f"attr:{arg.name}={name}", f"attr:{arg.name}={name}", ""))
            for name in sorted(set(names) - set(fixed or names)):
                na[f"attr:{arg.name}={name}"] = f"the mode {mode.mode!r} fixes {arg.name}"
        elif _is_zero_point(arg):
            dt = arg_dtype(mode, arg)
            if dt is None or not dt.is_int:
                continue
            classes = list(ZP_CLASSES) if dt.bits == 8 else ["zero"]
            for c in classes:
                obs.append(Obligation(f"attr:{arg.name}={c}", f"attr:{arg.name}={c}", ""))
            if dt.bits != 8:
                for c in ZP_CLASSES[1:]:
                    na[f"attr:{arg.name}={c}"] = f"a {dt.name} zero point must be 0 (ERROR_IF)"
    if single and (swept := domain_argument(spec, op_spec, mode)) is not None:
        obs.append(
            Obligation(
                DOMAIN_FACT.format(arg=swept),
                "large",
                f"{swept} in every binade up to where the result stops changing",
            )
        )
    for r in _condition_ranks(op_spec, level):
        obs.append(
            Obligation(
                CONDITION_RANK_FACT.format(rank=r),
                f"rank:{r}",
                f"a one-element condition of rank {r}",
            )
        )
    if single:
        composite = _binds_block_scaled(mode)
        for r in _rank_values(op_spec, level):
            if r == 0 and composite:
                na["shape:rank=0"] = BLOCK_RANK_0
                continue
            obs.append(Obligation(f"shape:rank={r}", f"rank:{r}", f"a rank-{r} operand"))
        if _value_args(op_spec) and op_spec.outputs and op_spec.outputs[0].type == "tensor_t":
            obs.append(Obligation("shape:output>=1024", "large", "1,024 output elements"))
            obs.append(Obligation("shape:input>=65536", "large", "65,536 input elements"))
        if _pads_windows(op_spec):
            obs.append(Obligation(PAD_EVERY_SIDE, PAD_EVERY_SIDE, "windows padded on every side"))
        if _walks_an_axis(op_spec, mode):
            obs.append(Obligation(LONG_AXIS_FACT, "long-axis", "an axis past 65,536 elements"))
        out_name = op_spec.outputs[0].shape.name if op_spec.outputs else None
        for arg in op_spec.inputs:
            named = arg.shape.kind == "named" and out_name and arg.shape.name != out_name
            if named and arg.type == "tensor_t" and _broadcasts(op_spec, arg):
                obs.append(Obligation(f"shape:broadcast={arg.name}", f"broadcast:{arg.name}", ""))
    floats = float_mode(mode)
    for kind in sorted(tie_kinds(op_spec.name, mode, spec)):
        obs.append(Obligation(f"round:{kind}", "ties", f"a result {kind.replace('-', ' ')}"))
    out_dt = _output_dtype(op_spec, mode)
    if single and out_dt is not None and out_dt.is_float and _overflows(op_spec, mode, out_dt):
        obs.append(Obligation("result:overflow", "edge", "a result beyond the type's range"))
    if single and out_dt is not None and out_dt.is_int and _saturates(op_spec, mode, out_dt):
        obs.append(Obligation("result:saturate", "edge", "a result clipped to min or max"))
    elif single and op_spec.name == "RESCALE" and out_dt is not None and out_dt.bits >= 32:
        na["result:saturate"] = RESCALE_I32_FITS
    if op_spec.name in NAN_POSITION_OPERATORS and floats and single:
        for where in ("first", "middle", "last"):
            obs.append(Obligation(f"nan:{where}", "edge", f"NaN {where} along an axis"))
    if op_spec.name in DOT_PRODUCT_OPERATORS and floats:
        for s in range(-1, 6):
            obs.append(Obligation(f"dot:set={s}", None, f"data set {s}, >= 1,000 outputs"))
        if op_spec.name == "REDUCE_SUM":  # KS and the outputs share one input tensor
            room = 2 * LARGE_INPUT // _min_dot_products()
            na["dot:ks-long"] = (
                f"1,000 outputs of KS {LONG_KS} need {LONG_KS * 1000:,} input elements in one "
                f"tensor; the large budget ({2 * LARGE_INPUT:,}) holds KS {room} at most"
            )
        else:
            obs.append(Obligation("dot:ks-long", "ks:long", f"KS >= {LONG_KS}"))
    # graph rewrites (strategies.rewrites) and rule boundaries (strategies.boundaries)
    for more, reasons in (
        rewrite_obligations(spec, op_spec, mode),
        boundary_obligations(spec, level, op_spec, mode),
    ):
        obs += more
        na.update(reasons)
    return PairObligations(op_spec.name, mode.mode, tuple(obs), na)


LONG_AXIS_FACT = "shape:axis>65536"


def _walks_an_axis(op_spec: OperatorSpec, mode: TypeSupport) -> bool:
    """Whether the operator's kernels walk one axis with a counter or an index (a
    reduction's axis, GATHER/SCATTER's K), where one kept in 16 bits wraps past 2**16
    (a float REDUCE_SUM is a dot product: its long axis is the dot-product data sets')."""
    if op_spec.group == "scatter-gather":
        return True
    return op_spec.group == "reduction" and not (op_spec.name == "REDUCE_SUM" and float_mode(mode))


# Operators whose cases are whole graphs: they get the obligations of their attributes.
GRAPH_OPERATORS = family(
    frozenset({"COND_IF", "WHILE_LOOP", "VARIABLE", "VARIABLE_WRITE", "VARIABLE_READ", "CUSTOM"})
)

# A pooling window over padding on all four sides (pad_top, pad_bottom, pad_left,
# pad_right > 0): a backend that pads one side, or divides AVG_POOL2D's sum by the whole
# kernel at a border, shows only there.  The target's name is the fact's
# (strategies/recipes/pool_geometry.py, EVERY_SIDE).
PAD_EVERY_SIDE = "attr:pad=every-side"


def _pads_windows(op_spec: OperatorSpec) -> bool:
    """A pooling operator with a pad (an attribute, or 1.1's _ADAPTIVE shape_t input)."""
    return op_spec.name in POOLING_OPERATORS and any(a.name == "pad" for a in op_spec.arguments)


def _padded_every_side(op_spec: OperatorSpec, op: Any, block: Any, vector: Any) -> bool:
    """Whether the operator's four pads are all above 0: the attribute, else the pad
    input's constant data or the vector's value of it."""
    from conformance.builder import map_operands

    pad = op.attributes.get("pad")
    if pad is None:
        try:
            names = map_operands(op_spec, op).inputs.get("pad") or []
        except Exception:
            return False
        if not names:
            return False
        t = block.tensors[names[0]]
        pad = t.data if t.data is not None else getattr(vector, "inputs", {}).get(names[0])
    if pad is None:
        return False
    p = np.asarray(pad).reshape(-1)
    return p.size == 4 and bool((p > 0).all())


# A control-flow condition holds one element (COND_IF: ERROR_IF(tensor_size(shape) !=
# 1); WHILE_LOOP: ERROR_IF(tensor_size(tosa_output_shape(cond_graph)) != 1)) of any
# rank the level allows: a backend that reads it as a scalar, or only at rank 1, is
# caught only by a condition of every rank.
CONDITION_RANK_FACT = "condition:rank={rank}"


def _condition_ranks(op_spec: OperatorSpec, level: Level) -> list[int]:
    """The ranks a one-element condition may have: COND_IF's condition argument's range;
    WHILE_LOOP's cond_graph output is no argument of its own, so 0 to MAX_RANK."""
    if op_spec.name == "COND_IF":
        r = op_spec.argument("condition").rank_range(level)
        return [] if r is None else list(range(r[0], r[1] + 1))
    if op_spec.name == "WHILE_LOOP":
        return list(range(int(level["MAX_RANK"]) + 1))
    return []


def _condition_facts(vector: Any) -> set[str]:
    """The condition ranks of every COND_IF / WHILE_LOOP of the vector's operator, in
    any block (a COND_IF may sit in a loop's body, as the branch-switching cases put
    it)."""
    out: set[str] = set()
    if vector.operator not in ("COND_IF", "WHILE_LOOP"):
        return out
    for b in vector.graph.blocks():
        for op in b.operators:
            if op.op == vector.operator:
                r = condition_rank(vector.graph, op, b)
                if r is not None:
                    out.add(CONDITION_RANK_FACT.format(rank=r))
    return out


def condition_rank(graph: Any, op: Any, block: Any) -> int | None:
    """The rank of a COND_IF's condition (its first input) or of a WHILE_LOOP's
    cond_graph output; None for any other operator."""
    if op.op == "COND_IF" and op.inputs:
        return int(block.tensors[op.inputs[0]].rank)
    if op.op == "WHILE_LOOP":
        cond = graph.block(str(op.attributes["cond_graph"]))
        if cond.outputs:
            return int(cond.tensors[cond.outputs[0]].rank)
    return None


# tosa.xml's groups whose operators broadcast inputs named by another shape (shape1,
# shape2) to the output's (shape): ERROR_IF(shape != broadcast_shape(shape1, shape2)).
BROADCAST_GROUPS = frozenset({"elementwise-binary", "elementwise-ternary", "comparison"})


def _broadcasts(op_spec: OperatorSpec, arg: Argument) -> bool:
    return op_spec.group in BROADCAST_GROUPS and bool(arg.shape.name)


def _overflows(op_spec: OperatorSpec, mode: TypeSupport, out_dt: DType) -> bool:
    """Whether finite inputs can give a result past the output type's largest value: a
    sum, product or exponential, a dot product (not AVG_POOL2D: a mean stays within its
    values), a CAST from a type with larger values."""
    from reference.compliance import DOT_PRODUCT_OPERATORS

    name = op_spec.name
    if name == "CAST":
        ins = [arg_dtype(mode, a) for a in _value_args(op_spec)[:1]]
        in_dt = ins[0] if ins else None
        top = None if in_dt is None else (in_dt.normal_max if in_dt.is_float else in_dt.max)
        return top is not None and float(top) > out_dt.fp.normal_max
    if name in ("AVG_POOL2D", "AVG_POOL2D_ADAPTIVE"):
        return False
    return name in OVERFLOWING_OPERATORS or name in DOT_PRODUCT_OPERATORS


# apply_scale_32 REQUIREs |value| < 2**(shift - 1), so with a multiplier below 2**31 its
# result is below 2**30; apply_scale_16 REQUIREs its result to fit int32.  No valid
# RESCALE into i32 is clipped: the saturation its pseudocode applies is to 8 and 16 bits.
RESCALE_I32_FITS = (
    "no valid RESCALE result leaves i32: apply_scale_32 REQUIREs |value| < 2**(shift-1) "
    "(results below 2**30), apply_scale_16 that its result fit int32"
)


def _saturates(op_spec: OperatorSpec, mode: TypeSupport, out_dt: DType) -> bool:
    """Whether the result can be clipped: a float cast to an integer, a RESCALE into an
    8- or 16-bit type (from any input: 127 * 2**30 >> 2 leaves i16), never one into i32
    (RESCALE_I32_FITS); CAST between integers truncates or widens."""
    if op_spec.name not in SATURATING_OPERATORS:
        return False
    ins = [arg_dtype(mode, a) for a in _value_args(op_spec)[:1]]
    in_dt = ins[0] if ins else None
    if in_dt is None:
        return False
    if op_spec.name == "CAST":
        return in_dt.is_float
    return out_dt.bits < 32


def _output_dtype(op_spec: OperatorSpec, mode: TypeSupport) -> DType | None:
    outs = [a for a in op_spec.outputs if a.type == "tensor_t"]
    return arg_dtype(mode, outs[0]) if outs else None


def float_mode(mode: TypeSupport) -> bool:
    """Whether some type the mode binds is a floating-point one."""
    return any(
        dtypes.dtype(v).is_float for k, v in mode.bindings.items() if k != "TABLE_SIZE" and v != "-"
    )


# -- facts: what a vector shows ---------------------------------------------------------


def _int_masks(a: np.ndarray, bounds: IntRange) -> dict[str, bool]:
    v = a.astype(np.int64)
    return {
        "min": bool(np.any(v == bounds.min)),
        "max": bool(np.any(v == bounds.max)),
        "zero": bool(np.any(v == 0)),
        "one": bool(np.any(v == 1)),
        "minus-one": bool(np.any(v == -1)),
    }


def _class_masks(dt: DType, a: np.ndarray) -> dict[str, bool]:
    if not (dt.kind in ("bool", "int") or dt.is_float):
        return {}  # shape values: their range is the level's (_shape_facts)
    if dt.kind == "bool":
        return {"true": bool(np.any(a)), "false": bool(np.any(~a.astype(bool)))}
    if dt.kind == "int":
        return _int_masks(a, dt.int_range)
    x = a.astype(np.float64)
    nmin = dt.fp.normal_min
    smallest = nmin * 2.0**-dt.fp.normal_frac
    mag = np.abs(x)
    with np.errstate(invalid="ignore"):
        return {
            "+0": bool(np.any((x == 0) & ~np.signbit(x))),
            "-0": bool(np.any((x == 0) & np.signbit(x))),
            "+inf": bool(np.any(x == np.inf)),
            "-inf": bool(np.any(x == -np.inf)),
            "nan": bool(np.any(np.isnan(x))),
            "subnormal-min": bool(np.any(mag == smallest)),
            "subnormal-max": bool(np.any(mag == nmin - smallest)),
            "normal-min": bool(np.any(mag == nmin)),
            "finite-max": bool(np.any(mag == dt.fp.normal_max)),
        }


def _nan_positions(x: np.ndarray, axis: int | None) -> set[str]:
    """Where NaNs sit along ``axis`` (else the last axis) of a float tensor."""
    if x.ndim == 0 or not x.size:
        return set()
    ax = x.ndim - 1 if axis is None else axis % x.ndim
    n = x.shape[ax]
    idx = np.nonzero(np.isnan(x.astype(np.float64)))[ax] if n else np.array([], int)
    out = set()
    if np.any(idx == 0):
        out.add("first")
    if n >= 3 and np.any(idx == n - 1):
        out.add("last")
    if n >= 3 and np.any((idx > 0) & (idx < n - 1)):
        out.add("middle")
    return out


def _nontrivial(shape: tuple[int, ...]) -> bool:
    """Dimensions above 1 on at least half the axes (a rank-6 [1,1,1,1,1,1] tests no
    indexing at all)."""
    return sum(d > 1 for d in shape) * 2 >= len(shape)


def _zero_point_inputs(op_spec: OperatorSpec, op: Any, block: Any) -> dict[str, Any]:
    """The values of the zero points an operator takes as constant inputs (TOSA 1.0)."""
    from conformance.builder import map_operands

    names = [a.name for a in op_spec.inputs if _is_zero_point(a)]
    if not names:
        return {}
    try:
        operands = map_operands(op_spec, op)
    except Exception:
        return {}
    out = {}
    for name in names:
        tensors = operands.inputs.get(name) or []
        data = block.tensors[tensors[0]].data if tensors else None
        if data is not None:
            out[name] = data
    return out


def _shape_facts(
    op_spec: OperatorSpec, arg: Argument, data: np.ndarray, bounds: IntRange
) -> set[str]:
    """The classes a 1.1 shape input's values show at tensor_size_t's ``bounds``, and
    EXP2_SHAPE's exponents."""
    facts = {f"value:{arg.name}:{c}" for c, hit in _int_masks(data, bounds).items() if hit}
    if op_spec.name in EXPONENT_OPERATORS:
        facts |= {f"value:{arg.name}:exponent={int(k)}" for k in np.unique(data.astype(np.int64))}
    return facts


def _level_of(spec: Spec, vector: Any, level: Level | None) -> Level | None:
    """``level``, else the level a pack vector's requirements name (a drawn Case names
    none)."""
    if level is not None:
        return level
    name = getattr(getattr(vector, "requirements", None), "level", None)
    try:
        return spec.level(name) if name else None
    except KeyError:
        return None


def vector_facts(spec: Spec, vector: Any, level: Level | None = None) -> set[str]:
    """The obligation keys a valid vector meets, read from its data.

    ``vector`` is a ``vectors.pack_model.Vector`` (or LoadedVector), or a drawn
    ``strategies.case.Case`` (no expected outputs yet: no tie or dot-product facts).
    ``level`` (else the vector's requirements') bounds the shape values of 1.1's shape
    operators: without one their classes are not read."""
    from conformance.builder import map_operands
    from strategies.ties import tie_facts

    facts: set[str] = set()
    block = vector.graph.main
    facts |= _condition_facts(vector)
    ops = [op for op in block.operators if op.op == vector.operator]
    if not ops:
        return facts
    op = ops[0]
    op_spec = spec.operator(op.op)
    mode = op_spec.mode(vector.mode)
    attrs = dict(op.attributes)
    attrs.update(_zero_point_inputs(op_spec, op, block))
    for arg in _parameters(op_spec):
        if arg.name not in attrs:
            # An absent optional boolean (local_bound; 1.1 CAST's input_unsigned, which
            # tosa-tools' 1.1 schema cannot write) is false, as tosa.xml says it defaults.
            if arg.element_type == "bool_t" and (arg.optional or arg.name == "local_bound"):
                attrs[arg.name] = False
            else:
                continue
        v = attrs[arg.name]
        if arg.name == "pad" and _pads_windows(op_spec):
            continue  # below, with the _ADAPTIVE operators' pad input
        if isinstance(v, bool | np.bool_):
            facts.add(f"attr:{arg.name}={'true' if v else 'false'}")
        elif isinstance(v, str):
            facts.add(f"attr:{arg.name}={v}")
        elif _is_zero_point(arg):
            dt = arg_dtype(mode, arg)
            if dt is None or not dt.is_int:
                continue
            z = np.asarray(v).astype(np.int64).reshape(-1)
            if z.size:
                zi = int(z[0])
                facts.add("attr:" + arg.name + ("=zero" if zi == 0 else "=nonzero"))
                if zi == dt.int_range.min:
                    facts.add(f"attr:{arg.name}=min")
                if zi == dt.int_range.max:
                    facts.add(f"attr:{arg.name}=max")
    if _pads_windows(op_spec) and _padded_every_side(op_spec, op, block, vector):
        facts.add(PAD_EVERY_SIDE)
    if len(block.operators) != 1 or not hasattr(vector, "inputs"):
        return facts  # a graph: its inputs are not the operator's arguments
    try:
        operands = map_operands(op_spec, op)
    except Exception:
        return facts
    values: dict[str, np.ndarray] = {}
    total_in = 0
    lv = _level_of(spec, vector, level)
    bounds = shape_value_range(spec, lv) if lv is not None else None
    shaped = {a.name for a in shape_value_args(spec, op_spec)} if bounds is not None else set()
    for arg in op_spec.inputs:
        for tname in operands.inputs.get(arg.name, []):
            t = block.tensors[tname]
            data = vector.inputs.get(tname, t.data)
            if arg.type in ("tensor_t", "tensor_list_t"):
                total_in += t.size
            if data is None:
                continue
            if not isinstance(data, BlockScaled):  # a composite stays a (values, scales) pair
                data = np.asarray(data)
            values.setdefault(arg.name, data)
            if arg.name in shaped and bounds is not None:
                facts |= _shape_facts(op_spec, arg, data, bounds)
                continue
            dt = arg_dtype(mode, arg)
            if dt is None or arg.type not in ("tensor_t", "tensor_list_t"):
                continue
            for c, hit in _class_masks(dt, data).items():
                if hit:
                    facts.add(f"value:{arg.name}:{c}")
            if op.op in NAN_POSITION_OPERATORS and dt.is_float:
                axis = attrs.get("axis")
                ax = int(np.asarray(axis).reshape(-1)[0]) if axis is not None else None
                if op.op in POOLING_OPERATORS and data.ndim == 4:
                    ax = 1  # along H: the first, middle and last rows of windows
                facts |= {f"nan:{w}" for w in _nan_positions(data, ax)}
    swept = domain_argument(spec, op_spec, mode)
    if swept is not None and swept in values:
        facts |= domain_facts(spec, op.op, mode.mode, swept, values[swept])
    ranked = _ranked_arg(op_spec)
    names = [] if ranked is None else (operands.inputs | operands.outputs).get(ranked.name, [])
    if names:
        t = block.tensors[names[0]]
        if t.rank == 0 or _nontrivial(t.shape):
            facts.add(f"shape:rank={t.rank}")
    outs = [block.tensors[n] for ns in operands.outputs.values() for n in ns]
    if outs:
        out = outs[0]
        if out.size >= LARGE_OUTPUT:
            facts.add("shape:output>=1024")
        for arg in op_spec.inputs:
            for tname in operands.inputs.get(arg.name, []):
                t = block.tensors[tname]
                same_rank = t.rank == out.rank and t.rank > 0
                if same_rank and t.shape != out.shape and op_spec.group in BROADCAST_GROUPS:
                    facts.add(f"shape:broadcast={arg.name}")
    if total_in >= LARGE_INPUT:
        facts.add("shape:input>=65536")
    in_tensors = [block.tensors[n] for ns in operands.inputs.values() for n in ns]
    if any(t.rank and max(t.shape) > LARGE_INPUT for t in in_tensors):
        facts.add(LONG_AXIS_FACT)
    expected = getattr(vector, "expected", None) or {}
    facts |= _result_facts(op_spec, mode, expected)
    if op.op == "CAST" and "input" in values:
        facts |= _cast_overflow(mode, values["input"])
    facts |= {f"round:{f}" for f in tie_facts(op.op, mode, values, attrs, expected, spec)}
    for name, check in (getattr(vector, "checks", None) or {}).items():
        d = check.descriptor
        params = getattr(d, "params", None) if d is not None else None
        ks = getattr(params, "ks", None)
        if ks is None:
            continue
        out_t = block.tensors.get(name)
        n_out = out_t.size if out_t is not None else 0
        if n_out >= _min_dot_products():
            facts.add(f"dot:set={getattr(vector, 'data_set', -1)}")
        if ks >= LONG_KS:
            facts.add("dot:ks-long")
    return facts


def _cast_overflow(mode: TypeSupport, x: Any) -> set[str]:
    """CAST's overflow read from its input: a finite value past the float output's
    largest (the result is infinity, or NaN for a type without one, which the expected
    result alone does not tell from a NaN input); a block-scaled input's elements are
    value times scale."""
    from reference.expectations import element_values

    out_dt = mode.dtype("out_t")
    if not out_dt.is_float or is_block_scaled_type(out_dt):
        return set()
    with np.errstate(invalid="ignore", over="ignore"):
        v = np.asarray(element_values(x)).astype(np.float64)
        big = np.isfinite(v) & (np.abs(v) > out_dt.fp.normal_max)
    return {"result:overflow"} if bool(np.any(big)) else set()


def _result_facts(
    op_spec: OperatorSpec, mode: TypeSupport, expected: Mapping[str, np.ndarray]
) -> set[str]:
    """Overflow: an exact (float64) result finite but beyond the output type's largest
    value, so it must round to infinity (or saturate, for types without one).
    Saturation: an integer result at the output type's min or max."""
    out_dt = _output_dtype(op_spec, mode)
    names = [a.name for a in op_spec.outputs]
    if out_dt is None or not names or names[0] not in expected:
        return set()
    x = np.asarray(expected[names[0]])
    if out_dt.is_float:
        with np.errstate(invalid="ignore"):
            big = np.isfinite(x) & (np.abs(x.astype(np.float64)) > out_dt.fp.normal_max)
        return {"result:overflow"} if bool(np.any(big)) else set()
    if out_dt.is_int:
        v = x.astype(np.int64)
        hit = np.any(v == out_dt.int_range.min) or np.any(v == out_dt.int_range.max)
        return {"result:saturate"} if bool(hit) else set()
    return set()


def _min_dot_products() -> int:
    from reference.compliance import MIN_DOT_PRODUCTS

    return int(MIN_DOT_PRODUCTS)


# -- the pack's record ----------------------------------------------------------------


@dataclass
class PairCoverage:
    """What a pack shows for one pair."""

    operator: str
    mode: str
    met: list[str]
    unmet: dict[str, str]  # key -> why
    not_applicable: dict[str, str]

    def to_json(self) -> dict[str, Any]:
        return {
            "operator": self.operator,
            "mode": self.mode,
            "met": sorted(self.met),
            "unmet": dict(sorted(self.unmet.items())),
            "not_applicable": dict(sorted(self.not_applicable.items())),
        }


RULE_KINDS = ("REQUIRE", "ERROR_IF", "LEVEL_CHECK")


# conformance.generate's reason for an obligation a capability manifest puts outside
# the claim ("rank:5: manifest nnapi allows rank <= 4").
_OUTSIDE_MANIFEST = re.compile(r"^rank:\d+: manifest \S+ allows rank [<>]= \d+$")


def outside_manifest(reason: str) -> bool:
    """Whether an unmet obligation's reason is that the capability manifest excludes it:
    outside the claimed subset, so no gap of the pack."""
    return _OUTSIDE_MANIFEST.match(reason) is not None


def forbidden_by_rule(reason: str) -> bool:
    """Whether an unmet obligation's reason is a rule of the spec that refuses every such
    case (``REQUIRE value2 != 0``): a property of the operator, not a gap of the pack."""
    return reason.startswith(RULE_KINDS)


def coverage(
    pair: PairObligations, facts: Iterable[str], reasons: Mapping[str, str] | None = None
) -> PairCoverage:
    """Which of ``pair``'s obligations the facts meet; an unmet one takes its reason from
    ``reasons`` (what the generator learnt trying to meet it), else "no vector has it"."""
    seen = set(facts)
    reasons = reasons or {}
    met = [k for k in pair.obligation_keys() if k in seen]
    why = "no generated vector has it"
    unmet = {k: reasons.get(k, why) for k in pair.obligation_keys() if k not in seen}
    return PairCoverage(pair.operator, pair.mode, met, unmet, dict(pair.not_applicable))

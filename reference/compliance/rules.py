"""The spec's precision table as data, and factories that turn an operator into a
``ComplianceDescriptor`` naming the rule it comes from.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from conformance.compliance_descriptor import (
    AbsErrorParams,
    ComplianceDescriptor,
    DotProductParams,
    Magnitude,
    Mode,
    ReduceProductParams,
    ResizeParams,
    UlpParams,
)
from conformance.dtypes import BOOL, DType
from conformance.operator_table import OperatorTable, family

from .bound_inputs import abs_error_operators

if TYPE_CHECKING:
    from .revision_rules import RevisionRules

_TABLE = "introduction: Main Inference precision requirements"
_DOT = "introduction: Dot product accuracy requirements"

# Operators whose floating-point results must be within a number of ulp, by revision
# (revision_rules.RULES picks the table; ulp_operators() gives the process's).
ULP_OPERATORS: OperatorTable[float] = OperatorTable(
    {
        "ADD": 0.5,
        "SUB": 0.5,
        "MUL": 0.5,
        "CEIL": 0.5,
        "FLOOR": 0.5,
        "CAST": 0.5,  # to a floating-point type; casts to integers are exact
        "RECIPROCAL": 1.0,
        "RSQRT": 2.0,
        "LOG": 5.0,
        "ERF": 5.0,
    }
)
ULP_OPERATORS_1_0: OperatorTable[float] = OperatorTable(
    {
        "ADD": 0.5,
        "SUB": 0.5,
        "MUL": 0.5,
        "CEIL": 0.5,
        "FLOOR": 0.5,
        "CAST": 0.5,  # integer to float; float to float: revision_rules, cast_float_toward_zero_ulp
        "RECIPROCAL": 1.0,
        "RSQRT": 2.0,
        "ERF": 5.0,
    }
)

# ULP operators whose rule also requires underflows to give a zero of the correct sign.
ZERO_SIGN_OPERATORS: frozenset[str] = family(
    frozenset({"ADD", "SUB", "MUL", "CEIL", "FLOOR", "CAST", "RECIPROCAL", "LOG", "ERF"})
)
ZERO_SIGN_OPERATORS_1_0: frozenset[str] = family(frozenset({"ADD", "SUB", "MUL", "CAST"}))


def _rules() -> RevisionRules:
    from .revision_rules import current  # imports this module's tables

    return current()


def ulp_operators() -> dict[str, float]:
    return _rules().ulp_operators.value


def zero_sign_operators() -> frozenset[str]:
    return _rules().zero_sign_operators.value


def _table() -> str:
    """The name of the text the precision rules come from, in the revision in use."""
    from .revision_rules import DRAFT, RULES

    if _rules() is RULES[DRAFT]:
        return _TABLE
    return "Precision Requirements"


# Operators whose non-NaN results must be exact.
EXACT_OPERATORS: frozenset[str] = family(
    frozenset(
        {
            "ARGMAX",
            "MAX_POOL2D",
            "MAX_POOL2D_ADAPTIVE",
            "CLAMP",
            "MAXIMUM",
            "MINIMUM",
            "ABS",
            "NEGATE",
            "SELECT",
            "REDUCE_MAX",
            "REDUCE_MIN",
            "CONST",
            "IDENTITY",
        }
    )
)

# Floating-point comparisons: a bool result that must be exact.
COMPARISON_OPERATORS: frozenset[str] = family(frozenset({"EQUAL", "GREATER", "GREATER_EQUAL"}))

# Operators that only move or select elements.  The precision table does not list
# them; with no arithmetic to round, exact is the only consistent requirement.
DATA_MOVEMENT_OPERATORS: frozenset[str] = family(
    frozenset(
        {
            "CONCAT",
            "PAD",
            "RESHAPE",
            "REVERSE",
            "SLICE",
            "TILE",
            "TRANSPOSE",
            "GATHER",
            "ROW_GATHER",
            "SCATTER",
            # TOSA 1.1: values and their scales, each moved bit for bit.
            "RESHAPE_BLOCK_SCALED",
            "ROW_GATHER_BLOCK_SCALED",
            "VARIABLE_READ",
        }
    )
)

# Operators checked with the dot product rule (the precision table's rows; which of them
# have a local_bound attribute is tosa.xml's to say: has_local_bound_attribute).
DOT_PRODUCT_OPERATORS: frozenset[str] = family(
    frozenset(
        {
            "CONV2D",
            "CONV3D",
            "DEPTHWISE_CONV2D",
            "TRANSPOSE_CONV2D",
            "FFT2D",
            "RFFT2D",
            "FULLY_CONNECTED",
            "MATMUL",
            "MATMUL_T",
            "REDUCE_SUM",
            "AVG_POOL2D",
            "AVG_POOL2D_ADAPTIVE",
        }
    )
)


@functools.cache
def has_local_bound_attribute(op: str) -> bool:
    """Whether dot-product operator ``op`` carries the optional local_bound attribute
    (asked of the spec model); the rule takes local_bound true for those without."""
    from conformance.spec import load_spec  # the spec model, loaded on first use

    return any(a.name == "local_bound" for a in load_spec().operator(_dot_op(op)).attributes)


def effective_local_bound(op: str, attribute: bool | None) -> bool:
    """local_bound as the dot product rule uses it: the attribute (default false) for
    operators that have one, true for the others."""
    if has_local_bound_attribute(op):
        return bool(attribute) if attribute is not None else False
    if attribute is not None:
        raise ValueError(f"{op} has no local_bound attribute")
    return True


def ulp(dtype: DType, n: float, rule: str, *, zero_sign: bool = False) -> ComplianceDescriptor:
    return ComplianceDescriptor(Mode.ULP, dtype, rule, UlpParams(float(n), zero_sign))


def exact(dtype: DType, rule: str) -> ComplianceDescriptor:
    """EXACT for integer, bool and shape outputs, EXACT_NAN for floating-point ones."""
    mode = Mode.EXACT_NAN if dtype.is_float else Mode.EXACT
    return ComplianceDescriptor(mode, dtype, rule)


def comparison(op: str) -> ComplianceDescriptor:
    """EQUAL / GREATER / GREATER_EQUAL: the fp64 reference already ignores the sign of
    zero, treats equal infinities as equal and gives false for NaN, so the bool result
    is checked exactly."""
    name = op.upper()
    if name not in COMPARISON_OPERATORS:
        known = ", ".join(sorted(COMPARISON_OPERATORS))
        raise ValueError(f"{op} is not a comparison; known: {known}")
    return exact(BOOL, f"{_table()}, {name} exact (zero sign ignored, equal infinities equal)")


def abs_error(
    dtype: DType,
    rule: str,
    *,
    lower_bound: float = 0.0,
    normal_divisor: float = 1.0,
    magnitude: Magnitude = Magnitude.REFERENCE,
    input_offset: float = 0.0,
) -> ComplianceDescriptor:
    params = AbsErrorParams(lower_bound, normal_divisor, magnitude, input_offset)
    return ComplianceDescriptor(Mode.ABS_ERROR, dtype, rule, params)


def abs_error_for(op: str, dtype: DType) -> ComplianceDescriptor:
    """ABS_ERROR descriptor for EXP, POW, SIGMOID, TANH, SIN or COS; its bound tensor
    comes from ``abs_error_bound_tensor(op, ...)``."""
    name = op.upper()
    table = abs_error_operators()
    if name not in table:
        known = ", ".join(table)
        raise ValueError(f"{op} is not an ABS_ERROR operator; known: {known}")
    lower, divisor, magnitude, offset = table[name]
    return abs_error(
        dtype,
        f"{_table()}, {name} calcAbsErrorBound",
        lower_bound=lower,
        normal_divisor=divisor,
        magnitude=magnitude,
        input_offset=offset,
    )


def reduce_product(dtype: DType, n: int) -> ComplianceDescriptor:
    rule = f"{_table()}, REDUCE_PRODUCT of {n} elements"
    params = ReduceProductParams(n, zero_sign=_rules().reduce_product_zero_sign.value)
    return ComplianceDescriptor(Mode.REDUCE_PRODUCT, dtype, rule, params)


def resize(dtype: DType, input_abs_max: float) -> ComplianceDescriptor:
    ulp = _rules().resize_ulp.value
    extra = "" if ulp is None else f", at least {ulp:g} ulp of it"
    rule = f"{_table()}, RESIZE 0.006 * max(abs(input)){extra}"
    return ComplianceDescriptor(Mode.RESIZE, dtype, rule, ResizeParams(float(input_abs_max)))


def cast(in_dtype: DType, out_dtype: DType) -> ComplianceDescriptor:
    """CAST with a floating-point output.  Where the revision allows a cast between
    float types to round toward zero (1.0: up to one ulp below the magnitude, half an
    ulp above), the descriptor says so; otherwise it is the CAST row's ulp rule."""
    toward_zero = _rules().cast_float_toward_zero_ulp.value
    if not (in_dtype.is_float and out_dtype.is_float) or toward_zero is None:
        return for_operator("CAST", out_dtype)
    n = ulp_operators()["CAST"]
    rule = f"{_table()}, CAST {in_dtype} to {out_dtype}: -{toward_zero:g} / +{n:g} ulp"
    zero_sign = "CAST" in zero_sign_operators()
    params = UlpParams(float(n), zero_sign, float(toward_zero))
    return ComplianceDescriptor(Mode.ULP, out_dtype, rule, params)


def dot_product(
    op: str,
    dtype: DType,
    acc_dtype: DType,
    *,
    ks: int,
    data_set: int,
    bias_abs_max: float = 0.0,
    local_bound: bool | None = None,
    in_dtype: DType | None = None,
    input_dtypes: tuple[DType, ...] = (),
) -> ComplianceDescriptor:
    """Descriptor for a dot product operator.  ``local_bound`` is the operator's
    attribute as given (None when absent); the rule's effective value is recorded.
    ``input_dtypes`` (the 'input' and 'weight' types) are recorded where the
    revision's bounds depend on them (TOSA 1.1, ``DotProductRule.typed_bounds``).

    Where the revision floors the abs-input pass at normal_min<in_t> (1.0), a bias the
    operator declares is never zero there, so ksb always counts it; ``in_dtype``
    (default: the output type) gives that normal_min."""
    name = _dot_op(op)
    if _rules().dot_product.value.floor_abs_inputs and _has_bias(name):
        floor = (in_dtype or dtype).fp.normal_min
        bias_abs_max = max(float(bias_abs_max), floor)
    params = DotProductParams(
        ks=ks,
        data_set=data_set,
        acc_dtype=acc_dtype,
        bias_abs_max=float(bias_abs_max),
        local_bound=effective_local_bound(name, local_bound),
        input_dtypes=tuple(input_dtypes) if _rules().dot_product.value.typed_bounds else (),
    )
    rule = f"{_DOT}, {name} KS={ks} S={data_set}"
    return ComplianceDescriptor(Mode.DOT_PRODUCT, dtype, rule, params)


def for_operator(op: str, dtype: DType) -> ComplianceDescriptor:
    """Descriptor for an operator whose rule needs nothing but the output type: exact,
    comparison and ulp operators, and any operator with a non-float output (integer
    graphs must match exactly)."""
    name = op.upper()
    if name in COMPARISON_OPERATORS:
        return comparison(name)
    table = _table()
    if not dtype.is_float:
        return exact(dtype, f"{table}, {name} with {dtype} output: integer results must be exact")
    ulps = ulp_operators()
    if name in ulps:
        n = ulps[name]
        zero_sign = name in zero_sign_operators()
        return ulp(dtype, n, f"{table}, {name} {n:g} ulp", zero_sign=zero_sign)
    if name in EXACT_OPERATORS:
        return exact(dtype, f"{table}, {name} non-NaN results exact")
    if name in DATA_MOVEMENT_OPERATORS:
        return exact(dtype, f"{name} moves elements without arithmetic: exact (not in the table)")
    if name in abs_error_operators():
        return abs_error_for(name, dtype)
    hint = {
        "REDUCE_PRODUCT": "reduce_product(dtype, n)",
        "RESIZE": "resize(dtype, input_abs_max)",
    }.get(name, "dot_product(...)" if name in DOT_PRODUCT_OPERATORS else None)
    if hint:
        raise ValueError(f"{name} needs parameters: use {hint}")
    raise ValueError(f"no compliance rule known for {op} with {dtype} output")


@functools.cache
def _declares_bias(spec_revision: str, op: str) -> bool:
    from conformance.spec import load_spec

    return any(a.name == "bias" for a in load_spec().operator(op).arguments)


def _has_bias(op: str) -> bool:
    """Whether ``op`` declares a bias input, in the process's spec."""
    from conformance.spec import load_spec

    return _declares_bias(load_spec().revision, op)


def _dot_op(op: str) -> str:
    name = op.upper()
    if name not in DOT_PRODUCT_OPERATORS:
        known = ", ".join(sorted(DOT_PRODUCT_OPERATORS))
        raise ValueError(f"{op} is not a dot product operator; known: {known}")
    return name

"""The compliance rules that differ between spec revisions: ONE table, keyed by revision.

Why a table keyed by revision: these rules live in the spec's prose and library
pseudocode (introduction, the operators' "Precision Requirements", Appendix A,
``tosa_reference_check.tosac``, ``numeric_accuracy_helpers.tosac``,
``tosa_reference_check_dotproduct.tosac``), and tosa.xml carries none of them, so the
spec model cannot be asked.  Each entry names the text it comes from; the operator
lists an entry holds are the literal tables of ``rules`` and ``bound_inputs`` (where
``tosa-conformance spec sources`` finds each operator's line).  The revision in
use is the process's spec (``conformance.spec.load_spec().revision``); a spec that is not
a vendored revision follows the default revision's rules.

docs/compliance.md ("TOSA 1.0") lists the same differences in prose.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Generic, Literal, TypeVar

from conformance import revisions
from conformance.compliance_descriptor import Magnitude

from .bound_inputs import ABS_ERROR_OPERATORS, ABS_ERROR_OPERATORS_1_0
from .rules import ULP_OPERATORS, ULP_OPERATORS_1_0, ZERO_SIGN_OPERATORS, ZERO_SIGN_OPERATORS_1_0

T = TypeVar("T")

DRAFT = revisions.DRAFT_2024.name
V1_0 = revisions.TOSA_1_0.name


@dataclass(frozen=True)
class Entry(Generic[T]):
    value: T
    spec: str  # the chapter / pseudocode file the value comes from


# The bound check (tosa_reference_check_fp_bnd):
#  "widened": the draft's; an upper end below normal_min is raised to it and a lower end
#             below it drops to zero, so any value in [0, normal_min] may stand in for a
#             subnormal reference.
#  "flush-zero": 1.0's; an infinite (or NaN) err_bnd accepts any result, the interval is
#             not widened, a zero result of fp16/bf16/fp32 passes where the lower end is
#             below normal_min, and a lower end past -normal_max becomes -infinity.
FpCheck = Literal["widened", "flush-zero"]

# calcAbsErrorBound:
#  "product": 2**e * max(lower_bound, |magnitude| * bounds_value)  (draft)
#  "floored": 2**e * max(|magnitude|, normal_min, lower_bound / bounds_value) * bounds_value
AbsHelper = Literal["product", "floored"]

# How each ABS_ERROR operator's bound tensor is built (bound_inputs.abs_error_bound_tensor).
AbsFormulas = Literal["draft", "1.0"]


@dataclass(frozen=True)
class DotProductRule:
    """The constants of the dot product check.  ``abs_bound`` and ``variance`` multiply
    ksb (per element and per output); the error-sum limit is
    ``error_sum * sqrt(ksb * T)``."""

    abs_bound: float
    variance: float
    error_sum: float
    # ksb divides KS by 2**(frac(acc) - frac(out)), or by 2**((frac(acc) - frac(out)) // 2)
    halve_exponent: bool
    # Where the bound alone makes an element unconstrained: "acc" when the bound
    # overflows acc_t (draft), "out" when the bound widened by ABS_BOUND error units
    # overflows out_t (1.0).
    overflow_in: Literal["acc", "out"]
    # The abs-input pass reads max(abs(v), normal_min<in_t>) for input, weight and bias.
    floor_abs_inputs: bool
    # TOSA 1.1: the floor is each tensor's own type's normal_min (normal_min<weight_t>
    # for the weight, normal_min<out_t> for the bias), and ABS_BOUND and
    # VARIANCE_ERROR_BOUND depend on the input types and the accumulator (relaxed for
    # fp8 / fp6 / fp4 / mxint8 inputs with an fp32 accumulator, 3x for fp32 inputs):
    # dot_product.abs_bound_units, variance_units.
    typed_bounds: bool = False


@dataclass(frozen=True)
class DataSetRule:
    """Appendix A's generator.  ``set_stride`` is the multiple of S that picks the
    set_data sequences of S = 0, 2, 3, 4; ``signed_s1``: S = 1 draws a random sign and
    uses two set_data values per element; ``b_by``: B is keyed by the accumulator (the
    narrower of accumulator and output, see datasets.bound_b) or by the output type."""

    set_stride: int
    signed_s1: bool
    b_by: Literal["accumulator", "output"]


@dataclass(frozen=True)
class RevisionRules:
    fp_check: Entry[FpCheck]
    abs_helper: Entry[AbsHelper]
    abs_formulas: Entry[AbsFormulas]
    # ABS_ERROR operators: (lower_bound, normal_divisor, magnitude, input_offset)
    abs_error_operators: Entry[dict[str, tuple[float, float, Magnitude, float]]]
    ulp_operators: Entry[dict[str, float]]
    zero_sign_operators: Entry[frozenset[str]]
    cast_float_toward_zero_ulp: Entry[float | None]  # CAST fp -> fp: ulp allowed toward 0
    reduce_product_floor: Entry[bool]  # err_bnd uses max(abs(out_ref), normal_min)
    reduce_product_zero_sign: Entry[bool]
    resize_ulp: Entry[float | None]  # err_bnd = max(calcAbsErrorBound(max, N, 0, 1), 0.006*max)
    dot_product: Entry[DotProductRule]
    data_sets: Entry[DataSetRule]


_DRAFT_TABLE = "draft introduction: Main Inference precision requirements"
_V1_CHECK = "1.0 pseudocode/library/tosa_reference_check.tosac, tosa_reference_check_fp_bnd"
_V1_1_DOT = (
    "1.1 introduction, Dot product accuracy requirements (ABS_BOUND and "
    "VARIANCE_ERROR_BOUND tables by in_t and acc_t); pseudocode/library/"
    "tosa_reference_check_dotproduct.tosac (normal_min<weight_t>, normal_min<out_t>)"
)
_V1_DOT = (
    "1.0 introduction, Dot product accuracy requirements (ABS_BOUND, VARIANCE_ERROR_BOUND);"
    " pseudocode/library/tosa_reference_check_dotproduct.tosac"
)

RULES: dict[str, RevisionRules] = {
    DRAFT: RevisionRules(
        fp_check=Entry(
            "widened", "draft introduction, tosa_reference_check_fp_bnd (ref_min, ref_max clamps)"
        ),
        abs_helper=Entry("product", "draft introduction, Numeric Accuracy Helpers"),
        abs_formulas=Entry("draft", _DRAFT_TABLE + ": EXP, POW, SIGMOID, TANH, COS, SIN rows"),
        abs_error_operators=Entry(
            ABS_ERROR_OPERATORS,
            _DRAFT_TABLE + ": EXP, POW, SIGMOID, TANH, COS, SIN rows",
        ),
        ulp_operators=Entry(ULP_OPERATORS, _DRAFT_TABLE),
        zero_sign_operators=Entry(
            ZERO_SIGN_OPERATORS,
            _DRAFT_TABLE + ": 'underflows must be set to zero of the correct sign'",
        ),
        cast_float_toward_zero_ulp=Entry(None, _DRAFT_TABLE + ", CAST row: within 0.5 ulp"),
        reduce_product_floor=Entry(False, _DRAFT_TABLE + ", REDUCE_PRODUCT row"),
        reduce_product_zero_sign=Entry(True, _DRAFT_TABLE + ", REDUCE_PRODUCT row"),
        resize_ulp=Entry(None, _DRAFT_TABLE + ", RESIZE row: err_bnd = max(abs(input)) * 0.006"),
        dot_product=Entry(
            DotProductRule(
                abs_bound=1.0,
                variance=0.4,
                error_sum=2.0,
                halve_exponent=False,
                overflow_in="acc",
                floor_abs_inputs=False,
            ),
            "draft introduction, Dot product accuracy requirements",
        ),
        data_sets=Entry(
            DataSetRule(set_stride=2, signed_s1=False, b_by="accumulator"),
            "draft appendix_a, Main Inference test data generator",
        ),
    ),
    V1_0: RevisionRules(
        fp_check=Entry("flush-zero", _V1_CHECK),
        abs_helper=Entry(
            "floored", "1.0 pseudocode/library/numeric_accuracy_helpers.tosac, calcAbsErrorBound"
        ),
        abs_formulas=Entry(
            "1.0",
            "1.0 ewise_unary EXP, COS, SIN, LOG; activation_funcs SIGMOID, TANH; "
            "ewise_binary POW (Precision Requirements)",
        ),
        abs_error_operators=Entry(
            ABS_ERROR_OPERATORS_1_0,
            "1.0 ewise_unary EXP (err_base+2*abs(x)), LOG (5, 0.5), COS, SIN; "
            "activation_funcs SIGMOID, TANH (4*(exp_err_base+2*abs(x)), 0.5); "
            "ewise_binary POW (1.0.1)",
        ),
        ulp_operators=Entry(
            ULP_OPERATORS_1_0,
            "1.0 Precision Requirements of ADD, SUB, MUL (ewise_binary), CEIL, FLOOR, "
            "RECIPROCAL, RSQRT (ewise_unary), ERF (activation_funcs), CAST (type_conversion); "
            "LOG is an absolute error bound in 1.0",
        ),
        zero_sign_operators=Entry(
            ZERO_SIGN_OPERATORS_1_0,
            "1.0 ADD, SUB, MUL: results 'may be flushed to zero of the appropriate sign'; "
            "CAST: 'a zero of the appropriate sign', 'x must have the correct sign'",
        ),
        cast_float_toward_zero_ulp=Entry(
            1.0,
            "1.0 type_conversion, CAST Precision Requirements: "
            "abs(out_ref) - ulp <= abs(x) <= abs(out_ref) + 0.5*ulp",
        ),
        reduce_product_floor=Entry(
            True, "1.0 reduction, REDUCE_PRODUCT: err_bnd = max(abs(out_ref), normal_min) * ..."
        ),
        reduce_product_zero_sign=Entry(
            False, "1.0 reduction, REDUCE_PRODUCT (no underflow sign rule)"
        ),
        resize_ulp=Entry(20.0, "1.0 image, RESIZE: ulp_bnd = calcAbsErrorBound(max, 20.0, 0, 1)"),
        dot_product=Entry(
            DotProductRule(
                abs_bound=2.0,
                variance=1.6,  # 4 * 0.4
                error_sum=4.0,  # sqrt(10 * 1.6 * ksb * T)
                halve_exponent=True,
                overflow_in="out",
                floor_abs_inputs=True,
            ),
            _V1_DOT,
        ),
        data_sets=Entry(
            DataSetRule(set_stride=3, signed_s1=True, b_by="output"),
            "1.0 appendix_a, Floating-Point Test Data Generator (tosa_pro_fp_data) and B table",
        ),
    ),
}


# TOSA 1.1 follows 1.0 but for the dot product's type-dependent bounds.
V1_1 = revisions.TOSA_1_1_DRAFT.name
assert V1_1 not in RULES, "1.1's rules are derived from 1.0's here: give its changes below"
RULES[V1_1] = replace(
    RULES[V1_0],
    dot_product=Entry(replace(RULES[V1_0].dot_product.value, typed_bounds=True), _V1_1_DOT),
)


def rules_for(revision: str) -> RevisionRules:
    """The rules of ``revision``; a spec that is no vendored revision follows the
    default revision's."""
    return RULES.get(revision, RULES[revisions.DEFAULT_REVISION])


def current() -> RevisionRules:
    """The rules of the process's spec."""
    from conformance.spec import load_spec  # the spec model, loaded on first use

    return rules_for(load_spec().revision)

"""Floating-point compliance checking: does an implementation's output meet the
accuracy the TOSA spec requires of it, compared with the fp64 reference result.

``ComplianceDescriptor`` says which rule applies (built with the factories in
``rules``), ``check`` applies it and returns a ``Verdict``.  See docs/compliance.md.
"""

from conformance.compliance_descriptor import (
    AbsErrorParams,
    BlockScalesParams,
    ComplianceDescriptor,
    DotProductParams,
    Magnitude,
    Mode,
    ReduceProductParams,
    ResizeParams,
    ScaledValuesParams,
    UlpParams,
)

from .block_scaled import Partner
from .bound_inputs import (
    ABS_ERROR_OPERATORS,
    DotProductBoundInputs,
    abs_error_bound_tensor,
    abs_error_operators,
    abs_floor,
    dot_product_bound_inputs,
)
from .checker import check
from .dot_product import MIN_DOT_PRODUCTS, DotProductStats, ksb
from .rules import (
    COMPARISON_OPERATORS,
    DATA_MOVEMENT_OPERATORS,
    DOT_PRODUCT_OPERATORS,
    EXACT_OPERATORS,
    ULP_OPERATORS,
    ZERO_SIGN_OPERATORS,
    abs_error,
    abs_error_for,
    cast,
    comparison,
    dot_product,
    effective_local_bound,
    exact,
    for_operator,
    has_local_bound_attribute,
    reduce_product,
    resize,
    ulp,
    ulp_operators,
    zero_sign_operators,
)
from .verdict import MAX_REPORTED, ScalesVerdict, Verdict

__all__ = [
    "ABS_ERROR_OPERATORS",
    "COMPARISON_OPERATORS",
    "DATA_MOVEMENT_OPERATORS",
    "DOT_PRODUCT_OPERATORS",
    "EXACT_OPERATORS",
    "MAX_REPORTED",
    "MIN_DOT_PRODUCTS",
    "ULP_OPERATORS",
    "ZERO_SIGN_OPERATORS",
    "AbsErrorParams",
    "BlockScalesParams",
    "ComplianceDescriptor",
    "DotProductBoundInputs",
    "DotProductParams",
    "DotProductStats",
    "Magnitude",
    "Mode",
    "Partner",
    "ReduceProductParams",
    "ResizeParams",
    "ScaledValuesParams",
    "ScalesVerdict",
    "UlpParams",
    "Verdict",
    "abs_error",
    "abs_error_bound_tensor",
    "abs_error_for",
    "abs_error_operators",
    "abs_floor",
    "cast",
    "check",
    "comparison",
    "dot_product",
    "dot_product_bound_inputs",
    "effective_local_bound",
    "exact",
    "for_operator",
    "has_local_bound_attribute",
    "ksb",
    "reduce_product",
    "resize",
    "ulp",
    "ulp_operators",
    "zero_sign_operators",
]

"""Re-export of :mod:`conformance.compliance_descriptor`, where the descriptor now lives.

A descriptor is plain data that the vector format stores, so it belongs to the core
model: ``vectors`` reads it without importing ``reference``.  This module keeps the old
import path working.
"""

from conformance.compliance_descriptor import (
    DATA_SETS,
    AbsErrorParams,
    BlockScalesParams,
    ComplianceDescriptor,
    DotProductParams,
    IntRangeParams,
    Magnitude,
    Mode,
    Params,
    ReduceProductParams,
    ResizeParams,
    ScaledValuesParams,
    UlpParams,
)

__all__ = [
    "DATA_SETS",
    "AbsErrorParams",
    "BlockScalesParams",
    "ComplianceDescriptor",
    "DotProductParams",
    "IntRangeParams",
    "Magnitude",
    "Mode",
    "Params",
    "ReduceProductParams",
    "ResizeParams",
    "ScaledValuesParams",
    "UlpParams",
]

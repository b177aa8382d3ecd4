"""What a caller computes, from an operator's inputs, for the bound tensor that
``check`` needs in ABS_ERROR and DOT_PRODUCT modes.

The checker never evaluates operators.  For a dot product the caller takes the
arrays from ``dot_product_bound_inputs``, runs the same operator on them in fp64 with
the reference evaluator, and passes that result as the bound; for an ABS_ERROR
operator ``abs_error_bound_tensor`` gives the bound directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .descriptor import Magnitude

# The per-element quantity stored in the bound tensor of each ABS_ERROR operator,
# with the calcAbsErrorBound constants that go with it (lower_bound, normal_divisor,
# magnitude, input_offset).  SIN and COS scale by the input rather than the result,
# so their bound tensor is the input and the offset rebuilds calcAbsErrorBound's
# second argument from it.
ABS_ERROR_OPERATORS: dict[str, tuple[float, float, Magnitude, float]] = {
    "EXP": (0.0, 1.0, Magnitude.REFERENCE, 0.0),
    "POW": (0.0, 1.0, Magnitude.REFERENCE, 0.0),
    "SIGMOID": (0.0, 1.0, Magnitude.REFERENCE, 0.0),
    "TANH": (0.5, 1.0, Magnitude.REFERENCE, 0.0),
    "COS": (0.0, 2.0, Magnitude.INPUT, 1.0),
    "SIN": (0.0, 2.0, Magnitude.INPUT, 0.0),
}


def abs_error_bound_tensor(op: str, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
    """The fp64 bound tensor for ABS_ERROR operator ``op`` with input ``x`` (and, for
    POW, exponent ``y``), broadcast to the output shape."""
    name = op.upper()
    if name not in ABS_ERROR_OPERATORS:
        known = ", ".join(ABS_ERROR_OPERATORS)
        raise ValueError(f"{op} is not an ABS_ERROR operator; known: {known}")
    if (name == "POW") != (y is not None):
        raise ValueError("POW takes x and y; the other ABS_ERROR operators take only x")
    xa = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if name == "EXP":
            return 1.0 + np.abs(xa)
        if name == "POW":
            ya = np.asarray(y, dtype=np.float64)
            term = np.log(np.abs(xa)) * ya
            # log|x| * y is 0 * inf for pow(0, 0), pow(inf, 0) and pow(1, inf), where the
            # spec's formula gives NaN; IEEE pow's result there is exactly 1, so the term
            # is taken as 0 (bound 2) rather than leaving the output unbounded.
            term = np.where(np.isnan(term) & ~np.isnan(xa) & ~np.isnan(ya), 0.0, term)
            return np.asarray(2.0 * (1.0 + np.abs(term)))
        if name == "SIGMOID":
            return 2.0 * (1.0 + np.abs(xa))
        if name == "TANH":
            return 4.0 * (1.0 + np.abs(xa))
    return xa.copy()  # SIN, COS: the input itself


@dataclass(frozen=True)
class DotProductBoundInputs:
    """Inputs of the abs-input pass, and the bias maximum the descriptor records."""

    inputs: tuple[np.ndarray, ...]
    weight: np.ndarray | None
    bias: np.ndarray | None
    bias_abs_max: float


def dot_product_bound_inputs(
    inputs: np.ndarray | Sequence[np.ndarray],
    weight: np.ndarray | None,
    bias: np.ndarray | None = None,
    *,
    local_bound: bool,
) -> DotProductBoundInputs:
    """Absolute values of a dot product operator's tensors, for the abs-input pass.

    ``inputs`` is the data tensor, or several (FFT2D's real and imaginary parts) that
    together play the role of the rule's 'input'.  ``weight`` is None for operators
    whose weights are constants the operator supplies (FFT2D, RFFT2D, REDUCE_SUM,
    AVG_POOL2D): the caller's fp64 evaluation uses their absolute values itself.

    Without ``local_bound`` every input element is replaced by the largest input
    magnitude, so the bound covers fast algorithms (Winograd, FFT) that mix inputs
    across the window; the weights and bias keep their own magnitudes either way.
    ``local_bound`` is the operator's attribute when it has one (default false) and
    true for operators without it (see ``rules.has_local_bound_attribute``).

    The caller then evaluates the operator in fp64 on ``inputs``, ``weight``, ``bias``
    and passes that result to ``check`` as the bound, with ``bias_abs_max`` in the
    descriptor.
    """
    seq = (inputs,) if isinstance(inputs, np.ndarray) else tuple(inputs)
    if not seq:
        raise ValueError("dot_product_bound_inputs needs at least one input tensor")
    abs_inputs = tuple(np.abs(np.asarray(a, dtype=np.float64)) for a in seq)
    if not local_bound:
        # One maximum over all of the rule's input elements, real and imaginary alike.
        # NaN inputs give NaN results wherever they reach (checked as such); they must
        # not turn every other element's bound into NaN.
        finite_or_inf = [a[~np.isnan(a)] for a in abs_inputs]
        peak = max((float(np.max(a)) for a in finite_or_inf if a.size), default=0.0)
        abs_inputs = tuple(np.full(a.shape, peak) for a in abs_inputs)
    weight_abs = None if weight is None else np.abs(np.asarray(weight, dtype=np.float64))
    bias_abs = None if bias is None else np.abs(np.asarray(bias, dtype=np.float64))
    bias_max = float(np.max(bias_abs)) if bias_abs is not None and bias_abs.size else 0.0
    return DotProductBoundInputs(abs_inputs, weight_abs, bias_abs, bias_max)

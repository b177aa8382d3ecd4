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
from typing import TYPE_CHECKING

import numpy as np

from conformance.compliance_descriptor import Magnitude
from conformance.dtypes import FP32, DType, from_numpy, is_float_storage
from conformance.operator_table import OperatorTable

from .bounds import abs_error_scale, calc_abs_error_bound

if TYPE_CHECKING:
    from .revision_rules import RevisionRules

# The per-element quantity stored in the bound tensor of each ABS_ERROR operator,
# with the calcAbsErrorBound constants that go with it (lower_bound, normal_divisor,
# magnitude, input_offset), by revision (revision_rules.RULES picks the table).  In the
# draft SIN and COS scale by the input rather than the result, so their bound tensor is
# the input and the offset rebuilds calcAbsErrorBound's second argument from it.
ABS_ERROR_OPERATORS: OperatorTable[tuple[float, float, Magnitude, float]] = OperatorTable(
    {
        "EXP": (0.0, 1.0, Magnitude.REFERENCE, 0.0),
        "POW": (0.0, 1.0, Magnitude.REFERENCE, 0.0),
        "SIGMOID": (0.0, 1.0, Magnitude.REFERENCE, 0.0),
        "TANH": (0.5, 1.0, Magnitude.REFERENCE, 0.0),
        "COS": (0.0, 2.0, Magnitude.INPUT, 1.0),
        "SIN": (0.0, 2.0, Magnitude.INPUT, 0.0),
    }
)
# In 1.0 COS, SIN and POW are no single calcAbsErrorBound of the result, so their bound
# tensor is err_bnd itself (Magnitude.BOUND); LOG joins with an absolute bound.
ABS_ERROR_OPERATORS_1_0: OperatorTable[tuple[float, float, Magnitude, float]] = OperatorTable(
    {
        "EXP": (0.0, 1.0, Magnitude.REFERENCE, 0.0),
        "POW": (0.0, 1.0, Magnitude.BOUND, 0.0),
        "SIGMOID": (0.0, 1.0, Magnitude.REFERENCE, 0.0),
        "TANH": (0.5, 1.0, Magnitude.REFERENCE, 0.0),
        "LOG": (0.5, 1.0, Magnitude.REFERENCE, 0.0),
        "COS": (0.0, 2.0, Magnitude.BOUND, 0.0),
        "SIN": (0.0, 2.0, Magnitude.BOUND, 0.0),
    }
)


def _rules() -> RevisionRules:
    from .revision_rules import current  # imports this module's tables

    return current()


def abs_error_operators() -> dict[str, tuple[float, float, Magnitude, float]]:
    """The ABS_ERROR operators of the process's spec, with their constants."""
    return _rules().abs_error_operators.value


def abs_error_bound_tensor(
    op: str,
    x: np.ndarray,
    y: np.ndarray | None = None,
    *,
    out: DType | None = None,
    ref: np.ndarray | None = None,
) -> np.ndarray:
    """The fp64 bound tensor for ABS_ERROR operator ``op`` with input ``x`` (and, for
    POW, exponent ``y``), broadcast to the output shape, by the process's spec.

    TOSA 1.0's formulas also need the output type ``out`` (EXP, TANH and POW use a
    larger constant for fp32; COS, SIN and POW floor at its normal_min) and POW the
    fp64 reference ``ref``.
    """
    name = op.upper()
    table = abs_error_operators()
    if name not in table:
        known = ", ".join(table)
        raise ValueError(f"{op} is not an ABS_ERROR operator; known: {known}")
    if (name == "POW") != (y is not None):
        raise ValueError("POW takes x and y; the other ABS_ERROR operators take only x")
    xa = np.asarray(x, dtype=np.float64)
    if _rules().abs_formulas.value == "1.0":
        if out is None or (name == "POW" and ref is None):
            raise ValueError(
                f"TOSA 1.0's {name} bound needs the output type (and POW the reference)"
            )
        return _bound_1_0(name, xa, y, out, ref)
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


def _bound_1_0(
    name: str, x: np.ndarray, y: np.ndarray | None, out: DType, ref: np.ndarray | None
) -> np.ndarray:
    """TOSA 1.0's bound tensors (the operators' Precision Requirements)."""
    # err_base: 3 for fp32, else 1 (EXP, TANH; POW says is_same<T, fp32_t>, read as
    # its in_out_t).
    err_base = 3.0 if out == FP32 else 1.0
    nmin = out.fp.normal_min
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if name == "EXP":
            return err_base + 2.0 * np.abs(x)
        if name == "SIGMOID":
            return 2.0 * (1.0 + np.abs(x))
        if name == "TANH":
            return 4.0 * (err_base + 2.0 * np.abs(x))
        if name == "LOG":
            return np.full(x.shape, 5.0)
        if name == "COS":  # calcAbsErrorBound(1+abs(x), 1, 0, 2)
            return calc_abs_error_bound(1.0 + np.abs(x), np.ones(x.shape), 0.0, 2.0, out, "floored")
        if name == "SIN":  # max(calcAbsErrorBound(x, 2, 0, 2), pi*normal_min)
            two = np.full(x.shape, 2.0)
            bnd = calc_abs_error_bound(x, two, 0.0, 2.0, out, "floored")
            return np.maximum(bnd, np.pi * nmin)
    assert name == "POW" and y is not None and ref is not None
    return _pow_bound_1_0(x, np.asarray(y, dtype=np.float64), np.asarray(ref, np.float64), out)


def _pow_bound_1_0(x: np.ndarray, y: np.ndarray, ref: np.ndarray, out: DType) -> np.ndarray:
    """POW's err_bnd (1.0.1's fix): the error of exp(y * log(x)) with the product's
    error carried through.  Inputs the text calls undefined (an infinity or NaN, x < 0,
    x == 0 with y <= 0; REQUIREd away by POW.tosac) get an infinite bound; x == 0 with
    y > 0 (result 0) and x > 0 with y == 0 (result 1) must be exact."""
    x, y, ref = np.broadcast_arrays(x, y, ref)
    err_base = 3.0 if out == FP32 else 1.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ylogx = y * np.log(x)
        mul_err = calc_abs_error_bound(ylogx, np.full(x.shape, 5.5), 0.0, 1.0, out, "floored")
        # lower_bound is abs(0.55 * y), per element: max(lower / 5.5, ...) by hand.
        mul_err = np.maximum(mul_err, abs_error_scale(out, 1.0) * np.abs(0.55 * y))
        exp_bv = err_base + 2.0 * np.abs(ylogx + mul_err)
        exp_err = calc_abs_error_bound(ref, exp_bv, 0.0, 1.0, out, "floored")
        bound = ref * np.expm1(mul_err) + exp_err
    finite = np.isfinite(x) & np.isfinite(y)
    undefined = ~finite | (x < 0) | ((x == 0) & (y <= 0))
    exact = finite & (((x == 0) & (y > 0)) | ((x > 0) & (y == 0)))
    bound = np.where(exact, 0.0, bound)
    return np.where(undefined, np.inf, bound)


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

    TOSA 1.0 reads every absolute value as at least normal_min of the input type
    (``abs_floor``); pass the first input as stored so its type is known.
    """
    seq = (inputs,) if isinstance(inputs, np.ndarray) else tuple(inputs)
    if not seq:
        raise ValueError("dot_product_bound_inputs needs at least one input tensor")
    floor = abs_floor(seq[0])

    def absolute(a: np.ndarray) -> np.ndarray:
        v = np.abs(np.asarray(a, dtype=np.float64))
        return np.maximum(v, floor) if floor else v

    abs_inputs = tuple(absolute(a) for a in seq)
    if not local_bound:
        # One maximum over all of the rule's input elements, real and imaginary alike.
        # NaN inputs give NaN results wherever they reach (checked as such); they must
        # not turn every other element's bound into NaN.
        finite_or_inf = [a[~np.isnan(a)] for a in abs_inputs]
        peak = max((float(np.max(a)) for a in finite_or_inf if a.size), default=0.0)
        abs_inputs = tuple(np.full(a.shape, peak) for a in abs_inputs)
    weight_abs = None if weight is None else absolute(weight)
    bias_abs = None if bias is None else absolute(bias)
    bias_max = float(np.max(bias_abs)) if bias_abs is not None and bias_abs.size else 0.0
    return DotProductBoundInputs(abs_inputs, weight_abs, bias_abs, bias_max)


def abs_floor(stored_input: np.ndarray) -> float:
    """The least absolute value the abs-input pass reads (TOSA 1.0's
    ``apply_max_s(abs(v), normal_min<in_t>())`` for input, weight and bias): normal_min
    of the input's type, known from its storage; 0 in the draft, or when the array is
    fp64 and so names no TOSA type."""
    if not _rules().dot_product.value.floor_abs_inputs:
        return 0.0
    dt = np.asarray(stored_input).dtype
    if dt == np.float64 or not is_float_storage(dt):
        return 0.0
    return float(from_numpy(dt).fp.normal_min)

"""Where the spec defines the sign of a zero result of an exact operator, and where not.

Every floating-point output of an operator in the precision table's "Non NaN results
must be exact" row, or of a data-movement operator, is checked with EXACT_NAN, which
compares the sign of zero.  That is right wherever the spec fixes the sign:

* the result element is an operand copied bit for bit (tensor_read / tensor_write):
  data movement, CONST, IDENTITY, SELECT, and PAD's pad_const;
* the operator sets it: ABS writes -0.0 as 0.0, and the floating-point behavior
  tables of ABS and NEGATE (chapter ewise_unary) give ABS(+-0) = +0, NEGATE(-0) = +0,
  NEGATE(+0) = -0.

It is not where a selection chooses between -0 and +0: apply_max_s / apply_min_s
compare with ``a >= b`` / ``a < b``, which cannot tell the two zeros apart (the
comparison row of the precision table says so: "The sign of the zero is ignored"),
so which of the two the helper returns is a tie-break of its wording, not a rule
about zero signs.  IEEE 754-2019 maximum/minimum and real hardware break the tie
differently (IREE's CLAMP(-0.0, max_val=0.0) is -0.0 where the pseudocode gives
+0.0).  There a zero result may have either sign; a zero whose candidates all carry
one sign (MAXIMUM(-0.0, -1.0)) is still compared.

``ZERO_SIGN`` is the table (docs/compliance.md, "Signed zero"); ``tied_zeros`` gives,
for an operator of the second kind, the output elements whose candidates include both
zeros.  The runner's judge uses it when the plain check fails (conformance.rejudge).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from conformance.operator_table import family
from reference.compliance import DATA_MOVEMENT_OPERATORS
from reference.context import OpContext
from reference.engine import to_storage
from reference.ops.tensor_pool_fft import window_any

Compared = Literal["always", "unless tied"]


@dataclass(frozen=True)
class ZeroSignRule:
    operators: tuple[str, ...]
    compared: Compared
    source: str  # the spec text the rule rests on
    reason: str


COPIES = ZeroSignRule(
    ("CONST", "IDENTITY", "SELECT", *sorted(DATA_MOVEMENT_OPERATORS)),
    "always",
    "pseudocode of each operator: tensor_read / tensor_write of an operand element "
    "(PAD: of pad_const)",
    "the result is an operand (or attribute) copied bit for bit, sign of zero included",
)
SET_BY_OPERATOR = ZeroSignRule(
    ("ABS", "NEGATE"),
    "always",
    "ABS.tosac: -0.0 becomes 0.0; ewise_unary, ABS and NEGATE floating-point behavior: "
    "ABS(-0) = ABS(+0) = +0, NEGATE(-0) = +0, NEGATE(+0) = -0",
    "the spec states the sign of each zero result",
)
SELECTIONS = ZeroSignRule(
    (
        "CLAMP",
        "MAXIMUM",
        "MINIMUM",
        "MAX_POOL2D",
        "MAX_POOL2D_ADAPTIVE",
        "REDUCE_MAX",
        "REDUCE_MIN",
    ),
    "unless tied",
    "arithmetic_helpers: apply_max_s 'if (a >= b) return a; else return b;', apply_min_s "
    "'if (a < b) return a; else return b;', apply_clip_s; introduction, precision table, "
    "comparison row: 'The sign of the zero is ignored'",
    "a comparison cannot tell -0 from +0, so a zero chosen between the two may have "
    "either sign; a zero whose candidates all have one sign is compared",
)
ZERO_SIGN: tuple[ZeroSignRule, ...] = (COPIES, SET_BY_OPERATOR, SELECTIONS)
TIE_OPERATORS: frozenset[str] = family(frozenset(SELECTIONS.operators))


def _zeros(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(is -0.0, is +0.0) element-wise."""
    wide = np.asarray(values).astype(np.float64)
    zero = wide == 0
    return zero & np.signbit(wide), zero & ~np.signbit(wide)


def _attribute(ctx: OpContext, name: str) -> np.ndarray:
    """A float in_out_t attribute as the operator reads it (rounded to the type)."""
    dt = ctx.dtype("in_out_t")
    raw = np.asarray(ctx.attr(name)).astype(np.float64)
    return np.asarray(to_storage(raw, dt)).astype(np.float64)


def tied_zeros(ctx: OpContext) -> np.ndarray | None:
    """For a selection operator with a float output, the output elements whose
    candidates include both -0.0 and +0.0 (whatever the result is); None for every
    other operator."""
    name = ctx.name
    if name not in TIE_OPERATORS or not ctx.output_tensor().dtype.is_float:
        return None
    shape = ctx.out_shape()
    if name in ("MAXIMUM", "MINIMUM"):
        na, pa = _zeros(np.broadcast_to(ctx.arg("input1"), shape))
        nb, pb = _zeros(np.broadcast_to(ctx.arg("input2"), shape))
        neg, pos = na | nb, pa | pb
    elif name == "CLAMP":
        nx, px = _zeros(ctx.arg("input"))
        nlo, plo = _zeros(_attribute(ctx, "min_val"))
        nhi, phi = _zeros(_attribute(ctx, "max_val"))
        neg, pos = nx | nlo | nhi, px | plo | phi
    elif name in ("MAX_POOL2D", "MAX_POOL2D_ADAPTIVE"):  # the same windows (MAX_POOL2D.tosac)
        nx, px = _zeros(ctx.arg("input"))
        neg, pos = window_any(ctx, nx), window_any(ctx, px)
    else:  # REDUCE_MAX, REDUCE_MIN: the output keeps the axis with size 1
        axis = int(ctx.attr("axis"))
        nx, px = _zeros(ctx.arg("input"))
        neg = np.any(nx, axis=axis, keepdims=True)
        pos = np.any(px, axis=axis, keepdims=True)
    return np.asarray(np.broadcast_to(neg & pos, shape))

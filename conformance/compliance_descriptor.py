"""What an output has to satisfy: the compliance mode, its parameters, and where the
rule comes from.

A descriptor is plain data.  It holds no arrays: per-element bounds (the abs-input
pass of a dot product, the operator inputs an absolute error bound is built from) are
stored beside it as a separate tensor, because the vector format keeps them in
``bound-K.npy``.  ``to_json`` / ``from_json`` give the dict form kept in the vector's
metadata.  It is part of the core model (it depends on nothing but the dtypes), so the
vector format reads it without importing ``reference``; ``reference.compliance``
re-exports it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Any

from conformance.dtypes import DType, dtype


class Mode(Enum):
    """Compliance modes, one for each kind of rule in the spec's precision table."""

    EXACT = "EXACT"  # integer, bool and shape outputs: values equal
    EXACT_NAN = "EXACT_NAN"  # float outputs that must be exact: NaN matches NaN, zero sign too
    ULP = "ULP"  # within a number of ulp (tosa_reference_check_fp)
    ABS_ERROR = "ABS_ERROR"  # bound from calcAbsErrorBound (EXP, POW, SIGMOID, TANH, SIN, COS)
    REDUCE_PRODUCT = "REDUCE_PRODUCT"  # bound grows with the number of factors
    RESIZE = "RESIZE"  # bound proportional to the largest input magnitude
    DOT_PRODUCT = "DOT_PRODUCT"  # per-element and statistical dot product tests
    # integer outputs within a range around an fp64 scaling (TOSA 1.0 RESCALE with
    # INEXACT_ROUND); the bound tensor holds that scaling plus the output zero point
    INT_RANGE = "INT_RANGE"
    # The values of a block-scaled cast (TOSA 1.1 CAST_TO_BLOCK_SCALED), judged together
    # with the scale output the parameters name (tosa_reference_check_scale): each
    # block's returned scale within 1 ulp of the reference scale, each value within
    # its ulp of x / the returned scale.  The bound tensor holds the input x.  A
    # block-scaled composite output (TOSA 1.1 CAST to bs32_*) is judged so alone: its
    # scales are its own.
    SCALED_VALUES = "SCALED_VALUES"
    # The block scales a SCALED_VALUES output names: judged by that output's check,
    # never on their own (the rule checks them once, against the values' blocks).
    BLOCK_SCALES = "BLOCK_SCALES"


class Magnitude(Enum):
    """Which value scales an ABS_ERROR bound (calcAbsErrorBound's first argument)."""

    REFERENCE = "REFERENCE"  # the fp64 reference result (EXP, POW, SIGMOID, TANH)
    INPUT = "INPUT"  # the operator input x, held in the bound tensor (SIN, COS)
    BOUND = "BOUND"  # the bound tensor is err_bnd itself (TOSA 1.0 COS, SIN, POW)


# Data sets a dot product test may use: Appendix A's S=0..5, and -1 for any other
# data with enough distinct outputs.
DATA_SETS = frozenset(range(-1, 6))


@dataclass(frozen=True)
class UlpParams:
    """``zero_sign``: the operator's row also says underflows must give a zero of the
    correct sign, which the ulp interval alone does not enforce (see fp_check)."""

    ulp: float
    zero_sign: bool = False
    # ulp allowed on the side toward zero where it differs (TOSA 1.0 CAST between floats)
    toward_zero: float | None = None

    def __post_init__(self) -> None:
        _require(math.isfinite(self.ulp) and self.ulp > 0, f"ulp must be > 0, got {self.ulp}")
        _require(
            self.toward_zero is None or _finite_nonneg(self.toward_zero),
            f"toward_zero must be >= 0, got {self.toward_zero}",
        )


@dataclass(frozen=True)
class AbsErrorParams:
    """calcAbsErrorBound's constant arguments.

    With ``Magnitude.REFERENCE`` the bound tensor holds calcAbsErrorBound's
    ``bounds_value`` (for EXP, ``1 + abs(x)``).  With ``Magnitude.INPUT`` it holds the
    input ``x`` itself, and ``bounds_value`` is ``abs(x) + input_offset``; SIN and COS
    need ``x`` twice, which a single bound tensor could not otherwise carry.
    """

    lower_bound: float = 0.0
    normal_divisor: float = 1.0
    magnitude: Magnitude = Magnitude.REFERENCE
    input_offset: float = 0.0

    def __post_init__(self) -> None:
        _require(_finite_nonneg(self.lower_bound), f"lower_bound must be >= 0: {self.lower_bound}")
        _require(
            math.isfinite(self.normal_divisor) and self.normal_divisor > 0,
            f"normal_divisor must be > 0: {self.normal_divisor}",
        )
        _require(
            _finite_nonneg(self.input_offset), f"input_offset must be >= 0: {self.input_offset}"
        )
        _require(
            self.magnitude is Magnitude.INPUT or self.input_offset == 0.0,
            "input_offset only applies with Magnitude.INPUT",
        )


@dataclass(frozen=True)
class ReduceProductParams:
    n: int  # number of factors in each product
    zero_sign: bool = True  # the REDUCE_PRODUCT row requires signed underflow

    def __post_init__(self) -> None:
        _require(isinstance(self.n, int) and self.n >= 1, f"n must be an int >= 1: {self.n}")


@dataclass(frozen=True)
class ResizeParams:
    input_abs_max: float  # max(abs(input)) over the whole input tensor

    def __post_init__(self) -> None:
        _require(
            _finite_nonneg(self.input_abs_max), f"input_abs_max must be >= 0: {self.input_abs_max}"
        )


@dataclass(frozen=True)
class DotProductParams:
    """The constants of the dot product accuracy rule.

    ``local_bound`` does not change the check itself: it decides how the caller builds
    the abs-input pass whose result is passed to the check as the bound tensor (see
    ``dot_product_bound_inputs``).  It is recorded so a vector says which it used.
    """

    ks: int  # kernel size KS, the dot product length
    data_set: int  # Appendix A test set S, or -1
    acc_dtype: DType
    bias_abs_max: float = 0.0  # max(abs(bias)); > 0 adds one to ksb
    local_bound: bool = True
    # The element types of the rule's 'input' and 'weight' (in_t, weight_t), where the
    # revision's ABS_BOUND and VARIANCE_ERROR_BOUND depend on them (TOSA 1.1); empty
    # where they do not.
    input_dtypes: tuple[DType, ...] = ()

    def __post_init__(self) -> None:
        _require(isinstance(self.ks, int) and self.ks >= 1, f"ks must be an int >= 1: {self.ks}")
        _require(self.data_set in DATA_SETS, f"data_set must be one of -1..5, got {self.data_set}")
        _require(self.acc_dtype.is_float, f"acc_dtype must be floating-point: {self.acc_dtype}")
        _require(
            _finite_nonneg(self.bias_abs_max), f"bias_abs_max must be >= 0: {self.bias_abs_max}"
        )


@dataclass(frozen=True)
class IntRangeParams:
    """RESCALE's INEXACT_ROUND: the output zero point (the error bound grows with the
    scaled value without it and with it) and whether the output is read unsigned (the
    range is clipped to the unsigned type)."""

    output_zp: int
    unsigned: bool = False

    def __post_init__(self) -> None:
        _require(isinstance(self.output_zp, int), f"output_zp must be an int: {self.output_zp}")


@dataclass(frozen=True)
class ScaledValuesParams:
    """The partner output holding the scale of each block of ``block_size`` consecutive
    values of the innermost dimension (its shape: the values' with that dimension
    divided by ``block_size``).  For a block-scaled composite output, which holds its
    scales itself, the output's own name."""

    scale_tensor_name: str
    block_size: int

    def __post_init__(self) -> None:
        _require(
            isinstance(self.scale_tensor_name, str) and bool(self.scale_tensor_name),
            f"scale_tensor_name must name an output: {self.scale_tensor_name!r}",
        )
        _require(
            isinstance(self.block_size, int) and self.block_size >= 2,
            f"block_size must be an int >= 2: {self.block_size}",
        )


@dataclass(frozen=True)
class BlockScalesParams:
    """The SCALED_VALUES output these are the block scales of."""

    value_tensor_name: str

    def __post_init__(self) -> None:
        _require(
            isinstance(self.value_tensor_name, str) and bool(self.value_tensor_name),
            f"value_tensor_name must name an output: {self.value_tensor_name!r}",
        )


Params = (
    UlpParams
    | AbsErrorParams
    | ReduceProductParams
    | ResizeParams
    | DotProductParams
    | IntRangeParams
    | ScaledValuesParams
    | BlockScalesParams
)

_PARAMS_FOR_MODE: dict[Mode, type | None] = {
    Mode.EXACT: None,
    Mode.EXACT_NAN: None,
    Mode.ULP: UlpParams,
    Mode.ABS_ERROR: AbsErrorParams,
    Mode.REDUCE_PRODUCT: ReduceProductParams,
    Mode.RESIZE: ResizeParams,
    Mode.DOT_PRODUCT: DotProductParams,
    Mode.INT_RANGE: IntRangeParams,
    Mode.SCALED_VALUES: ScaledValuesParams,
    Mode.BLOCK_SCALES: BlockScalesParams,
}


@dataclass(frozen=True)
class ComplianceDescriptor:
    """How one output tensor is checked.

    ``dtype`` is the output's TOSA element type; ``rule`` names the spec rule the mode
    implements, e.g. "introduction: Main Inference precision requirements, RECIPROCAL
    1 ulp", so a failure can be traced back to the text that demands it.
    """

    mode: Mode
    dtype: DType
    rule: str
    params: Params | None = None

    def __post_init__(self) -> None:
        want = _PARAMS_FOR_MODE[self.mode]
        got = type(self.params) if self.params is not None else None
        _require(
            got is want,
            f"{self.mode.value} takes {_type_name(want)} parameters, got {_type_name(got)}",
        )
        if self.mode is Mode.SCALED_VALUES:
            # mxint8 is a fixed-point value type of the block-scaled casts; a composite
            # (kind "block") holds values and scales together
            _require(
                self.dtype.is_float or self.dtype.kind in ("fixed", "block"),
                f"SCALED_VALUES needs a float, fixed-point or block-scaled output, "
                f"not {self.dtype}",
            )
        elif self.mode in (Mode.EXACT, Mode.INT_RANGE):
            _require(
                not self.dtype.is_float,
                f"{self.mode.value} is for integer, bool and shape outputs; use EXACT_NAN "
                f"for {self.dtype}",
            )
        else:
            _require(
                self.dtype.is_float, f"{self.mode.value} needs a float output, not {self.dtype}"
            )
        _require(bool(self.rule.strip()), "rule must name the spec rule")

    @property
    def needs_bound(self) -> bool:
        """Whether ``check`` needs a per-element bound tensor for this descriptor."""
        return self.mode in (Mode.ABS_ERROR, Mode.DOT_PRODUCT, Mode.INT_RANGE, Mode.SCALED_VALUES)

    @property
    def partner(self) -> str | None:
        """The other output this one is judged together with, if any."""
        if isinstance(self.params, ScaledValuesParams):
            # a composite's scales are its own, no other output's
            return None if self.dtype.kind == "block" else self.params.scale_tensor_name
        if isinstance(self.params, BlockScalesParams):
            return self.params.value_tensor_name
        return None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"mode": self.mode.value, "dtype": self.dtype.name, "rule": self.rule}
        if self.params is not None:
            out["params"] = _params_to_json(self.params)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ComplianceDescriptor:
        try:
            mode = Mode(data["mode"])
            out_type = dtype(data["dtype"])
            rule = data["rule"]
        except KeyError as exc:
            raise ValueError(f"compliance descriptor: missing or unknown {exc}") from None
        except ValueError as exc:
            raise ValueError(f"compliance descriptor: {exc}") from None
        extra = set(data) - {"mode", "dtype", "rule", "params"}
        _require(not extra, f"compliance descriptor: unexpected keys {sorted(extra)}")
        raw = data.get("params")
        params = None if raw is None else _params_from_json(mode, raw)
        return cls(mode, out_type, rule, params)


def _params_to_json(p: Params) -> dict[str, Any]:
    if isinstance(p, UlpParams):
        ulp: dict[str, Any] = {"ulp": p.ulp, "zero_sign": p.zero_sign}
        if p.toward_zero is not None:
            ulp["toward_zero"] = p.toward_zero
        return ulp
    if isinstance(p, AbsErrorParams):
        return {
            "lower_bound": p.lower_bound,
            "normal_divisor": p.normal_divisor,
            "magnitude": p.magnitude.value,
            "input_offset": p.input_offset,
        }
    if isinstance(p, ReduceProductParams):
        return {"n": p.n, "zero_sign": p.zero_sign}
    if isinstance(p, ResizeParams):
        return {"input_abs_max": p.input_abs_max}
    if isinstance(p, IntRangeParams):
        return {"output_zp": p.output_zp, "unsigned": p.unsigned}
    if isinstance(p, ScaledValuesParams):
        return {"scale_tensor_name": p.scale_tensor_name, "block_size": p.block_size}
    if isinstance(p, BlockScalesParams):
        return {"value_tensor_name": p.value_tensor_name}
    return {
        "ks": p.ks,
        "data_set": p.data_set,
        "acc_dtype": p.acc_dtype.name,
        "bias_abs_max": p.bias_abs_max,
        "local_bound": p.local_bound,
        **({"input_dtypes": [t.name for t in p.input_dtypes]} if p.input_dtypes else {}),
    }


def _params_from_json(mode: Mode, raw: dict[str, Any]) -> Params:
    cls = _PARAMS_FOR_MODE[mode]
    if cls is None:
        raise ValueError(f"{mode.value} takes no parameters")
    kwargs = dict(raw)
    if "magnitude" in kwargs:
        kwargs["magnitude"] = Magnitude(kwargs["magnitude"])
    if "acc_dtype" in kwargs:
        kwargs["acc_dtype"] = dtype(kwargs["acc_dtype"])
    if "input_dtypes" in kwargs:
        kwargs["input_dtypes"] = tuple(dtype(t) for t in kwargs["input_dtypes"])
    try:
        params: Params = cls(**kwargs)
        return params
    except TypeError as exc:
        raise ValueError(f"compliance descriptor {mode.value} params: {exc}") from None


def _type_name(t: type | None) -> str:
    return "no" if t is None else t.__name__


def _finite_nonneg(v: float) -> bool:
    return math.isfinite(v) and v >= 0


def _require(cond: bool, message: str) -> None:
    if not cond:
        raise ValueError(message)

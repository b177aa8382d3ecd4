"""TOSA element types, mapped to numpy / ml_dtypes storage.

Each type carries what the rest of the project needs to know about it: its integer
range (from the spec's "Number formats" table) or its floating-point parameters
(``normal_frac``, ``normal_min``, ``normal_max`` as defined by the spec's numeric
accuracy helpers).  ``i48`` is held in ``int64`` with its range checked; ``i4`` is
held in ``int8``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple

import ml_dtypes
import numpy as np

Kind = Literal["bool", "int", "float", "shape", "fixed", "block"]


class IntRange(NamedTuple):
    """The values of an integer-valued type (int, bool, shape): ``lo, hi = dt.int_range``."""

    min: int
    max: int


class FloatFormat(NamedTuple):
    """The parameters of a floating-point type, none of them optional."""

    exponent_bits: int
    normal_frac: int  # number of stored mantissa bits
    normal_min: float  # smallest positive normal value
    normal_max: float  # largest finite value
    has_inf: bool
    has_nan: bool


@dataclass(frozen=True)
class DType:
    """One TOSA element type."""

    name: str  # short name used on the command line and in files: "i8", "fp16", "shape"
    kind: Kind
    bits: int  # storage width in the TOSA sense (i4 -> 4, i48 -> 48)
    storage: np.dtype  # numpy dtype tensors of this type are held in
    min: int | float | None = None
    max: int | float | None = None
    # Floating-point parameters, None for non-float types.
    exponent_bits: int | None = None
    normal_frac: int | None = None  # number of stored mantissa bits
    normal_min: float | None = None  # smallest positive normal value
    normal_max: float | None = None  # largest finite value
    has_inf: bool = False
    has_nan: bool = False
    signed: bool = True  # fp8ue8m0 has no sign bit
    # mxint8 ("fixed"): two's-complement storage with this many implicit fraction bits.
    frac_bits: int = 0
    # A block-scaled composite ("block", TOSA 1.1): its value and scale types' names
    # and the block size of the innermost dimension.
    block_value: str = ""
    block_scale: str = ""
    block_size: int = 0

    @property
    def spec_name(self) -> str:
        """The name tosa.xml uses, e.g. ``i8_t``; shape values are ``size_t``."""
        return "size_t" if self.kind == "shape" else f"{self.name}_t"

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_int(self) -> bool:
        return self.kind == "int"

    @property
    def size_bytes(self) -> int:
        """Element size used by the tensor size limit: sub-byte types count as one byte."""
        return max(1, self.bits // 8)

    @property
    def int_range(self) -> IntRange:
        """The type's integer range; TypeError for a floating-point type (use ``fp``)."""
        if self.kind in ("float", "fixed", "block") or self.min is None or self.max is None:
            raise TypeError(f"{self.name} is not an integer type: it has no int_range")
        return IntRange(int(self.min), int(self.max))

    @property
    def fp(self) -> FloatFormat:
        """The type's floating-point parameters; TypeError for any other kind."""
        if (
            self.kind != "float"
            or self.exponent_bits is None
            or self.normal_frac is None
            or self.normal_min is None
            or self.normal_max is None
        ):
            raise TypeError(f"{self.name} is not a floating-point type: it has no fp format")
        return FloatFormat(
            self.exponent_bits,
            self.normal_frac,
            self.normal_min,
            self.normal_max,
            self.has_inf,
            self.has_nan,
        )

    @property
    def finite_range(self) -> tuple[float, float]:
        """The lowest and highest finite values of any kind of type, as floats."""
        if self.kind == "float":
            lowest = -self.fp.normal_max if self.signed else self.fp.normal_min
            return lowest, self.fp.normal_max
        if self.kind in ("fixed", "block"):
            return float(self.min or 0), float(self.max or 0)
        lo, hi = self.int_range
        return float(lo), float(hi)

    def in_range(self, values: np.ndarray) -> np.ndarray:
        """Element-wise: is each integer value representable in this type."""
        if self.kind != "int":
            raise TypeError(f"{self.name} has no integer range")
        lo, hi = self.int_range
        v = np.asarray(values)
        return (v >= lo) & (v <= hi)

    def __str__(self) -> str:
        return self.name

    # Types are singletons compared with ``is``: copies of graphs and cases keep them.
    def __copy__(self) -> DType:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> DType:
        return self

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (dtype, (self.name,))


def _int(name: str, bits: int, storage: type, lo: int, hi: int) -> DType:
    return DType(name, "int", bits, np.dtype(storage), lo, hi)


def _float(
    name: str,
    bits: int,
    storage: type,
    exp_bits: int,
    frac: int,
    *,
    has_inf: bool,
    max_: float,
    has_nan: bool = True,
) -> DType:
    bias = (1 << (exp_bits - 1)) - 1
    return DType(
        name,
        "float",
        bits,
        np.dtype(storage),
        min=-max_,
        max=max_,
        exponent_bits=exp_bits,
        normal_frac=frac,
        normal_min=2.0 ** (1 - bias),
        normal_max=max_,
        has_inf=has_inf,
        has_nan=has_nan,
    )


# fp8e4m3 (OCP) has no infinity and uses the all-ones mantissa at the top exponent for
# NaN, so its largest value is 2**8 * 1.75 = 448 rather than the IEEE-style formula.
BOOL = DType("bool", "bool", 1, np.dtype(np.bool_), 0, 1)
I4 = _int("i4", 4, np.int8, -7, 7)  # int4_t excludes -8 (symmetric weights range)
I8 = _int("i8", 8, np.int8, -(1 << 7), (1 << 7) - 1)
I16 = _int("i16", 16, np.int16, -(1 << 15), (1 << 15) - 1)
I32 = _int("i32", 32, np.int32, -(1 << 31), (1 << 31) - 1)
I48 = _int("i48", 48, np.int64, -(1 << 47), (1 << 47) - 1)
FP8E4M3 = _float("fp8e4m3", 8, ml_dtypes.float8_e4m3fn, 4, 3, has_inf=False, max_=448.0)
FP8E5M2 = _float("fp8e5m2", 8, ml_dtypes.float8_e5m2, 5, 2, has_inf=True, max_=57344.0)
FP16 = _float("fp16", 16, np.float16, 5, 10, has_inf=True, max_=65504.0)
BF16 = _float("bf16", 16, ml_dtypes.bfloat16, 8, 7, has_inf=True, max_=2.0**128 - 2.0**120)
FP32 = _float("fp32", 32, np.float32, 8, 23, has_inf=True, max_=2.0**128 - 2.0**104)
# size_t / shape_t values: non-negative sizes up to (1 << (MAX_LOG2_SIZE + 1)) - 1 for the
# loosest level, but shape arithmetic (SUB_SHAPE) can go negative, so hold them in int64.
SHAPE = DType("shape", "shape", 64, np.dtype(np.int64), -(1 << 63), (1 << 63) - 1)
# minimum_s<i32_t>() / maximum_s<i32_t>(), which the pseudocode of many operators uses.
I32_MIN, I32_MAX = I32.int_range

# TOSA 1.1 (introduction, "Number formats"): 64-bit integers (EXT-INT64) and the
# microscaling element types of OCP-MX.  The fp4/fp6 formats have neither infinity nor
# NaN; fp8ue8m0 is an unsigned power of two, 2**-127 .. 2**127, with one NaN (0xFF) and
# no zero; mxint8 is an 8-bit two's-complement value with an implicit 1/64 scale.
I64 = _int("i64", 64, np.int64, -(1 << 63), (1 << 63) - 1)
FP4E2M1 = _float(
    "fp4e2m1", 4, ml_dtypes.float4_e2m1fn, 2, 1, has_inf=False, max_=6.0, has_nan=False
)
FP6E2M3 = _float(
    "fp6e2m3", 6, ml_dtypes.float6_e2m3fn, 2, 3, has_inf=False, max_=7.5, has_nan=False
)
FP6E3M2 = _float(
    "fp6e3m2", 6, ml_dtypes.float6_e3m2fn, 3, 2, has_inf=False, max_=28.0, has_nan=False
)
FP8UE8M0 = DType(
    "fp8ue8m0",
    "float",
    8,
    np.dtype(ml_dtypes.float8_e8m0fnu),
    min=2.0**-127,
    max=2.0**127,
    exponent_bits=8,
    normal_frac=0,
    normal_min=2.0**-127,
    normal_max=2.0**127,
    has_inf=False,
    has_nan=True,
    signed=False,
)
MXINT8 = DType("mxint8", "fixed", 8, np.dtype(np.int8), -2.0, 1.0 + 63 / 64, frac_bits=6)

# The scale and value types of the block-scaled set bs32_fp8ue8m0_set_t (introduction,
# "Supported Number Format Sets").
MX_SCALE = FP8UE8M0
MX_VALUES: tuple[DType, ...] = (FP8E4M3, FP8E5M2, FP6E3M2, FP6E2M3, FP4E2M1, MXINT8)
MX_BLOCK_SIZE = 32


def _block(value: DType) -> DType:
    name = f"bs{MX_BLOCK_SIZE}_{MX_SCALE.name}_{value.name}"
    return DType(
        name,
        "block",
        value.bits,
        value.storage,
        value.min,
        value.max,
        block_value=value.name,
        block_scale=MX_SCALE.name,
        block_size=MX_BLOCK_SIZE,
    )


BLOCK_SCALED: tuple[DType, ...] = tuple(_block(v) for v in MX_VALUES)
# The set name tosa.xml's <type_set>s use for all of them.
BLOCK_SCALED_SET = f"bs{MX_BLOCK_SIZE}_{MX_SCALE.name}_set_t"

ALL: tuple[DType, ...] = (
    BOOL, I4, I8, I16, I32, I48, FP8E4M3, FP8E5M2, FP16, BF16, FP32, SHAPE,
    I64, FP4E2M1, FP6E2M3, FP6E3M2, FP8UE8M0, MXINT8, *BLOCK_SCALED,
)  # fmt: skip
# The types of TOSA 1.1 alone: no pack of an earlier revision holds them.
TOSA_1_1_TYPES: frozenset[str] = frozenset(
    d.name for d in (I64, FP4E2M1, FP6E2M3, FP6E3M2, FP8UE8M0, MXINT8, *BLOCK_SCALED)
)
BY_NAME: dict[str, DType] = {d.name: d for d in ALL}


def dtype(name: str) -> DType:
    """Look up a type by short name (``i8``), spec name (``i8_t``) or ``size_t``/``shape_t``."""
    key = name.strip()
    if key in ("size_t", "shape_t", "size", "tensor_size_t"):
        return SHAPE
    if key.endswith("_t"):
        key = key[:-2]
    try:
        return BY_NAME[key]
    except KeyError:
        known = ", ".join(BY_NAME)
        raise KeyError(f"unknown TOSA element type {name!r}; known: {known}") from None


def from_numpy(dt: np.dtype) -> DType:
    """The TOSA type a numpy array of dtype ``dt`` holds (i4 and i48 cannot be told apart
    from i8/int64 by storage alone, so they map to i8 and shape respectively)."""
    dt = np.dtype(dt)
    for d in (BOOL, I8, I16, I32, FP8E4M3, FP8E5M2, FP16, BF16, FP32, SHAPE, FP4E2M1, FP6E2M3, FP6E3M2, FP8UE8M0):  # noqa: E501
        if d.storage == dt:
            return d
    raise KeyError(f"numpy dtype {dt} holds no TOSA element type")


def is_float_storage(dt: np.dtype) -> bool:
    """Whether numpy dtype ``dt`` holds floating-point values, ml_dtypes' narrow floats
    (bfloat16, float8) included, which numpy does not count as floating."""
    dt = np.dtype(dt)
    return dt.kind == "f" or any(d.storage == dt for d in ALL if d.is_float)

"""Mutants that flush denormals to zero (FTZ on results, DAZ on operands).

Flushing is how much real hardware runs by default (GPU and NPU fast-math modes,
Arm's FZ bit, x86 FTZ/DAZ).  The spec allows it for fp16, bf16 and fp32 and forbids it
for fp8e4m3 and fp8e5m2 (introduction, Supported Number Formats), so of the three
``ftz-*`` mutants one is compliant and must pass a pack, and two are bugs a pack must
catch:

* ``ftz-fp16-bf16-fp32``: flushes fp16/bf16/fp32 operands and results, declares
  nothing (the runner may accept flushing and records that it saw it);
* ``ftz-fp8``: flushes fp8 operands and results;
* ``ftz-declared-supported``: flushes like the first but declares its denormals
  ``supported``, so the runner must hold it to that and fail it.

Every operator with a mode of the flushed types is wrapped: it validates the graph
on its operands as given, then reads its inputs and float attributes flushed
(reference.flushing), the reference computes, and its results are flushed.
``fp8-denormals-flushed`` is the narrower original: fp8 inputs only.  They span every
operator group, so they live here rather than in a group's module."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from conformance.backends.mutants import (
    Effect,
    Result,
    Wrapper,
    mutant,
    with_attrs,
    with_values,
)
from conformance.backends.mutants.tools import FP8, fp8_operators
from conformance.dtypes import DType
from conformance.spec import Spec
from reference.compliance.denormals import FLUSH_ALLOWED, MUST_SUPPORT, SUPPORTED, flush
from reference.context import OpContext
from reference.flushing import flushed_attributes
from reference.registry import OpFunction


@mutant(
    "fp8-denormals-flushed",
    fp8_operators,
    "fp8e4m3 / fp8e5m2 inputs",
    "fp8 subnormal inputs are read as zero (denormals-are-zero), which the spec does not "
    "allow for fp8",
    "any fp8 vector with subnormal inputs: CAST from fp8, fp8 convolutions, data movement",
)
def _fp8_denormals_flushed(original: OpFunction, ctx: OpContext) -> Result:
    changes = {}
    for names in ctx.operands.inputs.values():
        for n in names:
            dt = ctx.block.tensors[n].dtype
            if dt not in FP8:
                continue
            v = np.asarray(ctx.values[n])
            f = v.astype(np.float64)
            sub = (f != 0) & (np.abs(f) < dt.fp.normal_min)
            if sub.any():
                changes[n] = np.where(sub, np.copysign(0.0, f), f).astype(v.dtype)
    return original(with_values(ctx, changes) if changes else ctx)


def operators_with(types: frozenset[DType]) -> Callable[[Spec], tuple[str, ...]]:
    """The operators with a mode that binds one of ``types`` (the ones a flush of
    those types can change; control flow runs its blocks' operators, wrapped too),
    asked of the spec model when the catalogue is built."""
    names = {t.name for t in types}

    def operators(spec: Spec) -> tuple[str, ...]:
        return tuple(
            sorted(
                op.name
                for op in spec.operators.values()
                if any(b.removesuffix("_t") in names for m in op.modes for b in m.bindings.values())
            )
        )

    return operators


NUMBER_FORMATS = "introduction, Supported Number Formats"


def flushing(types: frozenset[DType]) -> Wrapper:
    """A wrap that flushes the subnormals of ``types`` in an operator's operands (input
    tensors and float attributes) and in its results."""

    def wrap(original: OpFunction, ctx: OpContext) -> Result:
        values: dict[str, np.ndarray] = {}
        for names in ctx.operands.inputs.values():
            for n in names:
                dt = ctx.block.tensors[n].dtype
                held = ctx.values.get(n)
                if dt in types and isinstance(held, np.ndarray):  # never a block-scaled pair
                    flushed = flush(held, dt)
                    if flushed is not held:
                        values[n] = flushed
        attributes = flushed_attributes(ctx, types)
        if values or attributes:
            # A backend validates the graph as written (ERROR_IFs on attributes as
            # given) and only then computes with flushed operands.
            original(ctx)
        altered = with_values(ctx, values) if values else ctx
        if attributes:
            altered = with_attrs(altered, **{n: v for n, (v, _) in attributes.items()})
        result = original(altered)
        out: Result = {}
        for arg, produced in result.items():
            names = ctx.operands.outputs.get(arg, [])
            arrays = produced if isinstance(produced, list) else [produced]
            kept = []
            for n, arr in zip(names, arrays, strict=False):
                dt = ctx.block.tensors[n].dtype
                kept.append(flush(arr, dt) if dt in types else arr)
            kept += arrays[len(kept) :]
            out[arg] = kept if isinstance(produced, list) else kept[0]
        return out

    return wrap


def _ftz(
    name: str,
    types: frozenset[DType],
    bug: str,
    catches: str,
    breaks: str,
    effect: Effect = "wrong result",
    denormals: Mapping[str, str] | None = None,
) -> None:
    which = "/".join(t.name for t in sorted(types, key=lambda t: t.name))
    modes = f"{which} subnormal operands or results"
    mutant(
        name,
        operators_with(types),
        modes,
        bug,
        catches,
        effect,
        breaks=breaks,
        denormals=denormals,
        stacklevel=2,  # where each ftz mutant is declared, below
    )(flushing(types))


_ftz(
    "ftz-fp16-bf16-fp32",
    FLUSH_ALLOWED,
    "fp16, bf16 and fp32 denormals flushed to zero in operands and results (FTZ+DAZ, "
    "as IREE's CPU runtime does): allowed by the spec, so a pack must pass it",
    "nothing may: any failure is a false failure of the pack",
    f"{NUMBER_FORMATS}: fp16_t, bf16_t, fp32_t 'Denormal values must either be supported "
    "or flushed to zero' (allowed, not broken)",
    effect="compliant behaviour",
    denormals={},
)


_ftz(
    "ftz-fp8",
    MUST_SUPPORT,
    "fp8e4m3 and fp8e5m2 denormals flushed to zero in operands and results",
    "fp8 vectors with subnormal inputs or results: CAST from and to fp8, fp8 "
    "convolutions, data movement",
    f"{NUMBER_FORMATS}: fp8e4m3_t, fp8e5m2_t 'Denormal values must be supported'",
)


DECLARED_SUPPORTED: Mapping[str, str] = {t.name: SUPPORTED for t in FLUSH_ALLOWED}


_ftz(
    "ftz-declared-supported",
    FLUSH_ALLOWED,
    "flushes fp16, bf16 and fp32 denormals but declares them supported",
    "fp16/bf16/fp32 vectors with subnormal operands or results: exact operators "
    "(ABS, CLAMP, RESHAPE ...), CAST fp16 -> fp32, MUL",
    f"{NUMBER_FORMATS} with the backend's declaration: a backend that declares "
    "denormals supported must not flush them",
    denormals=DECLARED_SUPPORTED,
)

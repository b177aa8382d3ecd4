"""Mutants that flush denormals to zero (FTZ on results, DAZ on operands).

Flushing is how much real hardware runs by default (GPU and NPU fast-math modes,
Arm's FZ bit, x86 FTZ/DAZ).  The spec allows it for fp16, bf16 and fp32 and forbids it
for fp8e4m3 and fp8e5m2 (introduction, Supported Number Formats), so of these three
one is compliant and must pass a pack, and two are bugs a pack must catch:

* ``ftz-fp16-bf16-fp32``: flushes fp16/bf16/fp32 operands and results, declares
  nothing (the runner may accept flushing and records that it saw it);
* ``ftz-fp8``: flushes fp8 operands and results;
* ``ftz-declared-supported``: flushes like the first but declares its denormals
  ``supported``, so the runner must hold it to that and fail it.

Every operator with a mode of the flushed types is wrapped: it validates the graph
on its operands as given, then reads its inputs and float attributes flushed
(reference.flushing), the reference computes, and its results are flushed.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from conformance.backends.mutant_tools import register
from conformance.backends.mutants import Mutant, Result, Wrapper, with_attrs, with_values
from conformance.dtypes import DType
from conformance.spec import load_spec
from reference.compliance.denormals import FLUSH_ALLOWED, MUST_SUPPORT, SUPPORTED, flush
from reference.context import OpContext
from reference.flushing import flushed_attributes
from reference.registry import OpFunction


def operators_with(types: frozenset[DType]) -> tuple[str, ...]:
    """The operators with a mode that binds one of ``types`` (the ones a flush of
    those types can change; control flow runs its blocks' operators, wrapped too)."""
    names = {t.name for t in types}
    return tuple(
        sorted(
            op.name
            for op in load_spec().operators.values()
            if any(b.removesuffix("_t") in names for m in op.modes for b in m.bindings.values())
        )
    )


NUMBER_FORMATS = "introduction, Supported Number Formats"


def flushing(types: frozenset[DType]) -> Wrapper:
    """A wrap that flushes the subnormals of ``types`` in an operator's operands (input
    tensors and float attributes) and in its results."""

    def wrap(original: OpFunction, ctx: OpContext) -> Result:
        values: dict[str, np.ndarray] = {}
        for names in ctx.operands.inputs.values():
            for n in names:
                dt = ctx.block.tensors[n].dtype
                if dt in types and n in ctx.values:
                    flushed = flush(ctx.values[n], dt)
                    if flushed is not ctx.values[n]:
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
    name: str, types: frozenset[DType], bug: str, catches: str, breaks: str, **kw: object
) -> None:
    which = "/".join(t.name for t in sorted(types, key=lambda t: t.name))
    register(
        Mutant(
            name,
            operators_with(types),
            f"{which} subnormal operands or results",
            bug,
            catches,
            wrap=flushing(types),
            **kw,  # type: ignore[arg-type]
        ),
        breaks,
    )


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

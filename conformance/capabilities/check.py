"""Whether a drawn graph keeps to a capability manifest: the ranks, the batch of its
activations, the element types and the attribute values.  Generation constrains the
strategies so that drawn cases keep to the manifest; this check is the guarantee on
what is written (a recipe whose output shape is derived, RESHAPE's or CONCAT's, can
still reach a rank-4 tensor whose first dimension is not a batch of 1)."""

from __future__ import annotations

from typing import Any

from conformance.capabilities.manifest import Manifest
from conformance.expressions import Name
from conformance.graph import Graph
from conformance.spec import Argument, Spec


def _batch_axis(arg: Argument, rank: int) -> bool:
    """An activation's N: the spec names the first dimension N ([N,IH,IW,C]), or the
    shape is a generic one (shape1) of rank 4, which an NHWC backend reads as NHWC.  A
    weight ([OC,KH,KW,IC]) has no batch."""
    if arg.shape.kind == "named":
        return rank == 4
    dims = arg.shape.dims
    return bool(dims) and isinstance(dims[0], Name) and dims[0].name == "N"


def violations(manifest: Manifest, graph: Graph, spec: Spec) -> list[str]:
    """What in the graph the manifest does not allow, one line each (empty: none)."""
    from conformance.builder import map_operands

    out: list[str] = []
    types = manifest.element_types
    for region in graph.regions:
        for block in region.blocks:
            for op in block.operators:
                if op.op not in spec.operators:
                    continue
                op_spec = spec.operator(op.op)
                limits = manifest.limits(op.op)
                try:
                    operands = map_operands(op_spec, op)
                except Exception:  # a malformed graph (a must-fail case) is not ours to judge
                    continue
                named = {**operands.inputs, **operands.outputs}
                for arg_name, names in named.items():
                    arg = op_spec.argument(arg_name)
                    if arg.type not in ("tensor_t", "tensor_list_t"):
                        continue
                    for t in names:
                        tensor = block.tensors.get(t)
                        if tensor is None:
                            continue
                        out += _shape_violations(manifest, limits, op.op, arg, t, tensor.shape)
                        held = f"{tensor.dtype.name}_t"
                        if types is not None and held not in types and tensor.dtype.kind != "shape":
                            out.append(
                                f"{op.op} {t} is {tensor.dtype.name}: manifest "
                                f"{manifest.name} holds no {held}"
                            )
                for name, value in op.attributes.items():
                    allowed = limits.allowed(name)
                    if allowed is not None and _plain(value) not in allowed:
                        out.append(
                            f"{op.op} {name}={_plain(value)}: manifest {manifest.name} "
                            f"allows {', '.join(map(str, allowed))}"
                        )
    return out


def _shape_violations(
    manifest: Manifest,
    limits: Any,
    operator: str,
    arg: Argument,
    tensor: str,
    shape: tuple[int, ...],
) -> list[str]:
    out = []
    rank = len(shape)
    if limits.max_rank is not None and rank > limits.max_rank:
        out.append(
            f"{operator} {tensor} rank {rank}: manifest {manifest.name} allows rank "
            f"<= {limits.max_rank}"
        )
    if rank < limits.min_rank and arg.shape.kind == "named":  # a rank-generic operand
        out.append(
            f"{operator} {tensor} rank {rank}: manifest {manifest.name} allows rank "
            f">= {limits.min_rank}"
        )
    batch = limits.max_batch
    if batch is not None and rank and _batch_axis(arg, rank) and shape[0] > batch:
        out.append(
            f"{operator} {tensor} batch {shape[0]}: manifest {manifest.name} allows "
            f"batch <= {batch}"
        )
    return out


def _plain(value: Any) -> Any:
    if hasattr(value, "tolist"):
        value = value.tolist()
    return tuple(_plain(v) for v in value) if isinstance(value, list | tuple) else value

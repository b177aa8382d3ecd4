"""LEVEL_CHECKs of one operator, evaluated from the spec model's level limits.

The names a level-limit expression uses come from the operator's operands: the
dimension names of its shape expressions (``KH`` from ``[OC,KH,KW,IC]``), the named
shapes (``rank(shape1)``), the element names of array attributes and shape inputs
(``pad_top`` from ``pad``, ``scale_y_n`` from the ``scale`` input), and tensor lists.
The tensor size limit (MAX_LOG2_SIZE) has no ``<levellimit>``; it is checked for
every tensor as the errata table says.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from conformance.builder import OperandMap
from conformance.expressions import Environment, ExpressionError, evaluate
from conformance.graph import Tensor
from conformance.spec import Level, OperatorSpec


def operand_environment(
    op_spec: OperatorSpec,
    operands: OperandMap,
    tensors: Mapping[str, Tensor],
    attributes: Mapping[str, object],
    values: Mapping[str, object],  # arrays, or block-scaled pairs (not read here)
    level: Level,
) -> Environment:
    """Bind every name the operator's expressions can use."""
    env = level.environment()
    for group in (operands.inputs, operands.outputs):
        for arg_name, names in group.items():
            arg = op_spec.argument(arg_name)
            if arg.is_list:
                env.lists[arg_name] = [tensors[n].shape for n in names]
                # TOSA 1.1's (value_shape1, scale_shape1): each member's shape by its
                # name, for rank(value_shape1); a list of values alone has no scales.
                for member, n in zip(arg.shape.members, names, strict=False):
                    env.shapes[member] = tensors[n].shape
                if arg.type == "shape_list_t":
                    # length(x) of a list of shapes (TOSA 1.1's CONCAT_SHAPE) is the
                    # number of shapes in it: one entry per member, its length.
                    env.shapes.setdefault(arg_name, tuple(_length(tensors[n]) for n in names))
                continue
            t = tensors[names[0]]
            if arg.type == "shape_t":
                if arg.element_names and names[0] in values:
                    flat = np.asarray(values[names[0]]).reshape(-1)
                    for n, v in zip(arg.element_names, flat, strict=False):
                        env.values[n] = int(v)
                # length(x) of a shape value (TOSA 1.1's MAX_SHAPE_LEN limits): bound
                # to the value itself where it is known (a constant), else to a
                # placeholder of its length (an output not computed yet).  A tensor's
                # named shape of the same name (RESHAPE's "shape") is bound below and
                # takes precedence.
                if names[0] in values:
                    as_shape = tuple(int(v) for v in np.asarray(values[names[0]]).reshape(-1))
                else:
                    as_shape = (0,) * _length(t)
                env.shapes.setdefault(arg_name, as_shape)
                continue
            arg.shape.bind(t.shape, env)
            if arg.shape.kind == "named" and arg.shape.name:
                env.shapes[arg.shape.name] = t.shape
            # TOSA 1.1 also names the tensor itself: rank(input_data) (CAST_TO_BLOCK_SCALED)
            env.shapes.setdefault(arg_name, t.shape)
    for arg in op_spec.attributes:
        value = attributes.get(arg.name)
        if arg.element_names and isinstance(value, tuple | list | np.ndarray):
            for n, v in zip(arg.element_names, np.asarray(value).reshape(-1), strict=False):
                env.values[n] = int(v)
    return env


def level_violations(
    op_spec: OperatorSpec,
    operands: OperandMap,
    tensors: Mapping[str, Tensor],
    attributes: Mapping[str, object],
    values: Mapping[str, object],  # arrays, or block-scaled pairs (not read here)
    level: Level,
) -> list[str]:
    """Each failed LEVEL_CHECK of this operator, as ``expr <= LIMIT (value > max)``."""
    env = operand_environment(op_spec, operands, tensors, attributes, values, level)
    failed = []
    for _arg, lim in op_spec.level_limits():
        try:
            value = evaluate(lim.value, env)
        except ExpressionError:
            continue  # the operand it names is absent (optional argument)
        if value > level[lim.limit]:
            failed.append(f"{lim.text} <= {lim.limit} ({value} > {level[lim.limit]})")
    for group in (operands.inputs, operands.outputs):
        for names in group.values():
            for n in names:
                problem = tensor_size_violation(tensors[n], level)
                if problem:
                    failed.append(problem)
    return failed


def tensor_size_violation(t: Tensor, level: Level) -> str | None:
    """Erratum max_log2_size-no-levellimit: the tensor size limit of the introduction."""
    log2 = level["MAX_LOG2_SIZE"]
    max_dim = (1 << log2) - 1
    for d in t.shape:
        if d > max_dim:
            return f"{t.name}: dimension {d} > (1 << MAX_LOG2_SIZE) - 1 = {max_dim}"
    total = 1
    for d in t.shape:
        total *= d
    size = total * t.dtype.size_bytes
    limit = (1 << (log2 + 1)) - 1
    if size > limit:
        return f"{t.name}: {size} bytes > (1 << (MAX_LOG2_SIZE + 1)) - 1 = {limit}"
    return None


def _length(t: Tensor) -> int:
    """The number of elements of a shape_t value: its tensor's element count."""
    return int(np.prod(t.shape, dtype=np.int64))

"""Build graphs and check them against the spec model.

:class:`GraphBuilder` makes the IR of :mod:`conformance.graph` and checks, as each
operator is added, that its inputs, outputs and attributes are the ones tosa.xml
declares, that the tensors it refers to exist, and that the element types bind to
one of the operator's modes.  Strategies that deliberately break a rule (invalid
cases) build with ``strict=False``: the structural checks still run, the
specification checks are returned instead of raised.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from conformance import dtypes, errata
from conformance.block_tensor import BlockScaled, TensorValue, is_block_scaled
from conformance.dtypes import DType
from conformance.graph import AttrValue, Block, Graph, Operator, Region, Tensor, Version
from conformance.spec import Argument, OperatorSpec, Spec, TypeSupport, load_spec


class GraphError(ValueError):
    """A graph that does not hold together (unknown tensor, duplicate name, bad attribute)."""


TYPE_VARIABLES = frozenset(
    {"in_t", "out_t", "in_out_t", "acc_t", "weight_t", "resize_t", "table_t", "mul_t", "var_t"}
)


def _is_type_variable(element_type: str) -> bool:
    return element_type in TYPE_VARIABLES or element_type == "cond_t"


@dataclass
class OperandMap:
    """Which tensors of an operator fill which argument of the spec."""

    inputs: dict[str, list[str]]
    outputs: dict[str, list[str]]


def map_operands(op_spec: OperatorSpec, operator: Operator) -> OperandMap:
    """Assign the operator's input/output tensor names to the spec's arguments.

    A list argument (``tensor_list_t``, ``shape_list_t``) takes every tensor left over
    by the fixed arguments around it.  Raises GraphError when the counts cannot fit.
    """
    return OperandMap(
        _assign(op_spec, op_spec.inputs, operator.inputs, "inputs"),
        _assign(op_spec, op_spec.outputs, operator.outputs, "outputs"),
    )


def _assign(
    op_spec: OperatorSpec, args: list[Argument], names: Sequence[str], what: str
) -> dict[str, list[str]]:
    fixed = [a for a in args if not a.is_list]
    lists = [a for a in args if a.is_list]
    if not lists:
        if len(names) != len(fixed):
            want = ", ".join(a.name for a in fixed) or "none"
            raise GraphError(f"{op_spec.name} takes {len(fixed)} {what} ({want}), got {len(names)}")
        return {a.name: [n] for a, n in zip(fixed, names, strict=True)}
    if len(names) < len(fixed):
        raise GraphError(f"{op_spec.name} needs at least {len(fixed)} {what}, got {len(names)}")
    out: dict[str, list[str]] = {}
    pos = 0
    n_list = len(names) - len(fixed)
    for a in args:
        take = n_list if a.is_list else 1
        out[a.name] = list(names[pos : pos + take])
        pos += take
    return out


def check_attributes(
    op_spec: OperatorSpec,
    attributes: dict[str, AttrValue],
    enums: Collection[str] = ("acc_type_t", "resize_mode_t", "var_t"),
) -> list[str]:
    """Problems with the attribute names and value kinds (not their values); ``enums``
    are the spec's enumeration type names, whose values are given by name."""
    problems = []
    declared = {a.name: a for a in op_spec.attributes}
    for name in attributes:
        if name not in declared:
            problems.append(
                f"{op_spec.name} has no attribute {name!r} (its attributes: "
                f"{', '.join(declared) or 'none'})"
            )
    for name, arg in declared.items():
        if name not in attributes:
            if not arg.optional:
                problems.append(f"{op_spec.name} is missing attribute {name!r}")
            continue
        problem = _attribute_kind_problem(arg, attributes[name], enums)
        if problem:
            problems.append(f"{op_spec.name} attribute {name!r}: {problem}")
    return problems


def _attribute_kind_problem(arg: Argument, value: AttrValue, enums: Collection[str]) -> str | None:
    et = arg.element_type
    if arg.type == "tosa_graph_t" or arg.type == "String":
        return None if isinstance(value, str) else "expected a string"
    if arg.shape.kind == "scalar" and et in enums:
        return None if isinstance(value, str) else "expected an enumeration value name"
    if arg.type == "shape_t":  # CONST_SHAPE values: a list of sizes, whatever its shape says
        if isinstance(value, np.ndarray) or (
            isinstance(value, tuple | list) and all(isinstance(v, int | np.integer) for v in value)
        ):
            return None
        return "expected a list of integers"
    if arg.shape.kind == "scalar":
        if et == "bool_t":
            return None if isinstance(value, bool | np.bool_) else "expected a bool"
        if isinstance(value, bool) and not _is_type_variable(et):
            return "expected a number"  # an i32_t attribute; bool is fine for in_out_t=bool_t
        if not isinstance(value, int | float | np.generic):
            return "expected a number"
        return None
    if arg.shape.kind == "dims":
        if isinstance(value, np.ndarray):
            return None
        if not isinstance(value, tuple | list) or not all(
            isinstance(v, int | np.integer) for v in value
        ):
            return "expected a list of integers"
        return None
    if et in ("size_t", "tensor_size_t") and isinstance(value, tuple | list):  # var_shape
        ok = all(isinstance(v, int | np.integer) for v in value)
        return None if ok else "expected a list of integers"
    # A block-scaled CONST's values are its (values, scales) pair.
    return None if isinstance(value, np.ndarray | BlockScaled) else "expected an array"


def bind_types(
    op_spec: OperatorSpec, operator: Operator, tensors: dict[str, Tensor]
) -> tuple[dict[str, DType], list[str]]:
    """Bind the operator's type variables from its tensors' element types.

    Returns the bindings and the problems found (a variable bound to two types, an
    argument of fixed type holding another type).
    """
    operands = map_operands(op_spec, operator)
    bound: dict[str, DType] = {}
    problems: list[str] = []
    for group in (operands.inputs, operands.outputs):
        for arg_name, names in group.items():
            arg = op_spec.argument(arg_name)
            for position, name in enumerate(names):
                t = tensors[name]
                et = arg.element_type
                if arg.type in ("shape_t", "shape_list_t"):
                    if t.dtype is not dtypes.SHAPE:
                        problems.append(f"{op_spec.name} {arg_name} must be a shape, got {t.dtype}")
                    continue
                if arg.is_scaled_list:
                    # (values, scales): the first member binds the element type, the
                    # second the scale type; a third binds nothing (an ERROR_IF of the
                    # operator's: a list of one or two).
                    if position < 2:
                        var = et if position == 0 else arg.scale_element_type
                        _bind(op_spec, bound, problems, var, arg_name, t.dtype)
                    continue
                if et in ("-", "") or arg.is_list:
                    continue
                _bind(op_spec, bound, problems, et, arg_name, t.dtype)
    return bound, problems


def _bind(
    op_spec: OperatorSpec,
    bound: dict[str, DType],
    problems: list[str],
    et: str,
    arg_name: str,
    dt: DType,
) -> None:
    # A type variable the operator declares (1.0's index_t) binds too.
    if _is_type_variable(et) or et in op_spec.types:
        prev = bound.setdefault(et, dt)
        if prev is not dt:
            problems.append(
                f"{op_spec.name} {arg_name} is {dt} but {et} is already {prev} "
                "from another argument"
            )
    else:
        want = dtypes.dtype(et)
        if want is not dt:
            problems.append(f"{op_spec.name} {arg_name} must be {want}, got {dt}")


def _scale_types(op_spec: OperatorSpec) -> set[str]:
    """The type variables of the second members of the operator's block-scaled lists."""
    return {a.scale_element_type for a in op_spec.arguments if a.is_scaled_list}


def _scaled_as_bound(mode: TypeSupport, scale_types: set[str], bound: dict[str, DType]) -> bool:
    """A mode whose scale type is a type takes lists of values and scales, one whose
    scale type is "-" lists of values alone: a list of two needs the first, of one the
    second."""
    return all((mode.bindings.get(var, "-") == "-") == (var not in bound) for var in scale_types)


def acc_type_dtype(name: str) -> DType | None:
    """The element type an ``acc_type`` enumeration value names (INT32 -> i32, FP16 ->
    fp16), or None for a name that is no type."""
    try:
        return dtypes.dtype(name.strip().lower().replace("int", "i"))
    except KeyError:
        return None


def find_mode(
    op_spec: OperatorSpec, bound: dict[str, DType], attributes: dict[str, AttrValue]
) -> TypeSupport | None:
    """The mode whose type bindings agree with every bound variable, if any.

    The ``acc_type`` attribute of the convolutions and AVG_POOL2D selects the mode's
    accumulator, so it binds ``acc_t`` like a tensor's type binds the others."""
    acc = attributes.get("acc_type")
    if isinstance(acc, str) and "acc_t" not in bound:
        acc_dt = acc_type_dtype(acc)
        if acc_dt is None:
            return None
        bound = {**bound, "acc_t": acc_dt}
    scale_types = _scale_types(op_spec)
    for mode in op_spec.modes:
        if all(
            _agrees(mode, var, dt, attributes) for var, dt in bound.items()
        ) and _scaled_as_bound(mode, scale_types, bound):
            return mode
    return None


def _agrees(mode: TypeSupport, var: str, dt: DType, attributes: dict[str, AttrValue]) -> bool:
    if var == "mul_t":  # erratum rescale-mul_t: fixed by scale32, not by the mode
        scale32 = bool(attributes.get("scale32", True))
        return dtypes.dtype(errata.MUL_T_BY_SCALE32[scale32]) is dt
    value = mode.bindings.get(var)
    if value is None or value == "-":
        return True
    return dtypes.dtype(value) is dt


def check_operator(
    spec: Spec, operator: Operator, tensors: dict[str, Tensor]
) -> tuple[TypeSupport | None, list[str]]:
    """Check one operator against the spec; return its mode (if one binds) and problems."""
    try:
        op_spec = spec.operator(operator.op)
    except KeyError:
        return None, [f"unknown operator {operator.op!r}"]
    problems = check_attributes(op_spec, operator.attributes, spec.enums)
    bound, type_problems = bind_types(op_spec, operator, tensors)
    problems += type_problems
    mode = find_mode(op_spec, bound, operator.attributes) if not type_problems else None
    if mode is None and not type_problems and op_spec.modes:
        got = ", ".join(f"{k}={v}" for k, v in sorted(bound.items()))
        problems.append(f"{op_spec.name}: no mode supports {got}")
    return mode, problems


class BlockBuilder:
    def __init__(self, owner: GraphBuilder, block: Block) -> None:
        self.owner = owner
        self.block = block

    @property
    def name(self) -> str:
        return self.block.name

    def tensor(
        self,
        name: str,
        shape: Sequence[int],
        dtype: DType | str,
        data: TensorValue | None = None,
        **flags: bool | str,
    ) -> str:
        """Declare a tensor; ``data`` makes it a constant (for a block-scaled type, a
        :class:`~conformance.block_tensor.BlockScaled` of that type)."""
        if name in self.block.tensors:
            raise GraphError(f"block {self.name!r}: tensor {name!r} is declared twice")
        dt = dtypes.dtype(dtype) if isinstance(dtype, str) else dtype
        shape = tuple(int(s) for s in shape)
        t = Tensor(name, shape, dt, **flags)  # type: ignore[arg-type]
        if data is not None:
            value: TensorValue = data if isinstance(data, BlockScaled) else np.asarray(data)
            if isinstance(value, BlockScaled) != is_block_scaled(dt) or (
                isinstance(value, BlockScaled) and value.dtype is not dt
            ):
                held = value.dtype if isinstance(value, BlockScaled) else "an array"
                raise GraphError(f"tensor {name!r} of type {dt}: data is {held}")
            if tuple(value.shape) != shape:
                raise GraphError(
                    f"tensor {name!r}: data shape {list(value.shape)} != declared {list(shape)}"
                )
            t.set_constant(value)
        self.block.tensors[name] = t
        return name

    def input(self, name: str, shape: Sequence[int], dtype: DType | str) -> str:
        self.tensor(name, shape, dtype)
        self.block.inputs.append(name)
        return name

    def output(self, name: str) -> None:
        if name not in self.block.tensors:
            raise GraphError(f"block {self.name!r}: output {name!r} is not a tensor of the block")
        self.block.outputs.append(name)

    def op(
        self,
        op: str,
        inputs: Sequence[str],
        outputs: Sequence[str],
        **attributes: AttrValue,
    ) -> Operator:
        operator = Operator(op.upper(), list(inputs), list(outputs), dict(attributes))
        for name in [*operator.inputs, *operator.outputs]:
            if name not in self.block.tensors:
                raise GraphError(f"{operator.op}: tensor {name!r} is not declared in {self.name!r}")
        produced = {o for existing in self.block.operators for o in existing.outputs}
        for name in operator.outputs:
            if name in produced or name in self.block.inputs:
                raise GraphError(f"{operator.op}: tensor {name!r} already has a producer")
        _, problems = check_operator(self.owner.spec, operator, self.block.tensors)
        if problems and self.owner.strict:
            raise GraphError("; ".join(problems))
        self.owner.problems.extend(problems)
        self.block.operators.append(operator)
        return operator


class GraphBuilder:
    """Builds a :class:`Graph`; the first block made is the entry block."""

    def __init__(self, spec: Spec | None = None, *, strict: bool = True) -> None:
        self.spec = spec or load_spec()
        self.strict = strict
        self.problems: list[str] = []  # specification problems seen when not strict
        self.region = Region("main")

    def block(self, name: str = "main") -> BlockBuilder:
        if any(b.name == name for b in self.region.blocks):
            raise GraphError(f"block {name!r} is declared twice")
        block = Block(name)
        self.region.blocks.append(block)
        return BlockBuilder(self, block)

    def build(self) -> Graph:
        # The graph says which specification it follows: its file format follows it.
        major, minor, patch = self.spec.version
        graph = Graph(
            [self.region], Version(major, minor, patch, self.spec.draft), self.spec.revision
        )
        names = {b.name for b in graph.blocks()}
        for block in graph.blocks():
            for operator in block.operators:
                op_spec = self.spec.operators.get(operator.op)
                if op_spec is None:
                    continue
                for arg in op_spec.attributes:
                    ref = operator.attributes.get(arg.name)
                    if arg.type == "tosa_graph_t" and ref not in names:
                        raise GraphError(
                            f"{operator.op} attribute {arg.name!r} names block {ref!r}, "
                            "which the graph does not have"
                        )
        return graph


TensorSpec = tuple[str, Sequence[int], "DType | str"]


def single_operator_graph(
    op: str,
    inputs: Sequence[TensorSpec],
    outputs: Sequence[TensorSpec],
    attributes: dict[str, AttrValue] | None = None,
    *,
    constants: dict[str, TensorValue] | None = None,
    spec: Spec | None = None,
    strict: bool = True,
) -> Graph:
    """A graph of one operator: inputs named in ``constants`` become constant tensors
    holding that data (shape inputs, tables); the others are graph inputs."""
    constants = constants or {}
    builder = GraphBuilder(spec, strict=strict)
    block = builder.block()
    for name, shape, dt in inputs:
        if name in block.block.tensors:
            continue  # the same tensor used twice
        if name in constants:
            block.tensor(name, shape, dt, data=constants[name])
        else:
            block.input(name, shape, dt)
    for name, shape, dt in outputs:
        block.tensor(name, shape, dt)
    block.op(op, [i[0] for i in inputs], [o[0] for o in outputs], **(attributes or {}))
    for name, _, _ in outputs:
        block.output(name)
    return builder.build()

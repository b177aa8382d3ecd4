"""A drawn test case: a graph, its input values, and what it tests."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from conformance import dtypes
from conformance.block_tensor import BlockScaled, TensorValue, is_block_scaled, value_type
from conformance.builder import GraphBuilder
from conformance.dtypes import DType
from conformance.graph import Graph
from conformance.spec import Spec
from strategies import block_tensors

CaseKind = Literal["valid", "error", "level"]


# The valid-case target whose CTC inputs are graph inputs (conformance.generate_plan.plan).
DYNAMIC_TARGET = "dynamic"


def ctc_freeing(spec: Spec) -> frozenset[str]:
    """The extensions that make a compile-time-constant input variable (TOSA 1.0:
    EXT-DYNAMIC), from the revision's ``ctc_remove`` declarations; empty in the draft."""
    return frozenset(
        name
        for op in spec.operators.values()
        for a in op.inputs
        for req in a.ctc_remove
        for name in req
    )


def freeable_ctc(spec: Spec, operator: str) -> list[str]:
    """``operator``'s tensor inputs that an extension frees of their CTC rule."""
    return [a.name for a in spec.operator(operator).inputs if a.is_tensor and a.ctc_remove]


@dataclass
class TensorDraw:
    """One operand of a single-operator case."""

    name: str
    shape: tuple[int, ...]
    dtype: DType
    values: np.ndarray | None = None  # None for outputs
    const: bool = False  # a constant tensor in the graph rather than a graph input
    # A block-scaled tensor (TOSA 1.1 bs32_*): its scales (``values`` its values).
    scales: np.ndarray | None = None

    def value(self) -> TensorValue | None:
        """The tensor's contents: ``values``, or a block-scaled tensor's pair."""
        if self.values is None or not is_block_scaled(self.dtype):
            return self.values
        return BlockScaled(
            self.dtype,
            self.values,
            block_tensors.scales_for(self.scales, self.dtype, tuple(self.values.shape)),
        )


# -- tensor helpers that are not about a case ----------------------------------------


def shape_tensor(name: str, values: Sequence[int]) -> TensorDraw:
    """A constant shape_t input (padding, start, multiples ...)."""
    arr = np.array([int(v) for v in values], dtype=np.int64)
    return TensorDraw(name, (len(arr),), dtypes.SHAPE, arr, const=True)


def resized(values: np.ndarray | None, shape: tuple[int, ...]) -> np.ndarray | None:
    """Values for a tensor whose shape a breaker changed: the old ones, cycled."""
    if values is None:
        return None
    return np.resize(values.reshape(-1), math.prod(shape)).reshape(shape)


def converted(values: np.ndarray | None, dt: DType) -> np.ndarray | None:
    """``values`` held in ``dt``'s storage, clipped into its range (a retyped graph
    input must still hold values of its new type)."""
    if values is None:
        return None
    if is_block_scaled(dt):  # its values (value() gives it scales)
        return converted(values, value_type(dt))
    if dt.kind == "bool":
        return values.astype(np.float64) != 0
    if dt.kind in ("int", "shape"):
        lo, hi = dt.int_range
        if values.dtype.kind in "biu":  # exact: no trip through float64
            return np.clip(values.astype(np.int64), lo, hi).astype(dt.storage)
        wide = np.nan_to_num(values.astype(np.float64), nan=0.0, posinf=0.0, neginf=0.0)
        # Bounds within int64 as floats: float(2**63 - 1) would round up past it.
        wide = np.clip(wide, max(lo, -(2**62)), min(hi, 2**62))
        return wide.astype(np.int64).astype(dt.storage)
    with np.errstate(over="ignore", invalid="ignore"):
        return values.astype(np.float64).astype(dt.storage)


@dataclass
class CaseSpec:
    """A single-operator case as a recipe draws it, before the graph is built."""

    operator: str
    mode: str
    inputs: list[TensorDraw]  # in argument order; a list argument contributes several
    outputs: list[TensorDraw]
    attributes: dict[str, Any] = field(default_factory=dict)
    data_set: int = -1
    kind: CaseKind = "valid"
    rule_broken: str | None = None  # the clause an error case breaks / the limit a level case hits
    strategy: str = ""

    def __repr__(self) -> str:
        # Hypothesis prints drawn examples; tensors would make that slow and unreadable.
        shapes = ", ".join(f"{t.name}{list(t.shape)}:{t.dtype}" for t in self.inputs)
        return f"CaseSpec({self.operator} [{self.mode}] {self.kind}: {shapes})"

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:  # Hypothesis's printer
        p.text(repr(self))

    # -- editors that breakers and recipes share ----------------------------------------

    def tensor(self, name: str) -> TensorDraw:
        """The input or output tensor ``name`` (KeyError: the case has none)."""
        for t in self.inputs + self.outputs:
            if t.name == name:
                return t
        raise KeyError(f"{self.operator} case has no tensor {name!r}")

    def replace_tensor(self, name: str, **changes: Any) -> None:
        """Replace tensor ``name`` (in place) by a copy with ``changes``."""
        for group in (self.inputs, self.outputs):
            for i, t in enumerate(group):
                if t.name == name:
                    group[i] = replace(t, **changes)
                    return
        raise KeyError(f"{self.operator} case has no tensor {name!r}")

    def reshape_tensor(self, name: str, shape: tuple[int, ...]) -> None:
        """Give tensor ``name`` a new shape; its values are the old ones, cycled
        (:func:`resized`)."""
        t = self.tensor(name)
        scales = t.scales
        if is_block_scaled(t.dtype) and t.values is not None:  # scales for the new shape
            scales = block_tensors.scales_for(t.scales, t.dtype, shape)
        self.replace_tensor(name, shape=shape, values=resized(t.values, shape), scales=scales)

    def retype_tensor(self, name: str, dt: DType) -> None:
        """Give tensor ``name`` element type ``dt``; its values are converted to it
        (:func:`converted`)."""
        t = self.tensor(name)
        values = converted(t.values, dt)
        scales = None
        if is_block_scaled(dt) and values is not None:  # a block-scaled type takes scales
            scales = block_tensors.scales_for(t.scales, dt, t.shape)
        self.replace_tensor(name, dtype=dt, values=values, scales=scales)

    def set_shape_input(self, name: str, values: Sequence[int]) -> None:
        """Give the constant shape input ``name`` new values (and the length they have)."""
        new = shape_tensor(name, values)
        self.replace_tensor(name, shape=new.shape, values=new.values)

    def in_revision(self, spec: Spec) -> CaseSpec:
        """This case with its operands laid out as ``spec``'s revision declares them.

        Recipes draw parameters by argument name. Where the revision declares one of
        them an *input* (TOSA 1.0: zero points, ``pad_const``), the drawn value becomes
        a constant input tensor of the declared shape, in argument order; a rank-0
        input the revision declares as ``[1]`` (1.0's MUL ``shift``) becomes that shape.
        Derived from the argument declarations, so a revision adds no list here.
        """
        try:
            op_spec = spec.operator(self.operator)
        except KeyError:
            return self
        declared = op_spec.inputs
        if any(a.is_list for a in declared):
            return self  # list operands (CONCAT, COND_IF) take no parameters
        promoted = {a.name for a in declared if a.name in self.attributes}
        # The drawn inputs are in argument order (chains prefix their names): matched
        # to the declared inputs by position, the promoted ones left out.
        drawn = iter(self.inputs)
        pairs = [(a, None if a.name in promoted else next(drawn, None)) for a in declared]
        extra = list(drawn)  # a breaker's extra operand stays, after the declared ones
        reshaped = [a for a, t in pairs if t is not None and t.shape == () and _declared_one(a)]
        if not promoted and not reshaped:
            return self
        mode = _mode_or_none(op_spec, self.mode)
        inputs: list[TensorDraw] = []
        for arg, t in pairs:
            if arg.name in promoted:
                value = self.attributes[arg.name]
                dt = _argument_dtype(arg.element_type, mode, value)
                data = np.asarray(value).reshape(-1)
                shape = (data.size,) if arg.rank_min is not None else ()
                inputs.append(
                    TensorDraw(arg.name, shape, dt, converted(data.reshape(shape), dt), True)
                )
            elif t is not None:
                if arg in reshaped:
                    t = replace(t, shape=(1,), values=resized(t.values, (1,)))
                inputs.append(t)
        attributes = {k: v for k, v in self.attributes.items() if k not in promoted}
        return replace(self, inputs=inputs + extra, attributes=attributes)

    def with_variable_ctc(self, spec: Spec, extensions: frozenset[str]) -> CaseSpec:
        """This case with every constant input that ``extensions`` free of its
        compile-time-constant rule (TOSA 1.0's EXT-DYNAMIC) made a graph input.

        Only tensors: a ``shape_t`` argument cannot be a graph input in any revision.
        Inputs are in argument order (see :meth:`in_revision`), so matched by position.
        """
        try:
            declared = spec.operator(self.operator).inputs
        except KeyError:
            return self
        freed = [a.is_tensor and any(req <= extensions for req in a.ctc_remove) for a in declared]
        if not any(freed):
            return self
        inputs = [
            replace(t, const=False) if k < len(freed) and freed[k] and t.const else t
            for k, t in enumerate(self.inputs)
        ]
        return replace(self, inputs=inputs)

    def build(self, spec: Spec, variable_ctc: frozenset[str] = frozenset()) -> Case:
        """The case as a graph; ``variable_ctc``: see :meth:`with_variable_ctc`."""
        self = self.in_revision(spec)
        if variable_ctc:
            self = self.with_variable_ctc(spec, variable_ctc)
        builder = GraphBuilder(spec, strict=self.kind == "valid")
        block = builder.block()
        for t in self.inputs:
            if t.name in block.block.tensors:
                continue
            if t.const:
                block.tensor(t.name, t.shape, t.dtype, data=t.value())
            else:
                block.input(t.name, t.shape, t.dtype)
        for t in self.outputs:
            block.tensor(t.name, t.shape, t.dtype)
        block.op(
            self.operator,
            [t.name for t in self.inputs],
            [t.name for t in self.outputs],
            **self.attributes,
        )
        for t in self.outputs:
            block.output(t.name)
        inputs = {t.name: t.value() for t in self.inputs if not t.const}
        return Case(
            graph=builder.build(),
            inputs=inputs,  # type: ignore[arg-type]
            operator=self.operator,
            mode=self.mode,
            kind=self.kind,
            rule_broken=self.rule_broken,
            data_set=self.data_set,
            strategy=self.strategy,
        )


def _declared_one(arg: Any) -> bool:
    """An input the revision declares with the literal shape ``[1]``."""
    return bool(arg.shape.kind == "dims" and arg.shape.text.replace(" ", "") == "[1]")


def _mode_or_none(op_spec: Any, mode: str) -> Any:
    try:
        return op_spec.mode(mode)
    except KeyError:
        return None


def _argument_dtype(element_type: str, mode: Any, value: Any) -> DType:
    """The element type a promoted parameter takes: its type variable's binding in the
    mode, the fixed type it names, or (a mode the case deliberately breaks) its value's."""
    if mode is not None and element_type in mode.bindings:
        return dtypes.dtype(mode.bindings[element_type])
    try:
        return dtypes.dtype(element_type)
    except KeyError:
        return dtypes.from_numpy(np.asarray(value).dtype)


@dataclass
class Case:
    """What a vector is made from."""

    graph: Graph
    inputs: Mapping[str, TensorValue]  # a block-scaled input: its BlockScaled pair
    operator: str  # the operator under test
    mode: str  # its mode, exactly as tosa.xml spells it
    kind: CaseKind = "valid"
    rule_broken: str | None = None
    data_set: int = -1
    strategy: str = ""
    operators: list[str] = field(default_factory=list)  # every operator, for graphs

    def __repr__(self) -> str:
        main = self.graph.main
        shapes = ", ".join(f"{n}{list(main.tensors[n].shape)}" for n in main.inputs)
        return f"Case({self.describe()}: {shapes})"

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:  # Hypothesis's printer
        p.text(repr(self))

    def describe(self) -> str:
        what = f"{self.operator} [{self.mode}]"
        if self.kind != "valid":
            what += f" {self.kind}: {self.rule_broken}"
        return what

"""Recipes for the variable operators (EXT-VARIABLE): VARIABLE, VARIABLE_WRITE and
VARIABLE_READ, and their error cases.

One recipe draws all three: a graph that declares one to three variables (with or
without an initial value), then writes and reads them in a drawn order - writes of
graph inputs, of values read back and changed by a simple operator, from inside a
COND_IF branch, or in a WHILE_LOOP body that reads, changes and writes back over
several iterations - and returns every value read in the main block as a graph
output.  The variable of the operator's mode (``var_t``; TOSA 1.0 calls it ``in_t`` or
``out_t``) is always declared, written
(or initialised) before it is read, and read last; the others take any ``var_t`` of
the modes.

Variables are addressed by ``uid`` (draft) or ``name`` (TOSA 1.0), whichever the
operators declare.  Every rule of these operators' pseudocode is a REQUIRE
(docs/control_flow.md): a uid or name declared twice, a write or read of another shape
or type than the declaration, a read
before any write.  Such graphs are unpredictable, never must-fail, so the only error
cases are the ERROR_IFs the engine and VARIABLE's attribute checks report: a type no
mode supports (in VARIABLE's ``type``, in a written tensor, in a read tensor) and a
``var_shape`` that holds a negative size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from conformance import dtypes
from conformance.builder import GraphBuilder
from conformance.dtypes import I32_MAX, I32_MIN, DType
from conformance.operator_table import family
from reference.arguments import ATTRIBUTES_CLAUSE, TYPES_CLAUSE
from reference.ops.variable import VAR_TYPES, address_attribute, element_type_variable
from strategies.case import Case
from strategies.graph_breakers import graph_breaks
from strategies.recipes import RecipeContext, recipe
from strategies.recipes.control_flow import Sig, block_op, error_case, make_case
from strategies.shapes import Budget, shapes

VAR_NAME = {dt: name for name, dt in VAR_TYPES.items()}
SMALL = Budget(max_elements=256, max_dim=16)
OPERATORS = family(("VARIABLE", "VARIABLE_WRITE", "VARIABLE_READ"))


@dataclass
class Var:
    uid: int
    sig: Sig
    written: bool = False  # by an initial value or a write drawn so far


class VariableGraph:
    """The main block of a variable case and its graph inputs, as actions add to it."""

    def __init__(self, rc: RecipeContext, strict: bool) -> None:
        self.rc = rc
        self.g = GraphBuilder(rc.spec, strict=strict)
        self.main = self.g.block("main")
        self.inputs: dict[str, np.ndarray] = {}
        self.count = 0

    def name(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def address(self, var: Var) -> dict[str, object]:
        """The attribute that addresses ``var``: its uid, or (TOSA 1.0) a name made
        from it."""
        key = address_attribute(self.rc.spec.operator("VARIABLE"))
        return {key: var.uid if key == "uid" else f"var{var.uid}"}

    def declare(self, draw: st.DrawFn, var: Var, *, initial: bool, type_name: str = "") -> None:
        attrs: dict[str, object] = {
            **self.address(var),
            "var_shape": var.sig.shape,
            "type": type_name or VAR_NAME[var.sig.dtype],
        }
        if initial:
            dt, shape = var.sig.dtype, var.sig.shape
            # np.asarray: a rank-0 draw can come back as a numpy scalar
            attrs["initial_value"] = np.asarray(self.rc.values(draw, dt, shape, None, "init"))
            var.written = True
        self.main.op("VARIABLE", [], [], **attrs)

    def graph_input(self, draw: st.DrawFn, sig: Sig) -> str:
        name = self.main.input(self.name("x"), sig.shape, sig.dtype)
        self.inputs[name] = self.rc.values(draw, sig.dtype, sig.shape, None, name)
        return name

    def write(self, var: Var, tensor: str) -> None:
        self.main.op("VARIABLE_WRITE", [tensor], [], **self.address(var))
        var.written = True

    def read(self, var: Var, dtype: DType | None = None) -> str:
        name = self.main.tensor(self.name("r"), var.sig.shape, dtype or var.sig.dtype)
        self.main.op("VARIABLE_READ", [], [name], **self.address(var))
        self.main.output(name)
        return name

    def write_in_branch(self, draw: st.DrawFn, var: Var) -> None:
        """COND_IF(c, x) whose then branch writes x and whose else branch writes a
        changed x: the blocks COND_IF runs share the graph's variables."""
        cond = self.main.input(self.name("c"), (1,), dtypes.BOOL)
        self.inputs[cond] = np.array([draw(st.booleans(), label="branch taken")])
        x = self.graph_input(draw, var.sig)
        k = self.count
        then, other = self.g.block(f"then{k}"), self.g.block(f"else{k}")
        for b in (then, other):
            b.input("x", var.sig.shape, var.sig.dtype)
        then.op("VARIABLE_WRITE", ["x"], [], **self.address(var))
        block_op(draw, other, "x", "y", var.sig, f"else{k}")
        other.op("VARIABLE_WRITE", ["y"], [], **self.address(var))
        self.main.op("COND_IF", [cond, x], [], then_graph=then.name, else_graph=other.name)
        var.written = True

    def update_in_loop(self, draw: st.DrawFn, var: Var) -> None:
        """WHILE_LOOP whose body reads ``var``, changes it and writes it back, 2 to 4
        times: every read in the loop must see the write of the iteration before.
        The change is no fixed point of itself - NOT (an involution) runs an even number
        of times, + k (floating point) any number - so a read that sees the loop's entry
        value leaves another result."""
        dt, shape = var.sig.dtype, var.sig.shape
        k = self.count
        cond, body = self.g.block(f"cond{k}"), self.g.block(f"body{k}")
        for b in (cond, body):
            b.input("i", (1,), dtypes.I32)
        if dt.is_float:
            n = draw(st.integers(2, 4), label="loop iterations")
            step = draw(st.sampled_from([1.0, -2.0, 0.5, 4.0]), label="loop step")
            ones = (1,) * len(shape)
            body.tensor("step", ones, dt, data=np.full(ones, step).astype(dt.storage))
        else:
            n = draw(st.sampled_from([2, 4]), label="loop iterations")
        cond.tensor("limit", (1,), dtypes.I32, data=np.array([n], np.int32))
        cond.tensor("go", (1,), dtypes.BOOL)
        cond.op("GREATER", ["limit", "i"], ["go"])
        cond.output("go")
        body.tensor("one", (1,), dtypes.I32, data=np.array([1], np.int32))
        body.tensor("next", (1,), dtypes.I32)
        body.op("ADD", ["i", "one"], ["next"])
        body.tensor("v", shape, dt)
        body.tensor("w", shape, dt)
        body.op("VARIABLE_READ", [], ["v"], **self.address(var))
        if dt.is_float:
            body.op("ADD", ["v", "step"], ["w"])
        else:
            body.op("LOGICAL_NOT" if dt is dtypes.BOOL else "BITWISE_NOT", ["v"], ["w"])
        body.op("VARIABLE_WRITE", ["w"], [], **self.address(var))
        body.output("next")
        start = self.main.tensor(self.name("i"), (1,), dtypes.I32, data=np.zeros(1, np.int32))
        end = self.main.tensor(self.name("i"), (1,), dtypes.I32)
        self.main.op("WHILE_LOOP", [start], [end], cond_graph=cond.name, body_graph=body.name)

    def changed(self, draw: st.DrawFn, tensor: str, sig: Sig) -> str:
        name = self.name("t")
        block_op(draw, self.main, tensor, name, sig, name)
        return name


def _rank_range(rc: RecipeContext) -> tuple[int, int]:
    r = rc.spec.operator("VARIABLE_WRITE").argument("input1").rank_range(rc.level)
    assert r is not None
    return r


def _draw_vars(draw: st.DrawFn, rc: RecipeContext) -> list[Var]:
    var_t = rc.dtype(element_type_variable(rc.op_spec))
    types = [m.dtype(element_type_variable(rc.op_spec)) for m in rc.op_spec.modes]
    n = draw(st.integers(1, 3), label="variables")
    any_uid = st.integers(I32_MIN, I32_MAX)
    uids = draw(st.lists(any_uid, min_size=n, max_size=n, unique=True), label="uids")
    lo, hi = _rank_range(rc)
    out = []
    for k, uid in enumerate(uids):
        dt = var_t if k == 0 else draw(st.sampled_from(types), label=f"variable {k}: type")
        out.append(Var(uid, Sig(draw(shapes(lo, hi, SMALL, label=f"variable {k}")), dt)))
    return out


def _bad_variable(draw: st.DrawFn, rc: RecipeContext, taken: list[int], fault: str) -> Var:
    """The variable a VARIABLE error case declares wrongly: of a type no mode supports,
    or (var_shape fault) of the mode's type with a negative size in its shape."""
    lo, hi = _rank_range(rc)
    shape = draw(shapes(max(lo, 1), hi, SMALL, label="bad variable"))
    uid = draw(st.integers(I32_MIN, I32_MAX).filter(lambda u: u not in taken), label="bad uid")
    if fault == "var_type":
        others = sorted(n for n, dt in VAR_TYPES.items() if dt not in _mode_types(rc))
        return Var(uid, Sig(shape, VAR_TYPES[draw(st.sampled_from(others), label="type")]))
    return Var(uid, Sig(shape, rc.dtype(element_type_variable(rc.op_spec))))


def _declare_bad(draw: st.DrawFn, vg: VariableGraph, var: Var, fault: str) -> None:
    shape = var.sig.shape
    if fault == "var_shape":
        k = draw(st.integers(0, len(shape) - 1), label="negative dimension")
        shape = tuple(-d if i == k else d for i, d in enumerate(shape))
    attrs = {**vg.address(var), "var_shape": shape, "type": VAR_NAME[var.sig.dtype]}
    vg.main.op("VARIABLE", [], [], **attrs)


def _variable_case(draw: st.DrawFn, rc: RecipeContext, fault: str | None = None) -> Case:
    vg = VariableGraph(rc, strict=fault is None)
    variables = _draw_vars(draw, rc)
    main_var = variables[0]  # of the mode's var_t, so the operator under test is in mode
    declared = list(variables)
    bad = None
    if fault in ("var_type", "var_shape"):
        bad = _bad_variable(draw, rc, [v.uid for v in variables], fault)
        declared.insert(draw(st.integers(0, len(declared)), label="bad declared at"), bad)
    for var in declared:
        if var is bad:
            _declare_bad(draw, vg, var, str(fault))
        else:
            vg.declare(draw, var, initial=draw(st.booleans(), label=f"{var.uid}: initial"))

    last_read: dict[Sig, str] = {}  # a value read of each signature, to write back

    def write(var: Var) -> None:
        source = last_read.get(var.sig)
        if source and draw(st.booleans(), label="write back a value read"):
            vg.write(var, vg.changed(draw, source, var.sig))
        else:
            vg.write(var, vg.graph_input(draw, var.sig))

    wrote_main = False
    for _ in range(draw(st.integers(0, 5), label="writes and reads")):
        var = draw(st.sampled_from(variables), label="variable")
        actions = ["write", "branch", *(["read", "loop"] if var.written else [])]
        action = draw(st.sampled_from(actions), label="action")
        if action == "read":
            last_read[var.sig] = vg.read(var)
        elif action == "branch":
            vg.write_in_branch(draw, var)
        elif action == "loop":
            vg.update_in_loop(draw, var)
        else:
            write(var)
        wrote_main |= var is main_var and action != "read"
    # VARIABLE_WRITE's cases write the main variable; every case reads it last.
    if not main_var.written or (rc.name == "VARIABLE_WRITE" and not wrote_main):
        write(main_var)
    if draw(st.booleans(), label="update in a loop before the last read"):
        vg.update_in_loop(draw, main_var)
    vg.read(main_var)

    unsupported = [dt for dt in VAR_TYPES.values() if dt not in _mode_types(rc)]
    if fault == "var_type" and bad is not None and draw(st.booleans(), label="use it"):
        vg.write(bad, vg.graph_input(draw, bad.sig))
        vg.read(bad)
    elif fault == "write_type":
        dt = draw(st.sampled_from(unsupported), label="written type")
        vg.write(main_var, vg.graph_input(draw, Sig(main_var.sig.shape, dt)))
    elif fault == "read_type":
        vg.read(main_var, draw(st.sampled_from(unsupported), label="read type"))
    return make_case(rc, vg.g, vg.inputs)


def _mode_types(rc: RecipeContext) -> set[DType]:
    return {m.dtype(element_type_variable(rc.op_spec)) for m in rc.op_spec.modes}


@recipe(*OPERATORS)
def variables(draw: st.DrawFn, rc: RecipeContext) -> Case:
    return _variable_case(draw, rc)


def _register(operator: str, fault: str, clause: str) -> None:
    @graph_breaks(operator, clause=clause)
    def breaker(draw: st.DrawFn, rc: RecipeContext) -> Case:
        return error_case(_variable_case(draw, rc, fault), clause)


_register("VARIABLE", "var_type", TYPES_CLAUSE)
_register("VARIABLE", "var_shape", ATTRIBUTES_CLAUSE)
_register("VARIABLE_WRITE", "write_type", TYPES_CLAUSE)
_register("VARIABLE_READ", "read_type", TYPES_CLAUSE)

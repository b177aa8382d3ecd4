"""Domain obligations of the floating-point functions: inputs in every binade.

A function of one float input (EXP, LOG, RSQRT, RECIPROCAL, SIGMOID, TANH, ERF, SIN,
COS, CEIL, FLOOR: the operators the precision rules bound by ulp or by an absolute
error, in the revision's tables) is tested near its common range by ordinary draws.
An implementation that approximates it (a SIGMOID returning 1 from x = 8 on, an EXP
that saturates early, a LOG without a subnormal path) is wrong only further out, so a
vector must hold inputs in every binade [2**e, 2**(e+1)), both signs, from the type's
smallest subnormal up to the binade from which the result no longer changes in the
type (TANH, SIGMOID and ERF saturate, EXP overflows and underflows, CEIL and FLOOR
meet the integers; LOG, RSQRT, RECIPROCAL, SIN and COS change up to the type's
maximum).  Where the result is one value on a whole side (LOG and RSQRT of negatives:
NaN) that side needs nothing beyond the value classes.

Where the result stops changing is found by the reference itself, on the type: f at
+-2**e for every e, compared bit for bit with f at +-max.  Nothing is listed per
operator.  The obligation is met by PER_BINADE elements in each binade
(:func:`domain_facts`); the "large" cases carry them (:func:`fill_domain`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from conformance.dtypes import DType
from conformance.spec import OperatorSpec, Spec, TypeSupport

if TYPE_CHECKING:
    from strategies.case import Case

PER_BINADE = 4  # elements per binade and sign: a few mantissas, not one point
DOMAIN_FACT = "domain:{arg}:binades"


def domain_argument(spec: Spec, op_spec: OperatorSpec, mode: TypeSupport) -> str | None:
    """The input whose domain must be swept, or None: the one float input of an operator
    the precision rules bound by ulp or absolute error (CAST is a conversion: its
    domain is the value classes')."""
    from reference.compliance.revision_rules import rules_for

    rules = rules_for(spec.revision)  # this spec's tables, whichever the process reads
    bounded = set(rules.ulp_operators.value) | set(rules.abs_error_operators.value)
    name = op_spec.name
    if name == "CAST" or name not in bounded:
        return None
    inputs = [a for a in op_spec.inputs if a.type == "tensor_t" and a.category == "input"]
    if len(inputs) != 1 or len(op_spec.inputs) != 1:
        return None
    dt = _dtype(mode, inputs[0].element_type)
    return inputs[0].name if dt is not None and dt.is_float else None


def _dtype(mode: TypeSupport, var: str) -> DType | None:
    from conformance.dtypes import dtype

    name = mode.bindings.get(var)
    if name is None or name == "-":
        return None
    try:
        return dtype(name)
    except (KeyError, ValueError):
        return None


def _exponents(dt: DType) -> range:
    """Every binade's exponent: from the smallest subnormal's to the largest finite's."""
    fp = dt.fp
    low = int(np.floor(np.log2(fp.normal_min))) - fp.normal_frac
    high = int(np.floor(np.log2(fp.normal_max)))
    return range(low, high + 1)


# (id of the spec, operator, mode) -> (the spec, its binades): a Spec is not hashable,
# and holding it keeps its id from being reused.
_BINADES: dict[tuple[int, str, str], tuple[Spec, tuple[tuple[int, int], ...]]] = {}


def required_binades(spec: Spec, operator: str, mode_name: str) -> tuple[tuple[int, int], ...]:
    """The (sign, exponent) binades a vector must hold for ``operator`` in this mode:
    per sign, every one below the first from which the result equals the result at the
    type's largest finite value of that sign (bit for bit, NaN alike)."""
    key = (id(spec), operator, mode_name)
    if key not in _BINADES:
        _BINADES[key] = (spec, _required_binades(spec, operator, mode_name))
    return _BINADES[key][1]


def _required_binades(spec: Spec, operator: str, mode_name: str) -> tuple[tuple[int, int], ...]:
    from conformance.builder import single_operator_graph
    from reference.engine import evaluate

    op_spec = spec.operator(operator)
    mode = op_spec.mode(mode_name)
    arg = domain_argument(spec, op_spec, mode)
    if arg is None:
        return ()
    dt = _dtype(mode, op_spec.argument(arg).element_type)
    assert dt is not None
    exps = np.array(list(_exponents(dt)))
    probes = np.concatenate([2.0**exps, [dt.fp.normal_max]])
    out_name = op_spec.outputs[0].name
    out_dt = _dtype(mode, op_spec.outputs[0].element_type) or dt
    required: list[tuple[int, int]] = []
    for sign in (1, -1):
        x = (sign * probes).astype(dt.storage)
        graph = single_operator_graph(
            operator, [(arg, x.shape, dt.name)], [(out_name, x.shape, out_dt.name)], spec=spec
        )
        outcome = evaluate(graph, {arg: x}, spec=spec, level="none")
        # in the type: the reference keeps some results in fp64, to be judged by a bound
        with np.errstate(over="ignore", invalid="ignore"):
            y = np.asarray(next(iter(outcome.outputs.values()))).astype(out_dt.storage)
        bits = y.view(f"u{y.dtype.itemsize}")
        nan = np.isnan(y.astype(np.float64))
        same = (bits == bits[-1]) | (nan & nan[-1])
        changing = np.flatnonzero(~same[:-1])
        if changing.size == 0:
            continue  # one result on the whole side (NaN): nothing to sweep
        top = int(changing[-1])  # the last binade whose result still differs from f(max)
        required += [(sign, int(e)) for e in exps[: top + 1]]
    return tuple(required)


def _binade_of(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    v = values.astype(np.float64).reshape(-1)
    ok = np.isfinite(v) & (v != 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.where(ok, np.floor(np.log2(np.abs(np.where(ok, v, 1.0)))), 0).astype(np.int64)
    return np.where(ok, np.sign(v), 0).astype(np.int64), e


def domain_facts(
    spec: Spec, operator: str, mode_name: str, arg: str, values: np.ndarray
) -> set[str]:
    """``domain:ARG:binades`` when ``values`` hold PER_BINADE elements in every required
    binade."""
    required = required_binades(spec, operator, mode_name)
    if not required:
        return set()
    signs, exps = _binade_of(values)
    key = signs * 4096 + exps  # exponents lie in [-149, 127], far inside 4096
    have = dict(zip(*np.unique(key, return_counts=True), strict=True))
    if all(have.get(s * 4096 + e, 0) >= PER_BINADE for s, e in required):
        return {DOMAIN_FACT.format(arg=arg)}
    return set()


def domain_values(dt: DType, required: tuple[tuple[int, int], ...]) -> np.ndarray:
    """PER_BINADE values of ``dt`` in each required binade: mantissas 1, 1.25, 1.5, 1.75
    as the type rounds them, where rounding left the binade (a subnormal binade of one
    or two values) its least value 2**e instead."""
    out = []
    for sign, e in required:
        wanted = sign * (2.0**e) * (1 + np.arange(PER_BINADE) / PER_BINADE)
        held = wanted.astype(dt.storage).astype(np.float64)
        inside = np.floor(np.log2(np.abs(held))) == e
        out.append(np.where(inside, held, sign * 2.0**e))
    flat = np.concatenate(out) if out else np.zeros(0)
    return flat.astype(dt.storage)


def fill_domain(spec: Spec, case: Case) -> Case | None:
    """A copy of a one-operator case whose swept input holds the domain values at its
    start (the rest as drawn), or None: not a domain operator, or a tensor too small to
    hold them."""
    from dataclasses import replace

    from conformance.builder import map_operands

    block = case.graph.main
    if len(block.operators) != 1:
        return None
    op = block.operators[0]
    op_spec = spec.operator(op.op)
    mode = op_spec.mode(case.mode)
    arg = domain_argument(spec, op_spec, mode)
    if arg is None:
        return None
    names = map_operands(op_spec, op).inputs.get(arg, [])
    inputs = dict(case.inputs)
    if len(names) != 1 or names[0] not in inputs:
        return None
    x = np.array(inputs[names[0]], copy=True)
    dt = _dtype(mode, op_spec.argument(arg).element_type)
    assert dt is not None
    values = domain_values(dt, required_binades(spec, op.op, case.mode))
    if values.size == 0 or values.size > x.size:
        return None
    x.reshape(-1)[: values.size] = values
    inputs[names[0]] = x
    return replace(case, inputs=inputs)

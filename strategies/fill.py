"""Meeting value obligations by repair: put each missing special value into a drawn
valid case, one element at a time, keeping a placement only where the case stays valid.

The edge target already places every special value a recipe's ranges allow; a recipe
may still draw a range narrower than the operator needs (values kept small so that
sums cannot overflow).  Here each value class still missing from an input is tried at
a few positions; the reference decides whether the case is still valid, and when it
never is, the rule that refused it is the reason the obligation cannot be met (an
INTDIV divisor of 0 fails ``REQUIRE(divisor != 0)``).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from conformance.dtypes import DType, IntRange
from conformance.spec import Level, Spec
from reference.engine import evaluate
from strategies.case import Case

TRIES = 3  # positions tried per missing value


def class_value(dt: DType, cls: str, bounds: IntRange | None = None) -> float | int | bool | None:
    """A value of class ``cls`` (see strategies.obligations) in ``dt``; ``bounds``:
    the range of a TOSA 1.1 shape value at the level (tensor_size_t), which its min
    and max are taken from."""
    if dt.kind == "bool":
        return {"true": True, "false": False}.get(cls)
    if dt.kind in ("int", "shape"):
        lo, hi = bounds if bounds is not None else dt.int_range
        table = {"min": lo, "max": hi, "zero": 0, "one": 1, "minus-one": -1}
        v = table.get(cls)
        return None if v is None else int(v)
    nmin = dt.fp.normal_min
    smallest = nmin * 2.0**-dt.fp.normal_frac
    table_f = {
        "+0": 0.0,
        "-0": -0.0,
        "+inf": float("inf"),
        "-inf": float("-inf"),
        "nan": float("nan"),
        "subnormal-min": smallest,
        "subnormal-max": nmin - smallest,
        "normal-min": nmin,
        "finite-max": dt.fp.normal_max,
    }
    return table_f.get(cls)


def _padded(case: Case) -> bool:
    pad = case.graph.main.tensors.get("pad")
    return pad is not None and pad.data is not None and bool(np.any(np.asarray(pad.data) > 0))


# Placements a reading of the spec rules out although the reference accepts the case:
# (operator, argument, value class) -> (does it apply to this case, the reason kept as
# the obligation's, in this vector, instead).  Another vector of the pair meets it.
REFUSALS = {
    ("CONV2D_BLOCK_SCALED", "weight_scale", "nan"): (
        _padded,
        "reading v11-mx-conv-padded-nan-scale: a NaN weight scale would reach the "
        "outputs through padding",
    ),
}


def refusal(case: Case, operator: str, arg: str, cls: str) -> str | None:
    """Why ``cls`` must not be placed in ``arg`` of this case, or None."""
    rule = REFUSALS.get((operator, arg, cls))
    return rule[1] if rule is not None and rule[0](case) else None


def fill_values(
    case: Case,
    spec: Spec,
    level: Level,
    missing: Iterable[tuple[str, DType, str]],
) -> dict[str, str]:
    """Try each missing (tensor name, type, value class) in ``case`` (changed in
    place); returns, for every one that could not be placed, the rule that refused it
    as the reason, keyed by the class."""
    from strategies.obligations import shape_value_range

    reasons: dict[str, str] = {}
    tensors = case.graph.main.tensors
    shape_bounds = shape_value_range(spec, level)
    used: dict[str, set[int]] = {}  # by tensor size: positions holding a placed value
    for tname, dt, cls in missing:
        arr = case.inputs.get(tname)
        if arr is None:
            arr = tensors[tname].data
        value = class_value(dt, cls, shape_bounds if dt.kind == "shape" else None)
        if arr is None or value is None or not np.asarray(arr).size:
            continue
        flat = np.asarray(arr).reshape(-1)
        if not np.shares_memory(flat, arr):
            continue
        why = "no position kept the case valid"
        if len(_positions(flat.size, used.get(str(flat.size), set()))) == 0:
            why = f"{tname} has {flat.size} element(s), each holding another placed value"
        # From the end: the edge pattern fills the first elements.
        taken = used.setdefault(str(flat.size), set())  # shared with same-size partners
        partners = _partners(case, tname, flat.size, shapes=dt.kind == "shape")
        for pos in _positions(flat.size, taken):
            # Alone first, then with the other operands at 0 (and at 1) in the same
            # place: min + x overflows for every negative x, min + 0 does not.
            for partner in (None, 0, 1):
                saved = [(p, p[pos].copy()) for p in partners] if partner is not None else []
                old = flat[pos].copy()
                with np.errstate(over="ignore", invalid="ignore"):
                    flat[pos] = np.asarray(value).astype(dt.storage)
                    for p, _ in saved:
                        p[pos] = np.asarray(partner).astype(p.dtype)
                outcome = evaluate(case.graph, case.inputs, spec=spec, level=level)
                if outcome.kind == "valid":
                    why = ""
                    break
                flat[pos] = old
                for p, v in saved:
                    p[pos] = v
                if outcome.rule is not None:
                    why = f"{outcome.rule.kind} {outcome.rule.clause}"
                if not partners:
                    break
            if not why:
                taken.add(pos)
                break
        if why:
            reasons[f"{tname}:{cls}"] = why
    return reasons


def _partners(case: Case, tname: str, size: int, shapes: bool = False) -> list[np.ndarray]:
    """The other graph inputs of the same size, flattened views; with ``shapes``, the
    constant shape values of the same length too (a TOSA 1.1 shape operator's operands
    are constants: ADD_SHAPE's max needs a 0 beside it)."""
    out = []
    arrays = list(case.inputs.items())
    if shapes:
        arrays += [
            (name, t.data)
            for name, t in case.graph.main.tensors.items()
            if t.data is not None and t.dtype.kind == "shape" and name not in case.inputs
        ]
    for name, arr in arrays:
        a = np.asarray(arr)
        if name != tname and a.size == size and a.dtype.kind in "iuf":
            flat = a.reshape(-1)
            if np.shares_memory(flat, a):
                out.append(flat)
    return out


def _positions(size: int, taken: set[int]) -> list[int]:
    """Free positions from the end, then from the middle (the edge pattern fills the
    first elements; a value placed before keeps its place)."""
    out: list[int] = []
    for start in (size - 1, size // 2):
        p = start
        while p >= 0 and len(out) < TRIES and (p in taken or p in out):
            p -= 1
        if p >= 0 and p not in taken and p not in out:
            out.append(p)
    p = size - 1
    while len(out) < TRIES and p >= 0:
        if p not in taken and p not in out:
            out.append(p)
        p -= 1
    return out[:TRIES]

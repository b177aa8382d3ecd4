"""Concrete modes from a ``<typesupport>`` that binds type variables through type sets.

TOSA 1.1's tosa.xml lets one ``<typesupport>`` stand for several type combinations:
``<type_set name values>`` lists types (a set may name ``bs32_fp8ue8m0_set_t``, the six
block-scaled composites), and ``<type_bind type set [same_as] [access_elem_type]>``
draws a type variable from a set (tosa.xsd, EXPECT_TYPESUPPORT):

- a free binding takes every value of its set, and the free bindings combine as a
  cartesian product;
- ``same_as`` ties a variable to the value chosen for another;
- ``access_elem_type`` ties it to that value's access element type: the value itself,
  or ``fp32_t`` for a block-scaled composite.

Each combination is a mode of its own (its requirements differ: DEDUCE-EXT deduces
extensions from its types), named after the XML's mode with the drawn values, e.g.
``fp to MX (in_t=fp16_t, out_t=bs32_fp8ue8m0_fp4e2m1_t)``; its ``family`` is the XML's
mode name.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass

from lxml import etree

from conformance import dtypes

# tosa.xsd: the access element type of a block-scaled composite.
BLOCK_ACCESS_TYPE = "fp32_t"
# introduction, "Extension Data Type Mapping": the requirement marker.
DEDUCE_EXT = "DEDUCE-EXT"
# Reading "deduce-ext-nothing": a DEDUCE-EXT combination whose types deduce no
# extension (CONV2D's mixed-precision fp16 x fp32 into fp32) is the PRO-FP profile's.
# Every such combination in the 1.1 draft is floating-point; the text does not say.
DEDUCED_NOTHING_PROFILE = "PRO-FP"


class TypeSetError(ValueError):
    """A typesupport whose type sets do not make sense; the message says why."""


@dataclass(frozen=True)
class Combination:
    name: str  # the mode's name: the family's, with the drawn values when there are any
    bindings: Mapping[str, str]


def _set_values(values: str) -> list[str]:
    out: list[str] = []
    for v in values.split():
        if v == dtypes.BLOCK_SCALED_SET:
            out.extend(d.spec_name for d in dtypes.BLOCK_SCALED)
        else:
            out.append(v)
    return out


def _access_type(value: str) -> str:
    return BLOCK_ACCESS_TYPE if value.startswith("bs") and value.endswith("_t") else value


def combinations(ts: etree._Element, fixed: Mapping[str, str]) -> list[Combination]:
    """The concrete type combinations of one ``<typesupport>``: one, with ``fixed`` as
    they are, when it binds nothing through a set."""
    family = ts.get("mode")
    sets = {s.get("name"): _set_values(s.get("values")) for s in ts.findall("type_set")}
    binds = ts.findall("type_bind")
    if not binds:
        return [Combination(family, dict(fixed))]
    free: list[tuple[str, list[str]]] = []
    tied: list[tuple[str, str, bool]] = []  # (var, referenced var, access element type)
    for b in binds:
        var, set_name = b.get("type"), b.get("set")
        if set_name not in sets:
            raise TypeSetError(f"mode {family!r}: {var} binds unknown type set {set_name!r}")
        if var in fixed:
            raise TypeSetError(f"mode {family!r}: {var} is both given and bound to a set")
        ref = b.get("same_as") or b.get("access_elem_type")
        if ref:
            tied.append((var, ref, b.get("access_elem_type") is not None))
        else:
            free.append((var, sets[set_name]))
    free_names = {v for v, _ in free}
    for var, ref, _ in tied:
        if ref not in free_names:
            raise TypeSetError(f"mode {family!r}: {var} is tied to {ref}, which no set binds")
    out = []
    for values in itertools.product(*(vals for _, vals in free)):
        drawn = dict(zip((v for v, _ in free), values, strict=True))
        bindings = {**fixed, **drawn}
        for var, ref, access in tied:
            bindings[var] = _access_type(drawn[ref]) if access else drawn[ref]
        shown = ", ".join(f"{v}={drawn[v]}" for v, _ in free)
        out.append(Combination(f"{family} ({shown})", bindings))
    return out


def deduced(bindings: Mapping[str, str], table: Mapping[str, tuple[str, ...]]) -> frozenset[str]:
    """The extensions a combination's types deduce (DEDUCE-EXT)."""
    return frozenset(e for t in bindings.values() for e in table.get(t, ()))

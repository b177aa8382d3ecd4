"""What the tests of ``vectors`` share: where the schemas are, tosa.xml's attribute and
enum names as the spec model reads them, and exact value equality for round trips."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from lxml import etree

from conformance.spec import default_spec_path, load_spec

ROOT = Path(__file__).resolve().parents[1]
SEED_FBS = ROOT / "conformance" / "tosa_spec" / "2024-04-draft" / "tosa.fbs"
EXTENDED_FBS = ROOT / "vectors" / "schema" / "tosa.fbs"


def xml_operator_attributes() -> dict[str, list[str]]:
    """Operator name -> its attribute argument names, from tosa.xml."""
    spec = load_spec()
    return {name: [a.name for a in op.attributes] for name, op in spec.operators.items()}


def xml_enum(name: str) -> list[str]:
    """The value names of tosa.xml's enum ``name``, read from the XML itself."""
    tree = etree.parse(str(default_spec_path()))
    (enum,) = tree.xpath(f"//enum[@name='{name}']")
    return [str(v.get("name")) for v in enum.iter("enumval")]


def same_value(a: object, b: object) -> bool:
    """Exact equality: arrays bit for bit with dtype and shape, floats incl. NaN and -0."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and a.tobytes() == b.tobytes()
        )
    if isinstance(a, float) or isinstance(b, float):
        if not (isinstance(a, float) and isinstance(b, float)):
            return False
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return type(a) is type(b) and a == b

"""What the tests of ``vectors`` share: where the schemas are, and tosa.xml's attribute
and enum names as the spec model reads them."""

from __future__ import annotations

from pathlib import Path

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

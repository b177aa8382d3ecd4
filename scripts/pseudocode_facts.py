"""Regenerate a revision's pseudocode fact table from the specification text.

    python scripts/pseudocode_facts.py REVISION SPEC_DIR

SPEC_DIR is a checkout of the TOSA specification at the revision's commit (it holds
``pseudocode/operators/*.tosac`` and ``chapters/*.adoc``).  The table is written to
``conformance/tosa_spec/REVISION/pseudocode.json``; commit it with the revision.

Tests read the table, never the specification text: the text is not part of the
project, and a test must not depend on a checkout beside it.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TABLE = "pseudocode.json"

# An operator without a pseudocode file of its own is specified as a variant of
# another one: "Compared to AVG_POOL2D, AVG_POOL2D_ADAPTIVE has ..." (tensor_ops.adoc).
_VARIANT = re.compile(r"Compared to (\w+), (\w+) ")


def _variants(spec_dir: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for chapter in sorted((spec_dir / "chapters").glob("*.adoc")):
        for base, name in _VARIANT.findall(chapter.read_text(encoding="utf-8")):
            found.setdefault(name, base)
    return found


def facts(operators: list[str], spec_dir: Path) -> dict[str, dict[str, object]]:
    """Per operator: the pseudocode file that defines it, and whether that file has an
    ERROR_IF and a REQUIRE."""
    folder = spec_dir / "pseudocode" / "operators"
    variants = _variants(spec_dir)
    table: dict[str, dict[str, object]] = {}
    for name in sorted(operators):
        file = folder / f"{name}.tosac"
        if not file.is_file() and name in variants:
            file = folder / f"{variants[name]}.tosac"
        if not file.is_file():
            raise SystemExit(f"{spec_dir}: no pseudocode for {name} ({file.name} is missing)")
        text = file.read_text(encoding="utf-8")
        table[name] = {
            "file": file.name,
            "error_if": "ERROR_IF" in text,
            "require": "REQUIRE" in text,
        }
    return table


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    sys.path.insert(0, str(REPO))
    from conformance.spec import load_revision

    revision, spec_dir = argv[0], Path(argv[1])
    spec = load_revision(revision)
    table = facts(list(spec.operators), spec_dir)
    out = REPO / "conformance" / "tosa_spec" / revision / TABLE
    out.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{out.relative_to(REPO)}: {len(table)} operators")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""``tosa-conformance coverage``: what a pack covers, per operator family."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from conformance.cli.options import UsageError
from conformance.coverage_report import (
    compare_family,
    comparison_table,
    family_rows,
    kind_rows,
    kind_table,
    markdown_table,
)
from conformance.spec import Spec


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "coverage",
        help="what a pack covers: obligations met, vectors and tensor sizes per family",
        description="Per operator family: the pairs, the coverage obligations the pack "
        "meets, its vectors by kind, and the median and largest tensor; then every unmet "
        "obligation with the reason the generator recorded.",
    )
    p.add_argument("pack", metavar="PACK", help="pack folder, or a zip of one")
    p.add_argument("--json", action="store_true", help="the pack's per-pair record as JSON")
    p.add_argument(
        "--against",
        metavar="OTHER",
        help="a second pack (an imported Arm suite, another release) to set beside PACK, "
        "pair by pair, for the family --family names",
    )
    p.add_argument("--family", metavar="GROUP", help="the operator family for --against")
    p.set_defaults(run=_run)


def _run(spec: Spec, args: argparse.Namespace) -> int:
    from vectors.pack import open_pack

    if bool(args.against) != bool(args.family):
        raise UsageError("--against and --family go together: the pack to compare, and the family")
    if args.against:
        return _compare(spec, args)
    if args.json:
        with open_pack(args.pack) as pack:
            print(json.dumps(pack.coverage, indent=1))
        return 0
    rows, recorded = family_rows(spec, Path(args.pack))
    print(markdown_table(rows), end="")
    if not recorded:
        print("\nthis pack records no coverage obligations (written by an older version)")
        return 0
    with open_pack(args.pack) as pack:
        record = pack.coverage or []
    print("\nobligations by kind (pairs):\n")
    print(kind_table(kind_rows(record)), end="")
    rewrites = kind_rows(record, "rewrite")
    if rewrites:
        print("\ngraph rewrite obligations (pairs; docs/obligations.md#rewrite-obligations):\n")
        print(kind_table(rewrites, "rewrite"), end="")
    unmet = [(c, k, why) for c in record for k, why in sorted(c["unmet"].items())]
    met = sum(len(c["met"]) for c in record)
    print(f"\n{met} of {met + len(unmet)} obligations met; unmet: {len(unmet)}")
    for c, k, why in unmet:
        print(f"  {c['operator']} [{c['mode']}] {k}: {why}")
    return 0


def _compare(spec: Spec, args: argparse.Namespace) -> int:
    packs = (Path(args.pack), Path(args.against))
    try:
        rows = compare_family(spec, packs, args.family)
    except KeyError as exc:
        raise UsageError(f"--family {args.family}: {exc.args[0]}") from None
    names = (_label(packs[0]), _label(packs[1]))
    if names[0] == names[1]:
        names = ("PACK", "OTHER")
    print(comparison_table(rows, names), end="")
    return 0


def _label(path: Path) -> str:
    """A short column name: the pack folder's name."""
    return path.resolve().name or str(path)

"""``tosa-conformance import-arm DIR... -o PACK``: Arm's test folders as a pack
(conformance.arm_suite.importer).

The revision is the one of Arm's graphs unless --tosa names it (``select_spec``).
Exit status: 0 imported (the summary lists every test not imported with its reason and
every conflict between Arm's descriptors and our rules), 2 bad input (no Arm test under
a folder, a non-empty output, nothing importable), printed by ``main`` as one line.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from conformance.arm_suite.importer import import_arm, write_manifest
from conformance.claims import DEFAULT_LEVEL
from conformance.cli.options import UsageError
from conformance.progress import Progress
from conformance.spec import Spec


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "import-arm",
        help="import Arm's generated test folders (tosa_verif_conformance_generator) as a pack",
        description="Import every test folder (one holding desc.json) under each DIR: the "
        "graph from its .tosa, the inputs from its .npy files or generated from "
        "meta.data_gen with Arm's data generator library, expected results and bounds "
        "from our reference, Arm's meta.compliance and verdict kept in each vector's "
        "provenance beside every conflict with our rules. Tests that cannot be imported "
        "are listed with the reason.",
    )
    p.add_argument("arm_dirs", nargs="+", type=Path, metavar="DIR", help="Arm test folders")
    p.add_argument(
        "-o", "--output", required=True, type=Path, metavar="PACK", help="new pack folder"
    )
    p.add_argument(
        "--level", default=DEFAULT_LEVEL, help=f"level to judge by (default {DEFAULT_LEVEL})"
    )
    p.add_argument(
        "--manifest",
        type=Path,
        metavar="FILE",
        help="also write a capability manifest (TOML) of the imported pairs, for "
        "'certify --capabilities FILE': a subset verdict when the suite does not cover a claim",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=_import_arm)


def _import_arm(spec: Spec, args: argparse.Namespace) -> int:
    try:
        spec.level(args.level)  # an unknown level: one line before any work
    except KeyError as exc:
        raise UsageError(f"--level {args.level}: {exc.args[0]}") from None
    with Progress("import-arm", unit="tests", enabled=not args.quiet) as progress:
        summary = import_arm(args.arm_dirs, args.output, spec, args.level, progress)
    for line in summary.lines():
        print(line)
    if args.manifest:
        n = write_manifest(args.output, args.manifest)
        print(f"capability manifest of the {n} imported pairs: {args.manifest}")
    return 0

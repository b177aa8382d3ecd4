"""``tosa-conformance verify-pack``: check a pack's integrity before it is run.

Exit status: 0 intact, 1 problems found (each printed on its own line), 2 the path is
not a pack at all (printed by ``main`` as a one-line error).
"""

from __future__ import annotations

import argparse
import json
import sys

from conformance.spec import Spec
from vectors.pack import verify


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "verify-pack",
        help="check every file of a vector pack against its hashes, schemas and graphs",
    )
    p.add_argument("pack", metavar="PACK", help="pack folder, or a zip of one")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=_verify_pack)


def _verify_pack(spec: Spec, args: argparse.Namespace) -> int:
    del spec  # integrity does not depend on the spec; the pack records its own
    report = verify(args.pack)  # NotAPackError -> main prints it, exit 2
    if args.json:
        data = {
            "pack": report.path,
            "ok": report.ok,
            "vectors": report.vectors,
            "pack_sha256": report.pack_sha256,
            "problems": report.problems,
        }
        print(json.dumps(data, indent=2))
    elif report.ok:
        n = report.vectors
        print(f"pack OK: {n} vector{'' if n == 1 else 's'}, sha256 {report.pack_sha256}")
    else:
        for problem in report.problems:
            print(problem)
        n = len(report.problems)
        print(f"{report.path}: {n} problem{'s' if n != 1 else ''}", file=sys.stderr)
    return 0 if report.ok else 1

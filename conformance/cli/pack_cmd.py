"""``tosa-conformance verify-pack``: check a pack's integrity before it is run;
``tosa-conformance extract``: copy some of a pack's vectors into a pack of their own
(the failures to send a vendor, a reproducer pack for docs).

verify-pack's exit status: 0 intact, 1 problems found (each printed on its own line),
2 the path is not a pack at all (printed by ``main`` as a one-line error).  extract's:
0 written, 2 bad input (a damaged pack, no vector chosen, a non-empty output folder).
"""

from __future__ import annotations

import argparse
import json
import sys

from conformance.cli.options import UsageError
from conformance.selection import SelectionError, compile_option
from conformance.spec import Spec
from vectors.pack import extract, open_pack, verify


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "verify-pack",
        help="check every file of a vector pack against its hashes, schemas and graphs",
    )
    p.add_argument("pack", metavar="PACK", help="pack folder, or a zip of one")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=_verify_pack)

    x = sub.add_parser(
        "extract",
        help="copy the vectors whose names match into a new pack",
        description="Copy the vectors of --pack whose name matches --vectors (fully) into "
        "a new pack at -o, byte for byte, with their hashes checked.",
    )
    x.add_argument("--pack", required=True, help="pack folder, or a zip of one")
    x.add_argument(
        "--vectors", required=True, metavar="REGEX", help="vectors whose name matches fully"
    )
    x.add_argument("-o", "--output", required=True, metavar="DIR", help="a new or empty folder")
    x.set_defaults(run=_extract)


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


def _extract(spec: Spec, args: argparse.Namespace) -> int:
    del spec  # the vectors are copied as they are; the pack records its revision
    try:
        pattern = compile_option("--vectors", args.vectors)
    except SelectionError as exc:
        raise UsageError(str(exc)) from None
    with open_pack(args.pack) as pack:
        names = [n for n in pack.names if pattern.fullmatch(n)]
    if not names:
        raise UsageError(f"--vectors {args.vectors!r}: matches no vector of {args.pack}")
    sha = extract(args.pack, names, args.output)
    n = len(names)
    print(f"{args.output}: {n} vector{'' if n == 1 else 's'} from {args.pack}, sha256 {sha}")
    return 0

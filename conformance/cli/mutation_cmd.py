"""``tosa-conformance mutants`` and ``tosa-conformance mutation-score``."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from conformance.cli.options import UsageError, default_jobs
from conformance.spec import Spec


def register(sub: argparse._SubParsersAction) -> None:
    m = sub.add_parser("mutants", help="list the mutant backends (mutant:NAME)")
    m.set_defaults(run=_list)
    s = sub.add_parser(
        "mutation-score",
        help="run every mutant backend on a pack and report which the pack catches",
    )
    s.add_argument("--pack", required=True, metavar="PACK")
    s.add_argument("--mutants", metavar="REGEX", help="only mutants whose name matches fully")
    s.add_argument("--jobs", type=int, default=default_jobs(), metavar="N")
    s.add_argument("--timeout", type=float, default=60.0, metavar="S")
    s.add_argument("--json", type=Path, metavar="F", help="write the outcomes as JSON")
    s.set_defaults(run=_score)


def _list(spec: Spec, args: argparse.Namespace) -> int:
    from conformance.backends.mutants import _catalogue

    for name, mutant in sorted(_catalogue().items()):
        print(f"{name:38} {', '.join(mutant.operators)}: {mutant.bug}")
    return 0


def _score(spec: Spec, args: argparse.Namespace) -> int:
    from conformance.mutation import mutation_score, score

    if args.mutants:
        try:
            re.compile(args.mutants)
        except re.error as exc:
            raise UsageError(
                f"--mutants {args.mutants!r} is not a regular expression: {exc}"
            ) from None
    if not (Path(args.pack) / "pack.json").exists() and not str(args.pack).endswith(".zip"):
        raise UsageError(f"{args.pack}: no pack.json; give a pack folder or .zip")

    def show(o) -> None:
        by = f" by {o.killed_by[0].vector}" if o.killed_by else ""
        print(f"{o.status:15} {o.name}{by}", flush=True)

    outcomes = mutation_score(
        Path(args.pack),
        mutants=args.mutants,
        jobs=args.jobs,
        timeout=args.timeout,
        on_mutant=show,
    )
    killed, applicable = score(outcomes)
    pct = 100.0 * killed / applicable if applicable else 0.0
    print(f"mutation score: {killed} of {applicable} applicable mutants killed ({pct:.0f}%)")
    survivors = [o for o in outcomes if o.status == "survived"]
    for o in survivors:
        print(f"  survived: {o.name} ({', '.join(o.operators)}): {o.bug}")
    for o in outcomes:
        if o.status == "false failure":  # a compliant behaviour the pack fails
            print(f"  false failure: {o.name} by {o.killed_by[0].vector}: {o.bug}")
    if args.json is not None:
        doc = [
            {
                "mutant": o.name,
                "operators": list(o.operators),
                "bug": o.bug,
                "status": o.status,
                "vectors": o.vectors,
                "killed_by": [r.vector for r in o.killed_by[:5]],
            }
            for o in outcomes
        ]
        args.json.write_text(json.dumps(doc, indent=1) + "\n")
    return 0

"""``tosa-conformance fuzz``: find, shrink and save cases a backend gets wrong."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from conformance.backends import BackendError, get_backend
from conformance.cli.main import UsageError, add_claim_arguments, claim_from_args
from conformance.fuzz import FINDING_KINDS, Fuzzer
from conformance.spec import Spec

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*$")


def parse_duration(text: str) -> float:
    """``90``, ``90s``, ``10m``, ``1.5h`` -> seconds."""
    m = _DURATION.match(text)
    if not m:
        raise UsageError(f"--time {text!r} is not a duration like 90s, 10m or 1h")
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "fuzz",
        help="fuzz a backend and save minimal failing vectors",
        description="Draw valid and invalid cases of every required (operator, mode) pair, "
        "run them on the backend, and shrink each failure to a minimal case saved as a "
        "vector in the findings pack, with a command that replays it.",
    )
    p.add_argument("--backend", required=True, metavar="B")
    add_claim_arguments(p)
    p.set_defaults(profile=None)
    p.add_argument("--ops", metavar="REGEX", help="only operators whose name matches fully")
    p.add_argument(
        "--max-examples", type=int, default=50, metavar="N", help="examples per pair (50)"
    )
    p.add_argument("--time", metavar="DURATION", help="keep going for this long, e.g. 10m")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=30.0, metavar="S", help="per case (30)")
    p.add_argument("--no-invalid", action="store_true", help="valid cases only")
    p.add_argument("-o", "--output", default="findings", metavar="FINDINGS")
    p.set_defaults(run=_run)


def _run(spec: Spec, args: argparse.Namespace) -> int:
    if not args.profile:
        # fuzzing is not a certification: by default everything the spec defines
        args.profile = list(spec.profiles)
        args.extension = args.extension or ["all"]
    claim = claim_from_args(spec, args)
    seconds = parse_duration(args.time) if args.time else None
    if args.max_examples < 1:
        raise UsageError("--max-examples must be at least 1")
    if args.ops:
        try:
            re.compile(args.ops)
        except re.error as exc:
            raise UsageError(f"--ops {args.ops!r} is not a regular expression: {exc}") from None
    try:
        get_backend(args.backend)
    except BackendError as exc:
        raise UsageError(str(exc)) from None
    out = Path(args.output)
    fuzzer = Fuzzer(
        spec,
        claim,
        args.backend,
        out,
        ops=args.ops,
        seed_value=args.seed,
        timeout=args.timeout,
        invalid=not args.no_invalid,
    )
    if not fuzzer.pairs:
        fuzzer.close()
        raise UsageError("no (operator, mode) pair to fuzz: check --ops and the claim")

    def found(f) -> None:
        print(
            f"FOUND {f.kind} ({FINDING_KINDS[f.kind]}): {f.operator} [{f.mode}] after "
            f"{f.examples} examples",
            flush=True,
        )
        print(f"  {f.detail[:400]}", flush=True)
        print(f"  replay: {f.replay}", flush=True)

    try:
        findings = fuzzer.run(max_examples=args.max_examples, seconds=seconds, on_finding=found)
    finally:
        fuzzer.close()
    print(
        f"{len(findings)} findings in {len(fuzzer.pairs)} pairs after {fuzzer.examples} "
        f"examples" + (f"; findings pack: {out}" if findings else ""),
        file=sys.stdout,
    )
    return 1 if findings else 0

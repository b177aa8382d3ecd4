"""``tosa-conformance fuzz``: find, shrink and save cases a backend gets wrong."""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from pathlib import Path

from conformance.backends import BackendError, get_backend
from conformance.cli.options import (
    INTERRUPTED,
    NO_VECTORS,
    UsageError,
    add_capabilities_argument,
    add_claim_arguments,
    add_executor_arguments,
    claim_from_args,
    executor_errors,
    executor_from_args,
    manifest_from_args,
)
from conformance.fuzz import FINDING_KINDS, Fuzzer
from conformance.spec import Spec, TypeSupport

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*$")


def parse_duration(text: str) -> float:
    """``90``, ``90s``, ``10m``, ``1.5h`` -> seconds."""
    m = _DURATION.match(text)
    if not m:
        raise UsageError(f"--time {text!r} is not a duration like 90s, 10m or 1h")
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fuzz",
        help="fuzz a backend and save minimal failing vectors",
        description="Draw valid and invalid cases of every required (operator, mode) pair, "
        "run them on the backend, and shrink each failure to a minimal case saved as a "
        "vector in the findings pack, with a command that replays it.",
    )
    p.add_argument("--backend", required=True, metavar="B")
    add_claim_arguments(p)
    p.add_argument(
        "--ops", metavar="REGEX", help="only operators whose name matches fully (any case)"
    )
    p.add_argument(
        "--max-examples", type=int, default=50, metavar="N", help="examples per pair (50)"
    )
    p.add_argument("--time", metavar="DURATION", help="keep going for this long, e.g. 10m")
    p.add_argument(
        "--seed", type=int, metavar="S", help="search seed (default: a new one, printed first)"
    )
    p.add_argument("--timeout", type=float, default=30.0, metavar="S", help="per case (30)")
    p.add_argument("--no-invalid", action="store_true", help="valid cases only")
    p.add_argument("-o", "--output", default="findings", metavar="FINDINGS")
    p.add_argument("--quiet", action="store_true", help="no per-pair progress lines")
    add_executor_arguments(p)
    add_capabilities_argument(p)
    p.set_defaults(run=_run)


def _run(spec: Spec, args: argparse.Namespace) -> int:
    claim = claim_from_args(spec, args)  # --profile is required, as for generate
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
    executor = executor_from_args(args)
    manifest = manifest_from_args(spec, args)
    if manifest is not None and executor is not None:
        # The Dask searches rebuild their Fuzzer from a request that holds no manifest.
        raise UsageError("--capabilities does not work with --executor yet; fuzz on this machine")
    out = Path(args.output)
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(2**31)
    fuzzer = Fuzzer(
        spec,
        claim,
        args.backend,
        out,
        ops=args.ops,
        seed_value=args.seed,
        timeout=args.timeout,
        invalid=not args.no_invalid,
        capabilities=manifest,
    )
    if not fuzzer.pairs:
        fuzzer.close()
        print(
            f"tosa-conformance: no vectors: no (operator, mode) pair of {claim.describe()} "
            + (f"matches --ops {args.ops!r}" if args.ops else "has a recipe"),
            file=sys.stderr,
        )
        return NO_VECTORS
    print(f"fuzz seed {args.seed} (the same --seed searches the same cases)", flush=True)
    started = time.monotonic()
    searched: list[str] = []

    def pair(mode: TypeSupport) -> None:
        searched.append(f"{mode.operator} [{mode.mode}]")
        if not args.quiet:
            elapsed = time.monotonic() - started
            print(
                f"fuzz: pair {len(searched)} of {len(fuzzer.pairs)}: {searched[-1]} "
                f"({fuzzer.examples} examples, {len(fuzzer.findings)} findings so far, "
                f"{elapsed:.0f} s)",
                file=sys.stderr,
                flush=True,
            )

    def found(f) -> None:
        print(
            f"FOUND {f.kind} ({FINDING_KINDS[f.kind]}): {f.operator} [{f.mode}] after "
            f"{f.examples} examples",
            flush=True,
        )
        print(f"  {f.detail[:400]}", flush=True)
        print(f"  replay: {f.replay}", flush=True)

    try:
        with executor_errors():
            findings = fuzzer.run(
                max_examples=args.max_examples,
                seconds=seconds,
                on_finding=found,
                on_pair=pair,
                executor=executor,
            )
    except KeyboardInterrupt:
        fuzzer.save_index()  # the findings so far stay a pack
        print(
            f"tosa-conformance: interrupted after {len(searched)} of {len(fuzzer.pairs)} "
            f"pairs; {len(fuzzer.findings)} findings in {out}; rerun the same command to "
            "replay them first",
            file=sys.stderr,
        )
        return INTERRUPTED
    finally:
        fuzzer.close()
    elapsed = max(time.monotonic() - started, 1e-9)
    covered = sorted(set(searched))
    print(
        f"{len(findings)} findings in {len(covered)} pairs after {fuzzer.examples} examples "
        f"({fuzzer.examples / elapsed:.1f} examples/s)"
        + (f"; findings pack: {out}" if findings else ""),
        file=sys.stdout,
    )
    print(f"pairs covered: {', '.join(covered)}")
    return 1 if findings else 0

"""``tosa-conformance generate``: a vector pack for a claim."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance.cli.options import (
    NO_VECTORS,
    UsageError,
    add_capabilities_argument,
    add_claim_arguments,
    add_executor_arguments,
    claim_from_args,
    default_jobs,
    executor_errors,
    executor_from_args,
    manifest_from_args,
)
from conformance.generate import generate, summarize, unmet_lines
from conformance.generate_plan import DEFAULT_EXAMPLES, Options
from conformance.progress import Progress
from conformance.spec import Spec
from vectors.pack import FolderLock


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "generate",
        help="generate a vector pack for a claim",
        description="Generate a deterministic vector pack covering every (operator, mode) "
        "pair the claim requires: valid vectors with their expected results and compliance "
        "bounds, and must-fail vectors that each break one ERROR_IF.",
    )
    add_claim_arguments(p)
    p.add_argument("-o", "--output", required=True, metavar="PACK", help="pack folder to write")
    p.add_argument("--ops", metavar="REGEX", help="only operators whose name matches fully")
    p.add_argument(
        "--examples",
        type=int,
        default=DEFAULT_EXAMPLES,
        metavar="N",
        help=f"valid vectors per (operator, mode) pair (default {DEFAULT_EXAMPLES})",
    )
    p.add_argument(
        "--negative",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also write must-fail vectors (default: yes)",
    )
    p.add_argument(
        "--targeted",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also write the vectors that meet the coverage obligations: every special "
        "value, large tensors, every rank, attribute value and rounding tie (default: yes; "
        "a pack without them is smaller, and certify warns about it)",
    )
    p.add_argument(
        "--chains",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also write valid vectors that are chains of 2-5 of the claim's operators, "
        "each taking the one before's output, in the claim's modes (default: yes)",
    )
    p.add_argument(
        "--levels",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also write the vectors at and just above every level limit (default: yes)",
    )
    p.add_argument("--seed", type=int, default=0, help="pack seed (default 0)")
    p.add_argument("--jobs", type=int, default=default_jobs(), metavar="N", help="worker processes")
    p.add_argument(
        "--max-elements",
        type=int,
        metavar="N",
        help="largest tensor, in elements (default: the strategies' budget, 4096)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_executor_arguments(p)
    add_capabilities_argument(p)
    p.set_defaults(run=_run)


def _run(spec: Spec, args: argparse.Namespace) -> int:
    claim = claim_from_args(spec, args)
    if args.examples < 1:
        raise UsageError("--examples must be at least 1")
    if args.max_elements is not None and args.max_elements < 1:
        raise UsageError("--max-elements must be at least 1")
    if args.ops:
        import re

        try:
            pattern = re.compile(args.ops, re.IGNORECASE)
        except re.error as exc:
            raise UsageError(f"--ops {args.ops!r} is not a regular expression: {exc}") from None
        if not any(pattern.fullmatch(op) for op in spec.operators):
            raise UsageError(f"--ops {args.ops!r} matches no operator; see 'spec ops'")
        from conformance.claims import required_modes

        if not any(pattern.fullmatch(m.operator) for m in required_modes(spec, claim)):
            # Operators of the spec, none required by the claim: an empty selection,
            # exit status 5 as for run (a name in no operator is a typo: exit 2).
            msg = f"tosa-conformance: no vectors: --ops {args.ops!r} matches no operator "
            print(msg + f"that {claim.describe()} requires", file=sys.stderr)
            return NO_VECTORS
    executor = executor_from_args(args)
    out = Path(args.output)
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"{out} exists and is not empty; choose a new folder for the pack")
    # Held to the end of the process: a second generate into the folder is refused
    # (vectors.pack.FolderLock); the check again, for one that finished meanwhile.
    lock = FolderLock(out)
    if any(out.iterdir()):
        lock.close()
        raise UsageError(f"{out} exists and is not empty; choose a new folder for the pack")
    options = Options(
        examples=args.examples,
        negative=args.negative,
        max_elements=args.max_elements,
        ops=args.ops,
        levels=args.levels,
        targeted=args.targeted,
        chains=args.chains,
        capabilities=manifest_from_args(spec, args),
    )
    try:
        with executor_errors(), Progress("generate", enabled=not args.quiet) as progress:
            result = generate(
                spec,
                claim,
                out,
                options=options,
                seed=args.seed,
                jobs=args.jobs,
                spec_path=args.spec,
                progress=progress,
                executor=executor,
            )
    except KeyboardInterrupt:
        # generate has no --resume: pack.json is written last, so the folder is no pack yet.
        print(
            f"tosa-conformance: interrupted after {progress.done} of {progress.total} vectors; "
            f"{out} is incomplete: remove it and rerun",
            file=sys.stderr,
        )
        return 130
    for line in summarize(result):
        print(line)
    for note in result.notes:
        print(f"note: {note}")
    if options.capabilities is not None:
        m, unclaimed = options.capabilities, result.plan.unclaimed
        print(
            f"capabilities: manifest {m.name} (sha256 {m.sha256[:12]}) claims "
            f"{len(result.plan.modes)} of the claim's {len(result.plan.modes) + len(unclaimed)} "
            f"pairs; the {len(unclaimed)} unclaimed have no vectors"
        )
    for line in unmet_lines(result.coverage):
        print(line)
    for problem in result.problems:
        print(f"warning: {problem}", file=sys.stderr)
    return 0

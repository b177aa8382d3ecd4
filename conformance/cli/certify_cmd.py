"""``tosa-conformance certify``: a verdict, a certificate and reports for a claim."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from conformance.backends import BackendError, get_backend
from conformance.certify import (
    CertifyError,
    check_pack,
    failing_pairs,
    make_certificate,
    pack_coverage,
)
from conformance.certify_report import html_page, markdown
from conformance.claims import required_modes
from conformance.cli.main import UsageError, add_claim_arguments, claim_from_args
from conformance.generate import DEFAULT_EXAMPLES, Options, ProgressBar, default_jobs, generate
from conformance.runner import PASSED, run_pack
from conformance.spec import Spec


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "certify",
        help="certify a backend against a claim",
        description="Run a pack that covers the claim on a backend and write a certificate "
        "(JSON) and reports (Markdown, HTML). Exit status 0 only if every required (operator, "
        "mode) pair is met.",
    )
    p.add_argument("--backend", required=True, metavar="B")
    add_claim_arguments(p)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--pack", metavar="PACK", help="an existing pack covering the claim")
    src.add_argument(
        "--generate", action="store_true", help="generate the pack for the claim first"
    )
    p.add_argument("-o", "--output", default="certification", metavar="DIR", help="report folder")
    p.add_argument("--jobs", type=int, default=default_jobs(), metavar="N")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S")
    p.add_argument("--seed", type=int, default=0, help="seed for --generate")
    p.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES, help="for --generate")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(run=_run)


def _run(spec: Spec, args: argparse.Namespace) -> int:
    claim = claim_from_args(spec, args)
    try:
        get_backend(args.backend)
    except BackendError as exc:
        raise UsageError(str(exc)) from None
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    if args.generate:
        pack = out / "pack"
        if pack.exists() and any(pack.iterdir()):
            raise UsageError(f"{pack} exists; remove it or certify with --pack {pack}")
        result = generate(
            spec,
            claim,
            pack,
            options=Options(examples=args.examples),
            seed=args.seed,
            jobs=args.jobs,
            spec_path=args.spec,
            progress=ProgressBar(enabled=not args.quiet),
        )
        for problem in result.problems:
            print(f"warning: {problem}")
    else:
        pack = Path(args.pack)
    try:
        check_pack(spec, claim, pack)
    except CertifyError as exc:
        raise UsageError(str(exc)) from None
    from vectors.pack import open_pack

    with open_pack(pack) as opened:
        pack_sha = opened.pack_sha256
    covered = pack_coverage(spec, claim, pack)
    for warning in covered.warnings():
        print(f"warning: {warning}", file=sys.stderr)
    operators = sorted({m.operator for m in required_modes(spec, claim)})
    report = run_pack(
        pack,
        args.backend,
        jobs=args.jobs,
        timeout=args.timeout,
        ops="|".join(operators),
        json_path=out / "results.jsonl",
        progress=ProgressBar(enabled=not args.quiet),
    )
    cert = make_certificate(spec, claim, args.backend, pack_sha, report, covered)
    margins: dict[str, list[float]] = {}
    for r in report.results:
        if r.kind == "valid" and r.verdict == PASSED and r.margin is not None:
            margins.setdefault(r.operator, []).append(r.margin)
    (out / "certificate.json").write_text(json.dumps(cert.to_json(), indent=1) + "\n")
    (out / "report.md").write_text(markdown(cert, str(pack), margins))
    (out / "report.html").write_text(html_page(cert, str(pack), margins))
    summary = cert.to_json()["summary"]
    verdict = "PASS" if cert.passed else "FAIL"
    print(
        f"{verdict}: {args.backend} for {claim.describe()}: {summary['met']} of "
        f"{summary['required']} required pairs met, {summary['failed']} failed, "
        f"{summary['not_met']} not met"
    )
    for p in list(failing_pairs(cert))[:20]:
        print(f"  {p.operator} [{p.mode}]: {p.status}")
    print(
        f"certificate: {out / 'certificate.json'}; reports: {out / 'report.md'}, "
        f"{out / 'report.html'}"
    )
    return 0 if cert.passed else 1

"""``tosa-conformance certify``: a verdict, a certificate and reports for a claim."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from conformance.backends import BackendError, get_backend
from conformance.certify import (
    CertifyError,
    chain_vectors,
    check_pack,
    failing_pairs,
    make_certificate,
    pack_coverage,
)
from conformance.certify_report import html_page, markdown
from conformance.claims import required_modes
from conformance.cli.capabilities_cmd import add_capabilities_argument, manifest_from_args
from conformance.cli.executor_args import (
    add_executor_arguments,
    executor_errors,
    executor_from_args,
)
from conformance.cli.main import UsageError, add_claim_arguments, claim_from_args
from conformance.cli.run_cmd import add_selection_arguments, read_selection, stopped
from conformance.generate import DEFAULT_EXAMPLES, Options, default_jobs, generate
from conformance.progress import Progress
from conformance.runner import PASSED, Interrupted, RunReport, run_pack
from conformance.selection import KnownFailures, SelectionError
from conformance.spec import Spec


def register(sub: argparse._SubParsersAction) -> None:
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
    add_selection_arguments(p)
    p.add_argument(
        "--results",
        nargs="+",
        type=Path,
        metavar="FILE",
        help="build the certificate from these results of 'run --json' on --pack (e.g. the "
        "shards of one run) instead of running the pack",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="keep the results an interrupted certify left in DIR/results.jsonl; run the rest",
    )
    p.add_argument("--quiet", action="store_true")
    add_executor_arguments(p)
    add_capabilities_argument(p)
    p.set_defaults(run=_run)


SHOWN_PAIRS = 20  # failing pairs listed on the console; the reports list them all


def _run(spec: Spec, args: argparse.Namespace) -> int:
    claim = claim_from_args(spec, args)
    known = read_selection(args)
    if args.results and args.pack is None:
        raise UsageError("--results needs --pack PACK: the pack the results were run on")
    try:
        get_backend(args.backend)
    except BackendError as exc:
        raise UsageError(str(exc)) from None
    executor = executor_from_args(args)
    manifest = manifest_from_args(spec, args)  # a subset certificate: its pairs only
    if manifest is not None and not any(manifest.claims(m) for m in required_modes(spec, claim)):
        raise UsageError(
            f"--capabilities {args.capabilities}: manifest {manifest.name} claims none of the "
            f"pairs {claim.describe()} requires: there is no subset to certify"
        )
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    if args.generate:
        pack = out / "pack"
        if pack.exists() and any(pack.iterdir()):
            raise UsageError(f"{pack} exists; remove it or certify with --pack {pack}")
        try:
            with executor_errors(), Progress("generate", enabled=not args.quiet) as progress:
                result = generate(
                    spec,
                    claim,
                    pack,
                    options=Options(examples=args.examples, capabilities=manifest),
                    seed=args.seed,
                    jobs=args.jobs,
                    spec_path=args.spec,
                    progress=progress,
                    executor=executor,
                )
        except KeyboardInterrupt:
            return stopped(Interrupted(progress.done, progress.total))
        for problem in result.problems:
            print(f"warning: {problem}")
    else:
        pack = Path(args.pack)
    try:
        check_pack(spec, claim, pack, manifest)
    except CertifyError as exc:
        raise UsageError(str(exc)) from None
    from vectors.pack import open_pack

    with open_pack(pack) as opened:
        pack_sha = opened.pack_sha256
    covered = pack_coverage(spec, claim, pack, manifest)
    for warning in covered.warnings():
        print(f"warning: {warning}", file=sys.stderr)
    operators = sorted({m.operator for m in required_modes(spec, claim)})
    ops = "|".join(operators)
    source: dict[str, Any] | None = None
    try:
        if args.results:
            report = earlier_results(args.results, pack, args.backend, ops, args.exclude, known)
            source = results_source(args.results)
        else:
            with executor_errors(), Progress("run", enabled=not args.quiet) as progress:
                report = run_pack(
                    pack,
                    args.backend,
                    jobs=args.jobs,
                    timeout=args.timeout,
                    ops=ops,
                    json_path=out / "results.jsonl",
                    resume=args.resume,
                    progress=progress,
                    exclude=args.exclude,
                    known=known,
                    executor=executor,
                    capabilities=manifest,
                )
    except (SelectionError, Interrupted) as exc:
        return stopped(exc)
    chains = chain_vectors(pack, report.results)
    cert = make_certificate(
        spec, claim, args.backend, pack_sha, report, covered, manifest, source, chains
    )
    margins: dict[tuple[str, str], list[float]] = {}
    for r in report.results:
        if r.kind == "valid" and r.verdict == PASSED and r.margin is not None:
            margins.setdefault((r.operator, r.mode), []).append(r.margin)
    counts = report.counts()  # the totals 'run' prints, so the report agrees with it
    (out / "certificate.json").write_text(json.dumps(cert.to_json(), indent=1) + "\n")
    (out / "report.md").write_text(markdown(cert, str(pack), margins, counts))
    (out / "report.html").write_text(html_page(cert, str(pack), margins, counts))
    summary = cert.to_json()["summary"]
    verdict = cert.headline()
    print(
        f"{verdict}: {args.backend} for {claim.describe()}: {summary['met']} of "
        f"{summary['required']} required pairs met, {summary['failed']} failed, "
        + (f"{summary['known_failure']} known to fail, " if "known_failure" in summary else "")
        + f"{summary['not_met']} not met"
    )
    subset = cert.subset_json()
    if subset is not None:
        print(
            f"{subset['verdict']} of manifest {subset['name']} (sha256 {subset['sha256'][:12]}): "
            f"{subset['claimed']} of the claim's {subset['required']} required pairs claimed, "
            f"{subset['claimed_met']} met; {len(subset['unclaimed'])} not claimed"
        )
    failing = list(failing_pairs(cert))
    for p in failing[:SHOWN_PAIRS]:
        print(f"  {p.operator} [{p.mode}]: {p.status}")
    if len(failing) > SHOWN_PAIRS:
        print(f"  ... and {len(failing) - SHOWN_PAIRS} more (see {out / 'report.md'})")
    for c in cert.chains[:SHOWN_PAIRS]:
        where = f", with {', '.join(c.alone)} failing alone" if c.alone else ""
        print(f"  fails in a chain: {c.path} ({c.result.vector}{where})")
    print(
        f"certificate: {out / 'certificate.json'}; reports: {out / 'report.md'}, "
        f"{out / 'report.html'}"
    )
    return 0 if cert.passed else 1


def results_source(paths: list[Path]) -> dict[str, Any]:
    """The provenance of a certificate made from results files: each file's sha256."""
    import hashlib

    files = []
    for p in paths:
        digest = hashlib.sha256()
        with open(p, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
        files.append({"path": str(p), "sha256": digest.hexdigest()})
    return {
        "kind": "results files",
        "files": files,
        "note": "verdicts read from these files; this certificate did not run the backend",
    }


def earlier_results(
    paths: list[Path],
    pack: Path,
    backend: str,
    ops: str,
    exclude: str | None,
    known: KnownFailures | None,
) -> RunReport:
    """The report of an earlier run (or of its shards, merged) of ``pack`` on ``backend``,
    holding a result for every vector the claim selects; the known failures are applied
    afresh, so a list edited since the run counts."""
    from conformance.backends.base import denormal_modes
    from conformance.merge import MergeError, merge
    from conformance.runner import mark_known
    from conformance.selection import Selection
    from reference.compliance.denormals import format_modes
    from vectors.pack import open_pack

    try:
        merged = merge(paths)
    except MergeError as exc:
        raise UsageError(str(exc)) from None
    with open_pack(pack) as opened:
        names = Selection(ops, None, exclude, known).select(opened)
        sha = opened.pack_sha256
        entries = {e.name: e for e in opened.entries}
    for key, want in (("pack_sha256", sha), ("backend", backend)):
        if merged.header.get(key) != want:
            raise UsageError(
                f"{merged.path}: the results are for {key} {merged.header.get(key)!r}, not "
                f"{want!r} (--pack / --backend)"
            )
    by_name = {r.vector: r for r in merged.results}
    missing = [n for n in names if n not in by_name]
    if missing:
        raise UsageError(
            f"{merged.path}: no result for {len(missing)} vectors the claim needs (first: "
            f"{missing[0]}); run them (a missing shard?) and merge again"
        )
    results = [by_name[n] for n in names]
    for r in results:
        # What a vector is (its kind, operator, mode) is the pack's to say, not the
        # file's: a failure relabelled as a level vector is still a failure.
        e = entries[r.vector]
        r.operator, r.mode, r.kind = e.operator, e.mode, e.kind
        if r.known_failure:  # judged as a known failure then: back to the judge's verdict
            r.verdict, r.known_failure = r.known_failure, ""
        if known is not None:
            mark_known(r, known.reason(entries[r.vector]))
    declared = format_modes(denormal_modes(get_backend(backend)))
    return RunReport(results, len(results), sum(r.seconds for r in results), declared)

"""``tosa-conformance certify``: a verdict, a certificate and reports for a claim."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from conformance.atomic_file import Lock, write_files
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
from conformance.claims import Claim, required_modes
from conformance.cli.options import (
    UsageError,
    add_capabilities_argument,
    add_claim_arguments,
    add_executor_arguments,
    add_selection_arguments,
    claim_from_args,
    default_jobs,
    executor_errors,
    executor_from_args,
    manifest_from_args,
    read_selection,
    stopped,
)
from conformance.generate import generate
from conformance.generate_plan import DEFAULT_EXAMPLES, Options
from conformance.merge import Results
from conformance.progress import Progress
from conformance.results_file import in_a_pack
from conformance.runner import Interrupted, run_pack
from conformance.selection import KnownFailures, SelectionError
from conformance.spec import Spec
from conformance.user_files import file_sha256
from conformance.verdicts import PASSED, RunReport
from vectors.pack_source import INDEX


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
    where = in_a_pack(out)
    if where is not None:
        raise UsageError(
            f"-o {out}: {where}; a certificate and its reports are never written into a "
            "pack: give -o a folder outside it"
        )
    out.mkdir(parents=True, exist_ok=True)
    # One certify per folder: its results, certificate and reports are one run's.
    busy = f"{out}: another 'certify' (or 'generate') is writing into this folder; wait for "
    lock = Lock(out, busy + "it, or give -o another folder", folder=True)
    try:
        return _certify(spec, args, claim, known, executor, manifest, out)
    finally:
        lock.close()


def _certify(
    spec: Spec,
    args: argparse.Namespace,
    claim: Claim,
    known: KnownFailures | None,
    executor: Any,
    manifest: Any,
    out: Path,
) -> int:
    """Certify into ``out``, which this process has locked."""
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
        # The canonical hash says what the pack holds; this one, which bytes were read.
        raw_index = hashlib.sha256(opened.source.read(INDEX) or b"").hexdigest()
    covered = pack_coverage(spec, claim, pack, manifest)
    for warning in covered.warnings():
        print(f"warning: {warning}", file=sys.stderr)
    operators = sorted({m.operator for m in required_modes(spec, claim)})
    ops = "|".join(operators)
    source: dict[str, Any] | None = None
    try:
        if args.results:
            report, merged = earlier_results(
                args.results, pack, args.backend, ops, args.exclude, known, claim
            )
            source = results_source(merged)
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
                    claim=claim,
                )
    except (SelectionError, Interrupted) as exc:
        return stopped(exc)
    if source is None:  # this run: the results it wrote, as they are on disk now
        written = out / "results.jsonl"
        source = {"kind": "run", "results": written.name, "sha256": file_sha256(written)}
    chains = chain_vectors(pack, report.results)
    cert = make_certificate(
        spec, claim, args.backend, pack_sha, report, covered, manifest, source, chains
    )
    cert.pack_json_sha256 = raw_index
    margins: dict[tuple[str, str], list[float]] = {}
    for r in report.results:
        if r.kind == "valid" and r.verdict == PASSED and r.margin is not None:
            margins.setdefault((r.operator, r.mode), []).append(r.margin)
    counts = report.counts()  # the totals 'run' prints, so the report agrees with it
    # All three whole, or (a full disk) all three as they were.
    write_files(
        {
            out / "certificate.json": (json.dumps(cert.to_json(), indent=1) + "\n").encode(),
            out / "report.md": markdown(cert, str(pack), margins, counts).encode("utf-8"),
            out / "report.html": html_page(cert, str(pack), margins, counts).encode("utf-8"),
        }
    )
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


def results_source(merged: Results) -> dict[str, Any]:
    """The provenance of a certificate made from results files: each file's sha256, of
    the bytes its verdicts were read from."""
    files = [{"path": str(p.path), "sha256": p.sha256} for p in merged.parts]
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
    claim: Any = None,
) -> tuple[RunReport, Results]:
    """The report of an earlier run (or of its shards, merged) of ``pack`` on ``backend``,
    holding a result for every vector the claim selects, and the files merged; the known
    failures are applied afresh, so a list edited since the run counts.  A vector that
    needs more than the claim (conformance.claims.beyond_claim) is left out, whatever the
    file says of it."""
    from conformance.backends.base import denormal_modes, identity_of
    from conformance.merge import MergeError, merge
    from conformance.results_file import shown
    from conformance.selection import Selection
    from conformance.verdicts import mark_known
    from reference.compliance.denormals import format_modes
    from vectors.pack import open_pack

    try:
        merged = merge(paths)
    except MergeError as exc:
        raise UsageError(str(exc)) from None
    with open_pack(pack) as opened:
        names = Selection(ops, None, exclude, known).select(opened)
        if claim is not None:
            from conformance.claim_scope import beyond_claim

            outside = beyond_claim(claim, opened, names)
            names = [n for n in names if n not in outside]
        sha = opened.pack_sha256
        entries = {e.name: e for e in opened.entries}
    for key, want in (("pack_sha256", sha), ("backend", backend)):
        if merged.header.get(key) != want:
            raise UsageError(
                f"{merged.path}: the results are for {key} {shown(merged.header.get(key))}, "
                f"not {want!r} (--pack / --backend)"
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
    made = get_backend(backend)
    declared = format_modes(denormal_modes(made))
    seconds = sum(r.seconds for r in results)
    return RunReport(results, len(results), seconds, declared, identity_of(made)), merged

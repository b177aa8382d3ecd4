"""Certify a backend against a claim: every required (operator, mode) pair is met.

A pair is met when the pack holds at least one valid vector for it, every valid vector
of it passed within its bounds, and every must-fail vector of it was rejected.  A pair
with no vector run (missing from the pack, or all skipped by the backend) is *not met*:
a missing requirement is a failed requirement, never a silent pass.  Level vectors
(above a level limit) are unpredictable by the spec and never count.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance import __version__, revisions
from conformance.capabilities.select import MANIFEST_SKIP
from conformance.claim_scope import CLAIM_SKIP
from conformance.claims import Claim, required_modes
from conformance.operator_table import OperatorTable
from conformance.spec import Spec
from conformance.verdicts import FAILURES, PASSED, SKIPPED, XFAIL, XPASS, RunReport, VectorResult
from reference.ops.custom import UNTESTABLE

# Operators no pack can test: the spec leaves what they compute to the implementation.
# They are listed in the certificate as such, never counted as met or failed.
UNTESTABLE_OPERATORS: OperatorTable[str] = OperatorTable({"CUSTOM": UNTESTABLE})

CERTIFICATE_FORMAT = "tosa-conformance-certificate"
CERTIFICATE_VERSION = 1


class CertifyError(ValueError):
    """The pack cannot certify this claim (gaps, corruption, another level)."""


@dataclass
class PairResult:
    operator: str
    mode: str
    requirements: list[list[str]]
    run: int = 0
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    worst_margin: float | None = None
    failures: list[VectorResult] = field(default_factory=list)
    skip_reasons: list[str] = field(default_factory=list)
    # Vectors listed in --known-failures (XFAIL or XPASS): a pair with one is not met.
    known: list[VectorResult] = field(default_factory=list)
    # Vectors of every kind that passed (valid and must-fail), as 'run' counts them;
    # ``passed`` counts the valid ones, which decide "met".
    vectors_passed: int = 0
    # Why a capability manifest does not claim the pair (its vectors are skipped): the
    # pair is "not claimed", outside the subset certified.
    unclaimed: str | None = None
    # Skipped vectors the backend declined (not the manifest's subset): never "met".
    declined: int = 0

    @property
    def status(self) -> str:
        if self.unclaimed is not None:  # outside the subset, testable or not
            return "not claimed"
        if self.operator in UNTESTABLE_OPERATORS:
            return "not testable"
        if self.failed:
            return "failed"
        if any(r.verdict == XFAIL for r in self.known):
            return "known failure"
        if self.passed == 0 or self.declined:
            # Nothing ran, or the backend declined some of the pair's vectors: a pair is
            # met only by vectors that ran and passed, all of them.
            return "not met"
        return "met"

    def to_json(self) -> dict[str, Any]:
        return {
            "operator": self.operator,
            "mode": self.mode,
            "required_by": self.requirements,
            "status": self.status,
            "vectors_run": self.run,
            "passed": self.passed,
            "vectors_passed": self.vectors_passed,
            "failed": self.failed,
            "skipped": self.skipped,
            "declined_by_backend": self.declined,
            "worst_margin": self.worst_margin,
            "failures": [r.vector for r in self.failures],
            "known_failures": [r.vector for r in self.known],
            **({} if self.unclaimed is None else {"unclaimed": self.unclaimed}),
        }


@dataclass
class ChainFailure:
    """A failing chain vector: a finding of its own, never a failure of its last
    operator's pair. ``alone`` names the chain's operator pairs that also fail on their
    own vectors (the chain is listed under them); with none, the backend computes every
    operator right alone and the graph wrong: its graph compilation is at fault."""

    result: VectorResult
    operators: list[str]
    alone: list[str] = field(default_factory=list)

    @property
    def path(self) -> str:
        return " > ".join(self.operators)

    def to_json(self) -> dict[str, Any]:
        return {
            "vector": self.result.vector,
            "operators": self.operators,
            "verdict": self.result.verdict,
            "detail": self.result.detail[:400],
            "also_fails_alone": self.alone,
        }


def not_met_reason(pair: PairResult) -> str:
    """Why a pair is not met, for people: what the backend declined, else what was
    skipped, else that nothing ran."""
    reasons = "; ".join(pair.skip_reasons)
    if pair.declined:
        of = f" of {pair.run + pair.skipped}" if pair.run else ""
        return f"the backend declined {pair.declined}{of} vectors ({reasons})"
    return reasons or "no vector ran"


def pack_pairs(pack_path: Path) -> dict[tuple[str, str], dict[str, int]]:
    """Vectors per (operator, mode) and kind, from pack.json."""
    from vectors.pack import open_pack

    out: dict[tuple[str, str], dict[str, int]] = {}
    with open_pack(pack_path) as pack:
        for e in pack.entries:
            kinds = out.setdefault((e.operator, e.mode), {})
            kinds[e.kind] = kinds.get(e.kind, 0) + 1
    return out


def check_pack(spec: Spec, claim: Claim, pack_path: Path, manifest: Any = None) -> None:
    """Refuse a pack that cannot certify the claim: corrupt, for another spec or level,
    or without valid vectors for some required pair."""
    from vectors.pack import open_pack, verify_pack

    problems = verify_pack(pack_path)
    if problems:
        raise CertifyError(
            f"{pack_path}: the pack does not verify ({len(problems)} problems, first: "
            f"{problems[0]}); run 'tosa-conformance verify-pack {pack_path}'"
        )
    with open_pack(pack_path) as pack:
        meta = pack.meta
    spec_sha = meta.spec_sha256
    if meta.spec_revision and meta.spec_revision != spec.revision:
        raise CertifyError(
            f"{pack_path} is a TOSA {meta.spec_revision} pack; this claim is of TOSA "
            f"{spec.revision}: certify with --tosa {meta.spec_revision}, or generate a "
            f"pack with --tosa {spec.revision}"
        )
    if spec_sha != spec.sha256:
        raise CertifyError(
            f"{pack_path} was generated from another tosa.xml (sha256 {spec_sha[:12]}...); "
            "generate a pack from this spec"
        )
    level = meta.claim["level"]
    if level != claim.level.name:
        raise CertifyError(
            f"{pack_path} was generated for level {level}, the claim is level "
            f"{claim.level.name}; generate a pack with --level {claim.level.name}"
        )
    have = pack_pairs(pack_path)
    missing = [
        m
        for m in required_modes(spec, claim)
        if not have.get(m.key, {}).get("valid")
        and m.operator not in UNTESTABLE_OPERATORS
        and (manifest is None or manifest.claims(m))  # a subset needs its pairs only
    ]
    if missing:
        shown = ", ".join(f"{m.operator} [{m.mode}]" for m in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise CertifyError(
            f"{pack_path} has no valid vectors for {len(missing)} required pairs ({shown}{more}); "
            f"generate the pack for this claim or use --generate"
        )


def tally(
    spec: Spec,
    claim: Claim,
    report: RunReport,
    manifest: Any = None,
    chains: Mapping[str, list[str]] | None = None,
) -> list[PairResult]:
    """Per required pair, what its vectors did. A failing chain vector (``chains``: its
    name -> its operators) is left out: :func:`chain_failures` reports it."""
    chains = chains or {}
    pairs = {
        m.key: PairResult(
            m.operator,
            m.mode,
            [sorted(r) for r in m.requirements],
            unclaimed=None if manifest is None else manifest.unclaimed_reason(m),
        )
        for m in required_modes(spec, claim)
    }
    for r in report.results:
        pair = pairs.get((r.operator, r.mode))
        if pair is None or r.kind == "level" or (r.failed and r.vector in chains):
            continue
        if r.verdict == SKIPPED and r.detail.startswith(CLAIM_SKIP):
            continue  # needs more than the claim (EXT-DYNAMIC): neither for nor against it
        if r.verdict == SKIPPED:
            pair.skipped += 1
            if not r.detail.startswith(MANIFEST_SKIP):
                pair.declined += 1
            if r.detail not in pair.skip_reasons:
                pair.skip_reasons.append(r.detail)
            continue
        pair.run += 1
        if r.verdict in (XFAIL, XPASS):
            pair.known.append(r)
        if r.verdict in (PASSED, XPASS):
            pair.vectors_passed += 1
            if r.kind == "valid":
                pair.passed += 1
        elif r.verdict in FAILURES:
            pair.failed += 1
            pair.failures.append(r)
        if r.margin is not None and r.kind == "valid":
            worst = pair.worst_margin
            pair.worst_margin = r.margin if worst is None else max(worst, r.margin)
    return list(pairs.values())


def chain_vectors(pack_path: Path, results: list[VectorResult]) -> dict[str, list[str]]:
    """The failing results' vectors that are chains, with their operators in order: as
    the result records them, else (a crash or timeout, judged without the vector, or a
    results file of an older release) from the vector's provenance.  Only failures
    are loaded: they are few."""
    from vectors.pack import open_pack

    out: dict[str, list[str]] = {r.vector: r.chain for r in results if r.failed and r.chain}
    with open_pack(pack_path) as pack:
        names = set(pack.names)
        for r in results:
            if not r.failed or r.vector in out or r.vector not in names:
                continue
            chain = pack.load(r.vector).provenance.chain
            if chain:
                out[r.vector] = chain
    return out


def chain_failures(
    report: RunReport, chains: Mapping[str, list[str]], pairs: list[PairResult]
) -> list[ChainFailure]:
    """The failing chain vectors, each with the pairs of its operators that also fail
    on their own vectors."""
    failing = {p.operator: f"{p.operator} [{p.mode}]" for p in pairs if p.status == "failed"}
    out = []
    for r in report.results:
        if r.failed and r.vector in chains:
            ops = chains[r.vector]
            alone = sorted({failing[o] for o in ops if o in failing})
            out.append(ChainFailure(r, ops, alone))
    return out


@dataclass(frozen=True)
class PackCoverage:
    """What the certifying pack was made with, and which coverage obligations of the
    claim's pairs it meets (from its pack.json)."""

    options: dict[str, Any]
    recorded: bool  # the pack holds an obligation record at all
    met: int = 0
    unmet: dict[str, list[str]] = field(default_factory=dict)  # "OP [mode]" -> keys
    # Unmet because a rule of the spec forbids them (INTDIV's divisor 0): not gaps.
    forbidden: dict[str, list[str]] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return self.recorded and not self.unmet

    def to_json(self) -> dict[str, Any]:
        return {
            "pack_options": self.options,
            "obligations_recorded": self.recorded,
            "obligations_met": self.met,
            "obligations_unmet": sum(len(v) for v in self.unmet.values()),
            "obligations_forbidden_by_the_spec": sum(len(v) for v in self.forbidden.values()),
            "every_obligation_met": self.complete,
            "unmet": self.unmet,
            "forbidden": self.forbidden,
        }

    def warnings(self) -> list[str]:
        """What certify says about a pack weaker than the default one."""
        if not self.recorded:
            return [
                "the pack records no coverage obligations (an older or hand-made pack): "
                "what it tests is unknown; generate one with this version"
            ]
        out = []
        left_out = [k for k in ("targeted", "levels", "chains") if self.options.get(k) is False]
        if left_out:  # an older pack has no "chains" option: None, not False
            out.append(
                f"the pack was generated without its {' or '.join(left_out)} vectors "
                f"({' / '.join('--no-' + k for k in left_out)}): a certificate needs the "
                "default pack"
            )
        if self.unmet:
            n = sum(len(v) for v in self.unmet.values())
            # Named, the first few: these are the real gaps (what no rule of the spec
            # forbids), the ones a reader should look at, not the count alone.
            gaps = [f"{pair} {k}" for pair, keys in sorted(self.unmet.items()) for k in keys]
            shown = "; ".join(gaps[:SHOWN_GAPS])
            more = f"; and {len(gaps) - SHOWN_GAPS} more" if len(gaps) > SHOWN_GAPS else ""
            out.append(
                f"the pack misses {n} coverage obligations in {len(self.unmet)} pairs that "
                f"no rule of the spec forbids: {shown}{more} (each with its reason in "
                "pack.json and certificate.json)"
            )
        return out


SHOWN_GAPS = 5  # unmet obligations named in certify's warning


def pack_coverage(spec: Spec, claim: Claim, pack_path: Path, manifest: Any = None) -> PackCoverage:
    from vectors.pack import open_pack

    with open_pack(pack_path) as pack:
        options = dict(pack.meta.options)
        record = pack.coverage
    if record is None:
        return PackCoverage(options, False)
    wanted = {m.key for m in required_modes(spec, claim) if manifest is None or manifest.claims(m)}
    from strategies.obligations import forbidden_by_rule, outside_manifest

    met = 0
    unmet: dict[str, list[str]] = {}
    forbidden: dict[str, list[str]] = {}
    for c in record:
        if (c["operator"], c["mode"]) not in wanted:
            continue
        met += len(c["met"])
        pair = f"{c['operator']} [{c['mode']}]"
        gaps = sorted(
            k
            for k, why in c["unmet"].items()
            if not forbidden_by_rule(why) and not outside_manifest(why)
        )
        ruled = sorted(k for k, why in c["unmet"].items() if forbidden_by_rule(why))
        if gaps:
            unmet[pair] = gaps
        if ruled:
            forbidden[pair] = ruled
    return PackCoverage(options, True, met, unmet, forbidden)


@dataclass
class Certificate:
    backend: str
    claim: Claim
    spec: Spec
    pack_sha256: str
    pairs: list[PairResult]
    date: str
    pack: PackCoverage | None = None
    denormals: dict[str, dict[str, Any]] | None = None  # see denormal_record
    capabilities: Any = None  # conformance.capabilities.Manifest: a subset certificate
    # Where the verdicts come from: this run, or results files (their sha256): a
    # certificate from a file says so, since nothing here ran the backend then.
    source: dict[str, Any] | None = None
    chains: list[ChainFailure] = field(default_factory=list)
    # conformance.backends.base.identity_of: the program and its sha256, its sandbox.
    backend_identity: dict[str, Any] = field(default_factory=dict)
    pack_json_sha256: str | None = None  # of pack.json's bytes as read (pack_sha256: content)

    @property
    def chain_findings(self) -> list[ChainFailure]:
        """Failing chains whose operators all pass alone: findings of their own."""
        return [c for c in self.chains if not c.alone]

    @property
    def passed(self) -> bool:
        """Every pair met; under a manifest, every pair it claims (and at least one)."""
        statuses = [p.status for p in self.pairs]
        if self.capabilities is not None and statuses.count("not claimed") == len(statuses):
            return False  # a manifest that claims nothing of the claim certifies nothing
        if self.chain_findings:  # "fails in a chain": the graph, not an operator, is wrong
            return False
        return all(s in ("met", "not testable", "not claimed") for s in statuses)

    @property
    def verdict(self) -> str:
        """``pass``, ``fail``, or ``pass-subset``: a pass of only the pairs a capability
        manifest claims must never read as a pass of the whole claim."""
        if not self.passed:
            return "fail"
        return "pass-subset" if self.capabilities is not None else "pass"

    def headline(self) -> str:
        """The verdict as people read it first: PASS, FAIL, or PASS (subset: ...)."""
        if self.capabilities is None or not self.passed:
            return "PASS" if self.passed else "FAIL"
        claimed = sum(p.status != "not claimed" for p in self.pairs)
        return (
            f"PASS (subset: {claimed} of {len(self.pairs)} required pairs claimed by "
            f"manifest {self.capabilities.name})"
        )

    def subset_json(self) -> dict[str, Any] | None:
        """The capability manifest's part of the certificate: which subset is certified."""
        m = self.capabilities
        if m is None:
            return None
        claimed = [p for p in self.pairs if p.status != "not claimed"]
        verdict = "conformant" if self.passed else "not conformant"
        return {
            **m.to_json(),
            "verdict": f"{verdict} on the claimed subset",
            "claimed": len(claimed),
            "required": len(self.pairs),
            "claimed_met": sum(p.status == "met" for p in claimed),
            "unclaimed": [
                {"operator": p.operator, "mode": p.mode, "reason": p.unclaimed}
                for p in self.pairs
                if p.status == "not claimed"
            ],
        }

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "format": CERTIFICATE_FORMAT,
            "format_version": CERTIFICATE_VERSION,
            "verdict": self.verdict,
            "backend": self.backend,
            "backend_identity": self.backend_identity,
            "claim": self.claim.to_json(),
            "spec": {
                "revision": self.spec.revision,
                **({"commit": c} if (c := revisions.revision_commit(self.spec.revision)) else {}),
                "version": self.spec.version_string,
                "sha256": self.spec.sha256,
            },
            "pack_sha256": self.pack_sha256,
            **({"pack_json_sha256": self.pack_json_sha256} if self.pack_json_sha256 else {}),
            "pack": None if self.pack is None else self.pack.to_json(),
            "denormals": self.denormals,
            "source": self.source or {"kind": "run"},
            "tool": {"name": "tosa-conformance", "version": __version__},
            "date": self.date,
            "requirements": [p.to_json() for p in self.pairs],
            "known_failures": [
                {
                    "vector": r.vector,
                    "operator": r.operator,
                    "mode": r.mode,
                    "verdict": r.verdict,
                    "judged": r.known_failure,
                    "detail": r.detail,
                }
                for p in self.pairs
                for r in p.known
            ],
            "summary": {
                "required": len(self.pairs),
                "met": sum(p.status == "met" for p in self.pairs),
                "failed": sum(p.status == "failed" for p in self.pairs),
                "not_met": sum(p.status == "not met" for p in self.pairs),
                "not_testable": sum(p.status == "not testable" for p in self.pairs),
                "chains_failed": len(self.chains),
            },
            "chain_failures": [c.to_json() for c in self.chains],
        }
        if self.capabilities is not None:  # only then: other certificates keep their shape
            body["capabilities"] = self.subset_json()
            body["summary"]["not_claimed"] = sum(p.status == "not claimed" for p in self.pairs)
        known = sum(p.status == "known failure" for p in self.pairs)
        if known:  # only then, so certificates without known failures keep their shape
            body["summary"]["known_failure"] = known
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        return {**body, "certificate_sha256": digest}


def make_certificate(
    spec: Spec,
    claim: Claim,
    backend: str,
    pack_sha256: str,
    report: RunReport,
    pack: PackCoverage | None = None,
    capabilities: Any = None,
    source: dict[str, Any] | None = None,
    chains: Mapping[str, list[str]] | None = None,
) -> Certificate:
    """``chains``: the pack's chain vectors among the results (name -> operators)."""
    date = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    chains = chains or {}
    pairs = tally(spec, claim, report, capabilities, chains)
    denormals = denormal_record(spec, claim, report)
    found = chain_failures(report, chains, pairs)
    return Certificate(
        backend,
        claim,
        spec,
        pack_sha256,
        pairs,
        date,
        pack,
        denormals,
        capabilities,
        source,
        found,
        report.backend,
    )


def denormal_record(spec: Spec, claim: Claim, report: RunReport) -> dict[str, dict[str, Any]]:
    """Per floating-point type of the claim, the backend's denormal mode: ``declared``
    (``supported``, ``flush`` or None) and ``observed``: ``flush`` when some vector
    passed only with that type's denormals flushed, else ``supported`` when some
    passing vector returned a denormal of it, else ``not observed``; with the counts."""
    from reference.compliance.denormals import DENORMAL_TYPES, FLUSH, SUPPORTED

    bound = {b.removesuffix("_t") for m in required_modes(spec, claim) for b in m.bindings.values()}
    out: dict[str, dict[str, Any]] = {}
    for t in DENORMAL_TYPES:
        if t.name not in bound:
            continue
        flushed = sum(r.denormals.get(t.name) == FLUSH for r in report.results)
        produced = sum(r.denormals.get(t.name) == SUPPORTED for r in report.results)
        observed = FLUSH if flushed else SUPPORTED if produced else "not observed"
        out[t.name] = {
            "declared": report.denormals.get(t.name),
            "observed": observed,
            "vectors_flushed": flushed,
            "vectors_with_denormal_results": produced,
        }
    return out


def failing_pairs(cert: Certificate) -> Iterable[PairResult]:  # "not claimed" is not failing
    return (p for p in cert.pairs if p.status in ("failed", "known failure", "not met"))

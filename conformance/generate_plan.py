"""What a pack is made of: the generate pipeline's plan.

A claim becomes a list of independent jobs (:class:`Job`), one vector each: every mode's
valid, edge, large, ties, data-set and level vectors, one job per ERROR_IF it can break,
the chains of the claim's operators, and a second round aimed at the coverage
obligations the first left unmet (:func:`aim_jobs`).  Each job carries its own seed,
derived from the pack seed and what the job is, so the pack does not depend on the
order jobs run in.  :mod:`conformance.generate_jobs` runs one job;
:mod:`conformance.generate` runs them all and writes the pack.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from conformance.capabilities import Manifest
from conformance.claims import Claim, required_modes
from conformance.spec import Spec, TypeSupport
from reference.compliance import DOT_PRODUCT_OPERATORS
from strategies.boundaries import boundary_atoms
from strategies.case import DYNAMIC_TARGET, ctc_freeing, freeable_ctc
from strategies.chains import chain_starts
from strategies.invalid import breakers_for
from strategies.levels import level_limits_for
from strategies.obligations import (
    GRAPH_OPERATORS,
    float_mode,
    pair_obligations,
)
from strategies.recipes import RecipeContext
from strategies.rewrites import REWRITE_JOBS, buildable, rewrites_ending, why_not
from strategies.shapes import Budget
from strategies.valid import has_recipe, unbuildable_reason
from vectors.pack_write import MAX_NAME

DEFAULT_EXAMPLES = 3
DRAW_SPARE = 4  # extra draws a job may try when a drawn case is not what it needs
CHAINS_PER_START, CHAIN_SKIP = 4, 3  # chain vectors per start; draws a chain skips


@dataclass(frozen=True)
class Job:
    operator: str
    mode: str
    kind: str  # "valid" | "error" | "chain" (a valid vector of a chain of operators)
    index: int
    clause: str | None = None  # the rule an error job breaks
    data_set: int | None = None  # Appendix A data set for dot-product float modes
    level_case: str | None = None  # "at" / "above" the level limit, for level jobs
    limit: str = "MAX_RANK"  # the level limit a level job is at or above
    target: str | None = None  # the RecipeContext target of a targeted valid job
    aim: str | None = None  # the obligation a second-round job must meet to be kept

    @property
    def name(self) -> str:
        if self.kind == "chain" and self.operator.startswith("rewrite:"):
            return f"{_slug(self.operator)}_{self.index:03d}"  # rewrite-clamp-clamp_000
        if self.kind == "chain":  # the vector's: its last operator and mode, then this
            return f"chain-{_slug(self.operator)}_{self.index:03d}"
        extra = f"_s{self.data_set}" if self.data_set is not None else ""
        if self.level_case:
            kind = f"{_slug(self.limit.removeprefix('MAX_'))}-{self.level_case}"
        elif self.target:
            kind = _slug(self.target)
        else:
            kind = self.kind
        tail = f"_{kind}{extra}_{self.index:03d}"
        return f"{self.operator}_{fitted_slug(self.mode, len(self.operator) + 1 + len(tail))}{tail}"

    def seed(self, pack_seed: int) -> int:
        key = f"{pack_seed}|{self.operator}|{self.mode}|{self.kind}|{self.clause}|"
        key += f"{self.data_set}|{self.index}|{self.level_case}"
        if self.limit != "MAX_RANK":
            key += f"|{self.limit}"
        if self.target:
            key += f"|{self.target}"
        return int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "little")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()


def fitted_slug(mode: str, rest: int) -> str:
    """The mode's slug, cut where a vector name of ``rest`` more characters would pass
    MAX_NAME (TOSA 1.1's mixed block-scaled modes: 'Mixed precision fp with bf16/fp32
    accumulate (in_t=bs32_fp8ue8m0_fp6e2m3_t, weight_t=...)'), with 8 hex digits of
    the mode's sha256 so that two cut modes never share a name."""
    slug = _slug(mode)
    if rest + len(slug) <= MAX_NAME:
        return slug
    digest = hashlib.sha256(mode.encode()).hexdigest()[:8]
    return f"{slug[: max(1, MAX_NAME - rest - 9)].rstrip('-')}-{digest}"


@dataclass(frozen=True)
class Options:
    examples: int = DEFAULT_EXAMPLES
    negative: bool = True
    max_elements: int | None = None
    ops: str | None = None  # regular expression on operator names
    levels: bool = True  # cases at every level limit and just above it
    targeted: bool = True  # the coverage-obligation jobs (edge, large, ranks, aims)
    chains: bool = True  # valid vectors of 2-5 operators in a chain (CHAINS_PER_START)
    capabilities: Manifest | None = None  # its pairs, its limits

    def to_json(self) -> dict[str, Any]:
        keys = ("examples", "negative", "max_elements", "ops", "levels", "targeted", "chains")
        out: dict[str, Any] = {k: getattr(self, k) for k in keys}
        if self.capabilities is not None:  # absent otherwise: older packs stay identical
            out["capabilities"] = self.capabilities.to_json()
        return out


@dataclass
class Plan:
    jobs: list[Job]
    modes: list[TypeSupport]
    without_recipe: list[TypeSupport] = field(default_factory=list)
    unclaimed: list[tuple[TypeSupport, str]] = field(default_factory=list)  # and why
    # Required pairs no vector can be made of yet, and why (strategies.valid).
    unbuildable: list[tuple[TypeSupport, str]] = field(default_factory=list)


# An unmet obligation's reason when --no-targeted planned no job aimed at it.
NOT_AIMED = "not aimed at (--no-targeted): no generated vector has it"

# Tries a targeted job gets to draw a case that meets its aim.
AIM_TRIES = 12
AIMS_PER_TARGET = 3  # second-round jobs per (pair, target)


def plan(spec: Spec, claim: Claim, options: Options) -> Plan:
    """Every job of the first round: ``examples`` valid vectors per required pair, the
    targeted jobs of its coverage obligations (an edge case with every special value
    and a large case; every Appendix A data set, short and long, for dot-product float
    modes), one case at and one above every level limit, and one vector per rule an
    invalid-case breaker can break.  The second round (:func:`aim_jobs`) aims at what
    this one leaves unmet: ranks, attribute values, ties, broadcasts."""

    pattern = re.compile(options.ops, re.IGNORECASE) if options.ops else None
    modes = [
        m for m in required_modes(spec, claim) if pattern is None or pattern.fullmatch(m.operator)
    ]
    manifest = options.capabilities
    reasons = [(m, manifest.unclaimed_reason(m)) for m in modes] if manifest else []
    unclaimed = [(m, why) for m, why in reasons if why is not None]
    modes = [m for m in modes if m.key not in {u.key for u, _ in unclaimed}]
    jobs: list[Job] = []
    missing: list[TypeSupport] = []
    unbuildable: list[tuple[TypeSupport, str]] = []
    freeing = ctc_freeing(spec)
    dynamic = bool(freeing) and freeing <= claim.names
    for m in modes:
        why_not = unbuildable_reason(m)
        if why_not is not None:
            unbuildable.append((m, why_not))
            continue
        if not has_recipe(m.operator):
            missing.append(m)
            continue
        op_spec = spec.operator(m.operator)
        dot = m.operator in DOT_PRODUCT_OPERATORS and float_mode(m)
        for i in range(options.examples):
            jobs.append(Job(m.operator, m.mode, "valid", i))
        if dot:  # every data set, with ordinary and long dot products
            for s in DOT_PRODUCT_SETS:
                jobs.append(Job(m.operator, m.mode, "valid", 0, data_set=s))
                if options.targeted:
                    jobs.append(Job(m.operator, m.mode, "valid", 0, data_set=s, target="ks:long"))
        if options.targeted and m.operator not in GRAPH_OPERATORS:
            obligations = pair_obligations(spec, claim.level, op_spec, m)
            targets = {o.target for o in obligations.obligations if o.target is not None}
            for t in sorted(targets & PHASE_ONE_TARGETS):
                jobs.append(Job(m.operator, m.mode, "valid", 0, target=t))
            if dynamic and freeable_ctc(spec, m.operator):
                # Its compile-time-constant inputs fed by graph inputs: only a claim of
                # the extension that frees them (EXT-DYNAMIC) must take such a graph.
                jobs.append(Job(m.operator, m.mode, "valid", 0, target=DYNAMIC_TARGET))
        if options.levels:
            for limit in level_limits_for(spec, m.operator, claim.level):
                if limit == "MAX_RANK" and rank_capped(manifest, m.operator, claim):
                    continue  # the manifest's rank is below the level's: noted in generate()
                jobs.append(Job(m.operator, m.mode, "valid", 0, level_case="at", limit=limit))
                jobs.append(Job(m.operator, m.mode, "level", 0, level_case="above", limit=limit))
        if options.negative:
            rc = RecipeContext(spec, op_spec, m, claim.level, Budget())
            seen: set[str] = set()
            relational = []
            for entry in breakers_for(m.operator, rc):
                can_pack = getattr(entry, "can_pack", None)
                if entry.clause in seen or (can_pack is not None and not can_pack(rc)):
                    continue
                seen.add(entry.clause)
                jobs.append(Job(m.operator, m.mode, "error", len(seen) - 1, clause=entry.clause))
                if boundary_atoms(op_spec, m, entry.clause):
                    relational.append(entry.clause)
            # A second must-fail vector at each relational clause's boundary (numbered
            # after the others, which keep their names): no kill of an off-by-one check
            # rests on one vector.
            for k, clause in enumerate(relational):
                jobs.append(Job(m.operator, m.mode, "error", len(seen) + k, clause=clause))
    if options.chains:  # of the claim's operators in its modes; a job's operator: its start
        starts = chain_starts(spec, [(m.operator, m.mode) for m in modes])
        jobs += [Job(s, "", "chain", i) for s in starts for i in range(CHAINS_PER_START)]
    if options.targeted:  # the rewrite obligations' chains, as the other targeted jobs
        jobs += rewrite_jobs(spec, claim, modes)
    made = [m for m in modes if m.key not in {u.key for u, _ in unbuildable}]
    return Plan(jobs, made, missing, unclaimed, unbuildable)


def rewrite_jobs(spec: Spec, claim: Claim, modes: list[TypeSupport]) -> list[Job]:
    """REWRITE_JOBS chain vectors per rewrite obligation (and variant of it) of the
    claim's pairs that a chain within them can meet (strategies.rewrites), each kept
    only if its data meets it."""
    pairs = frozenset((m.operator, m.mode) for m in modes)
    jobs = []
    for m in modes:
        if m.operator in GRAPH_OPERATORS or not has_recipe(m.operator):
            continue
        for r in rewrites_ending(spec, m.operator):
            if r.build is None or why_not(r, spec, m) is not None:
                continue
            if buildable(r, spec, claim.level, m, pairs) is not None:
                continue  # pack_coverage names the operator the claim lacks
            jobs += [
                Job(f"rewrite:{r.key}", m.mode, "chain", i, aim=r.fact)
                for i in range(REWRITE_JOBS * r.variants)
            ]
    return jobs


def rank_capped(manifest: Manifest | None, operator: str, claim: Claim) -> bool:
    hi = manifest.limits(operator).max_rank if manifest is not None else None
    return hi is not None and hi < claim.level["MAX_RANK"]


DOT_PRODUCT_SETS = (-1, 0, 1, 2, 3, 4, 5)  # -1: free values with every special value
# Targets every pair with such an obligation gets a vector for in the first round.
# "ties" among them: a vector made of rounding ties and near-ties, of some size, tests
# ties of both parities and signs at many magnitudes (double rounding through a
# narrower intermediate type shows on a few of them only), where the ties that the
# ordinary vectors happen to hold meet the obligation with one or two.
PHASE_ONE_TARGETS = frozenset({"edge", "large", "ties", "long-axis"})
TIES_ELEMENTS = 64  # per tensor, at least, in a ties vector (where the budget allows)


def aim_jobs(
    spec: Spec,
    claim: Claim,
    coverage: dict[tuple[str, str], set[str]],
    manifest: Manifest | None = None,
) -> list[Job]:
    """The second round: a job for every obligation the first round left unmet that a
    target can aim at (an attribute value, a rounding tie, a NaN position...).  It is
    planned from the first round's results, which the seed fixes, so the pack stays the
    same whatever ``--jobs`` is."""

    jobs: list[Job] = []
    for (operator, mode), facts in sorted(coverage.items()):
        op_spec = spec.operator(operator)
        obligations = pair_obligations(spec, claim.level, op_spec, op_spec.mode(mode))
        per_target: dict[str, int] = {}
        for o in obligations.obligations:
            if o.key in facts or o.target is None or o.target.startswith("rewrite:"):
                continue  # (a rewrite's chains are first-round jobs: rewrite_jobs)
            if beyond_manifest(manifest, operator, o.target):
                continue  # pack_coverage names it, with the manifest's limit
            # One job per unmet obligation, at most AIMS_PER_TARGET per target (the
            # edge target serves every value class: a few edge cases suffice).
            n = per_target.get(o.target, 0)
            if n >= AIMS_PER_TARGET:
                continue
            per_target[o.target] = n + 1
            # A rank the first round's draws missed gets its first job here.
            index = (0 if o.target.startswith("rank:") else 1) + n
            jobs.append(Job(operator, mode, "valid", index, target=o.target, aim=o.key))
    return jobs


def beyond_manifest(manifest: Manifest | None, operator: str, target: str) -> str | None:
    """Why a ``rank:R`` target is outside the manifest's rank range (None: inside)."""
    if manifest is None or not target.startswith("rank:"):
        return None
    r, limits = int(target.removeprefix("rank:")), manifest.limits(operator)
    if limits.max_rank is not None and r > limits.max_rank:
        return f"manifest {manifest.name} allows rank <= {limits.max_rank}"
    if r < limits.min_rank:
        return f"manifest {manifest.name} allows rank >= {limits.min_rank}"
    return None

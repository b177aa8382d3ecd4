"""The generate pipeline: a claim in, a deterministic vector pack out.

The work is planned as independent jobs, one vector each, every job carrying its own
seed derived from the pack seed and what the job is (operator, mode, kind, rule,
index).  A job draws its case from the strategies, asks the reference what the case
must produce, and writes the vector's folder.  Jobs can therefore run in any order, on
any number of processes, and the pack is byte-identical whatever ``--jobs`` is.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import InvalidStateError, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from conformance import process_tree
from conformance.builder import map_operands
from conformance.capabilities import Manifest, load_manifest
from conformance.capabilities.check import violations
from conformance.certify import UNTESTABLE_OPERATORS
from conformance.claims import Claim, required_modes
from conformance.errors import ConformanceError
from conformance.executors import Executor, map_jobs
from conformance.runner import ignore_interrupts
from conformance.spec import Level, Spec, TypeSupport, load_spec, use_spec
from conformance.vectorize import case_to_vector
from reference.compliance import DOT_PRODUCT_OPERATORS
from reference.engine import evaluate
from strategies.case import DYNAMIC_TARGET, Case, ctc_freeing, freeable_ctc
from strategies.chains import chain_cases, chain_starts
from strategies.claimed_values import constrain_to_claim
from strategies.domain import fill_domain
from strategies.draw import draw_examples, first_accepted
from strategies.fill import fill_values, refusal
from strategies.invalid import breakers_for, invalid_cases
from strategies.levels import is_level_case, level_cases, level_limits_for, unwritable_cases
from strategies.obligations import (
    BROADCAST_GROUPS,
    GRAPH_OPERATORS,
    LARGE_INPUT,
    PairCoverage,
    arg_dtype,
    coverage,
    float_mode,
    forbidden_by_rule,
    pair_obligations,
    vector_facts,
)
from strategies.recipes import RecipeContext
from strategies.shapes import Budget
from strategies.valid import has_recipe, unbuildable_reason, valid_cases
from vectors.pack import write_pack_index, write_vector
from vectors.pack_model import PackEntry, PackMeta, Provenance, Vector
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


# strategies.level_limits: a level vector whose limit needs a tensor past the element
# cap (TOSA 1.1's block-scaled convolutions: IC is a whole block, so MAX_KERNEL taps of
# 32 channels).  One line per operator and tensor, not one per vector.
_UNHOLDABLE = re.compile(
    r"^(?P<vector>\S+): ValueError: (?P<op>\w+): the limit needs (?P<tensor>\w+) of shape "
    r"(?P<shape>\[[^\]]*\]), more than (?P<cap>\d+) elements: no vector can hold it$"
)


def grouped_problems(problems: list[str]) -> list[str]:
    """``problems`` with the level vectors no tensor can hold grouped per operator."""
    out: list[str] = []
    groups: dict[tuple[str, str], list[re.Match[str]]] = {}
    for p in problems:
        m = _UNHOLDABLE.match(p)
        if m is None:
            out.append(p)
        else:
            groups.setdefault((m["op"], m["tensor"]), []).append(m)
    for (op, tensor), found in sorted(groups.items()):
        first = found[0]
        out.append(
            f"{op}: {len(found)} level vector{'s' * (len(found) != 1)} cannot be made: the "
            f"limit needs {tensor} past {first['cap']} elements, more than a vector holds "
            f"(e.g. {first['vector']}: {tensor} of shape {first['shape']})"
        )
    return out


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
                if limit == "MAX_RANK" and _rank_capped(manifest, m.operator, claim):
                    continue  # the manifest's rank is below the level's: noted in generate()
                jobs.append(Job(m.operator, m.mode, "valid", 0, level_case="at", limit=limit))
                jobs.append(Job(m.operator, m.mode, "level", 0, level_case="above", limit=limit))
        if options.negative:
            rc = RecipeContext(spec, op_spec, m, claim.level, Budget())
            seen: set[str] = set()
            for entry in breakers_for(m.operator, rc):
                can_pack = getattr(entry, "can_pack", None)
                if entry.clause in seen or (can_pack is not None and not can_pack(rc)):
                    continue
                seen.add(entry.clause)
                jobs.append(Job(m.operator, m.mode, "error", len(seen) - 1, clause=entry.clause))
    if options.chains:  # of the claim's operators in its modes; a job's operator: its start
        starts = chain_starts(spec, [(m.operator, m.mode) for m in modes])
        jobs += [Job(s, "", "chain", i) for s in starts for i in range(CHAINS_PER_START)]
    made = [m for m in modes if m.key not in {u.key for u, _ in unbuildable}]
    return Plan(jobs, made, missing, unclaimed, unbuildable)


def _rank_capped(manifest: Manifest | None, operator: str, claim: Claim) -> bool:
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
            if o.key in facts or o.target is None:
                continue
            if _beyond_manifest(manifest, operator, o.target):
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


def _beyond_manifest(manifest: Manifest | None, operator: str, target: str) -> str | None:
    """Why a ``rank:R`` target is outside the manifest's rank range (None: inside)."""
    if manifest is None or not target.startswith("rank:"):
        return None
    r, limits = int(target.removeprefix("rank:")), manifest.limits(operator)
    if limits.max_rank is not None and r > limits.max_rank:
        return f"manifest {manifest.name} allows rank <= {limits.max_rank}"
    if r < limits.min_rank:
        return f"manifest {manifest.name} allows rank >= {limits.min_rank}"
    return None


@dataclass(frozen=True)
class JobContext:
    spec_path: str | None
    level: str
    pack_seed: int
    max_elements: int | None
    out: str
    regenerate: str  # command prefix that regenerates a single vector
    capabilities: str | None = None  # a manifest's name or file (load_manifest)
    pairs: tuple[tuple[str, str], ...] = ()  # the claim's: chains keep to them
    ops: str | None = None  # --ops, which the pairs follow: a chain's regenerate keeps it
    # The claim's profile/extension names: draws keep to the enumeration values it has
    # (strategies.claimed_values); None restricts nothing.
    claimed: tuple[str, ...] | None = None


@dataclass
class JobResult:
    job: Job
    entry: PackEntry | None
    problem: str | None = None
    facts: frozenset[str] = frozenset()  # obligations the vector meets
    reasons: dict[str, str] = field(default_factory=dict)  # obligation -> why unmet
    note: str | None = None  # why a job has no vector, by design (a manifest's limit)
    # A write that failed (a full disk): no pack may be claimed complete after it.
    fatal: str | None = None


class PackWriteError(ConformanceError):
    """A vector could not be written: the folder is no pack (exit status 2)."""


def job_budget(job: Job, spec: Spec, max_elements: int | None) -> Budget:
    """The element budget of a job: the pack's for ordinary draws; a large one for the
    large and long-dot-product targets; a floor on sizes where a target needs real
    dimensions (ranks, edge cases with every pair of special values, must-fail cases
    that are not minimal)."""

    base = Budget() if max_elements is None else Budget(max_elements=max_elements)
    if job.kind == "chain":  # the pack's: each operator of the chain draws within it
        return base
    op_spec = spec.operator(job.operator)
    mode = op_spec.mode(job.mode)
    data = [  # the data operands that share the large budget (not indices or shapes)
        a
        for a in op_spec.inputs
        if a.type == "tensor_t"
        and a.shape.kind != "scalar"
        and (dt := arg_dtype(mode, a)) is not None
        and dt.kind != "shape"
    ]
    # The full-size ones: named shapes (shape, shape1...), else multi-axis dimensions;
    # a per-channel [NC] or a bias [BC] stays small whatever the budget.
    named = [a for a in data if a.shape.kind == "named"]
    data = named or [a for a in data if a.shape.kind == "dims" and len(a.shape.dims) > 1] or data
    tensors = max(1, len(data))
    if job.target in ("large", "ks:long", "long-axis"):
        # Past 2**16 elements, so that a 16-bit element count or index shows; in the
        # broadcasting groups the output is that large, one input too, and the others
        # broadcast (strategies.recipes.common.elementwise), which keeps the inputs
        # near LARGE_INPUT in all.
        broadcasting = job.target == "large" and op_spec.group in BROADCAST_GROUPS
        per = LARGE_INPUT + 1 if broadcasting else -(-(LARGE_INPUT + 1) // tensors)
        # max_dim below the size: the shape spreads over two axes or more, not [1, ..., N]
        return Budget(max_elements=2 * per, max_dim=2048, min_elements=per)
    if job.target == "ties":
        return replace(base, min_elements=min(base.max_elements, TIES_ELEMENTS))
    if job.target == "edge":
        # A lone input has room for three passes of its special values (strategies.values).
        least = max(64, 16 ** min(tensors, 3))
        return replace(base, min_elements=min(base.max_elements, least))
    if job.target and job.target.startswith("rank:"):
        return replace(base, min_dim=2)
    if job.target and job.target.startswith("broadcast:"):
        return replace(base, min_elements=min(base.max_elements, 8))
    if job.kind == "error":  # numpy-broadcastable [2, 3] against [3], not [1] against []
        return replace(base, min_elements=min(base.max_elements, 24), min_dim=2)
    if job.data_set is not None:  # the statistical tests want many outputs
        return replace(base, max_elements=max(base.max_elements, 32768))
    return base


def run_job(job: Job, jc: JobContext) -> JobResult:
    """Draw the case, evaluate it, write the vector; in a worker process."""

    # Special values are the point: a signalling NaN widened, inf - inf, an overflow
    # to inf are expected, and numpy's warnings about them would only be noise.
    with np.errstate(invalid="ignore", over="ignore"):
        return _run_job(job, jc)


def _run_job(job: Job, jc: JobContext) -> JobResult:

    spec = use_spec(load_spec(jc.spec_path))  # what everything in this worker reads
    level = spec.level(jc.level)
    chain = job.kind == "chain"
    budget = job_budget(job, spec, jc.max_elements)
    manifest = None
    if jc.capabilities is not None:  # its limits constrain every draw of the job
        manifest = load_manifest(jc.capabilities, spec)
        budget = budget if chain else manifest.constrain(budget, job.operator)
    if jc.claimed is not None and not chain:
        budget = constrain_to_claim(budget, spec, spec.operator(job.operator), jc.claimed)
    seed = job.seed(jc.pack_seed)
    if chain:  # the manifest's limits are checked on the whole graph (violations)
        turn = job.index / CHAINS_PER_START  # each job of a start from another operator
        strategy = chain_cases(spec, level, budget, jc.pairs, job.operator, turn)
    elif job.level_case is not None:
        above = job.level_case == "above"
        strategy = level_cases(
            spec, job.operator, job.mode, level, budget, above=above, limit=job.limit
        )
    elif job.kind == "valid":
        strategy = valid_cases(
            spec, job.operator, job.mode, level, budget, job.data_set, target=job.target
        )
    else:
        strategy = invalid_cases(spec, job.operator, job.mode, level, budget, clause=job.clause)

    # Hypothesis draws the simplest case first (scalars, zeros) whatever the seed; one
    # vector per pair keeps it, the others move on; chains past a few more (ADD > ADD).
    simplest = job.index == 0 and job.data_set is None and job.target is None
    kept = (simplest and job.kind == "valid") or job.level_case
    skip = [CHAIN_SKIP if chain else 0 if kept else 1]
    found: dict[str, Any] = {}

    def accept(case: Case) -> Vector | None:
        if skip[0] > 0:
            skip[0] -= 1
            return None
        if job.level_case is not None and not is_level_case(
            case, spec, level, above=job.level_case == "above", limit=job.limit
        ):
            return None
        if manifest is not None and (broken := violations(manifest, case.graph, spec)):
            outside.append(broken[0])
            return None
        if job.target == "edge":
            found["reasons"] = _fill_edge(case, spec, level)
        if job.target == "large" and not chain:
            case = _with_domain(case, spec, level)
        ops = f"'{jc.ops}'" if chain and jc.ops else None if chain else job.operator
        vector = case_to_vector(
            case,
            spec,
            level,
            name=(
                f"{case.operator}_{fitted_slug(case.mode, len(case.operator) + 2 + len(job.name))}"
                f"_{job.name}"
                if chain
                else job.name
            ),
            kind="valid" if chain else job.kind,
            clause=job.clause,
            data_set=-1 if job.data_set is None else job.data_set,
            provenance=Provenance(
                strategy=case.strategy + (f" / target: {job.target}" if job.target else ""),
                seed=jc.pack_seed,
                index=job.index,
                regenerate=jc.regenerate + (f" --ops {ops}" if ops else ""),
                rule_broken=job.clause or case.rule_broken,
            ),
        )
        if vector is None or job.kind != "valid":
            return vector
        facts = vector_facts(spec, vector, level)
        if job.aim is not None and job.aim not in facts:
            return None
        found["facts"] = frozenset(facts)
        return vector

    problems: list[str] = []
    outside: list[str] = []  # cases outside the capability manifest

    def accept_and_write(case: Case) -> PackEntry | None:
        vector = accept(case)
        if vector is None:
            return None
        try:
            return write_vector(Path(jc.out), vector)
        except ValueError as exc:  # e.g. an attribute value the flatbuffer cannot hold
            problems.append(str(exc))
            return None

    tries = 1 + (AIM_TRIES if job.aim or job.target or chain else DRAW_SPARE)
    try:
        entry = first_accepted(strategy, accept_and_write, seed, max_tries=tries)
    except OSError as exc:  # the disk, not the draw: the whole pack is wrong without it
        where = f"{exc.filename}: " if exc.filename else ""
        return JobResult(job, None, fatal=f"{where}{exc.strerror or exc}")
    except Exception as exc:  # one broken job must not cost the whole pack
        return JobResult(job, None, f"{job.name}: {type(exc).__name__}: {exc}")
    if entry is None:
        if job.aim is not None:  # not a problem: the obligation is reported unmet
            why = (
                _attribute_refusal(job, spec, level, budget)
                if job.aim.startswith("attr:")
                else None
            )
            why = why or f"no case of {AIM_TRIES} aimed at it met it"
            return JobResult(job, None, None, reasons={job.aim: why})
        if outside and not problems and (job.kind != "valid" or job.level_case is not None):
            # A must-fail or level case whose rule is the manifest's limit (a rank of 5,
            # a batch that differs, a dilation at MAX_KERNEL): no graph it claims.
            note = f"{job.name} has no vector: every case drawn was outside it ({outside[-1]})"
            return JobResult(job, None, None, note=note)
        last = (problems or outside)[-1:]
        why = f" (last problem: {last[0]})" if last else ""
        return JobResult(job, None, f"no {job.kind} case drawn for {job.name}{why}")
    return JobResult(job, entry, None, found.get("facts", frozenset()), found.get("reasons", {}))


def _attribute_refusal(job: Job, spec: Spec, level: Level, budget: Budget) -> str | None:
    """Why an attribute value no aimed case could take is impossible: an ordinary case
    with the attribute set to it, and the rule the reference then names (RESCALE's
    ``input_unsigned`` with an i32 input fails an ERROR_IF).  None when the reference
    accepts it: the value is possible, the draws missed it."""

    assert job.aim is not None
    name, _, value = job.aim.removeprefix("attr:").partition("=")
    cases = draw_examples(valid_cases(spec, job.operator, job.mode, level, budget), 1, 0)
    if not cases or len(cases[0].graph.main.operators) != 1:
        return None
    case = cases[0]
    op = case.graph.main.operators[0]
    mode: TypeSupport = spec.operator(job.operator).mode(job.mode)
    forced: Any = value
    if value in ("true", "false"):
        forced = value == "true"
    elif value in ("zero", "nonzero", "min", "max"):
        try:
            dt = mode.dtype(spec.operator(job.operator).argument(name).element_type)
        except KeyError:
            return None
        lo, hi = int(dt.min), int(dt.max)  # type: ignore[arg-type]
        forced = {"zero": 0, "nonzero": 1, "min": lo, "max": hi}[value]
    op.attributes[name] = forced
    outcome = evaluate(case.graph, case.inputs, spec=spec, level=level)
    if outcome.kind == "valid" or outcome.rule is None:
        return None
    return f"{outcome.rule.kind} {outcome.rule.clause}"


def _with_domain(case: Case, spec: Spec, level: Level) -> Case:
    """A large case of a float function with its input swept over every binade
    (strategies.domain), if the reference still accepts it as valid; else the case as
    drawn."""

    swept = fill_domain(spec, case)
    if swept is None:
        return case
    outcome = evaluate(swept.graph, swept.inputs, spec=spec, level=level)
    return swept if outcome.valid else case


def _fill_edge(case: Case, spec: Spec, level: Level) -> dict[str, str]:
    """Place the value classes an edge case still lacks (strategies.fill); the reasons
    for those that cannot be placed, keyed by obligation."""

    block = case.graph.main
    if len(block.operators) != 1:
        return {}
    op = block.operators[0]
    op_spec = spec.operator(op.op)
    mode = op_spec.mode(case.mode)
    have = vector_facts(spec, case, level)
    operands = map_operands(op_spec, op)
    missing = []
    refused: dict[str, str] = {}
    for o in pair_obligations(spec, level, op_spec, mode).obligations:
        if not o.key.startswith("value:") or o.key in have:
            continue
        _, arg_name, cls = o.key.split(":", 2)
        if (why := refusal(case, op_spec.name, arg_name, cls)) is not None:
            refused[o.key] = why
            continue
        arg = op_spec.argument(arg_name)
        dt = arg_dtype(mode, arg)
        names = operands.inputs.get(arg_name, [])
        if dt is not None and names:
            missing.append((names[-1], dt, cls, o.key))
    reasons = fill_values(case, spec, level, [(n, d, c) for n, d, c, _ in missing])
    placed = {key: reasons[f"{n}:{c}"] for n, _, c, key in missing if f"{n}:{c}" in reasons}
    return refused | placed


def _run_jobs(
    jobs: list[Job],
    jc: JobContext,
    workers: int,
    progress: Callable[[int, int], None],
    executor: Executor | None = None,
) -> list[JobResult]:
    results: list[JobResult] = []
    if executor is not None:  # Dask workers (conformance.executors): the same jobs, bytes
        spec_path = jc.spec_path and str(Path(jc.spec_path).resolve())
        jc = replace(jc, out=str(Path(jc.out).resolve()), spec_path=spec_path)
        return map_jobs(executor, run_job, jobs, jc, progress, workers, shared=[Path(jc.out)])
    if workers <= 1:
        for i, job in enumerate(jobs):
            results.append(run_job(job, jc))
            progress(i + 1, len(jobs))
        return results
    parent = os.getpid()
    with (
        _quiet_broken_pool(),
        ProcessPoolExecutor(
            max_workers=workers, initializer=_job_worker_start, initargs=(parent,)
        ) as pool,
    ):
        # chunks keep per-task overhead low; order of completion does not matter
        try:
            for i, result in enumerate(pool.map(run_job, jobs, [jc] * len(jobs), chunksize=4)):
                results.append(result)
                progress(i + 1, len(jobs))
        except BrokenProcessPool:
            # A worker killed by a signal (a crash in native code, the OOM killer): one
            # line, not the pool's traceback; the vectors written so far stay on disk.
            near = jobs[len(results)] if len(results) < len(jobs) else jobs[-1]
            raise PackWriteError(
                f"{jc.out}: a generate worker died abruptly after {len(results)} of "
                f"{len(jobs)} vectors (near {near.operator} [{near.mode}] {near.kind}); "
                "no pack.json was written: run again with --jobs 1 to see the vector"
            ) from None
    return results


@contextlib.contextmanager
def _quiet_broken_pool() -> Iterator[None]:
    """When a worker dies, the pool's management thread can raise InvalidStateError on a
    cancelled future (a race in concurrent.futures) and print its traceback above our
    one-line message; that thread's error says nothing the message does not."""
    before = threading.excepthook

    def hook(args: threading.ExceptHookArgs) -> None:
        if not isinstance(args.exc_value, InvalidStateError):
            before(args)

    threading.excepthook = hook
    try:
        yield
    finally:
        threading.excepthook = before


def _job_worker_start(parent: int) -> None:
    """A generate worker leaves Ctrl-C to the parent and dies with it, however it dies
    (SIGKILL included): an orphan would go on writing and hold the folder's lock."""

    ignore_interrupts()
    process_tree.die_with_parent(signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


@dataclass
class GenerateResult:
    out: Path
    entries: list[PackEntry]
    problems: list[str]
    plan: Plan
    pack_sha256: str
    seconds: float
    notes: list[str] = field(default_factory=list)  # things not tested, by design
    coverage: list[PairCoverage] = field(default_factory=list)


def generate(
    spec: Spec,
    claim: Claim,
    out: Path,
    *,
    options: Options,
    seed: int = 0,
    jobs: int = 1,
    spec_path: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    executor: Executor | None = None,  # jobs on Dask workers
) -> GenerateResult:

    started = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    the_plan = plan(spec, claim, options)
    flags = [f"--profile {p}" for p in claim.profiles]
    flags += [f"--extension {e}" for e in claim.extensions]
    flags.append(f"--level {claim.level.name}")
    claim_flags = " ".join(flags)
    # The command names the revision, so that a vector regenerates by the same rules.
    spec_flag = f"--spec {spec_path} " if spec_path else f"--tosa {spec.revision} "
    spec_path = spec_path or spec.path  # what a spawned or remote worker loads
    regenerate = (
        f"tosa-conformance {spec_flag}generate {claim_flags} --seed {seed} "
        f"--examples {options.examples}"
        + (f" --max-elements {options.max_elements}" if options.max_elements else "")
        + " -o PACK"
    )
    manifest = options.capabilities
    if manifest is not None:
        regenerate = regenerate.replace(" -o PACK", f" --capabilities {manifest.source} -o PACK")
    jc = JobContext(
        spec_path,
        claim.level.name,
        seed,
        options.max_elements,
        str(out),
        regenerate,
        None if manifest is None else manifest.source,
        tuple(sorted((m.operator, m.mode) for m in the_plan.modes)),
        options.ops,
        tuple(sorted(claim.names)),
    )
    report = progress or (lambda d, t: None)
    results = _run_jobs(the_plan.jobs, jc, max(1, jobs), report, executor)
    if options.targeted:  # the second round aims at what the first left unmet
        first = len(results)
        second = aim_jobs(spec, claim, _facts_by_pair(results), manifest)
        the_plan.jobs.extend(second)
        results += _run_jobs(
            second, jc, max(1, jobs), lambda d, t: report(first + d, first + t), executor
        )
    fatal = [r for r in results if r.fatal]
    if fatal:  # before pack.json: the folder must not pass for a pack
        more = f" (and {len(fatal) - 1} more)" if len(fatal) > 1 else ""
        raise PackWriteError(
            f"{out}: cannot write vector {fatal[0].job.name}: {fatal[0].fatal}{more}; "
            "the folder is incomplete and has no pack.json: free space, remove it and rerun"
        )
    entries = sorted((r.entry for r in results if r.entry is not None), key=lambda e: e.name)
    problems = grouped_problems([r.problem for r in results if r.problem])
    notes: list[str] = [r.note for r in results if r.note]

    if options.levels:
        for op in sorted({m.operator for m in the_plan.modes}):
            for case, why in unwritable_cases(spec, op, claim.level):
                notes.append(f"{op} has no {case} level vectors: {why}")
    if manifest is not None:
        for op in sorted({m.operator for m in the_plan.modes}):
            if options.levels and _rank_capped(manifest, op, claim):
                notes.append(
                    f"{op} has no MAX_RANK level vectors: manifest {manifest.name} allows rank "
                    f"<= {manifest.limits(op).max_rank}"
                )
    problems += unbuildable_lines(the_plan.unbuildable)
    for m in the_plan.without_recipe:
        untestable = UNTESTABLE_OPERATORS.get(m.operator)
        if untestable:  # not a gap: nothing can be tested there
            notes.append(f"{m.operator} [{m.mode}] has no vectors: {untestable}")
        else:
            problems.append(f"no recipe draws {m.operator} [{m.mode}] yet")
    covered = pack_coverage(spec, claim, the_plan, results, manifest, options.targeted)
    meta = PackMeta.create(spec, claim.to_json(), seed, options.to_json())
    pack_sha = write_pack_index(out, meta, entries, [c.to_json() for c in covered])
    return GenerateResult(
        out, entries, problems, the_plan, pack_sha, time.monotonic() - started, notes, covered
    )


def unbuildable_lines(unbuildable: list[tuple[TypeSupport, str]]) -> list[str]:
    """One line per operator and reason: the claim's pairs no vector can be made of yet
    (a block-scaled type binds more than a thousand of TOSA 1.1's modes)."""
    by: dict[tuple[str, str], list[str]] = {}
    for m, why in unbuildable:
        by.setdefault((m.operator, why), []).append(m.mode)
    return [
        f"{op}: {len(names)} mode{'s' if len(names) > 1 else ''} cannot be made yet "
        f"(e.g. [{names[0]}]): {why}"
        for (op, why), names in sorted(by.items())
    ]


def _facts_by_pair(results: list[JobResult]) -> dict[tuple[str, str], set[str]]:
    by_pair: dict[tuple[str, str], set[str]] = {}
    for r in results:  # every valid vector, those at a level limit included
        if r.job.kind == "valid":
            by_pair.setdefault((r.job.operator, r.job.mode), set()).update(r.facts)
    return by_pair


def pack_coverage(
    spec: Spec,
    claim: Claim,
    the_plan: Plan,
    results: list[JobResult],
    manifest: Manifest | None = None,
    targeted: bool = True,
) -> list[PairCoverage]:
    """Per pair with a recipe: which obligations the pack's valid vectors meet, and for
    each one unmet, why (what a job learnt trying to meet it).  Without ``targeted`` no
    job aimed at them, so nothing was learnt of the rule that may forbid one: the reason
    says so rather than count it a gap of the pack or a rule."""

    facts = _facts_by_pair(results)
    reasons: dict[tuple[str, str], dict[str, str]] = {}
    for r in results:  # the first reason given is kept: it names the rule that refused
        known = reasons.setdefault((r.job.operator, r.job.mode), {})
        for k, why in r.reasons.items():
            known.setdefault(k, why)
    out = []
    without = {(m.operator, m.mode) for m in the_plan.without_recipe}
    for m in the_plan.modes:
        key = (m.operator, m.mode)
        if key in without:
            continue
        pair = pair_obligations(spec, claim.level, spec.operator(m.operator), m)
        known = dict(reasons.get(key, {}))
        for o in pair.obligations:  # outside the manifest: named with its limit
            if o.target and (beyond := _beyond_manifest(manifest, m.operator, o.target)):
                known[o.key] = f"{o.target}: {beyond}"
            elif o.target and not targeted:
                known.setdefault(o.key, NOT_AIMED)
        out.append(coverage(pair, facts.get(key, set()), known))
    return out


def summarize(result: GenerateResult) -> Iterable[str]:
    kinds: dict[str, int] = {}
    for e in result.entries:
        kinds[e.kind] = kinds.get(e.kind, 0) + 1
    pairs = {(e.operator, e.mode) for e in result.entries}
    by_kind = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    yield (
        f"wrote {len(result.entries)} vectors ({by_kind}) for {len(pairs)} (operator, mode) "
        f"pairs to {result.out} in {result.seconds:.1f} s"
    )
    yield f"pack sha256 {result.pack_sha256}"


def unmet_lines(covered: list[PairCoverage]) -> Iterable[str]:
    """The pack's obligation record for people: a total, then each unmet obligation
    with its reason, grouped by pair and reason."""
    if not covered:
        return

    met = sum(len(c.met) for c in covered)
    total = met + sum(len(c.unmet) for c in covered)
    na = sum(len(c.not_applicable) for c in covered)
    ruled = sum(forbidden_by_rule(why) for c in covered for why in c.unmet.values())
    head = f"coverage obligations: {met} of {total} met over {len(covered)} pairs"
    if met == total:
        yield f"coverage obligations: all {total} met over {len(covered)} pairs" + (
            f" ({na} do not apply to their mode)"
        )
    else:
        yield (
            f"{head}; {ruled} of the {total - met} unmet are forbidden by a rule of the "
            f"spec ({na} more do not apply to their mode); unmet:"
        )
    for c in covered:
        by_reason: dict[str, list[str]] = {}
        for key, why in c.unmet.items():
            by_reason.setdefault(why, []).append(key)
        for why, keys in sorted(by_reason.items()):
            yield f"  {c.operator} [{c.mode}] {', '.join(sorted(keys))}: {why}"

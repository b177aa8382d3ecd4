"""One generate job: draw its case, ask the reference what it must produce, write the
vector's folder (:func:`run_job`, which runs in a worker process or on a Dask worker).

The job's case comes from the strategies with the job's own seed (:class:`Job.seed`
in :mod:`conformance.generate_plan`); a drawn case that is not what the job needs
(outside the capability manifest, not at the level limit, missing the obligation it is
aimed at) is drawn again, up to a bound.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from conformance.builder import map_operands
from conformance.capabilities import load_manifest
from conformance.capabilities.check import violations
from conformance.errors import ConformanceError
from conformance.generate_plan import (
    AIM_TRIES,
    CHAIN_SKIP,
    CHAINS_PER_START,
    DRAW_SPARE,
    TIES_ELEMENTS,
    Job,
    fitted_slug,
)
from conformance.spec import Level, Spec, TypeSupport, load_spec, use_spec
from conformance.vectorize import case_to_vector
from reference.engine import evaluate
from strategies.boundaries import at_boundary_facts, boundary_cases, boundary_facts, target_clause
from strategies.case import Case
from strategies.chains import chain_cases
from strategies.claimed_values import constrain_to_claim
from strategies.domain import fill_domain
from strategies.draw import draw_examples, first_accepted
from strategies.fill import fill_values, refusal
from strategies.invalid import invalid_cases
from strategies.levels import is_level_case, level_cases
from strategies.obligations import (
    BROADCAST_GROUPS,
    LARGE_INPUT,
    arg_dtype,
    pair_obligations,
    vector_facts,
)
from strategies.rewrites import rewrite_facts
from strategies.shapes import Budget
from strategies.valid import valid_cases
from vectors.pack import write_vector
from vectors.pack_model import PackEntry, Provenance, Vector


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
        strategy = chain_cases(
            spec, level, budget, jc.pairs, job.operator, turn, job.mode, job.index
        )
    elif job.level_case is not None:
        above = job.level_case == "above"
        strategy = level_cases(
            spec, job.operator, job.mode, level, budget, above=above, limit=job.limit
        )
    elif job.kind == "valid" and (clause := target_clause(job.target)) is not None:
        strategy = boundary_cases(spec, job.operator, job.mode, level, budget, clause)
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
        if vector is not None and chain:  # its rewrites, read from its graph and data
            facts = rewrite_facts(spec, case)
            if job.aim is not None and job.aim not in facts:
                return None
            found["facts"] = frozenset(facts)
            return vector
        if vector is not None and job.kind == "error" and job.clause:
            # A must-fail vector meets boundary obligations only, read with the reference.
            facts, found["reasons"] = boundary_facts(spec, level, vector, job.clause)
            found["facts"] = frozenset(facts)
        if vector is None or job.kind != "valid":
            return vector
        facts = vector_facts(spec, vector, level)
        facts |= at_boundary_facts(spec, level, vector, job.target)  # a boundary job's
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

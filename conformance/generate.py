"""The generate pipeline: a claim in, a deterministic vector pack out.

The work is planned as independent jobs, one vector each, every job carrying its own
seed derived from the pack seed and what the job is (operator, mode, kind, rule,
index).  A job draws its case from the strategies, asks the reference what the case
must produce, and writes the vector's folder.  Jobs can therefore run in any order, on
any number of processes, and the pack is byte-identical whatever ``--jobs`` is.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.claims import Claim, required_modes
from conformance.spec import Spec, TypeSupport, load_spec

DEFAULT_EXAMPLES = 3
DRAW_SPARE = 4  # extra draws a job may try when a drawn case is not what it needs


@dataclass(frozen=True)
class Job:
    operator: str
    mode: str
    kind: str  # "valid" | "error"
    index: int
    clause: str | None = None  # the rule an error job breaks
    data_set: int | None = None  # Appendix A data set for dot-product float modes
    level_case: str | None = None  # "at" / "above" the rank limit, for level jobs

    @property
    def name(self) -> str:
        slug = re.sub(r"[^A-Za-z0-9]+", "-", self.mode).strip("-").lower()
        extra = f"_s{self.data_set}" if self.data_set is not None else ""
        kind = f"rank-{self.level_case}" if self.level_case else self.kind
        return f"{self.operator}_{slug}_{kind}{extra}_{self.index:03d}"

    def seed(self, pack_seed: int) -> int:
        key = f"{pack_seed}|{self.operator}|{self.mode}|{self.kind}|{self.clause}|"
        key += f"{self.data_set}|{self.index}|{self.level_case}"
        return int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "little")


@dataclass(frozen=True)
class Options:
    examples: int = DEFAULT_EXAMPLES
    negative: bool = True
    max_elements: int | None = None
    ops: str | None = None  # regular expression on operator names
    levels: bool = True  # rank cases at MAX_RANK and just above it

    def to_json(self) -> dict[str, Any]:
        return {
            "examples": self.examples,
            "negative": self.negative,
            "max_elements": self.max_elements,
            "ops": self.ops,
            "levels": self.levels,
        }


@dataclass
class Plan:
    jobs: list[Job]
    modes: list[TypeSupport]
    without_recipe: list[TypeSupport] = field(default_factory=list)


def plan(spec: Spec, claim: Claim, options: Options) -> Plan:
    """Every job the claim needs: ``examples`` valid vectors per required pair (per
    Appendix A data set for dot-product float modes), and one vector per rule an
    invalid-case breaker can break."""
    from reference.compliance import DOT_PRODUCT_OPERATORS
    from strategies.invalid import breakers_for
    from strategies.levels import rank_limited
    from strategies.recipes import RecipeContext
    from strategies.shapes import Budget
    from strategies.valid import has_recipe

    pattern = re.compile(options.ops) if options.ops else None
    modes = [
        m for m in required_modes(spec, claim) if pattern is None or pattern.fullmatch(m.operator)
    ]
    jobs: list[Job] = []
    missing: list[TypeSupport] = []
    for m in modes:
        if not has_recipe(m.operator):
            missing.append(m)
            continue
        op_spec = spec.operator(m.operator)
        dot = m.operator in DOT_PRODUCT_OPERATORS and _is_float_mode(m)
        data_sets: list[int | None] = list(range(6)) if dot else [None]
        for s in data_sets:
            for i in range(options.examples if s is None else max(1, options.examples // 3)):
                jobs.append(Job(m.operator, m.mode, "valid", i, data_set=s))
        if options.levels and rank_limited(spec, m.operator) and not _graph_recipe(m.operator):
            jobs.append(Job(m.operator, m.mode, "valid", 0, level_case="at"))
            jobs.append(Job(m.operator, m.mode, "level", 0, level_case="above"))
        if options.negative:
            rc = RecipeContext(spec, op_spec, m, claim.level, Budget())
            seen: set[str] = set()
            for entry in breakers_for(m.operator, rc):
                can_pack = getattr(entry, "can_pack", None)
                if entry.clause in seen or (can_pack is not None and not can_pack(rc)):
                    continue
                seen.add(entry.clause)
                jobs.append(Job(m.operator, m.mode, "error", len(seen) - 1, clause=entry.clause))
    return Plan(jobs, modes, missing)


GRAPH_RECIPES = frozenset({"COND_IF", "WHILE_LOOP", "VARIABLE", "VARIABLE_WRITE", "VARIABLE_READ"})


def _graph_recipe(operator: str) -> bool:
    """Operators whose recipes build whole graphs (several blocks or operators): they
    have no rank level cases."""
    return operator in GRAPH_RECIPES


def _is_float_mode(mode: TypeSupport) -> bool:
    from conformance import dtypes

    return any(
        dtypes.dtype(v).is_float for k, v in mode.bindings.items() if k != "TABLE_SIZE" and v != "-"
    )


@dataclass(frozen=True)
class JobContext:
    spec_path: str | None
    level: str
    pack_seed: int
    max_elements: int | None
    out: str
    regenerate: str  # command prefix that regenerates a single vector


@dataclass
class JobResult:
    job: Job
    entry: Any | None  # vectors.pack_model.PackEntry
    problem: str | None = None


def run_job(job: Job, jc: JobContext) -> JobResult:
    """Draw the case, evaluate it, write the vector; in a worker process."""
    from conformance.vectorize import case_to_vector
    from strategies.draw import first_accepted
    from strategies.invalid import invalid_cases
    from strategies.levels import is_level_case, level_cases
    from strategies.shapes import Budget
    from strategies.valid import valid_cases
    from vectors.pack import write_vector
    from vectors.pack_model import Provenance, Vector

    spec = load_spec(jc.spec_path)
    level = spec.level(jc.level)
    budget = Budget() if jc.max_elements is None else Budget(max_elements=jc.max_elements)
    seed = job.seed(jc.pack_seed)
    if job.level_case is not None:
        above = job.level_case == "above"
        strategy = level_cases(spec, job.operator, job.mode, level, budget, above=above)
    elif job.kind == "valid":
        strategy = valid_cases(spec, job.operator, job.mode, level, budget, job.data_set)
    else:
        strategy = invalid_cases(spec, job.operator, job.mode, level, budget, clause=job.clause)

    # Hypothesis draws the simplest case first (scalars, zeros) whatever the seed; one
    # vector per pair keeps it, the others move on to random cases.
    skip = [0 if job.index == 0 and job.data_set is None else 1]

    def accept(case: Any) -> Vector | None:
        if skip[0] > 0 and job.kind == "valid" and job.level_case is None:
            skip[0] -= 1
            return None
        if job.level_case is not None and not is_level_case(
            case, spec, level, above=job.level_case == "above"
        ):
            return None
        return case_to_vector(
            case,
            spec,
            level,
            name=job.name,
            kind=job.kind,
            clause=job.clause,
            data_set=-1 if job.data_set is None else job.data_set,
            provenance=Provenance(
                strategy=case.strategy,
                seed=jc.pack_seed,
                index=job.index,
                regenerate=f"{jc.regenerate} --ops {job.operator}",
                rule_broken=job.clause or case.rule_broken,
            ),
        )

    problems: list[str] = []

    def accept_and_write(case: Any) -> Any:
        vector = accept(case)
        if vector is None:
            return None
        try:
            return write_vector(Path(jc.out), vector)
        except ValueError as exc:  # e.g. an attribute value the flatbuffer cannot hold
            problems.append(str(exc))
            return None

    try:
        entry = first_accepted(strategy, accept_and_write, seed, max_tries=1 + DRAW_SPARE)
    except Exception as exc:  # one broken job must not cost the whole pack
        return JobResult(job, None, f"{job.name}: {type(exc).__name__}: {exc}")
    if entry is None:
        why = f" (last problem: {problems[-1]})" if problems else ""
        return JobResult(job, None, f"no {job.kind} case drawn for {job.name}{why}")
    return JobResult(job, entry)


def _run_jobs(
    jobs: list[Job], jc: JobContext, workers: int, progress: Callable[[int, int], None]
) -> list[JobResult]:
    results: list[JobResult] = []
    if workers <= 1:
        for i, job in enumerate(jobs):
            results.append(run_job(job, jc))
            progress(i + 1, len(jobs))
        return results
    with ProcessPoolExecutor(max_workers=workers) as pool:
        # chunks keep per-task overhead low; order of completion does not matter
        for i, result in enumerate(pool.map(run_job, jobs, [jc] * len(jobs), chunksize=4)):
            results.append(result)
            progress(i + 1, len(jobs))
    return results


class ProgressBar:
    """A one-line progress bar on a terminal, a line every 10% elsewhere."""

    def __init__(self, stream: Any = None, enabled: bool = True) -> None:
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = time.monotonic()
        self.last_decile = -1

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total == 0:
            return
        rate = done / max(time.monotonic() - self.start, 1e-9)
        if self.tty:
            width = 30
            filled = int(width * done / total)
            bar = "#" * filled + "-" * (width - filled)
            end = "\n" if done == total else ""
            self.stream.write(f"\r[{bar}] {done}/{total} vectors, {rate:.0f}/s{end}")
            self.stream.flush()
            return
        decile = 10 * done // total
        if decile != self.last_decile:
            self.last_decile = decile
            self.stream.write(f"{done}/{total} vectors ({rate:.0f}/s)\n")


@dataclass
class GenerateResult:
    out: Path
    entries: list[Any]
    problems: list[str]
    plan: Plan
    pack_sha256: str
    seconds: float
    notes: list[str] = field(default_factory=list)  # things not tested, by design


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
) -> GenerateResult:
    from vectors.pack import write_pack_index
    from vectors.pack_model import PackMeta

    started = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    the_plan = plan(spec, claim, options)
    flags = [f"--profile {p}" for p in claim.profiles]
    flags += [f"--extension {e}" for e in claim.extensions]
    flags.append(f"--level {claim.level.name}")
    claim_flags = " ".join(flags)
    spec_flag = f"--spec {spec_path} " if spec_path else ""
    regenerate = (
        f"tosa-conformance {spec_flag}generate {claim_flags} --seed {seed} "
        f"--examples {options.examples}"
        + (f" --max-elements {options.max_elements}" if options.max_elements else "")
        + " -o PACK"
    )
    jc = JobContext(spec_path, claim.level.name, seed, options.max_elements, str(out), regenerate)
    results = _run_jobs(the_plan.jobs, jc, max(1, jobs), progress or (lambda d, t: None))
    entries = sorted((r.entry for r in results if r.entry is not None), key=lambda e: e.name)
    problems = [r.problem for r in results if r.problem]
    notes: list[str] = []
    from conformance.certify import UNTESTABLE_OPERATORS

    for m in the_plan.without_recipe:
        why = UNTESTABLE_OPERATORS.get(m.operator)
        if why:  # not a gap: nothing can be tested there
            notes.append(f"{m.operator} [{m.mode}] has no vectors: {why}")
        else:
            problems.append(f"no recipe draws {m.operator} [{m.mode}] yet")
    meta = PackMeta.create(spec, claim.to_json(), seed, options.to_json())
    pack_sha = write_pack_index(out, meta, entries)
    return GenerateResult(
        out, entries, problems, the_plan, pack_sha, time.monotonic() - started, notes
    )


def default_jobs() -> int:
    return max(1, os.cpu_count() or 1)


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

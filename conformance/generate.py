"""The generate pipeline: a claim in, a deterministic vector pack out.

The work is planned as independent jobs, one vector each, every job carrying its own
seed derived from the pack seed and what the job is (operator, mode, kind, rule,
index).  A job draws its case from the strategies, asks the reference what the case
must produce, and writes the vector's folder.  Jobs can therefore run in any order, on
any number of processes, and the pack is byte-identical whatever ``--jobs`` is.

Three modules by job: :mod:`conformance.generate_plan` decides the jobs,
:mod:`conformance.generate_jobs` runs one, and this module runs them all (in a process
pool or on an executor), writes the pack index and totals the coverage.
"""

from __future__ import annotations

import contextlib
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

from conformance import process_tree
from conformance.capabilities import Manifest
from conformance.certify import UNTESTABLE_OPERATORS
from conformance.claims import Claim
from conformance.executors import Executor, map_jobs
from conformance.generate_jobs import JobContext, JobResult, PackWriteError, run_job
from conformance.generate_plan import (
    NOT_AIMED,
    Job,
    Options,
    Plan,
    aim_jobs,
    beyond_manifest,
    plan,
    rank_capped,
)
from conformance.runner import ignore_interrupts
from conformance.spec import Spec, TypeSupport
from strategies.levels import unwritable_cases
from strategies.obligations import (
    PairCoverage,
    coverage,
    forbidden_by_rule,
    pair_obligations,
)
from strategies.rewrites import buildable, rewrites_ending
from vectors.pack import write_pack_index
from vectors.pack_model import PackEntry, PackMeta

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
            if options.levels and rank_capped(manifest, op, claim):
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
    """What each pair's vectors meet: a valid vector (those at a level limit included)
    its obligations; a must-fail vector its boundary obligations only; a chain vector
    its rewrite obligations only, for the pair of the operator that ends it."""
    by_pair: dict[tuple[str, str], set[str]] = {}
    for r in results:
        if r.job.kind == "chain" and r.entry is not None:
            by_pair.setdefault((r.entry.operator, r.entry.mode), set()).update(r.facts)
        elif r.job.kind in ("valid", "error"):
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
    pairs = frozenset((m.operator, m.mode) for m in the_plan.modes)
    for m in the_plan.modes:
        key = (m.operator, m.mode)
        if key in without:
            continue
        pair = pair_obligations(spec, claim.level, spec.operator(m.operator), m)
        known = dict(reasons.get(key, {}))
        for o in pair.obligations:  # outside the manifest: named with its limit
            if o.target and (beyond := beyond_manifest(manifest, m.operator, o.target)):
                known[o.key] = f"{o.target}: {beyond}"
            elif o.target and not targeted:
                known.setdefault(o.key, NOT_AIMED)
        covered = coverage(pair, facts.get(key, set()), known)
        _outside_claim(spec, claim, m, covered, pairs)
        out.append(covered)
    return out


def _outside_claim(
    spec: Spec,
    claim: Claim,
    mode: TypeSupport,
    covered: PairCoverage,
    pairs: frozenset[tuple[str, str]],
) -> None:
    """Move the rewrite obligations whose chain needs an operator the pack does not
    have (``--ops``, a manifest) to not applicable, with that reason."""
    rewrites = {r.fact: r for r in rewrites_ending(spec, mode.operator)}
    for key in [k for k in covered.unmet if k in rewrites]:
        why = buildable(rewrites[key], spec, claim.level, mode, pairs)
        if why is not None:
            del covered.unmet[key]
            covered.not_applicable[key] = why


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

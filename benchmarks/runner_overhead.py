"""What ``tosa-conformance run`` costs per vector, on our reference and on Arm's model.

Generates a small pack (or takes ``--pack``), then times ``tosa-conformance run`` on it
with ``--jobs 1`` and ``--jobs 2``: first for the ``reference`` backend, then for
``tosa-reference-model`` when ``tosa-conformance backends`` lists it. Each setting runs
``--repeat`` times and the run with the median wall time is reported.

A run that selects no vector (``--vectors`` matching nothing) is timed too, per backend:
it is the fixed cost of a run (interpreter start-up, imports, making the backend, opening
the pack), so that ``(wall - fixed) / vectors`` is what each further vector adds: the
isolation round trip, loading the vector, the backend, the judgement, and the start of the
workers, which since 2026-12-01 a run selecting nothing no longer reaches (it stops at the
selection, exit status 5).

``--tosa`` chooses the revision of the generated pack (default 1.0); its default claim has
every mode, integer and floating point: PRO-INT and PRO-FP, or the 2024 draft's MI.

    python benchmarks/runner_overhead.py
    python benchmarks/runner_overhead.py --tosa 2024-04-draft
    python benchmarks/runner_overhead.py --pack my-pack --jobs-list 1,2 --repeat 5
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from _timing import (
    NO_VECTOR,
    OUR_TOOL,
    TOSA_REVISIONS,
    Timed,
    add_tosa_option,
    generate_argv,
    machine_line,
    markdown_table,
    profiles_option,
    run_exit_ok,
    run_results,
    run_timed,
    tail,
)

ARM_BACKEND = "tosa-reference-model"


@dataclass
class Row:
    backend: str
    jobs: int
    vectors: int
    wall: float
    cpu: float
    fixed_wall: float
    verdicts: str
    runs: int


def listed_backends() -> set[str]:
    """Names that ``tosa-conformance backends`` prints, one per line, name first."""
    out = subprocess.run([OUR_TOOL, "backends"], capture_output=True, text=True, check=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def count_vectors(pack: Path) -> int:
    doc = json.loads((pack / "pack.json").read_text(encoding="utf-8"))
    return len(doc["vectors"])


def run_argv(pack: Path, backend: str, jobs: int, results: Path | None) -> list[str]:
    argv = [OUR_TOOL, "run", "--pack", str(pack), "--backend", backend, "--jobs", str(jobs)]
    argv.append("--quiet")
    if results is None:
        argv += ["--vectors", NO_VECTOR]
    else:
        argv += ["--json", str(results)]
    return argv


def median_run(argvs: list[list[str]]) -> tuple[Timed, int]:
    """Run each command line; the run with the median wall time and its index."""
    runs = [run_timed(a) for a in argvs]
    # Anything but a verdict (2: bad arguments, a traceback) is a broken benchmark.
    for t in runs:
        if not run_exit_ok(t.argv, t.returncode):
            raise SystemExit(f"{' '.join(t.argv)} exited {t.returncode}:\n{tail(t.output)}")
    order = sorted(range(len(runs)), key=lambda i: runs[i].wall)
    pick = order[(len(order) - 1) // 2]
    return runs[pick], pick


def measure(pack: Path, backend: str, jobs_list: list[int], repeat: int, work: Path) -> list[Row]:
    vectors = count_vectors(pack)
    fixed, _ = median_run([run_argv(pack, backend, 1, None) for _ in range(repeat)])
    rows = []
    for jobs in jobs_list:
        slug = backend.replace(":", "_").replace("/", "_")
        outs = [work / f"{slug}-j{jobs}-{i}.jsonl" for i in range(repeat)]
        best, i = median_run([run_argv(pack, backend, jobs, out) for out in outs])
        results = run_results(outs[i])
        if len(results) != vectors:
            raise SystemExit(f"{backend} --jobs {jobs}: {len(results)} results for {vectors}")
        verdicts = Counter(r["verdict"] for r in results)
        summary = ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items(), key=lambda kv: -kv[1]))
        rows.append(Row(backend, jobs, vectors, best.wall, best.cpu, fixed.wall, summary, repeat))
    return rows


def table(rows: list[Row]) -> str:
    header = [
        "Backend",
        "Jobs",
        "Vectors",
        "Wall s",
        "CPU s",
        "Fixed s",
        "Wall ms / vector",
        "Marginal ms / vector",
        "CPU ms / vector",
        "Vectors / s",
        "Verdicts",
    ]
    body = [
        [
            r.backend,
            str(r.jobs),
            str(r.vectors),
            f"{r.wall:.2f}",
            f"{r.cpu:.2f}",
            f"{r.fixed_wall:.2f}",
            f"{r.wall / r.vectors * 1000:.1f}",
            f"{max(0.0, r.wall - r.fixed_wall) / r.vectors * 1000:.1f}",
            f"{r.cpu / r.vectors * 1000:.1f}",
            f"{r.vectors / r.wall:.1f}",
            r.verdicts,
        ]
        for r in rows
    ]
    return markdown_table(header, body)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_tosa_option(ap)
    ap.add_argument("--pack", type=Path, help="time this pack instead of generating one")
    ap.add_argument(
        "--profile",
        help="profiles of the generated pack, comma separated (default: every mode, "
        "PRO-INT,PRO-FP; MI for the 2024 draft)",
    )
    ap.add_argument("--ops", default="ADD|SUB|ABS|MUL", help="operators of the generated pack")
    ap.add_argument("--examples", type=int, default=3, help="valid vectors per (operator, mode)")
    ap.add_argument("--jobs-list", default="1,2", help="--jobs values to time (default 1,2)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per setting; the median is kept")
    ap.add_argument(
        "--arm-backend",
        help=f"backend spec for Arm's model (default: {ARM_BACKEND}, if listed); "
        "given explicitly, it is used even if `backends` does not list it",
    )
    ap.add_argument("--out", type=Path, help="keep the generated pack and results here")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON")
    args = ap.parse_args(argv)

    jobs_list = [int(j) for j in args.jobs_list.split(",") if j]
    rev = TOSA_REVISIONS[args.tosa]
    profiles = profiles_option(ap, args.profile, rev, rev.every_mode)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    if shutil.which(OUR_TOOL) is None:
        ap.error(f"{OUR_TOOL} is not on PATH: pip install -e .")
    if args.out is not None and args.out.exists():
        ap.error(f"{args.out} exists; choose a new --out folder")

    backends = ["reference"]
    if args.arm_backend:
        backends.append(args.arm_backend)
        arm_note = f"Arm's model: --backend {args.arm_backend} (given with --arm-backend)."
    elif ARM_BACKEND in listed_backends():
        backends.append(ARM_BACKEND)
        arm_note = f"Arm's model: --backend {ARM_BACKEND}."
    else:
        arm_note = f"Arm's model skipped: `{OUR_TOOL} backends` does not list {ARM_BACKEND}."

    started = datetime.now(UTC)
    print(f"# runner_overhead, {started:%Y-%m-%d %H:%M} UTC")
    print(f"machine: {machine_line()}")
    print(arm_note)

    tmp = None
    if args.out is None:
        tmp = tempfile.TemporaryDirectory(prefix="bench-run-")
        work = Path(tmp.name)
    else:
        work = args.out
        work.mkdir(parents=True)
    try:
        if args.pack is not None:
            pack = args.pack
            print(f"pack: {pack} ({count_vectors(pack)} vectors)")
        else:
            pack = work / "pack"
            gen = generate_argv(rev, profiles, "--ops", args.ops, "--examples", str(args.examples))
            gen += ["-o", str(pack), "--quiet"]
            t = run_timed(gen)
            if t.returncode != 0:
                raise SystemExit(f"{' '.join(gen)} exited {t.returncode}:\n{tail(t.output)}")
            print(
                f"pack: --tosa {rev.name} --profile {','.join(profiles)} --ops '{args.ops}' "
                f"--examples {args.examples}: "
                f"{count_vectors(pack)} vectors, generated in {t.wall:.1f} s wall, "
                f"{t.cpu:.1f} s CPU"
            )
        rows: list[Row] = []
        for backend in backends:
            print(f"{backend} ...", flush=True)
            rows += measure(pack, backend, jobs_list, args.repeat, work)
    finally:
        if tmp is not None:
            tmp.cleanup()

    print()
    print(table(rows))
    print()
    print(
        f"median of {args.repeat} runs per row; 'Fixed s': a run selecting no vector "
        f"(--jobs 1); after the runs: {machine_line()}"
    )
    print(arm_note)
    if args.json is not None:
        doc = {
            "started": started.isoformat(),
            "machine": machine_line(),
            "median_of": args.repeat,
            "tosa": None if args.pack else rev.name,  # of the pack it generated
            "arm": arm_note,
            "rows": [asdict(r) for r in rows],
        }
        args.json.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

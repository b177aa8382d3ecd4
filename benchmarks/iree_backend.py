"""What a vector costs on the ``iree`` backend, compiled alone or in batches.

Generates a small pack (or takes ``--pack``), then times ``tosa-conformance run`` on it
for each backend spec of ``--backends`` (default: ``iree:1``, every vector compiled
alone, and ``iree``, batches of 64) at each ``--jobs`` value.  Each setting runs
``--repeat`` times and the run with the median wall time is kept.

CPU time counts the workers and their compiler helpers (each worker waits for its
helper when it ends), so it is the fair measure on a shared machine; wall time is what
a user waits.  A run selecting no vector gives the fixed cost of a run.

``--tosa`` chooses the revision of the generated pack (default 1.0); its default claim has
every mode, integer and floating point: PRO-INT and PRO-FP, or the 2024 draft's MI.

    python benchmarks/iree_backend.py
    python benchmarks/iree_backend.py --tosa 2024-04-draft
    python benchmarks/iree_backend.py --pack /tmp/iree-full --jobs-list 2 --repeat 1
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from _timing import (
    NO_VECTOR,
    OUR_TOOL,
    TOSA_REVISIONS,
    TosaRevision,
    add_tosa_option,
    generate_argv,
    machine_line,
    markdown_table,
    package_version,
    profiles_option,
    run_exit_ok,
    run_results,
    run_timed,
    tail,
)


@dataclass
class Row:
    backend: str
    jobs: int
    vectors: int
    wall: float
    cpu: float
    fixed_wall: float
    verdicts: str


def count_vectors(pack: Path) -> int:
    return len(json.loads((pack / "pack.json").read_text(encoding="utf-8"))["vectors"])


def run_argv(pack: Path, backend: str, jobs: int, results: Path | None) -> list[str]:
    argv = [OUR_TOOL, "run", "--pack", str(pack), "--backend", backend, "--jobs", str(jobs)]
    argv.append("--quiet")
    return argv + (["--vectors", NO_VECTOR] if results is None else ["--json", str(results)])


def timed_run(argv: list[str]) -> tuple[float, float]:
    t = run_timed(argv)
    if not run_exit_ok(argv, t.returncode):
        raise SystemExit(f"{' '.join(argv)} exited {t.returncode}:\n{tail(t.output)}")
    return t.wall, t.cpu


def measure(pack: Path, backend: str, jobs: int, repeat: int, work: Path) -> Row:
    fixed = sorted(timed_run(run_argv(pack, backend, 1, None))[0] for _ in range(repeat))
    runs = []
    for i in range(repeat):
        out = work / f"{backend.replace(':', '_')}-j{jobs}-{i}.jsonl"
        runs.append((*timed_run(run_argv(pack, backend, jobs, out)), out))
    runs.sort(key=lambda r: r[0])
    wall, cpu, out = runs[(len(runs) - 1) // 2]
    results = run_results(out)
    verdicts = Counter(r["verdict"] for r in results)
    summary = ", ".join(f"{n} {v}" for v, n in verdicts.most_common())
    return Row(backend, jobs, len(results), wall, cpu, fixed[(len(fixed) - 1) // 2], summary)


def table(rows: list[Row]) -> str:
    header = ["Backend", "Jobs", "Vectors", "Wall s", "CPU s", "Fixed s"]
    header += ["Wall s / vector", "CPU s / vector", "Verdicts"]
    body = [
        [
            r.backend,
            str(r.jobs),
            str(r.vectors),
            f"{r.wall:.1f}",
            f"{r.cpu:.1f}",
            f"{r.fixed_wall:.1f}",
            f"{r.wall / max(1, r.vectors):.3f}",
            f"{r.cpu / max(1, r.vectors):.3f}",
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
    ap.add_argument("--ops", default="ADD|MUL|CAST|CONV2D|MATMUL|REDUCE_SUM|RESCALE|TRANSPOSE")
    ap.add_argument("--examples", type=int, default=2, help="valid vectors per (operator, mode)")
    ap.add_argument("--backends", default="iree:1,iree", help="backend specs to time")
    ap.add_argument("--jobs-list", default="1,2", help="--jobs values to time (default 1,2)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per setting; the median is kept")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON")
    args = ap.parse_args(argv)
    if shutil.which(OUR_TOOL) is None:
        ap.error(f"{OUR_TOOL} is not on PATH: pip install -e '.[iree]'")
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    rev = TOSA_REVISIONS[args.tosa]
    profiles = profiles_option(ap, args.profile, rev, rev.every_mode)

    return time_backends(
        args,
        rev,
        profiles,
        "iree_backend",
        ("iree-base-compiler", "iree-base-runtime", "tosa-tools"),
    )


def time_backends(
    args: argparse.Namespace,
    rev: TosaRevision,
    profiles: list[str],
    title: str,
    distributions: tuple[str, ...],
) -> int:
    """Time ``args.backends`` at each of ``args.jobs_list`` on ``args.pack`` (or a pack
    generated from ``args.ops``), and print the table (the vulkan benchmark shares it)."""
    print(f"# {title}, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC")
    print(f"machine: {machine_line()}")
    print("versions: " + ", ".join(f"{d} {package_version(d)}" for d in distributions))
    with tempfile.TemporaryDirectory(prefix=f"bench-{title}-") as tmp:
        work = Path(tmp)
        pack = args.pack
        if pack is None:
            pack = work / "pack"
            gen = generate_argv(rev, profiles, "--ops", args.ops, "--examples", str(args.examples))
            gen += ["--no-targeted", "--no-levels"]
            t = run_timed([*gen, "-o", str(pack), "--quiet"])
            if t.returncode != 0:
                raise SystemExit(f"{' '.join(gen)} exited {t.returncode}:\n{tail(t.output)}")
        made = "" if args.pack else f", --tosa {rev.name} --profile {','.join(profiles)}"
        print(f"pack: {pack} ({count_vectors(pack)} vectors{made})", flush=True)
        rows = [
            measure(pack, backend, int(jobs), args.repeat, work)
            for backend in args.backends.split(",")
            for jobs in args.jobs_list.split(",")
        ]
    print()
    print(table(rows))
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

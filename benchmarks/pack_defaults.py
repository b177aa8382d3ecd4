"""What our default packs cost: the BI pack and the full pack, generated with default options.

``bi`` is ``tosa-conformance generate --profile BI``; ``full`` adds MI and every extension
(``--profile BI --profile MI --extension all``). For each: wall time, CPU time of the whole
process tree (``getrusage(RUSAGE_CHILDREN)``, so the ``--jobs`` workers count), vectors by
kind, size on disk and the coverage-obligation total the generator prints.

    python benchmarks/pack_defaults.py --jobs 2
    python benchmarks/pack_defaults.py --only bi --keep /tmp/packs --json bi.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from _timing import (
    interpreter_bin_on_path,
    machine_line,
    markdown_table,
    pack_kinds,
    package_version,
    run_timed,
    tail,
    tree_bytes,
)

OUR_TOOL = "tosa-conformance"
# These benchmarks measure the 2024 draft's packs (their profiles BI/MI), as their
# recorded numbers did; TOSA 1.0 is the tool's default now.
DRAFT = ("--tosa", "2024-04-draft")
PACKS = {
    "bi": ["--profile", "BI"],
    "full": ["--profile", "BI", "--profile", "MI", "--extension", "all"],
}
COVERAGE_PREFIX = "coverage obligations: "


@dataclass
class Row:
    pack: str
    command: str
    ok: bool
    vectors: int
    kinds: str
    wall: float
    cpu: float
    bytes: int
    allocated: int
    coverage: str


def coverage_line(output: str) -> str:
    """The generator's obligation total, without the "; unmet:" that introduces its list."""
    for line in output.splitlines():
        if line.startswith(COVERAGE_PREFIX):
            return line[len(COVERAGE_PREFIX) :].removesuffix("; unmet:")
    return "not printed"


def generate(name: str, jobs: int, out: Path) -> Row:
    argv = [OUR_TOOL, *DRAFT, "generate", *PACKS[name], "-o", str(out)]
    argv += ["--jobs", str(jobs), "--quiet"]
    t = run_timed(argv)
    command = " ".join(argv)
    if t.returncode != 0:
        print(f"  {name} failed (exit {t.returncode}):\n{tail(t.output)}")
        return Row(name, command, False, 0, "failed", t.wall, t.cpu, 0, 0, "")
    vectors, kinds = pack_kinds(out)
    size, allocated = tree_bytes(out)
    return Row(
        name, command, True, vectors, kinds, t.wall, t.cpu, size, allocated, coverage_line(t.output)
    )


def table(rows: list[Row]) -> str:
    header = [
        "Pack",
        "Vectors",
        "Of which",
        "Wall s",
        "CPU s",
        "Vectors / CPU-s",
        "MB",
        "MB allocated",
    ]
    header.append("Coverage obligations")
    body = [
        [
            r.pack,
            str(r.vectors) if r.ok else "–",
            r.kinds,
            f"{r.wall:.1f}",
            f"{r.cpu:.1f}",
            f"{r.vectors / r.cpu:.1f}" if r.ok and r.cpu > 0 else "–",
            f"{r.bytes / 1e6:.1f}" if r.ok else "–",
            f"{r.allocated / 1e6:.1f}" if r.ok else "–",
            r.coverage or "–",
        ]
        for r in rows
    ]
    return markdown_table(header, body)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=2, help="our worker processes (default 2)")
    ap.add_argument("--only", choices=sorted(PACKS), help="generate only this pack")
    ap.add_argument(
        "--keep", type=Path, help="keep the packs in DIR/bi and DIR/full (DIR must not exist)"
    )
    ap.add_argument("--json", type=Path, help="also write the rows as JSON")
    args = ap.parse_args(argv)
    interpreter_bin_on_path()
    if shutil.which(OUR_TOOL) is None:
        ap.error(f"{OUR_TOOL} is not on PATH: pip install -e .")
    if args.keep is not None and args.keep.exists():
        ap.error(f"{args.keep} exists; choose a new --keep folder")

    started = datetime.now(UTC)
    print(f"# pack_defaults, {started:%Y-%m-%d %H:%M} UTC")
    print(f"machine: {machine_line()}")
    print(f"tosa-conformance {package_version('tosa-conformance')}; --jobs {args.jobs}")
    tmp = tempfile.TemporaryDirectory(prefix="bench-packs-") if args.keep is None else None
    root = Path(tmp.name) if tmp is not None else args.keep
    root.mkdir(parents=True, exist_ok=True)
    rows = []
    try:
        for name in [args.only] if args.only else list(PACKS):
            print(f"{name} ...", flush=True)
            rows.append(generate(name, args.jobs, root / name))
    finally:
        if tmp is not None:
            tmp.cleanup()

    print()
    print(table(rows))
    print()
    print(f"after the runs: {machine_line()}")
    if args.keep is not None:
        print(f"packs kept in {args.keep}")
    if args.json is not None:
        doc = {"started": started.isoformat(), "machine": machine_line(), "jobs": args.jobs}
        doc["rows"] = [asdict(r) for r in rows]
        args.json.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

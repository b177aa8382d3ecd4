"""What our default packs cost: the integer profile's pack and the full pack, with default options.

For TOSA 1.0 (``--tosa``, the default) ``pro-int`` is ``tosa-conformance --tosa 1.0
generate --profile PRO-INT``; ``full`` adds PRO-FP and every extension (``--profile PRO-INT
--profile PRO-FP --extension all``). For the 2024 draft they are ``bi`` (``--profile BI``)
and ``full`` (BI, MI, every extension). For each: wall time, CPU time of the whole process
tree (``getrusage(RUSAGE_CHILDREN)``, so the ``--jobs`` workers count), vectors by kind,
size on disk and the coverage-obligation total the generator prints.

    python benchmarks/pack_defaults.py --jobs 2
    python benchmarks/pack_defaults.py --only pro-int --keep /tmp/packs --json int.json
    python benchmarks/pack_defaults.py --tosa 2024-04-draft --only bi
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
    OUR_TOOL,
    TOSA_REVISIONS,
    TosaRevision,
    add_tosa_option,
    generate_argv,
    interpreter_bin_on_path,
    machine_line,
    markdown_table,
    pack_kinds,
    package_version,
    run_timed,
    tail,
    tree_bytes,
)

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


def packs(rev: TosaRevision) -> dict[str, list[str]]:
    """Pack name -> its generate command line up to ``-o``: the integer profile alone
    (named after it, ``pro-int`` or the draft's ``bi``), and every profile and extension."""
    return {
        rev.int_profile.lower(): generate_argv(rev, [rev.int_profile]),
        "full": generate_argv(rev, rev.profiles, "--extension", "all"),
    }


def generate(name: str, generate_command: list[str], jobs: int, out: Path) -> Row:
    argv = [*generate_command, "-o", str(out), "--jobs", str(jobs), "--quiet"]
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
    add_tosa_option(ap)
    ap.add_argument("--jobs", type=int, default=2, help="our worker processes (default 2)")
    ap.add_argument(
        "--only", metavar="PACK", help="generate only this pack: pro-int or full (draft: bi, full)"
    )
    ap.add_argument(
        "--keep", type=Path, help="keep the packs in DIR/PACK, e.g. DIR/full (DIR must not exist)"
    )
    ap.add_argument("--json", type=Path, help="also write the rows as JSON")
    args = ap.parse_args(argv)
    rev = TOSA_REVISIONS[args.tosa]
    commands = packs(rev)
    if args.only is not None and args.only not in commands:
        ap.error(f"--tosa {rev.name} has no pack {args.only!r}; choose from {sorted(commands)}")
    interpreter_bin_on_path()
    if shutil.which(OUR_TOOL) is None:
        ap.error(f"{OUR_TOOL} is not on PATH: pip install -e .")
    if args.keep is not None and args.keep.exists():
        ap.error(f"{args.keep} exists; choose a new --keep folder")

    started = datetime.now(UTC)
    print(f"# pack_defaults, {started:%Y-%m-%d %H:%M} UTC")
    print(f"machine: {machine_line()}")
    print(
        f"tosa-conformance {package_version('tosa-conformance')}; --tosa {rev.name}; "
        f"--jobs {args.jobs}"
    )
    tmp = tempfile.TemporaryDirectory(prefix="bench-packs-") if args.keep is None else None
    root = Path(tmp.name) if tmp is not None else args.keep
    root.mkdir(parents=True, exist_ok=True)
    rows = []
    try:
        for name in [args.only] if args.only else list(commands):
            print(f"{name} ...", flush=True)
            rows.append(generate(name, commands[name], args.jobs, root / name))
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
        doc["tosa"] = rev.name
        doc["rows"] = [asdict(r) for r in rows]
        args.json.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

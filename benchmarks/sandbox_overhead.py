"""What the sandbox costs a ``command:`` program, per vector: the same run with and
without it (``command:--no-sandbox``), in the same session.

Generates a small TOSA 1.0 pack (ADD and SUB, ``--examples 2``), then times ``run`` on
it with a program that does nothing (exit 0: every valid vector fails, which is
beside the point), ``--jobs 1``, ``--repeat`` times each, interleaved; reports the
median wall time per vector of each and their ratio.

    python benchmarks/sandbox_overhead.py
    python benchmarks/sandbox_overhead.py --repeat 5
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from _timing import machine_line, run_timed, tail

OUR_TOOL = "tosa-conformance"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from conformance.backends import sandbox

    why = sandbox.unavailable()
    if why is not None:
        print(f"no sandbox on this machine ({why}): nothing to compare")
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
        work = Path(tmp)
        pack = work / "pack"
        gen = [OUR_TOOL, "--tosa", "1.0", "generate", "--profile", "PRO-FP", "--ops", "ADD|SUB"]
        gen += ["--examples", "2", "--no-targeted", "--no-chains", "--quiet", "-o", str(pack)]
        made = run_timed(gen)
        if made.returncode != 0:
            raise SystemExit(f"generate failed:\n{tail(made.output)}")
        noop = work / "noop.py"
        noop.write_text("import sys\nsys.exit(0)\n")
        vectors = sum(1 for p in pack.iterdir() if p.is_dir())
        walls: dict[str, list[float]] = {"sandbox": [], "no sandbox": []}
        for _ in range(args.repeat):
            for label, option in (("sandbox", ""), ("no sandbox", "--no-sandbox ")):
                backend = f"command:{option}{sys.executable} {noop}"
                argv = [OUR_TOOL, "run", "--pack", str(pack), "--backend", backend]
                timed = run_timed([*argv, "--jobs", "1", "--quiet"])
                if timed.returncode not in (0, 1):
                    raise SystemExit(f"run failed:\n{tail(timed.output)}")
                walls[label].append(timed.wall)
    per = {k: statistics.median(v) / vectors * 1000 for k, v in walls.items()}
    print(machine_line())
    print(f"{vectors} vectors, median of {args.repeat} runs, --jobs 1")
    for label, ms in per.items():
        print(f"  {label:10}  {ms:6.1f} ms per vector")
    extra = per["sandbox"] - per["no sandbox"]
    print(f"sandbox / no sandbox: {per['sandbox'] / per['no sandbox']:.2f}x ({extra:+.1f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

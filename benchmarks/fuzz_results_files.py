"""Hostile results files through every command that reads one, counting tracebacks.

Generates a small pack (ADD only, from a trimmed tosa.xml), runs it with ``run --json``,
then mutates that real results file N times (bytes flipped, cut short, lines doubled,
dropped or swapped, fields swapped for every type, NaN, 5000-digit numbers, deep
nesting, keys given twice, bytes that are not UTF-8; tests/reliability/
results_mutations.py) and feeds each one, in this process, to ``merge``,
``certify --results`` and ``run --resume``.  A reader must exit 0, 1 or 2, and with 2
print one line; anything else is counted (tracebacks apart: a file can give one in each
of the three readers) and the first few are printed.  docs/reliability.md quotes the
result.

    python benchmarks/fuzz_results_files.py            # 2000 files, about 2 minutes
    python benchmarks/fuzz_results_files.py -n 200 --seed 7
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from _timing import machine_line

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "reliability"))  # the mutations the test uses
# The suite's packs are the 2024 draft's (profile BI), as the tests make them.
os.environ.setdefault("TOSA_CONFORMANCE_REVISION", "2024-04-draft")

from results_mutations import make_setup, mutate  # noqa: E402

SHOWN = 5  # problems printed in full


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--files", type=int, default=2000, help="mutated files (2000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(machine_line())
    rng = random.Random(args.seed)
    problems: list[str] = []
    codes: Counter[str] = Counter()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fuzz-results-") as tmp:
        setup = make_setup(Path(tmp))
        original = setup.results.read_bytes()
        for k in range(args.files):
            work = Path(tmp) / f"w{k}"
            work.mkdir()
            hostile = work / "hostile.jsonl"
            hostile.write_bytes(mutate(original, lambda lo, hi, _label: rng.randint(lo, hi)))
            for outcome in setup.readers(hostile, work):
                codes[f"{outcome.command} -> {outcome.code}"] += 1
                problem = outcome.problem()
                if problem is not None:
                    problems.append(f"file {k}: {problem}")
    seconds = time.perf_counter() - started
    for problem in problems[:SHOWN]:
        print(problem, file=sys.stderr)
    for key, n in sorted(codes.items()):
        print(f"  {key}: {n}")
    tracebacks = sum("a traceback" in p for p in problems)
    print(f"results files: {args.files} tried, {tracebacks} tracebacks", end="")
    print(f" ({len(problems) - tracebacks} other problems) in {seconds:.0f} s")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

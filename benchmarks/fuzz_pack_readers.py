"""How the pack readers take hostile packs: mutated vectors read in process as
``verify-pack``, ``run --backend reference`` and ``certify`` read them.

Builds two small real packs (a draft one and a TOSA 1.0 one), then draws ``--vectors``
mutations with the fuzz test's strategies (tests/reliability/pack_fuzz.py): one file of
one vector, or pack.json, flipped, cut, extended, spliced with another vector's bytes,
a 32-bit word overwritten, an .npy header rewritten, a JSON value replaced by one of
another type, or deleted; hashes fixed up or not; a folder or a zip.  Each mutated pack
is read by the three commands' readers; anything but a verdict or a one-line error is
a traceback.  Every kind of traceback is printed with a mutation that gives it, then
the totals (a kind is a distinct outcome: a verdict, an error message, a traceback,
with names and numbers taken out):

    vectors: 10000 tried, 0 tracebacks, 312 kinds

    python benchmarks/fuzz_pack_readers.py
    python benchmarks/fuzz_pack_readers.py --vectors 500 --seed 7 --kinds
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The fuzz engine and the hand-made draft vectors live with the tests; the draft vectors
# are of the 2024 draft, the revision the tests run with (tests/conftest.py).
sys.path[:0] = [str(REPO), str(REPO / "tests"), str(REPO / "tests" / "reliability")]
os.environ.setdefault("TOSA_CONFORMANCE_REVISION", "2024-04-draft")

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from pack_fuzz import Mutation, Readers, draw_mutation, make_bases, run_mutation  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vectors", type=int, default=10_000, help="mutated vectors (10000)")
    ap.add_argument("--seed", type=int, default=0, help="Hypothesis seed (0)")
    ap.add_argument("--kinds", action="store_true", help="also list every kind, most first")
    ap.add_argument("--json", type=Path, help="also write the counts as JSON")
    args = ap.parse_args()

    started = time.monotonic()
    readers = Readers()
    kinds: Counter[str] = Counter()
    tracebacks: dict[str, tuple[Mutation, str]] = {}
    crashes: dict[str, tuple[Mutation, str]] = {}  # the reference's, on vectors that load
    counts = {"tried": 0, "tracebacks": 0}
    with tempfile.TemporaryDirectory(prefix="fuzz-bases-") as tmp:
        bases = make_bases(Path(tmp))

        @seed(args.seed)
        @settings(
            max_examples=args.vectors,
            phases=[Phase.generate],  # every input counts once: no shrinking, no replay
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(data=st.data())
        def one(data: st.DataObject) -> None:
            m = draw_mutation(lambda s, label: data.draw(s, label=label), bases)
            readers.crashes.clear()
            outcomes = run_mutation(m, bases, readers)
            counts["tried"] += 1
            for o in outcomes:
                kinds[f"{o.stage}: {o.kind}"] += 1
                if not o.clean:
                    tracebacks.setdefault(f"{o.stage}: {o.kind}", (m, o.traceback))
                if o.kind.startswith("crashed: ") and readers.crashes:
                    crashes.setdefault(o.kind, (m, readers.crashes[-1]))
            counts["tracebacks"] += any(not o.clean for o in outcomes)
            if counts["tried"] % 500 == 0:
                elapsed = time.monotonic() - started
                print(f"{counts['tried']} vectors, {elapsed:.0f} s", file=sys.stderr, flush=True)

        one()
    for kind, (m, text) in sorted(tracebacks.items()):
        print(f"TRACEBACK ({kinds[kind]}x) {kind}\n  mutation: {m}\n" + _indent(text))
    for kind, (m, text) in sorted(crashes.items()):
        n = kinds[f"run: {kind}"]
        print(f"REFERENCE CRASH ({n}x) {kind}\n  mutation: {m}\n" + _indent(text))
    if args.kinds:
        for kind, n in kinds.most_common():
            print(f"{n:6} {kind}")
    seconds = time.monotonic() - started
    crashed = sum(n for k, n in kinds.items() if k.startswith("run: crashed: "))
    print(
        f"vectors: {counts['tried']} tried, {counts['tracebacks']} tracebacks, "
        f"{len(kinds)} kinds ({seconds:.0f} s; the reference crashed on {crashed})"
    )
    if args.json:
        doc = {**counts, "kinds": dict(kinds.most_common()), "seconds": round(seconds, 1)}
        args.json.write_text(json.dumps(doc, indent=1) + "\n")
    return 1 if counts["tracebacks"] else 0


def _indent(text: str) -> str:
    return "".join(f"    {line}\n" for line in text.strip().splitlines()[-12:])


if __name__ == "__main__":
    sys.exit(main())

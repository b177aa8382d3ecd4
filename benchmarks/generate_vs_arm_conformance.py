"""Ours beside Arm's ``tosa_verif_conformance_generator``: complete vectors per CPU-second
and bytes per tensor element, on the same operators at matched tensor sizes.

For each profile, Arm's conformance generator runs first (``--test-type both``, binary
output, ``-j JOBS``); its median input size (elements of every input tensor of a test,
graph constants included) is then the size ours aims at: ours runs at its default
``--max-elements``, and once more at that budget scaled by Arm's median over ours,
unless ``--max-elements`` is given.

A *complete* vector carries everything needed to judge a result without computing one:
a must-fail vector, or a valid one whose expected results are on disk. Arm's generator
records reference results only for tests without a ``compliance`` block; the others get
their results from Arm's reference model when the tests are run. Our level vectors
(reported, never judged) have no expected result and do not count either.

``--tosa`` chooses the revision of our packs (default 1.0) and with it the profiles
(PRO-INT, PRO-FP; the 2024 draft's BI, MI) and Arm's ``--tosa-version`` (1.0.2 for 1.0,
1.1.0-draft for 1.1-draft; Arm's default for the 2024 draft, as its recorded runs had it).

    python benchmarks/generate_vs_arm_conformance.py --jobs 2
    python benchmarks/generate_vs_arm_conformance.py --profiles PRO-INT --int-ops 'ADD|MUL'
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from _timing import (
    OUR_TOOL,
    TOSA_REVISIONS,
    Timed,
    TosaRevision,
    add_tosa_option,
    generate_argv,
    interpreter_bin_on_path,
    machine_line,
    markdown_table,
    package_version,
    profiles_option,
    run_timed,
    tail,
    tree_bytes,
)

from strategies.shapes import DEFAULT_MAX_ELEMENTS

ARM_TOOL = "tosa_verif_conformance_generator"
# Operators of the integer profile (BI, PRO-INT) and of the floating-point one (MI, PRO-FP).
DEFAULT_OPS = {"int": "ADD|MUL|CONV2D|RESCALE", "fp": "ADD|MATMUL|CONV2D"}
# A second run of ours is worth its time only when the medians are further apart than this.
CLOSE_ENOUGH = 1.25


@dataclass
class Test:
    kind: str
    complete: bool
    input_elements: int
    output_elements: int  # of the expected results on disk


@dataclass
class Suite:
    tool: str
    profile: str
    max_elements: int | None
    command: str
    ok: bool
    wall: float
    cpu: float
    bytes: int = 0
    tests: int = 0
    complete: int = 0
    kinds: str = ""
    median_input: float = 0.0
    input_elements: int = 0
    output_elements: int = 0

    def rate(self, n: int) -> float:
        return n / self.cpu if self.cpu > 0 else math.nan

    def bytes_per_element(self) -> float:
        elements = self.input_elements + self.output_elements
        return self.bytes / elements if elements else math.nan


def elements(shapes: Iterable[list[int]]) -> int:
    return sum(math.prod(s) for s in shapes)


def our_tests(pack: Path) -> list[Test]:
    doc = json.loads((pack / "pack.json").read_text(encoding="utf-8"))
    tests = []
    for v in doc["vectors"]:
        folder = pack / v["name"]
        desc = json.loads((folder / "desc.json").read_text(encoding="utf-8"))
        stored = [e for e in desc["expected"] if (folder / e["file"]).is_file()]
        bounds = all((folder / e["bound_file"]).is_file() for e in stored if e.get("bound_file"))
        results = bool(desc["expected"]) and len(stored) == len(desc["expected"]) and bounds
        inputs = elements(t["shape"] for t in desc["inputs"])
        output = elements(e["shape"] for e in stored)
        tests.append(Test(desc["kind"], desc["expected_failure"] or results, inputs, output))
    return tests


def arm_tests(root: Path) -> list[Test]:
    tests = []
    for path in root.rglob("desc.json"):
        folder = path.parent
        desc = json.loads(path.read_text(encoding="utf-8"))
        tensors = desc.get("meta", {}).get("data_gen", {}).get("tensors")
        if tensors is not None:  # variable inputs and the constants inside the graph
            inputs = elements(t["shape"] for t in tensors.values())
        else:
            npys = [folder / f for f in desc["ifm_file"] if (folder / f).is_file()]
            inputs = sum(np.load(f, mmap_mode="r").size for f in npys)
        # The results' names end in .npy in desc.json even with --output-type json.
        names = desc.get("expected_result_file", [])
        on_disk = [n for n in names if any(folder.glob(Path(n).stem + ".*"))]
        results = bool(names) and len(on_disk) == len(names)
        shapes = desc.get("test_details", {}).get("output_shapes", [])
        output = elements(shapes) if results else 0
        failing = desc["expected_failure"]
        kind = "negative" if failing else "positive" + (" with results" if results else "")
        tests.append(Test(kind, failing or results, inputs, output))
    return tests


def measured(suite: Suite, tests: list[Test], out: Path) -> Suite:
    kinds = Counter(t.kind for t in tests)
    suite.kinds = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
    suite.bytes = tree_bytes(out)[0]
    suite.tests = len(tests)
    suite.complete = sum(t.complete for t in tests)
    suite.median_input = statistics.median(t.input_elements for t in tests) if tests else 0.0
    suite.input_elements = sum(t.input_elements for t in tests)
    suite.output_elements = sum(t.output_elements for t in tests)
    return suite


def failed(tool: str, profile: str, max_elements: int | None, t: Timed) -> Suite:
    why = f"timed out after {t.wall:.0f} s" if t.timed_out else f"exit {t.returncode}"
    print(f"  {tool} {profile} failed ({why}):\n{tail(t.output)}")
    return Suite(tool, profile, max_elements, " ".join(t.argv), False, t.wall, t.cpu)


def arm_argv(
    rev: TosaRevision,
    profile: str,
    ops: list[str],
    args: argparse.Namespace,
    out: Path,
    build: Path,
) -> list[str]:
    argv = [ARM_TOOL, "--operators", *(op.lower() for op in ops), "--profile", profile]
    argv += rev.arm_version_args
    argv += ["--test-type", "both", "--output-type", args.arm_output_type, "-j", str(args.jobs)]
    argv += ["--output-directory", str(out), "--build-directory", str(build)]
    if args.arm_ref_model is not None:
        argv += ["--ref-model-path", str(args.arm_ref_model)]
    return argv


def run_arm(
    rev: TosaRevision, profile: str, ops: list[str], args: argparse.Namespace, root: Path
) -> Suite:
    out, build = root / f"arm-{profile}", root / f"arm-{profile}-build"
    argv = arm_argv(rev, profile, ops, args, out, build)
    t = run_timed(argv, timeout=args.timeout)
    if args.keep is None:
        shutil.rmtree(build, ignore_errors=True)
    # The generator logs an error and still exits 0 when a batch of tests fails to build.
    if t.returncode != 0 or t.timed_out or "ERROR:" in t.output or not out.is_dir():
        return failed("Arm", profile, None, t)
    tests = arm_tests(out)
    names = {d.parent.name for d in out.rglob("desc.json")}
    for op in ops:
        if not any(n.startswith(op.lower() + "_") for n in names):
            print(f"  note: Arm {profile}: no test for {op.lower()}")
    return measured(Suite("Arm", profile, None, " ".join(argv), True, t.wall, t.cpu), tests, out)


def ours_argv(
    rev: TosaRevision, profile: str, ops: list[str], max_elements: int | None, jobs: int, out: Path
) -> list[str]:
    options = ["--ops", "|".join(ops), "-o", str(out), "--jobs", str(jobs), "--quiet"]
    if max_elements is not None:
        options += ["--max-elements", str(max_elements)]
    return generate_argv(rev, [profile], *options)


def run_ours(
    rev: TosaRevision,
    profile: str,
    ops: list[str],
    max_elements: int | None,
    args: argparse.Namespace,
    root: Path,
) -> Suite:
    out = root / f"ours-{profile}-{max_elements or 'default'}"
    argv = ours_argv(rev, profile, ops, max_elements, args.jobs, out)
    t = run_timed(argv, timeout=args.timeout)
    if t.returncode != 0 or t.timed_out:
        return failed("ours", profile, max_elements, t)
    suite = Suite("ours", profile, max_elements, " ".join(argv), True, t.wall, t.cpu)
    return measured(suite, our_tests(out), out)


def matched_budget(arm: Suite, ours: Suite) -> int | None:
    """Our default budget scaled by Arm's median input over ours; None when already close."""
    ratio = arm.median_input / max(ours.median_input, 1.0)
    if 1 / CLOSE_ENOUGH <= ratio <= CLOSE_ENOUGH:
        return None
    return max(1, round(DEFAULT_MAX_ELEMENTS * ratio))


def _num(x: float, fmt: str) -> str:
    return "–" if math.isnan(x) else format(x, fmt)


def suites_table(suites: list[Suite]) -> str:
    header = ["Tool", "Profile", "--max-elements", "Tests", "Of which", "Complete", "Wall s"]
    header += ["CPU s", "Complete / CPU-s", "Tests / CPU-s", "MB", "Median input elements"]
    header += ["Input elements", "Output elements stored", "Bytes / element"]
    body = []
    for s in suites:
        size = (
            "–" if s.tool == "Arm" else str(s.max_elements or f"{DEFAULT_MAX_ELEMENTS} (default)")
        )
        if not s.ok:
            cells = [s.tool, s.profile, size, "–", "failed", "–", f"{s.wall:.1f}", f"{s.cpu:.1f}"]
            body.append(cells + ["–"] * (len(header) - len(cells)))
            continue
        body.append(
            [
                s.tool,
                s.profile,
                size,
                str(s.tests),
                s.kinds,
                str(s.complete),
                f"{s.wall:.1f}",
                f"{s.cpu:.1f}",
                _num(s.rate(s.complete), ".2f"),
                _num(s.rate(s.tests), ".2f"),
                f"{s.bytes / 1e6:.1f}",
                f"{s.median_input:g}",
                str(s.input_elements),
                str(s.output_elements),
                _num(s.bytes_per_element(), ".2f"),
            ]
        )
    return markdown_table(header, body)


def _ratio(a: float, b: float) -> str:
    if math.isnan(a) or math.isnan(b):
        return "–"
    return "∞ (Arm: 0)" if b == 0 else f"{a / b:.2f}"


def ratios_table(pairs: list[tuple[Suite, Suite]]) -> str:
    header = ["Profile", "Ours at --max-elements", "Median input, ours / Arm's"]
    header += ["Complete / CPU-s, ours / Arm's", "Tests / CPU-s, ours / Arm's"]
    header += ["Bytes / element, ours / Arm's"]
    body = [
        [
            f"{o.profile} / {a.profile}",
            str(o.max_elements or DEFAULT_MAX_ELEMENTS),
            f"{o.median_input:g} / {a.median_input:g}",
            _ratio(o.rate(o.complete), a.rate(a.complete)),
            _ratio(o.rate(o.tests), a.rate(a.tests)),
            _ratio(o.bytes_per_element(), a.bytes_per_element()),
        ]
        for o, a in pairs
        if o.ok and a.ok
    ]
    return markdown_table(header, body)


def compare(
    rev: TosaRevision, profile: str, ops: list[str], args: argparse.Namespace, root: Path
) -> list[Suite]:
    arm_profile = rev.arm_profile(profile)
    print(f"Arm {arm_profile} {' '.join(op.lower() for op in ops)} ...", flush=True)
    arm = run_arm(rev, arm_profile, ops, args, root)
    if args.max_elements is not None:
        print(f"ours {profile} --max-elements {args.max_elements} ...", flush=True)
        return [arm, run_ours(rev, profile, ops, args.max_elements, args, root)]
    print(f"ours {profile} (default --max-elements) ...", flush=True)
    ours = run_ours(rev, profile, ops, None, args, root)
    if not (arm.ok and ours.ok) or (budget := matched_budget(arm, ours)) is None:
        return [arm, ours]
    print(f"ours {profile} --max-elements {budget} ...", flush=True)
    return [arm, ours, run_ours(rev, profile, ops, budget, args, root)]


def profile_ops(rev: TosaRevision, profile: str, args: argparse.Namespace) -> list[str]:
    text = args.int_ops if profile == rev.int_profile else args.fp_ops
    return [op for op in text.split("|") if op]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_tosa_option(ap)
    ap.add_argument(
        "--profiles",
        help="our profiles, comma separated (default: both of the revision, e.g. PRO-INT,PRO-FP)",
    )
    # --bi-ops and --mi-ops are the names the 2024 draft's recorded commands used.
    for kind, old, ops in (("int", "bi", DEFAULT_OPS["int"]), ("fp", "mi", DEFAULT_OPS["fp"])):
        ap.add_argument(
            f"--{kind}-ops",
            f"--{old}-ops",
            dest=f"{kind}_ops",
            default=ops,
            help=f"operators of the {kind} profile, {old.upper()} or PRO-{kind.upper()} "
            f"(default {ops})",
        )
    ap.add_argument("--jobs", type=int, default=2, help="worker processes of each tool")
    ap.add_argument("--max-elements", type=int, help="ours at this budget only (no matching)")
    ap.add_argument("--timeout", type=float, default=1200, help="seconds per run (default 1200)")
    ap.add_argument("--arm-output-type", default="binary", choices=["binary", "json", "both"])
    ap.add_argument("--arm-ref-model", type=Path, help="Arm's tosa_reference_model executable")
    ap.add_argument("--keep", type=Path, help="keep every output here (must not exist)")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON")
    args = ap.parse_args(argv)

    rev = TOSA_REVISIONS[args.tosa]
    profiles = profiles_option(ap, args.profiles, rev)
    # Arm's generator starts tosa_verif_build_tests and tosa_verif_run_tests by name.
    interpreter_bin_on_path()
    for tool in (OUR_TOOL, ARM_TOOL):
        if shutil.which(tool) is None:
            ap.error(f"{tool} is not on PATH: pip install -e '.[arm]'")
    if args.keep is not None and args.keep.exists():
        ap.error(f"{args.keep} exists; choose a new --keep folder")

    started = datetime.now(UTC)
    print(f"# generate_vs_arm_conformance, {started:%Y-%m-%d %H:%M} UTC")
    print(f"machine: {machine_line()}")
    print(
        f"tosa-conformance {package_version('tosa-conformance')}, "
        f"tosa-tools {package_version('tosa-tools')}; --tosa {rev.name} "
        f"(Arm --tosa-version {rev.arm_version or 'default'}); --jobs {args.jobs} for both; "
        f"Arm --output-type {args.arm_output_type}"
    )
    tmp = tempfile.TemporaryDirectory(prefix="bench-conformance-") if args.keep is None else None
    root = Path(tmp.name) if tmp is not None else args.keep
    root.mkdir(parents=True, exist_ok=True)
    suites: list[Suite] = []
    try:
        for profile in profiles:
            suites += compare(rev, profile, profile_ops(rev, profile, args), args, root)
    finally:
        if tmp is not None:
            tmp.cleanup()

    arm_of = {s.profile: s for s in suites if s.tool == "Arm"}
    pairs = [(s, arm_of[rev.arm_profile(s.profile)]) for s in suites if s.tool == "ours"]
    print()
    print(suites_table(suites))
    print()
    print(ratios_table(pairs))
    print()
    print(f"after the runs: {machine_line()}")
    if args.keep is not None:
        print(f"outputs kept in {args.keep}")
    if args.json is not None:
        doc = {"started": started.isoformat(), "machine": machine_line(), "jobs": args.jobs}
        doc["tosa"], doc["arm_tosa_version"] = rev.name, rev.arm_version
        doc["suites"] = [asdict(s) for s in suites]
        args.json.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return 0 if all(s.ok for s in suites) else 1


if __name__ == "__main__":
    sys.exit(main())

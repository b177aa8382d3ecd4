"""What a vector costs on the ``vulkan`` backend: one scenario per vector, or batches, and
Arm's reference model on the same pack in the same run.

Generates a small TOSA 1.0 pack (or takes ``--pack``), then times ``tosa-conformance
run`` on it for each backend of ``--backends`` (default: ``vulkan:1``, a scenario per
vector, which is what running the SDK's scenario runner per vector costs; ``vulkan``,
batches of 16 graphs per scenario; ``tosa-reference-model``, the ratio's other side),
at each ``--jobs`` value.  The timing is :mod:`iree_backend`'s: wall and CPU time per
vector, the fixed cost of a run that selects no vector, the verdicts.

    python benchmarks/vulkan_backend.py
    python benchmarks/vulkan_backend.py --pack /tmp/full-1.0 --backends vulkan --jobs-list 2
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from _timing import OUR_TOOL, TOSA_REVISIONS, add_tosa_option, profiles_option
from iree_backend import time_backends

SDK = (
    "ai-ml-sdk-model-converter", "ai-ml-sdk-scenario-runner",
    "ai-ml-emulation-layer-for-vulkan", "tosa-tools",
)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_tosa_option(ap)
    ap.add_argument("--pack", type=Path, help="time this pack instead of generating one")
    ap.add_argument("--profile", help="profiles of the generated pack (default PRO-INT,PRO-FP)")
    ap.add_argument("--ops", default="ADD|MUL|CAST|CONV2D|MATMUL|REDUCE_SUM|RESCALE|TRANSPOSE")
    ap.add_argument("--examples", type=int, default=2, help="valid vectors per (operator, mode)")
    ap.add_argument("--backends", default="vulkan:1,vulkan,tosa-reference-model")
    ap.add_argument("--jobs-list", default="2", help="--jobs values to time (default 2)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per setting; the median is kept")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON")
    args = ap.parse_args(argv)
    if shutil.which(OUR_TOOL) is None:
        ap.error(f"{OUR_TOOL} is not on PATH: pip install -e '.[vulkan,arm]'")
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    rev = TOSA_REVISIONS[args.tosa]
    profiles = profiles_option(ap, args.profile, rev, rev.every_mode)

    return time_backends(args, rev, profiles, "vulkan_backend", SDK)


if __name__ == "__main__":
    raise SystemExit(main())

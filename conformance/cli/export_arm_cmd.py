"""``tosa-conformance export-arm``: write a TOSA 1.0 / 1.1-draft pack as test folders
Arm's ``tosa_verif_run_tests -t DIR -r`` runs and judges (conformance.arm_suite.export).

Exit status: 0 written (the summary lists every vector left out and every
approximation of a compliance mode), 2 bad input (a pack of another revision, a
damaged pack, a non-empty output folder), printed by ``main`` as one line.
"""

from __future__ import annotations

import argparse

from conformance.arm_suite.export import export_pack
from conformance.spec import Spec


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export-arm",
        help="write a pack's vectors as test folders for Arm's tosa_verif_run_tests",
        description="Write the vectors of --pack (TOSA 1.0 or the 1.1 draft) under -o, one "
        "folder each, as Arm's tosa_verif_run_tests reads them: Arm's desc.json (schema "
        "1.2), the graph, the inputs in Arm's .npy convention, and the vector's own files "
        "beside them. Level vectors and vectors Arm's model cannot run are left out and "
        "listed.",
    )
    p.add_argument("--pack", required=True, help="pack folder, or a zip of one")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="a new or empty folder")
    p.set_defaults(run=_export_arm)


def _export_arm(spec: Spec, args: argparse.Namespace) -> int:
    del spec  # the pack records its own revision
    summary = export_pack(args.pack, args.output)  # PackError -> main: one line, exit 2
    for line in summary.lines():
        print(line)
    return 0

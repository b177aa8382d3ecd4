"""The ``tosa-conformance`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from conformance import __version__, revisions
from conformance.cli import (
    arm_cmd,
    capabilities_cmd,
    certify_cmd,
    coverage_cmd,
    export_arm_cmd,
    fuzz_cmd,
    generate_cmd,
    merge_cmd,
    mutation_cmd,
    pack_cmd,
    run_cmd,
    spec_cmd,
)

# UsageError is re-exported: tests and users import conformance.cli.main.UsageError.
from conformance.cli.options import UsageError as UsageError
from conformance.cli.options import check_counts
from conformance.errors import ConformanceError
from conformance.spec import Spec, load_revision, load_spec, spec_in_use, vendored_spec


def select_spec(args: argparse.Namespace) -> Spec:
    """The one spec of this process: from --spec or --tosa, else the revision of the
    pack the command reads (a pack is judged by its own revision's rules), else the
    default revision. A --tosa that contradicts the pack is refused."""
    if args.spec and args.tosa:
        raise UsageError("--spec and --tosa both name a specification; give one of them")
    if args.spec:
        return load_spec(args.spec)
    if args.tosa:
        revisions.revision(args.tosa)  # an unknown name: one line
    pack = _pack_revision(getattr(args, "pack", None))
    if pack and args.tosa and pack != revisions.revision(args.tosa).name:
        raise UsageError(
            f"{args.pack} is a TOSA {pack} pack, judged by that revision's rules; "
            f"drop --tosa {args.tosa}, or generate a pack with --tosa {args.tosa}"
        )
    arm = None if pack or args.tosa else _arm_revision(getattr(args, "arm_dirs", None))
    return load_revision(pack or args.tosa or arm or revisions.default_revision())


def _arm_revision(dirs: list[str] | None) -> str | None:
    """The revision of the first readable graph of Arm's tests under ``dirs`` (import-arm
    judges them by their own revision); None when there is none (the import says why)."""
    if not dirs:
        return None
    from conformance.arm_suite.importer import detect_revision, find_tests

    try:
        return detect_revision(find_tests(dirs))
    except ConformanceError:
        return None


def _pack_revision(pack: str | None) -> str | None:
    """The vendored revision an existing pack was generated from, when it says or its
    tosa.xml is a vendored one; None otherwise (the checks that read the pack report
    a damaged or foreign one in their own words)."""
    if not pack:
        return None
    from vectors.pack import open_pack

    try:
        with open_pack(pack) as opened:
            meta = opened.meta
    except (ConformanceError, OSError, ValueError):
        return None
    spec = vendored_spec(meta.spec_revision, meta.spec_sha256)
    return spec.revision if spec else None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tosa-conformance",
        description="Generate TOSA conformance vector packs and certify implementations.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--spec",
        metavar="PATH",
        help="a tosa.xml to use instead of a vendored revision (validated with the "
        "tosa.xsd beside it)",
    )
    parser.add_argument(
        "--tosa",
        metavar="REVISION",
        help="the TOSA specification revision: "
        + ", ".join(revisions.REVISIONS)
        + f" (default {revisions.DEFAULT_REVISION}, or ${revisions.DEFAULT_ENV})",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    generate_cmd.register(sub)
    run_cmd.register(sub)
    certify_cmd.register(sub)
    fuzz_cmd.register(sub)
    merge_cmd.register(sub)
    mutation_cmd.register(sub)
    pack_cmd.register(sub)
    coverage_cmd.register(sub)
    spec_cmd.register(sub)
    capabilities_cmd.register(sub)
    arm_cmd.register(sub)
    export_arm_cmd.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        check_counts(args)
        with spec_in_use(select_spec(args)) as spec:
            return int(args.run(spec, args) or 0)
    # Every error the user can fix (bad argument, damaged pack, spec, claim, backend,
    # results file, full disk) is a ConformanceError: one line, exit status 2.
    except ConformanceError as exc:
        print(f"tosa-conformance: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError as exc:
        if _stdout_closed():  # piped into head: nobody reads the rest
            return 0
        # Any other pipe (a worker's) must never pass for a clean exit.
        print(f"tosa-conformance: error: a pipe broke under the command: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # an unwritable output, a full disk: the user's to fix
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"tosa-conformance: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2


def _stdout_closed() -> bool:
    """Whether standard output is a pipe whose reader has gone (poll says POLLERR)."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), 0)
        return any(event & (select.POLLERR | select.POLLHUP) for _, event in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # no real file descriptor
        return False


if __name__ == "__main__":
    sys.exit(main())

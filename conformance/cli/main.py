"""The ``tosa-conformance`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from conformance import __version__
from conformance.claims import DEFAULT_LEVEL, Claim, make_claim
from conformance.errors import ConformanceError
from conformance.spec import Spec, load_spec


class UsageError(ConformanceError):
    """A problem with what the user asked for; printed as one line, exit status 2."""


def add_claim_arguments(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    """The claim flags every command that takes a claim shares."""
    group = parser.add_argument_group("claim")
    group.add_argument(
        "--profile",
        action="append",
        default=[],
        metavar="P",
        help="profile claimed (repeatable): BI, MI; MI includes BI",
    )
    group.add_argument(
        "--extension",
        action="append",
        default=[],
        metavar="E",
        help="extension claimed (repeatable), e.g. EXT-INT16; 'all' for every extension "
        "of the claimed profiles",
    )
    group.add_argument(
        "--level", default=DEFAULT_LEVEL, metavar="L", help=f"level (default {DEFAULT_LEVEL})"
    )
    parser.set_defaults(claim_required=required)


def claim_from_args(spec: Spec, args: argparse.Namespace) -> Claim:
    return make_claim(spec, args.profile, args.extension, args.level)


def build_parser() -> argparse.ArgumentParser:
    from conformance.cli import (
        capabilities_cmd,
        certify_cmd,
        coverage_cmd,
        fuzz_cmd,
        generate_cmd,
        merge_cmd,
        mutation_cmd,
        pack_cmd,
        run_cmd,
        spec_cmd,
    )

    parser = argparse.ArgumentParser(
        prog="tosa-conformance",
        description="Generate TOSA conformance vector packs and certify implementations.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--spec",
        metavar="PATH",
        help="tosa.xml to use instead of the vendored one",
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        spec = load_spec(args.spec)
        return int(args.run(spec, args) or 0)
    # Every error the user can fix (bad argument, damaged pack, spec, claim, backend,
    # results file, full disk) is a ConformanceError: one line, exit status 2.
    except ConformanceError as exc:
        print(f"tosa-conformance: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. piped into head
        return 0
    except OSError as exc:  # an unwritable output, a full disk: the user's to fix
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"tosa-conformance: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

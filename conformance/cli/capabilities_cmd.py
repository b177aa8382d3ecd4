"""``tosa-conformance capabilities``: the built-in capability manifests."""

from __future__ import annotations

import argparse

from conformance.cli.options import UsageError
from conformance.spec import Spec


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "capabilities",
        help="list the built-in capability manifests, or print one",
        description="Capability manifests say which part of TOSA a backend implements "
        "(docs/capabilities.md). Without arguments: the built-in ones; 'show NAME|FILE' "
        "prints one as TOML.",
    )
    p.add_argument("action", nargs="?", choices=["show"], help="print one manifest")
    p.add_argument("manifest", nargs="?", metavar="NAME|FILE", help="built-in name or TOML file")
    p.set_defaults(run=_run)


def _run(spec: Spec, args: argparse.Namespace) -> int:
    from conformance.capabilities import BUILTIN, builtin_names, load_manifest

    if args.action is None:
        for name in builtin_names():
            m = load_manifest(name, spec)
            pairs = sum(len(e["modes"]) for e in m.operators.values())
            print(f"{name:10} {len(m.operators):3} operators, {pairs:3} pairs  {BUILTIN[name][1]}")
        return 0
    if args.manifest is None:
        raise UsageError("capabilities show: name a manifest (see 'tosa-conformance capabilities')")
    m = load_manifest(args.manifest, spec)
    print(f"# {m.origin}; sha256 {m.sha256}")
    print(m.to_toml(), end="")
    return 0

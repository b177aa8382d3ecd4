"""``tosa-conformance spec``: browse operators, modes, profiles, levels and errata."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conformance import errata, mode_table, sources
from conformance.claims import required_modes
from conformance.cli.options import UsageError, add_claim_arguments, claim_from_args
from conformance.spec import Argument, OperatorSpec, Spec, TypeSupport


def register(sub: argparse._SubParsersAction) -> None:
    spec_parser = sub.add_parser("spec", help="browse the specification model")
    spec_sub = spec_parser.add_subparsers(dest="spec_command", metavar="WHAT")
    spec_sub.required = True

    def command(name: str, help_: str, run: Any) -> argparse.ArgumentParser:
        p = spec_sub.add_parser(name, help=help_)
        p.add_argument("--json", action="store_true", help="machine-readable output")
        p.set_defaults(run=run)
        return p

    command("ops", "operators by group, with their modes and profiles", _ops)
    op = command("op", "one operator: arguments, ranks, level limits, modes", _op)
    op.add_argument("name", help="operator name, e.g. CONV2D")
    op.add_argument("--level", default="8K", help="level used to resolve rank bounds")
    op.add_argument(
        "--sources",
        action="store_true",
        help="where the operator's behaviour is defined (file:line per registry)",
    )
    index = command("sources-index", "docs/operators.md: --sources for every operator", _index)
    index.add_argument("-o", "--output", help="write the index to this file (default: print it)")
    modes = command("modes", "every concrete mode: types, requirements, version", _modes)
    modes.add_argument("-o", "--output", help="write the table to this file (default: print it)")
    req = command("requirements", "(operator, mode) pairs a claim requires", _requirements)
    add_claim_arguments(req)
    command("profiles", "profiles and extensions", _profiles)
    command("levels", "levels and their maxima", _levels)
    command("errata", "corrections applied to tosa.xml", _errata)


def _table(rows: Sequence[Sequence[str]], header: Sequence[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += [
        "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]
    return "\n".join(lines)


def _emit(args: argparse.Namespace, data: Any, text: str) -> int:
    print(json.dumps(data, indent=2) if args.json else text)
    return 0


def _requirement_text(mode: TypeSupport) -> str:
    return " | ".join(" & ".join(sorted(r)) for r in mode.requirements)


def _mode_json(mode: TypeSupport) -> dict[str, Any]:
    return {
        "mode": mode.mode,
        "types": dict(mode.bindings),
        "requirements": [sorted(r) for r in mode.requirements],
        "version_added": mode.version_added,
    }


def _ops(spec: Spec, args: argparse.Namespace) -> int:
    rows = []
    data = []
    for group, ops in spec.groups().items():
        for op in ops:
            names = sorted({n for m in op.modes for r in m.requirements for n in r})
            rows.append([group, op.name, str(len(op.modes)), ", ".join(names)])
            data.append(
                {"group": group, "operator": op.name, "modes": [_mode_json(m) for m in op.modes]}
            )
    total = sum(len(op.modes) for op in spec.operators.values())
    text = _table(rows, ["group", "operator", "modes", "profiles/extensions"])
    text += f"\n\n{len(spec.operators)} operators, {total} (operator, mode) pairs"
    return _emit(args, data, text)


def _rank_text(arg: Argument, spec: Spec, level: str) -> str:
    if arg.rank_min is None or arg.rank_max is None:
        return "-"
    ranks = arg.rank_range(spec.level(level))
    if ranks is None:
        return "-"
    lo, hi = ranks
    return str(lo) if lo == hi else f"{lo}..{hi}"


def _op(spec: Spec, args: argparse.Namespace) -> int:
    try:
        op: OperatorSpec = spec.operator(args.name)
    except KeyError:
        close = [n for n in spec.operators if args.name.upper() in n]
        hint = f"; did you mean {', '.join(close)}?" if close else "; see 'spec ops'"
        raise UsageError(f"unknown operator {args.name!r}{hint}") from None
    try:
        spec.level(args.level)
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from None
    if args.sources:
        return _sources(spec, op, args)
    arg_rows = [
        [
            a.category,
            a.name + ("?" if a.optional else ""),
            a.type,
            a.element_type,
            a.shape.text,
            _rank_text(a, spec, args.level),
            ", ".join(f"{lim.text} <= {lim.limit}" for lim in a.level_limits),
        ]
        for a in op.arguments
    ]
    mode_rows = [
        [m.mode, " ".join(f"{k}={v}" for k, v in m.bindings.items()), _requirement_text(m)]
        for m in op.modes
    ]
    text = f"{op.name} (group {op.group})\n\n"
    text += _table(
        arg_rows, ["category", "argument", "type", "element", "shape", "rank", "level limits"]
    )
    text += f"\n\n{len(op.modes)} modes:\n"
    text += _table(mode_rows, ["mode", "types", "required by"])
    notes = [e for e in errata.ERRATA if op.name in e.operators or e.id in op.errata]
    for e in notes:
        text += f"\n\nerratum {e.id}: {e.we_use}"
    data = {
        "operator": op.name,
        "group": op.group,
        "arguments": [
            {
                "name": a.name,
                "category": a.category,
                "type": a.type,
                "element_type": a.element_type,
                "shape": a.shape.text,
                "rank": _rank_text(a, spec, args.level),
                "optional": a.optional,
                "level_limits": [{"value": lim.text, "limit": lim.limit} for lim in a.level_limits],
                "element_names": list(a.element_names),
            }
            for a in op.arguments
        ],
        "modes": [_mode_json(m) for m in op.modes],
        "errata": [e.id for e in notes],
    }
    return _emit(args, data, text)


def _sources(spec: Spec, op: OperatorSpec, args: argparse.Namespace) -> int:
    found = sources.operator_sources(op.name, spec)
    data = {
        "operator": op.name,
        "group": op.group,
        "sources": {r: [loc.to_json() for loc in locs] for r, locs in found.items()},
        "exemptions": {r: sources.exemption(r, op) for r, locs in found.items() if not locs},
    }
    return _emit(args, data, sources.render_sources(op.name, spec))


def _index(spec: Spec, args: argparse.Namespace) -> int:
    text = sources.render_index(spec)
    if args.json:
        data = {
            name: {
                r: [str(loc) for loc in locs]
                for r, locs in sources.operator_sources(name, spec).items()
            }
            for name in spec.operators
        }
        return _emit(args, data, text)
    return _print_or_write(args.output, text, "the index", f"{len(spec.operators)} operators")


def _print_or_write(output: str | None, text: str, what: str, count: str) -> int:
    """``text`` on stdout, or into the file ``output`` (one line if it cannot be)."""
    if not output:
        print(text, end="")
        return 0
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{output}: cannot write {what}: {exc.strerror}") from None
    print(f"wrote {output} ({count})")
    return 0


def _requirements(spec: Spec, args: argparse.Namespace) -> int:
    claim = claim_from_args(spec, args)
    modes = required_modes(spec, claim)
    operators = sorted({m.operator for m in modes})
    rows = [[m.operator, m.mode, _requirement_text(m)] for m in modes]
    header = (
        f"{claim.describe()}: {len(modes)} (operator, mode) pairs over {len(operators)} operators"
    )
    text = header + "\n\n" + _table(rows, ["operator", "mode", "required by"])
    data = {
        "claim": claim.to_json(),
        "implied": sorted(claim.names),
        "count": len(modes),
        "operators": len(operators),
        "pairs": [{"operator": m.operator, "mode": m.mode} for m in modes],
    }
    return _emit(args, data, text)


def _profiles(spec: Spec, args: argparse.Namespace) -> int:
    rows = [[p.name, "profile", p.status, p.title, "-"] for p in spec.profiles.values()]
    rows += [
        [e.name, "extension", e.status, e.description, ", ".join(e.profiles)]
        for e in spec.extensions.values()
    ]
    data = {
        "profiles": [vars(p) for p in spec.profiles.values()],
        "extensions": [{**vars(e), "profiles": list(e.profiles)} for e in spec.extensions.values()],
    }
    text = _table(rows, ["name", "kind", "status", "description", "extends"])
    return _emit(args, data, text)


def _modes(spec: Spec, args: argparse.Namespace) -> int:
    text = mode_table.render(spec)
    if args.json:
        data = [
            {
                "operator": m.operator,
                "mode": m.mode,
                "family": m.family or m.mode,
                "types": dict(m.bindings),
                "requirements": [sorted(r) for r in m.requirements],
                "version_added": m.version_added,
            }
            for m in spec.modes()
        ]
        return _emit(args, data, text)
    return _print_or_write(args.output, text, "the mode table", f"{len(spec.modes())} modes")


def _levels(spec: Spec, args: argparse.Namespace) -> int:
    keys = list(next(iter(spec.levels.values())).maxima)
    rows = [[lv.name, *(str(lv.maxima[k]) for k in keys)] for lv in spec.levels.values()]
    data = [{"name": lv.name, **lv.maxima} for lv in spec.levels.values()]
    return _emit(args, data, _table(rows, ["level", *keys]))


def _errata(spec: Spec, args: argparse.Namespace) -> int:
    data = [
        {
            "id": e.id,
            "operators": list(e.operators),
            "xml_says": e.xml_says,
            "we_use": e.we_use,
            "why": e.why,
            "applied": e.id in spec.errata_applied if e.fix else None,
        }
        for e in errata.ERRATA
    ]
    blocks = []
    for e in errata.ERRATA:
        state = (
            ""
            if e.fix is None
            else (" [applied]" if e.id in spec.errata_applied else " [not needed by this tosa.xml]")
        )
        ops = f" ({', '.join(e.operators)})" if e.operators else ""
        ops = " (every operator)" if e.every_operator else ops
        blocks.append(
            f"{e.id}{ops}{state}\n  XML says: {e.xml_says}\n  we use:   {e.we_use}\n"
            f"  why:      {e.why}"
        )
    return _emit(args, data, "\n\n".join(blocks))

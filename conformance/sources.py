"""One operator, one index: every place in the code that defines an operator's behaviour.

An operator's facts live in name-keyed registries spread over four packages (the
evaluator's ``@implements``, the recipes' ``@recipe``, the breakers' ``@breaks`` /
``@graph_breaks``, the describers' ``@describes`` and the precision tables in
``reference/compliance``, the mutant catalogue, the Arm translators' ``@_register``,
the flatbuffer attribute table and ``Op`` enum, the errata) and in every other
:class:`~conformance.operator_table.OperatorTable` and
:func:`~conformance.operator_table.family` of the project (chain and obligation
families, the LiteRT translators, the Arm revision tables, ...).  :func:`operator_sources`
asks each of them at run time, so the answer cannot drift from the code, and gives every
entry as ``file:line`` (``spec op NAME --sources``; docs/operators.md renders it for
every operator).  A module-level table of operator names that is neither kind is a test
failure (tests/core/test_sources.py), so a new table cannot stay out of the index.

A registry may legitimately hold nothing for an operator; :data:`EXEMPTIONS` (and the
reasons derived from the spec model in :func:`exemption`) say why, and
tests/core/test_sources.py checks that every (operator, registry) pair has an entry or
a reason.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import pkgutil
import sys
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from conformance import dtypes, errata, operator_table, revisions
from conformance.spec import OperatorSpec, Spec, active_spec, load_revision, load_spec, spec_in_use
from reference.ops.custom import UNTESTABLE

REPO = Path(__file__).resolve().parents[1]

# Registry key -> the heading it has in listings.
REGISTRIES: dict[str, str] = {
    "semantics": "semantics (reference evaluator, @implements)",
    "recipe": "valid cases (@recipe)",
    "breakers": "invalid cases (@breaks / @graph_breaks)",
    "compliance": "compliance (@describes, precision tables)",
    "mutants": "mutants (conformance.backends.mutants)",
    "arm": "Arm translation (@_register)",
    "attributes": "flatbuffer attributes (vectors/attributes.py, or the revision's tosa.fbs)",
    "schema": "flatbuffer Op enum (the revision's tosa.fbs)",
    "errata": "errata (conformance/errata.py)",
    "tables": "operator tables and families (OperatorTable, family)",
}

# The packages whose modules may hold operator tables.
PACKAGES = ("conformance", "reference", "strategies", "vectors")

_NO_ERROR_IF = (
    "its pseudocode has no ERROR_IF: only the generic breakers (an unsupported type, a "
    "wrong output shape) apply"
)


# Registry -> operator -> why the registry holds nothing for it.  Reasons that follow
# from the spec model (no attributes, no output, the shape group) or from another table
# (the Arm backend's skipped operators) are derived in :func:`exemption`, not listed.
EXEMPTIONS: dict[str, dict[str, str]] = {
    "recipe": {"CUSTOM": UNTESTABLE},
    "breakers": {
        **{
            op: _NO_ERROR_IF
            for op in (
                "ABS",
                "BITWISE_NOT",
                "CEIL",
                "CLZ",
                "COS",
                "ERF",
                "EXP",
                "FLOOR",
                "LOG",
                "LOGICAL_NOT",
                "RECIPROCAL",
                "RSQRT",
                "SIGMOID",
                "SIN",
                "TANH",
            )
        },
        "CUSTOM": UNTESTABLE,
    },
    "compliance": {"CUSTOM": UNTESTABLE},
    "mutants": {"CUSTOM": UNTESTABLE},
}


@dataclass(frozen=True)
class SourceLocation:
    """One definition: ``path:line`` (relative to the repository) and what it is."""

    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}  {self.what}"

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "what": self.what}


def _relative(path: str) -> str:
    p = Path(path).resolve()
    return p.relative_to(REPO).as_posix() if p.is_relative_to(REPO) else p.as_posix()


def _where(obj: Any, what: str | None = None) -> SourceLocation:
    """The definition of a function or class, from ``inspect``."""
    target = inspect.unwrap(obj)
    if isinstance(target, functools.partial):
        target = target.func
    path = inspect.getsourcefile(target)
    if path is None:
        raise LookupError(f"{obj!r} has no source file")
    line = inspect.getsourcelines(target)[1]
    return SourceLocation(_relative(path), line, what or target.__qualname__)


@functools.cache
def _literal_lines(module_name: str, table: str) -> dict[str, int]:
    """The line of every string constant written in module-level ``table = ...``: the
    keys of a dict literal or the members of a set, as the precision tables are."""
    module = sys.modules[module_name]
    path = inspect.getsourcefile(module)
    assert path is not None
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    lines: dict[str, int] = {}
    targets: list[ast.expr]
    for node in tree.body:
        if isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
        elif isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        else:
            continue
        if value is None or not any(isinstance(t, ast.Name) and t.id == table for t in targets):
            continue
        members = value.keys if isinstance(value, ast.Dict) else list(ast.walk(value))
        for key in members:
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                lines.setdefault(key.value, key.lineno)
    if not lines:
        raise LookupError(f"{module_name} has no literal table {table}")
    return lines


def _table_entry(module: ModuleType, table: str, operator: str, what: str) -> SourceLocation:
    line = _literal_lines(module.__name__, table)[operator]
    path = inspect.getsourcefile(module)
    assert path is not None
    return SourceLocation(_relative(path), line, what)


def _schema_path(revision: str) -> Path:
    """The flatbuffer schema packs of ``revision`` are written in (the 2024 draft's is
    the project's own, vectors/schema/tosa.fbs)."""
    if revision == revisions.DRAFT_2024.name:
        return REPO / "vectors" / "schema" / "tosa.fbs"
    return Path(revisions.revision(revision).fbs_path)


def _schema_table(revision: str, table: str) -> SourceLocation:
    """Where a vendored flatbuffer schema defines ``table``."""
    path = revisions.revision(revision).fbs_path
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    line = next(k for k, text in enumerate(lines, 1) if text.startswith(f"table {table} "))
    return SourceLocation(_relative(str(path)), line, f"table {table}")


# -- every operator table of the project ---------------------------------------------------


@functools.cache
def load_project() -> tuple[ModuleType, ...]:
    """Import every module of :data:`PACKAGES` once, so that every operator table has
    been made.  A module whose optional extra is missing (a third-party import fails)
    holds no table this machine can use, and is left out."""
    loaded = []
    for package in PACKAGES:
        root = importlib.import_module(package)
        loaded.append(root)
        for info in pkgutil.walk_packages(root.__path__, f"{package}."):
            try:
                loaded.append(importlib.import_module(info.name))
            except ModuleNotFoundError as exc:
                if (exc.name or "").partition(".")[0] in PACKAGES:
                    raise
    return tuple(loaded)


@dataclass(frozen=True)
class Table:
    """One indexed table under its module-level name (``line``: its assignment)."""

    module: str
    name: str
    line: int
    members: Collection[str]


def table_name(entry: operator_table.Indexed) -> tuple[str, int]:
    """The module-level name an indexed table is assigned to, and that line (the line of
    the call when no module-level assignment covers it)."""
    for node in _assignments(entry.module):
        if node.lineno <= entry.line <= (node.end_lineno or node.lineno):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            return ast.unparse(targets[0]), node.lineno
    return f"table made at line {entry.line}", entry.line


@functools.cache
def _assignments(module_name: str) -> tuple[ast.Assign | ast.AnnAssign, ...]:
    path = inspect.getsourcefile(sys.modules[module_name])
    assert path is not None
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    return tuple(n for n in tree.body if isinstance(n, ast.Assign | ast.AnnAssign))


def tables() -> Iterator[Table]:
    """Every indexed table of the project's packages, once each (a table re-exported
    elsewhere is one table; one a test or a plug-in makes is not the project's)."""
    load_project()
    seen: set[int] = set()
    for entry in operator_table.INDEX:
        if id(entry.table) in seen or entry.module.partition(".")[0] not in PACKAGES:
            continue
        seen.add(id(entry.table))
        name, line = table_name(entry)
        yield Table(entry.module, name, line, entry.table)


def _member_or_table(table: Table, operator: str) -> SourceLocation:
    """Where ``table`` names ``operator``: the function filed under it, the string
    written in the table, else the table's assignment (a table computed from others)."""
    module = sys.modules[table.module]
    value = table.members.get(operator) if isinstance(table.members, dict) else None
    if callable(value) and inspect.isfunction(inspect.unwrap(value)):
        return _where(value, f"{table.name}: {getattr(value, '__qualname__', operator)}")
    path = inspect.getsourcefile(module)
    assert path is not None
    for node in _assignments(table.module):
        if node.lineno == table.line:
            for sub in ast.walk(node):
                if isinstance(sub, ast.Constant) and sub.value == operator:
                    return SourceLocation(_relative(path), sub.lineno, table.name)
    return SourceLocation(_relative(path), table.line, table.name)


def _in_tables(op: OperatorSpec, keep: Callable[[Table], bool]) -> list[SourceLocation]:
    # By file and line: the order modules happen to be imported in is no order to list.
    found = [_member_or_table(t, op.name) for t in tables() if keep(t) and op.name in t.members]
    return sorted(found, key=lambda loc: (loc.path, loc.line))


# -- the registries ----------------------------------------------------------------------


def _semantics(op: OperatorSpec) -> list[SourceLocation]:
    from reference.registry import load_all

    fn = load_all().get(op.name)
    return [_where(fn)] if fn else []


def _recipe(op: OperatorSpec) -> list[SourceLocation]:
    from strategies.recipes import load_all

    fn = load_all().get(op.name)
    return [_where(fn)] if fn else []


def _breakers(op: OperatorSpec) -> list[SourceLocation]:
    from strategies.graph_breakers import GRAPH_BREAKERS
    from strategies.invalid import BREAKERS
    from strategies.recipes import load_all

    load_all()  # the recipe modules register their breakers
    entries: list[tuple[Callable[..., Any], str]] = [
        (b.fn, b.clause) for b in BREAKERS if b.operator == op.name
    ]
    entries += [(b.fn, b.clause) for b in GRAPH_BREAKERS if b.operator == op.name]
    return [_where(fn, f"{fn.__qualname__}: {clause}") for fn, clause in entries]


def _compliance(op: OperatorSpec) -> list[SourceLocation]:
    from reference import expectations
    from reference.compliance import rules

    expectations._load_describers()
    found = []
    if op.name in expectations.DESCRIBERS:
        found.append(_where(expectations.DESCRIBERS[op.name]))
    found += _in_tables(op, _is_compliance)
    if not found and _output_types(op) and not _has_float_output(op):
        # Integer and bool results go through for_operator's exact rule.
        found.append(_where(rules.for_operator, "for_operator: integer results exact"))
    return found


def _mutants(op: OperatorSpec) -> list[SourceLocation]:
    from conformance.backends.mutants import catalogue, defined_at

    found = []
    for name, mutant in sorted(catalogue().items()):
        if op.name in mutant.operators:
            path, line = defined_at(name)  # the @mutant registration
            found.append(SourceLocation(_relative(path), line, f"mutant:{name}"))
    return found


def _arm(op: OperatorSpec) -> list[SourceLocation]:
    from conformance.backends.revision.operators import TRANSLATORS

    fn = TRANSLATORS.get(op.name)
    return [_where(fn)] if fn else []


def _attributes(op: OperatorSpec) -> list[SourceLocation]:
    from vectors import attributes, layout_1_0

    layout = layout_1_0.layout_for(active_spec().revision)
    if layout is not None:  # the revision's own schema says (1.0, 1.1-draft), not our table
        table = layout.attribute_table(op.name)
        return [] if table is None else [_schema_table(layout.REVISION, table.name)]
    if op.name in attributes.OPERATOR_ATTRIBUTES:
        return [_table_entry(attributes, "OPERATOR_ATTRIBUTES", op.name, "OPERATOR_ATTRIBUTES")]
    return []


@functools.cache
def _op_enum_lines(path: Path) -> dict[str, int]:
    """The line of every value of a flatbuffer schema's ``enum Op``, read once."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = lines.index("enum Op:uint32 {")
    found: dict[str, int] = {}
    for k, text in enumerate(lines[start + 1 :], start + 2):
        if text.startswith("}"):
            break
        name = text.strip().rstrip(",").split(" ")[0]
        if name:
            found[name] = k
    return found


def _schema(op: OperatorSpec) -> list[SourceLocation]:
    path = _schema_path(active_spec().revision)
    line = _op_enum_lines(path).get(op.name)
    return [] if line is None else [SourceLocation(_relative(str(path)), line, "enum Op")]


@functools.cache
def _erratum_lines() -> dict[str, int]:
    """The line of every erratum's ``id=`` in conformance/errata.py, from its syntax tree."""
    path = inspect.getsourcefile(errata)
    assert path is not None
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    return {
        node.value.value: node.value.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.keyword)
        and node.arg == "id"
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }


def _errata(op: OperatorSpec) -> list[SourceLocation]:
    path = inspect.getsourcefile(errata)
    assert path is not None
    lines = _erratum_lines()
    return [
        SourceLocation(_relative(path), lines[e.id], f"erratum {e.id}")
        for e in errata.ERRATA
        if op.name in e.operators
    ]


# Tables that a registry above lists in its own words (the registrations themselves).
_OWN_FINDER = {
    ("reference.registry", "OPERATORS"),
    ("strategies.recipes", "RECIPES"),
    ("reference.expectations", "DESCRIBERS"),
    ("conformance.backends.revision.operators", "TRANSLATORS"),
    ("vectors.attributes", "OPERATOR_ATTRIBUTES"),
    ("vectors.layout", "OP_VALUES"),
}


def _is_compliance(table: Table) -> bool:
    return table.module.startswith("reference.compliance")


def _other_table(table: Table) -> bool:
    return not _is_compliance(table) and (table.module, table.name) not in _OWN_FINDER


def _tables(op: OperatorSpec) -> list[SourceLocation]:
    return _in_tables(op, _other_table)


_FINDERS: dict[str, Callable[[OperatorSpec], list[SourceLocation]]] = {
    "semantics": _semantics,
    "recipe": _recipe,
    "breakers": _breakers,
    "compliance": _compliance,
    "mutants": _mutants,
    "arm": _arm,
    "attributes": _attributes,
    "schema": _schema,
    "errata": _errata,
    "tables": _tables,
}


def _output_types(op: OperatorSpec) -> set[str]:
    """The element types the operator's modes bind to its outputs (a shape_t output
    has no element type variable: its type is shape_t)."""
    found = set()
    for mode in op.modes:
        for arg in op.outputs:
            name = mode.bindings.get(arg.element_type, "-")
            if name != "-":
                found.add(name)
            elif arg.type == "shape_t":
                found.add(arg.type)
    return found


def _has_float_output(op: OperatorSpec) -> bool:
    return any(dtypes.dtype(name).is_float for name in _output_types(op))


@functools.cache
def _draft_operators() -> frozenset[str]:
    return frozenset(load_revision(revisions.DRAFT_2024.name).operators)


def exemption(registry: str, op: OperatorSpec) -> str | None:
    """Why ``registry`` holds nothing for ``op`` (None: it should hold something)."""
    if registry == "attributes" and not op.attributes:
        return "tosa.xml declares no attributes"
    if registry == "compliance" and not op.outputs:
        return "no output: nothing to check"
    if registry == "errata":
        return "tosa.xml is taken as it is: no erratum corrects this operator"
    if registry == "tables":
        return "no other table or family names it: the registries above are all it needs"
    if registry == "arm":
        from conformance.backends.revision.revisions import SKIPPED_OPERATORS

        if op.name in SKIPPED_OPERATORS:
            return f"the Arm backend skips it: {SKIPPED_OPERATORS[op.name]}"
        if op.name not in _draft_operators():
            return (
                "Arm's model runs this revision's packs as they are; the translation of "
                "draft packs has nothing to do for an operator the draft does not have"
            )
    return EXEMPTIONS.get(registry, {}).get(op.name)


def operator_sources(name: str, spec: Spec | None = None) -> dict[str, list[SourceLocation]]:
    """Every definition of operator ``name``'s behaviour, by registry (KeyError: no
    such operator)."""
    spec = spec or load_spec()
    op = spec.operator(name)
    with spec_in_use(spec):  # the finders that depend on the revision read it here
        return {registry: find(op) for registry, find in _FINDERS.items()}


def render_sources(name: str, spec: Spec | None = None, *, heading: str = "") -> str:
    """The text of ``spec op NAME --sources``: one block per registry."""
    spec = spec or load_spec()
    op = spec.operator(name)
    lines = [heading] if heading else [f"{op.name} (group {op.group}): where it is defined", ""]
    for registry, found in operator_sources(op.name, spec).items():
        lines.append(REGISTRIES[registry])
        if found:
            lines += [f"  {loc}" for loc in found]
        else:
            lines.append(f"  none: {exemption(registry, op) or 'MISSING (no reason given)'}")
    return "\n".join(lines)


def render_index(spec: Spec | None = None) -> str:
    """docs/operators.md: :func:`render_sources` for every operator, by group."""
    spec = spec or load_spec()
    out = [
        "# Operators: where each one is defined",
        "",
        "Generated by `tosa-conformance spec sources-index -o docs/operators.md` from the",
        "registries at run time (`conformance/sources.py`); tests/core/test_sources.py",
        "fails when this file is not current.  One operator's entry is",
        "`tosa-conformance spec op NAME --sources`.  A registry with no entry gives the",
        "reason (`conformance.sources.EXEMPTIONS`, or derived from tosa.xml).  The generic",
        'breakers in `strategies/invalid.py` (`@breaks("*", ...)`) apply to every',
        "operator and are not repeated below.",
    ]
    for group, ops in spec.groups().items():
        out += ["", f"## {group}"]
        for op in ops:
            out += ["", f"### {op.name}", "", "```"]
            out.append(render_sources(op.name, spec, heading=f"{op.name}").split("\n", 1)[1])
            out.append("```")
    return "\n".join(out) + "\n"

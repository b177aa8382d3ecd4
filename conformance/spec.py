"""The specification model, read from tosa.xml and validated against tosa.xsd.

Everything the project knows about operators, their arguments, type-support modes,
profiles, extensions, levels and enumerations comes from here; corrections to the
XML are applied from :mod:`conformance.errata` and nowhere else.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from conformance import errata, revisions, type_sets
from conformance.dtypes import DType, dtype
from conformance.errors import ConformanceError
from conformance.expressions import (
    Environment,
    Expr,
    ExpressionError,
    ShapeExpr,
    evaluate,
    parse_expr,
    parse_shape,
)
from conformance.user_files import UserFileError, read_user_file


class SpecError(ConformanceError):
    """tosa.xml could not be read: malformed, schema-invalid or semantically wrong."""

    def __init__(self, path: str, line: int | None, message: str) -> None:
        self.path = path
        self.line = line
        self.message = message
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {message}")


# ---------------------------------------------------------------------------
# Model


@dataclass(frozen=True)
class LevelLimit:
    value: Expr
    text: str
    limit: str  # level maximum name, e.g. "MAX_KERNEL"


@dataclass(frozen=True)
class Argument:
    name: str
    category: str  # "input" | "output" | "attribute"
    type: str  # "tensor_t", "tensor_list_t", "shape_t", "shape_list_t", "tosa_graph_t", "String"
    element_type: str  # type variable ("in_t"), concrete type ("i32_t"), enum ("acc_type_t"), "-"
    shape: ShapeExpr
    rank_min: Expr | None
    rank_max: Expr | None
    level_limits: tuple[LevelLimit, ...]
    optional: bool
    description: str
    element_names: tuple[str, ...]  # names of array elements, from the description's [a, b]
    # TOSA 1.0 on: the profiles for which this argument must be a compile-time constant
    # (each an alternative set of names, as for a mode), and those that remove that rule
    # (EXT-DYNAMIC). Empty in revisions without CTC rules.
    ctc: tuple[frozenset[str], ...] = ()
    ctc_remove: tuple[frozenset[str], ...] = ()
    # TOSA 1.1's block-scaled tensor lists (tensor-element-scale-type): the type variable
    # of the list's optional second member, the scales of the first ("" where the XML
    # gives none).
    scale_element_type: str = ""

    @property
    def is_tensor(self) -> bool:
        return self.type == "tensor_t"

    @property
    def is_list(self) -> bool:
        return self.type in ("tensor_list_t", "shape_list_t")

    @property
    def is_scaled_list(self) -> bool:
        """A list of values and, optionally, their block scales (``(value_shape,
        scale_shape)``): RESHAPE_BLOCK_SCALED's and ROW_GATHER_BLOCK_SCALED's."""
        return self.type == "tensor_list_t" and self.scale_element_type not in ("", "-")

    def is_ctc(self, names: frozenset[str] | set[str]) -> bool:
        """Whether a claim of these names requires a compile-time-constant value here."""
        if any(req <= names for req in self.ctc_remove):
            return False
        return any(req <= names for req in self.ctc)

    def rank_range(self, level: Level) -> tuple[int, int] | None:
        """The rank bounds at ``level``, or None when the XML gives none."""
        if self.rank_min is None or self.rank_max is None:
            return None
        env = level.environment()
        return evaluate(self.rank_min, env), evaluate(self.rank_max, env)


@dataclass(frozen=True)
class TypeSupport:
    """One ``<typesupport>``: a mode of an operator."""

    operator: str
    mode: str
    bindings: Mapping[str, str]  # type variable -> concrete type name (TABLE_SIZE -> "513")
    # Each entry is one alternative set of profile/extension names that must all be
    # claimed (an ``op_profile`` with its optional ``and_name``).
    requirements: tuple[frozenset[str], ...]
    version_added: str
    # The XML's mode name when one <typesupport> stands for several type combinations
    # (TOSA 1.1's type sets, conformance.type_sets) or shares its name with another.
    family: str = ""

    def dtype(self, var: str) -> DType:
        return dtype(self.bindings[var])

    def required_by(self, names: frozenset[str] | set[str]) -> bool:
        """Whether a claim of these profile/extension names requires this mode."""
        return any(req <= names for req in self.requirements)

    @property
    def key(self) -> tuple[str, str]:
        return (self.operator, self.mode)


@dataclass(frozen=True)
class OperatorSpec:
    name: str
    group: str
    arguments: tuple[Argument, ...]
    types: tuple[str, ...]  # declared type variables
    modes: tuple[TypeSupport, ...]
    errata: tuple[str, ...] = ()  # ids of errata applied to this operator
    line: int | None = None

    def _by_category(self, category: str) -> list[Argument]:
        return [a for a in self.arguments if a.category == category]

    @property
    def inputs(self) -> list[Argument]:
        return self._by_category("input")

    @property
    def outputs(self) -> list[Argument]:
        return self._by_category("output")

    @property
    def attributes(self) -> list[Argument]:
        return self._by_category("attribute")

    def argument(self, name: str) -> Argument:
        for a in self.arguments:
            if a.name == name:
                return a
        raise KeyError(f"{self.name} has no argument {name!r}")

    def mode(self, name: str) -> TypeSupport:
        for m in self.modes:
            if errata.same_mode(m.mode, name):
                return m
        known = ", ".join(repr(m.mode) for m in self.modes)
        raise KeyError(f"{self.name} has no mode {name!r}; its modes: {known}")

    def level_limits(self) -> list[tuple[Argument, LevelLimit]]:
        return [(a, lim) for a in self.arguments for lim in a.level_limits]


@dataclass(frozen=True)
class Profile:
    name: str
    title: str
    status: str
    description: str


@dataclass(frozen=True)
class Extension:
    name: str
    status: str
    description: str
    profiles: tuple[str, ...]  # profiles this extension extends


LEVEL_ATTRIBUTES = (
    "max_rank",
    "max_kernel",
    "max_stride",
    "max_scale",
    "max_log2_size",
    "max_nesting",
    "max_tensor_list_size",
)
# Level maxima only later revisions declare (TOSA 1.1: MAX_SHAPE_LEN, the length of a
# shape_t value); a level has them where its XML gives them.
OPTIONAL_LEVEL_ATTRIBUTES = ("max_shape_len",)


@dataclass(frozen=True)
class Level:
    name: str
    description: str
    maxima: Mapping[str, int]  # "MAX_RANK" -> 6, ...

    def __getitem__(self, key: str) -> int:
        return self.maxima[key]

    def environment(self) -> Environment:
        return Environment(values=self.maxima)


@dataclass(frozen=True)
class EnumValue:
    name: str
    value: int
    description: str
    # TOSA 1.0 on: the extension a value needs (rounding_mode_t's INEXACT_ROUND needs
    # EXT-INEXACTROUND); "" where any claim may use it.
    extension: str = ""


@dataclass(frozen=True)
class Enumeration:
    name: str
    description: str
    values: tuple[EnumValue, ...]

    def names(self) -> list[str]:
        return [v.name for v in self.values]

    def value_of(self, name: str) -> int:
        """The number value ``name`` stands for (KeyError: the enumeration has none)."""
        for v in self.values:
            if v.name == name:
                return v.value
        raise KeyError(f"{self.name} has no value {name!r}")

    def name_of(self, value: int) -> str:
        """The name of the value that stands for ``value`` (KeyError: none does)."""
        for v in self.values:
            if v.value == value:
                return v.name
        raise KeyError(f"{self.name} has no value {value}")


@dataclass(frozen=True)
class Spec:
    path: str
    sha256: str
    version: tuple[int, int, int]
    draft: bool
    profiles: Mapping[str, Profile]
    extensions: Mapping[str, Extension]
    levels: Mapping[str, Level]
    operators: Mapping[str, OperatorSpec]
    enums: Mapping[str, Enumeration]
    errata_applied: tuple[str, ...] = field(default=())
    revision: str = ""  # conformance.revisions name: "1.0", "2024-04-draft", "custom-..."

    @property
    def version_string(self) -> str:
        v = ".".join(str(x) for x in self.version)
        return f"{v}-draft" if self.draft else v

    def operator(self, name: str) -> OperatorSpec:
        try:
            return self.operators[name.upper()]
        except KeyError:
            raise KeyError(f"unknown operator {name!r}") from None

    def level(self, name: str) -> Level:
        for lv in self.levels.values():
            if lv.name.casefold() == name.casefold():
                return lv
        known = ", ".join(self.levels)
        raise KeyError(f"unknown level {name!r}; known levels: {known}") from None

    def modes(self) -> list[TypeSupport]:
        return [m for op in self.operators.values() for m in op.modes]

    def groups(self) -> dict[str, list[OperatorSpec]]:
        out: dict[str, list[OperatorSpec]] = {}
        for op in self.operators.values():
            out.setdefault(op.group, []).append(op)
        return out


# ---------------------------------------------------------------------------
# Loading


def default_spec_path() -> Path:
    """The tosa.xml of the revision this process uses (see :func:`use_spec`)."""
    return Path(active_spec().path)


@functools.cache
def _schema(path: str) -> etree.XMLSchema:
    # Read as the tosa.xml is (a tosa.xsd beside a user's tosa.xml is theirs too);
    # base_url keeps its includes relative to it, as etree.parse(path) would.
    data = _read(Path(path), "an XML schema")
    return etree.XMLSchema(etree.fromstring(data, base_url=path))


def _read(path: Path, what: str) -> bytes:
    """A vendored file as it is; any other through read_user_file: not blocking on a
    FIFO, not reading a device, within the size limit (whose knob the vendored files,
    ours, do not depend on)."""
    vendored = {p for r in revisions.REVISIONS.values() for p in (r.xml_path, r.xsd_path)}
    if path in vendored:
        return path.read_bytes()
    return read_user_file(path, what)


# The spec this process reads: chosen once by the CLI (--tosa / --spec), inherited by
# forked workers, and handed by path to spawned ones. Everything that calls
# load_spec() without a path reads this one.
_active: Spec | None = None


def use_spec(spec: Spec) -> Spec:
    """Make ``spec`` the one this process reads; returns it."""
    global _active
    _active = spec
    return spec


@contextlib.contextmanager
def spec_in_use(spec: Spec) -> Iterator[Spec]:
    """``spec`` is the process's spec inside the block, and the earlier one after it (a
    command run in-process, as tests and the pytest plugin do, leaves nothing behind)."""
    global _active
    before = _active
    _active = spec
    try:
        yield spec
    finally:
        _active = before


def active_spec() -> Spec:
    if _active is None:
        return use_spec(load_revision(revisions.default_revision()))
    return _active


def vendored_spec(revision: str, sha256: str) -> Spec | None:
    """The vendored spec a pack names by revision, or whose tosa.xml it names by sha256
    (packs written before revisions were recorded); None for any other tosa.xml."""
    if revision in revisions.REVISIONS:
        rev = revisions.REVISIONS[revision]
        if rev.commit and sha256 and sha256 != rev.xml_sha256:
            # A draft moves: a pack of another commit is not judged by this one's rules.
            raise revisions.RevisionError(
                f"the pack is of TOSA {revision} at another commit (its tosa.xml sha256 "
                f"{sha256[:12]}...); this installation vendors commit {rev.commit[:7]}: "
                "regenerate the pack with it, or use the tosa-conformance that made it"
            )
        return load_revision(revision)
    for rev in revisions.REVISIONS.values():
        if rev.xml_sha256 == sha256:
            return load_revision(rev.name)
    return None


@functools.cache
def load_revision(name: str) -> Spec:
    """The vendored spec of a revision ("1.0", "2024-04-draft")."""
    rev = revisions.revision(name)
    return _load(rev.xml_path, rev.xsd_path)


_BRACKET_LIST = re.compile(r"\[\s*([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)+)\s*\]")


def _element_names(description: str) -> tuple[str, ...]:
    """Array-element names from a description such as ``[pad_top, pad_bottom, ...]``."""
    m = _BRACKET_LIST.search(description)
    if not m:
        return ()
    return tuple(p.strip() for p in m.group(1).split(","))


def _text(el: etree._Element | None) -> str:
    return " ".join((el.text or "").split()) if el is not None else ""


def _parse_rank(value: str, where: tuple[str, int | None]) -> Expr:
    try:
        return parse_expr(value)
    except ExpressionError as exc:
        raise SpecError(where[0], where[1], f"bad rank bound {value!r}: {exc}") from None


# Argument types that are containers; any other ``type`` of an attribute names the type
# of its single value (1.0 writes ``type="bool_t" tensor-element-type="-"`` where the
# 2024 draft wrote ``type="tensor_t" tensor-element-type="bool_t"``).
_CONTAINER_TYPES = frozenset(
    ("tensor_t", "tensor_list_t", "shape_t", "shape_list_t", "tosa_graph_t", "String")
)


def _value_types(el: etree._Element) -> tuple[str, str]:
    """(type, element type) of an argument, in the draft's one representation: a scalar
    attribute is a rank-0 ``tensor_t`` of its value type, in either revision."""
    kind, element = el.get("type"), el.get("tensor-element-type")
    if el.get("category") == "attribute" and kind not in _CONTAINER_TYPES and element == "-":
        return "tensor_t", kind
    return kind, element


def _profiles_of(el: etree._Element | None) -> tuple[frozenset[str], ...]:
    if el is None:
        return ()
    return tuple(_requirement(p) for p in el.findall("op_profile"))


def _requirement(p: etree._Element) -> frozenset[str]:
    """One ``<op_profile>``: its name and every ``and_name`` (1.1 adds ``and_name2``)."""
    return frozenset(n for n in (p.get("name"), p.get("and_name"), p.get("and_name2")) if n)


def _parse_argument(el: etree._Element, path: str) -> Argument:
    line = el.sourceline
    name = el.get("name")
    shape_text = el.get("shape")
    try:
        shape = parse_shape(shape_text)
    except ExpressionError as exc:
        raise SpecError(path, line, f"argument {name!r}: {exc}") from None
    limits: list[LevelLimit] = []
    for lim in el.findall("levellimit"):
        text = lim.get("value")
        try:
            limits.append(LevelLimit(parse_expr(text), text, lim.get("limit")))
        except ExpressionError as exc:
            raise SpecError(path, lim.sourceline, f"level limit of {name!r}: {exc}") from None
    rank = el.find("rank")
    rmin = _parse_rank(rank.get("min"), (path, line)) if rank is not None else None
    rmax = _parse_rank(rank.get("max"), (path, line)) if rank is not None else None
    description = _text(el.find("description"))
    kind, element = _value_types(el)
    return Argument(
        name=name,
        category=el.get("category"),
        type=kind,
        element_type=element,
        shape=shape,
        rank_min=rmin,
        rank_max=rmax,
        level_limits=tuple(limits),
        optional=el.get("optional") == "true",
        description=description,
        element_names=_element_names(description),
        ctc=_profiles_of(el.find("ctc")),
        ctc_remove=_profiles_of(el.find("ctc_remove")),
        scale_element_type=el.get("tensor-element-scale-type") or "",
    )


def _parse_operator(
    el: etree._Element, group: str, path: str, deduce: Mapping[str, tuple[str, ...]]
) -> OperatorSpec:
    name = _text(el.find("name"))
    args = tuple(_parse_argument(a, path) for a in el.find("arguments").findall("argument"))
    types_el = el.find("types")
    types = tuple(t.get("name") for t in types_el.findall("type")) if types_el is not None else ()
    modes = []
    for ts in el.findall("typesupport"):
        fixed = {k: v for k, v in ts.attrib.items() if k not in ("mode", "version_added")}
        reqs = tuple(_requirement(p) for p in ts.findall("op_profile"))
        try:
            combos = type_sets.combinations(ts, fixed)
        except type_sets.TypeSetError as exc:
            raise SpecError(path, ts.sourceline, f"{name}: {exc}") from None
        for c in combos:
            family = ts.get("mode") if c.name != ts.get("mode") else ""
            modes.append(
                TypeSupport(
                    name,
                    c.name,
                    c.bindings,
                    _deduce(reqs, c.bindings, deduce, (path, ts.sourceline, name)),
                    ts.get("version_added"),
                    family,
                )
            )
    return OperatorSpec(name, group, args, types, tuple(modes), line=el.sourceline)


def _deduce(
    reqs: tuple[frozenset[str], ...],
    bindings: Mapping[str, str],
    table: Mapping[str, tuple[str, ...]],
    where: tuple[str, int | None, str],
) -> tuple[frozenset[str], ...]:
    """Requirements with DEDUCE-EXT replaced by the extensions the types deduce."""
    if not any(type_sets.DEDUCE_EXT in r for r in reqs):
        return reqs
    path, line, op = where
    if not table:
        raise SpecError(
            path,
            line,
            f"{op}: {type_sets.DEDUCE_EXT} needs the revision's extension "
            "data type mapping, which this revision does not have",
        )
    found = type_sets.deduced(bindings, table)
    out = []
    for r in reqs:
        if type_sets.DEDUCE_EXT in r:
            r = (r - {type_sets.DEDUCE_EXT}) | found
            # reading "deduce-ext-nothing" (reference/compliance/readings.py)
            r = r or frozenset({type_sets.DEDUCED_NOTHING_PROFILE})
        out.append(r)
    return tuple(out)


def _check_operator(op: OperatorSpec, path: str) -> None:
    """Semantic checks the schema cannot express; errors name the operator's line."""
    seen: set[str] = set()
    for m in op.modes:
        key = m.mode.casefold()
        if key in seen:
            raise SpecError(path, op.line, f"{op.name}: mode {m.mode!r} is given twice")
        seen.add(key)
        for var, value in m.bindings.items():
            if var == "TABLE_SIZE" or value == "-":
                continue
            try:
                dtype(value)
            except KeyError as exc:
                raise SpecError(path, op.line, f"{op.name} mode {m.mode!r}: {exc}") from None


def load_spec(path: str | Path | None = None) -> Spec:
    """Load and validate a tosa.xml; without a path, the spec this process uses.

    A file is validated with the ``tosa.xsd`` beside it, or, where there is none, with
    the vendored schema of the revision it declares itself to be. Raises
    :class:`SpecError` naming the file and line for unreadable, malformed,
    schema-invalid or inconsistent XML.
    """
    if path is None:
        return active_spec()
    path = Path(path)
    for rev in revisions.REVISIONS.values():
        if _same_file(path, rev.xml_path):
            return load_revision(rev.name)
    return _load(path, None)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _schema_for(root: etree._Element, beside: Path) -> Path:
    """The tosa.xsd beside the file, else the vendored one of its declared family."""
    if beside.is_file():
        return beside
    found = root.find("profiles")
    names = {p.get("name") for p in found.findall("profile")} if found is not None else set()
    v = root.find("version")
    version = (0, 0, 0)
    if v is not None:
        with contextlib.suppress(TypeError, ValueError):
            version = (int(v.get("major")), int(v.get("minor")), int(v.get("patch")))
    fam = revisions.family(revisions.identify("", version, names))
    return (fam or revisions.revision(revisions.default_revision())).xsd_path


def _load(path: Path, xsd: Path | None) -> Spec:
    shown = str(path)
    try:
        data = _read(path, "a tosa.xml")
    except OSError as exc:
        raise SpecError(shown, None, f"cannot read file: {exc.strerror or exc}") from None
    except UserFileError as exc:
        raise SpecError(shown, None, f"cannot read file: {exc.problem}") from None
    parser = etree.XMLParser(
        load_dtd=False, no_network=True, resolve_entities=False, remove_comments=True
    )
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        line = exc.lineno if exc.lineno else None
        msg = str(exc.msg) if exc.msg else "malformed XML"
        msg = re.sub(r",? line \d+, column \d+$", "", msg)
        raise SpecError(shown, line, f"malformed XML: {msg}") from None
    xsd = xsd or _schema_for(root, path.parent / "tosa.xsd")
    beside = xsd.parent == path.parent
    label = "tosa.xsd" if beside else f"the {xsd.parent.name} revision's tosa.xsd (none beside it)"
    try:
        schema = _schema(str(xsd))
    except UserFileError as exc:
        raise SpecError(exc.path, None, f"cannot read file: {exc.problem}") from None
    except (OSError, etree.XMLSchemaParseError, etree.XMLSyntaxError) as exc:
        raise SpecError(str(xsd), None, f"not a usable XML schema: {exc}") from None
    if not schema.validate(root):
        err = schema.error_log.last_error
        first = schema.error_log[0] if len(schema.error_log) else err
        raise SpecError(shown, first.line, f"does not match {label}: {first.message}")

    v = root.find("version")
    profiles = {
        p.get("name"): Profile(
            p.get("name"), p.get("profile"), p.get("status"), p.get("description")
        )
        for p in root.find("profiles").findall("profile")
    }
    extensions = {}
    for e in root.find("profile_extensions").findall("profile_extension"):
        supported = tuple(_text(s) for s in e.findall("profile_supported"))
        for s in supported:
            if s not in profiles:
                raise SpecError(shown, e.sourceline, f"{e.get('name')} extends unknown {s!r}")
        extensions[e.get("name")] = Extension(
            e.get("name"), e.get("status"), e.get("description"), supported
        )
    levels = {}
    for lv in root.find("levels").findall("level"):
        maxima = {a.upper(): int(lv.get(a)) for a in LEVEL_ATTRIBUTES}
        maxima |= {
            a.upper(): int(lv.get(a)) for a in OPTIONAL_LEVEL_ATTRIBUTES if lv.get(a) is not None
        }
        levels[lv.get("name")] = Level(lv.get("name"), _text(lv), maxima)

    sha = hashlib.sha256(data).hexdigest()
    version = (int(v.get("major")), int(v.get("minor")), int(v.get("patch")))
    revision = revisions.identify(sha, version, set(profiles))
    fam = revisions.family(revision)
    deduce = fam.deduced_extensions if fam else {}

    operators: dict[str, OperatorSpec] = {}
    fired: list[str] = []
    for group in root.find("operators").findall("operatorgroup"):
        for op_el in group.findall("operator"):
            op = _parse_operator(op_el, group.get("name"), shown, deduce)
            if op.name in operators:
                raise SpecError(shown, op.line, f"operator {op.name} is defined twice")
            op, applied = errata.apply_operator_errata(op)
            if applied:
                op = OperatorSpec(
                    op.name, op.group, op.arguments, op.types, op.modes, tuple(applied), op.line
                )
                fired.extend(a for a in applied if a not in fired)
            _check_operator(op, shown)
            operators[op.name] = op
    names = set(profiles) | set(extensions)
    for op in operators.values():
        for m in op.modes:
            for req in m.requirements:
                if not req <= names:
                    bad = ", ".join(sorted(req - names))
                    raise SpecError(shown, op.line, f"{op.name} {m.mode!r} requires unknown {bad}")

    enums = {}
    for e in root.findall("enum"):
        vals = tuple(
            EnumValue(
                x.get("name"),
                int(x.get("value")),
                x.get("description") or "",
                x.get("extension") or "",
            )
            for x in e.findall("enumval")
        )
        enums[e.get("name")] = Enumeration(e.get("name"), e.get("description"), vals)

    return Spec(
        path=shown,
        sha256=sha,
        version=version,
        draft=v.get("draft") == "true",
        profiles=profiles,
        extensions=extensions,
        levels=levels,
        operators=operators,
        enums=enums,
        errata_applied=tuple(fired),
        revision=revision,
    )

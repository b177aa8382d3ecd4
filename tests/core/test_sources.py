"""The operator index: every (operator, registry) pair has an entry or a reason, the
entries point at real definitions, and docs/operators.md is current."""

import importlib
import json
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

import pytest

from conformance import operator_table, revisions, sources
from conformance.cli.main import main
from conformance.spec import load_revision, load_spec, spec_in_use

SPEC = load_spec()
DOC = sources.REPO / "docs" / "operators.md"
ALL = {name: sources.operator_sources(name, SPEC) for name in SPEC.operators}


@pytest.mark.parametrize("name", sorted(SPEC.operators))
def test_every_registry_has_an_entry_or_a_reason(name: str) -> None:
    op = SPEC.operator(name)
    for registry, found in ALL[name].items():
        reason = sources.exemption(registry, op)
        if found:
            # An exemption for a registry that has an entry is stale: delete it.
            assert name not in sources.EXEMPTIONS.get(registry, {}), (
                f"{name} is exempt from {registry} but has {found[0]}"
            )
        else:
            assert reason, f"{name}: nothing in {registry} and no reason in EXEMPTIONS"


def test_exemptions_name_real_operators_and_registries() -> None:
    for registry, table in sources.EXEMPTIONS.items():
        assert registry in sources.REGISTRIES, registry
        for name, reason in table.items():
            known = {n for r in revisions.REVISIONS for n in load_revision(r).operators}
            assert name in known, f"{registry}: {name} is no revision's operator"
            assert len(reason) > 20, f"{registry} {name}: say why"


def _pseudocode_facts(revision: str) -> dict[str, dict[str, object]]:
    # The fact table scripts/pseudocode_facts.py writes from the spec text (tests never
    # read the text itself: it is not part of the project).
    path = Path(load_revision(revision).path).parent / "pseudocode.json"
    return dict(json.loads(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("revision", revisions.REVISIONS)
def test_breaker_exemptions_match_the_pseudocode(revision: str) -> None:
    # "no ERROR_IF" must be what the pseudocode says, and an operator whose pseudocode
    # has one must have a breaker.
    spec = load_revision(revision)
    facts = _pseudocode_facts(revision)
    assert sorted(facts) == sorted(spec.operators), "rerun scripts/pseudocode_facts.py"
    with spec_in_use(spec):
        for name in spec.operators:
            has_error_if = facts[name]["error_if"]
            exempt = sources.EXEMPTIONS["breakers"].get(name, "")
            if exempt.startswith("its pseudocode has no ERROR_IF"):
                assert not has_error_if, f"{revision}: {name}'s pseudocode has an ERROR_IF"
            if has_error_if:
                found = sources.operator_sources(name, spec)["breakers"]
                assert found, f"{revision}: {name} has ERROR_IFs and no breaker"


def test_the_pseudocode_facts_script_reads_the_spec_text(tmp_path: Path) -> None:
    sys.path.insert(0, str(sources.REPO / "scripts"))
    try:
        import pseudocode_facts
    finally:
        sys.path.remove(str(sources.REPO / "scripts"))
    ops = tmp_path / "pseudocode" / "operators"
    ops.mkdir(parents=True)
    (tmp_path / "chapters").mkdir()
    (ops / "ABS.tosac").write_text("output = abs(input1);\n")
    (ops / "POOL.tosac").write_text("ERROR_IF(kernel < 1);\nREQUIRE(x);\n")
    (tmp_path / "chapters" / "t.adoc").write_text("Compared to POOL, POOL_ADAPTIVE has inputs\n")
    table = pseudocode_facts.facts(["ABS", "POOL_ADAPTIVE"], tmp_path)
    assert table == {
        "ABS": {"file": "ABS.tosac", "error_if": False, "require": False},
        "POOL_ADAPTIVE": {"file": "POOL.tosac", "error_if": True, "require": True},
    }
    with pytest.raises(SystemExit, match="no pseudocode for MISSING"):
        pseudocode_facts.facts(["MISSING"], tmp_path)


def _definition_line(loc: sources.SourceLocation) -> str:
    path = sources.REPO / loc.path
    assert path.is_file(), f"{loc}: no such file"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert 1 <= loc.line <= len(lines), f"{loc}: past the end of the file"
    return lines[loc.line - 1].strip()


@pytest.mark.parametrize("name", ["CONV2D", "ABS", "RESCALE", "COND_IF", "VARIABLE", "DIM"])
def test_locations_point_at_definitions(name: str) -> None:
    for registry, found in ALL[name].items():
        for loc in found:
            text = _definition_line(loc)
            table = loc.what.partition(":")[0]
            if registry == "mutants":  # the registration: @mutant(, mutant( or a helper
                assert re.match(r"@?(mutant|_ftz)\(", text), f"{registry} {loc}: {text!r}"
            elif registry == "schema":
                assert text.rstrip(",").split(" ")[0] == name, f"{loc}: {text!r}"
            elif registry == "errata":
                assert text == f'id="{loc.what.removeprefix("erratum ")}",', f"{loc}: {text!r}"
            elif re.match(r"(@|def |class |table )", text):
                pass  # a function filed under the operator, or a schema table
            else:  # a table entry: the operator's own string, or the table's assignment
                assert f'"{name}"' in text or re.match(rf"{table}\b", text), f"{loc}: {text!r}"


def test_paths_are_relative_to_the_repository() -> None:
    paths = {loc.path for by_registry in ALL.values() for f in by_registry.values() for loc in f}
    assert paths and all(not p.startswith("/") for p in paths), sorted(paths)[:3]


def test_conv2d_sources_by_hand() -> None:
    found = ALL["CONV2D"]
    assert [loc.what for loc in found["semantics"]] == ["conv2d"]
    assert found["semantics"][0].path == "reference/ops/tensor_conv.py"
    assert found["recipe"][0].path == "strategies/recipes/tensor_conv.py"
    assert "DOT_PRODUCT_OPERATORS" in [loc.what for loc in found["compliance"]]
    assert "mutant:conv-dilation-ignored" in [loc.what for loc in found["mutants"]]
    assert [loc.path for loc in found["arm"]] == ["conformance/backends/revision/operators.py"]
    assert [loc.what for loc in found["attributes"]] == ["OPERATOR_ATTRIBUTES"]
    clauses = " ".join(loc.what for loc in found["breakers"])
    assert "dilation_y < 1 || dilation_x < 1" in clauses


def test_derived_exemptions() -> None:
    assert (
        sources.exemption("attributes", SPEC.operator("ADD")) == "tosa.xml declares no attributes"
    )
    assert sources.exemption("compliance", SPEC.operator("VARIABLE_WRITE")) == (
        "no output: nothing to check"
    )
    assert "Arm backend skips" in (sources.exemption("arm", SPEC.operator("VARIABLE")) or "")
    assert sources.exemption("mutants", SPEC.operator("ADD_SHAPE")) is None  # it has some now
    assert sources.exemption("mutants", SPEC.operator("ADD")) is None  # ADD has mutants
    assert sources.exemption("semantics", SPEC.operator("ADD")) is None


def _operator_names() -> set[str]:
    return {n for r in revisions.REVISIONS for n in load_revision(r).operators}


def unindexed_tables(modules: Iterable[ModuleType], names: set[str]) -> list[str]:
    """Module-level dicts, tuples, lists and sets whose keys or members are mostly
    operator names, and which are no OperatorTable or family: the index misses them.

    A table imported from another module is the same object, and indexed there; but
    Python shares equal constant tuples within a module, so a plain tuple written in
    the module that made a family of the same names is still caught by its name."""
    made_in: dict[int, set[str]] = {}
    for entry in operator_table.INDEX:
        made_in.setdefault(id(entry.table), set()).add(entry.module)
    sources.load_project()
    named = {(e.module, sources.table_name(e)[0]) for e in operator_table.INDEX}
    found: dict[tuple[int, str], str] = {}
    for module in modules:
        for attr, value in vars(module).items():
            if not isinstance(value, dict | tuple | list | set | frozenset) or not value:
                continue
            home = made_in.get(id(value), set())
            if home and (module.__name__ not in home or (module.__name__, attr) in named):
                continue  # indexed where it was made (and imported here, if this is not it)
            strings = all(isinstance(k, str) for k in value)
            if strings and 2 * sum(k in names for k in value) >= len(value):
                found.setdefault((id(value), attr), f"{module.__name__}.{attr}")
    return sorted(found.values())


def test_operator_tables_are_indexed() -> None:
    # Every module-level table of operator names is an OperatorTable or a family, so that
    # `spec op NAME --sources` lists it (conformance/operator_table.py).
    modules = sources.load_project()
    assert len(modules) > 300
    missing = unindexed_tables(modules, _operator_names())
    assert missing == [], f"wrap these in OperatorTable(...) or family(...): {missing}"


def test_a_new_table_without_the_index_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A module a newcomer adds: a plain dict keyed by operators is caught, the same table
    # made an OperatorTable, a family, and a dict of other names are not.
    (tmp_path / "newcomer_tables.py").write_text(
        "from conformance.operator_table import OperatorTable, family\n"
        "PLAIN = {'ERF': 1, 'TANH': 2}\n"
        "PLAIN_FAMILY = ('ERF', 'TANH')\n"
        "TABLE = OperatorTable({'ERF': 1, 'TANH': 2})\n"
        "FAMILY = family(('ERF', 'TANH'))\n"
        "OTHER = {'input': 1, 'weight': 2}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("newcomer_tables")
    try:
        found = unindexed_tables([module], _operator_names())
        assert found == ["newcomer_tables.PLAIN", "newcomer_tables.PLAIN_FAMILY"]
        entry = next(e for e in operator_table.INDEX if e.table is module.TABLE)
        assert sources.table_name(entry) == ("TABLE", 4)
    finally:
        del sys.modules["newcomer_tables"]
        operator_table.INDEX[:] = [e for e in operator_table.INDEX if e.module != "newcomer_tables"]


def test_every_indexed_table_is_listed_where_it_names_the_operator() -> None:
    # What the index walks is what `--sources` prints: each table that names an operator
    # appears in that operator's listing, under its own name.
    by_name: dict[str, set[str]] = {
        name: {loc.what.partition(":")[0] for found in ALL[name].values() for loc in found}
        for name in ALL
    }
    own = sources._OWN_FINDER
    checked = 0
    for table in sources.tables():
        if (table.module, table.name) in own:
            continue
        for name in set(table.members) & set(ALL):
            assert table.name in by_name[name], f"{name}: {table.module}.{table.name} unlisted"
            checked += 1
    assert checked > 500


def test_registering_an_operator_twice_is_refused() -> None:
    table: operator_table.OperatorTable[object] = operator_table.OperatorTable()
    try:
        assert operator_table.INDEX[-1].table is table  # it recorded itself
        table.register("ERF")(len)
        with pytest.raises(RuntimeError, match="operator ERF is registered twice"):
            table.register("TANH", "ERF")(len)
        assert table == {"ERF": len, "TANH": len}  # TANH was filed before ERF was refused
    finally:
        operator_table.INDEX[:] = [e for e in operator_table.INDEX if e.table is not table]


def test_conv2d_tables_by_hand() -> None:
    # The places a newcomer adding a convolution meets besides the registries.
    found = {loc.what for loc in ALL["CONV2D"]["tables"]}
    assert {"DATA_SETS: _conv2d", "CONVS", "ZERO_POINTS", "IMPLEMENTED_CONVOLUTIONS"} <= found
    assert "TRANSLATORS: _conv" in found  # LiteRT's
    assert [loc.what for loc in ALL["CONV2D"]["schema"]] == ["enum Op"]
    assert [loc.what for loc in ALL["TRANSPOSE_CONV2D"]["errata"]][:1] == [
        "erratum undeclared-acc_t"
    ]


def test_unknown_table_is_a_lookup_error() -> None:
    with pytest.raises(LookupError, match="no literal table"):
        sources._literal_lines("reference.compliance.rules", "NO_SUCH_TABLE")


def test_operators_md_is_current() -> None:
    # The index is the default revision's, as `spec sources-index` writes it.
    with spec_in_use(load_revision(revisions.DEFAULT_REVISION)) as default:
        index = sources.render_index(default)
    assert DOC.read_text(encoding="utf-8") == index, (
        "docs/operators.md is stale: run tosa-conformance spec sources-index -o docs/operators.md"
    )


def test_cli_sources(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["spec", "op", "conv2d", "--sources"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("CONV2D (group tensor): where it is defined")
    assert "reference/ops/tensor_conv.py:" in out
    assert main(["spec", "op", "CUSTOM", "--sources", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["sources"]["recipe"] == []
    assert "implementation" in data["exemptions"]["recipe"]


def test_cli_sources_index_writes_the_doc(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "operators.md"
    assert main(["spec", "sources-index", "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == sources.render_index(SPEC)
    assert "wrote" in capsys.readouterr().out


def test_cli_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["spec", "op", "NOPE", "--sources"]) == 2
    err = capsys.readouterr().err.strip()
    assert "unknown operator 'NOPE'" in err and "\n" not in err
    bad = tmp_path / "missing" / "operators.md"
    assert main(["spec", "sources-index", "-o", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert str(bad) in err and "\n" not in err


def test_1_0_attributes_are_found_in_its_own_schema() -> None:
    """Under TOSA 1.0 an operator's attributes are its tosa.fbs table (MAXIMUM's
    nan_mode is in none of the draft's), by hand: MaximumAttribute, line 413."""
    spec = load_revision("1.0")
    found = sources.operator_sources("MAXIMUM", spec)["attributes"]
    assert [str(loc) for loc in found] == [
        "conformance/tosa_spec/1.0/tosa.fbs:413  table MaximumAttribute"
    ]
    assert sources.operator_sources("ABS", spec)["attributes"][0].what == "table AbsAttribute"
    with spec_in_use(spec):
        assert "MISSING" not in sources.render_index(spec)

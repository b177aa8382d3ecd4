"""No import loop among the project's modules (docs/architecture.md, "Dependency
direction"): the module-level imports form a DAG.

A loop works only while the order modules are first imported in happens to suit it, and
it hides which module owns what.  Imports under ``if TYPE_CHECKING:`` are not run, so
they are left out; imports inside functions (for optional extras) are too, as they run
after every module is loaded.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("conformance", "reference", "strategies", "vectors")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _module_level(tree: ast.Module) -> list[ast.stmt]:
    """The statements run at import: the body, and what try/if blocks at its top hold."""
    out: list[ast.stmt] = []
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If):
            if "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            todo += node.body + node.orelse
        elif isinstance(node, ast.Try):
            todo += node.body + node.orelse + node.finalbody
            for handler in node.handlers:
                todo += handler.body
        else:
            out.append(node)
    return out


def _absolute(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from ... import`` names, relative imports resolved in ``package``."""
    base = node.module or ""
    if not node.level:
        return base
    up = package
    for _ in range(node.level - 1):
        up = up.rpartition(".")[0]
    return f"{up}.{base}" if base else up


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps: set[str] = set()
        for node in _module_level(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                deps |= {m for a in node.names if (m := owner(a.name))}
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(node, package)
                for a in node.names:  # `from pkg import submodule` imports the submodule
                    sub = f"{base}.{a.name}"
                    target = sub if sub in modules else owner(base)
                    if target:
                        deps.add(target)
        graph[name] = deps - {name}
    return graph


def loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            nxt = next((w for w in edges if w not in index or w in on_stack), None)
            if nxt is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif nxt in index:
                low[node] = min(low[node], index[nxt])
            else:
                index[nxt] = low[nxt] = len(index)
                stack.append(nxt)
                on_stack.add(nxt)
                work.append((nxt, iter(sorted(graph.get(nxt, ())))))
    return found


def test_the_project_has_no_import_loop() -> None:
    modules = _modules()
    assert len(modules) > 300
    graph = import_graph(modules)
    # The CLI is in the scan with its imports at module level: the dispatcher's edge to
    # every command is seen, so a command that imported the dispatcher back is a loop.
    commands = {m for m in modules if m.startswith("conformance.cli.") and m.endswith("_cmd")}
    assert len(commands) >= 10
    assert commands <= graph["conformance.cli.main"]
    assert "conformance.cli.options" in graph["conformance.cli.run_cmd"]
    assert loops(graph) == []


def _imported(path: Path, package: str) -> set[str]:
    """Every module name ``path`` imports, at any depth (inside functions too), and for
    ``from X import y`` both X and X.y (y may be a submodule)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            names.add(base)
            names |= {f"{base}.{a.name}" for a in node.names}
    return names


def test_no_command_module_imports_the_dispatcher() -> None:
    # What the commands share is in conformance/cli/options.py; main only dispatches.
    # Unlike the loop test, this one sees imports inside functions too.
    modules = _modules()
    scanned = {
        name: path
        for name, path in modules.items()
        if name.startswith("conformance.cli.") and name != "conformance.cli.main"
    }
    assert len(scanned) >= 12
    offenders = []
    for name, path in sorted(scanned.items()):
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        if "conformance.cli.main" in _imported(path, package):
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def test_a_loop_is_found(tmp_path: Path) -> None:
    # a -> b -> c -> a through the three import forms, TYPE_CHECKING and a function aside
    (tmp_path / "pkg").mkdir()
    files = {
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg import b\n",
        "pkg/b.py": "import pkg.c\nif TYPE_CHECKING:\n    import pkg.d\n",
        "pkg/c.py": "from . import a\ndef f():\n    import pkg.d\n",
        "pkg/d.py": "import pkg.b\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    modules = {
        ".".join(p.relative_to(tmp_path).with_suffix("").parts).removesuffix(".__init__"): p
        for p in (tmp_path / "pkg").rglob("*.py")
    }
    graph = import_graph(modules)
    assert graph["pkg.b"] == {"pkg.c"} and graph["pkg.c"] == {"pkg.a"}
    assert loops(graph) == [["pkg.a", "pkg.b", "pkg.c"]]

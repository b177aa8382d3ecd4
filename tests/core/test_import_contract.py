"""The core of ``conformance`` depends on nothing else in the project.

DESIGN.md's dependency direction: conformance core <- reference, vectors <- strategies
<- conformance app.  The core modules below may import each other and third-party
packages, never ``reference``, ``strategies`` or ``vectors`` (a module-level import, or
one inside a function, which would still tie them together).
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = (
    "spec",
    "dtypes",
    "block_tensor",
    "graph",
    "builder",
    "expressions",
    "errata",
    "claims",
    "compliance_descriptor",
    "rounding",
)
OUTER = ("reference", "strategies", "vectors")


def _imported(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("module", CORE)
def test_core_module_imports_no_outer_package(module: str) -> None:
    found = _imported(ROOT / "conformance" / f"{module}.py")
    bad = sorted(n for n in found if n.split(".")[0] in OUTER)
    assert not bad, f"conformance/{module}.py imports {bad}"


def test_importing_the_core_loads_no_outer_package() -> None:
    # What the interpreter really loads, transitive imports included.
    code = (
        "import sys\n"
        + "".join(f"import conformance.{m}\n" for m in CORE)
        + f"print(sorted(n for n in sys.modules if n.split('.')[0] in {OUTER!r}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]", out.stdout


def test_the_check_sees_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from reference.engine import evaluate\n", encoding="utf-8")
    assert "reference.engine" in _imported(bad)

"""The revision translation has a neutral home (``conformance/backends/revision/``):
no module outside the Arm backend's own package imports ``conformance.backends.arm``,
so IREE, Vulkan and any later MLIR or ExecuTorch backend depend on the translation,
not on Arm's model.  The registry names the Arm backend by a string only."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARM = "conformance.backends.arm"


def arm_imports(path: Path, root: Path = ROOT) -> list[str]:
    """Every import of the Arm backend's package in ``path``, at any depth."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        found += [f"{path.relative_to(root)}:{node.lineno} {n}" for n in names if _is_arm(n)]
    return sorted(found)


def _is_arm(name: str) -> bool:
    return name == ARM or name.startswith(f"{ARM}.")


def test_only_the_arm_package_imports_the_arm_backend() -> None:
    outside = [
        p for p in (ROOT / "conformance").rglob("*.py") if "conformance/backends/arm/" not in str(p)
    ]
    assert len(outside) > 100
    found = [hit for p in outside for hit in arm_imports(p)]
    assert found == [], found


def test_the_translation_modules_live_in_the_revision_package() -> None:
    revision = ROOT / "conformance" / "backends" / "revision"
    for module in ("translate", "operators", "emitter", "revisions", "conflicts", "elements"):
        assert (revision / f"{module}.py").is_file(), module
        assert not (ROOT / "conformance" / "backends" / "arm" / f"{module}.py").exists()


def test_an_arm_import_is_found(tmp_path: Path) -> None:
    module = tmp_path / "backend.py"
    module.write_text(
        "from conformance.backends.revision.translate import translate\n"
        "def f():\n    from conformance.backends.arm.run import run_cli\n"
        "from conformance.backends import arm\n"
    )
    assert arm_imports(module, tmp_path) == [
        "backend.py:3 conformance.backends.arm.run",
        "backend.py:3 conformance.backends.arm.run.run_cli",
        "backend.py:4 conformance.backends.arm",
    ]

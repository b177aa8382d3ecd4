"""The worked partial backend of docs/backends.md, taken from the page as it is: an
ADD-only program and its manifest certify PASS (subset) with no failure."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "backends.md"


def _block(name: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    m = re.search(rf"<!-- partial-backend:{re.escape(name)} -->\n```\w*\n(.*?)```", text, re.S)
    assert m, f"docs/backends.md has no {name} block"
    return m.group(1)


def test_the_documented_add_only_program_certifies_its_subset(tmp_path: Path) -> None:
    (tmp_path / "add_only.py").write_text(_block("add_only.py"))
    (tmp_path / "add-only.toml").write_text(_block("add-only.toml"))
    env = {k: v for k, v in os.environ.items() if k != "TOSA_CONFORMANCE_REVISION"}
    root = str(DOC.parents[1])  # the program imports vectors.flatbuffer
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    backend = f"command:{sys.executable} add_only.py"
    argv = [sys.executable, "-m", "conformance.cli.main", "certify", "--backend", backend]
    argv += ["--profile", "PRO-FP", "--capabilities", "add-only.toml", "--generate"]
    argv += ["--examples", "2", "--jobs", "2", "--quiet", "-o", "cert"]
    proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first.startswith("PASS (subset: 1 of ")
    assert "1 of 150 required pairs met, 0 failed, 0 not met" in first
    results = (tmp_path / "cert" / "results.jsonl").read_text()
    assert '"verdict": "failed"' not in results

"""A small pack for the fault-injection suite, generated once per session."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # hostile.py, the builders


@pytest.fixture(scope="session")
def small_pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from conformance.cli.main import main

    out = tmp_path_factory.mktemp("reliability") / "pack"
    argv = ["generate", "--profile", "BI", "--ops", "ADD", "--examples", "1"]
    argv += ["--no-targeted", "--no-levels", "--quiet", "--jobs", "1", "-o", str(out)]
    assert main(argv) == 0
    return out

"""Fixtures of the pack-format tests: a pack written once, and a fresh copy of it per test."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pack_cases import write_pack


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_pack(tmp_path_factory.mktemp("pristine") / "pack")


@pytest.fixture
def pack(pristine: Path, tmp_path: Path) -> Path:
    """A fresh copy of the written pack, for a test to damage."""
    return Path(shutil.copytree(pristine, tmp_path / "pack"))

"""Tests for ``tosa-conformance verify-pack`` (conformance/cli/pack_cmd.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from conformance import dtypes as D
from conformance.builder import single_operator_graph
from conformance.claims import make_claim
from conformance.cli.main import main
from conformance.spec import load_spec
from reference.compliance import rules
from vectors.pack import (
    Check,
    PackMeta,
    Provenance,
    Requirements,
    Vector,
    write_pack_index,
    write_vector,
)

SPEC = load_spec()


def add_vector(name: str) -> Vector:
    g = single_operator_graph(
        "ADD", [("a", [2, 3], "i32"), ("b", [2, 3], "i32")], [("c", [2, 3], "i32")]
    )
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    return Vector(
        name=name,
        operator="ADD",
        mode="signed 32",
        kind="valid",
        graph=g,
        inputs={"a": a, "b": a},
        expected={"c": a + a},
        checks={"c": Check(rules.exact(D.I32, "ADD: exact"))},
        requirements=Requirements.for_mode(SPEC, SPEC.operator("ADD").mode("signed 32"), "8K"),
        provenance=Provenance("hand", 1, 0, f"tosa-conformance generate --only {name}"),
    )


@pytest.fixture
def pack(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "pack"
    root.mkdir()
    entries = [write_vector(root, add_vector(n)) for n in ("ADD_0", "ADD_1")]
    meta = PackMeta.create(SPEC, make_claim(SPEC, ["BI"]).to_json(), 1)
    return root, write_pack_index(root, meta, entries)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["verify-pack", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_intact_pack(pack: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    root, sha = pack
    assert run(capsys, str(root)) == (0, f"pack OK: 2 vectors, sha256 {sha}\n", "")


def test_intact_zipped_pack(
    pack: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, sha = pack
    archive = tmp_path / "pack.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for path in sorted(root.rglob("*")):
            z.write(path, path.relative_to(root.parent).as_posix())
    code, out, _ = run(capsys, str(archive))
    assert (code, out) == (0, f"pack OK: 2 vectors, sha256 {sha}\n")


def test_intact_pack_json(pack: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    root, sha = pack
    code, out, _ = run(capsys, str(root), "--json")
    assert code == 0
    assert json.loads(out) == {
        "pack": str(root),
        "ok": True,
        "vectors": 2,
        "pack_sha256": sha,
        "problems": [],
    }


def test_every_problem_one_per_line(
    pack: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    root, _ = pack
    (root / "ADD_0" / "input-1.npy").unlink()
    data = bytearray((root / "ADD_1" / "graph.tosa").read_bytes())
    data[-1] ^= 0xFF
    (root / "ADD_1" / "graph.tosa").write_bytes(bytes(data))
    (root / "ADD_1" / "result-0.npy").write_bytes(b"")
    code, out, err = run(capsys, str(root))
    assert code == 1
    lines = out.splitlines()
    assert "ADD_0/input-1.npy: missing (pack.json lists it)" in lines
    assert any(line.startswith("ADD_1/graph.tosa: sha256 mismatch") for line in lines)
    assert "ADD_1/result-0.npy: stray file (pack.json does not list it)" in lines
    assert err == f"{root}: {len(lines)} problems\n"


def test_problems_as_json(pack: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    root, sha = pack
    (root / "ADD_1" / "desc.json").write_text("{}")
    code, out, _ = run(capsys, str(root), "--json")
    data = json.loads(out)
    assert code == 1 and data["ok"] is False and data["vectors"] == 2
    assert data["pack_sha256"] == sha
    assert data["problems"][0].startswith("ADD_1/desc.json: sha256 mismatch")


def test_unreadable_index_is_a_problem_not_a_usage_error(
    pack: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    root, _ = pack
    (root / "pack.json").write_text("[1, 2")
    code, out, _ = run(capsys, str(root))
    assert code == 1
    assert out.startswith("pack.json: not valid JSON")


@pytest.mark.parametrize("what", ["missing", "empty-folder", "text-file"])
def test_not_a_pack(tmp_path: Path, capsys: pytest.CaptureFixture[str], what: str) -> None:
    path = tmp_path / "thing"
    if what == "empty-folder":
        path.mkdir()
    elif what == "text-file":
        path.write_text("not a pack")
    code, out, err = run(capsys, str(path))
    assert code == 2 and out == ""
    assert err.startswith(f"tosa-conformance: error: {path}: ")
    assert err.count("\n") == 1


def test_console_exit_codes(pack: tuple[Path, str], tmp_path: Path) -> None:
    root, sha = pack
    cmd = [sys.executable, "-m", "conformance.cli.main", "verify-pack"]
    ok = subprocess.run([*cmd, str(root)], capture_output=True, text=True, check=False)
    assert (ok.returncode, ok.stdout) == (0, f"pack OK: 2 vectors, sha256 {sha}\n")
    (root / "stray").write_text("")
    bad = subprocess.run([*cmd, str(root)], capture_output=True, text=True, check=False)
    assert (bad.returncode, bad.stdout) == (1, "stray: stray file (pack.json does not list it)\n")
    none = subprocess.run(
        [*cmd, str(tmp_path / "nope")], capture_output=True, text=True, check=False
    )
    assert none.returncode == 2
    assert none.stderr == f"tosa-conformance: error: {tmp_path / 'nope'}: no such file or folder\n"

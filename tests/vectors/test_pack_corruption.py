"""Tests for the pack format: every corruption of a written pack is reported."""

from __future__ import annotations

import json
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from pack_cases import assert_reported, edit_desc, flip, problems_of, rehash

from vectors import pack_json
from vectors.pack import (
    NotAPackError,
    PackError,
    open_pack,
    verify_pack,
)

# ----------------------------------------------------------------------------- corruption


def test_flipped_byte_in_an_npy(pack: Path) -> None:
    path = pack / "ADD_i32_0" / "input-1.npy"
    flip(path, path.stat().st_size - 1)
    assert_reported(problems_of(pack), "ADD_i32_0/input-1.npy: ", "sha256 mismatch")


def test_flipped_byte_in_the_graph(pack: Path) -> None:
    flip(pack / "EXP_fp32_0" / "graph.tosa", 5)  # inside the file identifier
    problems = problems_of(pack)
    assert_reported(problems, "EXP_fp32_0/graph.tosa: ", "sha256 mismatch")
    assert_reported(problems, "EXP_fp32_0/graph.tosa: ", "not a TOSA flatbuffer")


def test_flipped_byte_in_desc(pack: Path) -> None:
    flip(pack / "ADD_bf16_0" / "desc.json", 0)  # "{" -> "z"
    problems = problems_of(pack)
    assert_reported(problems, "ADD_bf16_0/desc.json: ", "sha256 mismatch")
    assert_reported(problems, "ADD_bf16_0/desc.json: ", "not valid JSON")


@pytest.mark.parametrize("offset", [0, 300, -20])
def test_flipped_byte_in_pack_json(pack: Path, offset: int) -> None:
    path = pack / "pack.json"
    flip(path, offset % path.stat().st_size)
    assert_reported(problems_of(pack), "pack.json: ", "")


def test_deleted_file(pack: Path) -> None:
    (pack / "MATMUL_fp8e4m3_0" / "bound-0.npy").unlink()
    assert_reported(problems_of(pack), "MATMUL_fp8e4m3_0/bound-0.npy: ", "missing")


def test_deleted_vector_folder(pack: Path) -> None:
    shutil.rmtree(pack / "ABS_i32_level_0")
    problems = problems_of(pack)
    assert_reported(problems, "ABS_i32_level_0/desc.json: ", "missing")
    assert_reported(problems, "ABS_i32_level_0/graph.tosa: ", "missing")


@pytest.mark.parametrize("rel", ["ADD_i32_0/result-0.npy", "notes.txt", "OTHER/desc.json"])
def test_stray_file(pack: Path, rel: str) -> None:
    (pack / rel).parent.mkdir(exist_ok=True)
    (pack / rel).write_bytes(b"x")
    assert problems_of(pack) == [f"{rel}: stray file (pack.json does not list it)"]


def test_truncated_npy(pack: Path) -> None:
    path = pack / "ADD_bf16_0" / "expected-0.npy"
    path.write_bytes(path.read_bytes()[:-7])
    problems = problems_of(pack)
    assert_reported(problems, "ADD_bf16_0/expected-0.npy: ", "sha256 mismatch")
    assert_reported(problems, "ADD_bf16_0/expected-0.npy: ", "truncated")
    rehash(pack)
    # The header's declared size is checked before the data is read.
    assert problems_of(pack) == [
        "ADD_bf16_0/expected-0.npy: truncated: the header declares shape [2, 3] "
        "(48 bytes of data), the file holds 41"
    ]


def test_input_saved_with_another_dtype(pack: Path) -> None:
    path = pack / "ADD_i32_0" / "input-0.npy"
    np.save(path, np.zeros((2, 3), np.int64))
    rehash(pack)
    assert problems_of(pack) == [
        "ADD_i32_0/input-0.npy: wrong dtype: file holds int64 (<i8), expected int32 (<i4) for i32"
    ]


def test_input_dtype_changed_in_desc(pack: Path) -> None:
    edit_desc(pack, "ADD_i32_0", lambda d: d["inputs"][0].update(dtype="i16"))
    problems = problems_of(pack)
    words = "dtype i16, but the graph's tensor 'a' is i32"
    assert_reported(problems, "ADD_i32_0/desc.json: ", words)
    assert_reported(problems, "ADD_i32_0/input-0.npy: ", "wrong dtype")


def test_input_shape_changed_in_desc(pack: Path) -> None:
    edit_desc(pack, "ADD_i32_0", lambda d: d["inputs"][1].update(shape=[3, 2]))
    problems = problems_of(pack)
    assert_reported(problems, "ADD_i32_0/desc.json: ", "shape [3, 2], but the graph's tensor 'b'")
    assert_reported(problems, "ADD_i32_0/input-1.npy: ", "wrong shape")


def test_value_not_of_the_narrow_type(pack: Path) -> None:
    path = pack / "ADD_bf16_0" / "input-1.npy"
    wide = np.load(path)
    wide[0, 0] = 0.1
    np.save(path, wide)
    rehash(pack)
    problems = problems_of(pack)
    assert_reported(problems, "ADD_bf16_0/input-1.npy: ", "not a bf16 value")


def test_garbage_graph(pack: Path) -> None:
    (pack / "ADD_i32_0" / "graph.tosa").write_bytes(b"\0" * 64)
    rehash(pack)
    assert_reported(problems_of(pack), "ADD_i32_0/graph.tosa: ", "not a TOSA flatbuffer")


def test_graph_of_another_vector(pack: Path) -> None:
    shutil.copy(pack / "EXP_fp32_0" / "graph.tosa", pack / "ADD_i32_0" / "graph.tosa")
    rehash(pack)
    problems = problems_of(pack)
    words = "ifm_name is ['a', 'b'], expected the graph's"
    assert_reported(problems, "ADD_i32_0/desc.json: ", words)
    assert_reported(problems, "ADD_i32_0/desc.json: ", "operator ADD does not occur in the graph")


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda d: d.update(colour="red"), "Additional properties are not allowed"),
        (lambda d: d.update(kind="valid", expected=[]), "expected"),
        (lambda d: d.update(data_set=9), "$.data_set"),
        (lambda d: d["requirements"].pop("level"), "'level' is a required property"),
        (lambda d: d.update(expected_failure=False), "$.expected_failure"),
        (lambda d: d["rule"].update(kind="LEVEL_CHECK"), "$.rule.kind"),
        (lambda d: d["provenance"].update(regenerate="a\nb"), "$.provenance.regenerate"),
    ],
    ids=["unknown-key", "valid-without-expected", "data-set", "level", "failure", "rule", "cmd"],
)
def test_desc_schema_violations(pack: Path, change: Callable[[dict], None], words: str) -> None:
    edit_desc(pack, "ADD_i32_error_0", change)
    problems = problems_of(pack)
    assert_reported(problems, "ADD_i32_error_0/desc.json: does not match desc.schema.json", words)


def test_compliance_params_are_checked(pack: Path) -> None:
    def drop_ulp(d: dict) -> None:
        d["expected"][0]["compliance"]["params"].pop("ulp")

    edit_desc(pack, "ADD_bf16_0", drop_ulp)
    assert_reported(problems_of(pack), "ADD_bf16_0/desc.json: ", "'ulp' is a required property")


def test_bound_file_must_match_the_compliance_mode(pack: Path) -> None:
    def drop_bound(d: dict) -> None:
        d["expected"][0]["bound_file"] = None

    edit_desc(pack, "EXP_fp32_0", drop_bound)
    problems = problems_of(pack)
    assert_reported(problems, "EXP_fp32_0/desc.json: ", "ABS_ERROR needs a bound_file")
    assert_reported(problems, "EXP_fp32_0/bound-0.npy: ", "desc.json does not refer to it")


def test_desc_disagreeing_with_pack_json(pack: Path) -> None:
    edit_desc(pack, "ADD_i32_0", lambda d: d.update(mode="signed 16"))
    assert_reported(
        problems_of(pack), "ADD_i32_0/desc.json: ", "mode is 'signed 16', but pack.json says"
    )


def test_pack_json_schema_and_order(pack: Path) -> None:
    doc = json.loads((pack / "pack.json").read_text())
    doc["vectors"].reverse()
    del doc["pack_sha256"]
    doc["pack_sha256"] = pack_json.sha256(pack_json.canonical(doc))
    (pack / "pack.json").write_bytes(pack_json.dumps(doc))
    assert problems_of(pack) == ["pack.json: vectors are not sorted by name"]
    doc["format_version"] = 2
    (pack / "pack.json").write_bytes(pack_json.dumps(doc))
    prefix = "pack.json: does not match pack.schema.json"
    assert_reported(problems_of(pack), prefix, "format_version")


def test_pack_json_edited_without_rehash(pack: Path) -> None:
    doc = json.loads((pack / "pack.json").read_text())
    doc["seed"] = 8
    (pack / "pack.json").write_bytes(pack_json.dumps(doc))
    content = {k: v for k, v in doc.items() if k != "pack_sha256"}
    computed = pack_json.sha256(pack_json.canonical(content))
    assert problems_of(pack) == [
        f"pack.json: pack_sha256 is {doc['pack_sha256'][:16]}..., but the content hashes to "
        f"{computed[:16]}... (pack.json was changed after it was written)"
    ]


def test_all_problems_are_listed_not_just_the_first(pack: Path) -> None:
    (pack / "ADD_i32_0" / "input-0.npy").unlink()
    flip(pack / "EXP_fp32_0" / "expected-0.npy", -1)
    (pack / "stray.bin").write_bytes(b"")
    problems = problems_of(pack)
    assert_reported(problems, "ADD_i32_0/input-0.npy: ", "missing")
    assert_reported(problems, "EXP_fp32_0/expected-0.npy: ", "sha256 mismatch")
    assert_reported(problems, "stray.bin: ", "stray file")
    assert all("\n" not in p for p in problems)


def test_load_names_vector_and_file_and_others_still_load(pack: Path) -> None:
    flip(pack / "CONCAT_fp8e5m2_0" / "input-0.npy", 130)
    with open_pack(pack) as p:
        with pytest.raises(PackError, match=r"^CONCAT_fp8e5m2_0/input-0\.npy: sha256 mismatch"):
            p.load("CONCAT_fp8e5m2_0")
        assert p.load("ADD_i32_0").name == "ADD_i32_0"
        with pytest.raises(PackError, match="no vector named 'nope'"):
            p.load("nope")


def test_open_pack_refuses_a_damaged_index(pack: Path) -> None:
    (pack / "pack.json").write_text("{")
    with pytest.raises(PackError, match=r"^pack\.json: not valid JSON"):
        open_pack(pack)


@pytest.mark.parametrize("what", ["missing", "empty-dir", "plain-file", "bad-zip", "zip-no-index"])
def test_not_a_pack(tmp_path: Path, what: str) -> None:
    path = tmp_path / "x"
    if what == "empty-dir":
        path.mkdir()
    elif what == "plain-file":
        path.write_text("hello")
    elif what == "bad-zip":
        path.write_bytes(b"PK\x05\x06" + b"\0" * 10)
    elif what == "zip-no-index":
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("a/b/pack.json", "{}")
    with pytest.raises(NotAPackError, match=f"^{path}: "):
        verify_pack(path)
    with pytest.raises(NotAPackError):
        open_pack(path)

"""The pieces under the guarantees, one by one: the process tree, a result file a
program leaves, the size limit, the results file's header check."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hostile import LINUX_ONLY, alive, wait_until
from hypothesis import given
from hypothesis import strategies as st

from conformance import process_tree
from conformance.backends.command import read_result
from conformance.dtypes import dtype
from conformance.results_file import ResultsFile, ResultsFileError, make_header
from vectors import npy
from vectors.pack_errors import PackError
from vectors.pack_source import MAX_FILE_ENV, max_file_bytes, read_regular_file

pytestmark = LINUX_ONLY

# A root that starts a child in its own session, which starts a grandchild, then waits.
SLEEP = "import time; time.sleep(300)"
TREE = f"""
import subprocess, sys, time
code = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {SLEEP!r}]); "
subprocess.Popen([sys.executable, "-c", code + {SLEEP!r}], start_new_session=True)
time.sleep(300)
"""


def test_kill_descendants_reaches_a_child_in_its_own_session() -> None:
    root = subprocess.Popen([sys.executable, "-c", TREE])
    try:
        assert wait_until(lambda: len(process_tree.descendants(root.pid)) >= 2, 60)
        below = process_tree.descendants(root.pid)
        assert process_tree.kill_descendants(root.pid) >= 2
        assert wait_until(lambda: not alive(below), 20), alive(below)
        assert root.poll() is None  # the root itself is not touched
    finally:
        root.kill()
        root.wait()


def test_spared_processes_survive() -> None:
    root = subprocess.Popen([sys.executable, "-c", TREE])
    try:
        assert wait_until(lambda: len(process_tree.descendants(root.pid)) >= 2, 60)
        child = process_tree.descendants(root.pid)[0]
        assert process_tree.kill_descendants(root.pid, spare=[child]) == 0
        assert alive([child]) == [child]
    finally:
        process_tree.kill_descendants(root.pid)
        root.kill()
        root.wait()


def test_a_result_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "result-0.npy"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        read_result(fifo, dtype("fp32"), ())


def test_a_huge_result_of_the_wrong_shape_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "result-0.npy"
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (268435456,), }"
    header += " " * (117 - len(header)) + "\n"
    with path.open("wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
        f.truncate(128 + (2 << 30))  # sparse
    arr = read_result(path, dtype("fp32"), ())
    assert arr.shape == (268435456,) and arr.strides == (0,)  # a stand-in, no data


def test_a_result_of_the_right_shape_is_read(tmp_path: Path) -> None:
    path = tmp_path / "result-0.npy"
    np.save(path, np.arange(6, dtype=np.float32).reshape(2, 3))
    assert read_result(path, dtype("fp32"), (2, 3)).tolist() == [[0, 1, 2], [3, 4, 5]]


@given(data=st.data())
def test_npy_header_size_is_checked_against_the_file(data: st.DataObject) -> None:
    shape = data.draw(st.lists(st.integers(0, 5), max_size=3).map(tuple), label="shape")
    arr = np.zeros(shape, np.int32)
    blob = npy.encode_array(arr, dtype("i32"))
    delta = data.draw(st.integers(-4, 4).filter(lambda d: d != 0), label="delta")
    if delta < 0 and len(blob) + delta < 128:
        delta = 1  # keep the header whole; the point is the data size
    changed = blob[:delta] if delta < 0 else blob + bytes(delta)
    with pytest.raises(PackError, match=r"truncated|trailing bytes"):
        npy.decode_array(changed, dtype("i32"), source="f")
    assert npy.decode_array(blob, dtype("i32"), source="f").shape == shape


def test_max_file_bytes_reads_the_knob(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(MAX_FILE_ENV, "2")
    assert max_file_bytes() == 2 << 20
    big = tmp_path / "big"
    big.write_bytes(bytes((2 << 20) + 1))
    with pytest.raises(PackError, match="more than the 2 MiB"):
        read_regular_file(big, "big")
    monkeypatch.setenv(MAX_FILE_ENV, "0")
    with pytest.raises(PackError, match="at least 1"):
        max_file_bytes()


def test_read_regular_file_refuses_a_folder_and_a_device(tmp_path: Path) -> None:
    with pytest.raises(PackError, match="a folder"):
        read_regular_file(tmp_path, "d")
    with pytest.raises(PackError, match="a character device"):
        read_regular_file(Path("/dev/zero"), "z")
    assert read_regular_file(tmp_path / "missing", "m") is None


def test_results_file_checks_every_header_key(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    header = make_header("a" * 64, "reference", {"timeout": 60.0})
    record = {"vector": "V", "operator": "ADD", "mode": "m", "kind": "valid", "verdict": "passed"}
    with ResultsFile(path, header, resume=False) as f:
        f.append(record)
    for other in (
        make_header("b" * 64, "reference", {"timeout": 60.0}),
        make_header("a" * 64, "mutant:x", {"timeout": 60.0}),
        make_header("a" * 64, "reference", {"timeout": 5.0}),
    ):
        with pytest.raises(ResultsFileError, match="written by another run"):
            ResultsFile(path, other, resume=True)
    with ResultsFile(path, header, resume=True) as f:
        assert f.previous == [record]


def test_a_vector_that_fails_to_load_in_any_way_blames_the_pack() -> None:
    """D8: a vector whose hashes agree but whose loading raises anything, not only a
    PackError (a reader's bug on a damaged file), is the pack's fault: run_pack stops
    on PACK_DAMAGE; it is never the backend's crash."""
    from conformance.backends.reference import ReferenceBackend
    from conformance.runner import PACK_DAMAGE, _serve_one

    def load(name: str):
        raise ValueError("buffer is smaller than requested size")

    doc = _serve_one(ReferenceBackend(), "ADD_x", load, lambda _: ("ADD", "fp32", "valid"))
    assert (
        doc["detail"]
        == f"{PACK_DAMAGE}cannot load it: ValueError: buffer is smaller than requested size"
    )

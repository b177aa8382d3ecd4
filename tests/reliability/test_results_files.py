"""Results files (issue 26, round 3): whatever a results file holds, ``merge``,
``certify --results`` and ``run --resume`` give a result or one line naming the file
(and the line), exit status 2, never a traceback; a FIFO or a device given as one is
refused without blocking; ``merge --json`` and ``certify -o`` write whole files under
a lock, so a full disk or a concurrent writer leaves the earlier files as they were;
and no output is ever written into a pack."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path

import pytest
from hostile import LINUX_ONLY, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st
from results_mutations import Outcome, Setup, make_setup, mutate, run_main

from conformance.results_file import RecordError, ResultsFile, ResultsFileError, check_result
from conformance.verdicts import OutputVerdict, VectorResult

pytestmark = LINUX_ONLY


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Setup:
    return make_setup(tmp_path_factory.mktemp("results-files"))


def error_line(outcome: Outcome) -> str:
    """The one error line of a refused command (certify's warnings about the pack aside)."""
    assert outcome.problem() is None, outcome.problem()
    assert outcome.code == 2, outcome
    [line] = [x for x in outcome.stderr.splitlines() if x and not x.startswith("warning: ")]
    assert line.startswith("tosa-conformance: error: "), line
    return line


def _lines(setup: Setup) -> list[str]:
    return setup.results.read_text().splitlines()


def _edit(line: str, key: str, raw: str) -> str:
    """``line`` (a JSON object) with ``key`` set to the raw JSON text ``raw``."""
    doc = json.loads(line)
    doc[key] = "\x00slot"
    return json.dumps(doc, sort_keys=True).replace(json.dumps("\x00slot"), raw)


def _record(key: str, raw: str) -> Callable[[list[str]], list[str]]:
    return lambda lines: [lines[0], _edit(lines[1], key, raw), *lines[2:]]


def _header(key: str, raw: str) -> Callable[[list[str]], list[str]]:
    return lambda lines: [_edit(lines[0], key, raw), *lines[1:]]


def _output(key: str, raw: str) -> Callable[[list[str]], list[str]]:
    def edit(lines: list[str]) -> list[str]:
        k = next(i for i, x in enumerate(lines) if json.loads(x).get("outputs"))
        doc = json.loads(lines[k])
        doc["outputs"][0] = json.loads(_edit(json.dumps(doc["outputs"][0]), key, '"\\u0000"'))
        text = json.dumps(doc, sort_keys=True).replace('"\\u0000"', raw)
        return [*lines[:k], text, *lines[k + 1 :]]

    return edit


# name -> (how the real file is changed, what the one line says, the line it names)
HOSTILE: dict[str, tuple[Callable[[list[str]], list[str]], str, int | None]] = {
    "verdict a list": (_record("verdict", '["passed"]'), "verdict is ['passed']", 2),
    "verdict unknown": (_record("verdict", '"fine"'), "verdict is 'fine'", 2),
    "vector a number": (_record("vector", "7"), "vector is 7", 2),
    "vector a list": (_record("vector", '["a", "b"]'), "vector is ['a', 'b']", 2),
    "known_failure a list": (_record("known_failure", "[1]"), "known_failure is [1]", 2),
    "seconds a string": (_record("seconds", '"1"'), "seconds is '1'", 2),
    "seconds true": (_record("seconds", "true"), "seconds is True", 2),
    "margin NaN": (_record("margin", "NaN"), "NaN, which is not JSON", 2),
    "margin 1e999": (_record("margin", "1e999"), "margin is inf", 2),
    "5000 digits": (_record("seconds", "9" * 5000), "a number of 5000 characters", 2),
    "outputs a dict": (_record("outputs", '{"a": 1}'), "outputs is {'a': 1}", 2),
    "an output's failing a bool": (_output("failing", "true"), "outputs[0].failing is True", None),
    "an output's margin a string": (_output("margin", '"0"'), "outputs[0].margin is '0'", None),
    "denormals a list": (_record("denormals", "[]"), "denormals is []", 2),
    "an unknown field": (_record("verdict_", '"passed"'), "an unknown field 'verdict_'", 2),
    "a lone surrogate": (_record("detail", '"\\ud800"'), "detail is '\\ud800'", 2),
    "nested deeply": (_record("detail", "[" * 50_000 + "]" * 50_000), "nested too deeply", 2),
    "nested hugely": (
        _record("detail", "[" + ", ".join(["[]"] * 200_000) + "]"),
        "more than 100000 values in one line",
        2,
    ),
    "a key twice": (
        lambda lines: [lines[0], '{"verdict": "failed", ' + lines[1][1:], *lines[2:]],
        "the key 'verdict' is given twice",
        2,
    ),
    "a line that is a list": (lambda lines: [lines[0], "[]", *lines[1:]], "not a result", 2),
    "a blank line": (lambda lines: [lines[0], "", *lines[1:]], "not a JSON line", 2),
    "a second header": (lambda lines: [lines[0], lines[1], lines[0], *lines[2:]], "header", 3),
    "a vector twice": (lambda lines: [*lines, lines[1]], "ADD_", None),
    "format_version a string": (_header("format_version", '"1"'), "format_version '1'", 1),
    "format_version true": (_header("format_version", "true"), "format_version True", 1),
    "format_version 2": (_header("format_version", "2"), "format_version 2", 1),
    "pack_sha256 a list": (_header("pack_sha256", "[1]"), "pack_sha256 is [1]", 1),
    "backend a number": (_header("backend", "3"), "backend is 3", 1),
    "options a list": (_header("options", "[]"), "options is []", 1),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_results_files_are_one_line(setup: Setup, tmp_path: Path, case: str) -> None:
    change, words, line = HOSTILE[case]
    hostile = tmp_path / "hostile.jsonl"
    body = "\n".join(change(_lines(setup))) + "\n"
    hostile.write_bytes(body.encode("utf-8", "surrogatepass"))
    for outcome in setup.readers(hostile, tmp_path):
        shown = error_line(outcome)
        assert words in shown, (outcome.command, shown)
        assert len(shown) < 400, shown  # a hostile value is quoted, never all of it
        read = "resumed.jsonl" if outcome.command == "run --resume" else "hostile.jsonl"
        assert (read if line is None else f"{read}:{line}:") in shown, (outcome.command, shown)


def test_a_huge_header_value_is_quoted_short(setup: Setup, tmp_path: Path) -> None:
    """Options of a megabyte: merge and certify take them (only the pack and the backend
    must agree); run --resume refuses them as another run's, in one short line."""
    hostile = tmp_path / "hostile.jsonl"
    change = _header("options", '{"x": "' + "y" * 1_000_000 + '"}')
    hostile.write_text("\n".join(change(_lines(setup))) + "\n")
    merged, certified, resumed = setup.readers(hostile, tmp_path)
    assert merged.code == 0 and certified.code in (0, 1), (merged, certified)
    shown = error_line(resumed)
    assert "written by another run (options {'x': 'yyy" in shown and len(shown) < 400, shown


def test_bytes_that_are_not_utf8(setup: Setup, tmp_path: Path) -> None:
    lines = setup.results.read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b'"detail": "', b'"detail": "\xff\xfe', 1)
    at = lines[2].index(b"\xff")  # counted from 0 within the line
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_bytes(b"\n".join(lines))
    for outcome in setup.readers(hostile, tmp_path):
        assert f".jsonl:3: not UTF-8 text (byte {at})" in error_line(outcome)


@pytest.mark.parametrize("what", ["a FIFO", "a character device", "a folder"])
def test_a_results_file_that_is_not_a_regular_file(
    setup: Setup, tmp_path: Path, what: str
) -> None:
    """Refused with one line, not read: a FIFO used to hang merge, /dev/zero to fill
    its memory."""
    path = {"a character device": Path("/dev/zero"), "a folder": tmp_path / "d"}.get(
        what, tmp_path / "fifo.jsonl"
    )
    if what == "a FIFO":
        os.mkfifo(path)
    elif what == "a folder":
        path.mkdir()
    commands = setup.commands(path, tmp_path, path)
    for name, argv in commands.items():
        proc = run_cli(argv, timeout=120)  # a hang fails the test, it does not stall it
        shown = error_line(Outcome(name, proc.returncode, proc.stderr))
        if what == "a folder" and name == "run --resume":
            assert "cannot open for writing: Is a directory" in shown
        else:
            assert f"{path}: not a regular file ({what}); refused" in shown, shown


def test_a_loop_of_links_and_a_fifo_as_the_output(setup: Setup, tmp_path: Path) -> None:
    loop, fifo = tmp_path / "loop.jsonl", tmp_path / "fifo.jsonl"
    loop.symlink_to(loop.name)
    os.mkfifo(fifo)
    run = ["--spec", str(setup.spec), "run", "--pack", str(setup.pack), "--backend"]
    run += ["reference", "--quiet", "--jobs", "1", "--json"]
    for argv, words in (
        (["merge", str(loop), "--json", str(tmp_path / "m.jsonl")], "cannot read: Too many"),
        (["merge", str(setup.results), "--json", str(loop)], "cannot open: Too many levels"),
        ([*run, str(loop)], "cannot open for writing: Too many levels of symbolic links"),
        # Never replaced by a regular file, nor written into (that blocked merge).
        (["merge", str(setup.results), "--json", str(fifo)], "not a regular file (a FIFO)"),
        ([*run, str(fifo)], "not a regular file (a FIFO)"),
    ):
        proc = run_cli(argv, timeout=120)
        assert words in error_line(Outcome(argv[0], proc.returncode, proc.stderr)), argv
    assert fifo.is_fifo() and loop.is_symlink()


def test_a_results_file_over_the_size_limit_is_refused_unread(
    setup: Setup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOSA_CONFORMANCE_MAX_FILE_MIB", "1")
    big = tmp_path / "big.jsonl"
    big.write_bytes(setup.results.read_bytes())
    os.truncate(big, 3 << 20)  # sparse: 3 MiB that cost nothing to make
    for outcome in setup.readers(big, tmp_path):
        shown = error_line(outcome)
        assert "bytes, more than the 1 MiB a results file may have" in shown, shown


def test_every_field_of_a_result_is_known_to_the_reader() -> None:
    """A field added to VectorResult or OutputVerdict must be added to the reader's
    checks (conformance.results_file), or every results file would be refused."""
    output = OutputVerdict(**{f.name: _sample(f.type) for f in fields(OutputVerdict)})
    result = VectorResult(
        **{
            **{f.name: _sample(f.type) for f in fields(VectorResult)},
            "verdict": "passed",
            "known_failure": "failed",
            "outputs": [output],
        }
    )
    doc = json.loads(json.dumps(result.to_json()))
    assert check_result(doc) == doc
    with pytest.raises(RecordError, match="an unknown field 'extra'"):
        check_result({**doc, "extra": 1})


_SAMPLES: dict[str, object] = {
    "str": "x",
    "bool": True,
    "int": 3,
    "float": 0.5,
    "float | None": 0.25,
    "dict[str, str]": {"fp32": "flush"},
    "list[OutputVerdict]": [],
    "list[str]": ["CONV2D", "RESHAPE"],
}


def _sample(annotation: object) -> object:
    """A value of the type a field is annotated with (a string, under PEP 563)."""
    return _SAMPLES[str(annotation)]


# ----------------------------------------------------------------------------- writes


def _enospc_on(suffix: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make every os.write to a file whose name ends with ``suffix`` fail as a full disk
    does; returns the names it failed."""
    real = os.write
    failed: list[str] = []

    def write(fd: int, data: bytes | memoryview) -> int:
        try:
            name = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            name = ""
        if name.endswith(suffix):
            failed.append(name)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)
    return failed


@pytest.mark.parametrize("earlier", [True, False])
def test_a_full_disk_during_merge_keeps_the_earlier_file(
    setup: Setup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, earlier: bool
) -> None:
    out = tmp_path / "merged.jsonl"
    if earlier:
        out.write_bytes(b"the earlier file\n")
    failed = _enospc_on(".tmp", monkeypatch)
    shown = error_line(run_main("merge", ["merge", str(setup.results), "--json", str(out)]))
    assert failed and f"{out}: cannot write: No space left on device" in shown, shown
    assert sorted(p.name for p in tmp_path.iterdir()) == (["merged.jsonl"] if earlier else [])
    if earlier:
        assert out.read_bytes() == b"the earlier file\n"
    monkeypatch.undo()  # the disk has room again: the merge is whole
    assert run_main("merge", ["merge", str(setup.results), "--json", str(out)]).code == 0
    assert out.read_bytes() == setup.results.read_bytes()


def _certify_argv(setup: Setup, out: Path) -> list[str]:
    argv = ["--spec", str(setup.spec), "certify", "--backend", "reference", "--profile", "BI"]
    return [*argv, "--pack", str(setup.pack), "--results", str(setup.results), "-o", str(out)]


def test_a_full_disk_during_certify_keeps_the_earlier_certificate(
    setup: Setup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "cert"
    assert run_main("certify", [*_certify_argv(setup, out), "--quiet"]).code in (0, 1)
    names = ("certificate.json", "report.md", "report.html")
    before = {n: (out / n).read_bytes() for n in names}
    failed = _enospc_on("report.md.tmp", monkeypatch)  # the second of the three
    shown = error_line(run_main("certify", [*_certify_argv(setup, out), "--quiet"]))
    assert failed and "report.md: cannot write: No space left on device" in shown, shown
    # All three as they were (the first, written whole, was not put in place either),
    # and no temporary file left.
    assert {n: (out / n).read_bytes() for n in names} == before
    assert sorted(p.name for p in out.iterdir()) == sorted(names)


@contextmanager
def flock_held(path: Path) -> Iterator[None]:
    """Another process holding an exclusive flock on ``path`` (a file or a folder), as
    a run writing a results file, or a certify writing its folder, does."""
    code = (
        "import fcntl, os, sys, time\n"
        "fd = os.open(sys.argv[1], os.O_RDONLY)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "print('held', flush=True)\n"
        "time.sleep(300)\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        yield
    finally:
        holder.kill()
        holder.wait()


def test_merge_into_a_results_file_a_run_is_writing_is_refused(
    setup: Setup, tmp_path: Path
) -> None:
    out = tmp_path / "r.jsonl"
    out.write_bytes(b'{"partial": "a run is writing this"}\n')
    with flock_held(out):
        proc = run_cli(["merge", str(setup.results), "--json", str(out)])
        shown = error_line(Outcome("merge", proc.returncode, proc.stderr))
    assert f"{out}: a run is writing to this results file" in shown, shown
    assert out.read_bytes() == b'{"partial": "a run is writing this"}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.jsonl"]


def test_merge_holds_the_lock_while_it_writes(
    setup: Setup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run starting on the file while merge writes it is refused (it would write into
    the file merge is about to replace)."""
    out = tmp_path / "merged.jsonl"
    header = json.loads(_lines(setup)[0])
    real = os.replace
    tried: list[str] = []

    def replace(src: str | Path, dst: str | Path) -> None:
        with pytest.raises(ResultsFileError, match="another run is writing") as refused:
            ResultsFile(Path(dst), header, resume=True)
        tried.append(str(refused.value))
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    assert run_main("merge", ["merge", str(setup.results), "--json", str(out)]).code == 0
    assert tried and out.read_bytes() == setup.results.read_bytes()


def test_two_certifies_into_one_folder(setup: Setup, tmp_path: Path) -> None:
    out = tmp_path / "cert"
    out.mkdir()
    with flock_held(out):  # what the first certify holds while it works
        shown = error_line(run_main("certify", [*_certify_argv(setup, out), "--quiet"]))
    assert f"{out}: another 'certify' (or 'generate') is writing into this folder" in shown
    assert list(out.iterdir()) == []
    assert run_main("certify", [*_certify_argv(setup, out), "--quiet"]).code in (0, 1)


# ----------------------------------------------------------------------------- packs


def _tree(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_no_output_is_written_into_a_pack(setup: Setup, tmp_path: Path) -> None:
    pack = setup.pack
    zipped = tmp_path / "pack.zip"
    subprocess.run(["zip", "-qr", str(zipped), "."], cwd=pack, check=True)
    before, zip_before = _tree(pack), zipped.read_bytes()
    spec = ["--spec", str(setup.spec)]
    run = [*spec, "run", "--backend", "reference", "--quiet", "--jobs", "1"]
    entry = next(p for p in pack.iterdir() if p.is_dir())
    merge = ["merge", str(setup.results), "--json"]
    cases: dict[str, tuple[list[str], str]] = {  # name -> (argv, where the path is)
        "run --json PACK/pack.json": (
            [*run, "--pack", str(pack), "--json", str(pack / "pack.json")],
            "is inside the pack",
        ),
        "run --resume --json PACK/VECTOR/r.jsonl": (
            [*run, "--pack", str(pack), "--json", str(entry / "r.jsonl"), "--resume"],
            "is inside the pack",
        ),
        "run --json PACK.zip": (
            [*run, "--pack", str(zipped), "--json", str(zipped)],
            f"is the pack {zipped}",
        ),
        "run --junit PACK/VECTOR/r.xml": (
            [*run, "--pack", str(pack), "--junit", str(entry / "r.xml")],
            "is inside the pack",
        ),
        "merge --json PACK/pack.json": ([*merge, str(pack / "pack.json")], "is inside the pack"),
        "merge --json PACK.zip": ([*merge, str(zipped)], f"is the pack {zipped}"),
        "certify -o PACK": ([*_certify_argv(setup, pack), "--quiet"], f"is the pack {pack}"),
        "certify -o PACK/sub": (
            [*_certify_argv(setup, pack / "sub"), "--quiet"],
            f"is inside the pack {pack}",
        ),
    }
    for name, (argv, where) in cases.items():
        shown = error_line(run_main(name, argv))
        assert where in shown and "never written into a pack" in shown, (name, shown)
    assert _tree(pack) == before and zipped.read_bytes() == zip_before


# ----------------------------------------------------------------------------- fuzz


@settings(max_examples=200)
@given(data=st.data())
def test_mutated_results_files_never_give_a_traceback(setup: Setup, data: st.DataObject) -> None:
    """The real file, mutated (tests/reliability/results_mutations.py), through merge,
    certify --results and run --resume: exit 0, 1 or 2, and for 2 one line.
    benchmarks/fuzz_results_files.py runs 2000 of them."""
    original = setup.results.read_bytes()
    hostile = mutate(original, lambda lo, hi, label: data.draw(st.integers(lo, hi), label=label))
    with tempfile.TemporaryDirectory(prefix="fuzz-results-") as tmp:
        path = Path(tmp) / "hostile.jsonl"
        path.write_bytes(hostile)
        for outcome in setup.readers(path, Path(tmp)):
            assert outcome.problem() is None, outcome.problem()

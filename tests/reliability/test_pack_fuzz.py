"""The pack readers under mutation (issue 26): whatever is done to one file of a small
real pack, what verify-pack, run and certify read gives a verdict or a clean one-line
error, never a traceback, also when the hashes in pack.json are fixed up to agree.
benchmarks/fuzz_pack_readers.py runs the same mutations 10,000 times."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile import LINUX_ONLY, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st
from pack_fuzz import (
    Base,
    Mutation,
    Outcome,
    Readers,
    _stage,
    draw_mutation,
    make_bases,
    mutated_files,
    run_mutation,
    write_pack,
)

from conformance.errors import ConformanceError

pytestmark = LINUX_ONLY


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> list[Base]:
    return make_bases(tmp_path_factory.mktemp("fuzz-bases"))


@pytest.fixture(scope="module")
def readers() -> Readers:
    return Readers()


def _failures(m: Mutation, outcomes: list[Outcome], readers: Readers) -> str:
    bad = [o for o in outcomes if not o.clean]
    if bad:
        return f"{m}\n{bad[0].stage}: {bad[0].kind}\n{bad[0].traceback}"
    crashed = [o for o in outcomes if o.kind.startswith("crashed: ")]
    if crashed:  # a run would record the pack's damage as the backend's crash
        return f"{m}\n{crashed[0].kind}\n{readers.crashes[-1] if readers.crashes else ''}"
    return ""


# Five times the profile's examples: each costs about 20 ms (ci: 200 examples, 5 s).
@settings(max_examples=5 * settings().max_examples)
@given(data=st.data())
def test_a_mutated_pack_gets_a_verdict_or_a_clean_error(
    bases: list[Base], readers: Readers, data: st.DataObject
) -> None:
    m = draw_mutation(lambda s, label: data.draw(s, label=label), bases)
    readers.crashes.clear()
    outcomes = run_mutation(m, bases, readers)
    problem = _failures(m, outcomes, readers)
    assert not problem, problem
    assert {o.stage for o in outcomes} == {"verify-pack", "run", "certify"}


def test_the_harness_tells_a_traceback_from_a_clean_error() -> None:
    def raises(exc: Exception) -> str:
        raise exc

    assert _stage("run", lambda: raises(ConformanceError("p/desc.json: bad"))).clean
    assert not _stage("run", lambda: raises(KeyError("shape"))).clean
    assert not _stage("run", lambda: raises(ConformanceError("two\nlines"))).clean


# A hash mismatch, a schema violation with agreeing hashes, and a well-formed graph that
# reads a tensor nothing sets (before issue 26, the reference's crash in a run).
DESC = "ADD_i32_0/desc.json"
CLI_CASES = [
    Mutation(0, "ADD_i32_0/input-0.npy", "flip", ((200, 1),), False, "zip-in-folder"),
    Mutation(0, DESC, "json", (("inputs", 0, "shape"), "replace", "x"), True, "zip"),
]


@pytest.mark.parametrize("case", [*range(len(CLI_CASES)), "graph"])
def test_the_commands_on_a_mutated_pack(bases: list[Base], tmp_path: Path, case: int | str) -> None:
    if case == "graph":
        conv = next(p for p in bases[1].files if p.startswith("CONV2D") and "_valid_" in p)
        target = conv.split("/")[0] + "/graph.tosa"
        m = Mutation(1, target, "graph", ("inputs", 0, 0, ("nowhere",)), True, "folder")
    else:
        m = CLI_CASES[int(case)]
    pack = write_pack(mutated_files(m, bases), m.container, tmp_path)
    profile = "MI" if m.base == 0 else "PRO-FP"
    commands = [
        ["verify-pack", str(pack)],
        ["run", "--pack", str(pack), "--backend", "reference", "--quiet", "--jobs", "1"],
        ["certify", "--pack", str(pack), "--backend", "reference", "--profile", profile, "-o"],
    ]
    commands[-1] += [str(tmp_path / "cert"), "--quiet", "--jobs", "1"]
    for argv in commands:
        proc = run_cli(argv, timeout=120)
        assert "Traceback" not in proc.stderr, (argv, proc.stderr)
        # verify-pack lists the problems (1); run and certify stop with one line (2).
        assert proc.returncode == (1 if argv[0] == "verify-pack" else 2), (argv, proc)
        if argv[0] != "verify-pack":
            lines = proc.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("tosa-conformance: error: "), lines
    if case == "graph":
        assert "reads 'nowhere', which is not a tensor of the block" in proc.stderr


def _damaged_deflate(pack: Path) -> str:
    """Flip a byte inside the first deflated member's data; that member's name."""
    import zipfile

    with zipfile.ZipFile(pack) as z:
        info = next(i for i in z.infolist() if i.compress_size > 16)
    raw = bytearray(pack.read_bytes())
    raw[info.header_offset + 30 + len(info.filename) + len(info.extra) + 5] ^= 0x55
    pack.write_bytes(bytes(raw))
    return info.filename


def test_what_the_fuzzing_found(bases: list[Base], readers: Readers, tmp_path: Path) -> None:
    """Each was a traceback or the reference's crash: now one line that blames the pack."""
    from vectors.pack import verify

    # A damaged deflate stream: zipfile raised zlib.error, which nothing caught.
    pack = write_pack(bases[0].files, "zip", tmp_path)
    member = _damaged_deflate(pack)
    assert [p for p in verify(pack).problems if p.startswith(f"{member}: cannot read from")]
    # A level the pack's claim does not name: the reference's KeyError, a crash in a run.
    level = Mutation(0, DESC, "json", (("requirements", "level"), "replace", "9K"), True, "zip")
    # A graph whose operator reads a tensor nothing sets: the reference's EvaluationError.
    conv = next(p for p in bases[1].files if p.startswith("CONV2D") and "_valid_" in p)
    reads = Mutation(
        1, conv.split("/")[0] + "/graph.tosa", "graph", ("inputs", 0, 0, ("x",)), True, "folder"
    )
    for m, words in (
        (level, "requirements.level is '9K', but pack.json claims level '8K'"),
        (reads, "operator 0 (CONV2D) reads 'x', which is not a tensor of the block"),
    ):
        outcomes = {o.stage: o for o in run_mutation(m, bases, readers)}
        assert all(o.clean for o in outcomes.values()), outcomes
        assert outcomes["run"].kind.startswith("refused: "), outcomes  # not "crashed: "
        where = tmp_path / m.operation
        where.mkdir()
        problems = verify(write_pack(mutated_files(m, bases), "folder", where)).problems
        assert any(words in p for p in problems), problems

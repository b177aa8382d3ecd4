"""Shards, merge and `certify --results`: three shards merged certify as one run does;
results of another pack or backend, overlapping or missing, are refused; known
failures are listed in the certificate and their pairs are not met."""

import json
from pathlib import Path

import pytest
from interrupts import as_a_terminal_job
from lxml import etree

from conformance.cli.main import main
from conformance.merge import MergeError, merge
from conformance.spec import default_spec_path

WRONG_FP16 = Path(__file__).parent / "data" / "wrong_fp16_backend.py"


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tosa.xml with ADD only, so that a claim needs a small pack (as test_certify)."""
    root = etree.parse(str(default_spec_path())).getroot()
    for group in list(root.iter("operatorgroup")):
        for op in list(group.iter("operator")):
            if op.findtext("name") != "ADD":
                group.remove(op)
        if not len(group):
            group.getparent().remove(group)
    path = tmp_path_factory.mktemp("spec") / "tosa.xml"
    path.write_bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8"))
    return path


@pytest.fixture(scope="module")
def pack(spec: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pack") / "p"
    argv = ["--spec", str(spec), "generate", "--profile", "MI", "--examples", "2", "--quiet"]
    assert main([*argv, "--no-levels", "-o", str(out), "--jobs", "1"]) == 0
    return out


@pytest.fixture(scope="module")
def shards(pack: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("shards")
    out = []
    for k in (1, 2, 3):
        path = folder / f"r{k}.jsonl"
        argv = ["run", "--pack", str(pack), "--backend", "reference", "--jobs", "1", "--quiet"]
        assert main([*argv, "--shard", f"{k}/3", "--json", str(path)]) == 0
        out.append(path)
    return out


def _certify(spec: Path, pack: Path, out: Path, *extra: str, backend: str = "reference") -> int:
    argv = ["--spec", str(spec), "certify", "--backend", backend, "--profile", "MI"]
    return main([*argv, "--pack", str(pack), "-o", str(out), "--jobs", "1", "--quiet", *extra])


def _stable(folder: Path) -> dict:
    cert = json.loads((folder / "certificate.json").read_text())
    for key in ("date", "certificate_sha256"):  # the only parts that depend on when
        cert.pop(key)
    cert.pop("source")  # where the verdicts come from, checked on its own
    return cert


def test_merged_shards_certify_as_one_run(
    spec: Path, pack: Path, shards: list[Path], tmp_path: Path
) -> None:
    assert _certify(spec, pack, tmp_path / "one") == 0
    merged = tmp_path / "merged.jsonl"
    assert main(["merge", *map(str, shards), "--json", str(merged)]) == 0
    assert _certify(spec, pack, tmp_path / "merged", "--results", str(merged)) == 0
    assert _certify(spec, pack, tmp_path / "shards", "--results", *map(str, shards)) == 0
    one = _stable(tmp_path / "one")
    assert one["summary"]["met"] > 0
    assert _stable(tmp_path / "merged") == one
    assert _stable(tmp_path / "shards") == one
    source = json.loads((tmp_path / "shards" / "certificate.json").read_text())["source"]
    assert source["kind"] == "results files" and len(source["files"]) == 3
    assert "did not run the backend" in (tmp_path / "shards" / "report.md").read_text()


def test_certify_results_takes_what_a_vector_is_from_the_pack(
    spec: Path, pack: Path, shards: list[Path], tmp_path: Path
) -> None:
    # Issue 26, item 7: a failure relabelled as a level vector (which never fails a pair)
    # used to certify PASS.
    merged = tmp_path / "merged.jsonl"
    assert main(["merge", *map(str, shards), "--json", str(merged)]) == 0
    lines = merged.read_text().splitlines()
    docs = [json.loads(x) for x in lines]
    # A vector of one operator (a chain's failure is a finding of its own).
    victim = next(d for d in docs[1:] if d.get("kind") == "valid" and "chain" not in d["vector"])
    victim.update(kind="level", verdict="failed", detail="edited")
    merged.write_text("".join(json.dumps(d) + "\n" for d in docs))
    assert _certify(spec, pack, tmp_path / "c", "--results", str(merged)) == 1
    cert = json.loads((tmp_path / "c" / "certificate.json").read_text())
    failed = [p for p in cert["requirements"] if p["status"] == "failed"]
    assert [victim["vector"]] == [f for p in failed for f in p["failures"]]


def test_merge_refuses_results_of_another_backend(
    pack: Path, shards: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other.jsonl"
    argv = ["run", "--pack", str(pack), "--backend", "mutant:add-sub-i32-through-fp32"]
    main([*argv, "--jobs", "1", "--quiet", "--shard", "2/3", "--json", str(other)])
    capsys.readouterr()
    assert main(["merge", str(shards[0]), str(other), "--json", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert "other.jsonl: backend is 'mutant:add-sub-i32-through-fp32'" in err
    assert not (tmp_path / "m").exists()


def test_merge_refuses_results_of_another_pack(shards: list[Path], tmp_path: Path) -> None:
    lines = shards[1].read_text().splitlines()
    header = json.loads(lines[0])
    header["pack_sha256"] = "0" * 64
    moved = tmp_path / "moved.jsonl"
    moved.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    with pytest.raises(MergeError, match=r"moved\.jsonl: pack_sha256 is '0000"):
        merge([shards[0], moved])


def test_merge_refuses_overlapping_and_headerless_results(
    shards: list[Path], tmp_path: Path
) -> None:
    with pytest.raises(MergeError, match="is also in"):
        merge([shards[0], shards[0]])
    bare = tmp_path / "bare.jsonl"
    bare.write_text("\n".join(shards[0].read_text().splitlines()[1:]) + "\n")
    with pytest.raises(MergeError, match=r"bare\.jsonl: no header"):
        merge([bare])
    torn = tmp_path / "torn.jsonl"
    torn.write_text(shards[0].read_text() + '{"vector": "ADD_')  # a killed run's last line
    assert len(merge([torn]).results) == len(merge([shards[0]]).results)


def test_certify_results_refuses_missing_vectors_and_another_backend(
    spec: Path, pack: Path, shards: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _certify(spec, pack, tmp_path / "c", "--results", *map(str, shards[:2])) == 2
    err = capsys.readouterr().err
    assert "no result for" in err and "a missing shard?" in err
    code = _certify(spec, pack, tmp_path / "c", "--results", str(shards[0]), backend="mutant:x")
    assert code == 2


def test_known_failures_are_listed_and_their_pairs_not_met(
    spec: Path, pack: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    known = tmp_path / "known.txt"
    known.write_text("ADD_fp16_(?!error_).*  # ticket 12: every valid fp16 vector\n")
    out = tmp_path / "cert"
    code = _certify(
        spec, pack, out, "--known-failures", str(known), backend=f"python:{WRONG_FP16}:make"
    )
    assert code == 1  # a certificate cannot pass with a pair that is known to fail
    cert = json.loads((out / "certificate.json").read_text())
    pairs = {(p["operator"], p["mode"]): p for p in cert["requirements"]}
    assert pairs[("ADD", "fp16")]["status"] == "known failure"
    assert pairs[("ADD", "fp32")]["status"] == "met"
    listed = {k["vector"] for k in cert["known_failures"]}
    assert "ADD_fp16_valid_000" in listed and all(v.startswith("ADD_fp16_") for v in listed)
    assert all(k["verdict"] == "xfail" and k["judged"] == "failed" for k in cert["known_failures"])
    assert cert["summary"]["known_failure"] == 1
    out_text = capsys.readouterr().out
    assert "ADD [fp16]: known failure" in out_text and "1 known to fail" in out_text


# -- the HTML report --------------------------------------------------------------------


def test_the_report_groups_modes_per_operator_and_counts_as_run_does(
    spec: Path, pack: Path, tmp_path: Path
) -> None:
    import re

    from conformance.verdicts import read_results

    out = tmp_path / "cert"
    assert _certify(spec, pack, out) == 0
    page = (out / "report.html").read_text()
    assert page.count('<th class="op">ADD</th>') == 1  # one row per operator
    per_pair: dict[str, list[int]] = {}
    for r in read_results(out / "results.jsonl"):
        if r.kind != "level":
            c = per_pair.setdefault(r.mode, [0, 0])
            c[0] += r.verdict == "passed"
            c[1] += 1
    cells = re.findall(
        r'<span class="mode">([^<]+)</span><span class="state">✓ met</span>'
        r'<span class="count">(\d+) of (\d+) passed</span>',
        page,
    )
    assert {m: [int(a), int(b)] for m, a, b in cells} == per_pair
    # fp16/fp32 outputs use part of their bound; "signed 32" is exact and gets no chart.
    try:
        import matplotlib  # noqa: F401

        assert 'src="data:image/png;base64,' in page
    except ImportError:  # the extra 'reports' is not installed: the page says so
        assert "matplotlib is not installed" in page
    assert "ADD [signed 32]" not in (out / "report.md").read_text().split("## Bound margins")[1]


def test_mode_spellings_that_differ_in_case_share_one_label() -> None:
    from conformance.certify import PairResult
    from conformance.certify_report import _mode_labels

    pairs = [PairResult("EQUAL", "boolean", []), PairResult("SELECT", "Boolean", [])]
    assert set(_mode_labels(pairs).values()) == {"boolean"}


def test_ctrl_c_stops_certify_with_one_line_and_exit_130(
    spec: Path, pack: Path, tmp_path: Path
) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    from conformance.verdicts import read_results

    slow = Path(__file__).parent / "data" / "flaky_backends.py"
    out = tmp_path / "cert"
    cmd = [sys.executable, "-m", "conformance.cli.main", "--spec", str(spec), "certify"]
    cmd += ["--backend", f"python:{slow}:slow", "--profile", "MI", "--pack", str(pack)]
    cmd += ["-o", str(out), "--jobs", "1", "--quiet"]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=as_a_terminal_job,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(read_results(out / "results.jsonl")) < 2:
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    lines = [x for x in err.splitlines() if not x.startswith("warning:")]
    assert len(lines) == 1 and lines[0].endswith("vectors; rerun with --resume"), lines
    assert not (out / "certificate.json").exists()
    kept = len(read_results(out / "results.jsonl"))
    resumed = subprocess.run([*cmd, "--resume"], capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert (out / "certificate.json").exists() and kept >= 2


def test_resume_applies_the_known_failures_given_now(
    pack: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 26, item 11: --resume kept the old xfail marks when the list was dropped,
    # and exited 0 where a fresh run exits 1.
    known = tmp_path / "known.txt"
    known.write_text("ADD_fp16_.*  # ticket 12\n")
    results = tmp_path / "r.jsonl"
    argv = ["run", "--pack", str(pack), "--backend", f"python:{WRONG_FP16}:make", "--quiet"]
    argv += ["--jobs", "1", "--json", str(results)]
    assert main([*argv, "--known-failures", str(known)]) == 0
    assert main([*argv, "--resume"]) == 1  # every result resumed; none is known now
    assert main([*argv, "--resume", "--known-failures", str(known)]) == 0
    capsys.readouterr()
